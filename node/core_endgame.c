/*  core_endgame — the end of the bag (docs/policies.md, "The end-game").
 *  See node/core_int.h.
 *
 *  Two rules, for every policy, unless the run says --no-endgame:
 *  a) hold back: a parent does not hand a task to a child that would
 *     finish it later than the parent would if it kept it. The child's
 *     finish is its transfer (the task's bytes at the link's rate, at
 *     most its planned share) or the tasks given to its subtree drained
 *     at its subtree bound, whichever is longer, then its compute; the
 *     parent's is the tasks it still has to hand out (the root: its
 *     held tasks and the bag's fresh ones), and the commands waiting in
 *     its places behind those running (core_cfg_t's depth), drained by
 *     the rest of its subtree (its own subtree bound less the child's,
 *     at least its own rate), or the wait for a slot of its own to be
 *     free, whichever is longer, then its compute. On the root this is its own test of
 *     "near the end": early in a run the bag is large and no child is
 *     held back. Below the root, where a node holds only its buffer,
 *     the rule waits until the node is told the bag is empty (EMPTY).
 *  b) copy: once the bag is empty (the root: nothing held, nothing
 *     fresh; below: told EMPTY and nothing held), a node whose engine
 *     is idle computes a copy of the task given to a child's subtree
 *     that would finish last there, if that is later than it would here.
 *     The first completion wins: it goes up, and the other copy is
 *     marked stale (core_reparent.c's set), so that its completion or
 *     return is dropped when it comes; a child whose copy lost is told
 *     (CANCEL) and gives the task back if it holds it still, passes the
 *     CANCEL on to the child it gave it to, or lets it finish (its
 *     completion is dropped at the copier). Only synthetic tasks are
 *     copied: a command's copy would run it twice, with its outputs.
 *  The estimates use the beliefs the policies use (live when adapting)
 *  and the run's task size; times are in seconds of `now`, rates in
 *  platform units scaled by the time scale.
 */
#include <math.h>

#include "node/core_int.h"
#include "overlay/util.h"

static double
time_scale (const core_t *self)
{
    double s = self->cfg.endgame.time_scale;
    return s > 0 && isfinite (s) ? s : 1;
}

/*  Seconds to compute units at rate units/s (platform). */
static double
compute_s (const core_t *self, double units, double rate)
{
    return rate > 0 ? units / (rate * time_scale (self)) : INFINITY;
}

/*  Tasks per second `ahead` of a task drain at through a subtree of
 *  bound `that` (tasks/s, platform; unknown: the node's own C / w). */
static double
drain_rate (const core_t *self, double that, double compute_rate)
{
    double w = self->cfg.task_units > 0 ? self->cfg.task_units : 1;
    double t = that > 0 && isfinite (that) ? that : compute_rate / w;
    return t * time_scale (self);
}

/*  Seconds from now until child c would finish a task of `units`, with
 *  `left` of its bytes still to send and `ahead` tasks before it in the
 *  child's subtree. */
static double
child_finish (const core_t *self, int c, uint64_t left, double ahead, double units)
{
    policy_child_t f = xfer_child_facts (self->xfer, c);
    double bps = xfer_child_bps (self->xfer, c);
    double transfer = left == 0 ? 0 : bps > 0 ? (double) left / bps : INFINITY;
    double drain = drain_rate (self, f.that, f.compute_rate);
    double queue = ahead == 0 ? 0 : drain > 0 ? ahead / drain : INFINITY;
    return fmax (transfer, queue) + compute_s (self, units, f.compute_rate);
}

/*  Seconds from now until this node would finish a task of `units` it
 *  kept behind `ahead` others, which its subtree drains without child
 *  `without` (its subtree bound less the child's, at least the node's
 *  own rate; -1: none left out), and not before `slot_s`, when a slot of
 *  its own is free for it. */
static double
own_finish (const core_t *self, double ahead, double slot_s, double units, int without)
{
    double rate = self->cfg.parent.compute_rate;
    double drain = drain_rate (self, self->cfg.endgame.that, rate);
    if (without >= 0) {
        policy_child_t f = xfer_child_facts (self->xfer, without);
        double own = drain_rate (self, 0, rate);
        drain = fmax (own, drain - drain_rate (self, f.that, f.compute_rate));
    }
    double queue = ahead == 0 ? 0 : drain > 0 ? ahead / drain : INFINITY;
    return fmax (queue, slot_s) + compute_s (self, units, rate);
}

/*  Seconds from now until the first of this node's slots is free: 0 with
 *  one free; else when the task handed over first among those running
 *  ends, by its units at the node's rate (at least now). */
static double
slot_free_s (const core_t *self, double now)
{
    const compute_t *e = &self->compute;
    if (e->n < core_cfg_slots (&self->cfg))
        return 0;
    double soonest = INFINITY;
    for (uint32_t i = 0; i < e->n; i++) {
        double end = e->given[i] + compute_s (self, e->running[i].units,
                                              self->cfg.parent.compute_rate);
        soonest = fmin (soonest, end);
    }
    return fmax (0, soonest - now);
}

int
core_endgame_holds_back (const core_t *self, int c, double now)
{
    if (!self->cfg.endgame.on || (!self->cfg.is_root && !self->eg.drained))
        return 0;
    uint32_t given;
    xfer_given_list (self->xfer, c, &given);
    /*  Tasks waiting in this node's places behind its running ones are
     *  ahead of a task it keeps, as the held ones are. */
    const compute_t *e = &self->compute;
    uint32_t running = core_cfg_slots (&self->cfg);
    double ahead = (double) ledger_held (self->ledger)
                 + (double) ledger_fresh_left (self->ledger)
                 + (double) (e->n > running ? e->n - running : 0);
    double units = self->cfg.task_units;
    return child_finish (self, c, self->cfg.task_bytes, given, units)
         > own_finish (self, ahead > 0 ? ahead - 1 : 0, slot_free_s (self, now), units, c);
}

/*  --- the copies -------------------------------------------------------- */

static int
find_copy (const core_t *self, uint64_t task)
{
    for (uint32_t i = 0; i < self->eg.ncopies; i++)
        if (self->eg.copies[i].id == task)
            return (int) i;
    return -1;
}

static void
forget_copy (core_t *self, int i)
{
    self->eg.copies[i] = self->eg.copies[--self->eg.ncopies];
}

/*  Start computing a copy of t, whose other copy is out in child c's
 *  subtree. */
static void
start_copy (core_t *self, const task_t *t, int c, double now)
{
    endgame_t *g = &self->eg;
    if (g->ncopies == g->copies_cap) {
        g->copies_cap = g->copies_cap ? 2 * g->copies_cap : 8;
        g->copies = xrealloc (g->copies, g->copies_cap * sizeof *g->copies);
    }
    g->copies[g->ncopies++] = (copy_t){.id = t->id, .child = c};
    compute_t *e = &self->compute;
    compute_push (e, t, now);
    e->engine_busy = 1;
    core_action_t *a = core_emit (self, CORE_ACT_COMPUTE);
    a->task = t->id;
    a->units = t->units;
    a->kind = t->kind;
    self->stats.copies++;
}

/*  Rule b: an idle node with nothing to hand out copies the task that
 *  would finish last in a child's subtree, if later than here. */
static void
copy_one (core_t *self, double now)
{
    compute_t *e = &self->compute;
    if (e->engine_busy || e->n >= e->slots || ledger_held (self->ledger) > 0)
        return;
    const task_t *best = NULL;
    int best_child = -1;
    double latest = 0;
    for (int c = 0; c < self->cfg.nchildren; c++) {
        uint32_t n;
        const task_t *given = xfer_given_list (self->xfer, c, &n);
        for (uint32_t k = 0; k < n; k++) {
            const task_t *t = &given[k];
            if (t->kind != CORE_KIND_SYNTHETIC || find_copy (self, t->id) >= 0
                || core_stale_has (self, t->id))
                continue;
            double there = child_finish (self, c, xfer_bytes_left (self->xfer, c, t->id), k,
                                         t->units);
            double here = own_finish (self, 0, 0, t->units, -1);
            if (there > here && there > latest) {
                latest = there;
                best = t;
                best_child = c;
            }
        }
    }
    if (best) {
        task_t t = *best;
        start_copy (self, &t, best_child, now);
    }
}

void
core_endgame_settle (core_t *self, uint64_t task, int child)
{
    int i = find_copy (self, task);
    if (i < 0)
        return;
    int c = self->eg.copies[i].child;
    forget_copy (self, i);
    core_stale_add (self, task, 1);   /* the other copy */
    if (child >= 0)
        return;   /* the child's won: ours is dropped when it ends */
    self->stats.copies_won++;
    if (xfer_check_child (self->xfer, c, NULL, 0) == 0) {
        core_action_t *a = core_emit (self, CORE_ACT_CANCEL);
        a->child = c;
        a->task = task;
        self->stats.cancelled++;
    }
}

int
core_endgame_orphan_copy (core_t *self, uint64_t task, int child)
{
    int i = find_copy (self, task);
    if (i < 0 || self->eg.copies[i].child != child)
        return 0;
    forget_copy (self, i);
    return 1;
}

/*  --- cancelled tasks, at the child --------------------------------------- */

static int
find_cancelled (const core_t *self, uint64_t task)
{
    for (uint32_t i = 0; i < self->eg.ncancelled; i++)
        if (self->eg.cancelled[i] == task)
            return (int) i;
    return -1;
}

static void
add_cancelled (core_t *self, uint64_t task)
{
    endgame_t *g = &self->eg;
    if (find_cancelled (self, task) >= 0)
        return;
    if (g->ncancelled == g->cancelled_cap) {
        g->cancelled_cap = g->cancelled_cap ? 2 * g->cancelled_cap : 8;
        g->cancelled = xrealloc (g->cancelled, g->cancelled_cap * sizeof *g->cancelled);
    }
    g->cancelled[g->ncancelled++] = task;
}

void
core_endgame_gone (core_t *self, uint64_t task)
{
    int i = find_cancelled (self, task);
    if (i >= 0)
        self->eg.cancelled[i] = self->eg.cancelled[--self->eg.ncancelled];
}

/*  Is task held here (whole or arriving)? */
static int
held_here (const core_t *self, uint64_t task)
{
    for (uint32_t p = 0; p < ledger_held (self->ledger); p++)
        if (ledger_peek_task (self->ledger, p)->id == task)
            return 1;
    return recv_arriving (self->recv, task);
}

int
core_on_cancel (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (self->cfg.is_root)
        return tf_error (err, errlen, "the root has no parent to cancel a task");
    if (ev->task >= self->cfg.task_count)
        return tf_error (err, errlen, "cancel of task %llu, out of range",
                         (unsigned long long) ev->task);
    /*  A task no longer here (done, given back) needs nothing: the
     *  CANCEL crossed its completion. Only a task here is remembered, so
     *  the set is never larger than what the node has. */
    if (held_here (self, ev->task))
        add_cancelled (self, ev->task);
    for (int c = 0; c < self->cfg.nchildren; c++)
        if (xfer_was_given (self->xfer, c, ev->task)) {
            add_cancelled (self, ev->task);   /* it may come back */
            core_action_t *a = core_emit (self, CORE_ACT_CANCEL);
            a->child = c;
            a->task = ev->task;
            self->stats.cancelled++;
        }
    return 0;
}

int
core_on_empty (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    (void) ev;
    if (self->cfg.is_root)
        return tf_error (err, errlen, "the root has no parent to drain");
    self->eg.drained = 1;
    return 0;
}

/*  Cancelled tasks held whole go back to the parent (RETURN), where the
 *  copy that won made them stale: they are dropped there. */
void
core_endgame_before (core_t *self)
{
    endgame_t *g = &self->eg;
    if (g->ncancelled == 0)
        return;
    uint32_t n = 0;
    for (uint32_t pos = ledger_held (self->ledger); pos-- > 0;) {
        const task_t *t = ledger_peek_task (self->ledger, pos);
        if (find_cancelled (self, t->id) < 0 || recv_arriving (self->recv, t->id))
            continue;
        task_t took = ledger_take_task (self->ledger, pos);
        core_endgame_gone (self, took.id);
        core_stale_gone (self, took.id);
        if (n == g->back_cap) {
            g->back_cap = g->back_cap ? 2 * g->back_cap : 8;
            g->back = xrealloc (g->back, g->back_cap * sizeof *g->back);
        }
        g->back[n++] = (core_done_t){.task = took.id, .node = self->cfg.self};
        core_emit (self, CORE_ACT_RELEASE)->task = took.id;
    }
    if (n == 0)
        return;
    core_action_t *a = core_emit (self, CORE_ACT_RETURN);
    a->done = g->back;
    a->ndone = n;
    self->stats.returned += n;
}

/*  Per child: it asked for tasks (so its connection is up), and it was
 *  told EMPTY. */
#define KID_HEARD 1
#define KID_TOLD 2

static unsigned char *
kid_flags (core_t *self)
{
    if (!self->eg.kid)
        self->eg.kid = xcalloc ((size_t) self->cfg.nchildren + 1, 1);
    return self->eg.kid;
}

/*  EMPTY to child c, once, when it is due and c has asked for tasks: a
 *  child that has not asked yet may not be connected, and a message to
 *  it then would be taken for a lost connection. It is told when it
 *  asks (core_endgame_heard). */
static void
tell_empty (core_t *self, int c)
{
    unsigned char *kid = kid_flags (self);
    if (!self->eg.told || (kid[c] & (KID_HEARD | KID_TOLD)) != KID_HEARD
        || xfer_check_child (self->xfer, c, NULL, 0) != 0)
        return;
    core_emit (self, CORE_ACT_EMPTY)->child = c;
    kid[c] |= KID_TOLD;
}

void
core_endgame_heard (core_t *self, int c)
{
    kid_flags (self)[c] |= KID_HEARD;
    tell_empty (self, c);
}

void
core_endgame_after (core_t *self, double now)
{
    endgame_t *g = &self->eg;
    if (!self->cfg.endgame.on)
        return;
    if (self->cfg.is_root && ledger_fresh_left (self->ledger) == 0
        && ledger_held (self->ledger) == 0)
        g->drained = 1;
    if (!g->drained)
        return;
    if (!g->told) {
        g->told = 1;
        for (int c = 0; c < self->cfg.nchildren; c++)
            tell_empty (self, c);
    }
    if (!self->orphaned)
        copy_one (self, now);
}
