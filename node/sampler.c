/*  sampler — a history of cumulative samples that thins itself; see
 *  sampler.h.
 *
 *  A sample holds the counters as recorded; rates are differences of
 *  consecutive samples, computed when asked. Kept samples are always
 *  records, in order, so every interval between neighbours is a true one
 *  (a sum of recorded intervals): thinning only ever merges neighbouring
 *  intervals. The two latest records are kept aside for sampler_last,
 *  which the online fit reads at full resolution. All memory is allocated
 *  and written by sampler_new.
 */
#include "node/sampler.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

typedef struct {
    double t;
    double units;
    double bytes_in;
    double bg;               /* the background's CPU seconds so far */
    double measured;         /* the effective rate then, as given */
    int busy;                /* busy over the interval ending here */
} sample_t;

struct sampler {
    int nchildren;
    int capacity;
    int count;               /* samples kept, hist[0 .. count-1] */
    uint64_t stride;         /* records per kept sample */
    uint64_t pending;        /* records since the last kept one */
    int pending_busy;        /* every one of their intervals was busy */
    uint64_t records;
    sample_t *hist;          /* capacity */
    double *bytes_out;       /* capacity x nchildren, row per sample */
    sample_t last, prev;     /* the two latest records */
    double *last_out, *prev_out;   /* nchildren each */
    double *send_rate;       /* nchildren, lent by sampler_interval */
    double next_bg, next_measured;   /* sampler_set_load's, for the next
                                        records */
};

sampler_t *
sampler_new (int nchildren, int capacity)
{
    assert (nchildren >= 0);
    assert (capacity >= 4 && capacity % 2 == 0);
    sampler_t *self = xcalloc (1, sizeof (*self));
    size_t n = (size_t) nchildren;
    self->nchildren = nchildren;
    self->capacity = capacity;
    self->stride = 1;
    self->next_measured = NAN;
    self->hist = xcalloc_resident ((size_t) capacity, sizeof (sample_t));
    self->bytes_out = xcalloc_resident ((size_t) capacity * n, sizeof (double));
    self->last_out = xcalloc (n + 1, sizeof (double));
    self->prev_out = xcalloc (n + 1, sizeof (double));
    self->send_rate = xcalloc (n + 1, sizeof (double));
    return self;
}

void
sampler_destroy (sampler_t **self_p)
{
    assert (self_p);
    sampler_t *self = *self_p;
    if (!self)
        return;
    free (self->hist);
    free (self->bytes_out);
    free (self->last_out);
    free (self->prev_out);
    free (self->send_rate);
    free (self);
    *self_p = NULL;
}

static double *
bytes_out_at (const sampler_t *self, int i)
{
    return self->bytes_out + (size_t) i * (size_t) self->nchildren;
}

/*  Keep every second sample (0, 2, 4, ...): the interval ending at 2i
 *  becomes the one ending at i, busy if both it and the one before were.
 *  The last sample (odd) goes too: returns its interval's flag, which
 *  joins the pending records' (they now span two old strides, the new
 *  stride). */
static int
thin (sampler_t *self)
{
    size_t row = (size_t) self->nchildren * sizeof (double);
    int half = self->capacity / 2;
    for (int i = 1; i < half; i++) {
        int busy = self->hist[2 * i - 1].busy && self->hist[2 * i].busy;
        self->hist[i] = self->hist[2 * i];
        self->hist[i].busy = busy;
        if (row)
            memcpy (bytes_out_at (self, i), bytes_out_at (self, 2 * i), row);
    }
    self->count = half;
    self->stride *= 2;
    return self->hist[self->capacity - 1].busy;
}

/*  Keep the latest record (self->last) in the history. */
static void
keep (sampler_t *self, int busy)
{
    if (self->count == self->capacity)
        busy = thin (self) && busy;
    self->hist[self->count] = self->last;
    self->hist[self->count].busy = busy;
    if (self->nchildren)
        memcpy (bytes_out_at (self, self->count), self->last_out,
                (size_t) self->nchildren * sizeof (double));
    self->count++;
    self->pending = 0;
    self->pending_busy = 1;
}

/*  The counters are finite and none went back since the last record. */
static int
acceptable (const sampler_t *self, double t, double units, double bytes_in,
            const double *bytes_out)
{
    if (!isfinite (t) || !isfinite (units) || !isfinite (bytes_in))
        return 0;
    for (int c = 0; c < self->nchildren; c++)
        if (!isfinite (bytes_out[c]))
            return 0;
    if (self->records == 0)
        return 1;
    const sample_t *prev = &self->last;
    if (!(t > prev->t) || units < prev->units || bytes_in < prev->bytes_in)
        return 0;
    for (int c = 0; c < self->nchildren; c++)
        if (bytes_out[c] < self->last_out[c])
            return 0;
    return 1;
}

int
sampler_record (sampler_t *self, double t, double units, double bytes_in,
                const double *bytes_out, int busy)
{
    assert (self);
    assert (self->nchildren == 0 || bytes_out);
    if (!acceptable (self, t, units, bytes_in, bytes_out))
        return -1;
    size_t row = (size_t) self->nchildren * sizeof (double);
    self->prev = self->last;
    if (row) {
        memcpy (self->prev_out, self->last_out, row);
        memcpy (self->last_out, bytes_out, row);
    }
    self->last = (sample_t) {
        .t = t, .units = units, .bytes_in = bytes_in, .bg = self->next_bg,
        .measured = self->next_measured, .busy = busy != 0
    };
    if (self->records++ == 0) {
        keep (self, self->last.busy);
        return 0;
    }
    self->pending++;
    self->pending_busy = self->pending_busy && self->last.busy;
    if (self->pending == self->stride)
        keep (self, self->pending_busy);
    return 0;
}

void
sampler_set_load (sampler_t *self, double bg_busy, double measured)
{
    assert (self);
    self->next_bg = isfinite (bg_busy) ? bg_busy : self->next_bg;
    self->next_measured = measured;
}

int
sampler_intervals (const sampler_t *self)
{
    assert (self);
    return self->count > 1 ? self->count - 1 : 0;
}

uint64_t
sampler_stride (const sampler_t *self)
{
    assert (self);
    return self->stride;
}

/*  The interval from a to b (b->t > a->t: sampler_record refuses the
 *  rest), its busy flag b's. */
static void
interval_of (sampler_t *self, const sample_t *a, const double *out0,
             const sample_t *b, const double *out1, sampler_interval_t *out)
{
    double dt = b->t - a->t;
    for (int c = 0; c < self->nchildren; c++)
        self->send_rate[c] = (out1[c] - out0[c]) / dt;
    *out = (sampler_interval_t) {
        .t0 = a->t,
        .t1 = b->t,
        .units_rate = (b->units - a->units) / dt,
        .recv_rate = (b->bytes_in - a->bytes_in) / dt,
        .send_rate = self->send_rate,
        .load_share = (b->bg - a->bg) / dt,
        .measured = b->measured,
        .busy = b->busy,
    };
}

int
sampler_interval (sampler_t *self, int i, sampler_interval_t *out)
{
    assert (self && out);
    if (i < 0 || i >= sampler_intervals (self))
        return -1;
    interval_of (self, &self->hist[i], bytes_out_at (self, i), &self->hist[i + 1],
                 bytes_out_at (self, i + 1), out);
    return 0;
}

int
sampler_last (sampler_t *self, sampler_interval_t *out)
{
    assert (self && out);
    if (self->records < 2)
        return -1;
    interval_of (self, &self->prev, self->prev_out, &self->last, self->last_out, out);
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
    if (fputs (",load_share,measured_units_per_s\n", out) < 0)
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
        if (put_rate (out, iv.load_share) < 0
            || (isfinite (iv.measured) ? put_rate (out, iv.measured) : fputc (',', out)) < 0
            || fputc ('\n', out) == EOF)
            rc = -1;
    }
    if (fflush (out) != 0 || ferror (out))
        rc = -1;
    return rc;
}
