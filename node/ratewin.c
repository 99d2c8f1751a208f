/*  ratewin — the effective compute rate over a window of intervals. See
 *  ratewin.h.
 *
 *  The window is a ring of the intervals' increments; the sums are taken
 *  again at each question (at most RATEWIN_MAX additions, a few
 *  microseconds) rather than kept running, so no rounding accumulates
 *  over a long run.
 */
#include "node/ratewin.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

typedef struct {
    double units, busy;      /* what the interval added */
} ratewin_iv_t;

struct ratewin {
    int window;
    int count;               /* intervals kept, ring[head .. head+count) */
    int head;                /* the oldest */
    int started;             /* the origin is set */
    double t, units, busy;   /* the last sample */
    ratewin_iv_t *ring;      /* window */
};

ratewin_t *
ratewin_new (int window)
{
    assert (window >= 2 && window <= RATEWIN_MAX);
    ratewin_t *self = xcalloc (1, sizeof *self);
    self->window = window;
    self->ring = xcalloc ((size_t) window, sizeof *self->ring);
    return self;
}

void
ratewin_destroy (ratewin_t **self_p)
{
    assert (self_p);
    if (!*self_p)
        return;
    free ((*self_p)->ring);
    free (*self_p);
    *self_p = NULL;
}

int
ratewin_feed (ratewin_t *self, double t, double units, double busy)
{
    assert (self);
    if (!isfinite (t) || !isfinite (units) || !isfinite (busy))
        return -1;
    if (self->started && (!(t > self->t) || units < self->units || busy < self->busy))
        return -1;
    ratewin_iv_t iv = {units - self->units, busy - self->busy};
    int first = !self->started;
    self->started = 1;
    self->t = t;
    self->units = units;
    self->busy = busy;
    if (first || !(iv.busy > 0))
        return 0;
    if (self->count == self->window) {
        self->ring[self->head] = iv;
        self->head = (self->head + 1) % self->window;
    }
    else
        self->ring[(self->head + self->count++) % self->window] = iv;
    return 1;
}

int
ratewin_count (const ratewin_t *self)
{
    assert (self);
    return self->count;
}

/*  Interval i of the window, oldest first. */
static const ratewin_iv_t *
at (const ratewin_t *self, int i)
{
    return &self->ring[(self->head + i) % self->window];
}

/*  The ratio estimator's standard error over k consecutive batches of
 *  the window (ratewin.h), for the rate r. */
static double
batch_se (const ratewin_t *self, double r, double busy_total)
{
    int n = self->count;
    int k = n < RATEWIN_BATCHES ? n : RATEWIN_BATCHES;
    double ss = 0;
    for (int j = 0; j < k; j++) {
        double u = 0, b = 0;
        for (int i = (int) ((long) j * n / k); i < (int) ((long) (j + 1) * n / k); i++) {
            u += at (self, i)->units;
            b += at (self, i)->busy;
        }
        ss += (u - r * b) * (u - r * b);
    }
    return sqrt ((double) k / (k - 1) * ss) / busy_total;
}

double
ratewin_rate (const ratewin_t *self, double *se)
{
    assert (self);
    double units = 0, busy = 0;
    for (int i = 0; i < self->count; i++) {
        units += at (self, i)->units;
        busy += at (self, i)->busy;
    }
    double r = self->count ? units / busy : NAN;
    if (se)
        *se = self->count >= 2 ? batch_se (self, r, busy) : NAN;
    return r;
}
