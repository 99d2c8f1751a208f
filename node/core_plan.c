/*  core_plan — which task may go where, completions and their batches,
 *  and the fixed point a core reaches after every event. See
 *  node/core_int.h.
 */
#include <math.h>

#include "node/core_int.h"
#include "overlay/util.h"

core_action_t *
core_emit (core_t *self, core_action_type_t type)
{
    return core_acts_emit (&self->acts, type);
}

/*  --- which task may go where --------------------------------------------- */

int
core_in_subtree (const core_t *self, uint32_t x, uint32_t top)
{
    for (uint32_t steps = 0; steps <= self->cfg.nnodes; steps++) {
        if (x == top)
            return 1;
        if (self->shape.parent[x] < 0)
            return 0;
        x = (uint32_t) self->shape.parent[x];
    }
    return 0;
}

/*  May t go to dest: this node's engine (dest < 0: a free slot, and for a
 *  synthetic task the engine free; not a node t failed on; all of it
 *  here) or child slot dest, whose subtree must hold a node t has not
 *  failed on? A task still arriving goes to a child only while the engine
 *  is busy: an idle engine takes it once it is whole (local compute
 *  first). Only a synthetic task is held before its last chunk. */
static int
eligible (const core_t *self, const task_t *t, int dest)
{
    int busy = self->compute.engine_busy;
    if (dest < 0 && t->kind == CORE_KIND_SYNTHETIC && busy)
        return 0;
    if ((dest < 0 || !busy) && recv_arriving (self->recv, t->id))
        return 0;
    if (t->navoid == 0)
        return 1;
    if (dest < 0)
        return !task_avoids (t, self->cfg.self);
    if (!self->shape.parent)
        return 1;
    uint32_t top = xfer_child_node (self->xfer, dest), inside = 0;
    for (uint32_t i = 0; i < t->navoid; i++)
        inside += core_in_subtree (self, t->avoid[i], top);
    return inside < self->shape.size[top];
}

/*  A question to eligible through the ledger: may a task go to dest? */
typedef struct {
    const core_t *core;
    int dest;
} where_t;

static int
eligible_for (const void *arg, const task_t *t)
{
    const where_t *w = arg;
    return eligible (w->core, t, w->dest);
}

/*  The position in the ledger of the first task that may go to dest, or
 *  -1. On the root, the queue holds tasks to try again, ahead of the
 *  bag's fresh ones (which may go anywhere, but a synthetic one not to a
 *  busy engine: position held). */
static int
find_task (const core_t *self, int dest)
{
    where_t w = {self, dest};
    return ledger_find_task (self->ledger, eligible_for, &w,
                             !(dest < 0 && self->compute.engine_busy));
}

/*  --- completions ------------------------------------------------------- */

/*  Root: a command that failed at node goes back to the queue (RETRY),
 *  unless it has no attempt left: then returns 0. */
static int
retry (core_t *self, uint64_t task, uint32_t node, const task_t *had)
{
    if (!ledger_retry_task (self->ledger, task, node, had))
        return 0;
    self->stats.retried++;
    core_action_t *a = core_emit (self, CORE_ACT_RETRY);
    a->task = task;
    a->node = node;
    a->n = ledger_attempts (self->ledger, task);
    return 1;
}

/*  A task completed at node: batched for the parent (REPORT) or, on the
 *  root, recorded and batched for the controller (RECORDED) the first
 *  time, counted as a duplicate after; a failed command with attempts
 *  left is queued again instead. */
void
core_complete (core_t *self, core_done_t d, const task_t *had, double now)
{
    if (self->cfg.is_root) {
        if (ledger_is_done (self->ledger, d.task)) {
            self->stats.duplicates++;
            return;
        }
        if (d.failed && retry (self, d.task, d.node, had))
            return;
        ledger_mark_done (self->ledger, d.task);
        self->stats.failed += d.failed != 0;
        d.attempts = (uint8_t) ledger_attempts (self->ledger, d.task);
    }
    core_endgame_gone (self, d.task);   /* it goes up */
    batch_t *b = &self->batch;
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->items = xrealloc (b->items, b->cap * sizeof *b->items);
    }
    if (b->n == 0)
        b->since = now;
    b->items[b->n++] = d;
}

/*  Send the batch when full or due; on the root, the last completion
 *  flushes it at once and FINISHED follows it, so every record is out
 *  before FINISHED. */
static void
flush (core_t *self, double now)
{
    batch_t *b = &self->batch;
    uint32_t max = self->cfg.batch_max;
    int finish_due = ledger_all_done (self->ledger);
    int due = b->n >= max || now + CORE_TIME_EPS >= b->since + self->cfg.batch_delay
           || finish_due;
    if (b->n > 0 && !b->flushed && due) {
        core_action_type_t type = self->cfg.is_root ? CORE_ACT_RECORDED : CORE_ACT_REPORT;
        for (uint32_t at = 0; at < b->n; at += max) {
            core_action_t *a = core_emit (self, type);
            a->done = b->items + at;
            a->ndone = b->n - at < max ? b->n - at : max;
        }
        b->flushed = 1;
    }
    if (finish_due && !self->finished) {
        self->finished = 1;
        core_emit (self, CORE_ACT_FINISHED);
    }
}

/*  --- the fixed point after every event ---------------------------------- */

/*  May the next task take a place here, the n-th of e->slots? A slot
 *  (the first cfg.slots places) always; a place waiting behind a running
 *  command (core_cfg_t's depth) on the root with children only while the
 *  bag holds more tasks than it has children: a task kept waiting here
 *  when a child has none would run after the one before it instead of at
 *  once there (two 5-s commands on a root and an idle child took 10 s). */
static int
place_open (const core_t *self, uint32_t n)
{
    if (n < core_cfg_slots (&self->cfg) || !self->cfg.is_root || self->cfg.nchildren == 0)
        return 1;
    return ledger_fresh_left (self->ledger) + ledger_held (self->ledger)
         > (uint64_t) self->cfg.nchildren;
}

/*  Root: a command whose input could not be read as it was taken
 *  (core_task_info_t.unreadable) goes nowhere: the attempt fails here,
 *  as one that failed on this node, and the task is queued again or
 *  recorded failed. Returns 1 for such a task. */
static int
fails_unread (core_t *self, const task_t *t, double now)
{
    if (!t->unreadable)
        return 0;
    core_complete (self, (core_done_t){.task = t->id, .node = self->cfg.self, .failed = 1},
                   t, now);
    return 1;
}

/*  Start tasks on free slots while some may run here. */
static void
compute_tasks (core_t *self, double now)
{
    compute_t *e = &self->compute;
    int pos;
    while (e->n < e->slots && place_open (self, e->n) && (pos = find_task (self, -1)) >= 0) {
        task_t t = ledger_take_task (self->ledger, (uint32_t) pos);
        if (fails_unread (self, &t, now))
            continue;
        compute_push (e, &t, now);
        e->engine_busy |= t.kind == CORE_KIND_SYNTHETIC;
        core_action_t *a = core_emit (self, CORE_ACT_COMPUTE);
        a->task = t.id;
        a->units = t.units;
        a->kind = t.kind;
    }
}

/*  Under a planned split (ia-split) a child outside the plan is not
 *  served; but a task that may go nowhere else (a command that failed
 *  here and in the subtrees of every child in the plan) is never left
 *  stranded: is t such a task? */
static int
stranded (const void *arg, const task_t *t)
{
    const core_t *self = arg;
    if (t->navoid == 0 || !task_avoids (t, self->cfg.self))
        return 0;
    for (int c = 0; c < self->cfg.nchildren; c++)
        if (xfer_split_rate (self->xfer, c) > 0 && eligible (self, t, c))
            return 0;
    return 1;
}

/*  The ready child (of ready[0..n)) a stranded task goes to, with the
 *  task's position in *pos; -1 if none. */
static int
serve_stranded (const core_t *self, const int *ready, int n, int *pos)
{
    if (!self->cfg.policy->split)
        return -1;
    for (uint32_t p = 0; p < ledger_held (self->ledger); p++) {
        const task_t *t = ledger_peek_task (self->ledger, p);
        if (!stranded (self, t))
            continue;
        for (int i = 0; i < n; i++)
            if (eligible (self, t, ready[i])) {
                *pos = (int) p;
                return ready[i];
            }
    }
    return -1;
}

/*  Does the end-game keep the task at pos (of find_task) from child c
 *  (rule a)? Only a task this node may compute itself is kept. */
static int
held_back (const core_t *self, int c, int pos, double now)
{
    if (pos < (int) ledger_held (self->ledger)
        && task_avoids (ledger_peek_task (self->ledger, (uint32_t) pos), self->cfg.self))
        return 0;
    return core_endgame_holds_back (self, c, now);
}

/*  Serve children's asks while the policy allows (xfer_pick_child), each
 *  with the first task that may go to it. With no task held, that is the
 *  root's next fresh one for every child alike (ledger_find_task): one
 *  look serves them all. */
static void
serve_children (core_t *self, double now)
{
    for (;;) {
        int n, k = 0, *ready = xfer_list_ready (self->xfer, now, &n);
        int uniform = n > 0 && ledger_held (self->ledger) == 0;
        int any = uniform ? find_task (self, ready[0]) : -1;
        for (int i = 0; i < n; i++) {
            int pos = uniform ? any : find_task (self, ready[i]);
            if (pos >= 0 && !held_back (self, ready[i], pos, now))
                ready[k++] = ready[i];
        }
        int c = k > 0 ? xfer_pick_child (self->xfer, now, ready, k) : -1;
        int pos = c >= 0 ? find_task (self, c) : -1;
        if (c < 0 && k > 0)
            c = serve_stranded (self, ready, k, &pos);
        if (c < 0)
            return;
        task_t t = ledger_take_task (self->ledger, (uint32_t) pos);
        if (!fails_unread (self, &t, now))
            xfer_start_task (self->xfer, c, &t, now);
    }
}

void
core_dispatch (core_t *self, double now)
{
    xfer_serve_probes (self->xfer, now);
    if (!self->started) {
        xfer_pump_chunks (self->xfer, &self->acts, now);
        return;
    }
    core_endgame_before (self);
    compute_tasks (self, now);
    /*  Paced, a transfer whose last chunk goes out with no pacing delay
     *  (an empty one) frees the port at once: serve the next ask. Each
     *  pass starts a transfer or sends a chunk, and both are bounded. */
    for (int before = -1; before != self->acts.n;) {
        before = self->acts.n;
        serve_children (self, now);
        xfer_pump_chunks (self->xfer, &self->acts, now);
    }
    core_endgame_after (self, now);
    streams_pump_up (self->streams, &self->acts);
    uint32_t slots = self->compute.slots, want = self->cfg.buffer + (slots ? slots - 1 : 0);
    uint32_t have = ledger_held (self->ledger) + recv_pending (self->recv);
    if (!self->cfg.is_root && !self->orphaned && have < want) {
        recv_add_pending (self->recv, want - have);
        self->stats.requested += want - have;
        core_emit (self, CORE_ACT_REQUEST)->n = want - have;
    }
    flush (self, now);
}

