/*  adapt — an adapting run's live estimates and the changes it declares
 *  (docs/adapt.md). See node/runtime.h, and node/live.h for the
 *  estimates themselves.
 *
 *  Each sample (report.c) hands the live estimates the interval's
 *  deltas in platform terms: seconds, units, busy seconds, MB received
 *  and sent per child, and per child the link's own cumulative bytes and
 *  seconds (core_child_stats); each solved fit hands them the IRs. What
 *  they declare is kept for STATS (at most LIVE_MAX_CHANGES, the rest
 *  counted) and re-planned (replan_apply).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/live.h"
#include "node/runtime.h"
#include "overlay/util.h"

void
adapt_start (node_t *self)
{
    if (!self->cfg->platform.adapt)
        return;
    const config_node_t *me = self->me;
    int n = me->nchildren;
    double *link = xcalloc (n + 1, sizeof *link), *irs = xcalloc (n + 1, sizeof *irs);
    for (int i = 0; i < n; i++) {
        link[i] = self->cfg->nodes[me->children[i]].link_mbps;
        irs[i] = self->cfg->nodes[me->children[i]].ir_send;
    }
    live_cfg_t cfg = {.nchildren = n, .compute = me->compute_rate, .ir_recv = me->ir_recv,
                      .link_mbps = link, .ir_send = irs, .interval_s = LIVE_INTERVAL_S,
                      .min_samples = LIVE_MIN_SAMPLES};
    node_adapt_t *a = &self->adapt;
    a->live = live_new (&cfg);
    free (link);
    free (irs);
    a->log = xcalloc (LIVE_MAX_CHANGES, sizeof *a->log);
    a->n = 0;
    a->dropped = 0;
    a->units = a->busy = 0;
    /*  A node that joined the run counts from the run's START: its first
     *  interval starts when it did. */
    a->at = self->link.since * self->cfg->platform.time_scale;
    /*  The last sample's bytes observed (n + 1), then scratch for the
     *  interval's MB sent per child (n). */
    a->observed = xcalloc (2 * n + 2, sizeof *a->observed);
}

/*  Keep and re-plan what the estimates declared. */
static void
adapt_declared (node_t *self)
{
    node_adapt_t *a = &self->adapt;
    int n;
    const live_change_t *ch = live_take (a->live, &n);
    for (int i = 0; i < n; i++) {
        if (a->n < LIVE_MAX_CHANGES)
            a->log[a->n++] = ch[i];
        else
            a->dropped++;
        node_verbose (self, "%s changed: %g -> %g at %.1f s", live_what_str (ch[i].what),
                      ch[i].from, ch[i].to, ch[i].at);
        if (replan_apply (self, &ch[i]) != 0)
            node_log (self, "re-planning after a %s change: cannot send SUBTREE",
                      live_what_str (ch[i].what));
    }
}

void
adapt_sample (node_t *self, double now)
{
    node_adapt_t *a = &self->adapt;
    if (!a->live)
        return;
    double ts = self->cfg->platform.time_scale;
    /*  Observed bytes are physical ones on the wall clock: a platform MB
     *  is bps_per_mbps / time_scale of them. */
    double mb_per_byte = ts / self->parts.bps_per_mbps;
    int n = self->me->nchildren;
    const double *obs = self->rep.observed;   /* just taken (take_sample) */
    double t = report_platform_time (self, now), busy = report_busy_seconds (self, now) * ts;
    if (!(t > a->at))
        return;              /* no time passed: the next sample has it all */
    double *send = a->observed + n + 1;
    for (int i = 0; i < n; i++)
        send[i] = (obs[1 + i] - a->observed[1 + i]) * mb_per_byte;
    live_compute (a->live, t, t - a->at, self->rep.units - a->units, busy - a->busy,
                  (obs[0] - a->observed[0]) * mb_per_byte, send);
    memcpy (a->observed, obs, (size_t) (n + 1) * sizeof *obs);
    a->at = t;
    a->units = self->rep.units;
    a->busy = busy;
    for (int i = 0; i < n; i++) {
        core_child_stats_t c = core_child_stats (self->parts.core, i);
        live_link (a->live, i, t, (double) c.link_bytes * mb_per_byte, c.link_seconds * ts);
    }
    adapt_declared (self);
}

void
adapt_fit (node_t *self, const observe_estimates_t *est)
{
    if (!self->adapt.live || !est->ok)
        return;
    live_fit (self->adapt.live, report_platform_time (self, tf_now ()), est->ir_recv,
              est->ir_recv_se, est->ir_send, est->ir_send_se);
    adapt_declared (self);
}

/*  Whose rate a change is of: the node's own, or the child's. */
static const char *
change_node (const node_t *self, const live_change_t *c)
{
    if (c->child >= 0 && c->child < self->me->nchildren)
        return self->cfg->nodes[self->me->children[c->child]].name;
    return self->me->name;
}

void
adapt_fill_changes (const node_t *self, proto_changes_t *out)
{
    const node_adapt_t *a = &self->adapt;
    *out = (proto_changes_t){.dropped = a->dropped};
    if (!a->live || a->n == 0)
        return;
    out->items = xcalloc ((size_t) a->n, sizeof *out->items);
    for (int i = 0; i < a->n; i++) {
        const live_change_t *c = &a->log[i];
        proto_change_t *p = &out->items[i];
        snprintf (p->node, sizeof p->node, "%s", change_node (self, c));
        snprintf (p->what, sizeof p->what, "%s", live_what_str (c->what));
        p->from = c->from;
        p->to = c->to;
        p->at_s = c->at;
    }
    out->n = a->n;
}

void
adapt_close (node_t *self)
{
    node_adapt_t *a = &self->adapt;
    live_destroy (&a->live);
    free (a->log);
    free (a->observed);
    a->log = NULL;
    a->observed = NULL;
    a->n = 0;
}
