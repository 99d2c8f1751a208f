/*  core — a node's decision logic as a pure state machine.
 *
 *  The core is fed events (the run starts, a child asks for tasks, a chunk
 *  of a task arrives from the parent, a child acknowledges a chunk, a batch
 *  of completions arrives from a child, the local engine finishes a task, a
 *  timer ticks) and answers each with a list of actions (ask the parent for
 *  tasks, send a chunk to a child, acknowledge a chunk, compute a task,
 *  report completions upward, release a task's payload, declare the bag
 *  finished). It opens no socket and reads no clock: every event carries
 *  the time, so the ZeroMQ runtime (node/act.c, node/receive.c), the unit tests
 *  and a simulator drive the same code.
 *
 *  Protocol it implements (docs/architecture.md):
 *  - A non-root node keeps `buffer` tasks held or on their way; whenever
 *    held + requested-but-not-arrived falls below it, it asks the parent for
 *    the difference. The root's buffer is the bag itself.
 *  - The local engine takes a held task whenever it is idle.
 *  - A parent only sends to a child that asked. The policy picks among the
 *    children with unserved requests; a single-port policy has at most one
 *    transfer holding its port: in flight, and when paced, until the link
 *    has delivered its last chunk (the ack may come later). A multi-port policy starts another transfer, to a
 *    child not already receiving, while the estimated outgoing total is
 *    below 90% of the send limit (a transfer younger than one meter window counts
 *    at its link's rate, older ones at their measured rate).
 *  - A task moves as chunks of `chunk_bytes`; the child acknowledges each,
 *    and at most `window` chunks per child are unacknowledged. Before every
 *    chunk the sender re-decides: among the transfers that may send, the
 *    policy's favourite goes first, so a better child interrupts a worse
 *    one at chunk granularity.
 *  - Transfers to one child are pipelined: once every chunk of its
 *    transfer is sent (paced: and delivered), the child may get its next
 *    task while acks are still due, within its window (its chunks
 *    unacknowledged over all its transfers). Acks come in order; each
 *    transfer is counted and released at its own last ack.
 *  - With pacing on, each link is held to link_bps and the node's total to
 *    send_limit_bps by virtual-clock pacers: a chunk of L bytes advances a
 *    pacer by L / rate, and a pacer that fell behind during a transfer
 *    catches up by at most one chunk; an idle link banks nothing, so a
 *    transfer never starts with a burst. core_next_deadline says when a
 *    held chunk may go.
 *  - A planned split (ia-split): each child's transfers are paced at the
 *    tasks/s its policy's split gives it times the task's MB, in every
 *    mode, and the port rule is the pacing itself: a child with a share
 *    starts a transfer whenever it may, one with none is not served.
 *  - Fan-out (an adapting run with a multi-port policy and a send limit,
 *    docs/adapt.md): the ratio rule keeps the first k children in the
 *    policy's order busy, k the fewest whose demand reaches the send
 *    limit (node/fanout.h); a child beyond them starts a transfer only
 *    when the port has room by the plan or no kept child has an ask it
 *    could serve.
 *  - Reclaim (an adapting run, docs/adapt.md): TAKE_BACK at a parent drops
 *    a child's unserved asks and tells it (RECLAIM) to hold at most n
 *    tasks; the child forgets the dropped asks, asks only up to n from
 *    then on, and gives back (RETURN) its newest whole held tasks beyond
 *    n, which the parent queues again. A task is in one place at a time.
 *  - Re-parent (an adapting run, docs/adapt.md): ORPHANED, when the
 *    parent is lost, makes stale everything the node had from it (the
 *    root queued it all again when it lost the subtree): held tasks and
 *    the one arriving are dropped (RELEASE), unsent completions and
 *    result streams up are dropped, and the tasks computing here or out
 *    in the subtree are remembered as stale; a stale task's completion,
 *    result or return is dropped when it comes, never sent up. The node
 *    asks for nothing until REPARENT, when it asks its new parent anew
 *    for its whole buffer. The children keep their asks and are served
 *    again once tasks come.
 *  - Completions (task id, computing node) travel up in batches of at most
 *    `batch_max`, or after `batch_delay` seconds; the root records each
 *    task once (one bit per task), counts duplicates, and streams each
 *    first completion to the controller in RECORDED batches, batched the
 *    same way; the last completion flushes its batch at once, followed by
 *    FINISHED in the same action list.
 *
 *  Input from the network is never trusted: an event that breaks the
 *  protocol (a chunk out of order, an ack for a chunk never sent, a task id
 *  out of range, a completion or result of a task never given to that
 *  child or come back already, ...) is refused with an error message,
 *  counted in stats.malformed, and changes nothing. A parent keeps, per
 *  child, the tasks it handed to that subtree until their completion
 *  comes back (as many as the subtree has in flight). A chunk's sizes (the task's total
 *  bytes, its chunk count, this chunk's length, the task's units) must be
 *  exactly those of the task this node expects — today the experiment's
 *  task_bytes in chunks of chunk_bytes, and task_units — so the runtime
 *  may size a buffer from an accepted chunk.
 */
#ifndef TF_CORE_H
#define TF_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "overlay/config.h"
#include "policies/policy.h"

typedef struct core core_t;

/*  The task id of calibration probes (the 3-point procedure of docs/model.md): a
 *  parent told to stream to a child sends it probe transfers of one task's
 *  size, back to back, through the same windows, pacers and meters as
 *  tasks; the child acknowledges and discards them. Probes never touch the
 *  bag, the buffer or the completion record. */
#define CORE_PROBE_TASK ((uint64_t) INT64_MAX)

/*  Static facts about one child, copied in at creation. The first five are
 *  the platform's (for the policy); link_bps is the physical bytes per
 *  second the link runs at here (platform MB/s x 2^20 x payload scale x
 *  time scale), used to pace it and to estimate a new transfer's rate;
 *  0 means unknown. */
typedef struct {
    double compute_rate, link_mbps, link_idle_mbps, ir_send, ir_recv;
    double link_bps;
    uint32_t node;           /* the child's index in the config (with
                                core_cfg_t.tree_parent: its subtree) */
    int absent;              /* a vacant slot kept for a node that may
                                join (docs/adapt.md, "Grow"): no child
                                until core_attach_child */
    double that;             /* its subtree's multi-port bound, tasks/s,
                                from the config (0: unknown), until its
                                SUBTREE says (core_set_child_bound): what
                                a planned split rests on */
    double ir_send_alone;    /* policy_child_t's: what the IA order ranks
                                by under the published order; NaN: by
                                ir_send */
} core_child_info_t;

/*  Command tasks (docs/tasks.md). Tasks 0 .. command_tasks-1 of the bag
 *  are commands, the rest synthetic. A command task's payload is its
 *  input bundle, of a size only the root knows (core_cfg_t.task_info);
 *  its completion travels up as a result stream (RESULT chunks, acked
 *  one by one like task chunks, window chunks unacknowledged at most),
 *  so that the root records it only once its outputs have arrived. A
 *  failed command is tried again, up to max_attempts in all, on a node
 *  it has not failed on while the tree has one: the task carries the
 *  nodes it failed on (at most CORE_MAX_AVOID), and a node neither
 *  computes it itself there nor sends it to a child whose whole subtree
 *  is among them. */
#define CORE_MAX_AVOID CONFIG_MAX_AVOID
/*  The largest attempt count a run may ask for. */
#define CORE_MAX_ATTEMPTS CONFIG_MAX_ATTEMPTS
/*  The most tasks one node computes at once. */
#define CORE_MAX_SLOTS CONFIG_MAX_SLOTS
#define CORE_MAX_DEPTH 4

typedef enum {
    CORE_KIND_SYNTHETIC = 0, /* the experiment's payload and units */
    CORE_KIND_COMMAND,       /* a command with an input bundle */
} core_kind_t;

/*  Root: one task's payload bytes and compute units, taken each time the
 *  core takes the task to hand it out (to a child or to this node's own
 *  engine). unreadable: its input cannot be read now (a file deleted
 *  since the run began): that attempt fails at the root at once, as a
 *  command that failed there, and the task goes on to its next attempt
 *  or is recorded failed; nothing is sent and no ask is used up. */
typedef struct {
    uint64_t bytes;
    double units;
    int unreadable;
} core_task_info_t;

/*  The end-game (docs/policies.md, "The end-game"): near the end of the
 *  bag no task goes to a child that would finish it later than this node
 *  would, and once the bag is empty an idle node computes a copy of a
 *  task out in a child's subtree that would finish later there; the
 *  first result wins, the other copy is cancelled (CANCEL) or dropped. */
typedef struct {
    int on;
    double time_scale;       /* platform seconds per second of `now`: the
                                estimates are in platform rates */
    double that;             /* this node's subtree bound, tasks/s
                                (0: unknown, C / w is used) */
} core_endgame_cfg_t;

typedef struct {
    uint32_t self;           /* this node's index in the config */
    uint32_t nnodes;         /* nodes in the tree (bounds completion ids) */
    int is_root;
    uint64_t task_count;     /* tasks in the bag */
    double task_units;       /* compute units per task */
    double task_mb;          /* platform MB per task (for policies) */
    uint64_t task_bytes;     /* physical payload bytes per task */
    uint32_t chunk_bytes;    /* > 0 */
    uint32_t window;         /* >= 1 */
    uint32_t buffer;         /* >= 1 */
    uint32_t batch_max;      /* >= 1 */
    double batch_delay;      /* seconds, >= 0 */
    const policy_t *policy;  /* required */
    int pace;                /* pace each link to link_bps and the total to
                                send_limit_bps (emulation) */
    double send_limit_bps;   /* physical bytes/s out in total, 0 = none */
    double meter_window;     /* seconds over which rates are measured, > 0 */
    policy_parent_t parent;  /* this node's own facts, for the policy */
    int nchildren;
    const core_child_info_t *children;   /* nchildren entries, copied */
    uint64_t command_tasks;  /* tasks 0 .. command_tasks-1 are commands */
    uint32_t slots;          /* tasks this node computes at once, 1 ..
                                CORE_MAX_SLOTS (0 means 1): commands run
                                side by side, a synthetic task has the one
                                engine; the node asks for slots x depth - 1
                                tasks beyond its buffer */
    uint32_t depth;          /* places per slot, 1 .. CORE_MAX_DEPTH (0
                                means 1): a command's slot holds one
                                running and depth - 1 waiting behind it
                                (the runtime's worker, CMDRUN_DEPTH) */
    int relay;               /* computes nothing, whatever slots says: a
                                relay ("slots": 0, config_node_is_relay)
                                only forwards; the end-game never copies
                                onto it and no retry runs here */
    uint32_t max_attempts;   /* root: tries of a failing command, 1 ..
                                CORE_MAX_ATTEMPTS (0 means 1) */
    /*  Root: a command task's bytes and units (required when
     *  command_tasks > 0). Synthetic tasks are task_bytes and task_units. */
    core_task_info_t (*task_info) (void *arg, uint64_t task);
    void *task_arg;
    /*  Every node's parent index (-1 for the root), nnodes entries,
     *  copied; NULL when unknown, in which case nothing is avoided. */
    const int32_t *tree_parent;
    int adapt;               /* an adapting run (docs/adapt.md): with a
                                multi-port policy and a send limit, the
                                ratio rule keeps busy only the children
                                the port can feed (core_fanout) */
    core_endgame_cfg_t endgame;
} core_cfg_t;

typedef enum {
    CORE_EV_START = 0,       /* the run begins */
    CORE_EV_REQUEST,         /* child asks for n more tasks */
    CORE_EV_CHUNK,           /* a chunk of a task arrived from the parent */
    CORE_EV_ACK,             /* child acknowledged a chunk */
    CORE_EV_DONE,            /* child reports a batch of completions */
    CORE_EV_COMPUTED,        /* the local engine finished a task */
    CORE_EV_TICK,            /* time passed */
    CORE_EV_STREAM,          /* calibration: stream probes to child while
                                n == 1, stop when n == 0 */
    CORE_EV_RESULT,          /* a chunk of a result stream from a child */
    CORE_EV_RESULT_ACK,      /* the parent acknowledged a result chunk */
    CORE_EV_LOST,            /* contact with child is lost (the runtime's
                                heartbeats, or a send that failed) */
    CORE_EV_TAKE_BACK,       /* adaptation, at a parent: have child keep at
                                most n tasks held, and take the rest back
                                (docs/adapt.md, "Reclaim") */
    CORE_EV_RECLAIM,         /* from the parent: hold at most n tasks and
                                ask for no more from now on; count of our
                                unserved asks the parent dropped */
    CORE_EV_RETURNED,        /* child gives back done[0..ndone) (tasks it
                                held and had not started) */
    CORE_EV_ORPHANED,        /* the parent is lost and the node waits to be
                                re-parented (docs/adapt.md, "Re-parent"):
                                everything it had from the parent is stale */
    CORE_EV_REPARENT,        /* a new parent is connected: ask it anew */
    CORE_EV_CANCEL,          /* from the parent: task is done elsewhere
                                (the end-game); give it back if held */
    CORE_EV_EMPTY,         /* from the parent: the bag has no task left
                                to hand out */
    CORE_EV_COUNT
} core_event_type_t;

const char *core_event_str (core_event_type_t type);

/*  One completed task and the node that computed it; for a command, also
 *  whether it failed and (root) the attempts it took. */
typedef struct {
    uint64_t task;
    uint32_t node;
    uint8_t failed;
    uint8_t attempts;
} core_done_t;

typedef struct {
    core_event_type_t type;
    double now;              /* seconds, monotonic, any origin */
    int child;               /* REQUEST, ACK, DONE, RESULT: the child's slot */
    uint64_t task;           /* CHUNK, ACK, COMPUTED, RESULT, RESULT_ACK */
    uint32_t n;              /* REQUEST: tasks asked for; TAKE_BACK,
                                RECLAIM: tasks the child may hold */
    double units;            /* CHUNK: compute units of the task */
    uint64_t bytes;          /* CHUNK: the task's total payload bytes;
                                RESULT, COMPUTED: the result stream's
                                (COMPUTED: 0 for a synthetic task) */
    uint32_t index;          /* CHUNK, ACK, RESULT, RESULT_ACK: chunk number */
    uint32_t count;          /* CHUNK, RESULT: chunks in the stream;
                                RECLAIM: asks the parent dropped */
    uint64_t len;            /* CHUNK, RESULT: bytes in this chunk */
    core_kind_t kind;        /* CHUNK */
    const uint32_t *avoid;   /* CHUNK: navoid nodes it failed on, borrowed */
    uint32_t navoid;
    uint32_t node;           /* RESULT: the node that computed the task */
    int failed;              /* RESULT, COMPUTED: the command failed */
    const core_done_t *done; /* DONE, RETURNED: ndone entries, borrowed */
    uint32_t ndone;
} core_event_t;

typedef enum {
    CORE_ACT_REQUEST = 0,    /* ask the parent for n tasks */
    CORE_ACT_SEND_CHUNK,     /* send chunk index/count of task to child */
    CORE_ACT_ACK,            /* acknowledge chunk index of task to parent */
    CORE_ACT_COMPUTE,        /* start computing task (units) locally */
    CORE_ACT_REPORT,         /* send done[0..ndone) to the parent */
    CORE_ACT_RELEASE,        /* this node no longer needs task's payload */
    CORE_ACT_FINISHED,       /* root: every task is complete */
    CORE_ACT_RECORDED,       /* root: done[0..ndone) completed for the first
                                time; for the controller */
    CORE_ACT_SEND_RESULT,    /* send chunk index/count of task's result
                                stream (offset, len of bytes) to the parent */
    CORE_ACT_ACK_RESULT,     /* acknowledge result chunk index to child */
    CORE_ACT_RELEASE_RESULT, /* the result stream of task is delivered
                                (sent up and acknowledged, or, on the root,
                                received whole: recorded or re-queued) */
    CORE_ACT_RETRY,          /* root: task failed at node and is queued
                                again (attempts so far in n) */
    CORE_ACT_DROP_RESULT,    /* the result stream of task that was arriving
                                from a lost child will not be finished:
                                discard what came of it */
    CORE_ACT_RECLAIM,        /* tell child to hold at most n tasks; count:
                                its unserved asks dropped here */
    CORE_ACT_RETURN,         /* give done[0..ndone) back to the parent */
    CORE_ACT_CANCEL,         /* tell child its copy of task is not needed */
    CORE_ACT_EMPTY,        /* tell child the bag has nothing left */
    CORE_ACT_COUNT
} core_action_type_t;

const char *core_action_str (core_action_type_t type);

typedef struct {
    core_action_type_t type;
    int child;               /* SEND_CHUNK, ACK_RESULT, RECLAIM, CANCEL,
                                EMPTY */
    uint64_t task;           /* all but REQUEST, REPORT, RECORDED, FINISHED */
    uint32_t n;              /* REQUEST; RETRY: attempts so far; RECLAIM:
                                tasks the child may hold */
    double units;            /* SEND_CHUNK, COMPUTE */
    uint64_t bytes;          /* SEND_CHUNK: total payload bytes of task;
                                SEND_RESULT: of its result stream */
    uint32_t index, count;   /* SEND_CHUNK, ACK, SEND_RESULT, ACK_RESULT;
                                RECLAIM: count, the asks dropped */
    uint64_t offset, len;    /* SEND_CHUNK, SEND_RESULT: the byte range */
    core_kind_t kind;        /* SEND_CHUNK, COMPUTE */
    uint32_t avoid[CORE_MAX_AVOID];   /* SEND_CHUNK: the nodes the task
                                failed on, navoid of them (a copy: the
                                transfer may be over when it is read) */
    uint32_t navoid;
    uint32_t node;           /* SEND_RESULT: who computed it; RETRY: where
                                it failed */
    int failed;              /* SEND_RESULT */
    const core_done_t *done; /* REPORT, RECORDED, RETURN: borrowed, valid
                                until the next core_handle call */
    uint32_t ndone;
} core_action_t;

typedef struct {
    uint64_t tasks_sent;     /* complete transfers to this child */
    uint64_t bytes_sent;     /* acknowledged payload bytes */
    uint64_t requested;      /* tasks it asked for */
    uint64_t probe_bytes;    /* calibration probe bytes acknowledged */
    double send_seconds;     /* time spent sending to it: from each
                                transfer's start to its last ack */
    double ack_wait_seconds; /* of which, summed over transfers, from the
                                moment the last chunk was delivered (paced:
                                when the link finished carrying it; else
                                when it was sent) to its ack: the runtime's
                                round trip, which time scaling multiplies
                                in platform terms */
    uint32_t given;          /* tasks given to its subtree whose completion
                                has not come back (the one in flight
                                included) */
    uint64_t link_bytes;     /* of the complete transfers, those the link
                                alone paced (no chunk of theirs waited on
                                the send limit's pacer): their bytes, */
    double link_seconds;     /* and their seconds from start to last chunk
                                delivered: the link's own rate is their
                                ratio (node/live.h) */
} core_child_stats_t;

typedef struct {
    uint64_t computed;       /* tasks computed here */
    uint64_t forwarded;      /* tasks sent to children (complete) */
    uint64_t received;       /* tasks received from the parent */
    uint64_t requested;      /* tasks asked of the parent */
    uint64_t bytes_in;       /* payload bytes received */
    uint64_t bytes_out;      /* payload bytes acknowledged by children */
    uint64_t malformed;      /* refused events */
    uint64_t completed;      /* root: distinct tasks recorded complete */
    uint64_t duplicates;     /* root: completions of already-complete tasks */
    uint64_t probe_bytes_in; /* calibration probe bytes received */
    uint64_t failed;         /* root: commands recorded failed (after their
                                last attempt) */
    uint64_t retried;        /* root: failed attempts queued again */
    uint64_t results_up;     /* result streams sent up and acknowledged */
    uint64_t result_bytes_in;    /* result stream bytes from children */
    uint64_t result_bytes_out;   /* result stream bytes acknowledged by
                                    the parent */
    uint64_t children_lost;  /* children lost (CORE_EV_LOST) */
    uint64_t requeued;       /* tasks queued again because the child
                                they were given to was lost */
    uint64_t reclaimed;      /* tasks children gave back (RETURNED) */
    uint64_t returned;       /* tasks given back to the parent */
    uint64_t stale;          /* tasks made stale by the loss of the parent
                                (held, computing, out in the subtree) */
    uint64_t stale_dropped;  /* stale tasks whose completion or return
                                came and was dropped, never sent up */
    uint64_t copies;         /* end-game copies started here */
    uint64_t copies_won;     /* of the copied tasks, those whose copy here
                                finished first */
    uint64_t cancelled;      /* CANCELs sent to children */
    uint64_t wasted;         /* completions computed but dropped here (a
                                stale task, or an end-game copy that lost):
                                work done twice */
    uint32_t held;           /* tasks held now, not computing */
    int computing;           /* local tasks running */
} core_stats_t;

/*  Create a core. The configuration is copied; the policy must outlive the
 *  core. Returns NULL with a message in err if cfg is inconsistent. */
core_t *core_new (const core_cfg_t *cfg, char *err, size_t errlen);

/*  Destroy a core and null the caller's pointer. Safe on NULL. */
void core_destroy (core_t **self_p);

/*  Feed one event. Returns 0 when accepted; -1 with a message in err when
 *  the event breaks the protocol, in which case it is counted as malformed
 *  and the state is unchanged. Either way, the actions it produced are then
 *  available through core_actions. */
int core_handle (core_t *self, const core_event_t *event, char *err, size_t errlen);

/*  Return the actions produced by the last core_handle call and store
 *  their count in *count. The array is borrowed and valid until the next
 *  core_handle call. */
const core_action_t *core_actions (const core_t *self, int *count);

/*  Root, before START: task is complete already (a resumed run's
 *  journal). Returns 0, or -1 for a task out of range. */
int core_mark_done (core_t *self, uint64_t task);

/*  Return this node's counters. */
core_stats_t core_stats (const core_t *self);

/*  Return one child's counters. */
core_child_stats_t core_child_stats (const core_t *self, int child);

/*  Root only: 1 if task is recorded complete, else 0 (0 on other nodes
 *  and for a task out of range). The root keeps one bit per task; which
 *  node computed a task goes to the controller in RECORDED actions. */
int core_is_done (const core_t *self, uint64_t task);

/*  Seconds until the core next needs a TICK — to flush a partial
 *  completion batch, or to send a chunk its pacing held back — or a
 *  negative number when nothing is pending. */
double core_next_deadline (const core_t *self, double now);

/*  Physical bytes per second received from the parent, and sent to one
 *  child, over the last meter_window seconds before now. */
double core_recv_rate (core_t *self, double now);
double core_send_rate (core_t *self, int child, double now);

/*  Physical bytes received from the parent, and sent to one child (0 for
 *  a bad child), since the meters started: the totals whose increments
 *  the emulated interference charges (node/emulate.h). */
double core_recv_bytes (const core_t *self);
double core_sent_bytes (const core_t *self, int child);

/*  Replace what the core believes of child's IR_s (e.g. with a node's
 *  online estimate, "ir": "measured"): policies see it from the next
 *  decision on. Ignored for a bad slot or a non-finite or negative value. */
void core_set_child_ir (core_t *self, int child, double ir_send);

/*  What the core believes of a child's rates, for its policy (the
 *  adaptation's live estimates, docs/adapt.md): each field NaN leaves
 *  the belief as it is. Pacing (link_bps) is the link's own and does not
 *  change. */
typedef struct {
    double compute_rate;     /* units/s */
    double link_mbps, link_idle_mbps;
    double ir_send, ir_recv;
} core_rates_t;

/*  Replace what the core believes of child's rates from the next decision
 *  on. A value that is negative or infinite is ignored (its field kept),
 *  as is a bad slot. */
void core_set_child_rates (core_t *self, int child, const core_rates_t *rates);

/*  A node joins as child, a vacant slot (info.absent at creation): from
 *  now on it is a child like the others, with info's facts (absent
 *  ignored), nothing given, nothing asked. Returns 0, or -1 with a
 *  message in err when the slot is bad or not vacant. */
int core_attach_child (core_t *self, int child, const core_child_info_t *info, char *err,
                       size_t errlen);

/*  Child, drained (nothing given to its subtree, docs/adapt.md
 *  "Shrink"), leaves: it is never served nor heard again, as if lost,
 *  but it is not counted lost. Returns 0, or -1 with a message in err
 *  when the slot is bad or its subtree still has tasks. */
int core_detach_child (core_t *self, int child, char *err, size_t errlen);

/*  Replace the node's own compute rate (units/s, > 0 and finite, else
 *  ignored) in what its policy sees (policy_parent_t.compute_rate): the
 *  never-use rule and the priorities that weigh the parent's loss. */
void core_set_compute_rate (core_t *self, double units_per_s);

/*  Paced, carry child's transfers at share x its link rate from the next
 *  chunk on: what its background's communicating contenders leave it
 *  (node/bgload.h; 1 / (j + 1) for j of them). A chunk goes at the share
 *  in force when it is sent. Ignored for a bad slot or a share outside
 *  (0, 1]. */
void core_set_link_share (core_t *self, int child, double share);

/*  Child's live subtree bound, tasks/s (its SUBTREE, in the policy's port
 *  model), from the next decision on: the ratio rule's consumption rate
 *  of the child instead of C_i / w. Ignored for a bad slot or a value
 *  not finite or negative. */
void core_set_child_bound (core_t *self, int child, double tasks_per_s);

/*  A planned split (a policy with one, ia-split; docs/policies.md,
 *  "IA:Split"): the tasks/s child gets in it, its transfers paced at that
 *  times the task's MB (in every mode; with pacing on, also at most its
 *  link's rate). 0 for a child the plan leaves out, a bad slot, or a
 *  policy with no plan. The plan is taken again whenever the core's
 *  beliefs change (the setters above, a child lost or attached). */
double core_split_rate (const core_t *self, int child);

/*  The ratio rule (docs/adapt.md, "Fan-out: the ratio rule"): the number
 *  of children the send port can feed, which a multi-port parent of an
 *  adapting run with a send limit keeps busy, the others woken only when
 *  the port has room; taken again whenever the core's beliefs change.
 *  -1 when the rule does not apply (single-port, no send limit, or a run
 *  that does not adapt). */
int core_fanout (const core_t *self);

/*  The children's slots in the order the policy ranks them now (its
 *  order function with the core's beliefs; equal ones, and every child
 *  under a policy with no order, by slot): one entry per child into
 *  slots. What a single-port policy serves first when all ask at once. */
void core_rank (const core_t *self, int *slots);

/*  Number of transfers to children in flight now (their last ack not
 *  yet in; pipelined, a child may have several). */
int core_sending (const core_t *self);

/*  Number of those holding the sender's port at now: paced, a transfer
 *  whose chunks the link has all delivered waits for its last ack without
 *  holding it. A single-port policy never has more than one. */
int core_port_busy (const core_t *self, double now);

#endif
