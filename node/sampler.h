/*  sampler — what a node did, interval by interval.
 *
 *  Every sample interval the node records its cumulative counters: compute
 *  units completed (counting progress inside the running task, so long
 *  tasks still give samples), bytes received from its parent and bytes
 *  sent to each child, and whether the engine was busy for the whole
 *  interval. The sampler keeps at most `capacity` samples covering the
 *  whole run: when they fill, every second one is dropped and from then on
 *  only every second record is kept, so the history's resolution halves
 *  (an interval of the coarser history is two of the finer, busy if both
 *  were) while its memory stays what sampler_new allocated. Consecutive
 *  kept samples give per-interval rates; the latest interval recorded is
 *  always at full resolution (sampler_last). Pure: the caller passes the
 *  time.
 */
#ifndef TF_SAMPLER_H
#define TF_SAMPLER_H

#include <stdint.h>
#include <stdio.h>

typedef struct sampler sampler_t;

/*  One interval between two consecutive samples, as rates. */
typedef struct {
    double t0, t1;           /* the interval, seconds (caller's clock) */
    double units_rate;       /* compute units per second */
    double recv_rate;        /* bytes per second from the parent */
    const double *send_rate; /* nchildren entries, bytes per second to each
                                child; borrowed, valid until the next call */
    double load_share;       /* the background's share of the CPU over it */
    double measured;         /* the effective rate at its end, as given to
                                sampler_set_load (NaN: none) */
    int busy;                /* the engine was busy for the whole interval */
} sampler_interval_t;

/*  Create a sampler for a node with nchildren (>= 0) children, keeping at
 *  most capacity (>= 4, even) samples. All its memory is allocated and
 *  written here, so the process's resident memory does not grow as the
 *  history fills: (32 + 8 x nchildren) x capacity bytes. */
sampler_t *sampler_new (int nchildren, int capacity);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void sampler_destroy (sampler_t **self_p);

/*  Record the cumulative counters at time t: units computed, bytes received,
 *  bytes sent to each child (nchildren entries), and whether the engine was
 *  busy during the whole interval since the previous sample (the first
 *  sample's flag belongs to no interval). A time not after the previous
 *  sample's is ignored (returns -1), as are counters that go backwards and
 *  non-finite values; nothing is changed then. When the history is full
 *  it is thinned to every second sample (above). Returns 0 when recorded.
 *  O(nchildren), amortized: a thinning is O(capacity x nchildren) and
 *  happens after capacity/2 x stride records. */
int sampler_record (sampler_t *self, double t, double units, double bytes_in,
                    const double *bytes_out, int busy);

/*  What the following records carry until set again: the background's
 *  CPU seconds so far (cumulative, as the interval's length is measured;
 *  a non-finite value keeps the last) and the node's effective rate so
 *  far, in the caller's units (NaN: none). Both start at 0 and NaN. */
void sampler_set_load (sampler_t *self, double bg_busy, double measured);

/*  Number of intervals in the history (samples kept - 1, or 0). */
int sampler_intervals (const sampler_t *self);

/*  Records per kept sample now: 1 until the history first fills, then 2,
 *  4, ... */
uint64_t sampler_stride (const sampler_t *self);

/*  The interval between the two latest records, whatever the history
 *  keeps of them. Returns 0, or -1 before the second record (out
 *  untouched). send_rate as for sampler_interval. */
int sampler_last (sampler_t *self, sampler_interval_t *out);

/*  The i-th interval of the history, oldest first (0 <= i <
 *  sampler_intervals), between the i-th and (i+1)-th samples kept; busy
 *  when every record's interval it spans was busy.
 *  Returns 0, or -1 if i is out of range (out untouched). */
int sampler_interval (sampler_t *self, int i, sampler_interval_t *out);

/*  Write the intervals as CSV: a header
 *    t0,t1,busy,units_per_s,recv_mbps,send_mbps_<child>...,load_share,
 *    measured_units_per_s
 *  then one row per interval, oldest first, each line ending in '\n'.
 *  load_share is the background's share of the CPU over the interval,
 *  measured_units_per_s the effective rate at its end as given (empty
 *  when NaN).
 *  Times are multiplied by time_scale and rates divided by it (platform
 *  time); byte rates are divided by bytes_per_mb too (platform MB/s: 2^20
 *  x payload scale). Numbers are printed with %.9g, busy as 0 or 1.
 *  children names the children (nchildren entries), written as given, so
 *  a name should hold no comma or quote. time_scale and bytes_per_mb must
 *  be > 0. Flushes out. Returns 0, or -1 on a write error. */
int sampler_write_csv (sampler_t *self, FILE *out, const char *const *children,
                       double time_scale, double bytes_per_mb);

#endif
