/*  observe — the sampler and the online fit of a node. See observe.h. */
#include "node/observe.h"

#include <math.h>
#include <stdlib.h>

#include "node/fit.h"
#include "node/sampler.h"
#include "overlay/util.h"

struct observe {
    int n;                   /* children */
    double sample_s, time_scale, bps_per_mbps;
    sampler_t *sampler;
    fit_t *fit;              /* 1 + n regressors */
    double *x;               /* scratch: regressors */
    double *coef, *se;       /* scratch: the solution, n + 2 */
    double *ir_send, *ir_send_se;   /* n */
    double last;             /* when the last sample was taken */
    int idle_seen;           /* the engine was idle since the last sample */
    observe_estimates_t est;
};

observe_t *
observe_new (int nchildren, int capacity, double sample_s, double time_scale,
             double bps_per_mbps)
{
    observe_t *self = xcalloc (1, sizeof *self);
    self->n = nchildren;
    self->sample_s = sample_s;
    self->time_scale = time_scale;
    self->bps_per_mbps = bps_per_mbps;
    self->last = -INFINITY;   /* the first sample is due at once */
    self->sampler = sampler_new (nchildren, capacity);
    self->fit = fit_new (1 + nchildren);
    self->x = xcalloc (nchildren + 2, sizeof *self->x);
    self->coef = xcalloc (nchildren + 2, sizeof *self->coef);
    self->se = xcalloc (nchildren + 2, sizeof *self->se);
    self->ir_send = xcalloc (nchildren + 1, sizeof *self->ir_send);
    self->ir_send_se = xcalloc (nchildren + 1, sizeof *self->ir_send_se);
    return self;
}

void
observe_destroy (observe_t **self_p)
{
    observe_t *self = *self_p;
    if (!self)
        return;
    sampler_destroy (&self->sampler);
    fit_destroy (&self->fit);
    free (self->x);
    free (self->coef);
    free (self->se);
    free (self->ir_send);
    free (self->ir_send_se);
    free (self);
    *self_p = NULL;
}

int
observe_due (const observe_t *self, double now)
{
    return now - self->last >= self->sample_s;
}

void
observe_sample (observe_t *self, double now, double units, int busy,
                const double *observed)
{
    int whole = busy && !self->idle_seen;
    self->idle_seen = !busy;
    if (sampler_record (self->sampler, now, units, observed[0], observed + 1, whole))
        return;
    self->last = now;
    sampler_interval_t iv;
    if (sampler_last (self->sampler, &iv) || !iv.busy)
        return;
    self->x[0] = iv.recv_rate / self->bps_per_mbps;
    for (int c = 0; c < self->n; c++)
        self->x[1 + c] = iv.send_rate[c] / self->bps_per_mbps;
    fit_add (self->fit, iv.units_rate / self->time_scale, self->x);
}

void
observe_idle (observe_t *self)
{
    self->idle_seen = 1;
}

void
observe_ir (double b, double b_se, double c, double c_se, double *ir, double *ir_se)
{
    if (!(c > 0) || !isfinite (c) || !isfinite (b)) {
        *ir = *ir_se = NAN;
        return;
    }
    *ir = -b / c;
    *ir_se = (fabs (b_se) + fabs (*ir) * fabs (c_se)) / c;
}

const observe_estimates_t *
observe_estimates (observe_t *self)
{
    int p = fit_solve (self->fit, self->coef, self->se);
    double c = p > 0 ? self->coef[0] : NAN, c_se = p > 0 ? self->se[0] : NAN;
    for (int i = 0; i < self->n; i++)
        observe_ir (self->coef[2 + i], self->se[2 + i], c, c_se, &self->ir_send[i],
                    &self->ir_send_se[i]);
    double ir_recv, ir_recv_se;
    observe_ir (self->coef[1], self->se[1], c, c_se, &ir_recv, &ir_recv_se);
    self->est = (observe_estimates_t){
        .n = fit_count (self->fit), .ok = p > 0, .c = c, .c_se = c_se,
        .ir_recv = ir_recv, .ir_recv_se = ir_recv_se,
        .ir_send = self->ir_send, .ir_send_se = self->ir_send_se,
    };
    return &self->est;
}

long
observe_count (const observe_t *self)
{
    return fit_count (self->fit);
}

void
observe_set_load (observe_t *self, double bg_busy, double measured)
{
    sampler_set_load (self->sampler, bg_busy, measured);
}

int
observe_write_csv (observe_t *self, FILE *out, const char *const *children,
                   double bytes_per_mb)
{
    return sampler_write_csv (self->sampler, out, children, self->time_scale,
                              bytes_per_mb);
}
