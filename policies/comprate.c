/*  comprate — CompRate: serve the child that computes fastest (largest
 *  compute rate C^i) first. Single-port. It sends work where it is done
 *  soonest and ignores what the transfer costs.
 *
 *  Ties: between equally fast children, the faster link (larger link_mbps,
 *  the rate while both compute) first: the task reaches its equally fast
 *  consumer sooner and the single port is free again sooner. Then the
 *  lower slot.
 */
#include "policies/policy.h"

static int
comprate_order (const policy_parent_t *parent, const policy_child_t *a,
                const policy_child_t *b)
{
    (void) parent;
    if (a->compute_rate != b->compute_rate)
        return a->compute_rate > b->compute_rate ? 1 : -1;
    if (a->link_mbps != b->link_mbps)
        return a->link_mbps > b->link_mbps ? 1 : -1;
    return 0;
}

static int
comprate_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    return policy_pick_first (parent, children, n, comprate_order, 0);
}

const policy_t policy_comprate = {
    .name = "comprate",
    .summary = "CompRate: fastest child compute rate first",
    .multiport = 0,
    .pick = comprate_pick,
    .order = comprate_order,
};
