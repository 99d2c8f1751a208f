/*  ratewin — a node's effective compute rate, estimated online over a
 *  window of its latest sample intervals (docs/measure.md, "Effective
 *  compute rate").
 *
 *  At every sample the caller hands in three cumulative figures: the
 *  time, the compute units done, and the seconds the node spent
 *  computing (its engine busy with a task). Each interval between two
 *  samples in which the node computed at all is kept, as the units and
 *  busy seconds it added, up to the last `window` of them; an interval
 *  without computing says nothing of the rate and is not kept, so the
 *  estimate of a node gone idle stays the one of its last computing.
 *
 *  The rate is units per busy second over the window (the ratio of the
 *  sums: the per-interval rates weighted by busy time, so an interval
 *  computed for a tenth of its length counts a tenth). Its standard
 *  error is by batch means: the window's intervals in RATEWIN_BATCHES
 *  consecutive batches, and the ratio estimator's variance over them,
 *    se^2 = k/(k-1) sum_j (U_j - R B_j)^2 / (sum_j B_j)^2,
 *  U_j, B_j a batch's units and busy seconds, R the rate. Batches, not
 *  single intervals: a background job that slows the node for several
 *  intervals in a row makes neighbouring intervals agree, and a variance
 *  of single intervals would then understate the error.
 *
 *  Pure: no clock, no sockets; the units of time are the caller's (the
 *  node passes platform seconds, so the rate is platform units/s).
 */
#ifndef TF_RATEWIN_H
#define TF_RATEWIN_H

/*  The most intervals a window may keep: 4096 x 16 bytes. */
#define RATEWIN_MAX 4096
/*  The batches of the standard error: 15 degrees of freedom, so the
 *  error's own relative uncertainty is about 1/sqrt(30), 18%. A window
 *  of fewer intervals has one batch per interval. */
#define RATEWIN_BATCHES 16

typedef struct ratewin ratewin_t;

/*  A window of at most `window` computing intervals, 2 .. RATEWIN_MAX
 *  (asserted: the caller's constant). */
ratewin_t *ratewin_new (int window);

/*  Destroy and null the pointer. Safe on NULL. */
void ratewin_destroy (ratewin_t **self_p);

/*  A sample at time t: units done and busy seconds so far (cumulative).
 *  The first sample only sets the origin. Returns 1 when the interval it
 *  closes joined the window (busy seconds grew), 0 when it carried no
 *  information (no busy time), -1 when it was refused and nothing
 *  changed: a non-finite figure, a time not after the last sample's, or
 *  units or busy seconds that went back. */
int ratewin_feed (ratewin_t *self, double t, double units, double busy);

/*  The intervals in the window now, at most the window. */
int ratewin_count (const ratewin_t *self);

/*  The rate over the window, units per busy second, and its standard
 *  error in *se (unless se is NULL). NaN when the window is empty; the
 *  error NaN too with fewer than two intervals. */
double ratewin_rate (const ratewin_t *self, double *se);

#endif
