/*  live — a node's live estimates and the changes it declares. See
 *  node/live.h; the rule and its constants in docs/adapt.md ("Live
 *  estimates", "Declaring a change").
 *
 *  Compute and link estimates are ratio estimators kept as running sums
 *  over the check interval under way (at most a few dozen sample
 *  intervals, so rounding stays far below the band), closed when the
 *  interval is long enough and has enough sample intervals with data;
 *  IR estimates are the fit's, fed as they come.
 */
#include "node/live.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/drift.h"
#include "overlay/util.h"

/*  The band's absolute floors, in each estimate's units. Compute and
 *  link references are configured > 0, so the relative floor rules; an
 *  IR's reference may be 0, and an IR change matters by what it does to
 *  the interference factor 1 - IR TR: with TR at most about 10 MB/s
 *  (the reference platform's links), 0.01 moves it by at most 0.1, the
 *  size of change DRIFT_REL asks of a rate. */
#define LIVE_ABS_COMPUTE 0.0
#define LIVE_ABS_LINK 0.0
#define LIVE_ABS_IR 0.01
/*  A sample interval whose modelled interference factor is below this
 *  says too little of C (its busy time is mostly the transfers'), and
 *  is left out. */
#define LIVE_MIN_FACTOR 0.2

/*  A ratio estimator over one check interval: sum U / sum B over the
 *  sample intervals with B > 0. */
typedef struct {
    double t0;               /* when the check interval began */
    int n;                   /* sample intervals with data */
    double su, sb, suu, sub, sbb;
} live_ratio_t;

/*  A link's cumulative counters at its last sample. */
typedef struct {
    int started;
    double mb, seconds;
} live_cum_t;

struct live {
    int n;                   /* children */
    double interval_s;
    int min_samples;
    drift_t compute, ir_recv;
    drift_t *link, *ir_send;             /* n each */
    live_ratio_t cr;                     /* compute's check interval */
    int cr_started;
    live_ratio_t *lr;                    /* per child */
    live_cum_t *lc;                      /* per child */
    live_change_t *pending;              /* declared, not yet taken */
    int npending, cap;
    int taken;                           /* the caller borrowed pending */
    int compute_moved;                   /* a compute change was declared:
                                            the fit's IRs are void */
};

static const char *what_names[LIVE_WHAT_COUNT] = {"compute", "link", "ir_send", "ir_recv"};
static const char *unit_names[LIVE_WHAT_COUNT] = {"units/s", "MB/s", "", ""};

const char *
live_what_str (live_what_t what)
{
    return (unsigned) what < LIVE_WHAT_COUNT ? what_names[what] : "?";
}

const char *
live_unit_str (live_what_t what)
{
    return (unsigned) what < LIVE_WHAT_COUNT ? unit_names[what] : "?";
}

static void
rule_init (drift_t *d, double abs, double ref)
{
    drift_rule_t r = {.k = DRIFT_K, .m = DRIFT_M, .rel = DRIFT_REL, .abs = abs};
    drift_init (d, &r, ref);
}

live_t *
live_new (const live_cfg_t *cfg)
{
    assert (cfg->nchildren >= 0 && cfg->interval_s >= 0 && cfg->min_samples >= 1);
    live_t *self = xcalloc (1, sizeof *self);
    int n = self->n = cfg->nchildren;
    self->interval_s = cfg->interval_s;
    self->min_samples = cfg->min_samples;
    rule_init (&self->compute, LIVE_ABS_COMPUTE, cfg->compute);
    rule_init (&self->ir_recv, LIVE_ABS_IR, cfg->ir_recv);
    self->link = xcalloc (n + 1, sizeof *self->link);
    self->ir_send = xcalloc (n + 1, sizeof *self->ir_send);
    self->lr = xcalloc (n + 1, sizeof *self->lr);
    self->lc = xcalloc (n + 1, sizeof *self->lc);
    for (int i = 0; i < n; i++) {
        rule_init (&self->link[i], LIVE_ABS_LINK, cfg->link_mbps[i]);
        rule_init (&self->ir_send[i], LIVE_ABS_IR, cfg->ir_send[i]);
    }
    return self;
}

void
live_destroy (live_t **self_p)
{
    live_t *self = *self_p;
    if (!self)
        return;
    free (self->link);
    free (self->ir_send);
    free (self->lr);
    free (self->lc);
    free (self->pending);
    free (self);
    *self_p = NULL;
}

/*  Queue a change; what the caller took last time is gone first. */
static void
push (live_t *self, live_what_t what, int child, double from, double to, double at)
{
    if (self->taken) {
        self->npending = 0;
        self->taken = 0;
    }
    if (self->npending == self->cap) {
        self->cap = self->cap ? 2 * self->cap : 8;
        self->pending = xrealloc (self->pending, (size_t) self->cap * sizeof *self->pending);
    }
    self->pending[self->npending++] =
        (live_change_t){.what = what, .child = child, .from = from, .to = to, .at = at};
}

/*  Feed d one estimate; queue the change it declares. */
static void
feed (live_t *self, drift_t *d, live_what_t what, int child, double t, double v, double se)
{
    double from;
    if (drift_feed (d, v, se, &from)) {
        push (self, what, child, from, d->ref, t);
        self->compute_moved |= what == LIVE_COMPUTE;
    }
}

/*  One IR of the fit: a negative one is no estimate (an IR is a loss),
 *  and neither is one without a standard error (NaN: the fit has no more
 *  samples than parameters; negative: none that means anything). It
 *  goes in as none: the floors alone must not judge a fit that cannot
 *  say how far off it may be. */
static void
feed_ir (live_t *self, drift_t *d, live_what_t what, int child, double t, double v,
         double se)
{
    feed (self, d, what, child, t, v >= 0 && se >= 0 ? v : NAN, se);
}

static void
ratio_begin (live_ratio_t *r, double t0)
{
    *r = (live_ratio_t){.t0 = t0};
}

static void
ratio_add (live_ratio_t *r, double u, double b)
{
    r->n++;
    r->su += u;
    r->sb += b;
    r->suu += u * u;
    r->sub += u * b;
    r->sbb += b * b;
}

/*  When the check interval is complete at t: its estimate and standard
 *  error (NaN with one sample interval), and a new interval begins at t.
 *  Returns 1 then, else 0. */
static int
ratio_close (live_t *self, live_ratio_t *r, double t, double *est, double *se)
{
    if (t - r->t0 < self->interval_s * (1 - 1e-9) || r->n < self->min_samples)
        return 0;
    double R = r->su / r->sb;
    double ss = r->suu - 2 * R * r->sub + R * R * r->sbb;
    *est = R;
    *se = r->n > 1 ? sqrt ((double) r->n / (r->n - 1) * fmax (ss, 0)) / r->sb : NAN;
    ratio_begin (r, t);
    return 1;
}

/*  The model's interference factor over a sample interval dt long, at
 *  the current IR references. */
static double
factor (const live_t *self, double dt, double recv_mb, const double *send_mb)
{
    double f = 1 - self->ir_recv.ref * recv_mb / dt;
    for (int i = 0; i < self->n; i++)
        f -= self->ir_send[i].ref * send_mb[i] / dt;
    return f;
}

void
live_compute (live_t *self, double t, double dt, double units, double busy_s,
              double recv_mb, const double *send_mb)
{
    if (!(dt > 0) || !isfinite (t))
        return;
    if (!self->cr_started) {
        ratio_begin (&self->cr, t - dt);
        self->cr_started = 1;
    }
    double f = factor (self, dt, recv_mb, send_mb);
    if (busy_s > 0 && units >= 0 && f >= LIVE_MIN_FACTOR)
        ratio_add (&self->cr, units, busy_s * f);
    double est, se;
    if (ratio_close (self, &self->cr, t, &est, &se))
        feed (self, &self->compute, LIVE_COMPUTE, -1, t, est, se);
}

void
live_link (live_t *self, int c, double t, double mb, double seconds)
{
    if (c < 0 || c >= self->n || !isfinite (t))
        return;
    live_cum_t *k = &self->lc[c];
    live_ratio_t *r = &self->lr[c];
    if (!k->started || mb < k->mb || seconds < k->seconds) {
        /* the origin, or counters that went back: start again here */
        *k = (live_cum_t){.started = 1, .mb = mb, .seconds = seconds};
        ratio_begin (r, t);
        return;
    }
    double dmb = mb - k->mb, ds = seconds - k->seconds;
    k->mb = mb;
    k->seconds = seconds;
    if (ds > 0)
        ratio_add (r, dmb, ds);
    double est, se;
    if (ratio_close (self, r, t, &est, &se))
        feed (self, &self->link[c], LIVE_LINK, c, t, est, se);
}

void
live_fit (live_t *self, double t, double ir_recv, double ir_recv_se, const double *ir_send,
          const double *ir_send_se)
{
    /*  The fit regresses the compute rate on the transfer rates over the
     *  whole run with one intercept, C: once C has moved, its slopes
     *  mix the background's change into the IRs. */
    if (self->compute_moved)
        return;
    feed_ir (self, &self->ir_recv, LIVE_IR_RECV, -1, t, ir_recv, ir_recv_se);
    for (int i = 0; i < self->n; i++)
        feed_ir (self, &self->ir_send[i], LIVE_IR_SEND, i, t, ir_send[i], ir_send_se[i]);
}

const live_change_t *
live_take (live_t *self, int *n)
{
    if (self->taken)
        self->npending = 0;
    self->taken = 1;
    *n = self->npending;
    return self->pending;
}

double
live_ref (const live_t *self, live_what_t what, int child)
{
    switch (what) {
    case LIVE_COMPUTE:
        return self->compute.ref;
    case LIVE_IR_RECV:
        return self->ir_recv.ref;
    case LIVE_LINK:
        return child >= 0 && child < self->n ? self->link[child].ref : NAN;
    case LIVE_IR_SEND:
        return child >= 0 && child < self->n ? self->ir_send[child].ref : NAN;
    default:
        return NAN;
    }
}

void
live_child_set (live_t *self, int c, double link_mbps, double ir_send)
{
    if (c < 0 || c >= self->n)
        return;
    rule_init (&self->link[c], LIVE_ABS_LINK, link_mbps);
    rule_init (&self->ir_send[c], LIVE_ABS_IR, ir_send);
    memset (&self->lr[c], 0, sizeof self->lr[c]);
    memset (&self->lc[c], 0, sizeof self->lc[c]);
}
