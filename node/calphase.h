/*  calphase — one phase of a calibration as a node lives it
 *  (`treefarm measure`, docs/measure.md).
 *
 *  The controller's MEASURE names the phase, its length and warm-up, and
 *  the children this node streams probes to. The node streams from the
 *  start; at the end of the warm-up it takes a snapshot of its counters
 *  (compute units done, probe bytes received and acknowledged per child);
 *  at the end of the phase it takes another, and the difference, over the
 *  time between them, is what it measured: its compute rate, its receive
 *  rate and its send rate to each child. The runtime then stops the
 *  streams and reports MEASURED.
 *
 *  Pure: no sockets, no clock; the caller passes the time and counters.
 */
#ifndef TF_CALPHASE_H
#define TF_CALPHASE_H

#include <stdint.h>

typedef struct calphase calphase_t;

/*  What a node has done so far, as it reads it now. */
typedef struct {
    double units;            /* compute units done (engine_units) */
    double units_at;         /* when the engine reported them */
    uint64_t bytes_in;       /* probe bytes received from the parent */
    const uint64_t *bytes_out;   /* probe bytes acknowledged, per child */
} calphase_counters_t;

/*  What a phase measured, in this node's physical terms (wall seconds,
 *  bytes/s, units per wall second); send_bps is borrowed, valid until the
 *  next call. */
typedef struct {
    uint32_t phase;
    double seconds;          /* measured: from the warm-up's end */
    double units_per_s;      /* 0 if the engine reported nothing new */
    double recv_bps;
    const double *send_bps;  /* per child */
} calphase_result_t;

calphase_t *calphase_new (int nchildren);
void calphase_destroy (calphase_t **self_p);

/*  Begin phase at now: measure from now + warmup to now + seconds (wall,
 *  0 <= warmup < seconds), streaming to the children whose streams[i] is
 *  set (nchildren entries, copied). Returns 0, or -1 if a phase is under
 *  way or the times are not so. */
int calphase_begin (calphase_t *self, uint32_t phase, double now, double warmup,
                    double seconds, const int *streams);

/*  A phase is under way. */
int calphase_active (const calphase_t *self);

/*  Whether this phase streams to child i. */
int calphase_streams (const calphase_t *self, int child);

/*  Seconds until the next snapshot is due (0 if overdue), or a negative
 *  number when no phase is under way. */
double calphase_next (const calphase_t *self, double now);

/*  Take the snapshot that is due at now, if any. Returns 1 when the phase
 *  just ended (out is filled, no phase is under way any more), else 0. */
int calphase_tick (calphase_t *self, double now, const calphase_counters_t *c,
                   calphase_result_t *out);

#endif
