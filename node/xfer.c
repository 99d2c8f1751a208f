/*  xfer — a parent's transfers to its children (xfer.h).
 *
 *  Per child: a ring of unserved asks, the transfer in flight, a ring of
 *  earlier transfers draining their acks (at most window), the link's
 *  pacer, a send meter and the set of tasks given to its subtree. No
 *  allocation per chunk: the rings grow by doubling and the drain ring is
 *  sized once.
 */
#include "node/xfer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/meter.h"
#include "overlay/util.h"

/*  A multi-port parent starts another transfer only while its outgoing
 *  total is below this fraction of the send limit. A measured rate jitters
 *  by about a chunk per meter window; without the margin, a saturated
 *  sender reads as "just below" now and then and starts a transfer that
 *  only starves, holding a task hostage. */
#define XFER_SPARE_FRACTION 0.9

/*  One transfer to a child: a task or a probe, in chunks. */
typedef struct {
    task_t task;
    int probe;               /* a calibration probe */
    uint32_t count, next, acked;   /* chunks: total, sent, acknowledged */
    double started_at;       /* when it began */
    double delivered;        /* when the last chunk sent reaches the child:
                                its pacers' finish, or its send time */
    int total_held;          /* a chunk of it waited on the send limit's
                                pacer: its time is not the link's */
} transfer_t;

/*  One REQUEST's unserved tasks; each task has its own arrival number. */
typedef struct {
    uint64_t first_seq;
    uint32_t left;
} ask_t;

/*  A child's unserved asks, a ring, oldest at head. */
typedef struct {
    ask_t *ring;
    uint32_t head, n, cap;
    uint32_t wanted;         /* sum of left over asks */
} asks_t;

/*  A child's earlier transfers, all sent, awaiting their acks while a
 *  later one goes on (pipelined: the child's link is free once the last
 *  chunk is delivered): a ring of cfg.window, oldest at head. Each has an
 *  unacknowledged chunk, and a child has fewer than window of those. */
typedef struct {
    transfer_t *ring;
    uint32_t head, n;
    uint32_t unacked;        /* their unacknowledged chunks */
} drains_t;

/*  The tasks handed to a child's subtree whose completion has not come
 *  back: a completion of any other is refused (it was never given); if
 *  the child is lost, they are queued again. */
typedef struct {
    task_t *items;
    uint32_t n, cap;
} given_t;

/*  What a parent keeps of one child. */
typedef struct {
    core_child_info_t info;
    asks_t asks;
    int sending;             /* a transfer is in flight: cur */
    transfer_t cur;
    drains_t drains;
    double link_free;        /* the link's pacer: when it finished carrying
                                its last chunk (virtual time) */
    double link_share;       /* of link_bps, what its transfers get: 1, or
                                less while the child's background load
                                communicates (xfer_set_link_share) */
    meter_t *sent;           /* bytes sent to it, by time */
    given_t given;
    int streaming;           /* calibration: keep a probe transfer going */
    int lost;                /* never served again */
    core_child_stats_t stats;
} child_t;

struct xfer {
    xfer_cfg_t cfg;
    child_t *children;
    policy_child_t *cands;   /* scratch for the policy */
    int *ready;              /* scratch: children that may start ... */
    int busy, port;          /* ... and, then, transfers in flight and
                                holding the port (xfer_list_ready) */
    task_t *taken;           /* scratch: tasks a DONE takes off a given set */
    uint32_t taken_cap;
    uint64_t seq;            /* arrival numbering of asked tasks */
    int nstreaming;          /* children streaming probes */
    double total_free;       /* the send limit's pacer */
    int arr_active;          /* a task is arriving from the parent ... */
    uint64_t arr_task;       /* ... this one ... */
    uint32_t arr_held;       /* ... of which these chunks are here */
};

xfer_t *
xfer_new (const xfer_cfg_t *cfg)
{
    xfer_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    self->cfg.children = NULL;
    self->children = xcalloc (cfg->nchildren, sizeof *self->children);
    self->cands = xcalloc (cfg->nchildren, sizeof *self->cands);
    self->ready = xcalloc (cfg->nchildren, sizeof *self->ready);
    for (int i = 0; i < cfg->nchildren; i++) {
        self->children[i].info = cfg->children[i];
        self->children[i].link_share = 1;
        self->children[i].sent = meter_new (cfg->meter_window);
        self->children[i].drains.ring = xcalloc (cfg->window, sizeof (transfer_t));
    }
    return self;
}

void
xfer_destroy (xfer_t **self_p)
{
    xfer_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        free (self->children[i].asks.ring);
        free (self->children[i].given.items);
        free (self->children[i].drains.ring);
        meter_destroy (&self->children[i].sent);
    }
    free (self->children);
    free (self->cands);
    free (self->ready);
    free (self->taken);
    free (self);
    *self_p = NULL;
}

int
xfer_check_child (const xfer_t *self, int c, char *err, size_t errlen)
{
    if (c < 0 || c >= self->cfg.nchildren)
        return tf_error (err, errlen, "no child in slot %d", c);
    if (self->children[c].lost)
        return tf_error (err, errlen, "child %d is lost", c);
    return 0;
}

int
xfer_add_ask (xfer_t *self, int c, uint32_t n, char *err, size_t errlen)
{
    child_t *ch = &self->children[c];
    if (n == 0 || n > XFER_MAX_WANTED - ch->asks.wanted)
        return tf_error (err, errlen, "request for %u tasks with %u unserved "
                         "(limit %u)", n, ch->asks.wanted, XFER_MAX_WANTED);
    if (ch->asks.n == ch->asks.cap) {
        uint32_t cap = ch->asks.cap ? 2 * ch->asks.cap : 4;
        ask_t *a = xmalloc (cap * sizeof *a);
        for (uint32_t i = 0; i < ch->asks.n; i++)
            a[i] = ch->asks.ring[(ch->asks.head + i) % ch->asks.cap];
        free (ch->asks.ring);
        ch->asks.ring = a;
        ch->asks.cap = cap;
        ch->asks.head = 0;
    }
    ch->asks.ring[(ch->asks.head + ch->asks.n++) % ch->asks.cap] =
        (ask_t){.first_seq = self->seq, .left = n};
    self->seq += n;
    ch->asks.wanted += n;
    ch->stats.requested += n;
    return 0;
}

uint32_t
xfer_child_node (const xfer_t *self, int c)
{
    return self->children[c].info.node;
}

void
xfer_set_arriving (xfer_t *self, int active, uint64_t task, uint32_t held)
{
    self->arr_active = active;
    self->arr_task = task;
    self->arr_held = held;
}

void
xfer_mark_meters (xfer_t *self, double now)
{
    for (int i = 0; i < self->cfg.nchildren; i++)
        meter_add (self->children[i].sent, now, 0);
}

void
xfer_set_streaming (xfer_t *self, int c, int on, double now)
{
    self->nstreaming += (on != 0) - self->children[c].streaming;
    self->children[c].streaming = on != 0;
    meter_add (self->children[c].sent, now, 0);
}

/*  --- pacing and windows --------------------------------------------------- */

/*  The pacers model a link that carries one chunk after another: a chunk
 *  of L bytes at rate r occupies the link for L / r after the link is free,
 *  and is delivered when its last byte would arrive, not before. `free` is
 *  when the link finished its previous chunk. A pacer woken late during a
 *  transfer catches up by at most one chunk; an idle link banks nothing
 *  (begin_transfer moves `free` up to the transfer's start). */
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

/*  The rate ch's link carries its transfers at, bytes/s; 0: unpaced. */
static double
link_rate (const child_t *ch)
{
    return ch->info.link_bps * ch->link_share;
}

/*  Chunks of ch's transfer this node holds: all of them, but of a task
 *  still arriving (cut-through) only those arrived. */
static uint32_t
held_chunks (const xfer_t *self, const child_t *ch)
{
    return !ch->cur.probe && self->arr_active && ch->cur.task.id == self->arr_task
         ? self->arr_held : ch->cur.count;
}

/*  Chunks sent to ch and not yet acknowledged, over all its transfers. */
static uint32_t
unacked (const child_t *ch)
{
    return (ch->sending ? ch->cur.next - ch->cur.acked : 0) + ch->drains.unacked;
}

/*  Does ch's transfer have a chunk to send, pacing aside? */
static int
has_room (const xfer_t *self, const child_t *ch)
{
    return ch->sending && ch->cur.next < held_chunks (self, ch)
        && unacked (ch) < self->cfg.window;
}

/*  When may ch's next chunk be delivered? Now or earlier when unpaced. */
static double
chunk_due (const xfer_t *self, const child_t *ch)
{
    if (!self->cfg.pace)
        return 0;
    const transfer_t *t = &ch->cur;
    uint64_t len = task_chunk_len (self->cfg.chunk_bytes, t->task.bytes, t->next);
    double due = 0;
    if (link_rate (ch) > 0)
        due = pacer_due (ch->link_free, len, link_rate (ch));
    if (self->cfg.send_limit_bps > 0) {
        double total = pacer_due (self->total_free, len, self->cfg.send_limit_bps);
        due = total > due ? total : due;
    }
    return due;
}

/*  Does ch's transfer hold the sender's port at now? Paced, only until
 *  the link has carried its last chunk (ch->cur.delivered): the ack still to
 *  come is the runtime's round trip, not the platform's, so the port is
 *  free meanwhile (docs/architecture.md, "Single-port"). Unpaced (real
 *  mode), a sent chunk is only queued, so until its last ack. */
static int
holds_port (const xfer_t *self, const child_t *ch, double now)
{
    if (!ch->sending)
        return 0;
    if (!self->cfg.pace)
        return 1;
    return ch->cur.next < ch->cur.count || ch->cur.delivered > now + CORE_TIME_EPS;
}

/*  May a transfer to ch start now, its port rule aside? When none is in
 *  flight to it; and pipelined, when its transfer in flight has every
 *  chunk sent and (paced) delivered, and the child has fewer than window
 *  chunks unacknowledged: the acks of earlier transfers are the
 *  runtime's round trip, which the child's buffer is there to cover
 *  (docs/architecture.md, "Pipelined transfers"). Probes are not. */
static int
may_start (const xfer_t *self, const child_t *ch, double now)
{
    if (!ch->sending)
        return 1;
    const transfer_t *t = &ch->cur;
    return !t->probe && t->next == t->count && unacked (ch) < self->cfg.window
        && (!self->cfg.pace || t->delivered <= now + CORE_TIME_EPS);
}

/*  May a multi-port parent start one more transfer? Only while its
 *  outgoing total is clearly below the send limit. A transfer younger than
 *  one meter window has no trustworthy measurement yet and counts at its
 *  link's rate (unknown: at the whole limit). */
static int
spare_bandwidth (xfer_t *self, double now)
{
    double limit = self->cfg.send_limit_bps, total = 0;
    if (limit <= 0)
        return 1;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        child_t *ch = &self->children[i];
        if (!ch->sending)
            continue;
        if (now - ch->cur.started_at >= self->cfg.meter_window)
            total += meter_rate (ch->sent, now);
        else
            total += link_rate (ch) > 0 ? link_rate (ch) : limit;
    }
    return total < XFER_SPARE_FRACTION * limit;
}

/*  --- starting transfers ---------------------------------------------------- */

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
        .wanted = ch->asks.wanted,
        .oldest_request = ch->asks.n ? ch->asks.ring[ch->asks.head].first_seq
                                     : UINT64_MAX,
        .sending = ch->sending,
    };
}

/*  Put task (a probe or not) in flight to child c, starting at now. */
static void
begin_transfer (xfer_t *self, int c, const task_t *task, int probe, double now)
{
    child_t *ch = &self->children[c];
    if (ch->sending) {
        /*  Pipelined (may_start): the transfer before waits for its acks. */
        ch->drains.ring[(ch->drains.head + ch->drains.n++) % self->cfg.window] = ch->cur;
        ch->drains.unacked += ch->cur.count - ch->cur.acked;
    }
    ch->sending = 1;
    ch->cur = (transfer_t){
        .task = *task, .probe = probe, .started_at = now, .delivered = now,
        .count = (uint32_t) task_chunk_count (self->cfg.chunk_bytes, task->bytes)};
    /*  An idle link banks no credit: the catch-up allowance is for late
     *  wake-ups during a transfer, not a burst at the start of each. */
    if (ch->link_free < now)
        ch->link_free = now;
    if (xfer_port_busy (self, now) == 1 && self->total_free < now)
        self->total_free = now;
}

void
xfer_serve_probes (xfer_t *self, double now)
{
    for (int i = 0; self->nstreaming > 0 && i < self->cfg.nchildren; i++) {
        child_t *ch = &self->children[i];
        if (!ch->streaming || ch->sending || ch->drains.n)
            continue;
        task_t probe = {.id = CORE_PROBE_TASK, .units = self->cfg.probe_units,
                        .bytes = self->cfg.probe_bytes};
        begin_transfer (self, i, &probe, 1, now);
    }
}

int *
xfer_list_ready (xfer_t *self, double now, int *n)
{
    int k = 0, busy = 0, port = 0, nchildren = self->cfg.nchildren, *ready = self->ready;
    for (int i = 0; i < nchildren; i++) {
        const child_t *ch = &self->children[i];
        busy += ch->sending;
        port += holds_port (self, ch, now);
        if (ch->asks.wanted > 0 && may_start (self, ch, now))
            ready[k++] = i;
    }
    self->busy = busy;
    self->port = port;
    *n = k;
    return ready;
}

int
xfer_pick_child (xfer_t *self, double now, const int *slots, int n)
{
    const policy_t *policy = self->cfg.policy;
    if (n == 0 || (!policy->multiport && self->port)
        || (policy->multiport && self->busy && !spare_bandwidth (self, now)))
        return -1;
    for (int i = 0; i < n; i++) {
        self->cands[i] = candidate (&self->children[slots[i]], slots[i]);
        self->cands[i].sending = 0;   /* its link is free */
    }
    int k = policy->pick (&self->cfg.parent, self->cands, n);
    if (k < 0 || k >= n)
        return -1;
    return self->cands[k].slot;
}

/*  Task is out in ch's subtree until its completion comes back. */
static void
given_add (child_t *ch, const task_t *task)
{
    if (ch->given.n == ch->given.cap) {
        ch->given.cap = ch->given.cap ? 2 * ch->given.cap : 8;
        ch->given.items = xrealloc (ch->given.items,
                                    ch->given.cap * sizeof *ch->given.items);
    }
    ch->given.items[ch->given.n++] = *task;
}

/*  Where task is among ch's outstanding ones, or -1. The set is as large
 *  as the subtree's tasks in flight. */
static int64_t
given_find (const child_t *ch, uint64_t task)
{
    for (uint32_t i = 0; i < ch->given.n; i++)
        if (ch->given.items[i].id == task)
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
        *out = ch->given.items[i];
    ch->given.items[i] = ch->given.items[--ch->given.n];
    return 0;
}

void
xfer_start_task (xfer_t *self, int c, const task_t *task, double now)
{
    child_t *ch = &self->children[c];
    ask_t *ask = &ch->asks.ring[ch->asks.head];
    ask->first_seq++;
    ch->asks.wanted--;
    if (--ask->left == 0) {
        ch->asks.head = (ch->asks.head + 1) % ch->asks.cap;
        ch->asks.n--;
    }
    given_add (ch, task);
    begin_transfer (self, c, task, 0, now);
}

/*  --- chunks and acks -------------------------------------------------------- */

static void
send_chunk (xfer_t *self, core_acts_t *acts, int c, double now)
{
    child_t *ch = &self->children[c];
    core_action_t *a = core_acts_emit (acts, CORE_ACT_SEND_CHUNK);
    a->child = c;
    a->task = ch->cur.task.id;
    a->units = ch->cur.task.units;
    a->bytes = ch->cur.task.bytes;
    a->kind = ch->cur.task.kind;
    memcpy (a->avoid, ch->cur.task.avoid, ch->cur.task.navoid * sizeof *a->avoid);
    a->navoid = ch->cur.task.navoid;
    a->index = ch->cur.next;
    a->count = ch->cur.count;
    a->offset = (uint64_t) ch->cur.next * self->cfg.chunk_bytes;
    a->len = task_chunk_len (self->cfg.chunk_bytes, ch->cur.task.bytes, ch->cur.next);
    ch->cur.next++;
    meter_add (ch->sent, now, (double) a->len);
    int link = self->cfg.pace && link_rate (ch) > 0;
    int total = self->cfg.pace && self->cfg.send_limit_bps > 0;
    if (total && (!link || pacer_due (self->total_free, a->len, self->cfg.send_limit_bps)
                               > pacer_due (ch->link_free, a->len, link_rate (ch))
                                     + CORE_TIME_EPS))
        ch->cur.total_held = 1;
    if (link)
        ch->link_free = pacer_advance (ch->link_free, now, a->len, link_rate (ch));
    if (total)
        self->total_free = pacer_advance (self->total_free, now, a->len,
                                          self->cfg.send_limit_bps);
    ch->cur.delivered = now;
    if (link && ch->link_free > ch->cur.delivered)
        ch->cur.delivered = ch->link_free;
    if (total && self->total_free > ch->cur.delivered)
        ch->cur.delivered = self->total_free;
}

void
xfer_pump_chunks (xfer_t *self, core_acts_t *acts, double now)
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
        send_chunk (self, acts, self->cands[k].slot, now);
    }
}

/*  The last ack of transfer t to ch is in at now: count it, and release
 *  the task's payload. */
static void
transfer_done (xfer_t *self, child_t *ch, const transfer_t *t, double now,
               core_acts_t *acts)
{
    ch->stats.send_seconds += now - t->started_at;
    if (now > t->delivered)
        ch->stats.ack_wait_seconds += now - t->delivered;
    ch->stats.tasks_sent++;
    /*  The link's own rate: paced, until its pacer delivered the last
     *  chunk (the ack after is the runtime's round trip); unpaced (real
     *  mode, where sending only queues), until the last ack. */
    if (!t->total_held) {
        ch->stats.link_bytes += t->task.bytes;
        ch->stats.link_seconds += (self->cfg.pace ? t->delivered : now) - t->started_at;
    }
    /*  A command's input bundle stays until its result is back: if the
     *  child is lost first, the task goes out again from here. */
    if (t->task.kind != CORE_KIND_COMMAND || !self->cfg.keep_commands)
        core_acts_emit (acts, CORE_ACT_RELEASE)->task = t->task.id;
}

/*  An ack of one of a pipelined child's earlier transfers: of the
 *  oldest, in order. */
static int
ack_drain (xfer_t *self, child_t *ch, uint64_t task, uint32_t index, double now,
           core_acts_t *acts, char *err, size_t errlen)
{
    transfer_t *d = &ch->drains.ring[ch->drains.head];
    if (task != d->task.id || index != d->acked)
        return tf_error (err, errlen, "ack of chunk %u of task %llu, none such "
                         "awaited", index, (unsigned long long) task);
    ch->stats.bytes_sent += task_chunk_len (self->cfg.chunk_bytes, d->task.bytes, index);
    d->acked++;
    ch->drains.unacked--;
    if (d->acked < d->count)
        return 0;
    ch->drains.head = (ch->drains.head + 1) % self->cfg.window;
    ch->drains.n--;
    transfer_done (self, ch, d, now, acts);
    return 0;
}

int
xfer_ack_chunk (xfer_t *self, int c, uint64_t task, uint32_t index, double now,
                core_acts_t *acts, char *err, size_t errlen)
{
    child_t *ch = &self->children[c];
    if (ch->drains.n > 0)
        return ack_drain (self, ch, task, index, now, acts, err, errlen);
    transfer_t *t = &ch->cur;
    if (!ch->sending || task != t->task.id || index != t->acked || index >= t->next)
        return tf_error (err, errlen, "ack of chunk %u of task %llu, none such "
                         "awaited", index, (unsigned long long) task);
    uint64_t len = task_chunk_len (self->cfg.chunk_bytes, t->task.bytes, index);
    t->acked++;
    if (t->probe)
        ch->stats.probe_bytes += len;
    else
        ch->stats.bytes_sent += len;
    if (t->acked < t->count)
        return 0;
    ch->sending = 0;
    if (t->probe) {
        t->probe = 0;
        return 0;
    }
    transfer_done (self, ch, t, now, acts);
    return 0;
}

/*  --- the subtree's tasks ----------------------------------------------------- */

int
xfer_take_given (xfer_t *self, int c, const core_done_t *done, uint32_t ndone,
                 char *err, size_t errlen)
{
    child_t *ch = &self->children[c];
    if (self->taken_cap < ndone) {
        self->taken_cap = ndone;
        self->taken = xrealloc (self->taken, self->taken_cap * sizeof *self->taken);
    }
    for (uint32_t i = 0; i < ndone; i++)
        if (given_remove (ch, done[i].task, &self->taken[i]) != 0) {
            uint64_t bad = done[i].task;
            while (i-- > 0)
                given_add (ch, &self->taken[i]);
            return tf_error (err, errlen, "task %llu was never given to that child "
                             "(or came back already)", (unsigned long long) bad);
        }
    return 0;
}

const task_t *
xfer_taken (const xfer_t *self)
{
    return self->taken;
}

uint32_t
xfer_drop_asks (xfer_t *self, int c)
{
    asks_t *a = &self->children[c].asks;
    uint32_t dropped = a->wanted;
    a->n = a->head = a->wanted = 0;
    return dropped;
}

int
xfer_was_given (const xfer_t *self, int c, uint64_t task)
{
    return given_find (&self->children[c], task) >= 0;
}

void
xfer_drop_given (xfer_t *self, int c, uint64_t task)
{
    given_remove (&self->children[c], task, NULL);
}

const task_t *
xfer_lose_child (xfer_t *self, int c, uint32_t *n)
{
    child_t *ch = &self->children[c];
    ch->lost = 1;
    self->nstreaming -= ch->streaming;
    ch->sending = ch->streaming = ch->cur.probe = 0;
    ch->drains.n = ch->drains.unacked = 0;
    ch->asks.n = ch->asks.wanted = 0;
    *n = ch->given.n;
    ch->given.n = 0;
    return ch->given.items;
}

/*  --- what the runtime reads -------------------------------------------------- */

double
xfer_next_due (const xfer_t *self, double now)
{
    double due = -1;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        const child_t *ch = &self->children[i];
        /*  Paced: a transfer's last chunk delivered frees the port. */
        double at = -1;
        if (has_room (self, ch))
            at = chunk_due (self, ch);
        else if (holds_port (self, ch, now) && ch->cur.next == ch->cur.count)
            at = ch->cur.delivered;
        if (at >= 0 && (due < 0 || at < due))
            due = at;
    }
    return due;
}

double
xfer_send_rate (xfer_t *self, int c, double now)
{
    if (c < 0 || c >= self->cfg.nchildren)
        return 0;
    return meter_rate (self->children[c].sent, now);
}

/*  A new belief replaces the old only when it is a finite number >= 0
 *  (NaN, negative or infinite: kept). */
static void
believe (double *field, double value)
{
    if (value >= 0 && isfinite (value))
        *field = value;
}

void
xfer_set_child_rates (xfer_t *self, int c, const core_rates_t *rates)
{
    if (c < 0 || c >= self->cfg.nchildren || !rates)
        return;
    core_child_info_t *info = &self->children[c].info;
    believe (&info->compute_rate, rates->compute_rate);
    believe (&info->link_mbps, rates->link_mbps);
    believe (&info->link_idle_mbps, rates->link_idle_mbps);
    believe (&info->ir_send, rates->ir_send);
    believe (&info->ir_recv, rates->ir_recv);
}

void
xfer_set_child_ir (xfer_t *self, int c, double ir_send)
{
    core_rates_t r = {NAN, NAN, NAN, ir_send, NAN};
    xfer_set_child_rates (self, c, &r);
}

void
xfer_set_compute_rate (xfer_t *self, double units_per_s)
{
    if (units_per_s > 0 && isfinite (units_per_s))
        self->cfg.parent.compute_rate = units_per_s;
}

void
xfer_set_link_share (xfer_t *self, int c, double share)
{
    if (c >= 0 && c < self->cfg.nchildren && share > 0 && share <= 1)
        self->children[c].link_share = share;
}

int
xfer_port_busy (const xfer_t *self, double now)
{
    int n = 0;
    for (int i = 0; i < self->cfg.nchildren; i++)
        n += holds_port (self, &self->children[i], now);
    return n;
}

int
xfer_sending (const xfer_t *self)
{
    int n = 0;
    for (int i = 0; i < self->cfg.nchildren; i++)
        n += self->children[i].sending + (int) self->children[i].drains.n;
    return n;
}

core_child_stats_t
xfer_child_stats (const xfer_t *self, int c)
{
    core_child_stats_t none = {0};
    if (c < 0 || c >= self->cfg.nchildren)
        return none;
    core_child_stats_t s = self->children[c].stats;
    s.given = self->children[c].given.n;
    return s;
}
