/*  sampler — a ring of cumulative samples; see sampler.h.
 *
 *  A sample holds the counters as recorded; rates are differences of
 *  consecutive samples, computed when asked. The ring only ever drops its
 *  oldest sample, so the samples kept are always consecutive records and
 *  every interval between neighbours in the ring is a real one. All memory
 *  is allocated by sampler_new; recording is O(nchildren).
 */
#include "node/sampler.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

typedef struct {
    double t;
    double units;
    double bytes_in;
    int busy;                /* busy over the interval ending here */
} sample_t;

struct sampler {
    int nchildren;
    int capacity;
    int head;                /* slot of the oldest sample */
    int count;               /* samples kept */
    uint64_t dropped;
    sample_t *ring;          /* capacity */
    double *bytes_out;       /* capacity x nchildren, row per slot */
    double *send_rate;       /* nchildren, lent by sampler_interval */
};


sampler_t *
sampler_new (int nchildren, int capacity)
{
    assert (nchildren >= 0);
    assert (capacity >= 2);
    sampler_t *self = xcalloc (1, sizeof (*self));
    self->nchildren = nchildren;
    self->capacity = capacity;
    self->ring = xcalloc ((size_t) capacity, sizeof (sample_t));
    self->bytes_out = xcalloc ((size_t) capacity * (size_t) nchildren,
                               sizeof (double));
    self->send_rate = xcalloc ((size_t) nchildren, sizeof (double));
    return self;
}

void
sampler_destroy (sampler_t **self_p)
{
    assert (self_p);
    sampler_t *self = *self_p;
    if (!self)
        return;
    free (self->ring);
    free (self->bytes_out);
    free (self->send_rate);
    free (self);
    *self_p = NULL;
}

/*  The ring slot of the i-th sample kept, oldest first. */
static int
slot_of (const sampler_t *self, int i)
{
    return (self->head + i) % self->capacity;
}

static double *
bytes_out_at (const sampler_t *self, int slot)
{
    return self->bytes_out + (size_t) slot * (size_t) self->nchildren;
}

int
sampler_record (sampler_t *self, double t, double units, double bytes_in,
                const double *bytes_out, int busy)
{
    assert (self);
    assert (self->nchildren == 0 || bytes_out);
    int n = self->nchildren;
    if (!isfinite (t) || !isfinite (units) || !isfinite (bytes_in))
        return -1;
    for (int c = 0; c < n; c++)
        if (!isfinite (bytes_out[c]))
            return -1;

    if (self->count > 0) {
        int last = slot_of (self, self->count - 1);
        const sample_t *prev = &self->ring[last];
        const double *prev_out = bytes_out_at (self, last);
        if (!(t > prev->t) || units < prev->units || bytes_in < prev->bytes_in)
            return -1;
        for (int c = 0; c < n; c++)
            if (bytes_out[c] < prev_out[c])
                return -1;
    }

    if (self->count == self->capacity) {
        self->head = (self->head + 1) % self->capacity;
        self->count--;
        self->dropped++;
    }
    int slot = slot_of (self, self->count);
    self->ring[slot] = (sample_t) {
        .t = t, .units = units, .bytes_in = bytes_in, .busy = busy != 0
    };
    double *out = bytes_out_at (self, slot);
    for (int c = 0; c < n; c++)
        out[c] = bytes_out[c];
    self->count++;
    return 0;
}

int
sampler_intervals (const sampler_t *self)
{
    assert (self);
    return self->count > 1 ? self->count - 1 : 0;
}

uint64_t
sampler_dropped (const sampler_t *self)
{
    assert (self);
    return self->dropped;
}

int
sampler_interval (sampler_t *self, int i, sampler_interval_t *out)
{
    assert (self && out);
    if (i < 0 || i >= sampler_intervals (self))
        return -1;
    int s0 = slot_of (self, i), s1 = slot_of (self, i + 1);
    const sample_t *a = &self->ring[s0], *b = &self->ring[s1];
    const double *out0 = bytes_out_at (self, s0), *out1 = bytes_out_at (self, s1);
    double dt = b->t - a->t;     /* > 0: sampler_record refuses the rest */

    for (int c = 0; c < self->nchildren; c++)
        self->send_rate[c] = (out1[c] - out0[c]) / dt;
    *out = (sampler_interval_t) {
        .t0 = a->t,
        .t1 = b->t,
        .units_rate = (b->units - a->units) / dt,
        .recv_rate = (b->bytes_in - a->bytes_in) / dt,
        .send_rate = self->send_rate,
        .busy = b->busy,
    };
    return 0;
}

/*  ",X" with X as %.9g prints it; a rate of exactly 0, the idle node's
 *  every column, without printf's cost (a few hundred ns a number). */
static int
put_rate (FILE *out, double x)
{
    if (x == 0 && !signbit (x))
        return fputs (",0", out);
    return fprintf (out, ",%.9g", x);
}

int
sampler_write_csv (sampler_t *self, FILE *out, const char *const *children,
                   double time_scale, double bytes_per_mb)
{
    assert (self && out);
    assert (self->nchildren == 0 || children);
    assert (time_scale > 0 && bytes_per_mb > 0);
    int n = self->nchildren;
    int rc = 0;

    if (fputs ("t0,t1,busy,units_per_s,recv_mbps", out) < 0)
        rc = -1;
    for (int c = 0; c < n; c++)
        if (fprintf (out, ",send_mbps_%s", children[c]) < 0)
            rc = -1;
    if (fputc ('\n', out) == EOF)
        rc = -1;

    double mb_scale = time_scale * bytes_per_mb;
    int intervals = sampler_intervals (self);
    for (int i = 0; i < intervals && rc == 0; i++) {
        sampler_interval_t iv;
        sampler_interval (self, i, &iv);
        if (fprintf (out, "%.9g,%.9g,%d", iv.t0 * time_scale, iv.t1 * time_scale,
                     iv.busy) < 0
            || put_rate (out, iv.units_rate / time_scale) < 0
            || put_rate (out, iv.recv_rate / mb_scale) < 0)
            rc = -1;
        for (int c = 0; c < n; c++)
            if (put_rate (out, iv.send_rate[c] / mb_scale) < 0)
                rc = -1;
        if (fputc ('\n', out) == EOF)
            rc = -1;
    }
    if (fflush (out) != 0 || ferror (out))
        rc = -1;
    return rc;
}
