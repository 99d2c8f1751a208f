/*  adaptor — an adapting node's live estimates, the changes it declares
 *  and re-planning on them (docs/adapt.md). See node/adaptor.h; the
 *  costly actions are node/adaptor_steer.c.
 *
 *  Each sample hands the live estimates the interval's deltas in
 *  platform terms: seconds, units, busy seconds, MB received and sent per
 *  child, and per child the link's own cumulative bytes and seconds
 *  (core_child_stats); each solved fit hands them the IRs. What they
 *  declare is kept for STATS (at most LIVE_MAX_CHANGES, the rest counted)
 *  and re-planned.
 *
 *  Re-planning costs nothing: the core's policy ranks the children and
 *  applies the never-use rule with the live values from its next
 *  decision, and the subtree bound is taken again with them. Our parent
 *  hears of it through SUBTREE: again whenever the bound changed, or our
 *  own compute rate or IR_r, which its policy and its step use. Nothing
 *  here touches the platform a driver runs: links keep their pacing (or
 *  their simulated rates) and the interference its configured rates;
 *  those are the platform, these are what the node believes of it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/adaptor_int.h"
#include "node/setup.h"
#include "overlay/util.h"
#include "policies/policy.h"

void *
adaptor_room (void *items, int *cap, int n, size_t size)
{
    if (n < *cap)
        return items;
    *cap = *cap ? 2 * *cap : 8;
    return xrealloc (items, (size_t) *cap * size);
}

void
adaptor_say (adaptor_t *self, int verbose, const char *fmt, ...)
{
    if (!self->hooks.say)
        return;
    char text[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    self->hooks.say (self->hooks.arg, verbose, text);
}

/*  The estimates, their references the configured rates. */
static live_t *
new_live (const config_t *cfg, const config_node_t *me)
{
    int n = me->nchildren;
    double *link = xcalloc (n + 1, sizeof *link), *irs = xcalloc (n + 1, sizeof *irs);
    for (int i = 0; i < n; i++) {
        link[i] = cfg->nodes[me->children[i]].link_mbps;
        irs[i] = cfg->nodes[me->children[i]].ir_send;
    }
    live_cfg_t lc = {.nchildren = n, .compute = me->compute_rate, .ir_recv = me->ir_recv,
                     .link_mbps = link, .ir_send = irs, .interval_s = LIVE_INTERVAL_S,
                     .min_samples = LIVE_MIN_SAMPLES};
    live_t *live = live_new (&lc);
    free (link);
    free (irs);
    return live;
}

adaptor_t *
adaptor_new (const config_t *cfg, int node, core_t *core, subtree_t *subtree,
             const adaptor_hooks_t *hooks, double at)
{
    adaptor_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->me = &cfg->nodes[node];
    self->core = core;
    self->subtree = subtree;
    self->hooks = *hooks;
    self->nchildren = self->me->nchildren;
    /*  Observed bytes are physical ones per second of the run: a
     *  platform MB is bps_per_mbps / time_scale of them. */
    self->mb_per_byte = cfg->platform.time_scale / setup_bps_per_mbps (cfg);
    self->live = new_live (cfg, self->me);
    self->at = at;
    /*  The last sample's bytes observed (n + 1), then scratch for the
     *  interval's MB sent per child (n). */
    self->observed = xcalloc (2 * self->nchildren + 2, sizeof *self->observed);
    subtree_adapt (subtree);
    adaptor_steer_start (self);
    return self;
}

void
adaptor_destroy (adaptor_t **self_p)
{
    adaptor_t *self = *self_p;
    if (!self)
        return;
    live_destroy (&self->live);
    adaptor_steer_close (self);
    free (self->log);
    free (self->observed);
    free (self);
    *self_p = NULL;
}

/*  The policy's port model, for the bound's shares. */
static int
port_model (const adaptor_t *self)
{
    const policy_t *p = policy_find (self->cfg->policy);
    return p && p->multiport ? BOUND_MULTI : BOUND_SINGLE;
}

/*  The ratio rule's k moved from `before` (a change of the beliefs it
 *  is taken from): say so, verbosely. */
static void
note_fanout (adaptor_t *self, int before)
{
    int k = core_fanout (self->core);
    if (k >= 0 && k != before)
        adaptor_say (self, 1, "fan-out: the send port feeds %d of %d children (was %d)", k,
                     self->nchildren, before);
}

/*  Child slot's link to `to` MB/s while both compute: its idle rate
 *  scales alike (to / from, from the configured rates on, as the
 *  references do), the pacing stays the link's own. */
static void
link_changed (adaptor_t *self, int slot, double to)
{
    const config_node_t *kid = &self->cfg->nodes[self->me->children[slot]];
    double idle = kid->link_mbps > 0 ? kid->link_idle_mbps * to / kid->link_mbps : NAN;
    core_rates_t r = {NAN, to, idle, NAN, NAN};
    core_set_child_rates (self->core, slot, &r);
    subtree_set_child (self->subtree, slot, to, NAN);
}

/*  Apply change to what the core and the subtree believe. Returns 1 for
 *  one of our own values, 0 for a child's, -1 for an unknown kind. */
static int
believe_change (adaptor_t *self, const live_change_t *change)
{
    int slot = change->child;
    int child_ok = slot >= 0 && slot < self->nchildren;
    switch (change->what) {
    case LIVE_COMPUTE:
        core_set_compute_rate (self->core, change->to);
        subtree_set_self (self->subtree, change->to, NAN);
        return 1;
    case LIVE_IR_RECV:
        subtree_set_self (self->subtree, NAN, change->to);
        return 1;
    case LIVE_LINK:
        if (child_ok)
            link_changed (self, slot, change->to);
        return 0;
    case LIVE_IR_SEND:
        if (child_ok) {
            core_rates_t r = {NAN, NAN, NAN, change->to, NAN};
            core_set_child_rates (self->core, slot, &r);
            subtree_set_child (self->subtree, slot, NAN, change->to);
        }
        return 0;
    default:
        return -1;
    }
}

/*  A declared change, re-planned: the core's beliefs, the subtree bound,
 *  and SUBTREE when the bound or what the parent must know changed.
 *  Returns 0, or -1 if SUBTREE could not be sent. */
static int
replan (adaptor_t *self, const live_change_t *change)
{
    int before = core_fanout (self->core);
    int ours = believe_change (self, change);
    if (ours < 0)
        return 0;
    note_fanout (self, before);
    /*  Our parent needs our own values even when the bound stays. */
    return adaptor_step (self, change->at, ours);
}

/*  Keep and re-plan what the estimates declared. */
static void
declared (adaptor_t *self)
{
    int n;
    const live_change_t *ch = live_take (self->live, &n);
    for (int i = 0; i < n; i++) {
        if (self->n < LIVE_MAX_CHANGES) {
            self->log = adaptor_room (self->log, &self->log_cap, self->n, sizeof *self->log);
            self->log[self->n++] = ch[i];
        }
        else
            self->dropped++;
        adaptor_say (self, 1, "%s changed: %g -> %g at %.1f s", live_what_str (ch[i].what),
                     ch[i].from, ch[i].to, ch[i].at);
        if (replan (self, &ch[i]) != 0)
            adaptor_say (self, 0, "re-planning after a %s change: cannot send SUBTREE",
                         live_what_str (ch[i].what));
    }
}

/*  At t, what child i's link alone carried: the driver's count, or the
 *  core's. */
static void
feed_link (adaptor_t *self, double t, int i, const double *link_mb, const double *link_s)
{
    if (link_mb && link_s) {
        live_link (self->live, i, t, link_mb[i], link_s[i]);
        return;
    }
    core_child_stats_t c = core_child_stats (self->core, i);
    live_link (self->live, i, t, (double) c.link_bytes * self->mb_per_byte,
               c.link_seconds * self->cfg->platform.time_scale);
}

void
adaptor_sample (adaptor_t *self, double t, double units, double busy_s,
                const double *observed, const double *link_mb, const double *link_s)
{
    if (!(t > self->at))
        return;              /* no time passed: the next sample has it all */
    int n = self->nchildren;
    double *send = self->observed + n + 1;
    for (int i = 0; i < n; i++)
        send[i] = (observed[1 + i] - self->observed[1 + i]) * self->mb_per_byte;
    live_compute (self->live, t, t - self->at, units - self->units, busy_s - self->busy,
                  (observed[0] - self->observed[0]) * self->mb_per_byte, send);
    memcpy (self->observed, observed, (size_t) (n + 1) * sizeof *observed);
    self->at = t;
    self->units = units;
    self->busy = busy_s;
    for (int i = 0; i < n; i++)
        feed_link (self, t, i, link_mb, link_s);
    declared (self);
}

void
adaptor_fit (adaptor_t *self, double t, const observe_estimates_t *est)
{
    if (!est->ok)
        return;
    live_fit (self->live, t, est->ir_recv, est->ir_recv_se, est->ir_send, est->ir_send_se);
    declared (self);
}

int
adaptor_step (adaptor_t *self, double t, int force)
{
    int changed = subtree_step (self->subtree);
    if (changed)
        adaptor_steer_check_unused (self, t);
    const double *bounds = subtree_bounds (self->subtree);
    /*  Until every child reported there is nothing to send: the first
     *  SUBTREE will carry what changed meanwhile. */
    if (!(changed || force) || !bounds || !self->hooks.subtree)
        return 0;
    /*  The parent's policy and its step see our live values. */
    double compute, ir_recv;
    subtree_self (self->subtree, &compute, &ir_recv);
    return self->hooks.subtree (self->hooks.arg, bounds, compute, ir_recv);
}

int
adaptor_child_subtree (adaptor_t *self, double t, int slot, const double *bounds,
                       double compute, double ir_recv, char *err, size_t errlen)
{
    if (slot < 0 || slot >= self->nchildren)
        return tf_error (err, errlen, "no child slot %d", slot), 1;
    core_rates_t r = {compute, NAN, NAN, NAN, ir_recv};
    int before = core_fanout (self->core);
    core_set_child_rates (self->core, slot, &r);
    core_set_child_bound (self->core, slot, bounds[port_model (self)]);
    note_fanout (self, before);
    if (subtree_child (self->subtree, slot, bounds, err, errlen) != 0)
        return 1;
    int rc = adaptor_step (self, t, 0);
    /*  Weighed against the subtree's bound with the child as it now is. */
    adaptor_steer_child_rate (self, t, slot, compute);
    return rc;
}

void
adaptor_attach (adaptor_t *self, int slot, double link_mbps, double ir_send,
                double compute)
{
    if (slot < 0 || slot >= self->nchildren)
        return;
    live_child_set (self->live, slot, link_mbps, ir_send);
    self->compute[slot] = compute;
}

void
adaptor_counts (const adaptor_t *self, int *changes, int *actions)
{
    *changes = self->n;
    *actions = self->nact;
}

/*  Whose rate a change is of: the node's own, or the child's. */
static const char *
change_node (const adaptor_t *self, const live_change_t *c)
{
    if (c->child >= 0 && c->child < self->nchildren)
        return self->cfg->nodes[self->me->children[c->child]].name;
    return self->me->name;
}

void
adaptor_fill_changes (const adaptor_t *self, proto_changes_t *out)
{
    *out = (proto_changes_t){.dropped = self->dropped};
    if (self->n == 0)
        return;
    out->items = xcalloc ((size_t) self->n, sizeof *out->items);
    for (int i = 0; i < self->n; i++) {
        const live_change_t *c = &self->log[i];
        proto_change_t *p = &out->items[i];
        snprintf (p->node, sizeof p->node, "%s", change_node (self, c));
        snprintf (p->what, sizeof p->what, "%s", live_what_str (c->what));
        p->from = c->from;
        p->to = c->to;
        p->at_s = c->at;
    }
    out->n = self->n;
}
