/*  fcfs — first come, first served: the child whose oldest unserved request
 *  arrived first. Single-port. The baseline every other policy improves on.
 */
#include "policies/policy.h"

static int
fcfs_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    (void) parent;
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || children[i].oldest_request < children[best].oldest_request)
            best = i;
    return best;
}

const policy_t policy_fcfs = {
    .name = "fcfs",
    .summary = "first come, first served: oldest outstanding request first (single-port)",
    .multiport = 0,
    .pick = fcfs_pick,
};
