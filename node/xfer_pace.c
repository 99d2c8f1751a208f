/*  xfer_pace — pacing and windows, chunks and acks of a parent's
 *  transfers. See node/xfer_int.h.
 */
#include <math.h>

#include "node/meter.h"
#include "node/xfer_int.h"
#include "overlay/util.h"

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

/*  A planned split's pacer (xfer_split.c) holds ch's transfers to its
 *  share of the port, in every mode, on top of the link's own. Unlike
 *  the link's, it banks: it may lag now by one task at the share (the
 *  transfer's bytes / split_bps), so that the time lost between two
 *  transfers (an ask's round trip, a wake-up) is made up at the link's
 *  rate, not lost to the share for good. */
static double
split_bank (const child_t *ch)
{
    return (double) ch->cur.task.bytes / ch->split_bps;
}

/*  When may ch's chunk of len bytes go by its share? 0 without one. */
static double
split_due (const child_t *ch, uint64_t len)
{
    return ch->split_bps > 0 ? pacer_due (ch->split_free, len, ch->split_bps) : 0;
}

/*  Advance ch's split pacer by a chunk of len sent at now. */
static void
split_advance (child_t *ch, uint64_t len, double now)
{
    if (!(ch->split_bps > 0))
        return;
    double free = ch->split_free + (double) len / ch->split_bps;
    double floor = now - split_bank (ch);
    ch->split_free = free > floor ? free : floor;
}

void
xfer_split_begin (child_t *ch, double now)
{
    if (ch->split_bps > 0 && ch->split_free < now - split_bank (ch))
        ch->split_free = now - split_bank (ch);
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
int
xfer_has_room (const xfer_t *self, const child_t *ch)
{
    return ch->sending && ch->cur.next < held_chunks (self, ch)
        && unacked (ch) < self->cfg.window;
}

/*  When may ch's next chunk be delivered? Now or earlier when unpaced. */
double
xfer_chunk_due (const xfer_t *self, const child_t *ch)
{
    const transfer_t *t = &ch->cur;
    uint64_t len = task_chunk_len (self->cfg.chunk_bytes, t->task.bytes, t->next);
    double due = split_due (ch, len);
    if (!self->cfg.pace)
        return due;
    if (link_rate (ch) > 0) {
        double link = pacer_due (ch->link_free, len, link_rate (ch));
        due = link > due ? link : due;
    }
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
int
xfer_holds_port (const xfer_t *self, const child_t *ch, double now)
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
int
xfer_may_start (const xfer_t *self, const child_t *ch, double now)
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
int
xfer_spare_bandwidth (xfer_t *self, double now)
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
    /*  Held to a share below the link's rate, the time is the plan's,
     *  not the link's. */
    if (ch->split_bps > 0 && !(link && link_rate (ch) <= ch->split_bps))
        ch->cur.total_held = 1;
    split_advance (ch, a->len, now);
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
            if (xfer_has_room (self, ch) && xfer_chunk_due (self, ch) <= now + CORE_TIME_EPS)
                self->cands[n++] = xfer_candidate (ch, i);
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

