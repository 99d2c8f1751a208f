/*  core_reclaim — a parent takes back the tasks a child holds and has not
 *  started (docs/adapt.md, "Reclaim"). See node/core_int.h.
 *
 *  Three events, one exchange:
 *  - TAKE_BACK (the runtime, at the parent, when the gate says the move
 *    pays): the child's unserved asks are dropped and RECLAIM tells it to
 *    hold at most n tasks, and how many of its asks were dropped;
 *  - RECLAIM (at the child): it forgets the dropped asks, holds at most n
 *    from now on (its buffer), and gives back the held tasks beyond n,
 *    newest first, that are whole (not arriving) — RETURN, and RELEASE of
 *    each one's payload;
 *  - RETURNED (at the parent): the tasks, each given to that child and
 *    not back, are queued here again (the root: as handed out, with the
 *    nodes a command failed on).
 *  Exactly once holds because a task is in one place at a time: the child
 *  gives back only what it holds and has not started, and removes it
 *  before it says so; the parent queues it only once it hears. A RECLAIM
 *  with n at the configured buffer gives nothing back and restores the
 *  child's asking.
 */
#include "node/core_int.h"
#include "overlay/config.h"
#include "overlay/util.h"

/*  How many tasks a node may be told to hold: the config's limit at
 *  most; 0 is a shrink's drain (docs/adapt.md, "Shrink"): everything held
 *  comes back and nothing more is asked for. */
static int
check_hold (uint32_t n, char *err, size_t errlen)
{
    if (n > CONFIG_MAX_BUFFER)
        return tf_error (err, errlen, "a reclaim to hold %u tasks (0 .. %u)", n,
                         CONFIG_MAX_BUFFER);
    return 0;
}

int
core_on_take_back (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen)
        || check_hold (ev->n, err, errlen))
        return -1;
    core_action_t *a = core_emit (self, CORE_ACT_RECLAIM);
    a->child = ev->child;
    a->n = ev->n;
    a->count = xfer_drop_asks (self->xfer, ev->child);
    return 0;
}

/*  Keep the back list's room for n more. */
static void
back_room (core_t *self, uint32_t n)
{
    if (self->back.cap < n) {
        self->back.cap = n;
        self->back.items = xrealloc (self->back.items, n * sizeof *self->back.items);
    }
}

/*  Give back the whole held tasks beyond cfg.buffer, newest first. */
static void
give_back (core_t *self)
{
    uint32_t held = ledger_held (self->ledger), n = 0;
    if (held <= self->cfg.buffer)
        return;
    back_room (self, held - self->cfg.buffer);
    for (uint32_t pos = held; pos-- > 0 && held - n > self->cfg.buffer;) {
        if (recv_arriving (self->recv, ledger_peek_task (self->ledger, pos)->id))
            continue;
        task_t t = ledger_take_task (self->ledger, pos);
        core_stale_gone (self, t.id);
        core_endgame_gone (self, t.id);
        self->back.items[n++] = (core_done_t){.task = t.id, .node = self->cfg.self};
        core_emit (self, CORE_ACT_RELEASE)->task = t.id;
    }
    if (n == 0)
        return;
    core_action_t *a = core_emit (self, CORE_ACT_RETURN);
    a->done = self->back.items;
    a->ndone = n;
    self->stats.returned += n;
}

int
core_on_reclaim (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (self->cfg.is_root)
        return tf_error (err, errlen, "the root has no parent to give tasks back to");
    if (check_hold (ev->n, err, errlen))
        return -1;
    if (recv_drop_pending (self->recv, ev->count) != 0)
        return tf_error (err, errlen, "a reclaim drops %u asks, %u are pending",
                         ev->count, recv_pending (self->recv));
    self->cfg.buffer = ev->n;
    give_back (self);
    return 0;
}

int
core_on_returned (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, ev->child, err, errlen))
        return -1;
    if (ev->ndone == 0 || !ev->done)
        return tf_error (err, errlen, "an empty RETURN");
    uint32_t node = xfer_child_node (self->xfer, ev->child);
    for (uint32_t i = 0; i < ev->ndone; i++)
        if (ev->done[i].task >= self->cfg.task_count || ev->done[i].node != node)
            return tf_error (err, errlen, "task %llu given back by node %u from "
                             "child %d (node %u)", (unsigned long long) ev->done[i].task,
                             ev->done[i].node, ev->child, node);
    if (xfer_take_given (self->xfer, ev->child, ev->done, ev->ndone, err, errlen))
        return -1;
    const task_t *taken = xfer_taken (self->xfer);
    for (uint32_t i = 0; i < ev->ndone; i++) {
        task_t t = taken[i], had;
        if (core_stale_take (self, t.id))
            continue;   /* queued again at the root already */
        if (core_endgame_orphan_copy (self, t.id, ev->child))
            continue;   /* our own copy of it goes on */
        if (self->cfg.is_root && ledger_recall_task (self->ledger, t.id, &had))
            t = had;
        ledger_push_task (self->ledger, &t);
        self->stats.reclaimed++;
    }
    return 0;
}
