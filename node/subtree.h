/*  subtree — the throughput bound of a node's subtree, computed in the
 *  tree itself, bottom-up.
 *
 *  A leaf knows its bound at once; a parent takes its own step of the
 *  bound (overlay/bound.h bound_step, in every model) once every child has
 *  reported its subtree's bound, and passes the result up (SUBTREE). So the
 *  root knows the tree's bound without the controller, which checks it
 *  against its offline computation (docs/model.md, docs/bounds.md).
 *
 *  Pure: no sockets; the runtime feeds it the children's reports and sends
 *  what it says is ready.
 */
#ifndef TF_SUBTREE_H
#define TF_SUBTREE_H

#include <stddef.h>

#include "overlay/bound.h"
#include "overlay/config.h"

typedef struct subtree subtree_t;

/*  The subtree of node (an index into cfg->nodes) of cfg, which is
 *  borrowed and must outlive it. */
subtree_t *subtree_new (const config_t *cfg, int node);

/*  Destroy and null the pointer. Safe on NULL. */
void subtree_destroy (subtree_t **self_p);

/*  Child `slot` reports its subtree's bound in every model (tasks/s,
 *  BOUND_MODEL_COUNT values). Returns 0, or -1 with a message in err (and
 *  nothing kept) for a bad slot, a second report, or a value that is not
 *  a finite number >= 0. */
int subtree_child (subtree_t *self, int slot, const double *bounds, char *err,
                   size_t errlen);

/*  If every child has reported and our bound is not known yet (adapting:
 *  or its inputs changed since), compute it and return 1 when it is new
 *  (the caller sends it up); else return 0. */
int subtree_step (subtree_t *self);

/*  An adapting run (docs/adapt.md): the bound follows the live
 *  estimates. From this call on, a child's later SUBTREE replaces its
 *  earlier one instead of being refused, each setter below replaces a
 *  parameter of the step (NaN: leave it), and subtree_step computes the
 *  bound again after any of them, returning 1 when it changed. The
 *  bound then starts from the configured rates of a dedicated platform
 *  (the live estimates start there), not the loaded prediction. */
void subtree_adapt (subtree_t *self);
/*  Our own compute rate (units/s) and IR_r. */
void subtree_set_self (subtree_t *self, double compute, double ir_recv);
/*  Child slot's link (MB/s while both compute; its idle rate scales
 *  alike) and IR_s. A bad slot is ignored. */
void subtree_set_child (subtree_t *self, int slot, double link_mbps, double ir_send);

/*  A joining node took vacant slot (docs/adapt.md, "Grow"), with this
 *  link (MB/s while both compute) and IR_s: the step waits for its
 *  SUBTREE from now on. A vacant slot counts as a child that reported a
 *  bound of 0 until then. Ignored for a bad slot or one not vacant. */
void subtree_attach (subtree_t *self, int slot, double link_mbps, double ir_send);

/*  In our last step in model, does child slot get nothing (bound role
 *  unused)? *why, if not NULL, gets the reason. 0 before the first step
 *  and for a vacant or bad slot. */
int subtree_child_unused (const subtree_t *self, int slot, int model, bound_why_t *why);

/*  Our own compute rate (units/s) and IR_r as the step uses them: the
 *  configured ones until subtree_set_self replaced them (what an adapting
 *  node's SUBTREE carries to its parent). */
void subtree_self (const subtree_t *self, double *compute, double *ir_recv);

/*  Our subtree's bound per model (BOUND_MODEL_COUNT values, tasks/s), or
 *  NULL until subtree_step has computed it. Adapting, the bound now (the
 *  live one). */
const double *subtree_bounds (const subtree_t *self);

/*  The first bound subtree_step computed (NULL before): what the
 *  controller checks against its offline bound. The same as
 *  subtree_bounds in a run that does not adapt. */
const double *subtree_first_bounds (const subtree_t *self);

#endif
