/*  xfer_split — a planned split of the send port (a policy with a split,
 *  ia-split; docs/policies.md, "IA:Split"): each child's transfers paced
 *  at the tasks/s x_i its policy plans for it, x_i Z MB/s, re-planned
 *  whenever the beliefs it rests on change; and what the end-game's
 *  estimates read of a child. See node/xfer_int.h.
 */
#include <math.h>
#include <stdlib.h>

#include "node/xfer_int.h"
#include "overlay/util.h"

/*  Physical bytes/s per platform MB/s of ch's link, from its facts as
 *  created or attached (the beliefs about link_mbps may change later;
 *  the bytes a platform MB is made of do not). */
static double
bytes_per_mb (const core_child_info_t *info)
{
    return info->link_mbps > 0 && info->link_bps > 0 ? info->link_bps / info->link_mbps : 0;
}

void
xfer_split_init (xfer_t *self)
{
    for (int i = 0; i < self->cfg.nchildren; i++)
        self->children[i].bps_per_mb = bytes_per_mb (&self->children[i].info);
    self->plan_x = xcalloc ((size_t) self->cfg.nchildren + 1, sizeof *self->plan_x);
    xfer_split_update (self);
}

void
xfer_split_attached (xfer_t *self, int c)
{
    self->children[c].bps_per_mb = bytes_per_mb (&self->children[c].info);
}

void
xfer_split_update (xfer_t *self)
{
    const policy_t *policy = self->cfg.policy;
    if (!policy->split)
        return;
    int n = 0;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        child_t *ch = &self->children[i];
        ch->split = ch->split_bps = 0;
        if (!ch->lost)
            self->cands[n++] = xfer_candidate (ch, i);
    }
    policy->split (&self->cfg.parent, self->cands, n, self->plan_x);
    double z = self->cfg.parent.task_mb;
    for (int k = 0; k < n; k++) {
        child_t *ch = &self->children[self->cands[k].slot];
        double x = self->plan_x[k];
        ch->split = x > 0 && isfinite (x) ? x : 0;
        /*  Z = 0 moves no bytes: nothing to pace. */
        ch->split_bps = z > 0 ? ch->split * z * ch->bps_per_mb : 0;
    }
}

void
xfer_replan (xfer_t *self)
{
    xfer_fanout_update (self);
    xfer_split_update (self);
}

double
xfer_split_rate (const xfer_t *self, int c)
{
    return c >= 0 && c < self->cfg.nchildren ? self->children[c].split : 0;
}

policy_child_t
xfer_child_facts (const xfer_t *self, int c)
{
    return xfer_candidate (&self->children[c], c);
}

double
xfer_child_bps (const xfer_t *self, int c)
{
    const child_t *ch = &self->children[c];
    double bps = ch->info.link_mbps * ch->bps_per_mb;
    if (ch->split_bps > 0 && (!(bps > 0) || ch->split_bps < bps))
        bps = ch->split_bps;
    return bps > 0 ? bps : 0;
}

uint64_t
xfer_bytes_left (const xfer_t *self, int c, uint64_t task)
{
    const child_t *ch = &self->children[c];
    if (!ch->sending || ch->cur.probe || ch->cur.task.id != task)
        return 0;
    uint64_t sent = (uint64_t) ch->cur.next * self->cfg.chunk_bytes;
    return sent < ch->cur.task.bytes ? ch->cur.task.bytes - sent : 0;
}
