/*  calphase — one calibration phase at a node. See calphase.h. */
#include "node/calphase.h"

#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

struct calphase {
    int n;                   /* children */
    int active, taken;       /* a phase is under way; its warm-up is over */
    uint32_t phase;
    double ta, tb;           /* measure from ta to tb */
    double t, units, units_at;   /* at the snapshot */
    uint64_t bytes_in;
    uint64_t *bytes_out;     /* n */
    int *streams;            /* n */
    double *send_bps;        /* n: the result */
};

calphase_t *
calphase_new (int nchildren)
{
    calphase_t *self = xcalloc (1, sizeof *self);
    self->n = nchildren;
    self->bytes_out = xcalloc (nchildren + 1, sizeof *self->bytes_out);
    self->streams = xcalloc (nchildren + 1, sizeof *self->streams);
    self->send_bps = xcalloc (nchildren + 1, sizeof *self->send_bps);
    return self;
}

void
calphase_destroy (calphase_t **self_p)
{
    calphase_t *self = *self_p;
    if (!self)
        return;
    free (self->bytes_out);
    free (self->streams);
    free (self->send_bps);
    free (self);
    *self_p = NULL;
}

int
calphase_begin (calphase_t *self, uint32_t phase, double now, double warmup,
                double seconds, const int *streams)
{
    if (self->active || !(warmup >= 0) || !(seconds > warmup))
        return -1;
    self->active = 1;
    self->taken = 0;
    self->phase = phase;
    self->ta = now + warmup;
    self->tb = now + seconds;
    for (int i = 0; i < self->n; i++)
        self->streams[i] = streams[i] != 0;
    return 0;
}

int
calphase_active (const calphase_t *self)
{
    return self->active;
}

int
calphase_streams (const calphase_t *self, int child)
{
    return child >= 0 && child < self->n && self->streams[child];
}

double
calphase_next (const calphase_t *self, double now)
{
    if (!self->active)
        return -1;
    double at = self->taken ? self->tb : self->ta;
    return at > now ? at - now : 0;
}

int
calphase_tick (calphase_t *self, double now, const calphase_counters_t *c,
               calphase_result_t *out)
{
    if (!self->active)
        return 0;
    if (!self->taken) {
        if (now < self->ta)
            return 0;
        self->taken = 1;
        self->t = now;
        self->units = c->units;
        self->units_at = c->units_at;
        self->bytes_in = c->bytes_in;
        memcpy (self->bytes_out, c->bytes_out, self->n * sizeof *c->bytes_out);
        return 0;
    }
    if (now < self->tb)
        return 0;
    self->active = 0;
    double dt = now - self->t;
    double du = c->units - self->units, dut = c->units_at - self->units_at;
    for (int i = 0; i < self->n; i++)
        self->send_bps[i] = (double) (c->bytes_out[i] - self->bytes_out[i]) / dt;
    *out = (calphase_result_t){
        .phase = self->phase, .seconds = dt, .units_per_s = dut > 0 ? du / dut : 0,
        .recv_bps = (double) (c->bytes_in - self->bytes_in) / dt,
        .send_bps = self->send_bps,
    };
    return 1;
}
