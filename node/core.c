/*  core — a node's decision logic as a pure state machine. See core.h.
 *
 *  Every event is first validated without touching the state, then applied,
 *  then `dispatch` brings the node to its next fixed point: the engine busy
 *  if there is a task, transfers started while the policy allows, the
 *  buffer topped up, due completions flushed.
 */
#include "node/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/meter.h"
#include "overlay/config.h"
#include "overlay/util.h"

/*  A child may not hold more unserved asks than this: a child asking
 *  beyond it is broken, and its requests are refused. */
#define CORE_MAX_WANTED 100000u

/*  A multi-port parent starts another transfer only while its outgoing
 *  total is below this fraction of the send limit. A measured rate jitters
 *  by about a chunk per meter window; without the margin, a saturated
 *  sender reads as "just below" now and then and starts a transfer that
 *  only starves, holding a task hostage. */
#define CORE_SPARE_FRACTION 0.9

/*  A deadline core_next_deadline announced counts as reached within this
 *  many seconds: a driver that adds the announced delay to its clock may
 *  land an ulp short (a + (b - a) < b in floating point), and must not be
 *  told to wait an ulp more, forever. A nanosecond is far below any
 *  chunk time or batch delay. */
#define CORE_TIME_EPS 1e-9

typedef struct {
    uint64_t id;
    double units;
    uint64_t bytes;
    core_kind_t kind;
    uint32_t navoid;
    uint32_t avoid[CORE_MAX_AVOID];   /* nodes a command failed on */
} task_t;

/*  A result stream: a command's completion and its outputs, on its way up
 *  (queued or in flight to the parent) or arriving from a child. */
typedef struct {
    uint64_t task;
    uint32_t node;
    int failed;
    uint64_t bytes;
    uint32_t count, next, acked;   /* chunks: total, sent or received,
                                      acknowledged */
} stream_t;

/*  A transfer to a child whose chunks are all sent, awaiting their acks
 *  while a later transfer to the same child goes on (pipelined: the
 *  child's link is free once the last chunk is delivered). */
typedef struct {
    task_t task;
    uint32_t count, acked;   /* chunks: total, acknowledged */
    double started_at, delivered;
} drain_t;

/*  One REQUEST's unserved tasks; each task has its own arrival number. */
typedef struct {
    uint64_t first_seq;
    uint32_t left;
} ask_t;

typedef struct {
    core_child_info_t info;
    ask_t *asks;             /* ring of unserved asks, oldest at head */
    uint32_t ask_head, nasks, ask_cap;
    uint32_t wanted;         /* sum of left over asks */
    int sending;             /* a transfer is in flight */
    int streaming;           /* calibration: keep a probe transfer going */
    int probe;               /* the transfer in flight is a probe */
    task_t task;             /* the task in flight */
    uint32_t count, next, acked;   /* chunks: total, sent, acknowledged */
    double started_at;       /* when the transfer in flight began */
    double link_free;        /* the link's pacer: when it finished carrying
                                its last chunk (virtual time) */
    double delivered;        /* when the last chunk sent reaches the child:
                                its pacers' finish, or its send time */
    drain_t *drain;          /* earlier transfers awaiting acks, ring of
                                cfg.window, oldest at drain_head: each has
                                an unacknowledged chunk, and a child has
                                fewer than window of those */
    uint32_t drain_head, ndrain;
    uint32_t drain_unacked;  /* their unacknowledged chunks */
    meter_t *sent;           /* bytes sent to it, by time */
    int res_active;          /* a result stream is arriving from it */
    stream_t res;
    task_t *given;           /* tasks handed to its subtree whose completion
                                has not come back: a completion of any other
                                is refused (it was never given); if the
                                child is lost, they are queued again */
    uint32_t ngiven, given_cap;
    int lost;                /* contact lost (CORE_EV_LOST): never served
                                again, nothing it sends is accepted */
    core_child_stats_t stats;
} child_t;

struct core {
    core_cfg_t cfg;
    child_t *children;
    policy_child_t *cands;   /* scratch for the policy */

    task_t *queue;           /* held tasks, ring */
    uint32_t q_head, q_len, q_cap;
    uint64_t next_task;      /* root: next id to hand out */
    uint8_t *done_bits;      /* root: 1 bit per task, set once complete */
    uint8_t *attempts;       /* root: tries of each command task so far */
    int32_t *tree_parent;    /* every node's parent, or NULL */
    uint32_t *subtree_size;  /* nodes in each node's subtree, or NULL */

    stream_t *ups;           /* result streams to send up, ring; the head
                                is in flight when up_active */
    uint32_t up_head, up_len, up_cap;
    int up_active;

    int recv_active;         /* a task is arriving from the parent */
    task_t recv;
    uint32_t recv_count, recv_next;
    uint64_t recv_got;
    uint32_t pending;        /* asked of the parent, not yet arrived */
    meter_t *recv_meter;     /* bytes received from the parent, by time */
    double total_free;       /* the send limit's pacer, likewise */

    task_t *running;         /* the tasks computing here, nrunning of them,
                                at most slots */
    uint32_t nrunning, slots;
    int engine_busy;         /* a synthetic task has the engine */
    task_t *retrying;        /* root: commands handed out again, with the
                                nodes they failed on, until their result */
    uint32_t nretrying, retrying_cap;

    task_t *taken;           /* scratch: tasks a DONE takes off a given set */
    uint32_t taken_cap;
    core_done_t *batch;      /* completions to report upward */
    uint32_t nbatch, batch_cap;
    double batch_since;
    int batch_flushed;       /* reported; cleared at the next event */

    uint64_t seq;            /* arrival numbering of asked tasks */
    int started;
    int meters_marked;
    int finish_due;          /* root: the last task is recorded */
    int finished;            /* root: FINISHED emitted */
    core_stats_t stats;

    core_action_t *acts;
    int nacts, acts_cap;
};

int core_sending (const core_t *self);

static const char *const event_names[CORE_EV_COUNT] = {
    "START", "REQUEST", "CHUNK", "ACK", "DONE", "COMPUTED", "TICK", "STREAM",
    "RESULT", "RESULT_ACK", "LOST",
};

static const char *const action_names[CORE_ACT_COUNT] = {
    "REQUEST", "SEND_CHUNK", "ACK", "COMPUTE", "REPORT", "RELEASE", "FINISHED",
    "RECORDED", "SEND_RESULT", "ACK_RESULT", "RELEASE_RESULT", "RETRY",
    "DROP_RESULT",
};

const char *
core_event_str (core_event_type_t type)
{
    return type < CORE_EV_COUNT ? event_names[type] : "?";
}

const char *
core_action_str (core_action_type_t type)
{
    return type < CORE_ACT_COUNT ? action_names[type] : "?";
}

/*  The command-task part of a configuration. */
static int
check_commands (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (cfg->command_tasks > cfg->task_count)
        return tf_error (err, errlen, "core: %llu command tasks in a bag of %llu",
                         (unsigned long long) cfg->command_tasks,
                         (unsigned long long) cfg->task_count);
    if (cfg->is_root && cfg->command_tasks > 0 && !cfg->task_info)
        return tf_error (err, errlen, "core: command tasks need task_info");
    if (cfg->slots > CORE_MAX_SLOTS)
        return tf_error (err, errlen, "core: %u slots, more than %u", cfg->slots,
                         CORE_MAX_SLOTS);
    if (cfg->max_attempts > CORE_MAX_ATTEMPTS)
        return tf_error (err, errlen, "core: %u attempts, more than %u",
                         cfg->max_attempts, CORE_MAX_ATTEMPTS);
    for (uint32_t i = 0; cfg->tree_parent && i < cfg->nnodes; i++)
        if (cfg->tree_parent[i] >= (int32_t) cfg->nnodes
            || (cfg->tree_parent[i] < 0 && cfg->tree_parent[i] != -1))
            return tf_error (err, errlen, "core: node %u has parent %d", i,
                             cfg->tree_parent[i]);
    for (int c = 0; c < cfg->nchildren; c++)
        if (cfg->tree_parent && cfg->children[c].node >= cfg->nnodes)
            return tf_error (err, errlen, "core: child %d is node %u of %u", c,
                             cfg->children[c].node, cfg->nnodes);
    return 0;
}

/*  Keep the tree's shape, and count each node's subtree (a node walks up
 *  to the root; a cycle, which config loading rules out, stops after
 *  nnodes steps). */
static void
copy_tree (core_t *self, const int32_t *parent)
{
    uint32_t n = self->cfg.nnodes;
    self->tree_parent = xmalloc (n * sizeof *self->tree_parent);
    memcpy (self->tree_parent, parent, n * sizeof *parent);
    self->subtree_size = xcalloc (n, sizeof *self->subtree_size);
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = (int32_t) i;
        for (uint32_t steps = 0; x >= 0 && steps <= n; steps++) {
            self->subtree_size[x]++;
            x = parent[x];
        }
    }
}

core_t *
core_new (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (!cfg->policy)
        return tf_error (err, errlen, "core: no policy"), NULL;
    if (cfg->chunk_bytes == 0 || cfg->window == 0 || cfg->buffer == 0
        || cfg->batch_max == 0 || !(cfg->batch_delay >= 0))
        return tf_error (err, errlen, "core: chunk size, window, buffer and "
                         "batch size must be positive"), NULL;
    if (cfg->task_count == 0 || !(cfg->task_units > 0) || !isfinite (cfg->task_units))
        return tf_error (err, errlen, "core: the bag needs tasks of positive units"),
               NULL;
    if (cfg->task_bytes > CONFIG_MAX_TASK_BYTES)
        return tf_error (err, errlen, "core: tasks of %llu bytes, more than %llu",
                         (unsigned long long) cfg->task_bytes,
                         (unsigned long long) CONFIG_MAX_TASK_BYTES), NULL;
    if (cfg->self >= cfg->nnodes)
        return tf_error (err, errlen, "core: node index %u out of %u", cfg->self,
                         cfg->nnodes), NULL;
    if (cfg->nchildren < 0 || (cfg->nchildren > 0 && !cfg->children))
        return tf_error (err, errlen, "core: children missing"), NULL;
    if (!(cfg->meter_window > 0) || !(cfg->send_limit_bps >= 0))
        return tf_error (err, errlen, "core: meter window must be positive and the "
                         "send limit not negative"), NULL;
    if (check_commands (cfg, err, errlen))
        return NULL;

    core_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    self->cfg.children = NULL;
    self->children = xcalloc (cfg->nchildren, sizeof *self->children);
    self->cands = xcalloc (cfg->nchildren, sizeof *self->cands);
    for (int i = 0; i < cfg->nchildren; i++) {
        self->children[i].info = cfg->children[i];
        self->children[i].sent = meter_new (cfg->meter_window);
        self->children[i].drain = xcalloc (cfg->window, sizeof (drain_t));
    }
    self->recv_meter = meter_new (cfg->meter_window);
    self->slots = cfg->slots ? cfg->slots : 1;
    self->running = xcalloc (self->slots, sizeof *self->running);
    if (cfg->is_root) {
        self->done_bits = xcalloc_resident (cfg->task_count / 8 + 1, 1);
        self->attempts = xcalloc (cfg->command_tasks + 1, 1);
    }
    if (cfg->tree_parent)
        copy_tree (self, cfg->tree_parent);
    self->cfg.tree_parent = NULL;
    return self;
}

void
core_destroy (core_t **self_p)
{
    core_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        free (self->children[i].asks);
        free (self->children[i].given);
        free (self->children[i].drain);
        meter_destroy (&self->children[i].sent);
    }
    meter_destroy (&self->recv_meter);
    free (self->children);
    free (self->cands);
    free (self->queue);
    free (self->done_bits);
    free (self->attempts);
    free (self->tree_parent);
    free (self->subtree_size);
    free (self->ups);
    free (self->retrying);
    free (self->taken);
    free (self->running);
    free (self->batch);
    free (self->acts);
    free (self);
    *self_p = NULL;
}

static core_action_t *
emit (core_t *self, core_action_type_t type)
{
    if (self->nacts == self->acts_cap) {
        self->acts_cap = self->acts_cap ? 2 * self->acts_cap : 16;
        self->acts = xrealloc (self->acts, self->acts_cap * sizeof *self->acts);
    }
    core_action_t *a = &self->acts[self->nacts++];
    memset (a, 0, sizeof *a);
    a->type = type;
    return a;
}

/*  --- held tasks -------------------------------------------------------- */

static void
queue_push (core_t *self, task_t task)
{
    if (self->q_len == self->q_cap) {
        uint32_t cap = self->q_cap ? 2 * self->q_cap : 8;
        task_t *q = xmalloc (cap * sizeof *q);
        for (uint32_t i = 0; i < self->q_len; i++)
            q[i] = self->queue[(self->q_head + i) % self->q_cap];
        free (self->queue);
        self->queue = q;
        self->q_cap = cap;
        self->q_head = 0;
    }
    self->queue[(self->q_head + self->q_len++) % self->q_cap] = task;
}

static int
is_done (const core_t *self, uint64_t task)
{
    return (self->done_bits[task / 8] >> (task % 8)) & 1;
}

/*  Root: the next task of the bag not yet handed out nor complete. */
static void
skip_done (core_t *self)
{
    while (self->next_task < self->cfg.task_count && is_done (self, self->next_task))
        self->next_task++;
}

/*  A task of the bag as the root hands it out the first time. */
static task_t
fresh_task (const core_t *self, uint64_t id)
{
    task_t t = {.id = id, .units = self->cfg.task_units,
                .bytes = self->cfg.task_bytes, .kind = CORE_KIND_SYNTHETIC};
    if (id < self->cfg.command_tasks) {
        core_task_info_t info = self->cfg.task_info (self->cfg.task_arg, id);
        t.units = info.units;
        t.bytes = info.bytes;
        t.kind = CORE_KIND_COMMAND;
    }
    return t;
}

static int
avoids (const task_t *t, uint32_t node)
{
    for (uint32_t i = 0; i < t->navoid; i++)
        if (t->avoid[i] == node)
            return 1;
    return 0;
}

static int
in_subtree (const core_t *self, uint32_t x, uint32_t top)
{
    for (uint32_t steps = 0; steps <= self->cfg.nnodes; steps++) {
        if (x == top)
            return 1;
        if (self->tree_parent[x] < 0)
            return 0;
        x = (uint32_t) self->tree_parent[x];
    }
    return 0;
}

/*  Is t the task arriving from the parent now, held in part? Only a
 *  synthetic task is held before its last chunk (cut-through, on_chunk). */
static int
arriving (const core_t *self, const task_t *t)
{
    return self->recv_active && t->id == self->recv.id;
}

/*  May t go to dest: this node's engine (dest < 0: a free slot, and for a
 *  synthetic task the engine free; not a node t failed on; all of it
 *  here) or child slot dest, whose subtree must hold a node t has not
 *  failed on? A task still arriving goes to a child only while the engine
 *  is busy: an idle engine takes it once it is whole (local compute
 *  first). */
static int
eligible (const core_t *self, const task_t *t, int dest)
{
    if (dest < 0 && t->kind == CORE_KIND_SYNTHETIC && self->engine_busy)
        return 0;
    if (arriving (self, t) && (dest < 0 || !self->engine_busy))
        return 0;
    if (t->navoid == 0)
        return 1;
    if (dest < 0)
        return !avoids (t, self->cfg.self);
    if (!self->tree_parent)
        return 1;
    uint32_t top = self->children[dest].info.node, inside = 0;
    for (uint32_t i = 0; i < t->navoid; i++)
        inside += in_subtree (self, t->avoid[i], top);
    return inside < self->subtree_size[top];
}

/*  The position in the held queue of the first task that may go to dest,
 *  or -1. On the root, the queue holds tasks to try again, ahead of the
 *  bag's fresh ones (which may go anywhere: position q_len). */
static int
find_task (const core_t *self, int dest)
{
    for (uint32_t i = 0; i < self->q_len; i++)
        if (eligible (self, &self->queue[(self->q_head + i) % self->q_cap], dest))
            return (int) i;
    if (self->cfg.is_root && self->next_task < self->cfg.task_count
        && !(dest < 0 && self->engine_busy && self->next_task >= self->cfg.command_tasks))
        return (int) self->q_len;
    return -1;
}

/*  Remove and return the task find_task placed at pos. */
static task_t
take_task (core_t *self, int pos)
{
    if (self->cfg.is_root && (uint32_t) pos == self->q_len) {
        task_t t = fresh_task (self, self->next_task++);
        skip_done (self);
        return t;
    }
    uint32_t cap = self->q_cap, at = (self->q_head + (uint32_t) pos) % cap;
    task_t t = self->queue[at];
    for (uint32_t i = (uint32_t) pos; i > 0; i--) {
        uint32_t to = (self->q_head + i) % cap, from = (self->q_head + i - 1) % cap;
        self->queue[to] = self->queue[from];
    }
    self->q_head = (self->q_head + 1) % cap;
    self->q_len--;
    return t;
}

/*  Root: remember a command handed out again with nodes to avoid, until
 *  its result comes back (recall). */
static void
remember (core_t *self, const task_t *t)
{
    if (self->nretrying == self->retrying_cap) {
        self->retrying_cap = self->retrying_cap ? 2 * self->retrying_cap : 8;
        self->retrying = xrealloc (self->retrying,
                                   self->retrying_cap * sizeof *self->retrying);
    }
    self->retrying[self->nretrying++] = *t;
}

static int
recall (core_t *self, uint64_t task, task_t *out)
{
    for (uint32_t i = 0; i < self->nretrying; i++)
        if (self->retrying[i].id == task) {
            *out = self->retrying[i];
            self->retrying[i] = self->retrying[--self->nretrying];
            return 1;
        }
    return 0;
}

/*  Take the task at pos (find_task) to send or compute. On the root, a
 *  command counts one more attempt. */
static task_t
hand_out (core_t *self, int pos)
{
    task_t t = take_task (self, pos);
    if (self->cfg.is_root && t.kind == CORE_KIND_COMMAND) {
        if (self->attempts[t.id] < UINT8_MAX)
            self->attempts[t.id]++;
        if (t.navoid > 0)
            remember (self, &t);
    }
    return t;
}

/*  --- completions ------------------------------------------------------- */

static void
mark (core_t *self, uint64_t task)
{
    self->done_bits[task / 8] |= (uint8_t) (1u << (task % 8));
    self->stats.completed++;
    if (self->stats.completed == self->cfg.task_count)
        self->finish_due = 1;
}

/*  Root: a command that failed at node goes back to the queue, to avoid
 *  the nodes it failed on (those of the task in hand plus node; all of
 *  them forgotten but node when they would cover the tree, and all when
 *  the tree is one node or the policy uses the root alone). Returns 0
 *  when it has no attempt left. */
static int
retry (core_t *self, uint64_t task, uint32_t node, const task_t *had)
{
    uint32_t max = self->cfg.max_attempts ? self->cfg.max_attempts : 1;
    if (self->attempts[task] >= max)
        return 0;
    task_t t = fresh_task (self, task);
    if (had)
        memcpy (t.avoid, had->avoid, (t.navoid = had->navoid) * sizeof *t.avoid);
    if (!avoids (&t, node)) {
        if (t.navoid + 1 >= self->cfg.nnodes || t.navoid == CORE_MAX_AVOID)
            t.navoid = 0;
        if (self->cfg.nnodes > 1 && !self->cfg.policy->root_only)
            t.avoid[t.navoid++] = node;
    }
    queue_push (self, t);
    self->stats.retried++;
    core_action_t *a = emit (self, CORE_ACT_RETRY);
    a->task = task;
    a->node = node;
    a->n = self->attempts[task];
    return 1;
}

/*  A task completed at node: batched for the parent (REPORT) or, on the
 *  root, recorded and batched for the controller (RECORDED) the first
 *  time, counted as a duplicate after; a failed command with attempts
 *  left is queued again instead. */
static void
complete (core_t *self, core_done_t d, const task_t *had, double now)
{
    if (self->cfg.is_root) {
        if (is_done (self, d.task)) {
            self->stats.duplicates++;
            return;
        }
        if (d.failed && retry (self, d.task, d.node, had))
            return;
        mark (self, d.task);
        self->stats.failed += d.failed != 0;
        d.attempts = d.task < self->cfg.command_tasks ? self->attempts[d.task] : 0;
    }
    if (self->nbatch == self->batch_cap) {
        self->batch_cap = self->batch_cap ? 2 * self->batch_cap : 64;
        self->batch = xrealloc (self->batch, self->batch_cap * sizeof *self->batch);
    }
    if (self->nbatch == 0)
        self->batch_since = now;
    self->batch[self->nbatch++] = d;
}

/*  Send the batch when full or due; on the root, the last completion
 *  flushes it at once and FINISHED follows it, so every record is out
 *  before FINISHED. */
static void
flush (core_t *self, double now)
{
    int due = self->nbatch >= self->cfg.batch_max
           || now + CORE_TIME_EPS >= self->batch_since + self->cfg.batch_delay
           || self->finish_due;
    if (self->nbatch > 0 && !self->batch_flushed && due) {
        core_action_type_t type = self->cfg.is_root ? CORE_ACT_RECORDED : CORE_ACT_REPORT;
        for (uint32_t at = 0; at < self->nbatch; at += self->cfg.batch_max) {
            core_action_t *a = emit (self, type);
            a->done = self->batch + at;
            a->ndone = self->nbatch - at < self->cfg.batch_max ? self->nbatch - at
                                                               : self->cfg.batch_max;
        }
        self->batch_flushed = 1;
    }
    if (self->finish_due && !self->finished) {
        self->finished = 1;
        emit (self, CORE_ACT_FINISHED);
    }
}

/*  --- transfers to children --------------------------------------------- */

/*  Chunks of chunk_bytes in a payload of bytes (an empty one is one empty
 *  chunk). */
static uint64_t
chunk_count (const core_t *self, uint64_t bytes)
{
    return bytes == 0 ? 1 : (bytes + self->cfg.chunk_bytes - 1) / self->cfg.chunk_bytes;
}

static uint64_t
chunk_len (const core_t *self, uint64_t bytes, uint32_t index)
{
    uint64_t offset = (uint64_t) index * self->cfg.chunk_bytes;
    uint64_t left = bytes - offset;
    return left < self->cfg.chunk_bytes ? left : self->cfg.chunk_bytes;
}

/*  The pacers model a link that carries one chunk after another: a chunk
 *  of L bytes at rate r occupies the link for L / r after the link is free,
 *  and is delivered when its last byte would arrive, not before. `free` is
 *  when the link finished its previous chunk. A pacer woken late during a
 *  transfer catches up by at most one chunk; an idle link banks nothing
 *  (start_transfer moves `free` up to the transfer's start). */
static double
pacer_due (double free, uint64_t len, double rate)
{
    return free + (double) len / rate;
}

/*  The link carried a chunk of len bytes, delivered at now (>= its due
 *  time): it is free again at the chunk's virtual completion, so a late
 *  delivery does not push later chunks back, but never more than one
 *  chunk behind now. */
static double
pacer_advance (double free, double now, uint64_t len, double rate)
{
    double step = (double) len / rate;
    return free + step > now - step ? free + step : now - step;
}

/*  Chunks of ch's transfer this node holds: all of them, but of a task
 *  still arriving (cut-through) only those arrived. */
static uint32_t
held_chunks (const core_t *self, const child_t *ch)
{
    return !ch->probe && arriving (self, &ch->task) ? self->recv_next : ch->count;
}

/*  Chunks sent to ch and not yet acknowledged, over all its transfers. */
static uint32_t
unacked (const child_t *ch)
{
    return (ch->sending ? ch->next - ch->acked : 0) + ch->drain_unacked;
}

/*  Does child c's transfer have a chunk to send, window aside pacing? */
static int
has_room (const core_t *self, const child_t *ch)
{
    return ch->sending && ch->next < held_chunks (self, ch)
        && unacked (ch) < self->cfg.window;
}

/*  When may ch's next chunk be delivered? Now or earlier when unpaced. */
static double
chunk_due (const core_t *self, const child_t *ch)
{
    if (!self->cfg.pace)
        return 0;
    uint64_t len = chunk_len (self, ch->task.bytes, ch->next);
    double due = 0;
    if (ch->info.link_bps > 0)
        due = pacer_due (ch->link_free, len, ch->info.link_bps);
    if (self->cfg.send_limit_bps > 0) {
        double total = pacer_due (self->total_free, len, self->cfg.send_limit_bps);
        due = total > due ? total : due;
    }
    return due;
}

static policy_child_t
candidate (const child_t *ch, int slot)
{
    return (policy_child_t){
        .slot = slot,
        .compute_rate = ch->info.compute_rate,
        .link_mbps = ch->info.link_mbps,
        .link_idle_mbps = ch->info.link_idle_mbps,
        .ir_send = ch->info.ir_send,
        .ir_recv = ch->info.ir_recv,
        .wanted = ch->wanted,
        .oldest_request = ch->nasks ? ch->asks[ch->ask_head].first_seq : UINT64_MAX,
        .sending = ch->sending,
    };
}

static void
send_chunk (core_t *self, int c, double now)
{
    child_t *ch = &self->children[c];
    core_action_t *a = emit (self, CORE_ACT_SEND_CHUNK);
    a->child = c;
    a->task = ch->task.id;
    a->units = ch->task.units;
    a->bytes = ch->task.bytes;
    a->kind = ch->task.kind;
    memcpy (a->avoid, ch->task.avoid, ch->task.navoid * sizeof *a->avoid);
    a->navoid = ch->task.navoid;
    a->index = ch->next;
    a->count = ch->count;
    a->offset = (uint64_t) ch->next * self->cfg.chunk_bytes;
    a->len = chunk_len (self, ch->task.bytes, ch->next);
    ch->next++;
    meter_add (ch->sent, now, (double) a->len);
    if (self->cfg.pace && ch->info.link_bps > 0)
        ch->link_free = pacer_advance (ch->link_free, now, a->len, ch->info.link_bps);
    if (self->cfg.pace && self->cfg.send_limit_bps > 0)
        self->total_free = pacer_advance (self->total_free, now, a->len,
                                          self->cfg.send_limit_bps);
    ch->delivered = now;
    if (self->cfg.pace && ch->info.link_bps > 0 && ch->link_free > ch->delivered)
        ch->delivered = ch->link_free;
    if (self->cfg.pace && self->cfg.send_limit_bps > 0 && self->total_free > ch->delivered)
        ch->delivered = self->total_free;
}

/*  Send every chunk that window and pacing allow now, re-deciding before
 *  each: the transfer the policy ranks first among those that may send
 *  goes first (policy_pick_chunk), so a better child's transfer interrupts
 *  a worse one's. */
static void
pump_all (core_t *self, double now)
{
    for (;;) {
        int n = 0;
        for (int i = 0; i < self->cfg.nchildren; i++) {
            child_t *ch = &self->children[i];
            if (has_room (self, ch) && chunk_due (self, ch) <= now + CORE_TIME_EPS)
                self->cands[n++] = candidate (ch, i);
        }
        if (n == 0)
            return;
        int k = policy_pick_chunk (self->cfg.policy, &self->cfg.parent, self->cands, n);
        send_chunk (self, self->cands[k].slot, now);
    }
}

static void
serve_one_ask (child_t *ch)
{
    ask_t *ask = &ch->asks[ch->ask_head];
    ask->first_seq++;
    ch->wanted--;
    if (--ask->left == 0) {
        ch->ask_head = (ch->ask_head + 1) % ch->ask_cap;
        ch->nasks--;
    }
}

/*  Put task (a probe or not) in flight to child c, starting at now. */
static void
begin_transfer (core_t *self, int c, task_t task, int probe, double now)
{
    child_t *ch = &self->children[c];
    if (ch->sending) {
        /*  Pipelined (may_start): the transfer before waits for its acks. */
        ch->drain[(ch->drain_head + ch->ndrain++) % self->cfg.window] = (drain_t){
            .task = ch->task, .count = ch->count, .acked = ch->acked,
            .started_at = ch->started_at, .delivered = ch->delivered};
        ch->drain_unacked += ch->count - ch->acked;
    }
    ch->sending = 1;
    ch->probe = probe;
    ch->task = task;
    ch->count = (uint32_t) chunk_count (self, task.bytes);
    ch->next = ch->acked = 0;
    ch->started_at = now;
    /*  An idle link banks no credit: the catch-up allowance is for late
     *  wake-ups during a transfer, not a burst at the start of each. */
    if (ch->link_free < now)
        ch->link_free = now;
    if (core_port_busy (self, now) == 1 && self->total_free < now)
        self->total_free = now;
}

/*  Task is out in ch's subtree until its completion comes back. */
static void
given_add (child_t *ch, const task_t *task)
{
    if (ch->ngiven == ch->given_cap) {
        ch->given_cap = ch->given_cap ? 2 * ch->given_cap : 8;
        ch->given = xrealloc (ch->given, ch->given_cap * sizeof *ch->given);
    }
    ch->given[ch->ngiven++] = *task;
}

/*  Where task is among ch's outstanding ones, or -1. The set is as large
 *  as the subtree's tasks in flight. */
static int64_t
given_find (const child_t *ch, uint64_t task)
{
    for (uint32_t i = 0; i < ch->ngiven; i++)
        if (ch->given[i].id == task)
            return i;
    return -1;
}

/*  Take task off ch's outstanding ones (into *out when not NULL).
 *  Returns 0, or -1 if it was not there. */
static int
given_remove (child_t *ch, uint64_t task, task_t *out)
{
    int64_t i = given_find (ch, task);
    if (i < 0)
        return -1;
    if (out)
        *out = ch->given[i];
    ch->given[i] = ch->given[--ch->ngiven];
    return 0;
}

/*  Serve one of child c's asks with task. */
static void
start_transfer (core_t *self, int c, task_t task, double now)
{
    serve_one_ask (&self->children[c]);
    given_add (&self->children[c], &task);
    begin_transfer (self, c, task, 0, now);
}

/*  May a multi-port parent start one more transfer? Only while its
 *  outgoing total is clearly below the send limit. A transfer younger than one
 *  meter window has no trustworthy measurement yet and counts at its
 *  link's rate (unknown: at the whole limit). */
static int
spare_bandwidth (core_t *self, double now)
{
    double limit = self->cfg.send_limit_bps, total = 0;
    if (limit <= 0)
        return 1;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        child_t *ch = &self->children[i];
        if (!ch->sending)
            continue;
        if (now - ch->started_at >= self->cfg.meter_window)
            total += meter_rate (ch->sent, now);
        else
            total += ch->info.link_bps > 0 ? ch->info.link_bps : limit;
    }
    return total < CORE_SPARE_FRACTION * limit;
}

/*  Calibration: keep a probe transfer going to every streaming child. */
static void
serve_probes (core_t *self, double now)
{
    for (int i = 0; i < self->cfg.nchildren; i++) {
        child_t *ch = &self->children[i];
        if (!ch->streaming || ch->sending || ch->ndrain)
            continue;
        task_t probe = {.id = CORE_PROBE_TASK, .units = self->cfg.task_units,
                        .bytes = self->cfg.task_bytes};
        begin_transfer (self, i, probe, 1, now);
    }
}

/*  Does ch's transfer hold the sender's port at now? Paced, only until
 *  the link has carried its last chunk (ch->delivered): the ack still to
 *  come is the runtime's round trip, not the platform's, so the port is
 *  free meanwhile (docs/architecture.md, "Single-port"). Unpaced (real
 *  mode), a sent chunk is only queued, so until its last ack. */
static int
holds_port (const core_t *self, const child_t *ch, double now)
{
    if (!ch->sending)
        return 0;
    if (!self->cfg.pace)
        return 1;
    return ch->next < ch->count || ch->delivered > now + CORE_TIME_EPS;
}

/*  May a transfer to ch start now, its port rule aside? When none is in
 *  flight to it; and pipelined, when its transfer in flight has every
 *  chunk sent and (paced) delivered, and the child has fewer than window
 *  chunks unacknowledged: the acks of earlier transfers are the
 *  runtime's round trip, which the child's buffer is there to cover
 *  (docs/architecture.md, "Pipelined transfers"). Probes are not. */
static int
may_start (const core_t *self, const child_t *ch, double now)
{
    if (!ch->sending)
        return 1;
    return !ch->probe && ch->next == ch->count && unacked (ch) < self->cfg.window
        && (!self->cfg.pace || ch->delivered <= now + CORE_TIME_EPS);
}

/*  Serve children's asks while the policy allows, each a task that may
 *  go to it: a single-port policy while no transfer holds the port, a
 *  multi-port one while there is spare bandwidth. */
static void
serve_children (core_t *self, double now)
{
    const policy_t *policy = self->cfg.policy;
    for (;;) {
        int n = 0, busy = 0, port = 0;
        for (int i = 0; i < self->cfg.nchildren; i++) {
            child_t *ch = &self->children[i];
            busy += ch->sending;
            port += holds_port (self, ch, now);
            if (ch->wanted > 0 && may_start (self, ch, now) && find_task (self, i) >= 0) {
                self->cands[n] = candidate (ch, i);
                self->cands[n++].sending = 0;   /* its link is free */
            }
        }
        if (n == 0 || (!policy->multiport && port)
            || (policy->multiport && busy && !spare_bandwidth (self, now)))
            return;
        int k = policy->pick (&self->cfg.parent, self->cands, n);
        if (k < 0 || k >= n)
            return;
        int slot = self->cands[k].slot;
        start_transfer (self, slot, hand_out (self, find_task (self, slot)), now);
    }
}

/*  --- result streams up ---------------------------------------------------- */

static void
push_up (core_t *self, core_done_t d, uint64_t bytes)
{
    if (self->up_len == self->up_cap) {
        uint32_t cap = self->up_cap ? 2 * self->up_cap : 4;
        stream_t *q = xmalloc (cap * sizeof *q);
        for (uint32_t i = 0; i < self->up_len; i++)
            q[i] = self->ups[(self->up_head + i) % self->up_cap];
        free (self->ups);
        self->ups = q;
        self->up_cap = cap;
        self->up_head = 0;
    }
    self->ups[(self->up_head + self->up_len++) % self->up_cap] = (stream_t){
        .task = d.task, .node = d.node, .failed = d.failed, .bytes = bytes,
        .count = (uint32_t) chunk_count (self, bytes)};
}

/*  Send the oldest result stream's chunks while the window allows; one
 *  stream at a time, unpaced. */
static void
pump_up (core_t *self)
{
    if (self->up_len == 0)
        return;
    stream_t *u = &self->ups[self->up_head];
    self->up_active = 1;
    while (u->next < u->count && u->next - u->acked < self->cfg.window) {
        core_action_t *a = emit (self, CORE_ACT_SEND_RESULT);
        a->task = u->task;
        a->node = u->node;
        a->failed = u->failed;
        a->bytes = u->bytes;
        a->index = u->next;
        a->count = u->count;
        a->offset = (uint64_t) u->next * self->cfg.chunk_bytes;
        a->len = chunk_len (self, u->bytes, u->next);
        u->next++;
    }
}

/*  --- the fixed point after every event ---------------------------------- */

static void
dispatch (core_t *self, double now)
{
    serve_probes (self, now);
    if (!self->started) {
        pump_all (self, now);
        return;
    }
    int pos;
    while (self->nrunning < self->slots && (pos = find_task (self, -1)) >= 0) {
        task_t t = hand_out (self, pos);
        self->running[self->nrunning++] = t;
        self->engine_busy |= t.kind == CORE_KIND_SYNTHETIC;
        core_action_t *a = emit (self, CORE_ACT_COMPUTE);
        a->task = t.id;
        a->units = t.units;
        a->kind = t.kind;
    }
    /*  Paced, a transfer whose last chunk goes out with no pacing delay
     *  (an empty one) frees the port at once: serve the next ask. Each
     *  pass starts a transfer or sends a chunk, and both are bounded. */
    for (int before = -1; before != self->nacts;) {
        before = self->nacts;
        serve_children (self, now);
        pump_all (self, now);
    }
    pump_up (self);
    uint32_t want = self->cfg.buffer + self->slots - 1;
    if (!self->cfg.is_root && self->q_len + self->pending < want) {
        uint32_t n = want - (self->q_len + self->pending);
        self->pending += n;
        self->stats.requested += n;
        emit (self, CORE_ACT_REQUEST)->n = n;
    }
    flush (self, now);
}

/*  --- events --------------------------------------------------------------- */

static int
check_child (const core_t *self, int c, char *err, size_t errlen)
{
    if (c < 0 || c >= self->cfg.nchildren)
        return tf_error (err, errlen, "no child in slot %d", c);
    if (self->children[c].lost)
        return tf_error (err, errlen, "child %d is lost", c);
    return 0;
}

static int
on_request (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_child (self, ev->child, err, errlen))
        return -1;
    child_t *ch = &self->children[ev->child];
    if (ev->n == 0 || ev->n > CORE_MAX_WANTED - ch->wanted)
        return tf_error (err, errlen, "request for %u tasks with %u unserved "
                         "(limit %u)", ev->n, ch->wanted, CORE_MAX_WANTED);
    if (ch->nasks == ch->ask_cap) {
        uint32_t cap = ch->ask_cap ? 2 * ch->ask_cap : 4;
        ask_t *a = xmalloc (cap * sizeof *a);
        for (uint32_t i = 0; i < ch->nasks; i++)
            a[i] = ch->asks[(ch->ask_head + i) % ch->ask_cap];
        free (ch->asks);
        ch->asks = a;
        ch->ask_cap = cap;
        ch->ask_head = 0;
    }
    ch->asks[(ch->ask_head + ch->nasks++) % ch->ask_cap] =
        (ask_t){.first_seq = self->seq, .left = ev->n};
    self->seq += ev->n;
    ch->wanted += ev->n;
    ch->stats.requested += ev->n;
    return 0;
}

/*  The payload bytes and compute units this node expects of task: every
 *  synthetic task of the bag, and every probe, is the experiment's; a
 *  command task declares its own size,
 *  of 1 to CONFIG_MAX_STREAM_BYTES, and must be a command of the bag, its
 *  kind as the task's id says. */
static task_t
expected_task (const core_t *self, const core_event_t *ev)
{
    task_t t = {.id = ev->task, .units = self->cfg.task_units,
                .bytes = self->cfg.task_bytes, .kind = CORE_KIND_SYNTHETIC};
    if (ev->task < self->cfg.command_tasks) {
        t.kind = CORE_KIND_COMMAND;
        t.bytes = ev->bytes > 0 && ev->bytes <= CONFIG_MAX_STREAM_BYTES ? ev->bytes : 1;
        t.units = ev->units;
    }
    return t;
}

/*  A chunk's kind and the nodes it avoids. */
static int
check_chunk_kind (const core_t *self, const core_event_t *ev, task_t want, char *err,
                  size_t errlen)
{
    if (ev->kind != want.kind)
        return tf_error (err, errlen, "chunk of task %llu claims kind %d, the task is "
                         "kind %d", (unsigned long long) ev->task, (int) ev->kind,
                         (int) want.kind);
    if (ev->navoid > CORE_MAX_AVOID || (ev->navoid > 0 && !ev->avoid)
        || (ev->navoid > 0 && want.kind != CORE_KIND_COMMAND))
        return tf_error (err, errlen, "chunk of task %llu avoids %u nodes",
                         (unsigned long long) ev->task, ev->navoid);
    for (uint32_t i = 0; i < ev->navoid; i++)
        if (ev->avoid[i] >= self->cfg.nnodes)
            return tf_error (err, errlen, "chunk of task %llu avoids node %u of %u",
                             (unsigned long long) ev->task, ev->avoid[i],
                             self->cfg.nnodes);
    return 0;
}

/*  A chunk's sizes against what the task must be: its total, its chunk
 *  count, this chunk's length and the task's units, before any of them
 *  is used. */
static int
check_chunk_sizes (const core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    task_t want = expected_task (self, ev);
    if (check_chunk_kind (self, ev, want, err, errlen))
        return -1;
    if (ev->bytes != want.bytes)
        return tf_error (err, errlen, "chunk of task %llu claims %llu bytes, the task "
                         "has %llu", (unsigned long long) ev->task,
                         (unsigned long long) ev->bytes, (unsigned long long) want.bytes);
    if (ev->count != chunk_count (self, want.bytes) || ev->index >= ev->count)
        return tf_error (err, errlen, "chunk %u of %u of task %llu: the task has %llu "
                         "chunks", ev->index, ev->count, (unsigned long long) ev->task,
                         (unsigned long long) chunk_count (self, want.bytes));
    if (ev->len != chunk_len (self, want.bytes, ev->index))
        return tf_error (err, errlen, "chunk %u of task %llu has %llu bytes, expected "
                         "%llu", ev->index, (unsigned long long) ev->task,
                         (unsigned long long) ev->len,
                         (unsigned long long) chunk_len (self, want.bytes, ev->index));
    if (!isfinite (ev->units) || ev->units != want.units)
        return tf_error (err, errlen, "chunk of task %llu claims %g units, the task "
                         "has %g", (unsigned long long) ev->task, ev->units, want.units);
    return 0;
}

/*  Does this chunk fit the transfer from the parent: the task in flight
 *  (or a new one, asked for, from chunk 0), in order, of consistent
 *  sizes? Changes nothing. */
static int
check_chunk (const core_t *self, const core_event_t *ev, int probe, char *err,
             size_t errlen)
{
    if (ev->task >= self->cfg.task_count && !probe)
        return tf_error (err, errlen, "chunk of task %llu, the bag has %llu",
                         (unsigned long long) ev->task,
                         (unsigned long long) self->cfg.task_count);
    if (ev->count == 0 || ev->index >= ev->count || !(ev->units > 0))
        return tf_error (err, errlen, "chunk %u of %u of task %llu is malformed",
                         ev->index, ev->count, (unsigned long long) ev->task);
    if (check_chunk_sizes (self, ev, err, errlen))
        return -1;
    if (!self->recv_active) {
        if (ev->index != 0)
            return tf_error (err, errlen, "task %llu starts at chunk %u, not 0",
                             (unsigned long long) ev->task, ev->index);
        if (self->pending == 0 && !probe)
            return tf_error (err, errlen, "task %llu arrived unasked",
                             (unsigned long long) ev->task);
    }
    else if (ev->task != self->recv.id || ev->index != self->recv_next
             || ev->count != self->recv_count || ev->bytes != self->recv.bytes)
        return tf_error (err, errlen, "chunk %u/%u of task %llu while expecting "
                         "chunk %u/%u of task %llu", ev->index, ev->count,
                         (unsigned long long) ev->task, self->recv_next,
                         self->recv_count, (unsigned long long) self->recv.id);
    uint64_t got = self->recv_active ? self->recv_got : 0;
    int last = ev->index + 1 == ev->count;
    if (ev->len > ev->bytes - got || (last && got + ev->len != ev->bytes))
        return tf_error (err, errlen, "chunk %u/%u of task %llu has %llu bytes, "
                         "inconsistent with the task's %llu", ev->index, ev->count,
                         (unsigned long long) ev->task, (unsigned long long) ev->len,
                         (unsigned long long) ev->bytes);
    return 0;
}

static int
on_chunk (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (self->cfg.is_root)
        return tf_error (err, errlen, "the root has no parent to receive from");
    int probe = ev->task == CORE_PROBE_TASK;
    if (check_chunk (self, ev, probe, err, errlen))
        return -1;
    int last = ev->index + 1 == ev->count;
    if (!self->recv_active) {
        self->recv_active = 1;
        self->recv = (task_t){.id = ev->task, .units = ev->units, .bytes = ev->bytes,
                              .kind = ev->kind, .navoid = ev->navoid};
        if (ev->navoid > 0)
            memcpy (self->recv.avoid, ev->avoid, ev->navoid * sizeof *ev->avoid);
        self->recv_count = ev->count;
        self->recv_next = 0;
        self->recv_got = 0;
    }
    self->recv_next++;
    self->recv_got += ev->len;
    meter_add (self->recv_meter, ev->now, (double) ev->len);
    if (probe)
        self->stats.probe_bytes_in += ev->len;
    else
        self->stats.bytes_in += ev->len;
    core_action_t *a = emit (self, CORE_ACT_ACK);
    a->task = ev->task;
    a->index = ev->index;
    /*  A synthetic task is held from its first chunk on, so that it can be
     *  forwarded while it arrives (cut-through: has_room sends a child only
     *  the chunks held); a command's input bundle, spooled to a file, from
     *  its last. */
    int held_now = ev->kind == CORE_KIND_SYNTHETIC ? ev->index == 0 : last;
    if (!probe && held_now) {
        self->pending--;
        queue_push (self, self->recv);
    }
    if (last) {
        self->recv_active = 0;
        self->stats.received += !probe;
    }
    return 0;
}

/*  The last ack of a transfer to ch is in: count it, and release the
 *  task's payload. */
static void
transfer_done (core_t *self, child_t *ch, const task_t *task, double started_at,
               double delivered, double now)
{
    ch->stats.send_seconds += now - started_at;
    if (now > delivered)
        ch->stats.ack_wait_seconds += now - delivered;
    ch->stats.tasks_sent++;
    self->stats.forwarded++;
    /*  A command's input bundle stays until its result is back: if the
     *  child is lost first, the task goes out again from here. */
    if (task->kind != CORE_KIND_COMMAND || self->cfg.is_root)
        emit (self, CORE_ACT_RELEASE)->task = task->id;
}

/*  An ack of one of a pipelined child's earlier transfers: of the
 *  oldest, in order. */
static int
on_drain_ack (core_t *self, child_t *ch, const core_event_t *ev, char *err, size_t errlen)
{
    drain_t *d = &ch->drain[ch->drain_head];
    if (ev->task != d->task.id || ev->index != d->acked)
        return tf_error (err, errlen, "ack of chunk %u of task %llu, none such "
                         "awaited", ev->index, (unsigned long long) ev->task);
    uint64_t len = chunk_len (self, d->task.bytes, ev->index);
    d->acked++;
    ch->drain_unacked--;
    ch->stats.bytes_sent += len;
    self->stats.bytes_out += len;
    if (d->acked < d->count)
        return 0;
    drain_t done = *d;
    ch->drain_head = (ch->drain_head + 1) % self->cfg.window;
    ch->ndrain--;
    transfer_done (self, ch, &done.task, done.started_at, done.delivered, ev->now);
    return 0;
}

static int
on_ack (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_child (self, ev->child, err, errlen))
        return -1;
    child_t *ch = &self->children[ev->child];
    if (ch->ndrain > 0)
        return on_drain_ack (self, ch, ev, err, errlen);
    if (!ch->sending || ev->task != ch->task.id || ev->index != ch->acked
        || ev->index >= ch->next)
        return tf_error (err, errlen, "ack of chunk %u of task %llu, none such "
                         "awaited", ev->index, (unsigned long long) ev->task);
    uint64_t len = chunk_len (self, ch->task.bytes, ev->index);
    ch->acked++;
    if (ch->probe)
        ch->stats.probe_bytes += len;
    else {
        ch->stats.bytes_sent += len;
        self->stats.bytes_out += len;
    }
    if (ch->acked < ch->count)
        return 0;
    ch->sending = 0;
    if (ch->probe) {
        ch->probe = 0;
        return 0;
    }
    transfer_done (self, ch, &ch->task, ch->started_at, ch->delivered, ev->now);
    return 0;
}

/*  Every completion of a DONE must be of a task given to that child's
 *  subtree, once: take them all off its outstanding set, or none. */
static int
take_given (core_t *self, child_t *ch, const core_event_t *ev, char *err, size_t errlen)
{
    if (self->taken_cap < ev->ndone) {
        self->taken_cap = ev->ndone;
        self->taken = xrealloc (self->taken, self->taken_cap * sizeof *self->taken);
    }
    for (uint32_t i = 0; i < ev->ndone; i++)
        if (given_remove (ch, ev->done[i].task, &self->taken[i]) != 0) {
            uint64_t bad = ev->done[i].task;
            while (i-- > 0)
                given_add (ch, &self->taken[i]);
            return tf_error (err, errlen, "completion of task %llu, which was never "
                             "given to that child (or came back already)",
                             (unsigned long long) bad);
        }
    return 0;
}

static int
on_done (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_child (self, ev->child, err, errlen))
        return -1;
    if (ev->ndone > 0 && !ev->done)
        return tf_error (err, errlen, "completion batch missing");
    for (uint32_t i = 0; i < ev->ndone; i++)
        if (ev->done[i].task >= self->cfg.task_count
            || ev->done[i].node >= self->cfg.nnodes)
            return tf_error (err, errlen, "completion of task %llu by node %u is "
                             "out of range", (unsigned long long) ev->done[i].task,
                             ev->done[i].node);
        else if (ev->done[i].task < self->cfg.command_tasks || ev->done[i].failed)
            return tf_error (err, errlen, "completion of command task %llu without "
                             "its result", (unsigned long long) ev->done[i].task);
    if (take_given (self, &self->children[ev->child], ev, err, errlen) != 0)
        return -1;
    for (uint32_t i = 0; i < ev->ndone; i++) {
        core_done_t d = {.task = ev->done[i].task, .node = ev->done[i].node};
        complete (self, d, NULL, ev->now);
    }
    return 0;
}

static int
on_computed (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    uint32_t k = 0;
    while (k < self->nrunning && self->running[k].id != ev->task)
        k++;
    if (k == self->nrunning)
        return tf_error (err, errlen, "engine finished task %llu, which it was not "
                         "computing", (unsigned long long) ev->task);
    task_t ran = self->running[k];
    int command = ran.kind == CORE_KIND_COMMAND;
    if (!command && (ev->bytes > 0 || ev->failed))
        return tf_error (err, errlen, "synthetic task %llu has no result stream",
                         (unsigned long long) ev->task);
    if (command && !self->cfg.is_root
        && (ev->bytes == 0 || ev->bytes > CONFIG_MAX_STREAM_BYTES))
        return tf_error (err, errlen, "task %llu: a result of %llu bytes",
                         (unsigned long long) ev->task, (unsigned long long) ev->bytes);
    self->running[k] = self->running[--self->nrunning];
    self->engine_busy &= command;
    self->stats.computed++;
    emit (self, CORE_ACT_RELEASE)->task = ev->task;
    core_done_t d = {.task = ev->task, .node = self->cfg.self, .failed = ev->failed != 0};
    if (command && !self->cfg.is_root)
        push_up (self, d, ev->bytes);
    else
        complete (self, d, &ran, ev->now);
    return 0;
}

/*  Does a result chunk from child c fit: a command of the bag computed in
 *  c's subtree, a size within limits, in order within c's stream? */
static int
check_result (const core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_child (self, ev->child, err, errlen))
        return -1;
    const child_t *ch = &self->children[ev->child];
    if (ev->task >= self->cfg.command_tasks || ev->node >= self->cfg.nnodes
        || (self->tree_parent && !in_subtree (self, ev->node, ch->info.node)))
        return tf_error (err, errlen, "result of task %llu by node %u from child %d: "
                         "no such command there", (unsigned long long) ev->task,
                         ev->node, ev->child);
    if (ev->bytes == 0 || ev->bytes > CONFIG_MAX_STREAM_BYTES
        || ev->count != chunk_count (self, ev->bytes) || ev->index >= ev->count
        || ev->len != chunk_len (self, ev->bytes, ev->index))
        return tf_error (err, errlen, "result chunk %u/%u of task %llu: %llu of %llu "
                         "bytes is malformed", ev->index, ev->count,
                         (unsigned long long) ev->task, (unsigned long long) ev->len,
                         (unsigned long long) ev->bytes);
    if (!ch->res_active && given_find (ch, ev->task) < 0)
        return tf_error (err, errlen, "result of task %llu, which was never given to "
                         "that child (or came back already)", (unsigned long long) ev->task);
    const stream_t *r = &ch->res;
    if (ch->res_active ? (ev->task != r->task || ev->node != r->node
                          || ev->bytes != r->bytes || ev->index != r->next
                          || (ev->failed != 0) != r->failed)
                       : ev->index != 0)
        return tf_error (err, errlen, "result chunk %u of task %llu out of order",
                         ev->index, (unsigned long long) ev->task);
    return 0;
}

static int
on_result (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_result (self, ev, err, errlen))
        return -1;
    child_t *ch = &self->children[ev->child];
    if (!ch->res_active) {
        ch->res_active = 1;
        ch->res = (stream_t){.task = ev->task, .node = ev->node,
                             .failed = ev->failed != 0, .bytes = ev->bytes,
                             .count = ev->count};
    }
    ch->res.next++;
    self->stats.result_bytes_in += ev->len;
    core_action_t *a = emit (self, CORE_ACT_ACK_RESULT);
    a->child = ev->child;
    a->task = ev->task;
    a->index = ev->index;
    if (ch->res.next < ch->res.count)
        return 0;
    ch->res_active = 0;
    given_remove (ch, ev->task, NULL);
    core_done_t d = {.task = ev->task, .node = ev->node, .failed = ch->res.failed};
    if (!self->cfg.is_root) {
        emit (self, CORE_ACT_RELEASE)->task = ev->task;   /* its input bundle */
        push_up (self, d, ev->bytes);
        return 0;
    }
    task_t had;
    int known = recall (self, ev->task, &had);
    complete (self, d, known ? &had : NULL, ev->now);
    emit (self, CORE_ACT_RELEASE_RESULT)->task = ev->task;
    return 0;
}

static int
on_result_ack (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    stream_t *u = self->up_len ? &self->ups[self->up_head] : NULL;
    if (!u || !self->up_active || ev->task != u->task || ev->index != u->acked
        || ev->index >= u->next)
        return tf_error (err, errlen, "ack of result chunk %u of task %llu, none "
                         "such awaited", ev->index, (unsigned long long) ev->task);
    self->stats.result_bytes_out += chunk_len (self, u->bytes, ev->index);
    if (++u->acked < u->count)
        return 0;
    self->stats.results_up++;
    emit (self, CORE_ACT_RELEASE_RESULT)->task = u->task;
    self->up_head = (self->up_head + 1) % self->up_cap;
    self->up_len--;
    self->up_active = 0;
    return 0;
}

/*  Child c is lost: every task its subtree had, the one in flight to it
 *  included, is queued again here (on the root, ahead of the bag's fresh
 *  ones), a result stream half arrived from it is dropped, and it is
 *  never served nor heard again. A task that failed before keeps the
 *  nodes it failed on. */
static int
on_lost (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_child (self, ev->child, err, errlen))
        return -1;
    child_t *ch = &self->children[ev->child];
    ch->lost = 1;
    ch->sending = ch->streaming = ch->probe = 0;
    ch->ndrain = ch->drain_unacked = 0;
    ch->nasks = ch->wanted = 0;
    if (ch->res_active)
        emit (self, CORE_ACT_DROP_RESULT)->task = ch->res.task;
    ch->res_active = 0;
    for (uint32_t i = 0; i < ch->ngiven; i++) {
        task_t t = ch->given[i], had;
        if (self->cfg.is_root && recall (self, t.id, &had))
            t = had;   /* handed out again from the queue: remembered anew */
        queue_push (self, t);
        self->stats.requeued++;
    }
    ch->ngiven = 0;
    self->stats.children_lost++;
    return 0;
}

/*  Check an event and change the state by it. Returns 0, or -1 with a
 *  message in err and the state unchanged. */
static int
apply (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    int rc = 0;
    switch (ev->type) {
    case CORE_EV_START:
        self->started = 1;
        break;
    case CORE_EV_REQUEST:
        rc = on_request (self, ev, err, errlen);
        break;
    case CORE_EV_CHUNK:
        rc = on_chunk (self, ev, err, errlen);
        break;
    case CORE_EV_ACK:
        rc = on_ack (self, ev, err, errlen);
        break;
    case CORE_EV_DONE:
        rc = on_done (self, ev, err, errlen);
        break;
    case CORE_EV_COMPUTED:
        rc = on_computed (self, ev, err, errlen);
        break;
    case CORE_EV_RESULT:
        rc = on_result (self, ev, err, errlen);
        break;
    case CORE_EV_RESULT_ACK:
        rc = on_result_ack (self, ev, err, errlen);
        break;
    case CORE_EV_LOST:
        rc = on_lost (self, ev, err, errlen);
        break;
    case CORE_EV_TICK:
        break;
    case CORE_EV_STREAM:
        rc = check_child (self, ev->child, err, errlen);
        if (rc == 0) {
            self->children[ev->child].streaming = ev->n != 0;
            meter_add (self->children[ev->child].sent, ev->now, 0);
        }
        break;
    default:
        rc = tf_error (err, errlen, "unknown event %d", (int) ev->type);
    }
    return rc;
}

int
core_handle (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    self->nacts = 0;
    if (!self->meters_marked) {
        /*  The meters measure from the first event on (a run's START, or a
         *  calibration's first probe). */
        meter_add (self->recv_meter, ev->now, 0);
        for (int i = 0; i < self->cfg.nchildren; i++)
            meter_add (self->children[i].sent, ev->now, 0);
        self->meters_marked = 1;
    }
    if (self->batch_flushed) {
        self->nbatch = 0;
        self->batch_flushed = 0;
    }
    int rc = apply (self, ev, err, errlen);
    if (rc < 0) {
        self->stats.malformed++;
        self->nacts = 0;
        return -1;
    }
    dispatch (self, ev->now);
    return 0;
}

const core_action_t *
core_actions (const core_t *self, int *count)
{
    *count = self->nacts;
    return self->acts;
}

core_stats_t
core_stats (const core_t *self)
{
    core_stats_t s = self->stats;
    s.held = self->q_len;
    s.computing = (int) self->nrunning;
    return s;
}

core_child_stats_t
core_child_stats (const core_t *self, int child)
{
    core_child_stats_t none = {0};
    if (child < 0 || child >= self->cfg.nchildren)
        return none;
    return self->children[child].stats;
}

int
core_is_done (const core_t *self, uint64_t task)
{
    if (!self->done_bits || task >= self->cfg.task_count)
        return 0;
    return is_done (self, task);
}

int
core_mark_done (core_t *self, uint64_t task)
{
    if (!self->done_bits || task >= self->cfg.task_count || self->started)
        return -1;
    if (!is_done (self, task))
        mark (self, task);
    skip_done (self);
    return 0;
}

double
core_next_deadline (const core_t *self, double now)
{
    double due = -1;
    if (self->nbatch > 0 && !self->batch_flushed)
        due = self->batch_since + self->cfg.batch_delay;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        const child_t *ch = &self->children[i];
        /*  Paced: a transfer's last chunk delivered frees the port. */
        double at = has_room (self, ch) ? chunk_due (self, ch)
                  : holds_port (self, ch, now) && ch->next == ch->count ? ch->delivered
                                                                        : -1;
        if (at >= 0 && (due < 0 || at < due))
            due = at;
    }
    if (due < 0)
        return -1;
    return due > now ? due - now : 0;
}

double
core_recv_rate (core_t *self, double now)
{
    return meter_rate (self->recv_meter, now);
}

double
core_send_rate (core_t *self, int child, double now)
{
    if (child < 0 || child >= self->cfg.nchildren)
        return 0;
    return meter_rate (self->children[child].sent, now);
}

void
core_set_child_ir (core_t *self, int child, double ir_send)
{
    if (child >= 0 && child < self->cfg.nchildren && ir_send >= 0 && isfinite (ir_send))
        self->children[child].info.ir_send = ir_send;
}

int
core_port_busy (const core_t *self, double now)
{
    int n = 0;
    for (int i = 0; i < self->cfg.nchildren; i++)
        n += holds_port (self, &self->children[i], now);
    return n;
}

int
core_sending (const core_t *self)
{
    int n = 0;
    for (int i = 0; i < self->cfg.nchildren; i++)
        n += self->children[i].sending + (int) self->children[i].ndrain;
    return n;
}
