/*  emulate — observed transfers and emulated interference. See emulate.h. */
#include "node/emulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/meter.h"
#include "overlay/util.h"

struct emul {
    int n;                   /* children */
    double ir_recv;
    double *ir_send;         /* n */
    double bps_per_mbps;
    int apply;
    double *held;            /* [0] from the parent, [1 + i] to child i,
                                bytes/s, as last metered */
    double *observed;        /* their integral up to `since`, bytes */
    double *mbps;            /* scratch: send rates in platform MB/s */
    double *total;           /* emul_update_bytes: the totals last passed */
    double debt;             /* emul_update_bytes: wall seconds of compute
                                the bytes moved took beyond the time they
                                had, still to charge while busy */
    double since;            /* last update, 0 before */
    double speed;            /* the factor in force */
    double speed_sum, busy_time;
};

emul_t *
emul_new (int nchildren, double ir_recv, const double *ir_send, double bps_per_mbps,
          int apply)
{
    emul_t *self = xcalloc (1, sizeof *self);
    self->n = nchildren;
    self->ir_recv = ir_recv;
    self->ir_send = xcalloc (nchildren + 1, sizeof *self->ir_send);
    if (nchildren > 0)
        memcpy (self->ir_send, ir_send, nchildren * sizeof *ir_send);
    self->bps_per_mbps = bps_per_mbps;
    self->apply = apply;
    self->held = xcalloc (nchildren + 1, sizeof *self->held);
    self->observed = xcalloc (nchildren + 1, sizeof *self->observed);
    self->mbps = xcalloc (nchildren + 1, sizeof *self->mbps);
    self->total = xcalloc (nchildren + 1, sizeof *self->total);
    self->speed = 1;
    return self;
}

void
emul_destroy (emul_t **self_p)
{
    emul_t *self = *self_p;
    if (!self)
        return;
    free (self->ir_send);
    free (self->held);
    free (self->observed);
    free (self->mbps);
    free (self->total);
    free (self);
    *self_p = NULL;
}

double
emul_update (emul_t *self, double now, int busy, double recv, const double *send)
{
    if (self->since > 0) {
        double dt = now - self->since;
        if (busy) {
            self->speed_sum += self->speed * dt;
            self->busy_time += dt;
        }
        /*  What was held since the last update is what the engine's speed
         *  followed: integrate it for the sampler. */
        for (int j = 0; j <= self->n; j++)
            self->observed[j] += self->held[j] * dt;
    }
    self->since = now;
    self->held[0] = recv;
    for (int i = 0; i < self->n; i++)
        self->held[1 + i] = send[i];
    if (!self->apply)
        return self->speed;
    for (int i = 0; i < self->n; i++)
        self->mbps[i] = send[i] / self->bps_per_mbps;
    self->speed = interference_factor (self->ir_recv, recv / self->bps_per_mbps,
                                       self->ir_send, self->mbps, self->n);
    return self->speed;
}

double
emul_update_bytes (emul_t *self, double now, double busy_s, double apply_s,
                   double recv_total, const double *sent_total)
{
    double dt = now - self->since;
    if (self->since > 0 && !(dt >= EMUL_MIN_INTERVAL))
        return 1;   /* the next update charges it */
    int first = !(self->since > 0);
    /*  The interval's mean rates, from the bytes moved in it, are what its
     *  factor follows; from now on nothing is assumed to move (held 0), as
     *  the engine assumes nothing slows it. */
    for (int j = 0; j <= self->n; j++) {
        double t = j == 0 ? recv_total : sent_total[j - 1];
        double moved = first || !(t > self->total[j]) ? 0 : t - self->total[j];
        self->total[j] = t;
        self->observed[j] += moved;
        self->mbps[j] = first ? 0 : moved / dt / self->bps_per_mbps;
        self->held[j] = 0;
    }
    self->since = now;
    if (first)
        return self->speed;
    int busy = busy_s > 0;
    busy_s = busy ? fmin (busy_s, dt) : 0;
    apply_s = fmin (fmax (apply_s, 0), busy_s);
    double speed = 1, charged = 0;
    if (self->apply && busy) {
        double lost = interference_lost (self->ir_recv, self->mbps[0], self->ir_send,
                                         self->mbps + 1, self->n);
        /*  A synergy (negative IR) lifts nothing above 1, as
         *  interference_factor reads it. */
        lost = isnan (lost) || lost < 0 ? 0 : lost;
        /*  Compute the transfers took while busy, in wall seconds, charged
         *  over apply_s; what does not fit is owed to the next intervals
         *  while the engine stays busy. */
        double owed = lost * busy_s + self->debt;
        charged = fmin (owed, apply_s);
        self->debt = owed - charged;
        speed = apply_s > 0 ? 1 - charged / apply_s : 1;
    } else {
        self->debt = 0;
    }
    self->speed_sum += busy_s - charged;
    self->busy_time += busy_s;
    self->speed = speed;
    return speed;
}

int
emul_interferes (const emul_t *self)
{
    if (!self->apply)
        return 0;
    int any = self->ir_recv != 0;
    for (int i = 0; i < self->n; i++)
        any |= self->ir_send[i] != 0;
    return any;
}

double
emul_updated_at (const emul_t *self)
{
    return self->since;
}

void
emul_observed (const emul_t *self, double now, double *out)
{
    double dt = self->since > 0 ? now - self->since : 0;
    for (int j = 0; j <= self->n; j++)
        out[j] = self->observed[j] + self->held[j] * dt;
}

double
emul_speed_mean (const emul_t *self)
{
    return self->busy_time > 0 ? self->speed_sum / self->busy_time : 1.0;
}

void
emul_set_ir_send (emul_t *self, int i, double ir_send)
{
    if (i >= 0 && i < self->n && ir_send >= 0 && isfinite (ir_send))
        self->ir_send[i] = ir_send;
}
