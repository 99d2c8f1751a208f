/*  core_events — each event a core is fed, checked without touching the
 *  state, then applied. See node/core_int.h.
 */
#include "node/core_int.h"
#include "overlay/config.h"
#include "overlay/util.h"

static int
on_request (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen)
        || xfer_add_ask (self->xfer, ev->child, ev->n, err, errlen))
        return -1;
    core_endgame_heard (self, ev->child);
    return 0;
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
    core_action_t *a = core_emit (self, CORE_ACT_ACK);
    a->task = ev->task;
    a->index = ev->index;
    if (took & RECV_HELD) {
        ledger_push_task (self->ledger, &task);
        core_stale_fresh (self, task.id);
    }
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
        if (core_stale_take (self, d.task)) {
            self->stats.wasted++;
            continue;
        }
        core_complete (self, d, NULL, ev->now);
        core_endgame_settle (self, d.task, ev->child);
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
    e->given[k] = e->given[e->n - 1];
    e->running[k] = e->running[--e->n];
    e->engine_busy &= command;
    self->stats.computed++;
    core_emit (self, CORE_ACT_RELEASE)->task = ev->task;
    core_done_t d = {.task = ev->task, .node = self->cfg.self, .failed = ev->failed != 0};
    if (core_stale_take (self, ev->task)) {
        self->stats.wasted++;
        if (command)   /* its result is not sent: free its spool */
            core_emit (self, CORE_ACT_RELEASE_RESULT)->task = ev->task;
    }
    else if (command && !self->cfg.is_root)
        streams_push_up (self->streams, d, ev->bytes);
    else {
        core_complete (self, d, &ran, ev->now);
        core_endgame_settle (self, ev->task, -1);
    }
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
            && !core_in_subtree (self, ev->node, xfer_child_node (self->xfer, ev->child))))
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
        core_emit (self, CORE_ACT_RELEASE)->task = ev->task;   /* its input bundle */
        if (core_stale_take (self, ev->task)) {
            self->stats.wasted++;
            core_emit (self, CORE_ACT_RELEASE_RESULT)->task = ev->task;
        }
        else
            streams_push_up (self->streams, d, ev->bytes);
        return 0;
    }
    task_t had;
    int known = ledger_recall_task (self->ledger, ev->task, &had);
    core_complete (self, d, known ? &had : NULL, ev->now);
    core_emit (self, CORE_ACT_RELEASE_RESULT)->task = ev->task;
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
        if (core_stale_take (self, t.id))
            continue;   /* the root has it queued already */
        if (core_endgame_orphan_copy (self, t.id, ev->child))
            continue;   /* our own copy of it goes on */
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

int
core_apply (core_t *self, const core_event_t *ev, char *err, size_t errlen)
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
    case CORE_EV_TAKE_BACK:
        return core_on_take_back (self, ev, err, errlen);
    case CORE_EV_RECLAIM:
        return core_on_reclaim (self, ev, err, errlen);
    case CORE_EV_RETURNED:
        return core_on_returned (self, ev, err, errlen);
    case CORE_EV_ORPHANED:
        return core_on_orphaned (self, ev, err, errlen);
    case CORE_EV_REPARENT:
        return core_on_reparent (self, ev, err, errlen);
    case CORE_EV_CANCEL:
        return core_on_cancel (self, ev, err, errlen);
    case CORE_EV_EMPTY:
        return core_on_empty (self, ev, err, errlen);
    default:
        return tf_error (err, errlen, "unknown event %d", (int) ev->type);
    }
}

