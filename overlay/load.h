/*  load — a node's background load as a platform describes it
 *  (docs/load.md): the description, its reader and writer, and the rate
 *  it predicts. Pure: no clock, no processes; the node generates the
 *  load (node/bgload.h emulated, node/burner.h real).
 *
 *  A node's "load" in a config, or one entry of a --load file, is an
 *  object with any of these kinds, combined:
 *    jobs         an open stream of jobs sharing the CPU by processor
 *                 sharing (Anglano): utilization U, demand {dist, mean_s,
 *                 cv}, arrivals {dist, cv}; "classes": more such streams;
 *    contenders   on/off contenders (Figueira & Berman), each {compute,
 *                 comm, msg_bytes, period_s};
 *    steps        [{at_s, load}], a load L from at_s on (Weissman);
 *    trace        a CSV file of time_s,load rows, replayed;
 *    delay_comm   the calibrated delays of 1 .. p communicating
 *                 contenders (optional);
 *    seed         the seed of every draw (default 1).
 *  Times are platform seconds from the run's start. Every number is
 *  checked against the limits below before it is used.
 */
#ifndef TF_LOAD_H
#define TF_LOAD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "overlay/dist.h"
#include "overlay/jsonw.h"
#include "overlay/slowdown.h"

/*  The highest total utilization of a node's job streams: at U = 0.95 a
 *  foreground task already takes 20 times as long. */
#define LOAD_MAX_UTILIZATION 0.95
/*  Job classes in one description. */
#define LOAD_MAX_CLASSES 16
/*  Contenders: slowdown's limit. */
#define LOAD_MAX_CONTENDERS SLOWDOWN_CONTENDERS_MAX
/*  Steps, and rows of a trace. */
#define LOAD_MAX_STEPS 1000
#define LOAD_MAX_TRACE_ROWS 100000
/*  The largest load L of a step or a trace row: 64 CPU-bound processes. */
#define LOAD_MAX_L 64.0
/*  The largest time of a step or a trace row, and of a mean demand or a
 *  contender's period: a year of platform seconds. */
#define LOAD_MAX_TIME_S 3.2e7
/*  The smallest mean demand and period: shorter jobs are not load an
 *  emulator can follow, and would only cost it events. */
#define LOAD_MIN_TIME_S 1e-3
/*  The largest message of a contender. */
#define LOAD_MAX_MSG_BYTES (64u << 20)
/*  The longest trace file, bytes. */
#define LOAD_MAX_TRACE_BYTES (16u << 20)
/*  The largest delay_comm: a communicating contender that slows the node
 *  a thousandfold is no longer background load. */
#define LOAD_MAX_DELAY_COMM 1000.0

/*  One job stream: utilization U, CPU demands of mean mean_s drawn from
 *  demand, inter-arrival times of mean mean_s / U drawn from arrivals. */
typedef struct {
    double utilization;      /* [0, LOAD_MAX_UTILIZATION] */
    dist_kind_t demand_kind;
    double demand_mean_s;
    double demand_cv;        /* as the kind allows; exp: 1 */
    dist_kind_t arrival_kind;   /* default exp */
    double arrival_cv;          /* default 1 */
} load_stream_t;

/*  One on/off contender: in each period (exponentially distributed, of
 *  mean period_s, default 1) it computes with probability compute,
 *  communicates msg_bytes messages with probability comm, else idles. */
typedef struct {
    double compute;          /* [0, 1] */
    double comm;             /* [0, 1], compute + comm <= 1 */
    uint32_t msg_bytes;      /* 1 .. LOAD_MAX_MSG_BYTES; required if comm > 0 */
    double period_s;
} load_contender_t;

/*  A step or a trace row: the load L from at_s on. */
typedef struct {
    double at_s;             /* [0, LOAD_MAX_TIME_S], increasing */
    double load;             /* [1, LOAD_MAX_L] */
} load_point_t;

typedef struct load {
    load_stream_t *streams;  /* the job stream, then its classes */
    int nstreams;
    load_contender_t *contenders;
    int ncontenders;
    double *delay_comm;      /* ncontenders entries, or NULL: derived */
    load_point_t *steps;
    int nsteps;
    load_point_t *trace;     /* rows read from trace_path */
    int ntrace;
    char *trace_path;        /* as written, for messages; NULL: none */
    uint64_t seed;
} load_t;

/*  Read a load description: obj is the node's "load" object, walked by
 *  the caller's walker w (so messages name the node and the key, e.g.
 *  "fork7.json: tree[3] (node "Lab3"): load.jobs.utilization: must be
 *  at most 0.95, got 1"). A trace's path is relative to base_dir (the
 *  config's directory; NULL: the working directory); the file is read
 *  here, its errors named by file and line ("lab3.csv:4: time_s 2 is
 *  before the previous row's 3"). Alternatively, a description that
 *  config_to_json wrote carries the rows inline ("trace_rows") and no
 *  file is read. Returns a new description, or NULL with the message
 *  left in w's document. */
load_t *load_parse (jsonw_t *w, const char *base_dir);

/*  Read the trace file at path (relative to base_dir; NULL: the working
 *  directory) into self's trace rows, replacing any. Returns 0, or -1
 *  with a message naming the file, and the line for a bad row
 *  ("lab3.csv:4: time_s 2 is before the previous row's 3"), in err.
 *  `treefarm load record` checks its own output with it. */
int load_read_trace (load_t *self, const char *path, const char *base_dir, char *err,
                     size_t errlen);

/*  The description as JSON, every default explicit and the trace's rows
 *  inline, so that a node parses what the controller read without the
 *  file. New reference. */
json_t *load_to_json (const load_t *self);

/*  Destroy and null the pointer. Safe on NULL. */
void load_destroy (load_t **self_p);

/*  The kinds present, "+"-joined in the order jobs, contenders, steps,
 *  trace ("jobs+steps"), or "none". Borrowed, valid while self lives. */
const char *load_kind_str (const load_t *self);

/*  Total utilization of the job streams. */
double load_utilization (const load_t *self);

/*  The load L of the steps and of the trace at platform time t (each 1
 *  before its first point; a point holds until the next, the last for
 *  ever), multiplied. */
double load_level_at (const load_t *self, double t);

/*  The time of the first step or trace row after platform time t, where
 *  load_level_at may change next; INFINITY when none (or self NULL). */
double load_next_point (const load_t *self, double t);

/*  Figueira & Berman's delay_comm(i) for i = 1 .. ncontenders into out:
 *  the description's own, else the emulator's (docs/load.md): i
 *  communicating contenders take i / (i + 1) of the node's link of
 *  link_mbps MB/s, which costs its CPU ir_recv per MB/s:
 *  delay_comm(i) = 1 / (1 - ir_recv * link_mbps * i / (i + 1)) - 1
 *  (0 when that product reaches 1: the config check refuses such a
 *  node before). */
void load_delay_comm (const load_t *self, double ir_recv, double link_mbps,
                      double *out);

/*  The rate factor f in (0, 1] the description predicts at platform time
 *  t: (1 - U) x 1 / slowdown(contenders) x 1 / L(t), the three kinds
 *  taken as independent. ir_recv and link_mbps as above. A NULL self
 *  predicts 1. */
double load_predict (const load_t *self, double t, double ir_recv, double link_mbps);

/*  The same in the long run: L of the last step and the last trace row
 *  (what `treefarm bound --loaded` prices). */
double load_predict_long_run (const load_t *self, double ir_recv, double link_mbps);

#endif
