/*  ia_split — IA:Split, the multi-port bound's split of the send port:
 *  each child gets the tasks/s x_i the bound's schedule gives it
 *  (policy_bound_split, the parent's own step of the multi-port bound,
 *  equal to the LP's), the core pacing its transfers at x_i Z MB/s; a
 *  child the bound leaves at 0 is not served. Multi-port.
 *
 *  Where IA:Multi lets children compete chunk by chunk for the port in
 *  IR_s order (so a lower-ranked transfer started while the port had
 *  room waits behind the others, its task held hostage), each child here
 *  has a steady share of the port, and the shares sum to at most B_s. The
 *  parent computes what the split leaves it. Which ready child starts a
 *  transfer first, and which due chunk goes first, is the IA order
 *  (lowest IR_s): with the shares paced, it only breaks ties.
 *  docs/policies.md, "IA:Split", has the rule, its formula and why it
 *  cannot starve a child the bound uses.
 */
#include "policies/policy.h"

static int
ia_split_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        const policy_child_t *c = &children[i];
        if (c->wanted == 0 || c->sending || !(c->split > 0))
            continue;
        int cmp = best < 0 ? 1 : policy_ia_order (parent, c, &children[best]);
        if (cmp > 0 || (cmp == 0 && c->slot < children[best].slot))
            best = i;
    }
    return best;
}

const policy_t policy_ia_split = {
    .name = "ia-split",
    .summary = "IA:Split: each child paced at its LP share, t_i Z",
    .multiport = 1,
    .pick = ia_split_pick,
    .order = policy_ia_order,
    .split = policy_bound_split,
};
