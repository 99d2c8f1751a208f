/*  xfer — a parent's transfers to its children (xfer.h): creation, the
 *  asks, starting transfers and what the runtime reads; the pacing, the
 *  chunks and acks are node/xfer_pace.c's, the tasks given to each
 *  subtree node/xfer_given.c's (their state: node/xfer_int.h).
 *
 *  Per child: a ring of unserved asks, the transfer in flight, a ring of
 *  earlier transfers draining their acks (at most window), the link's
 *  pacer, a send meter and the set of tasks given to its subtree; the
 *  ratio rule's choice of the children kept busy is node/xfer_fanout.c's. No
 *  allocation per chunk: the rings grow by doubling and the drain ring is
 *  sized once.
 */
#include "node/xfer_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/meter.h"
#include "overlay/util.h"

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
        self->children[i].lost = self->children[i].vacant = cfg->children[i].absent;
        self->children[i].sent = meter_new (cfg->meter_window);
        self->children[i].drains.ring = xcalloc (cfg->window, sizeof (transfer_t));
    }
    xfer_fanout_init (self);
    xfer_split_init (self);
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
    xfer_fanout_free (self);
    free (self->plan_x);
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

/*  --- starting transfers ---------------------------------------------------- */

policy_child_t
xfer_candidate (const child_t *ch, int slot)
{
    return (policy_child_t){
        .slot = slot,
        .compute_rate = ch->info.compute_rate,
        .link_mbps = ch->info.link_mbps,
        .link_idle_mbps = ch->info.link_idle_mbps,
        .ir_send = ch->info.ir_send,
        .ir_send_alone = ch->info.ir_send_alone,
        .ir_recv = ch->info.ir_recv,
        .wanted = ch->asks.wanted,
        .oldest_request = ch->asks.n ? ch->asks.ring[ch->asks.head].first_seq
                                     : UINT64_MAX,
        .sending = ch->sending,
        .that = ch->info.that,
        .split = ch->split,
    };
}

/*  Put task (a probe or not) in flight to child c, starting at now. */
static void
begin_transfer (xfer_t *self, int c, const task_t *task, int probe, double now)
{
    child_t *ch = &self->children[c];
    if (ch->sending) {
        /*  Pipelined (xfer_may_start): the transfer before waits for its acks. */
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
    xfer_split_begin (ch, now);
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
        port += xfer_holds_port (self, ch, now);
        if (ch->asks.wanted > 0 && xfer_may_start (self, ch, now))
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
    /*  A planned split paces every child at its share, the shares within
     *  the send limit: no port rule. */
    if (n == 0 || (!policy->multiport && self->port)
        || (policy->multiport && !policy->split && self->busy
            && !xfer_spare_bandwidth (self, now)))
        return -1;
    if (self->fan.on) {
        n = xfer_fanout_admit (self, now, slots, n);
        slots = self->fan.admitted;
    }
    for (int i = 0; i < n; i++) {
        self->cands[i] = xfer_candidate (&self->children[slots[i]], slots[i]);
        self->cands[i].sending = 0;   /* its link is free */
    }
    int k = policy->pick (&self->cfg.parent, self->cands, n);
    if (k < 0 || k >= n)
        return -1;
    return self->cands[k].slot;
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
    xfer_given_add (ch, task);
    begin_transfer (self, c, task, 0, now);
}

/*  --- what the runtime reads -------------------------------------------------- */

double
xfer_next_due (const xfer_t *self, double now)
{
    double due = -1;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        const child_t *ch = &self->children[i];
        /*  Paced: a transfer's last chunk delivered frees the port.
         *  Unpaced, its last ack does: an event, not a time. */
        double at = -1;
        if (xfer_has_room (self, ch))
            at = xfer_chunk_due (self, ch);
        else if (self->cfg.pace && xfer_holds_port (self, ch, now)
                 && ch->cur.next == ch->cur.count)
            at = ch->cur.delivered;
        if (at >= 0 && (due < 0 || at < due))
            due = at;
    }
    return due;
}

double
xfer_sent_bytes (const xfer_t *self, int c)
{
    if (c < 0 || c >= self->cfg.nchildren)
        return 0;
    return meter_total (self->children[c].sent);
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
    xfer_replan (self);
}

int
xfer_attach_child (xfer_t *self, int c, const core_child_info_t *info, char *err,
                   size_t errlen)
{
    if (c < 0 || c >= self->cfg.nchildren || !self->children[c].vacant)
        return tf_error (err, errlen, "child slot %d is not vacant", c);
    child_t *ch = &self->children[c];
    ch->info = *info;
    ch->info.absent = 0;
    ch->vacant = ch->lost = 0;
    xfer_split_attached (self, c);
    xfer_replan (self);
    return 0;
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
    xfer_replan (self);   /* the never-use rule, the order and the split weigh it */
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
        n += xfer_holds_port (self, &self->children[i], now);
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

