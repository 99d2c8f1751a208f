/*  core — a node's decision logic as a pure state machine. See core.h.
 *
 *  Every event is first validated without touching the state, then applied,
 *  then `dispatch` brings the node to its next fixed point: the engine busy
 *  if there is a task, transfers started while the policy allows, the
 *  buffer topped up, due completions flushed.
 *
 *  The state is in parts, each its own object: the held tasks and the
 *  root's record of the bag (ledger.h), the transfers to the children
 *  (xfer.h), the transfer from the parent and chunk validation (recv.h),
 *  and the result streams (streams.h). The core owns what ties them
 *  together: which task may go where (the engine's slots, the tree's
 *  shape for the nodes a command avoids), completions and their batches,
 *  the actions of an event, the counters.
 */
#include "node/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/coretask.h"
#include "node/ledger.h"
#include "node/recv.h"
#include "node/streams.h"
#include "node/xfer.h"
#include "overlay/config.h"
#include "overlay/util.h"

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
    int started;
    int meters_marked;
    int finished;            /* root: FINISHED emitted */
};

static const char *const event_names[CORE_EV_COUNT] = {
    "START", "REQUEST", "CHUNK", "ACK", "DONE", "COMPUTED", "TICK", "STREAM",
    "RESULT", "RESULT_ACK", "LOST",
};

static const char *const action_names[CORE_ACT_COUNT] = {
    "REQUEST", "SEND_CHUNK", "ACK", "COMPUTE", "REPORT", "RELEASE", "FINISHED",
    "RECORDED", "SEND_RESULT", "ACK_RESULT", "RELEASE_RESULT", "RETRY",
    "DROP_RESULT",
};

const char *
core_event_str (core_event_type_t type)
{
    return type < CORE_EV_COUNT ? event_names[type] : "?";
}

const char *
core_action_str (core_action_type_t type)
{
    return type < CORE_ACT_COUNT ? action_names[type] : "?";
}

/*  --- creation ------------------------------------------------------------- */

/*  The sizes and counts of a configuration. */
static int
check_sizes (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (!cfg->policy)
        return tf_error (err, errlen, "core: no policy");
    if (cfg->chunk_bytes == 0 || cfg->window == 0 || cfg->buffer == 0
        || cfg->batch_max == 0 || !(cfg->batch_delay >= 0))
        return tf_error (err, errlen, "core: chunk size, window, buffer and "
                         "batch size must be positive");
    if (cfg->task_count == 0 || !(cfg->task_units > 0) || !isfinite (cfg->task_units))
        return tf_error (err, errlen, "core: the bag needs tasks of positive units");
    if (cfg->task_bytes > CONFIG_MAX_TASK_BYTES)
        return tf_error (err, errlen, "core: tasks of %llu bytes, more than %llu",
                         (unsigned long long) cfg->task_bytes,
                         (unsigned long long) CONFIG_MAX_TASK_BYTES);
    if (cfg->self >= cfg->nnodes)
        return tf_error (err, errlen, "core: node index %u out of %u", cfg->self,
                         cfg->nnodes);
    if (cfg->nchildren < 0 || (cfg->nchildren > 0 && !cfg->children))
        return tf_error (err, errlen, "core: children missing");
    if (!(cfg->meter_window > 0) || !(cfg->send_limit_bps >= 0))
        return tf_error (err, errlen, "core: meter window must be positive and the "
                         "send limit not negative");
    return 0;
}

/*  The command-task part of a configuration. */
static int
check_commands (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (cfg->command_tasks > cfg->task_count)
        return tf_error (err, errlen, "core: %llu command tasks in a bag of %llu",
                         (unsigned long long) cfg->command_tasks,
                         (unsigned long long) cfg->task_count);
    if (cfg->is_root && cfg->command_tasks > 0 && !cfg->task_info)
        return tf_error (err, errlen, "core: command tasks need task_info");
    if (cfg->slots > CORE_MAX_SLOTS)
        return tf_error (err, errlen, "core: %u slots, more than %u", cfg->slots,
                         CORE_MAX_SLOTS);
    if (cfg->max_attempts > CORE_MAX_ATTEMPTS)
        return tf_error (err, errlen, "core: %u attempts, more than %u",
                         cfg->max_attempts, CORE_MAX_ATTEMPTS);
    for (uint32_t i = 0; cfg->tree_parent && i < cfg->nnodes; i++)
        if (cfg->tree_parent[i] >= (int32_t) cfg->nnodes
            || (cfg->tree_parent[i] < 0 && cfg->tree_parent[i] != -1))
            return tf_error (err, errlen, "core: node %u has parent %d", i,
                             cfg->tree_parent[i]);
    for (int c = 0; c < cfg->nchildren; c++)
        if (cfg->tree_parent && cfg->children[c].node >= cfg->nnodes)
            return tf_error (err, errlen, "core: child %d is node %u of %u", c,
                             cfg->children[c].node, cfg->nnodes);
    return 0;
}

/*  Keep the tree's shape, and count each node's subtree (a node walks up
 *  to the root; a cycle, which config loading rules out, stops after
 *  nnodes steps). */
static void
copy_tree (core_t *self, const int32_t *parent)
{
    uint32_t n = self->cfg.nnodes;
    self->shape.parent = xmalloc (n * sizeof *self->shape.parent);
    memcpy (self->shape.parent, parent, n * sizeof *parent);
    self->shape.size = xcalloc (n, sizeof *self->shape.size);
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = (int32_t) i;
        for (uint32_t steps = 0; x >= 0 && steps <= n; steps++) {
            self->shape.size[x]++;
            x = parent[x];
        }
    }
}

/*  The parts, each configured from cfg. */
static void
new_parts (core_t *self, const core_cfg_t *cfg)
{
    self->ledger = ledger_new (&(ledger_cfg_t){
        .is_root = cfg->is_root, .task_count = cfg->task_count,
        .command_tasks = cfg->command_tasks, .task_units = cfg->task_units,
        .task_bytes = cfg->task_bytes, .task_info = cfg->task_info,
        .task_arg = cfg->task_arg, .max_attempts = cfg->max_attempts,
        .nnodes = cfg->nnodes, .root_only = cfg->policy->root_only});
    self->xfer = xfer_new (&(xfer_cfg_t){
        .nchildren = cfg->nchildren, .children = cfg->children,
        .chunk_bytes = cfg->chunk_bytes, .window = cfg->window, .pace = cfg->pace,
        .send_limit_bps = cfg->send_limit_bps, .meter_window = cfg->meter_window,
        .policy = cfg->policy, .parent = cfg->parent, .probe_units = cfg->task_units,
        .probe_bytes = cfg->task_bytes, .keep_commands = !cfg->is_root});
    self->recv = recv_new (&(recv_cfg_t){
        .task_count = cfg->task_count, .command_tasks = cfg->command_tasks,
        .task_units = cfg->task_units, .task_bytes = cfg->task_bytes,
        .chunk_bytes = cfg->chunk_bytes, .nnodes = cfg->nnodes,
        .meter_window = cfg->meter_window});
    self->streams = streams_new (cfg->chunk_bytes, cfg->window, cfg->nchildren);
}

core_t *
core_new (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (check_sizes (cfg, err, errlen) || check_commands (cfg, err, errlen))
        return NULL;
    core_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    self->cfg.children = NULL;
    self->cfg.tree_parent = NULL;
    new_parts (self, cfg);
    self->compute.slots = cfg->slots ? cfg->slots : 1;
    self->compute.running = xcalloc (self->compute.slots, sizeof (task_t));
    if (cfg->tree_parent)
        copy_tree (self, cfg->tree_parent);
    return self;
}

void
core_destroy (core_t **self_p)
{
    core_t *self = *self_p;
    if (!self)
        return;
    ledger_destroy (&self->ledger);
    xfer_destroy (&self->xfer);
    recv_destroy (&self->recv);
    streams_destroy (&self->streams);
    free (self->shape.parent);
    free (self->shape.size);
    free (self->compute.running);
    free (self->batch.items);
    free (self->acts.items);
    free (self);
    *self_p = NULL;
}

static core_action_t *
emit (core_t *self, core_action_type_t type)
{
    return core_acts_emit (&self->acts, type);
}

/*  --- which task may go where --------------------------------------------- */

static int
in_subtree (const core_t *self, uint32_t x, uint32_t top)
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
        inside += in_subtree (self, t->avoid[i], top);
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
    core_action_t *a = emit (self, CORE_ACT_RETRY);
    a->task = task;
    a->node = node;
    a->n = ledger_attempts (self->ledger, task);
    return 1;
}

/*  A task completed at node: batched for the parent (REPORT) or, on the
 *  root, recorded and batched for the controller (RECORDED) the first
 *  time, counted as a duplicate after; a failed command with attempts
 *  left is queued again instead. */
static void
complete (core_t *self, core_done_t d, const task_t *had, double now)
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
            core_action_t *a = emit (self, type);
            a->done = b->items + at;
            a->ndone = b->n - at < max ? b->n - at : max;
        }
        b->flushed = 1;
    }
    if (finish_due && !self->finished) {
        self->finished = 1;
        emit (self, CORE_ACT_FINISHED);
    }
}

/*  --- the fixed point after every event ---------------------------------- */

/*  Start tasks on free slots while some may run here. */
static void
compute_tasks (core_t *self)
{
    compute_t *e = &self->compute;
    int pos;
    while (e->n < e->slots && (pos = find_task (self, -1)) >= 0) {
        task_t t = ledger_take_task (self->ledger, (uint32_t) pos);
        e->running[e->n++] = t;
        e->engine_busy |= t.kind == CORE_KIND_SYNTHETIC;
        core_action_t *a = emit (self, CORE_ACT_COMPUTE);
        a->task = t.id;
        a->units = t.units;
        a->kind = t.kind;
    }
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
        int any = uniform && find_task (self, ready[0]) >= 0;
        for (int i = 0; i < n; i++)
            if (uniform ? any : find_task (self, ready[i]) >= 0)
                ready[k++] = ready[i];
        int c = k > 0 ? xfer_pick_child (self->xfer, now, ready, k) : -1;
        if (c < 0)
            return;
        task_t t = ledger_take_task (self->ledger, (uint32_t) find_task (self, c));
        xfer_start_task (self->xfer, c, &t, now);
    }
}

static void
dispatch (core_t *self, double now)
{
    xfer_serve_probes (self->xfer, now);
    if (!self->started) {
        xfer_pump_chunks (self->xfer, &self->acts, now);
        return;
    }
    compute_tasks (self);
    /*  Paced, a transfer whose last chunk goes out with no pacing delay
     *  (an empty one) frees the port at once: serve the next ask. Each
     *  pass starts a transfer or sends a chunk, and both are bounded. */
    for (int before = -1; before != self->acts.n;) {
        before = self->acts.n;
        serve_children (self, now);
        xfer_pump_chunks (self->xfer, &self->acts, now);
    }
    streams_pump_up (self->streams, &self->acts);
    uint32_t want = self->cfg.buffer + self->compute.slots - 1;
    uint32_t have = ledger_held (self->ledger) + recv_pending (self->recv);
    if (!self->cfg.is_root && have < want) {
        recv_add_pending (self->recv, want - have);
        self->stats.requested += want - have;
        emit (self, CORE_ACT_REQUEST)->n = want - have;
    }
    flush (self, now);
}

/*  --- events --------------------------------------------------------------- */

static int
on_request (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    return xfer_add_ask (self->xfer, ev->child, ev->n, err, errlen);
}

static int
on_chunk (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (self->cfg.is_root)
        return tf_error (err, errlen, "the root has no parent to receive from");
    if (recv_check_chunk (self->recv, ev, err, errlen))
        return -1;
    int probe = ev->task == CORE_PROBE_TASK;
    task_t task;
    int took = recv_take_chunk (self->recv, ev, &task);
    uint64_t arriving;
    uint32_t held;
    int active = recv_progress (self->recv, &arriving, &held);
    xfer_set_arriving (self->xfer, active, arriving, held);
    if (probe)
        self->stats.probe_bytes_in += ev->len;
    else
        self->stats.bytes_in += ev->len;
    core_action_t *a = emit (self, CORE_ACT_ACK);
    a->task = ev->task;
    a->index = ev->index;
    if (took & RECV_HELD)
        ledger_push_task (self->ledger, &task);
    if (took & RECV_LAST)
        self->stats.received += !probe;
    return 0;
}

static int
on_ack (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    return xfer_ack_chunk (self->xfer, ev->child, ev->task, ev->index, ev->now,
                           &self->acts, err, errlen);
}

static int
on_done (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    if (ev->ndone > 0 && !ev->done)
        return tf_error (err, errlen, "completion batch missing");
    for (uint32_t i = 0; i < ev->ndone; i++)
        if (ev->done[i].task >= self->cfg.task_count
            || ev->done[i].node >= self->cfg.nnodes)
            return tf_error (err, errlen, "completion of task %llu by node %u is "
                             "out of range", (unsigned long long) ev->done[i].task,
                             ev->done[i].node);
        else if (ev->done[i].task < self->cfg.command_tasks || ev->done[i].failed)
            return tf_error (err, errlen, "completion of command task %llu without "
                             "its result", (unsigned long long) ev->done[i].task);
    if (xfer_take_given (self->xfer, ev->child, ev->done, ev->ndone, err, errlen))
        return -1;
    for (uint32_t i = 0; i < ev->ndone; i++) {
        core_done_t d = {.task = ev->done[i].task, .node = ev->done[i].node};
        complete (self, d, NULL, ev->now);
    }
    return 0;
}

static int
on_computed (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    compute_t *e = &self->compute;
    uint32_t k = 0;
    while (k < e->n && e->running[k].id != ev->task)
        k++;
    if (k == e->n)
        return tf_error (err, errlen, "engine finished task %llu, which it was not "
                         "computing", (unsigned long long) ev->task);
    task_t ran = e->running[k];
    int command = ran.kind == CORE_KIND_COMMAND;
    if (!command && (ev->bytes > 0 || ev->failed))
        return tf_error (err, errlen, "synthetic task %llu has no result stream",
                         (unsigned long long) ev->task);
    if (command && !self->cfg.is_root
        && (ev->bytes == 0 || ev->bytes > CONFIG_MAX_STREAM_BYTES))
        return tf_error (err, errlen, "task %llu: a result of %llu bytes",
                         (unsigned long long) ev->task, (unsigned long long) ev->bytes);
    e->running[k] = e->running[--e->n];
    e->engine_busy &= command;
    self->stats.computed++;
    emit (self, CORE_ACT_RELEASE)->task = ev->task;
    core_done_t d = {.task = ev->task, .node = self->cfg.self, .failed = ev->failed != 0};
    if (command && !self->cfg.is_root)
        streams_push_up (self->streams, d, ev->bytes);
    else
        complete (self, d, &ran, ev->now);
    return 0;
}

/*  Does a result chunk from child c fit: a command of the bag computed in
 *  c's subtree, a size within limits, in order within c's stream? */
static int
check_result (const core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    if (ev->task >= self->cfg.command_tasks || ev->node >= self->cfg.nnodes
        || (self->shape.parent
            && !in_subtree (self, ev->node, xfer_child_node (self->xfer, ev->child))))
        return tf_error (err, errlen, "result of task %llu by node %u from child %d: "
                         "no such command there", (unsigned long long) ev->task,
                         ev->node, ev->child);
    int given = streams_receiving (self->streams, ev->child)
             || xfer_was_given (self->xfer, ev->child, ev->task);
    return streams_check_result (self->streams, ev, given, err, errlen);
}

static int
on_result (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_result (self, ev, err, errlen))
        return -1;
    core_done_t d;
    if (!streams_take_result (self->streams, ev, &self->acts, &d))
        return 0;
    xfer_drop_given (self->xfer, ev->child, ev->task);
    if (!self->cfg.is_root) {
        emit (self, CORE_ACT_RELEASE)->task = ev->task;   /* its input bundle */
        streams_push_up (self->streams, d, ev->bytes);
        return 0;
    }
    task_t had;
    int known = ledger_recall_task (self->ledger, ev->task, &had);
    complete (self, d, known ? &had : NULL, ev->now);
    emit (self, CORE_ACT_RELEASE_RESULT)->task = ev->task;
    return 0;
}

/*  Child c is lost: every task its subtree had, the one in flight to it
 *  included, is queued again here (on the root, ahead of the bag's fresh
 *  ones), a result stream half arrived from it is dropped, and it is
 *  never served nor heard again. A task that failed before keeps the
 *  nodes it failed on. */
static int
on_lost (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    streams_drop_child (self->streams, ev->child, &self->acts);
    uint32_t n;
    const task_t *given = xfer_lose_child (self->xfer, ev->child, &n);
    for (uint32_t i = 0; i < n; i++) {
        task_t t = given[i], had;
        if (self->cfg.is_root && ledger_recall_task (self->ledger, t.id, &had))
            t = had;   /* handed out again from the queue: remembered anew */
        ledger_push_task (self->ledger, &t);
        self->stats.requeued++;
    }
    self->stats.children_lost++;
    return 0;
}

static int
on_stream (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    xfer_set_streaming (self->xfer, ev->child, ev->n != 0, ev->now);
    return 0;
}

/*  Check an event and change the state by it. Returns 0, or -1 with a
 *  message in err and the state unchanged. */
static int
apply (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    switch (ev->type) {
    case CORE_EV_START:
        self->started = 1;
        return 0;
    case CORE_EV_TICK:
        return 0;
    case CORE_EV_REQUEST:
        return on_request (self, ev, err, errlen);
    case CORE_EV_CHUNK:
        return on_chunk (self, ev, err, errlen);
    case CORE_EV_ACK:
        return on_ack (self, ev, err, errlen);
    case CORE_EV_DONE:
        return on_done (self, ev, err, errlen);
    case CORE_EV_COMPUTED:
        return on_computed (self, ev, err, errlen);
    case CORE_EV_RESULT:
        return on_result (self, ev, err, errlen);
    case CORE_EV_RESULT_ACK:
        return streams_ack_up (self->streams, ev->task, ev->index, &self->acts,
                               err, errlen);
    case CORE_EV_LOST:
        return on_lost (self, ev, err, errlen);
    case CORE_EV_STREAM:
        return on_stream (self, ev, err, errlen);
    default:
        return tf_error (err, errlen, "unknown event %d", (int) ev->type);
    }
}

int
core_handle (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    self->acts.n = 0;
    if (!self->meters_marked) {
        /*  The meters measure from the first event on (a run's START, or a
         *  calibration's first probe). */
        recv_mark_meter (self->recv, ev->now);
        xfer_mark_meters (self->xfer, ev->now);
        self->meters_marked = 1;
    }
    if (self->batch.flushed) {
        self->batch.n = 0;
        self->batch.flushed = 0;
    }
    if (apply (self, ev, err, errlen) < 0) {
        self->stats.malformed++;
        self->acts.n = 0;
        return -1;
    }
    dispatch (self, ev->now);
    return 0;
}

/*  --- what the runtime reads ---------------------------------------------- */

const core_action_t *
core_actions (const core_t *self, int *count)
{
    *count = self->acts.n;
    return self->acts.items;
}

core_stats_t
core_stats (const core_t *self)
{
    core_stats_t s = self->stats;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        core_child_stats_t c = xfer_child_stats (self->xfer, i);
        s.forwarded += c.tasks_sent;
        s.bytes_out += c.bytes_sent;
    }
    streams_add_stats (self->streams, &s);
    s.completed = ledger_completed (self->ledger);
    s.held = ledger_held (self->ledger);
    s.computing = (int) self->compute.n;
    return s;
}

core_child_stats_t
core_child_stats (const core_t *self, int child)
{
    return xfer_child_stats (self->xfer, child);
}

int
core_is_done (const core_t *self, uint64_t task)
{
    return ledger_is_done (self->ledger, task);
}

int
core_mark_done (core_t *self, uint64_t task)
{
    if (self->started)
        return -1;
    return ledger_mark_done (self->ledger, task);
}

double
core_next_deadline (const core_t *self, double now)
{
    double due = -1;
    if (self->batch.n > 0 && !self->batch.flushed)
        due = self->batch.since + self->cfg.batch_delay;
    double at = xfer_next_due (self->xfer, now);
    if (at >= 0 && (due < 0 || at < due))
        due = at;
    if (due < 0)
        return -1;
    return due > now ? due - now : 0;
}

double
core_recv_rate (core_t *self, double now)
{
    return recv_rate (self->recv, now);
}

double
core_send_rate (core_t *self, int child, double now)
{
    return xfer_send_rate (self->xfer, child, now);
}

void
core_set_child_ir (core_t *self, int child, double ir_send)
{
    xfer_set_child_ir (self->xfer, child, ir_send);
}

void
core_set_child_rates (core_t *self, int child, const core_rates_t *rates)
{
    xfer_set_child_rates (self->xfer, child, rates);
}

void
core_set_compute_rate (core_t *self, double units_per_s)
{
    if (!(units_per_s > 0) || !isfinite (units_per_s))
        return;
    self->cfg.parent.compute_rate = units_per_s;
    xfer_set_compute_rate (self->xfer, units_per_s);
}

void
core_set_link_share (core_t *self, int child, double share)
{
    xfer_set_link_share (self->xfer, child, share);
}

int
core_port_busy (const core_t *self, double now)
{
    return xfer_port_busy (self->xfer, now);
}

int
core_sending (const core_t *self)
{
    return xfer_sending (self->xfer);
}
