/*  live — a node's live estimates of the rates its run is planned with,
 *  and the changes it declares in them (docs/adapt.md).
 *
 *  What a node estimates online, each against a drift (node/drift.h)
 *  whose reference starts at the configured value:
 *  - its own compute rate C, platform units/s: each check interval, the
 *    units it computed over its busy seconds, each sample interval's busy
 *    time weighed by the interference factor its transfers caused
 *    (1 - IR_r TR_in - sum_i IR_s(i) TR_i, the model's, at the current
 *    references of the IRs), so that sending does not read as a slower
 *    machine and only the background does;
 *  - per child, the link's rate, platform MB/s: the bytes of the
 *    transfers the link alone paced over the seconds they took
 *    (core_child_stats_t link_bytes, link_seconds);
 *  - its IR_r and, per child, IR_s: the online fit's estimates
 *    (node/observe.h), one interval each time it is solved; a negative
 *    estimate counts as none, and once a compute change is declared the
 *    fit's IRs are no longer used (the fit has one intercept C over the
 *    whole run, so a background change leaks into its slopes).
 *  Compute and link estimates are ratio estimators over a check interval
 *  of at least interval_s platform seconds and min_samples sample
 *  intervals carrying data; their standard error is the ratio
 *  estimator's over those sample intervals,
 *    se^2 = n/(n-1) sum_j (U_j - R B_j)^2 / (sum_j B_j)^2.
 *
 *  Pure: no clock, no sockets; times are platform seconds since START.
 */
#ifndef TF_LIVE_H
#define TF_LIVE_H

/*  What an estimate is of. */
typedef enum {
    LIVE_COMPUTE = 0,        /* the node's compute rate, units/s */
    LIVE_LINK,               /* the link to a child, MB/s */
    LIVE_IR_SEND,            /* IR_s of sending to a child */
    LIVE_IR_RECV,            /* the node's IR_r */
    LIVE_WHAT_COUNT
} live_what_t;

/*  "compute", "link", "ir_send", "ir_recv" (results.json's "what"), and
 *  the unit a log line gives it ("units/s", "MB/s", ""). "?" out of
 *  range. */
const char *live_what_str (live_what_t what);
const char *live_unit_str (live_what_t what);

/*  One declared change. */
typedef struct live_change {
    live_what_t what;
    int child;               /* LINK, IR_SEND: the child's slot; else -1 */
    double from, to;         /* the reference before and after */
    double at;               /* platform seconds since START */
} live_change_t;

/*  A check interval: at least this many platform seconds and sample
 *  intervals with data (docs/adapt.md, "Declaring a change"). */
#define LIVE_INTERVAL_S 5.0
#define LIVE_MIN_SAMPLES 3
/*  Changes a node keeps to report (STATS); later ones still re-plan and
 *  are counted. */
#define LIVE_MAX_CHANGES 256

typedef struct {
    int nchildren;
    double compute;          /* configured C, units/s, > 0 */
    double ir_recv;          /* configured IR_r, >= 0 */
    const double *link_mbps; /* per child, configured, > 0 (copied) */
    const double *ir_send;   /* per child, configured, >= 0 (copied) */
    double interval_s;       /* LIVE_INTERVAL_S unless a test says */
    int min_samples;         /* LIVE_MIN_SAMPLES unless a test says */
} live_cfg_t;

typedef struct live live_t;

live_t *live_new (const live_cfg_t *cfg);

/*  Destroy and null the pointer. Safe on NULL. */
void live_destroy (live_t **self_p);

/*  One sample interval ending at t, dt platform seconds long, in which
 *  the node computed `units` over busy_s platform seconds (0: it did not
 *  compute; the interval says nothing of C), received recv_mb MB from its
 *  parent and sent send_mb[i] MB to child i (nchildren entries). */
void live_compute (live_t *self, double t, double dt, double units, double busy_s,
                   double recv_mb, const double *send_mb);

/*  At t, the transfers to child c that the link alone paced have moved
 *  mb MB in `seconds` platform seconds since START (cumulative). */
void live_link (live_t *self, int c, double t, double mb, double seconds);

/*  At t, the online fit's estimates (NaN: none): IR_r and its standard
 *  error, per child IR_s and its standard error (nchildren entries). */
void live_fit (live_t *self, double t, double ir_recv, double ir_recv_se,
               const double *ir_send, const double *ir_send_se);

/*  The changes declared since the last call, *n of them, borrowed until
 *  the next call to any function here. */
const live_change_t *live_take (live_t *self, int *n);

/*  Child c is a node that joined in a vacant slot: its estimates start
 *  again from this link (MB/s) and IR_s. Ignored for a bad slot. */
void live_child_set (live_t *self, int c, double link_mbps, double ir_send);

/*  The reference now in use (child: for LINK and IR_SEND; NaN for a bad
 *  one). */
double live_ref (const live_t *self, live_what_t what, int child);

#endif
