/*  core_int — the decision core's state, shared by the files that make it
 *  (private to node/core*.c; node/core.h is the public face):
 *  - core.c: creation, the event entry point, what the runtime reads;
 *  - core_plan.c: which task may go where, completions and their batches,
 *    the fixed point after every event (dispatch);
 *  - core_events.c: each event checked, then applied;
 *  - core_reclaim.c: the adaptation's reclaim (TAKE_BACK, RECLAIM,
 *    RETURNED);
 *  - core_reparent.c: a node that lost its parent (ORPHANED, REPARENT)
 *    and the stale tasks it still has out.
 */
#ifndef TF_CORE_INT_H
#define TF_CORE_INT_H

#include "node/core.h"
#include "node/coretask.h"
#include "node/ledger.h"
#include "node/recv.h"
#include "node/streams.h"
#include "node/xfer.h"

/*  The tree's shape, when known: where a failed command may go. */
typedef struct {
    int32_t *parent;         /* every node's parent (-1 for the root), or
                                NULL: then nothing is avoided */
    uint32_t *size;          /* nodes in each node's subtree */
} shape_t;

/*  The tasks computing here. */
typedef struct {
    task_t *running;         /* n of them, at most slots */
    uint32_t n, slots;
    int engine_busy;         /* a synthetic task has the engine */
} compute_t;

/*  Copies of one task id still out here (computing, or given to a
 *  child's subtree) when the parent was lost: their completion, result or
 *  return is dropped when it comes (core_reparent.c). */
typedef struct {
    uint64_t id;
    uint32_t old;            /* stale copies out */
    uint32_t fresh;          /* copies of the id come from the new parent
                                while stale ones are out */
} stale_t;

/*  Completions to report upward (the root: to record for the controller). */
typedef struct {
    core_done_t *items;
    uint32_t n, cap;
    double since;            /* when the oldest came */
    int flushed;             /* reported; cleared at the next event */
} batch_t;

struct core {
    core_cfg_t cfg;
    ledger_t *ledger;        /* held tasks; root: the bag's record */
    xfer_t *xfer;            /* transfers to the children */
    recv_t *recv;            /* the transfer from the parent */
    streams_t *streams;      /* result streams up and from children */
    shape_t shape;
    compute_t compute;
    batch_t batch;
    core_acts_t acts;        /* the last event's actions */
    core_stats_t stats;      /* what the parts above do not count */
    struct {                 /* core_reclaim.c: the tasks a RETURN gives
                                back (valid until the next event) */
        core_done_t *items;
        uint32_t cap;
    } back;
    struct {                 /* core_reparent.c: stale task ids */
        stale_t *items;
        uint32_t n, cap;
    } stale;
    int orphaned;            /* the parent is lost, no new one yet */
    uint32_t buffer_cfg;     /* the configured buffer (a RECLAIM lowers
                                cfg.buffer; an ORPHANED restores it) */
    int started;
    int meters_marked;
    int finished;            /* root: FINISHED emitted */
};

/*  core_plan.c: append an action of this type to the event's list. */
core_action_t *core_emit (core_t *self, core_action_type_t type);

/*  core_plan.c: 1 if node x is in the subtree of node top (the shape
 *  known). */
int core_in_subtree (const core_t *self, uint32_t x, uint32_t top);

/*  core_plan.c: a task completed at node (core_done_t), batched for the
 *  parent or, on the root, recorded (had: the task as handed out, for a
 *  retry; NULL when unknown). */
void core_complete (core_t *self, core_done_t d, const task_t *had, double now);

/*  core_plan.c: bring the node to its next fixed point at now. */
void core_dispatch (core_t *self, double now);

/*  core_reclaim.c: the three events of a reclaim (docs/adapt.md,
 *  "Reclaim"), each checked, then applied; 0, or -1 with a message in err
 *  and the state unchanged. */
int core_on_take_back (core_t *self, const core_event_t *ev, char *err, size_t errlen);
int core_on_reclaim (core_t *self, const core_event_t *ev, char *err, size_t errlen);
int core_on_returned (core_t *self, const core_event_t *ev, char *err, size_t errlen);

/*  core_reparent.c: the parent is lost (ORPHANED) and a new one is
 *  connected (REPARENT), each checked, then applied; 0, or -1 with a
 *  message in err and the state unchanged. */
int core_on_orphaned (core_t *self, const core_event_t *ev, char *err, size_t errlen);
int core_on_reparent (core_t *self, const core_event_t *ev, char *err, size_t errlen);

/*  core_reparent.c: a copy of task comes to an end here (computed, its
 *  completion or result in from a child, given back, or its child lost).
 *  Returns 1 when the copy is stale: it is dropped, never sent up nor
 *  queued again (counted in stats.stale_dropped); else 0. */
int core_stale_take (core_t *self, uint64_t task);

/*  core_reparent.c: a copy of task arrived from the parent (held), or
 *  one that had arrived went back to it (a RECLAIM's RETURN: gone). */
void core_stale_fresh (core_t *self, uint64_t task);
void core_stale_gone (core_t *self, uint64_t task);

/*  core_events.c: check an event and change the state by it. Returns 0,
 *  or -1 with a message in err and the state unchanged. */
int core_apply (core_t *self, const core_event_t *ev, char *err, size_t errlen);

#endif
