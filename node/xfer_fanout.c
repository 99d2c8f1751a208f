/*  xfer_fanout — the ratio rule in a multi-port parent's transfers: which
 *  children its send port can feed (node/fanout.h), and whether a child
 *  beyond them may start a transfer now. See node/xfer_int.h.
 *
 *  The children are put in the policy's order (its order function, equal
 *  ones by slot, as its pick breaks ties); a child the policy would not
 *  serve were it the only one asking (its pick refuses it: the never-use
 *  rule) or that is lost never counts. A child's consumption rate is its
 *  live subtree bound That_i once its SUBTREE gave one, else C_i / w; as
 *  no subtree takes more than its link carries, it is capped at the
 *  link's B_r = link MB/s / Z. k is taken again whenever any of these
 *  beliefs changes, so the order and the rates are always those the
 *  policy decides with (an order on the asks, as FCFS's, would need it
 *  taken at every decision; no multi-port policy has one).
 *
 *  Who may start a transfer (xfer_fanout_admit), the policy then picking
 *  among them as ever:
 *  - a kept child short of the tasks that keep it busy (busy_hold); when
 *    none is short, the kept ones holding least beyond that: the port's
 *    time goes where a task is soonest computed, not to the policy's
 *    favourite's queue, which at the end of the bag would leave it
 *    computing alone;
 *  - a child beyond the kept ones when the plan leaves room for its
 *    demand below the limit, or when no kept child has an ask the port
 *    could serve (all satisfied); and the next in order after them (the
 *    spare) also when every kept child that asks holds what keeps it
 *    busy: the port has room, which would otherwise only lengthen a kept
 *    child's queue. So at most k + 1 children are busy while the kept
 *    ones ask.
 */
#include <math.h>
#include <stdlib.h>

#include "node/xfer_int.h"
#include "overlay/util.h"

/*  The most tasks a kept child holds before it counts as busy enough
 *  (busy_hold): a bound on a number made from beliefs. */
#define FANOUT_MAX_HOLD 1000.0

void
xfer_fanout_init (xfer_t *self)
{
    fanout_state_t *f = &self->fan;
    int n = self->cfg.nchildren;
    f->on = self->cfg.fanout != 0;
    f->that = xcalloc (n + 1, sizeof *f->that);
    f->demand = xcalloc (n + 1, sizeof *f->demand);
    f->hold = xcalloc (n + 1, sizeof *f->hold);
    f->kept = xcalloc (n + 1, sizeof *f->kept);
    f->order = xcalloc (n + 1, sizeof *f->order);
    f->rule = xcalloc (n + 1, sizeof *f->rule);
    f->admitted = xcalloc (n + 1, sizeof *f->admitted);
    for (int i = 0; i < n; i++)
        f->that[i] = -1;
    xfer_fanout_update (self);
}

void
xfer_fanout_free (xfer_t *self)
{
    fanout_state_t *f = &self->fan;
    free (f->that);
    free (f->demand);
    free (f->hold);
    free (f->kept);
    free (f->order);
    free (f->rule);
    free (f->admitted);
}

/*  Does the policy put slot a before slot b? */
static int
goes_before (const xfer_t *self, int a, int b)
{
    const policy_t *p = self->cfg.policy;
    if (p->order) {
        policy_child_t ca = xfer_candidate (&self->children[a], a);
        policy_child_t cb = xfer_candidate (&self->children[b], b);
        int cmp = p->order (&self->cfg.parent, &ca, &cb);
        if (cmp != 0)
            return cmp > 0;
    }
    return a < b;
}

void
xfer_rank (const xfer_t *self, int *slots)
{
    for (int i = 0; i < self->cfg.nchildren; i++) {   /* insertion sort: a handful */
        int j = i;
        for (; j > 0 && goes_before (self, i, slots[j - 1]); j--)
            slots[j] = slots[j - 1];
        slots[j] = i;
    }
}

/*  Would the policy serve child c were it the only one asking? */
static int
servable (xfer_t *self, int c)
{
    if (!self->cfg.policy->pick)
        return 0;
    policy_child_t one = xfer_candidate (&self->children[c], c);
    one.wanted = 1;
    one.sending = 0;
    return self->cfg.policy->pick (&self->cfg.parent, &one, 1) == 0;
}

/*  Child c's consumption rate, tasks/s: That_i, else C_i / w; at most
 *  what its link carries. */
static double
consumption (const xfer_t *self, int c)
{
    const core_child_info_t *info = &self->children[c].info;
    const policy_parent_t *p = &self->cfg.parent;
    double r = self->fan.that[c] >= 0 ? self->fan.that[c]
             : p->task_units > 0 ? info->compute_rate / p->task_units : 0;
    if (p->task_mb > 0 && info->link_mbps > 0 && info->link_mbps / p->task_mb < r)
        r = info->link_mbps / p->task_mb;
    return r;
}

/*  The tasks given to a child at rate r that keep it busy: the one it
 *  computes and what it consumes while one more task crosses the port
 *  (Z / S seconds at the send limit), at least one. */
static uint32_t
busy_hold (const xfer_t *self, double r)
{
    const policy_parent_t *p = &self->cfg.parent;
    double cross = p->send_limit_mbps > 0 ? p->task_mb / p->send_limit_mbps : 0;
    double more = ceil (r * cross);
    if (!(more >= 1))
        more = 1;
    return 1 + (uint32_t) (more < FANOUT_MAX_HOLD ? more : FANOUT_MAX_HOLD);
}

void
xfer_fanout_update (xfer_t *self)
{
    fanout_state_t *f = &self->fan;
    int n = self->cfg.nchildren;
    if (!f->on)
        return;
    xfer_rank (self, f->order);
    for (int i = 0; i < n; i++) {
        int c = f->order[i];
        f->demand[c] = fanout_demand (consumption (self, c), self->cfg.parent.task_mb);
        f->hold[c] = busy_hold (self, consumption (self, c));
        f->rule[i] = (fanout_child_t){.rate = consumption (self, c),
                                      .excluded = self->children[c].lost
                                                  || !servable (self, c)};
    }
    f->k = fanout_count (self->cfg.parent.send_limit_mbps, self->cfg.parent.task_mb,
                         f->rule, n);
    f->kept_demand = 0;
    f->spare = -1;
    for (int i = 0, kept = 0; i < n; i++) {
        int c = f->order[i];
        f->kept[c] = !f->rule[i].excluded && kept < f->k;
        kept += f->kept[c];
        f->kept_demand += f->kept[c] ? f->demand[c] : 0;
        if (!f->kept[c] && !f->rule[i].excluded && f->spare < 0)
            f->spare = c;
    }
}

/*  Is slot c among slots[0..n)? */
static int
offered (int c, const int *slots, int n)
{
    for (int i = 0; i < n; i++)
        if (slots[i] == c)
            return 1;
    return 0;
}

/*  Seconds until ch's link has carried the rest of its transfer at its
 *  own rate (the chunks not yet sent, and the last one sent still being
 *  delivered); 0 when none is going. */
static double
link_busy_for (const xfer_t *self, const child_t *ch, double now)
{
    if (!ch->sending)
        return 0;
    const transfer_t *t = &ch->cur;
    double rate = ch->info.link_bps * ch->link_share;
    double left = (double) (t->count - t->next) * self->cfg.chunk_bytes;
    double due = t->delivered > now ? t->delivered - now : 0;
    return due + (rate > 0 ? left / rate : 0);
}

/*  Does kept child c need the port at now? It does with an ask the port
 *  could serve: offered now, or soon, its link free again within the
 *  time one task takes to cross the port at the send limit (a slow link
 *  does not hold the port for its child meanwhile). A kept child ready
 *  but not offered has no task that may go to it, and must not hold the
 *  others back. */
static int
kept_needs (const xfer_t *self, int c, double now, const int *slots, int n)
{
    const child_t *ch = &self->children[c];
    if (!self->fan.kept[c] || ch->lost || ch->asks.wanted == 0)
        return 0;
    if (offered (c, slots, n))
        return 1;
    double cross = self->cfg.send_limit_bps > 0
                 ? (double) ch->cur.task.bytes / self->cfg.send_limit_bps : 0;
    return !xfer_may_start (self, ch, now) && link_busy_for (self, ch, now) <= cross;
}

/*  How far child c's tasks in hand exceed what keeps it busy (negative:
 *  it is short of them). */
static int64_t
excess (const xfer_t *self, int c)
{
    return (int64_t) self->children[c].given.n - (int64_t) self->fan.hold[c];
}

int
xfer_fanout_admit (xfer_t *self, double now, const int *slots, int n)
{
    fanout_state_t *f = &self->fan;
    int asking = 0, k = 0;
    int64_t least = INT64_MAX;
    for (int c = 0; c < self->cfg.nchildren; c++)
        if (kept_needs (self, c, now, slots, n)) {
            asking = 1;
            least = excess (self, c) < least ? excess (self, c) : least;
        }
    double room = self->cfg.parent.send_limit_mbps - f->kept_demand;
    for (int i = 0; i < n; i++) {
        int c = slots[i];
        if (f->kept[c] ? excess (self, c) < 0 || excess (self, c) <= least
                       : !asking || f->demand[c] <= room || (least >= 0 && c == f->spare))
            f->admitted[k++] = c;
    }
    return k;
}

void
xfer_set_child_bound (xfer_t *self, int c, double tasks_per_s)
{
    if (c < 0 || c >= self->cfg.nchildren || !(tasks_per_s >= 0)
        || !isfinite (tasks_per_s))
        return;
    self->fan.that[c] = tasks_per_s;
    self->children[c].info.that = tasks_per_s;
    xfer_replan (self);
}

int
xfer_fanout (const xfer_t *self)
{
    return self->fan.on ? self->fan.k : -1;
}
