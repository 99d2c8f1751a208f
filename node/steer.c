/*  steer — an adapting parent's costly actions (docs/adapt.md, "Costly
 *  actions"). See node/runtime.h.
 *
 *  Reclaim. When a child's SUBTREE says it computes slower, the tasks it
 *  holds will wait longer there than they would in the rest of the
 *  subtree. The parent works out how many the child needs to hold so it
 *  never waits on its link (gate_hold: one transfer's worth, at least
 *  one) and, for the tasks beyond that, asks the gate whether moving
 *  them pays: remaining = those tasks, T_now = the child's rate, T_after
 *  = this node's subtree bound as it now is, cost = moving them again
 *  over the child's link. platform.reclaim may say always or never
 *  instead. Taken, it is a TAKE_BACK to the core (node/core_reclaim.c).
 *  When the child's rate comes back up, it may hold more again
 *  (restore): nothing moves, so it costs nothing. Each decision follows
 *  a declared change (node/drift.h), so a load that comes and goes
 *  causes at most one action per change.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "node/gate.h"
#include "node/runtime.h"
#include "overlay/bound.h"
#include "overlay/util.h"

void
steer_start (node_t *self)
{
    node_steer_t *st = &self->steer;
    int n = self->me->nchildren;
    if (!self->cfg->platform.adapt)
        return;
    st->compute = xcalloc (n + 1, sizeof *st->compute);
    st->hold = xcalloc (n + 1, sizeof *st->hold);
    st->leaving = xcalloc (n + 1, sizeof *st->leaving);
    st->weighed = xcalloc (n + 1, sizeof *st->weighed);
    for (int i = 0; i < n; i++)
        st->compute[i] = self->cfg->nodes[self->me->children[i]].compute_rate;
    st->log = xcalloc (PROTO_MAX_ACTIONS, sizeof *st->log);
}

/*  Keep an action for STATS and the log. */
static void
note (node_t *self, const proto_action_t *a)
{
    node_steer_t *st = &self->steer;
    if (st->n < PROTO_MAX_ACTIONS)
        st->log[st->n++] = *a;
    else
        st->dropped++;
    char text[256];
    proto_action_text (a, text, sizeof text);
    node_verbose (self, "%s", text);
}

/*  Have the core hold child slot to n tasks. */
static void
take_back (node_t *self, int slot, uint32_t n)
{
    core_event_t ev = {.type = CORE_EV_TAKE_BACK, .now = tf_now (), .child = slot, .n = n};
    self->steer.hold[slot] = n;
    act_feed (self, &ev, "the adaptation");
}

/*  This node's subtree bound now, in its policy's port model (tasks/s);
 *  NaN until known. */
static double
subtree_rate (const node_t *self)
{
    const double *b = subtree_bounds (self->parts.subtree);
    const policy_t *p = policy_find (self->cfg->policy);
    return b ? b[p && p->multiport ? BOUND_MULTI : BOUND_SINGLE] : NAN;
}

/*  Weigh taking back what child slot holds beyond `want`, at rate r
 *  (tasks/s). */
static void
weigh_reclaim (node_t *self, int slot, uint32_t want, double r, double z, double link,
               proto_action_t *a)
{
    core_child_stats_t c = core_child_stats (self->parts.core, slot);
    uint32_t now = self->steer.hold[slot] ? self->steer.hold[slot]
                                          : self->cfg->platform.buffer;
    uint32_t held = c.given > 1 ? c.given - 1 : 0;   /* one computes */
    held = held < now ? held : now;
    a->tasks = held > want ? held - want : 0;
    gate_case_t g = gate_reclaim_case (a->tasks, r, subtree_rate (self), z, link);
    a->saved_s = gate_saved (&g);
    a->cost_s = g.cost;
    if (!isfinite (a->saved_s))
        a->saved_s = 0;
    if (!isfinite (a->cost_s))
        a->cost_s = 0;
    reclaim_mode_t mode = self->cfg->platform.reclaim;
    a->taken = mode == RECLAIM_ALWAYS || (mode == RECLAIM_GATED && (a->tasks == 0
                                                                    || gate_pays (&g)));
}

void
steer_child_rate (node_t *self, int slot, double to)
{
    node_steer_t *st = &self->steer;
    if (!st->compute || slot < 0 || slot >= self->me->nchildren || !(to > 0)
        || !isfinite (to) || to == st->compute[slot])
        return;
    const config_t *cfg = self->cfg;
    const config_node_t *kid = &cfg->nodes[self->me->children[slot]];
    bound_app_t app = bound_app_of (cfg);
    double r = to / app.units;
    uint32_t buffer = cfg->platform.buffer;
    uint32_t want = gate_hold (r, app.input_mb, kid->link_mbps, buffer);
    uint32_t now = st->hold[slot] ? st->hold[slot] : buffer;
    int slower = to < st->compute[slot];
    st->compute[slot] = to;
    if (want == now || (slower && want > now) || cfg->platform.reclaim == RECLAIM_NEVER)
        return;
    proto_action_t a = {.hold = want,
                        .at_s = report_platform_time (self, tf_now ())};
    snprintf (a.node, sizeof a.node, "%s", self->me->name);
    snprintf (a.child, sizeof a.child, "%s", kid->name);
    snprintf (a.what, sizeof a.what, "%s", want < now ? "reclaim" : "restore");
    if (want < now)
        weigh_reclaim (self, slot, want, r, app.input_mb, kid->link_mbps, &a);
    else
        a.taken = 1;   /* nothing moves: free */
    note (self, &a);
    if (a.taken)
        take_back (self, slot, want);
}

/*  The policy's port model, for the bound's shares. */
static int
policy_model (const node_t *self)
{
    const policy_t *p = policy_find (self->cfg->policy);
    return p && p->multiport ? BOUND_MULTI : BOUND_SINGLE;
}

void
steer_check_unused (node_t *self)
{
    node_steer_t *st = &self->steer;
    /*  Only on evidence: a child the configured platform leaves unused
     *  is the plan's, and the policies never send to it; one this node's
     *  own declared change (its compute rate, an IR) leaves unused is
     *  the news a shrink acts on. */
    if (!st->compute || self->cfg->platform.reclaim == RECLAIM_NEVER || self->adapt.n == 0)
        return;
    bound_app_t app = bound_app_of (self->cfg);
    for (int slot = 0; slot < self->me->nchildren; slot++) {
        const config_node_t *kid = &self->cfg->nodes[self->me->children[slot]];
        bound_why_t why;
        if (kid->vacant || st->leaving[slot] != STEER_STAYS || beat_lost (self, slot)
            || st->weighed[slot] == self->adapt.n
            || !subtree_child_unused (self->parts.subtree, slot, policy_model (self), &why)
            || why != BOUND_WHY_INTERFERENCE)
            continue;
        st->weighed[slot] = self->adapt.n;   /* once for each change of ours */
        proto_action_t a = {.hold = 0, .at_s = report_platform_time (self, tf_now ())};
        snprintf (a.node, sizeof a.node, "%s", self->me->name);
        snprintf (a.child, sizeof a.child, "%s", kid->name);
        snprintf (a.what, sizeof a.what, "shrink");
        weigh_reclaim (self, slot, 0, st->compute[slot] / app.units, app.input_mb,
                       kid->link_mbps, &a);
        note (self, &a);
        if (!a.taken)
            continue;
        st->leaving[slot] = STEER_DRAINING;
        take_back (self, slot, 0);
    }
}

void
steer_poll_drained (node_t *self)
{
    node_steer_t *st = &self->steer;
    for (int slot = 0; st->leaving && slot < self->me->nchildren; slot++) {
        if (st->leaving[slot] != STEER_DRAINING
            || core_child_stats (self->parts.core, slot).given > 0)
            continue;
        char err[TF_ERRLEN];
        const char *name = self->cfg->nodes[self->me->children[slot]].name;
        if (core_detach_child (self->parts.core, slot, err, sizeof err) != 0) {
            node_log (self, "cannot let %s go: %s", name, err);
            continue;
        }
        st->leaving[slot] = STEER_LEFT;
        beat_forget (self, slot);
        node_log (self, "%s drained: it leaves the run", name);
        zmsg_t *msg = proto_drained (name);
        if (zmsg_send (&msg, self->link.ctl) != 0)
            zmsg_destroy (&msg);
    }
}

void
steer_fill_actions (const node_t *self, proto_actions_t *out)
{
    const node_steer_t *st = &self->steer;
    *out = (proto_actions_t){.dropped = st->dropped};
    if (st->n == 0)
        return;
    out->items = xcalloc ((size_t) st->n, sizeof *out->items);
    for (int i = 0; i < st->n; i++)
        out->items[i] = st->log[i];
    out->n = st->n;
}

void
steer_close (node_t *self)
{
    node_steer_t *st = &self->steer;
    free (st->compute);
    free (st->hold);
    free (st->leaving);
    free (st->weighed);
    free (st->log);
    *st = (node_steer_t){0};
}
