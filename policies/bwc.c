/*  bwc — BWC, bandwidth-centric: serve the child with the largest maximum
 *  transfer rate from the parent first. Single-port. The classic optimum
 *  for a fork without interference: the port's time is the scarce
 *  resource, so spend it on the children it fills fastest.
 *
 *  The rate is link_idle_mbps, the link measured with neither end
 *  computing: the classic model knows no interference, and that is the
 *  rate it would be calibrated with. On the reference fork the idle and
 *  loaded orders differ (Lab5 is faster than Lab6 idle, slower loaded).
 *
 *  Ties: the faster link while both compute (link_mbps), then the lower
 *  slot.
 */
#include "policies/policy.h"

static int
bwc_order (const policy_parent_t *parent, const policy_child_t *a,
           const policy_child_t *b)
{
    (void) parent;
    if (a->link_idle_mbps != b->link_idle_mbps)
        return a->link_idle_mbps > b->link_idle_mbps ? 1 : -1;
    if (a->link_mbps != b->link_mbps)
        return a->link_mbps > b->link_mbps ? 1 : -1;
    return 0;
}

static int
bwc_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    return policy_pick_first (parent, children, n, bwc_order, 0);
}

const policy_t policy_bwc = {
    .name = "bwc",
    .summary = "BWC, bandwidth-centric: fastest idle link first",
    .multiport = 0,
    .pick = bwc_pick,
    .order = bwc_order,
};
