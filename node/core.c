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
} task_t;

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
    meter_t *sent;           /* bytes sent to it, by time */
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

    int recv_active;         /* a task is arriving from the parent */
    task_t recv;
    uint32_t recv_count, recv_next;
    uint64_t recv_got;
    uint32_t pending;        /* asked of the parent, not yet arrived */
    meter_t *recv_meter;     /* bytes received from the parent, by time */
    double total_free;       /* the send limit's pacer, likewise */

    int computing;
    uint64_t computing_task;

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
};

static const char *const action_names[CORE_ACT_COUNT] = {
    "REQUEST", "SEND_CHUNK", "ACK", "COMPUTE", "REPORT", "RELEASE", "FINISHED",
    "RECORDED",
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

    core_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    self->cfg.children = NULL;
    self->children = xcalloc (cfg->nchildren, sizeof *self->children);
    self->cands = xcalloc (cfg->nchildren, sizeof *self->cands);
    for (int i = 0; i < cfg->nchildren; i++) {
        self->children[i].info = cfg->children[i];
        self->children[i].sent = meter_new (cfg->meter_window);
    }
    self->recv_meter = meter_new (cfg->meter_window);
    if (cfg->is_root)
        self->done_bits = xcalloc (cfg->task_count / 8 + 1, 1);
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
        meter_destroy (&self->children[i].sent);
    }
    meter_destroy (&self->recv_meter);
    free (self->children);
    free (self->cands);
    free (self->queue);
    free (self->done_bits);
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
has_task (const core_t *self)
{
    if (self->cfg.is_root)
        return self->next_task < self->cfg.task_count;
    return self->q_len > 0;
}

static task_t
take_task (core_t *self)
{
    task_t t;
    if (self->cfg.is_root) {
        t.id = self->next_task++;
        t.units = self->cfg.task_units;
        t.bytes = self->cfg.task_bytes;
    }
    else {
        t = self->queue[self->q_head];
        self->q_head = (self->q_head + 1) % self->q_cap;
        self->q_len--;
    }
    return t;
}

/*  --- completions ------------------------------------------------------- */

/*  Root: a task's first completion is recorded and goes into the batch
 *  streamed to the controller; a later one is a duplicate. Returns 1 if
 *  recorded. */
static int
record (core_t *self, uint64_t task)
{
    uint8_t bit = (uint8_t) (1u << (task % 8));
    if (self->done_bits[task / 8] & bit) {
        self->stats.duplicates++;
        return 0;
    }
    self->done_bits[task / 8] |= bit;
    self->stats.completed++;
    if (self->stats.completed == self->cfg.task_count)
        self->finish_due = 1;
    return 1;
}

/*  A task completed at node: batched for the parent (REPORT) or, on the
 *  root, for the controller (RECORDED). */
static void
complete (core_t *self, uint64_t task, uint32_t node, double now)
{
    if (self->cfg.is_root && !record (self, task))
        return;
    if (self->nbatch == self->batch_cap) {
        self->batch_cap = self->batch_cap ? 2 * self->batch_cap : 64;
        self->batch = xrealloc (self->batch, self->batch_cap * sizeof *self->batch);
    }
    if (self->nbatch == 0)
        self->batch_since = now;
    self->batch[self->nbatch++] = (core_done_t){.task = task, .node = node};
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

/*  Does child c's transfer have a chunk to send, window aside pacing? */
static int
has_room (const core_t *self, const child_t *ch)
{
    return ch->sending && ch->next < ch->count && ch->next - ch->acked < self->cfg.window;
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
    if (core_sending (self) == 1 && self->total_free < now)
        self->total_free = now;
}

/*  Serve one of child c's asks with task. */
static void
start_transfer (core_t *self, int c, task_t task, double now)
{
    serve_one_ask (&self->children[c]);
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
        if (!ch->streaming || ch->sending)
            continue;
        task_t probe = {.id = CORE_PROBE_TASK, .units = self->cfg.task_units,
                        .bytes = self->cfg.task_bytes};
        begin_transfer (self, i, probe, 1, now);
    }
}

static void
serve_children (core_t *self, double now)
{
    const policy_t *policy = self->cfg.policy;
    while (has_task (self)) {
        int n = 0, busy = 0;
        for (int i = 0; i < self->cfg.nchildren; i++) {
            child_t *ch = &self->children[i];
            busy += ch->sending;
            if (ch->wanted > 0 && !ch->sending)
                self->cands[n++] = candidate (ch, i);
        }
        if (n == 0 || (busy && !policy->multiport)
            || (busy && !spare_bandwidth (self, now)))
            return;
        int k = policy->pick (&self->cfg.parent, self->cands, n);
        if (k < 0 || k >= n)
            return;
        start_transfer (self, self->cands[k].slot, take_task (self), now);
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
    if (!self->computing && has_task (self)) {
        task_t t = take_task (self);
        self->computing = 1;
        self->computing_task = t.id;
        core_action_t *a = emit (self, CORE_ACT_COMPUTE);
        a->task = t.id;
        a->units = t.units;
    }
    serve_children (self, now);
    pump_all (self, now);
    if (!self->cfg.is_root && self->q_len + self->pending < self->cfg.buffer) {
        uint32_t n = self->cfg.buffer - (self->q_len + self->pending);
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

/*  The payload bytes and compute units this node expects of task: today
 *  every task of the bag, and every probe, is the experiment's. A task
 *  that declares its own size (command tasks, later) answers here, still
 *  within CONFIG_MAX_TASK_BYTES. */
static task_t
expected_task (const core_t *self, uint64_t task)
{
    return (task_t){.id = task, .units = self->cfg.task_units,
                    .bytes = self->cfg.task_bytes};
}

/*  A chunk's sizes against what the task must be: its total, its chunk
 *  count, this chunk's length and the task's units, before any of them
 *  is used. */
static int
check_chunk_sizes (const core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    task_t want = expected_task (self, ev->task);
    if (ev->bytes > CONFIG_MAX_TASK_BYTES || ev->bytes != want.bytes)
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
        self->recv = (task_t){.id = ev->task, .units = ev->units, .bytes = ev->bytes};
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
    if (last) {
        self->recv_active = 0;
        if (!probe) {
            self->pending--;
            self->stats.received++;
            queue_push (self, self->recv);
        }
    }
    return 0;
}

static int
on_ack (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (check_child (self, ev->child, err, errlen))
        return -1;
    child_t *ch = &self->children[ev->child];
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
    ch->stats.send_seconds += ev->now - ch->started_at;
    if (ev->now > ch->delivered)
        ch->stats.ack_wait_seconds += ev->now - ch->delivered;
    ch->stats.tasks_sent++;
    self->stats.forwarded++;
    emit (self, CORE_ACT_RELEASE)->task = ch->task.id;
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
    for (uint32_t i = 0; i < ev->ndone; i++)
        complete (self, ev->done[i].task, ev->done[i].node, ev->now);
    return 0;
}

static int
on_computed (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    if (!self->computing || ev->task != self->computing_task)
        return tf_error (err, errlen, "engine finished task %llu, which it was not "
                         "computing", (unsigned long long) ev->task);
    self->computing = 0;
    self->stats.computed++;
    emit (self, CORE_ACT_RELEASE)->task = ev->task;
    complete (self, ev->task, self->cfg.self, ev->now);
    return 0;
}

int
core_handle (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    int rc = 0;
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
    s.computing = self->computing;
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
    return (self->done_bits[task / 8] >> (task % 8)) & 1;
}

double
core_next_deadline (const core_t *self, double now)
{
    double due = -1;
    if (self->nbatch > 0 && !self->batch_flushed)
        due = self->batch_since + self->cfg.batch_delay;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        const child_t *ch = &self->children[i];
        if (!has_room (self, ch))
            continue;
        double at = chunk_due (self, ch);
        if (due < 0 || at < due)
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
core_sending (const core_t *self)
{
    int n = 0;
    for (int i = 0; i < self->cfg.nchildren; i++)
        n += self->children[i].sending;
    return n;
}
