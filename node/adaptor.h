/*  adaptor — one node's adaptation, whatever drives its core
 *  (docs/adapt.md): the live estimates and the changes they declare,
 *  re-planning on them for free, the subtree bound passed up as it moves,
 *  and the costly actions a parent weighs through the gate (reclaim,
 *  restore, shrink).
 *
 *  Every driver of an adapting node's core runs this same code: the
 *  ZeroMQ runtime (node/adapt.c) and the simulator (sim/adapt.c) alike,
 *  as they share node/setup.h and node/route.h. What reaches beyond the
 *  node goes through the driver's hooks: an event for the node's own core
 *  (TAKE_BACK, whose actions the driver then carries out where
 *  node/route.h says, RECLAIM to the child among them), SUBTREE for the
 *  parent, a child that drained and leaves, a line to say.
 *
 *  Pure: no clock, no sockets; times are platform seconds since START,
 *  bytes are the run's physical ones (platform MB x 2^20 x payload scale,
 *  node/setup.h), cumulative from START.
 */
#ifndef TF_ADAPTOR_H
#define TF_ADAPTOR_H

#include <stddef.h>

#include "node/core.h"
#include "node/observe.h"
#include "node/subtree.h"
#include "overlay/config.h"
#include "overlay/proto_stats.h"

/*  What the adaptor asks of its driver; arg is the driver's. */
typedef struct {
    /*  Feed ev (TAKE_BACK; its `now` the driver's) to the node's own core
     *  and carry out the actions. Returns 0, or non-zero on a fatal
     *  error. */
    int (*feed) (void *arg, core_event_t *ev);
    /*  SUBTREE to the parent: our subtree's bound per model
     *  (BOUND_MODEL_COUNT values, tasks/s) with our live compute rate
     *  and IR_r. The root has no parent: nothing to do. Returns 0, or -1
     *  if it could not be sent. */
    int (*subtree) (void *arg, const double *bounds, double compute, double ir_recv);
    /*  Child slot was shrunk and holds nothing of ours any more: it
     *  leaves the run (the driver stops it and its subtree). */
    void (*drained) (void *arg, int slot);
    /*  1 if child slot is lost (NULL: none ever is). */
    int (*lost) (void *arg, int slot);
    /*  A line to say; verbose ones only when the driver is verbose. */
    void (*say) (void *arg, int verbose, const char *text);
    void *arg;
} adaptor_hooks_t;

typedef struct adaptor adaptor_t;

/*  The adaptation of node (an index into cfg->nodes) of an adapting run,
 *  starting at platform second `at` (a node that joined the run counts
 *  from the run's START: its first interval starts when it did). cfg,
 *  core and subtree are borrowed and must outlive it; the subtree is made
 *  to follow the live estimates (subtree_adapt). The hooks are copied. */
adaptor_t *adaptor_new (const config_t *cfg, int node, core_t *core, subtree_t *subtree,
                        const adaptor_hooks_t *hooks, double at);

/*  Destroy and null the pointer. Safe on NULL. */
void adaptor_destroy (adaptor_t **self_p);

/*  A sample at t: the engine's cumulative units and busy platform
 *  seconds, the bytes observed (observed[0] received from the parent,
 *  observed[1 + i] sent to child i, cumulative), and per child the
 *  transfers its link alone carried, cumulative: link_mb[i] platform MB
 *  in link_s[i] platform seconds, each from its start to its last chunk
 *  delivered (NULL both: the core's own count, core_child_stats'
 *  link_bytes and link_seconds, which a core that paces its links keeps
 *  so). Feeds the compute and link estimates, then declares and re-plans
 *  what changed. */
void adaptor_sample (adaptor_t *self, double t, double units, double busy_s,
                     const double *observed, const double *link_mb, const double *link_s);

/*  The online fit was solved at t (est): feed the IR estimates, then
 *  declare and re-plan what changed. */
void adaptor_fit (adaptor_t *self, double t, const observe_estimates_t *est);

/*  Child slot's SUBTREE at t: its subtree's bound per model and its live
 *  compute rate and IR_r (what the core believes of it from now on; its
 *  bound in the policy's port model is the ratio rule's rate of it); our
 *  bound stepped again and passed up when it moved; a slower child
 *  weighed for a reclaim, a faster one let hold more. Returns 0; 1 when
 *  the bounds were refused (err says why, none kept); -1 if SUBTREE could
 *  not be sent. */
int adaptor_child_subtree (adaptor_t *self, double t, int slot, const double *bounds,
                           double compute, double ir_recv, char *err, size_t errlen);

/*  Step our subtree's bound at t and pass it up (hooks.subtree) when it
 *  is new, or when force is set (our own live values changed) once it is
 *  known; a step that moved it may leave a child worth shrinking.
 *  Returns 0, or -1 if SUBTREE could not be sent. */
int adaptor_step (adaptor_t *self, double t, int force);

/*  Children shrunk whose subtree holds nothing of ours any more leave
 *  (hooks.drained). */
void adaptor_poll_drained (adaptor_t *self);

/*  A node joined in vacant slot with this link (MB/s), IR_s and compute
 *  rate: its estimates and what we know of its rate start there. */
void adaptor_attach (adaptor_t *self, int slot, double link_mbps, double ir_send,
                     double compute);

/*  1 if child slot was shrunk and has left the run. */
int adaptor_child_left (const adaptor_t *self, int slot);

/*  How many changes were declared and actions weighed so far (kept:
 *  at most LIVE_MAX_CHANGES and PROTO_MAX_ACTIONS), for a driver that
 *  says the new ones as they come. */
void adaptor_counts (const adaptor_t *self, int *changes, int *actions);

/*  The changes declared and the actions weighed so far, as STATS and
 *  REPORT carry them: copied into *out (items allocated; the caller's
 *  proto_stats_clear frees them). */
void adaptor_fill_changes (const adaptor_t *self, proto_changes_t *out);
void adaptor_fill_actions (const adaptor_t *self, proto_actions_t *out);

#endif
