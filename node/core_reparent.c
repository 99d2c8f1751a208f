/*  core_reparent — a node that lost its parent and is moved under another
 *  (docs/adapt.md, "Re-parent"). See node/core_int.h.
 *
 *  When a non-root node's parent is lost, the root has queued again every
 *  task it had given to the parent's subtree: all this node holds,
 *  computes, or gave to its own children. For exactly-once, nothing the
 *  node had from the old parent may go up any more:
 *  - ORPHANED drops the held tasks and the one arriving (RELEASE), the
 *    asks pending at the parent, the unsent completions and the result
 *    streams going up (RELEASE_RESULT), restores the configured buffer (a
 *    RECLAIM may have lowered it), and marks stale every task computing
 *    here or out in a child's subtree; while orphaned the node asks for
 *    nothing (core_dispatch), its children's asks are kept;
 *  - REPARENT ends that: the next dispatch asks the new parent for the
 *    whole buffer;
 *  - a stale copy's end (COMPUTED, DONE, a whole RESULT, RETURNED, its
 *    child LOST) is dropped: core_stale_take.
 *
 *  A transfer to a child of the task that was arriving (cut-through)
 *  goes on: the node releases its partial payload, the rest of its
 *  chunks are made from the task's id (node/payload.h), and the task is
 *  stale like any other given to the child.
 *
 *  The stale set holds, per task id, the stale copies out (`old`). The
 *  root never hands out a task to two places while an old copy counts,
 *  so a fresh copy of a stale id should not come; if one does, the rule
 *  is that exactly one of the copies out ends up: the first copies of
 *  the id to end are taken for the fresh ones (`fresh` of them, sent up
 *  or queued again as usual), the next `old` are dropped. Which copy ends
 *  first does not matter: the tasks are the same, and the new parent
 *  hears of the id once, as it gave it once. A fresh copy given back to
 *  the parent (RECLAIM) leaves without ending here: core_stale_gone.
 */
#include <stdlib.h>

#include "node/core_int.h"
#include "overlay/util.h"

/*  The stale set's entry of task, or NULL. The set is as large as the
 *  tasks that were out when the parent was lost. */
static stale_t *
find (core_t *self, uint64_t task)
{
    for (uint32_t i = 0; i < self->stale.n; i++)
        if (self->stale.items[i].id == task)
            return &self->stale.items[i];
    return NULL;
}

/*  One more stale copy of task. */
static stale_t *
add_old (core_t *self, uint64_t task)
{
    stale_t *s = find (self, task);
    if (!s) {
        if (self->stale.n == self->stale.cap) {
            self->stale.cap = self->stale.cap ? 2 * self->stale.cap : 16;
            self->stale.items = xrealloc (self->stale.items,
                                          self->stale.cap * sizeof *self->stale.items);
        }
        s = &self->stale.items[self->stale.n++];
        *s = (stale_t){.id = task};
    }
    s->old++;
    return s;
}

void
core_stale_add (core_t *self, uint64_t task, int endgame)
{
    add_old (self, task)->endgame = endgame;
}

/*  Forget entry s once no stale copy of its id is out. */
static void
settle (core_t *self, stale_t *s)
{
    if (s->old == 0)
        *s = self->stale.items[--self->stale.n];
}

/*  Mark stale every copy computing here or given to a child's subtree.
 *  The set is made anew: the copies already stale are among them, and a
 *  fresh copy of a stale id is now stale too. Returns the copies that
 *  were not stale before. */
static uint64_t
mark_out (core_t *self)
{
    uint64_t before = 0, after = 0;
    for (uint32_t i = 0; i < self->stale.n; i++)
        before += self->stale.items[i].old;
    self->stale.n = 0;
    for (uint32_t i = 0; i < self->compute.n; i++, after++)
        add_old (self, self->compute.running[i].id);
    for (int c = 0; c < self->cfg.nchildren; c++) {
        uint32_t n;
        const task_t *given = xfer_given_list (self->xfer, c, &n);
        for (uint32_t i = 0; i < n; i++, after++)
            add_old (self, given[i].id);
    }
    return after - before;
}

/*  Drop every held task (RELEASE), and the one arriving: a synthetic
 *  one is held from its first chunk, unless it is being relayed to a
 *  child (cut-through), and a command only once whole, so one not held
 *  is released here (its partial payload or input). Returns the tasks
 *  dropped from the ledger. */
static uint32_t
drop_held (core_t *self)
{
    uint64_t arriving;
    uint32_t chunks, n = 0;
    int active = recv_progress (self->recv, &arriving, &chunks);
    active = active && arriving != CORE_PROBE_TASK;
    while (ledger_held (self->ledger) > 0) {
        task_t t = ledger_take_task (self->ledger, ledger_held (self->ledger) - 1);
        core_emit (self, CORE_ACT_RELEASE)->task = t.id;
        active = active && t.id != arriving;
        n++;
    }
    if (active)
        core_emit (self, CORE_ACT_RELEASE)->task = arriving;
    recv_abandon (self->recv);
    recv_drop_pending (self->recv, recv_pending (self->recv));
    xfer_set_arriving (self->xfer, 0, 0, 0);
    return n;
}

int
core_on_orphaned (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    (void) ev;
    if (self->cfg.is_root)
        return tf_error (err, errlen, "the root has no parent to lose");
    if (self->orphaned)
        return tf_error (err, errlen, "orphaned already, not re-parented since");
    uint64_t stale = drop_held (self);
    self->batch.n = 0;   /* the root queued them again */
    self->batch.flushed = 0;
    streams_drop_up (self->streams, &self->acts);
    stale += mark_out (self);
    self->stats.stale += stale;
    self->cfg.buffer = self->buffer_cfg;
    self->eg.ncopies = self->eg.ncancelled = 0;   /* all stale now */
    self->orphaned = 1;
    return 0;
}

int
core_on_reparent (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    (void) ev;
    if (!self->orphaned)
        return tf_error (err, errlen, "a new parent, but the node is not orphaned");
    self->orphaned = 0;
    return 0;
}

int
core_stale_take (core_t *self, uint64_t task)
{
    stale_t *s = find (self, task);
    if (!s)
        return 0;
    if (s->fresh > 0) {
        s->fresh--;
        return 0;
    }
    int endgame = s->endgame;
    s->old--;
    settle (self, s);
    if (!endgame)
        self->stats.stale_dropped++;
    return 1;
}

int
core_stale_has (core_t *self, uint64_t task)
{
    return find (self, task) != NULL;
}

void
core_stale_fresh (core_t *self, uint64_t task)
{
    stale_t *s = find (self, task);
    if (s)
        s->fresh++;
}

void
core_stale_gone (core_t *self, uint64_t task)
{
    stale_t *s = find (self, task);
    if (s && s->fresh > 0)
        s->fresh--;
}
