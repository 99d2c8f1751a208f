/*  ia_multi — IA:Multi, interference-aware multi-port: start a send to the
 *  requesting child with the lowest IR_s that is not already receiving,
 *  and never to a child with IR_s Z C^n >= 1 (policy_excluded).
 *
 *  The policy only chooses; the rest of the published rule belongs to the
 *  node core, which calls pick again for as long as it may start another
 *  send: it offers only children with no transfer in flight, starts sends
 *  only while the parent's total outgoing rate is below its send limit
 *  B_s^n (send_limit_mbps), and moves tasks in chunks so that it re-decides
 *  after every chunk (interruptible sends).
 *
 *  Ties: as IA:Single, the larger single-port priority B_r (1 - IR_s Z C^n),
 *  i.e. for equal IR_s the faster link, whose send uses up the parent's
 *  send capacity in the least time; then the lower slot. The two IA orders
 *  thus agree.
 */
#include "policies/policy.h"

static int
ia_multi_pick (const policy_parent_t *parent, const policy_child_t *children, int n)
{
    return policy_pick_first (parent, children, n, policy_ia_order, 1);
}

const policy_t policy_ia_multi = {
    .name = "ia-multi",
    .summary = "IA:Multi: lowest IR_s first, never IR_s Z C >= 1",
    .multiport = 1,
    .pick = ia_multi_pick,
    .order = policy_ia_order,
};
