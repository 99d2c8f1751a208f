/*  fcfs — FCFS, first come, first served: serve the child whose oldest
 *  unserved request arrived first. Single-port. Blind to the platform, it
 *  is the reference the other policies improve on.
 *
 *  Ties: the core numbers every asked task, so two children never share an
 *  oldest request; a direct caller that passes equal numbers gets the
 *  lower slot.
 */
#include "policies/policy.h"

static int
fcfs_order (const policy_parent_t *parent, const policy_child_t *a,
            const policy_child_t *b)
{
    (void) parent;
    if (a->oldest_request != b->oldest_request)
        return a->oldest_request < b->oldest_request ? 1 : -1;
    return 0;
}

static int
fcfs_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    return policy_pick_first (parent, children, n, fcfs_order, 0);
}

const policy_t policy_fcfs = {
    .name = "fcfs",
    .summary = "FCFS: oldest outstanding request first",
    .multiport = 0,
    .pick = fcfs_pick,
    .order = fcfs_order,
};
