/*  observe — what a node measures of itself during every run: the sampler
 *  and the online fit of its interference rates (docs/measure.md).
 *
 *  Every sample interval the runtime hands in the engine's cumulative
 *  compute units and the bytes it observed moving (node/emulate.h
 *  emul_observed); the sampler keeps the intervals, and every interval in
 *  which the engine computed throughout feeds a least-squares fit of the
 *  compute rate (platform units/s) against the receive rate and each
 *  child's send rate (platform MB/s). The fit's intercept is C and
 *  IR = -slope / C, with standard errors scaled the same way (C's own
 *  uncertainty neglected).
 *
 *  Pure: no sockets, no clock; the caller passes the time.
 */
#ifndef TF_OBSERVE_H
#define TF_OBSERVE_H

#include <stdint.h>
#include <stdio.h>

typedef struct observe observe_t;

/*  The online estimates, platform terms; NaN where the fit cannot say
 *  (too few samples, a regressor that never varied). */
typedef struct {
    long n;                  /* busy intervals in the fit */
    int ok;                  /* the fit could be solved */
    double c, c_se;          /* units/s */
    double ir_recv, ir_recv_se;
    const double *ir_send, *ir_send_se;   /* per child; borrowed, valid
                                             until the next call */
} observe_estimates_t;

/*  A node with nchildren children keeping capacity samples, one every
 *  sample_s wall seconds; time_scale and bps_per_mbps (physical bytes/s
 *  per platform MB/s) turn wall rates into platform ones. */
observe_t *observe_new (int nchildren, int capacity, double sample_s, double time_scale,
                        double bps_per_mbps);

/*  Destroy and null the pointer. Safe on NULL. */
void observe_destroy (observe_t **self_p);

/*  A sample is due at now. */
int observe_due (const observe_t *self, double now);

/*  Record a sample at now: units done so far, whether the engine is busy
 *  now, and the bytes observed: observed[0] received, observed[1 + i]
 *  sent to child i. The interval it closes is busy when the engine was
 *  busy now and has not been idle since the last sample. */
void observe_sample (observe_t *self, double now, double units, int busy,
                     const double *observed);

/*  What the next samples carry beside the counters (sampler_set_load):
 *  the background's CPU so far, wall seconds, and the node's effective
 *  rate so far, platform units/s (NaN: none yet). */
void observe_set_load (observe_t *self, double bg_busy, double measured);

/*  The engine went idle (its task ended and no other started): the
 *  interval under way is not a busy one. */
void observe_idle (observe_t *self);

/*  Solve the fit now. */
const observe_estimates_t *observe_estimates (observe_t *self);

/*  One IR from the fit: the coefficient b of its transfer rate and the
 *  intercept c (the compute rate with no transfer), with their standard
 *  errors: IR = -b / c, and a standard error that counts c's own
 *  uncertainty, (|se_b| + |IR| se_c) / c (the delta method's, its
 *  covariance term bounded). NaN for both when c is not positive: the
 *  fit could not place the intercept. That happens when the transfer
 *  rates add up to about the same total in every sample (a parent whose
 *  send port is always full): the intercept and a common shift of the
 *  slopes trade off, and c can come out near 0 or below, where -b / c
 *  (and an se divided by it) would be a confident nonsense. */
void observe_ir (double b, double b_se, double c, double c_se, double *ir, double *ir_se);

/*  Busy intervals in the fit so far (the estimates' n): they change only
 *  when this does. */
long observe_count (const observe_t *self);

/*  The samples as CSV (sampler_write_csv), in platform units, with the
 *  children's names as columns. Returns 0, or -1 on a write error. */
int observe_write_csv (observe_t *self, FILE *out, const char *const *children,
                       double bytes_per_mb);

#endif
