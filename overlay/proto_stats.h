/*  proto_stats — the STATS and REPORT messages: one struct, one encoder,
 *  one decoder, and the one table of per-node counters.
 *
 *  A node sends STATS every 250 ms and a final REPORT after STOP, both
 *  with body {stats: {...}}: its counters (proto_counters: the same table
 *  names them in STATS, REPORT, results.json and nodes.csv), its engine
 *  time and mean emulated speed, its online fit (opaque here, see
 *  docs/measure.md), its effective compute rate and background load
 *  (proto_rate_stats_t), how far it fell behind its clock (lag), and on the
 *  root the tree's bound. A REPORT adds, per child, what the node sent it,
 *  and two texts in a payload frame, their lengths in the body
 *  (samples_bytes, trace_bytes): the sampler's intervals as CSV, and in a
 *  traced run its timeline (at most TRACE_MAX_TEXT bytes). docs/protocol.md
 *  lists the fields.
 *
 *  Decoding is strict on what it knows — a counter that is not a
 *  non-negative integer, a time that is not a finite number >= 0, more
 *  children than the node has — and ignores keys it does not know, so an
 *  older controller can file a newer node's STATS.
 */
#ifndef TF_PROTO_STATS_H
#define TF_PROTO_STATS_H

#include <czmq.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "overlay/bound.h"
#include "overlay/proto.h"

/*  What a node sent one child (REPORT). */
typedef struct {
    char *name;
    uint64_t tasks, bytes, requested;
    double send_seconds;     /* wall seconds spent sending to it */
} proto_child_stats_t;

/*  The longest load kind ("jobs+contenders+steps+trace"), NUL included. */
#define PROTO_LOAD_KIND_MAX 48

/*  The node's effective compute rate and its background load
 *  (docs/measure.md, "Effective compute rate"). On the wire, keys of
 *  "stats": compute_measured, compute_stderr, compute_predicted (each a
 *  finite number >= 0, left out while unknown), load_utilization (a
 *  finite number >= 0) and load_kind (words of a-z joined by '+'). */
typedef struct {
    double measured;         /* platform units/s over the node's window;
                                NaN: unknown (it has not computed) */
    double measured_se;      /* its standard error; NaN: unknown */
    double predicted;        /* what its load description predicts now,
                                platform units/s; NaN: unknown */
    double load_utilization; /* the background's realized share of the
                                CPU since START; NaN: unknown */
    char load_kind[PROTO_LOAD_KIND_MAX];   /* "none", "jobs+steps"...;
                                              "": unknown */
} proto_rate_stats_t;

/*  One change a node declared in a live estimate (docs/adapt.md). */
#define PROTO_CHANGE_WHAT_MAX 16
#define PROTO_CHANGE_NODE_MAX 64
typedef struct {
    char node[PROTO_CHANGE_NODE_MAX];   /* whose rate: the node, or for a
                                           link or IR_s, the child */
    char what[PROTO_CHANGE_WHAT_MAX];   /* "compute", "link", "ir_send",
                                           "ir_recv" */
    double from, to;         /* units/s, MB/s, or the IR */
    double at_s;             /* platform seconds since START */
} proto_change_t;

/*  The changes a node declared since START, at most PROTO_MAX_CHANGES
 *  (node/live.h LIVE_MAX_CHANGES), and how many more it did not keep. */
#define PROTO_MAX_CHANGES 256
typedef struct {
    proto_change_t *items;   /* n entries, owned */
    int n;
    uint64_t dropped;
} proto_changes_t;

/*  The unit a change's figures are in: "units/s" (compute), "MB/s"
 *  (link), "" (an IR, or an unknown what). */
const char *proto_change_unit (const char *what);

/*  A change as people read it, into buf (len bytes): "compute 23.9 ->
 *  6.0 units/s", rates to 0.1, IRs to 4 significant digits ("ir_send
 *  0.0342 -> 0.06109"). */
void proto_change_text (const proto_change_t *c, char *buf, size_t len);

/*  One costly action a node weighed (docs/adapt.md, "Costly actions"):
 *  taken or not, with the gate's figures. */
typedef struct {
    char node[PROTO_CHANGE_NODE_MAX];   /* the node that weighed it */
    char what[PROTO_CHANGE_WHAT_MAX];   /* "reclaim", "restore", "shrink" */
    char child[PROTO_CHANGE_NODE_MAX];  /* the child it concerns */
    uint32_t hold;           /* the tasks the child may hold after it */
    uint32_t tasks;          /* tasks it moves (an estimate: the child
                                gives back what it holds) */
    double saved_s, cost_s;  /* the gate's figures, platform seconds */
    int taken;
    double at_s;             /* platform seconds since START */
} proto_action_t;

/*  The actions a node weighed since START, at most PROTO_MAX_ACTIONS
 *  (node/steer.c), and how many more it did not keep. */
#define PROTO_MAX_ACTIONS 256
typedef struct {
    proto_action_t *items;   /* n entries, owned */
    int n;
    uint64_t dropped;
} proto_actions_t;

/*  An action as people read it, into buf (len bytes): "reclaim from Lab4:
 *  2 tasks back, it holds 1 (saves 16.8 s, costs 0.4 s)", "no reclaim
 *  from Tenn: 2 tasks would save 12.0 s and cost 30.0 s", "restore Lab4:
 *  it holds 3 again". */
void proto_action_text (const proto_action_t *a, char *buf, size_t len);

/*  A list of STATS, for the decoders of its parts: "KEY", an array of at
 *  most `most` entries (checked before anything is allocated), each read
 *  by get into the next of *items (entries of `size` bytes, allocated,
 *  *n of them read), and "KEY_dropped" into *dropped; both optional.
 *  Returns 0, or -1 with a message in err (*items then the caller's to
 *  free). */
typedef int (*proto_entry_fn) (const json_t *entry, size_t i, void *item, char *err,
                               size_t errlen);
int proto_stats_get_list (const json_t *stats, const char *key, int most, size_t size,
                          proto_entry_fn get, void **items, int *n, uint64_t *dropped,
                          char *err, size_t errlen);

/*  overlay/proto_actions.c, for proto_stats.c: "actions" and
 *  "actions_dropped" into o (nothing when there are none); and read back
 *  from a decoded "stats" object, strictly (0, or -1 with a message in
 *  err; out's items are then the caller's to free). */
void proto_actions_to_json (json_t *o, const proto_actions_t *a);
int proto_actions_get (const json_t *stats, proto_actions_t *out, char *err,
                       size_t errlen);

typedef struct {
    /*  The counters (proto_counters names them). */
    uint64_t computed, forwarded, received, requested;
    uint64_t bytes_in, bytes_out, malformed;
    uint64_t completed, duplicates;      /* the root's */
    uint64_t slots;          /* tasks it computes at once (node/core.h) */
    uint64_t requeued;       /* tasks queued again: given to a child that
                                was lost */
    uint64_t reclaimed;      /* tasks its children gave back (docs/adapt.md,
                                "Reclaim") */
    uint64_t returned;       /* tasks it gave back to its parent */
    uint64_t stale;          /* tasks it had from a parent it lost: queued
                                again at the root (docs/adapt.md,
                                "Re-parent") */
    uint64_t stale_dropped;  /* of which, the completions or returns that
                                came later and were dropped */
    uint64_t copies;         /* end-game copies it computed (docs/policies.md,
                                "The end-game") */
    uint64_t copies_won;     /* of which, those that finished first */
    uint64_t cancelled;      /* CANCELs it sent to its children */
    uint64_t wasted;         /* completions computed but dropped at it (a
                                stale task, an end-game copy that lost) */
    uint64_t cpu_us;         /* CPU time of the node's process so far
                                (user + system, every thread), us */
    uint64_t observe_cpu_us; /* of which the sampler and the online fit
                                (node/observe.h): their calls' thread CPU
                                time, us */
    double compute_seconds;  /* wall seconds the engine was busy */
    double speed_mean;       /* emulated: mean interference factor while
                                computing (1 = none); 1 when absent */
    uint32_t held;           /* tasks held now */
    int computing;           /* tasks running now */
    int has_bound;           /* the root's: the tree's bound per model, */
    double bound[BOUND_MODEL_COUNT];     /* tasks/s, as the tree computed it
                                first (the one checked against the
                                offline bound) */
    int has_live_bound;      /* an adapting run's root: the tree's bound */
    double live_bound[BOUND_MODEL_COUNT];   /* now, tasks/s, of the
                                platform as the live estimates see it */
    double lag_loop, lag_engine, lag_link;   /* wall seconds the event loop,
                                the engine and the links fell behind their
                                clocks (docs/architecture.md, "Fidelity");
                                0 when absent */
    double lag_max;          /* the worst single lag */
    json_t *fit;             /* the online estimates; a reference, or NULL */
    proto_rate_stats_t rate; /* the effective rate and the load; a decoded
                                message's unknowns are NaN and "" */
    proto_actions_t actions; /* an adapting run's weighed actions, all of
                                them in every STATS and REPORT */
    proto_changes_t changes; /* an adapting run's declared changes, all of
                                them in every STATS and REPORT */
    proto_child_stats_t *children;   /* REPORT: nchildren entries, owned */
    int nchildren;
    char *samples_csv;       /* REPORT: the sampler's CSV, owned, or NULL */
    char *trace_csv;         /* REPORT of a traced run: the node's spans
                                (overlay/trace.h), owned, or NULL */
    /*  REPORT, encoding: the texts' writers, used instead of samples_csv
     *  and trace_csv where set. Each writes its text to out (0, or -1 on
     *  a write error), the same bytes each time it is called, with
     *  write_arg. They run before the rest of the message is encoded, so
     *  they may add to the figures above (a node counts their CPU time in
     *  cpu_us and observe_cpu_us). */
    int (*write_samples) (FILE *out, void *arg);
    int (*write_trace) (FILE *out, void *arg);
    void *write_arg;
    double trace_end;        /* seconds since START the trace is whole to */
    uint64_t trace_dropped;  /* spans the node could not keep */
} proto_stats_t;

/*  One counter of the table: its key (JSON, CSV column), where it lives in
 *  proto_stats_t, and whether it is a per-node figure (the rest, completed
 *  and duplicates, are the root's and reported for the run). */
typedef struct {
    const char *key;
    size_t offset;
    int per_node;
} proto_counter_t;

#define PROTO_NCOUNTERS 21
extern const proto_counter_t proto_counters[PROTO_NCOUNTERS];

/*  The value of counter i of s. */
uint64_t proto_counter (const proto_stats_t *s, int i);

/*  STATS or REPORT (command) carrying s; the REPORT fields (children,
 *  samples, and the trace when s has one) only in a REPORT. Returns a new
 *  message. A REPORT's texts are written straight into its payload frame,
 *  twice: once to measure them, once to fill the frame. With writers the
 *  text, tens of KB at a node's peak of memory (the REPORT), is then
 *  never held anywhere but in the frame. A text whose writer fails, or
 *  writes other bytes the second time, is left out (and then both are). */
zmsg_t *proto_stats_encode (proto_command_t command, proto_stats_t *s);

/*  The "stats" object of a decoded STATS or REPORT (proto_msg_t.object)
 *  and, for a REPORT, its payload frame (proto_msg_t.payload; NULL if it
 *  has none) into out, which the caller then clears with
 *  proto_stats_clear; a REPORT's children may number at most
 *  max_children. Returns 0, or -1 with a message naming the field and out
 *  left clear. */
int proto_stats_decode (const json_t *stats, zframe_t *payload, int report,
                        int max_children, proto_stats_t *out, char *err, size_t errlen);

/*  Release what s owns (fit, children, samples, trace) and zero it. */
void proto_stats_clear (proto_stats_t *s);

#endif
