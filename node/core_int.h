/*  core_int — the decision core's state, shared by the files that make it
 *  (private to node/core*.c; node/core.h is the public face):
 *  - core.c: creation, the event entry point, what the runtime reads;
 *  - core_plan.c: which task may go where, completions and their batches,
 *    the fixed point after every event (dispatch);
 *  - core_events.c: each event checked, then applied;
 *  - core_reclaim.c: the adaptation's reclaim (TAKE_BACK, RECLAIM,
 *    RETURNED);
 *  - core_reparent.c: a node that lost its parent (ORPHANED, REPARENT)
 *    and the stale tasks it still has out;
 *  - core_endgame.c: the end-game, holding back from slow children near
 *    the end of the bag and copying tasks left out there (CANCEL,
 *    EMPTY).
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
    double *given;           /* per running task: when it was handed to
                                the engine (it may wait behind another) */
    uint32_t n, slots;
    int engine_busy;         /* a synthetic task has the engine */
} compute_t;

/*  The tasks a node runs at once: its configured slots (0 means 1); the
 *  places beyond them (compute_t.slots) wait behind a running command. */
static inline uint32_t
core_cfg_slots (const core_cfg_t *cfg)
{
    return cfg->slots ? cfg->slots : 1;
}

/*  Hand t to the engine at now: it runs, or waits in its slot's place. */
static inline void
compute_push (compute_t *e, const task_t *t, double now)
{
    e->given[e->n] = now;
    e->running[e->n++] = *t;
}

/*  Copies of one task id still out here (computing, or given to a
 *  child's subtree) when the parent was lost: their completion, result or
 *  return is dropped when it comes (core_reparent.c). */
typedef struct {
    uint64_t id;
    uint32_t old;            /* stale copies out */
    uint32_t fresh;          /* copies of the id come from the new parent
                                while stale ones are out */
    int endgame;             /* the losing copy of an end-game pair: its
                                drop is counted there, not as stale */
} stale_t;

/*  A task this node copied in the end-game: computing here while another
 *  copy is out in child's subtree (core_endgame.c). */
typedef struct {
    uint64_t id;
    int child;
} copy_t;

/*  The end-game's state (core_endgame.c). */
typedef struct {
    int drained;             /* the bag has nothing left to hand out: the
                                root saw it, others were told (EMPTY) */
    int told;                /* EMPTY is due to the children */
    unsigned char *kid;      /* per child: KID_HEARD, KID_TOLD (lazily
                                made, cfg.nchildren of them) */
    copy_t *copies;          /* tasks copied here, n of them */
    uint32_t ncopies, copies_cap;
    uint64_t *cancelled;     /* tasks the parent cancelled, still here */
    uint32_t ncancelled, cancelled_cap;
    core_done_t *back;       /* scratch: the RETURN of cancelled tasks */
    uint32_t back_cap;
} endgame_t;

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
    endgame_t eg;            /* core_endgame.c */
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

/*  core_reparent.c: one more stale copy of task, out here or in a
 *  child's subtree (endgame: the loser of an end-game pair). */
void core_stale_add (core_t *self, uint64_t task, int endgame);

/*  core_reparent.c: is a copy of task out here stale? */
int core_stale_has (core_t *self, uint64_t task);

/*  core_endgame.c: the end-game's part of the fixed point, before the
 *  node computes or serves (cancelled tasks held go back) and after
 *  (EMPTY passed on; an idle node copies a task left out). */
void core_endgame_before (core_t *self);
void core_endgame_after (core_t *self, double now);

/*  core_endgame.c: near the end of the bag, would child c finish a task
 *  later than this node would (rule a)? */
int core_endgame_holds_back (const core_t *self, int c, double now);

/*  core_endgame.c: a completion of task came here, first (from our own
 *  engine: child < 0; else from child): if this node copied it, the
 *  other copy loses (marked stale; the child's is cancelled). */
void core_endgame_settle (core_t *self, uint64_t task, int child);

/*  core_endgame.c: the copy of task out in child's subtree ended
 *  without a result (given back, or the child lost): if this node copied
 *  it, its own copy goes on alone; returns 1 then (the task is not to
 *  be queued again), else 0. */
int core_endgame_orphan_copy (core_t *self, uint64_t task, int child);

/*  core_endgame.c: CANCEL and EMPTY from the parent; 0, or -1 with a
 *  message in err and the state unchanged. */
int core_on_cancel (core_t *self, const core_event_t *ev, char *err, size_t errlen);
int core_on_empty (core_t *self, const core_event_t *ev, char *err, size_t errlen);

/*  core_endgame.c: child c asked for tasks: it is connected, and told
 *  EMPTY now if the bag emptied before it asked. */
void core_endgame_heard (core_t *self, int c);

/*  core_endgame.c: task leaves this node upward (reported or given
 *  back): it is no longer among the cancelled. */
void core_endgame_gone (core_t *self, uint64_t task);

/*  core_events.c: check an event and change the state by it. Returns 0,
 *  or -1 with a message in err and the state unchanged. */
int core_apply (core_t *self, const core_event_t *ev, char *err, size_t errlen);

#endif
