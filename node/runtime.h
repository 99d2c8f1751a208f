/*  runtime — the parts of one node's ZeroMQ runtime and what they ask of
 *  each other. Private to the files named here; node.h is the public face.
 *
 *  node_t is one struct of parts, each written by one file only (its
 *  owner, named on the part); the others read a part's object pointers
 *  (a socket, the core, the engine) and call their own APIs on them, or
 *  call the owner's functions below:
 *  - handshake.c: HELLO, CONFIG, bind, BOUND, START; the connections;
 *  - build.c: the decision core and the workers and models around it;
 *  - act.c: carrying out the core's actions, the parent's outbox;
 *  - receive.c: messages from the parent, the children, the controller
 *    and the workers, through the pure conversions of node/inbound.h;
 *  - report.c: samples, the online fit, the trace, STATS and REPORT;
 *  - beat.c: heartbeats, silent peers, lost children;
 *  - measure_glue.c: calibration phases (treefarm measure);
 *  - clock.c: what is due on the clock, and how long the loop may sleep;
 *  - loadgen.c: background load, through loademul.c (emulated) or
 *    loadreal.c (real processes);
 *  - adapt.c: an adapting run's adaptation (node/adaptor.h: the live
 *    estimates, the changes they declare, re-planning, SUBTREE as the
 *    bound moves, the costly actions), fed and carried out here;
 *  - node.c: the event loop, the wait and teardown.
 */
#ifndef TF_RUNTIME_H
#define TF_RUNTIME_H

#include <czmq.h>
#include <jansson.h>
#include <stdint.h>

#include "node/calphase.h"
#include "node/cargo.h"
#include "node/cmdrun.h"
#include "node/core.h"
#include "node/emulate.h"
#include "node/engine.h"
#include "node/liveness.h"
#include "node/node.h"
#include "node/observe.h"
#include "node/payload.h"
#include "node/subtree.h"
#include "overlay/config.h"
#include "overlay/curve.h"
#include "overlay/proto.h"
#include "overlay/proto_run.h"
#include "overlay/proto_stats.h"
#include "overlay/ratelog.h"
#include "overlay/trace.h"

/*  serve's loop ends well: STOP came and the final REPORT was heard. Not
 *  0 (go on), not 1 or -1 (what node_fail and failed actions return). */
#define NODE_STOPPED 2
/*  serve's loop ends because the parent is lost. */
#define NODE_ORPHANED 3
/*  The identity suffix of a child's heartbeat connection to its parent:
 *  "NAME/beat" ('/' is not allowed in a node's name). */
#define NODE_BEAT_SUFFIX "/beat"

/*  handshake.c: the connections, and what CONFIG and START said. */
typedef struct {
    zsock_t *ctl;            /* the controller */
    zsock_t *parent;         /* the parent (NULL on the root) */
    zsock_t *beat;           /* the heartbeat connection to the parent:
                                heartbeats never wait behind chunks */
    zsock_t *router;         /* the children (NULL on a leaf) */
    char *endpoint;          /* our children's endpoint, "" for leaves */
    zhashx_t *slots;         /* child name -> slot + 1 (as a pointer) */
    zcert_t *cert;           /* our CURVE keys (--cert), or NULL: off */
    char controller_key[CURVE_KEY_LEN + 1];   /* the controller's public key */
    char parent_key[CURVE_KEY_LEN + 1];       /* our parent's, from CONFIG */
    zactor_t *auth;          /* the children ROUTER's ZAP handler */
    char *zap_dir;           /* its store, when nodes may join under us
                                (a directory it rereads), or NULL */
    proto_run_t run;         /* CONFIG's run object: commands, and on the
                                root the tasks file, OUT and the journal
                                (all zero: no run object) */
    int measure;             /* calibration mode (START mode "measure") */
    double since;            /* START "since": a node that joined the run
                                counts its times from the run's START */
} node_link_t;

/*  build.c: the core and what works around it. */
typedef struct {
    core_t *core;
    engine_t *engine;
    payload_store_t *payloads;   /* synthetic tasks' bytes, to forward */
    cargo_t *cargo;          /* command tasks' files (node/cargo.h) */
    cmdrun_t **cmdrun;       /* their workers, one a slot */
    uint32_t nworkers;
    emul_t *emul;            /* observed transfers, emulated interference */
    subtree_t *subtree;      /* our subtree's bound, bottom-up */
    double bps_per_mbps;     /* physical bytes/s per platform MB/s */
} node_parts_t;

/*  act.c: what goes to the parent at the end of a loop turn, and the
 *  children a send failed to. */
typedef struct {
    zmsg_t *outbox[PROTO_MAX_BATCH];   /* this turn's REQUESTs, ACKs and
                                          DONEs for the parent */
    uint32_t nout;
    unsigned char *unreachable;   /* per child: a send to it failed, to be
                                     declared lost once the actions in
                                     hand are done */
    zlist_t *recorded;       /* root: RECORDEDs whose records the journal
                                has not made durable yet, in order */
} node_outbox_t;

/*  receive.c: refused messages. */
typedef struct {
    uint64_t refused;        /* messages that failed to decode */
    ratelog_t refusals;      /* how often refusals are said */
} node_receive_t;

/*  report.c: the effective compute rate (node/ratewin.h): the engine's
 *  busy time, the window over it. */
typedef struct {
    struct ratewin *win;     /* the window, platform units and seconds */
    double busy;             /* wall seconds the engine computed, its
                                tasks that ended */
    double since;            /* when its running task started (tf_now),
                                or -1: idle */
} node_rate_t;

/*  report.c: samples, the fit, the trace, the compute time. */
typedef struct {
    observe_t *observe;      /* the sampler and the online fit */
    double observe_cpu;      /* thread CPU seconds spent in them */
    double clock_cost;       /* what reading the thread CPU clock adds to
                                a timed span, seconds */
    json_t *fit;             /* the estimates as STATS carries them, */
    long fit_n;              /* solved at this many busy intervals, */
    double fit_at;           /* at this time */
    double *observed;        /* scratch: bytes observed, in and per child */
    double units, units_at;  /* the engine's cumulative units, and when we
                                read them */
    double compute_seconds;
    trace_t *trace;          /* its spans, from START; NULL: not traced */
    double trace_t0;         /* when START came (tf_now): time 0 of the
                                trace and of the samples */
    node_rate_t rate;
} node_report_t;

/*  beat.c: liveness of the peers and of the controller. */
typedef struct {
    liveness_t *live;        /* peers: children 0 .. n-1, the parent n */
    unsigned char *warmed;   /* per child: its warm-up BEATs sent */
    double ctl_heard;        /* when the controller last said anything */
} node_beat_t;

/*  measure_glue.c: the calibration phase. */
typedef struct {
    calphase_t *cal;         /* the calibration phase in progress */
    uint64_t *probe_out;     /* scratch: probe bytes acked per child */
    int *streams;            /* scratch: children a MEASURE names */
} node_measure_t;

/*  clock.c: the emulated speed's inputs and how late the loop woke. */
typedef struct {
    double *send_bytes;      /* per child: scratch for bytes sent */
    double loop_lag, loop_lag_max;   /* seconds the event loop woke after
                                        it meant to: total, worst */
    double next_stats;       /* when STATS is due */
    double load_factor;      /* emulated: the background's (loadgen_factor);
                                the engine runs at their product */
} node_clock_t;

/*  loadgen.c, loademul.c, loadreal.c: the background load this node
 *  generates (overlay/load.h), from START on. */
typedef struct {
    const struct load *load; /* me->load, or NULL: none */
    double t0;               /* when START came (tf_now): platform time 0 */
    struct bgload *emul;     /* loademul.c: the emulated load (node/bgload.h) */
    struct bgload **links;   /* loademul.c, per child: its load's contenders,
                                to pace its link (NULL: none communicate) */
    struct burner *real;     /* loadreal.c: the load processes (node/burner.h) */
    struct {                 /* loademul.c: the running task's end, as the
                                model runs ahead (bgload_finish) */
        double start;        /* the task it is of (its start), */
        double end;          /* wall time; -1: none */
    } ahead;
} node_load_t;

/*  adapt.c: an adapting run's adaptation (node/adaptor.h), NULL when
 *  the run does not adapt. */
typedef struct {
    struct adaptor *ad;
} node_adapt_t;

/*  reparent.c: a node whose parent was lost, in an adapting run. */
typedef struct {
    char parent[64];         /* our parent's name (a name is at most 63
                                characters): the config's, then the one
                                REPARENT names */
    double orphaned_at;      /* when the parent was lost (tf_now); 0: not
                                an orphan */
    int rewait;              /* the sockets changed: the loop's wait set
                                is made anew */
} node_moved_t;

typedef struct {
    const node_opts_t *opts;
    config_t *cfg;           /* handshake.c; read-only after CONFIG */
    const config_node_t *me; /* our node in it */
    node_link_t link;
    node_parts_t parts;
    node_outbox_t out;
    node_receive_t in;
    node_report_t rep;
    node_beat_t beat;
    node_measure_t meas;
    node_clock_t clock;
    node_load_t load;
    node_adapt_t adapt;
    node_moved_t moved;
} node_t;

/*  --- node.c ------------------------------------------------------------ */

/*  Log a line on stderr, prefixed with the node's name. */
void node_log (const node_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/*  Tell the controller why we give up, and say it on stderr too. Returns
 *  1 (a failure's exit status). */
int node_fail (node_t *self, const char *error);

/*  Lifecycle messages, only with --verbose. */
#define node_verbose(self, ...) \
    do { \
        if ((self)->opts->verbose) \
            node_log ((self), __VA_ARGS__); \
    } while (0)

/*  --- loadgen.c: background load --------------------------------------------
 *
 *  Times are tf_now() wall seconds; the load's own clock is platform
 *  seconds since START, (now - t0) x time_scale. Every function is safe
 *  on a node without load (nothing started: factor 1, no deadline, no
 *  background). */

/*  Start generating the node's load at now (START). Returns 0, or -1 with
 *  a message in err. */
int loadgen_start (node_t *self, double now, char *err, size_t errlen);

/*  Emulated: the factor the node's own compute runs at because of the
 *  background now, in (0, 1] (its share of the CPU, the CPU its
 *  communicating contenders cost, 1 / L), the model advanced to now;
 *  the engine's speed between interference charges (node/clock.c). Real
 *  mode: 1 (the kernel shares the CPU). */
double loadgen_factor (node_t *self, double now);

/*  Emulated, while a task computes: seconds from now until it ends as
 *  the background model has it (run ahead, node/loademul.c), having set
 *  the engine to end it then; the loop need not wake before for the
 *  background. -1 when the engine's own deadline rules (no load, real
 *  mode, idle). */
double loadgen_deadline (node_t *self, double now);

/*  The background's share of the node's CPU, integrated from START to
 *  now: wall seconds of a whole CPU (of the node's CPUs, in real mode).
 *  Divided by the elapsed time it is the realized utilization. */
double loadgen_busy_integral (node_t *self, double now);

/*  The node's compute rate its load description predicts at now, units
 *  per second: C x load_predict (overlay/load.h); C without load. */
double loadgen_predicted (node_t *self, double now);

/*  Stop the load: every process it started is gone when this returns. */
void loadgen_stop (node_t *self);

/*  The same per mode, called by loadgen.c only (loademul.c, loadreal.c). */
int loademul_start (node_t *self, double now, char *err, size_t errlen);
double loademul_factor (node_t *self, double now);
double loademul_deadline (node_t *self, double now);
double loademul_busy_integral (node_t *self, double now);
void loademul_stop (node_t *self);
/*  Emulated, a parent: each child whose load has communicating
 *  contenders keeps 1 / (j + 1) of its link for our transfers while j of
 *  them communicate; the parent runs a model of those contenders
 *  (bgload_new_contenders: their periods are the child's own) and paces
 *  the child's chunks to it (core_set_link_share). Start at now (t0 set);
 *  follow to now; seconds until a share changes while a transfer is in
 *  flight (-1: none); stop. Safe on a node without such children. */
int loademul_links_start (node_t *self, char *err, size_t errlen);
/*  What loademul_factor does, without a node (for tests): run model b
 *  from where it stands to wall time now, the foreground computing over
 *  the spans of engine's task in the loop, each change of b's factor
 *  setting engine's speed to interference x factor dated back to its
 *  event; wall time w is platform time (w - t0) x time_scale. */
typedef struct {
    double t0, time_scale, interference;
} loademul_clock_t;
void loademul_follow (struct bgload *b, engine_t *engine, const loademul_clock_t *c,
                      double now);
void loademul_links_follow (node_t *self, double now);
double loademul_links_deadline (node_t *self, double now);
void loademul_links_stop (node_t *self);
int loadreal_start (node_t *self, double now, char *err, size_t errlen);
double loadreal_busy_integral (node_t *self, double now);
void loadreal_stop (node_t *self);

/*  --- adapt.c: adaptation (docs/adapt.md, node/adaptor.h) ----------------
 *
 *  Each is a no-op until adapt_start made the adaptation (a run that
 *  does not adapt, a calibration: adapt.ad NULL), except adapt_subtree
 *  and adapt_step, which are called only once it did. */

/*  Ready the adaptation at START (references: the configured rates; the
 *  subtree bound follows the live estimates from now on): before any
 *  SUBTREE (node.c's begin). A second call changes nothing. */
void adapt_start (node_t *self);

/*  A sample was taken at now (report.c, take_sample): feed the compute
 *  and link estimates, declare and re-plan what changed; children
 *  shrunk whose subtree holds nothing of ours any more leave (DRAINED to
 *  the controller, which stops them). */
void adapt_sample (node_t *self, double now);

/*  The online fit was solved (report.c): feed the IR estimates, then
 *  declare and re-plan what changed. */
void adapt_fit (node_t *self, const observe_estimates_t *est);

/*  Child slot's SUBTREE (m, decoded) in an adapting run: its bounds and
 *  live rates believed, ours stepped and passed up, a costly action
 *  weighed (adaptor_child_subtree). Returns 0; 1 when refused (err); -1
 *  if SUBTREE could not be sent. */
int adapt_subtree (node_t *self, int slot, const proto_msg_t *m, char *err,
                   size_t errlen);

/*  An adapting run: step our subtree bound and pass it up when it moved
 *  or force is set (adaptor_step). Returns 0, or -1 if SUBTREE could not
 *  be sent. */
int adapt_step (node_t *self, int force);

/*  1 if child slot was shrunk and has left the run. */
int adapt_child_left (const node_t *self, int slot);

/*  A node joined in vacant slot, described by c: its estimates start
 *  from its rates. */
void adapt_attach (node_t *self, int slot, const config_node_t *c);

/*  The changes declared and the actions weighed so far, for STATS:
 *  copied into *changes and *actions (the caller's proto_stats_clear
 *  frees them); empty when the run does not adapt. */
void adapt_fill (const node_t *self, proto_changes_t *changes, proto_actions_t *actions);

/*  Free the adaptation. */
void adapt_close (node_t *self);

/*  --- attach.c: a joining node becomes a child (docs/adapt.md) ----------- */

/*  ATTACH from the controller (m): take the node it describes in the
 *  first vacant slot, then answer ATTACHED (the slot ready, or why not).
 *  Returns 0: a refusal is the controller's to handle. */
int attach_child (node_t *self, const proto_msg_t *m);

/*  --- handshake.c --------------------------------------------------------- */

/*  The handshake: HELLO, CONFIG (the experiment, the run, the keys), bind
 *  the children's endpoint, BOUND, START (connect to the parent). Fills
 *  self->cfg, self->me and self->link. Returns 0, or -1 with a message in
 *  err. */
int handshake_run (node_t *self, char *err, size_t errlen);

/*  Wait up to timeout_ms for a message of the wanted command from the
 *  controller, decoded into *out (the caller clears it); anything else
 *  is logged and dropped. Returns 0, or -1 with a message in err (the
 *  time ran out, STOP came, or the process was interrupted). */
int handshake_wait_control (node_t *self, proto_command_t want, int timeout_ms,
                            proto_msg_t *out, char *err, size_t errlen);

/*  Connect to the parent at endpoint: the task connection and the
 *  heartbeat one, with CURVE when on (link.parent_key). Returns 0, or -1
 *  with a message in err. */
int handshake_connect_parent (node_t *self, const char *endpoint, char *err,
                              size_t errlen);

/*  Close the connections and free what the handshake took. */
void handshake_close (node_t *self);

/*  --- reparent.c: an orphan moved under a new parent (docs/adapt.md) --- */

/*  How long an orphan waits for REPARENT before it stops: the controller
 *  learns of the loss from this node's LOST at once, and takes it in
 *  elsewhere or stops it within a round trip or two. */
#define NODE_REPARENT_WAIT_S 30.0

/*  1 if this node, losing its parent, waits to be re-parented (an
 *  adapting run, not a calibration, not the root). */
int reparent_may_wait (const node_t *self);

/*  The parent is lost (why): tell the controller, drop the connections
 *  to it, have the core make stale what came from it. Returns 0, or
 *  non-zero after a fatal error. */
int reparent_orphaned (node_t *self, const char *why);

/*  An orphan that waited NODE_REPARENT_WAIT_S: NODE_ORPHANED; else 0,
 *  *wait lowered to that deadline. */
int reparent_check (node_t *self, double now, double *wait);

/*  REPARENT from the controller: (orphaned first if not yet) connect to
 *  the new parent, ask it anew. Returns 0, or non-zero after a fatal
 *  error (said). */
int reparent_on_message (node_t *self, const proto_msg_t *m);

/*  --- build.c ------------------------------------------------------------- */

/*  The core (node/setup.h) and the models around it: the payload store,
 *  command tasks' files and workers, emulated interference, the subtree
 *  bound, the engine. Returns 0, or -1 with a message in err. */
int build_parts (node_t *self, char *err, size_t errlen);

/*  Destroy what build_parts made. */
void build_close (node_t *self);

/*  --- act.c --------------------------------------------------------------- */

/*  Ready the outbox for a run of the node's children. */
void act_start (node_t *self);

/*  Offer one event to the core. Returns 1 if accepted, 0 if refused
 *  (logged with the peer and dropped). */
int act_offer (node_t *self, core_event_t *ev, const char *peer);

/*  Carry out the actions of the last accepted event. Returns 0, or -1
 *  after reporting a failed action (fatal) to the controller. */
int act_perform (node_t *self);

/*  Offer an event, carry out what it asks for, and declare lost the
 *  children a send failed to. Returns 0, or non-zero after a fatal
 *  error (said). */
int act_feed (node_t *self, core_event_t *ev, const char *peer);

/*  Send what the outbox holds, as one BATCH when it holds several.
 *  Returns 0, or -1 if the parent's socket refused it. */
int act_flush_parent (node_t *self);

/*  Send a message to child slot (consumed). A child whose connection is
 *  gone is noted unreachable. Returns 0, or -1 on another error. */
int act_send_to_child (node_t *self, int slot, zmsg_t **msg_p);

/*  Once every child has reported its subtree's bound, pass ours up:
 *  the first time, and in an adapting run whenever it changed (with our
 *  live compute rate and IR_r). Returns 0, or -1 if it could not be
 *  sent. */
int act_subtree_bound (node_t *self);

/*  The one path SUBTREE goes up by: as act_subtree_bound, and when force
 *  is set (our own live values changed) also with an unchanged bound,
 *  once it is known. */
int act_subtree_send (node_t *self, int force);

/*  1 if a send to child slot failed (or it was cut off), else 0. */
int act_unreachable (const node_t *self, int slot);

/*  Send nothing more to child slot (it is lost). */
void act_cut_off (node_t *self, int slot);

/*  Root: send the RECORDEDs held for the journal once it has nothing
 *  pending (every record written and fsync'd). Returns 0, or -1 if the
 *  controller's socket refused one. */
int act_release_recorded (node_t *self);

/*  Drop what the outbox holds, unsent (the parent is lost). */
void act_drop_outbox (node_t *self);

/*  Drop what the outbox holds and free its state. */
void act_close (node_t *self);

/*  --- receive.c ----------------------------------------------------------- */

/*  A message from the parent, from a child (on the children's ROUTER),
 *  from the engine, from command worker `slot`: turned into core events
 *  and fed to the core. Each returns 0, or non-zero after a fatal error
 *  (said). */
int receive_parent (node_t *self);
int receive_child (node_t *self);
int receive_engine (node_t *self);
int receive_cmdrun (node_t *self, uint32_t slot);

/*  A message from the controller. Returns 1 when it says STOP, 0 to go
 *  on, -1 on a fatal error. */
int receive_control (node_t *self);

/*  Count a refused message from peer and say why (rate limited). */
void receive_refuse (node_t *self, const char *peer, const char *why);

/*  Say why something was refused, unless refusals come faster than
 *  RATELOG_BURST a second: then count them and say how many later. */
void receive_log_refusal (node_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/*  Say how many refusals went unsaid, when that is due. */
void receive_flush_refusals (node_t *self, double now);

/*  A message on a heartbeat connection (consumed): a BEAT, nothing else
 *  (anything else is refused). */
void receive_beat_message (node_t *self, zmsg_t **msg_p, const char *name);

/*  Messages refused so far. */
uint64_t receive_refused (const node_t *self);

/*  --- report.c ------------------------------------------------------------ */

/*  Ready the sampler and the fit. */
void report_start (node_t *self);

/*  START: time 0 of the samples and of the timeline; the timeline starts
 *  when the run asks for one. */
void report_begin_trace (node_t *self);

/*  The timeline, when the run asks for one: a task begins (or ends) on
 *  kind's track `lane` now (span_at: at when, a tf_now () time);
 *  chunk_span: a chunk of `count` sent or received, the first beginning
 *  the task's span, the last ending it. */
void report_span (node_t *self, int begins, trace_kind_t kind, uint32_t lane,
                  uint64_t task);
void report_span_at (node_t *self, int begins, trace_kind_t kind, uint32_t lane,
                     uint64_t task, double when);
void report_chunk_span (node_t *self, trace_kind_t kind, uint32_t lane, uint64_t task,
                        uint32_t index, uint32_t count);

/*  The engine's cumulative units at now (after one of its messages); a
 *  sample when due. */
void report_units (node_t *self, double now, double units);

/*  Platform seconds since START at wall time now (the time of an adapting
 *  run's changes and actions). */
double report_platform_time (const node_t *self, double now);

/*  The engine's units and when they were read. */
double report_engine_units (const node_t *self, double *at);

/*  Wall seconds the engine computed from START up to now. */
double report_busy_seconds (const node_t *self, double now);

/*  A task ran `seconds` on worker lane: its span ends at ended (a tf_now
 *  time), its time counts. */
void report_computed (node_t *self, double seconds, uint32_t lane, uint64_t task,
                      double ended);

/*  The engine starts a task at now: its busy time runs. */
void report_engine_started (node_t *self, double now);

/*  The engine has nothing to do: the samples' busy interval ends. */
void report_engine_idle (node_t *self);

/*  A sample now if one is due while the engine is idle (it then sends
 *  nothing). */
void report_idle_sample (node_t *self, double now);

/*  STATS (or, final, REPORT) to the controller. Returns 0, or -1 if it
 *  could not be sent. */
int report_stats (node_t *self, proto_command_t command);

/*  After STOP: the final REPORT, then wait for the controller's BYE.
 *  Returns 0, or -1 (after saying why). */
int report_final (node_t *self);

/*  Free the sampler, the fit and the trace. */
void report_close (node_t *self);

/*  --- beat.c -------------------------------------------------------------- */

/*  Watch the peers from now, and warm the quiet connections up. */
void beat_start (node_t *self, double now);

/*  The controller said something at now. */
void beat_heard_controller (node_t *self, double now);

/*  Seconds since the controller last said anything. */
double beat_controller_silence (const node_t *self, double now);

/*  Child slot (or, slot = nchildren, the parent) said something at now. */
void beat_heard (node_t *self, int slot, double now);

/*  1 if child slot is lost. */
int beat_lost (const node_t *self, int slot);

/*  Child slot left the run (drained, docs/adapt.md "Shrink"): no more
 *  heartbeats to it, and its silence is not a loss. */
void beat_forget (node_t *self, int slot);

/*  Traffic on child slot's heartbeat connection: the first time, send it
 *  the warm-up BEATs back. */
void beat_warm_child (node_t *self, int slot);

/*  Send heartbeats when due and lose who fell silent; lower *wait to the
 *  next deadline. Returns 0, NODE_ORPHANED when the parent is lost, or
 *  another non-zero status after a fatal error. */
int beat_keep_alive (node_t *self, double now, double *wait);

/*  A message on our heartbeat connection: the parent is alive. */
void beat_on_parent (node_t *self);

/*  The parent is gone (node/reparent.c): stop watching it; a new one
 *  connected at now: watch it, and send it the warm-up BEATs. */
void beat_forget_parent (node_t *self);
void beat_revive_parent (node_t *self, double now);

/*  Declare lost every child a send failed to. Returns 0, or non-zero
 *  after a fatal error. */
int beat_settle_losses (node_t *self);

/*  Free the liveness state. */
void beat_close (node_t *self);

/*  --- measure_glue.c ------------------------------------------------------ */

/*  Ready the calibration state. */
void measure_start (node_t *self);

/*  MEASURE: stream to the children named, the engine held if the phase
 *  is idle here, and measure. Returns 0 (a bad MEASURE is refused), or -1
 *  on a fatal error. */
int measure_on_message (node_t *self, const proto_msg_t *m);

/*  The warm-up snapshot, or the phase's end (the engine released if the
 *  phase held it) and MEASURED, when due. Returns 0, or -1 if the engine
 *  or the report could not be reached. */
int measure_tick (node_t *self, double now);

/*  Seconds until the phase next needs a tick, negative when none. */
double measure_next (node_t *self, double now);

/*  Free the calibration state. */
void measure_close (node_t *self);

/*  --- clock.c ------------------------------------------------------------- */

/*  Ready the clock's state: STATS due at now. */
void clock_start (node_t *self, double now);

/*  What is due on the clock at now. Returns how long the loop may sleep,
 *  or a negative number after a fatal error (said). */
double clock_work (node_t *self, double now);

/*  Bring the background load up to now (emulated: the engine's speed
 *  follows it, each change dated back to its moment). Call before the
 *  engine in the loop is read. */
void clock_follow_load (node_t *self, double now);

/*  Emulated interference: when the engine in the loop says its task is
 *  done at now, charge the bytes moved since the last speed update
 *  first (which may push the task's end later). Call after
 *  clock_follow_load, before the engine is read. */
void clock_settle (node_t *self, double now);

/*  The loop woke `late` seconds after the time it slept until. */
void clock_note_lag (node_t *self, double late);

/*  The loop's lag: total, and the worst single one in *max. */
double clock_lag (const node_t *self, double *max);

/*  Free the clock's state. */
void clock_close (node_t *self);

#endif
