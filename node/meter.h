/*  meter — transfer rates as a node observes them, and the interference
 *  they cause.
 *
 *  A meter turns "amount observed at time t" into a rate over a sliding
 *  window (100 ms by default: the smoothing of emulated
 *  interference). It is pure: the caller passes the time. The node keeps
 *  one for its receives and one per child for its sends. Memory is fixed
 *  (a ring of METER_BUCKETS + 1 buckets per meter), meter_add is O(1) and
 *  meter_rate O(METER_BUCKETS).
 *
 *  interference_factor is the model's normalized compute rate,
 *  1 - IR_r TR(n) - sum_i IR_s(i) TR(i), clamped to [0, 1]: an emulated
 *  engine computes at C times this factor.
 */
#ifndef TF_METER_H
#define TF_METER_H

#include <stdint.h>

/*  The window is split into this many buckets. */
#define METER_BUCKETS 20

/*  While a meter is younger than one window, its rate is divided by no
 *  less than this fraction of the window (see meter_rate). */
#define METER_MIN_SPAN 0.25

typedef struct meter meter_t;

/*  Create a meter averaging over the last window seconds (> 0, finite;
 *  anything else is a programming error and asserts). */
meter_t *meter_new (double window);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void meter_destroy (meter_t **self_p);

/*  Record amount (>= 0) observed at time now. Times must not go backwards;
 *  an earlier time (or one that is not finite) is treated as now = the
 *  latest time seen (before the first sample there is none, and the sample
 *  is ignored). An amount of 0 is a valid sample that only marks
 *  time: the first sample, whatever its amount, starts the meter's clock
 *  (see meter_rate), so adding 0 when the node starts makes the meter
 *  measure from then. A negative, NaN or infinite amount is ignored. */
void meter_add (meter_t *self, double now, double amount);

/*  The rate, amount per second, over the window ending at now: the amount
 *  observed in (now - window, now] divided by window. A time before the
 *  latest sample (or not finite) is treated as that sample's time; the
 *  query changes nothing. Before any sample the rate is 0.
 *
 *  Start-up rule: while now - first < window, where first is the time of
 *  the meter's first sample, the rate is the amount observed in
 *  (first, now] divided by max (now - first, METER_MIN_SPAN * window).
 *  The first sample itself is never counted: its amount crossed the link
 *  over an interval before first that nobody measured. So a steady stream
 *  of a bytes every d seconds reads its true rate a / d at each of its
 *  samples from the second on, once METER_MIN_SPAN windows have passed,
 *  and otherwise reads low, never high; a lone first sample reads 0,
 *  however big; a burst just after the first sample reads at most
 *  1 / METER_MIN_SPAN times what the same burst reads later in a meter's
 *  life. At now - first = window the rule meets the sliding window
 *  without a jump.
 *
 *  Buckets bound the memory: the oldest bucket, the one the window's start
 *  cuts through, is counted by time: its first sample in or out exactly,
 *  its later samples as if spread evenly between its first and last
 *  sample. The result is exact when no bucket holds two samples (samples
 *  further apart than window / METER_BUCKETS) and off by at most the
 *  oldest bucket's contents otherwise. A sample within a millionth of a
 *  bucket after the window's start counts as out, so a query at the instant
 *  of a periodic sample does not also count the one a window earlier. */
double meter_rate (meter_t *self, double now);

/*  Everything ever recorded. */
double meter_total (const meter_t *self);

/*  ir_recv * recv_mbps + sum_i ir_send[i] * send_mbps[i], unclamped: the
 *  fraction of compute the transfers take (may be NaN for opposite
 *  infinities; a term that is not a number counts as 0). */
double interference_lost (double ir_recv, double recv_mbps, const double *ir_send,
                          const double *send_mbps, int n);

/*  1 - ir_recv * recv_mbps - sum_i ir_send[i] * send_mbps[i], clamped to
 *  [0, 1]. Rates in MB/s (platform), IR in fraction per MB/s. A negative
 *  IR (synergy, from calibration) may lift the sum above 1: it reads 1.
 *  Never NaN: a term that is not a number (a NaN input, 0 x infinity)
 *  counts as 0, and opposite infinities give 1. n <= 0 means no children;
 *  the arrays may then be NULL. */
double interference_factor (double ir_recv, double recv_mbps, const double *ir_send,
                            const double *send_mbps, int n);

#endif
