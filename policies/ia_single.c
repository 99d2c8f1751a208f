/*  ia_single — IA:Single, interference-aware single-port: serve the child
 *  the parent interferes least with when sending (lowest IR_s) first, and
 *  never a child with IR_s Z C^n >= 1 (policy_excluded). Single-port.
 *
 *  Each task sent to child i costs the parent IR_s(i) Z C^n tasks of its
 *  own computation, whatever the link's speed, so the lowest IR_s is the
 *  cheapest child to feed.
 *
 *  Ties: equal IR_s means equal cost per task; what still differs is how
 *  long the task occupies the single port, Z / link_mbps. So the larger
 *  single-port priority B_r (1 - IR_s Z C^n) goes first, which for equal
 *  IR_s is the faster link: on the reference fork Lab6 (10.7 MB/s) before
 *  Tenn (0.2 MB/s), both at IR_s 0.0331. Serving Tenn first would hold the
 *  port ten seconds per 2 MB task while Lab6 waits. Then the lower slot.
 */
#include "policies/policy.h"

static int
ia_single_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    return policy_pick_first (parent, children, n, policy_ia_order, 1);
}

const policy_t policy_ia_single = {
    .name = "ia-single",
    .summary = "IA:Single: lowest IR_s first, never IR_s Z C >= 1",
    .multiport = 0,
    .pick = ia_single_pick,
    .order = policy_ia_order,
};
