/*  proto — the wire protocol, named once.
 *
 *  Every message is a ZeroMQ multipart message:
 *    frame 0: 2 bytes, {PROTO_VERSION, command}
 *    frame 1: a JSON object, the command's fields (at most PROTO_MAX_BODY,
 *             PROTO_MAX_PEER_BODY between a child and its parent)
 *    frame 2: the payload: CHUNK and RESULT; a REPORT's texts
 *    (a warm-up PING or BEAT: PROTO_WARM_FRAMES - 2 empty frames)
 *  A ROUTER socket adds the peer's identity in front; the runtime pops it
 *  before decoding. Decoding checks the version, the command, the frame
 *  count and sizes, and the body's fields strictly (a missing, extra or
 *  mistyped field is an error). A message that fails is counted and
 *  dropped by the caller, never trusted. docs/protocol.md lists the
 *  sequence of a run.
 *
 *  Two conversations use it:
 *  - node <-> controller (node DEALER -> controller ROUTER, identity = the
 *    node's name): HELLO, CONFIG, BOUND, START, STATS, FINISHED, STOP,
 *    RECORDED, REPORT, BYE, FAIL;
 *  - child <-> parent (child DEALER -> parent ROUTER, identity = the
 *    child's name): REQUEST, CHUNK, ACK, DONE, SUBTREE; a child sends the
 *    REQUESTs, ACKs and DONEs of one loop turn as one BATCH, which
 *    proto_unbatch splits before each part is decoded as usual.
 */
#ifndef TF_PROTO_H
#define TF_PROTO_H

#include <czmq.h>
#include <jansson.h>
#include <stdint.h>

#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/proto_run.h"

#define PROTO_VERSION 3
#define PROTO_MAX_BODY (64u << 20)   /* a body larger than this is refused */
#define PROTO_MAX_DONE 4096          /* completions in one DONE or RECORDED */
#define PROTO_MAX_BOUNDS 8           /* models in one SUBTREE */
#define PROTO_MAX_STREAMS 4096       /* children named in one MEASURE or
                                        MEASURED */

/*  Limits on what a peer may claim (docs/protocol.md, "Limits"). Every
 *  size in a message is checked against these before it sizes anything.
 *
 *  Bodies between a child and its parent are small: the largest is a DONE
 *  of PROTO_MAX_DONE entries of two integers, under 150 KiB. */
#define PROTO_MAX_PEER_BODY (1u << 20)
/*  The largest task payload a node accepts (physical bytes), the largest
 *  an experiment may declare. */
#define PROTO_MAX_TASK_BYTES CONFIG_MAX_TASK_BYTES
/*  The largest chunk payload: the config's largest chunk (chunk_kib
 *  65536) at payload scale 1. */
#define PROTO_MAX_CHUNK_BYTES (64u << 20)
/*  The largest stream a command task may claim, input bundle (CHUNK) or
 *  result (RESULT): overlay/config.h, CONFIG_MAX_STREAM_BYTES (16 GiB);
 *  such streams go through disk, not memory. */
#define PROTO_MAX_STREAM_BYTES CONFIG_MAX_STREAM_BYTES
/*  Nodes a retried command avoids (CHUNK "avoid"): overlay/config.h. */
#define PROTO_MAX_AVOID CONFIG_MAX_AVOID
/*  Messages in one BATCH: a loop turn's small messages to the parent. */
#define PROTO_MAX_BATCH 64

/*  The controller pings every node this often (wall seconds); a node that
 *  hears nothing from its controller for PROTO_CONTROL_SILENCE seconds
 *  exits on its own (docs/protocol.md, "Liveness"): ten pings missed, so
 *  a controller busy for a few seconds is not taken for dead, and a dead
 *  one leaves no node behind for long. */
#define PROTO_PING_EVERY 1.0
#define PROTO_CONTROL_SILENCE 10.0

/*  At the start of a run every process sends one warm-up PING on each
 *  control connection and one warm-up BEAT on each heartbeat connection,
 *  both ways: the command's two frames and PROTO_WARM_FRAMES - 2 empty
 *  ones. libzmq's pipe queues grow in chunks of 256 frames (16 KiB) and
 *  keep a second chunk from their 256th frame on, which these
 *  connections, a few messages a second, otherwise reach minutes into a
 *  run. The warm-up takes each queue past its 256th frame once, no
 *  further (512 held a third chunk at once: the 255-node tree's
 *  controller peaked at 61 MiB), so its memory is all taken at the start,
 *  not as the run goes (docs/performance.md, "Scale and memory"). One
 *  message of 256 frames is one wake-up and one decoding at each end,
 *  where 128 PINGs of two frames were 128. A PING or BEAT has 2 frames
 *  or exactly these. */
#define PROTO_WARM_FRAMES 256

typedef enum {
    PROTO_HELLO = 1,    /* node -> ctl  {name, pid, version}              */
    PROTO_CONFIG,       /* ctl -> node  {config: <experiment object>,
                                         run?: {...} (overlay/proto_run.h)}    */
    PROTO_BOUND,        /* node -> ctl  {endpoint: "tcp://..."|""}        */
    PROTO_START,        /* ctl -> node  {parent: "tcp://..."|"", mode:
                                         "run"|"measure"(, since: s)}     */
    PROTO_STATS,        /* node -> ctl  {stats: {...}}      periodic      */
    PROTO_FINISHED,     /* root -> ctl  {}                  bag complete  */
    PROTO_STOP,         /* ctl -> node  {}                                */
    PROTO_REPORT,       /* node -> ctl  {stats: {...}}      final, +
                                        its texts' payload frame         */
    PROTO_FAIL,         /* node -> ctl  {error: "..."}      before exit   */
    PROTO_REQUEST,      /* child -> parent {n}                            */
    PROTO_CHUNK,        /* parent -> child {task, units, bytes, index,
                                            count, kind?, avoid?} +
                                            payload frame                 */
    PROTO_ACK,          /* child -> parent {task, index}                  */
    PROTO_DONE,         /* child -> parent {done: [[task, node], ...]}    */
    PROTO_SUBTREE,      /* child -> parent {bounds: {model: tasks/s}(,
                                        compute, ir_recv)}                */
    PROTO_MEASURE,      /* ctl -> node  {phase, seconds, warmup,
                                         streams: [child, ...], idle?}    */
    PROTO_MEASURED,     /* node -> ctl  {phase, seconds, units_per_s,
                                         recv_mbps, send_mbps: {child: r}} */
    PROTO_BYE,          /* ctl -> node  {}   REPORT received: exit now    */
    PROTO_RECORDED,     /* root -> ctl  {done: [[task, node(, failed,
                                         attempts)], ...], info?: [...]}
                                        first completions, before FINISHED */
    PROTO_RESULT,       /* child -> parent {task, node, failed, bytes,
                                            index, count} + payload frame:
                                            a command's result stream     */
    PROTO_RESULT_ACK,   /* parent -> child {task, index}                  */
    PROTO_PING,         /* ctl -> node  {}   every PROTO_PING_EVERY s: the
                                        controller is alive; and ctl
                                        <-> node once at the start as
                                        the warm-up (PROTO_WARM_FRAMES) */
    PROTO_BEAT,         /* parent <-> child {}  on the heartbeat
                                        connection: the peer is alive
                                        (once at the start as the
                                        warm-up, PROTO_WARM_FRAMES)   */
    PROTO_LOST,         /* node -> ctl  {peer, why}  lost contact with its
                                        parent or a child (peer's name) */
    PROTO_BATCH,        /* child -> parent {n} + n messages, each its
                                        header and body frames: the
                                        REQUESTs, ACKs, DONEs and RETURNs
                                        of one loop turn in one message   */
    PROTO_RECLAIM,      /* parent -> child {n, dropped}  hold at most n
                                        tasks; `dropped` of your unserved
                                        asks are dropped (docs/adapt.md) */
    PROTO_RETURN,       /* child -> parent {done: [[task, node], ...]}
                                        held tasks given back             */
    PROTO_ATTACH,       /* ctl -> node  {node: {tree[] entry}, index(,
                                         key)}
                                        take a joining node as a child in
                                        a vacant slot (docs/adapt.md)     */
    PROTO_ATTACHED,     /* node -> ctl  {name(, error)}  the slot is
                                        ready, or why not                 */
    PROTO_DRAINED,      /* node -> ctl  {peer}  the child, shrunk, holds
                                        no task of ours: stop its subtree
                                        (docs/adapt.md, "Shrink")         */
    PROTO_REPARENT,     /* ctl -> node  {parent, name(, key)}  your parent
                                        was lost: connect to the new one
                                        at endpoint `parent`, node `name`,
                                        CURVE key `key` (docs/adapt.md,
                                        "Re-parent")                      */
    PROTO_CANCEL,       /* parent -> child {task}  the end-game: task is
                                        done elsewhere; give it back if
                                        held (docs/policies.md)           */
    PROTO_BAG_EMPTY,    /* parent -> child {}  the bag has no task left
                                        to hand out                       */
    PROTO_COMMAND_END
} proto_command_t;

/*  The latest START "since" (wall seconds since the run's START) a node
 *  takes: a year. */
#define PROTO_MAX_SINCE_S (365.0 * 86400)

/*  Return the command's name ("HELLO", ...), or "?" if unknown. */
const char *proto_command_str (int command);

/*  One completion: a task and the node that computed it (DONE, RECORDED);
 *  on the wire [task, node], or [task, node, failed, attempts] for a
 *  command (RECORDED). */
typedef struct {
    uint64_t task;
    uint32_t node;
    uint32_t failed;         /* 0 or 1 */
    uint32_t attempts;       /* 0 (synthetic) .. 255 */
} proto_done_t;

/*  A decoded message: one set of fields per command, filled by its
 *  decoder and checked (see each command above, and docs/protocol.md).
 *  Strings and objects are borrowed from body; body, payload, done and
 *  streams are owned by the message (proto_msg_clear). STATS and REPORT
 *  carry an object that overlay/proto_stats.h decodes. */
typedef struct {
    proto_command_t command;
    json_t *body;            /* the whole body */
    zframe_t *payload;       /* CHUNK, RESULT; REPORT (or NULL) */
    const char *text;        /* HELLO name, BOUND endpoint, START parent,
                                FAIL error, LOST and DRAINED peer,
                                ATTACHED name, ATTACH key (or NULL),
                                REPARENT parent endpoint */
    const char *why;         /* LOST: how contact was lost; ATTACHED: why
                                the node was not taken, or NULL;
                                REPARENT: the new parent's name */
    const char *key;         /* REPARENT: the new parent's CURVE key, or
                                NULL (CURVE off) */
    int64_t pid;             /* HELLO */
    int version;             /* HELLO: the node's protocol version */
    int measure;             /* START: mode "measure" (else "run") */
    json_t *object;          /* CONFIG config, STATS/REPORT stats, ATTACH
                                node (a tree[] entry, config_node_parse),
                                MEASURED send_mbps ({child: MB/s}) */
    json_t *run;             /* CONFIG: the run's object, or NULL; its
                                fields decoded in run_fields */
    proto_run_t run_fields;  /* CONFIG with a run: its fields (owned by
                                the message; a caller keeping them moves
                                them out and clears this copy) */
    json_t *keys;            /* CONFIG: {node: CURVE public key}, or NULL
                                (CURVE off) */
    json_t *info;            /* RECORDED: an array of ndone objects or
                                nulls (details of commands), or NULL */
    uint32_t n;              /* REQUEST; RECLAIM: tasks to hold at most */
    uint64_t task;           /* CHUNK, ACK, RESULT, RESULT_ACK */
    double units;            /* CHUNK */
    uint64_t bytes;          /* CHUNK: total bytes of the task; RESULT: of
                                the result stream */
    uint32_t index, count;   /* CHUNK, ACK, RESULT, RESULT_ACK; RECLAIM:
                                count, the asks dropped */
    uint32_t kind;           /* CHUNK: 0 synthetic, 1 command */
    uint32_t avoid[PROTO_MAX_AVOID];   /* CHUNK: nodes to avoid */
    uint32_t navoid;
    uint32_t node;           /* RESULT: who computed the task; ATTACH: the
                                joining node's index in the run */
    int failed;              /* RESULT: the command failed */
    proto_done_t *done;      /* DONE, RECORDED: ndone entries */
    uint32_t ndone;
    double bounds[BOUND_MODEL_COUNT];   /* SUBTREE: tasks/s per model */
    double live_compute, live_ir_recv;  /* SUBTREE of an adapting run: the
                                child's live compute rate (units/s) and
                                IR_r, NaN when absent (docs/adapt.md) */
    uint32_t phase;          /* MEASURE, MEASURED */
    double seconds, warmup;  /* MEASURE: phase and warm-up, wall seconds;
                                MEASURED: platform seconds measured;
                                START: since (0 when absent) */
    const char **streams;    /* MEASURE: nstreams child names */
    uint32_t nstreams;
    int idle;                /* MEASURE: the node does not compute in the
                                phase (absent: 0) */
    double units_per_s, recv_mbps;   /* MEASURED, platform terms */
} proto_msg_t;

/*  The ZMQ_MAXMSGSIZE (largest frame, bytes) for a socket that receives
 *  from a child (REQUEST, ACK, DONE, SUBTREE), from a parent that sends
 *  chunks of chunk_bytes, or from the controller. libzmq disconnects a
 *  peer that sends a larger frame, before it is read. */
#define PROTO_MAX_FRAME_CHILDREN ((int) PROTO_MAX_PEER_BODY)
#define PROTO_MAX_FRAME_PARENT(chunk_bytes) \
    ((int) ((chunk_bytes) > PROTO_MAX_PEER_BODY ? (chunk_bytes) : PROTO_MAX_PEER_BODY))
#define PROTO_MAX_FRAME_CONTROL ((int) PROTO_MAX_BODY)

/*  Decode msg (identity already popped), taking ownership of it and
 *  nulling the caller's pointer. Returns 0 and fills out, which the caller
 *  then clears with proto_msg_clear; or -1 with a message in err and out
 *  left clear. */
int proto_decode (zmsg_t **msg_p, proto_msg_t *out, char *err, size_t errlen);

/*  Release what a decoded message owns. Safe on a cleared message. */
void proto_msg_clear (proto_msg_t *msg);

/*  Encoders. Each returns a new message the caller sends or destroys.
 *  proto_encode takes ownership of body (and payload, may be NULL) and
 *  nulls the caller's pointers. */
zmsg_t *proto_encode (proto_command_t command, json_t **body_p, zframe_t **payload_p);
zmsg_t *proto_hello (const char *name, int64_t pid);
/*  The experiment, the run's object (may be NULL) and every node's CURVE
 *  public key ({name: key}; NULL: CURVE is off); all borrowed. */
zmsg_t *proto_config (json_t *config, json_t *run, json_t *keys);
zmsg_t *proto_bound (const char *endpoint);
zmsg_t *proto_start (const char *parent_endpoint, int measure);
/*  START to a node that joins the running run: since, the wall seconds
 *  since the run's START, is its clock's origin (its samples, trace and
 *  the times of its changes are the run's). */
zmsg_t *proto_start_since (const char *parent_endpoint, int measure, double since);
zmsg_t *proto_request (uint32_t n);
/*  CHUNK: kind 0 with navoid 0 writes neither field. */
zmsg_t *proto_chunk (uint64_t task, double units, uint64_t bytes, uint32_t index,
                     uint32_t count, uint32_t kind, const uint32_t *avoid,
                     uint32_t navoid, zframe_t **payload_p);
zmsg_t *proto_ack (uint64_t task, uint32_t index);
/*  RECLAIM: hold at most n tasks; dropped of the child's asks were
 *  dropped. (RETURN is proto_done's, with command PROTO_RETURN.) */
zmsg_t *proto_reclaim (uint32_t n, uint32_t dropped);

/*  CANCEL: the child's copy of task is not needed (the end-game). */
zmsg_t *proto_cancel (uint64_t task);
zmsg_t *proto_result (uint64_t task, uint32_t node, int failed, uint64_t bytes,
                      uint32_t index, uint32_t count, zframe_t **payload_p);
zmsg_t *proto_result_ack (uint64_t task, uint32_t index);
zmsg_t *proto_fail (const char *error);
/*  ATTACH: node (a tree[] entry, borrowed) joins as node index, with the
 *  public key made for it (Z85; NULL: CURVE off, or made at START). */
zmsg_t *proto_attach (json_t *node, uint32_t index, const char *key);
/*  ATTACHED: name's slot is ready (why NULL), or why not. */
zmsg_t *proto_attached (const char *name, const char *why);
/*  DRAINED: child peer holds nothing of ours and may stop. */
zmsg_t *proto_drained (const char *peer);
/*  REPARENT: connect to the parent called name at endpoint, whose CURVE
 *  public key is key (NULL: CURVE off). */
zmsg_t *proto_reparent (const char *endpoint, const char *name, const char *key);
zmsg_t *proto_lost (const char *peer, const char *why);
/*  DONE or RETURN (child -> parent) or RECORDED (root -> controller): n <=
 *  PROTO_MAX_DONE completions. RECORDED may carry info, an array of n
 *  objects or nulls, taken (the caller's pointer nulled); NULL for none. */
zmsg_t *proto_done (proto_command_t command, const proto_done_t *done, uint32_t n,
                    json_t **info_p);
/*  SUBTREE: the subtree's bound in every model (BOUND_MODEL_COUNT values). */
zmsg_t *proto_subtree (const double *bounds);
/*  SUBTREE of an adapting run, sent again whenever it changes: the bounds
 *  and the child's live compute rate and IR_r (each NaN: left out). */
zmsg_t *proto_subtree_live (const double *bounds, double compute, double ir_recv);
/*  MEASURE: phase, its length and warm-up (wall seconds), the n children
 *  to stream probes to, and whether the node stays idle (computes
 *  nothing) in the phase; "idle" is written only when true. */
zmsg_t *proto_measure (uint32_t phase, double seconds, double warmup,
                       const char *const *streams, uint32_t n, int idle);
/*  MEASURED: what a phase measured, platform terms; send_mbps (child name
 *  -> MB/s) is taken and the caller's pointer nulled. */
zmsg_t *proto_measured (uint32_t phase, double seconds, double units_per_s,
                        double recv_mbps, json_t **send_mbps_p);
zmsg_t *proto_empty (proto_command_t command);   /* FINISHED, STOP, BYE, PING,
                                                    BEAT */
/*  The warm-up PING or BEAT: an empty one and PROTO_WARM_FRAMES - 2
 *  empty frames; decoded as the command. */
zmsg_t *proto_warm (proto_command_t command);

/*  BATCH: the n messages msgs[0 .. n-1] (2 <= n <= PROTO_MAX_BATCH, each
 *  a REQUEST, ACK or DONE as its encoder made it) as one message; takes
 *  them and nulls the caller's pointers. */
zmsg_t *proto_batch (zmsg_t **msgs, uint32_t n);

/*  If *msg_p (identity popped) is a BATCH, check it (its count, 2 ..
 *  PROTO_MAX_BATCH, and its frames, each part a REQUEST, ACK or DONE's
 *  two frames; no part is decoded yet), move its parts into parts[] as
 *  messages of their own for proto_decode, destroy it, and return their
 *  number; 0 (*msg_p untouched) when it is not a BATCH; -1 with a message
 *  in err (*msg_p destroyed) for a BATCH that breaks these rules. parts
 *  has room for PROTO_MAX_BATCH. */
int proto_unbatch (zmsg_t **msg_p, zmsg_t **parts, char *err, size_t errlen);

/*  A message as raw frames, unchecked: header {version, command}, then the
 *  body text and the payload (len bytes) when not NULL. For tests, fuzzers
 *  and hostile peers, which must be able to say what no encoder would. */
zmsg_t *proto_raw (int version, int command, const char *body, const void *payload,
                   size_t len);

#endif
