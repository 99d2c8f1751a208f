/*  split — the multi-port bound's split of a parent's send port, for the
 *  policies that plan one (policy.h policy_bound_split; docs/policies.md,
 *  "IA:Split").
 *
 *  The parent's own step of the bound (overlay/bound.h bound_step, in the
 *  multi-port model) is the LP's optimum for one node given its
 *  children's subtree bounds: it says how many tasks/s each child gets
 *  (x_i) and how many the parent computes (S). This file only turns the
 *  policies' view (MB, MB/s, units) into the bound's (tasks/s) and back.
 */
#include <math.h>
#include <stdlib.h>

#include "overlay/bound.h"
#include "overlay/util.h"
#include "policies/policy.h"

/*  Tasks/s a link of mbps carries for tasks of z MB (z = 0: no limit). */
static double
per_task (double mbps, double z)
{
    return z > 0 ? mbps / z : INFINITY;
}

/*  A child of unknown subtree bound, priced as a leaf: what it computes
 *  while receiving, at most what its link carries. */
static double
leaf_that (const policy_parent_t *parent, const policy_child_t *c)
{
    double w = parent->task_units > 0 ? parent->task_units : 1;
    double rate = c->compute_rate / w;
    double t = rate / (1 + c->ir_recv * parent->task_mb * rate);
    return fmin (t, per_task (c->link_mbps, parent->task_mb));
}

double
policy_bound_split (const policy_parent_t *parent, const policy_child_t *children, int n,
                    double *x)
{
    double z = parent->task_mb > 0 ? parent->task_mb : 0;
    bound_node_t self = {
        .compute = policy_task_rate (parent),
        .recv_max = INFINITY,
        .send_max = parent->send_limit_mbps > 0 ? per_task (parent->send_limit_mbps, z)
                                                : INFINITY,
        .recv_loss = parent->is_root ? 0 : parent->ir_recv * z,
    };
    bound_child_t *kids = xcalloc ((size_t) n + 1, sizeof *kids);
    bound_share_t *shares = xcalloc ((size_t) n + 1, sizeof *shares);
    for (int i = 0; i < n; i++) {
        const policy_child_t *c = &children[i];
        double that = c->that > 0 && isfinite (c->that) ? c->that : leaf_that (parent, c);
        kids[i] = (bound_child_t){.that = that,
                                  .recv_max = per_task (c->link_mbps, z),
                                  .send_loss = c->ir_send * z};
    }
    double target = parent->target > 0 ? parent->target : INFINITY;
    bound_step_t step;
    bound_step (&self, BOUND_MULTI, kids, n, target, &step, shares);
    for (int i = 0; i < n; i++)
        x[i] = shares[i].x;
    free (kids);
    free (shares);
    return step.s;
}
