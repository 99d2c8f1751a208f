/*  ia_single_opt — IA:Single-opt: serve the child with the largest
 *  single-port priority B_r^i (1 - IR_s(i) Z C^n) first, and never a child
 *  with IR_s Z C^n >= 1 (policy_excluded). Single-port.
 *
 *  B_r^i = link_mbps / Z is the tasks/s the port moves to child i while
 *  both compute, and 1 - IR_s(i) Z C^n the share of each task that is a
 *  gain once the parent's lost computation is paid. Their product is the
 *  throughput one second of port time buys, the order in which the
 *  single-port bound (docs/model.md) fills its children, so this is the
 *  derived optimum of the order IA:Single approximates. The published
 *  experiments predate it. Unlike the others, its order depends on the
 *  application (Z and w): see docs/policies.md.
 *
 *  Ties: lower IR_s (the IA:Single order: less of the parent's computation
 *  lost per task), then the lower slot.
 */
#include "policies/policy.h"

static int
ia_single_opt_order (const policy_parent_t *parent, const policy_child_t *a,
                     const policy_child_t *b)
{
    double pa = policy_single_opt_priority (parent, a);
    double pb = policy_single_opt_priority (parent, b);
    if (pa != pb)
        return pa > pb ? 1 : -1;
    if (a->ir_send != b->ir_send)
        return a->ir_send < b->ir_send ? 1 : -1;
    return 0;
}

static int
ia_single_opt_pick (const policy_parent_t *parent, const policy_child_t *children,
                    int n)
{
    return policy_pick_first (parent, children, n, ia_single_opt_order, 1);
}

const policy_t policy_ia_single_opt = {
    .name = "ia-single-opt",
    .summary = "IA:Single-opt: largest B_r (1 - IR_s Z C) > 0 first",
    .multiport = 0,
    .pick = ia_single_opt_pick,
    .order = ia_single_opt_order,
};
