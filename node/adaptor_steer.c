/*  adaptor_steer — an adapting parent's costly actions (docs/adapt.md,
 *  "Costly actions"). See node/adaptor.h.
 *
 *  Reclaim. When a child's SUBTREE says it computes slower, the tasks it
 *  holds will wait longer there than they would in the rest of the
 *  subtree. The parent works out how many the child needs to hold so it
 *  never waits on its link (gate_hold: one transfer's worth, at least
 *  one) and, for the tasks beyond that, asks the gate whether moving
 *  them pays: remaining = those tasks, T_now = the child's rate, T_after
 *  = this node's subtree bound as it now is, cost = moving them again
 *  over the child's link. platform.reclaim may say always or never
 *  instead. Taken, it is a TAKE_BACK to the core (node/core_reclaim.c),
 *  whose RECLAIM the driver carries to the child. When the child's rate
 *  comes back up, it may hold more again (restore): nothing moves, so it
 *  costs nothing. Each decision follows a declared change
 *  (node/drift.h), so a load that comes and goes causes at most one
 *  action per change.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "node/adaptor_int.h"
#include "node/gate.h"
#include "overlay/bound.h"
#include "overlay/util.h"
#include "policies/policy.h"

void
adaptor_steer_start (adaptor_t *self)
{
    int n = self->nchildren;
    self->compute = xcalloc (n + 1, sizeof *self->compute);
    self->hold = xcalloc (n + 1, sizeof *self->hold);
    self->leaving = xcalloc (n + 1, sizeof *self->leaving);
    self->weighed = xcalloc (n + 1, sizeof *self->weighed);
    for (int i = 0; i < n; i++)
        self->compute[i] = self->cfg->nodes[self->me->children[i]].compute_rate;
}

void
adaptor_steer_close (adaptor_t *self)
{
    free (self->compute);
    free (self->hold);
    free (self->leaving);
    free (self->weighed);
    free (self->actions);
}

/*  Keep an action for STATS, and say it verbosely. */
static void
note (adaptor_t *self, const proto_action_t *a)
{
    if (self->nact < PROTO_MAX_ACTIONS) {
        self->actions = adaptor_room (self->actions, &self->act_cap, self->nact,
                                      sizeof *self->actions);
        self->actions[self->nact++] = *a;
    }
    else
        self->actions_dropped++;
    char text[256];
    proto_action_text (a, text, sizeof text);
    adaptor_say (self, 1, "%s", text);
}

/*  Have the core hold child slot to n tasks: the driver feeds it and
 *  carries out its actions. */
static void
take_back (adaptor_t *self, int slot, uint32_t n)
{
    core_event_t ev = {.type = CORE_EV_TAKE_BACK, .child = slot, .n = n};
    self->hold[slot] = n;
    if (self->hooks.feed (self->hooks.arg, &ev) != 0)
        adaptor_say (self, 0, "cannot have child slot %d hold %u tasks", slot, n);
}

/*  The policy's port model, for the bound's shares. */
static int
policy_model (const adaptor_t *self)
{
    const policy_t *p = policy_find (self->cfg->policy);
    return p && p->multiport ? BOUND_MULTI : BOUND_SINGLE;
}

/*  This node's subtree bound now, in its policy's port model (tasks/s);
 *  NaN until known. */
static double
subtree_rate (const adaptor_t *self)
{
    const double *b = subtree_bounds (self->subtree);
    return b ? b[policy_model (self)] : NAN;
}

/*  Weigh taking back what child slot holds beyond `want`, at rate r
 *  (tasks/s). */
static void
weigh_reclaim (adaptor_t *self, int slot, uint32_t want, double r, double z, double link,
               proto_action_t *a)
{
    core_child_stats_t c = core_child_stats (self->core, slot);
    uint32_t now = self->hold[slot] ? self->hold[slot] : self->cfg->platform.buffer;
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

/*  An action of ours on child kid at t: its names and kind. */
static proto_action_t
action_of (const adaptor_t *self, const config_node_t *kid, const char *what,
           uint32_t hold, double t)
{
    proto_action_t a = {.hold = hold, .at_s = t};
    snprintf (a.node, sizeof a.node, "%s", self->me->name);
    snprintf (a.child, sizeof a.child, "%s", kid->name);
    snprintf (a.what, sizeof a.what, "%s", what);
    return a;
}

void
adaptor_steer_child_rate (adaptor_t *self, double t, int slot, double to)
{
    if (slot < 0 || slot >= self->nchildren || !(to > 0) || !isfinite (to)
        || to == self->compute[slot])
        return;
    const config_t *cfg = self->cfg;
    const config_node_t *kid = &cfg->nodes[self->me->children[slot]];
    bound_app_t app = bound_app_of (cfg);
    double r = to / app.units;
    uint32_t buffer = cfg->platform.buffer;
    uint32_t want = gate_hold (r, app.input_mb, kid->link_mbps, buffer);
    uint32_t now = self->hold[slot] ? self->hold[slot] : buffer;
    int slower = to < self->compute[slot];
    self->compute[slot] = to;
    if (want == now || (slower && want > now) || cfg->platform.reclaim == RECLAIM_NEVER)
        return;
    proto_action_t a = action_of (self, kid, want < now ? "reclaim" : "restore", want, t);
    if (want < now)
        weigh_reclaim (self, slot, want, r, app.input_mb, kid->link_mbps, &a);
    else
        a.taken = 1;   /* nothing moves: free */
    note (self, &a);
    if (a.taken)
        take_back (self, slot, want);
}

/*  Whether child slot is one a shrink may weigh now: present, staying,
 *  not lost, not weighed since our last change, and left unused by our
 *  last step because sending to it costs more than it returns. */
static int
shrinkable (const adaptor_t *self, int slot)
{
    const config_node_t *kid = &self->cfg->nodes[self->me->children[slot]];
    bound_why_t why;
    if (kid->vacant || self->leaving[slot] != ADAPTOR_STAYS
        || (self->hooks.lost && self->hooks.lost (self->hooks.arg, slot))
        || self->weighed[slot] == self->n)
        return 0;
    return subtree_child_unused (self->subtree, slot, policy_model (self), &why)
           && why == BOUND_WHY_INTERFERENCE;
}

void
adaptor_steer_check_unused (adaptor_t *self, double t)
{
    /*  Only on evidence: a child the configured platform leaves unused
     *  is the plan's, and the policies never send to it; one this node's
     *  own declared change (its compute rate, an IR) leaves unused is
     *  the news a shrink acts on. */
    if (self->cfg->platform.reclaim == RECLAIM_NEVER || self->n == 0)
        return;
    bound_app_t app = bound_app_of (self->cfg);
    for (int slot = 0; slot < self->nchildren; slot++) {
        if (!shrinkable (self, slot))
            continue;
        const config_node_t *kid = &self->cfg->nodes[self->me->children[slot]];
        self->weighed[slot] = self->n;   /* once for each change of ours */
        proto_action_t a = action_of (self, kid, "shrink", 0, t);
        weigh_reclaim (self, slot, 0, self->compute[slot] / app.units, app.input_mb,
                       kid->link_mbps, &a);
        note (self, &a);
        if (!a.taken)
            continue;
        self->leaving[slot] = ADAPTOR_DRAINING;
        take_back (self, slot, 0);
    }
}

void
adaptor_poll_drained (adaptor_t *self)
{
    for (int slot = 0; slot < self->nchildren; slot++) {
        if (self->leaving[slot] != ADAPTOR_DRAINING
            || core_child_stats (self->core, slot).given > 0)
            continue;
        char err[TF_ERRLEN];
        const char *name = self->cfg->nodes[self->me->children[slot]].name;
        if (core_detach_child (self->core, slot, err, sizeof err) != 0) {
            adaptor_say (self, 0, "cannot let %s go: %s", name, err);
            continue;
        }
        self->leaving[slot] = ADAPTOR_LEFT;
        if (self->hooks.drained)
            self->hooks.drained (self->hooks.arg, slot);
    }
}

int
adaptor_child_left (const adaptor_t *self, int slot)
{
    return self && slot >= 0 && slot < self->nchildren
           && self->leaving[slot] == ADAPTOR_LEFT;
}

void
adaptor_fill_actions (const adaptor_t *self, proto_actions_t *out)
{
    *out = (proto_actions_t){.dropped = self->actions_dropped};
    if (self->nact == 0)
        return;
    out->items = xcalloc ((size_t) self->nact, sizeof *out->items);
    for (int i = 0; i < self->nact; i++)
        out->items[i] = self->actions[i];
    out->n = self->nact;
}
