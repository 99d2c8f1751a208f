/*  beat — liveness (docs/reliability.md): heartbeats to the parent and
 *  the children on connections of their own, peers found silent, a lost
 *  child's tasks queued again, a lost parent's orphan stopping, and how
 *  long the controller has been quiet (node_beat_t). See node/runtime.h.
 */
#include <inttypes.h>

#include "node/runtime.h"
#include "overlay/util.h"

/*  A BEAT (proto_empty) or the warm-up BEAT (proto_warm), taken, to a
 *  child's heartbeat identity, or to the parent. Never blocking (send
 *  timeouts of 0), and a beat that cannot go is not an error: silence is
 *  what counts. */
static void
send_beat_to (node_t *self, int child, zmsg_t *msg)
{
    zmsg_pushstrf (msg, "%s%s", self->cfg->nodes[self->me->children[child]].name,
                   NODE_BEAT_SUFFIX);
    if (zmsg_send (&msg, self->link.router) != 0)
        zmsg_destroy (&msg);
}

static void
send_beat_to_parent (node_t *self, zmsg_t *msg)
{
    if (zmsg_send (&msg, self->link.beat) != 0)
        zmsg_destroy (&msg);
}

/*  Our heartbeats: to the parent on the heartbeat connection, to each
 *  child not lost on its own. */
static void
send_beats (node_t *self)
{
    if (self->link.beat)
        send_beat_to_parent (self, proto_empty (PROTO_BEAT));
    for (int i = 0; i < self->me->nchildren; i++)
        if (!liveness_lost (self->beat.live, i))
            send_beat_to (self, i, proto_empty (PROTO_BEAT));
}

/*  The start of the run: the warm-up PING to the controller and BEAT to
 *  the parent, so the queues of these quiet connections take all their
 *  memory now (overlay/proto.h). The parent answers in kind when the
 *  first beat comes (on_child), the controller on START. */
static void
warm_pipes (node_t *self)
{
    zmsg_t *msg = proto_warm (PROTO_PING);
    if (zmsg_send (&msg, self->link.ctl) != 0)
        zmsg_destroy (&msg);
    if (self->link.beat)
        send_beat_to_parent (self, proto_warm (PROTO_BEAT));
}

/*  Child slot is lost (why): tell the controller, and the core, which
 *  queues again every task its subtree had. In a calibration a lost
 *  child is fatal: the phases need every link. */
static int
lose_child (node_t *self, int slot, const char *why)
{
    const char *name = self->cfg->nodes[self->me->children[slot]].name;
    liveness_forget (self->beat.live, slot);
    act_cut_off (self, slot);
    uint64_t before = core_stats (self->parts.core).requeued;
    core_event_t ev = {.type = CORE_EV_LOST, .now = tf_now (), .child = slot};
    char err[TF_ERRLEN];
    if (core_handle (self->parts.core, &ev, err, sizeof err) < 0)
        return 0;   /* lost already */
    node_log (self, "lost child %s (%s): %" PRIu64 " of its tasks queued again", name,
              why, core_stats (self->parts.core).requeued - before);
    zmsg_t *msg = proto_lost (name, why);
    zmsg_send (&msg, self->link.ctl);
    if (self->link.measure)
        return node_fail (self, "a child was lost during the calibration");
    int rc = act_perform (self);
    return rc == 0 ? beat_settle_losses (self) : rc;
}

int
beat_settle_losses (node_t *self)
{
    for (int i = 0; i < self->me->nchildren; i++)
        if (act_unreachable (self, i) && !liveness_lost (self->beat.live, i)) {
            int rc = lose_child (self, i, "its connection is gone");
            if (rc != 0)
                return rc;
        }
    return 0;
}

/*  The parent is lost: tell the controller, then stop; in an adapting
 *  run, wait to be moved under another parent (node/reparent.c). */
static int
orphaned (node_t *self, const char *why)
{
    if (reparent_may_wait (self))
        return reparent_orphaned (self, why);
    const char *parent = self->moved.parent;
    node_log (self, "lost the parent %s (%s): stopping", parent, why);
    zmsg_t *msg = proto_lost (parent, why);
    zmsg_send (&msg, self->link.ctl);
    return NODE_ORPHANED;
}

int
beat_keep_alive (node_t *self, double now, double *wait)
{
    if (liveness_beat_due (self->beat.live, now))
        send_beats (self);
    double silent;
    int peer;
    while ((peer = liveness_overdue (self->beat.live, now, &silent)) >= 0) {
        char why[64];
        snprintf (why, sizeof why, "silent for %.2f s", silent);
        int rc = peer == self->me->nchildren ? orphaned (self, why)
                                             : lose_child (self, peer, why);
        if (rc != 0)
            return rc;
    }
    double due = liveness_next_deadline (self->beat.live, now);
    if (due < *wait)
        *wait = due;
    return 0;
}

void
beat_on_parent (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->link.beat);
    if (!msg)
        return;
    liveness_heard (self->beat.live, self->me->nchildren, tf_now ());
    receive_beat_message (self, &msg, "the parent");
}

void
beat_start (node_t *self, double now)
{
    int n = self->me->nchildren;
    self->beat.ctl_heard = now;
    self->beat.live = liveness_new (n + (self->link.parent != NULL),
                                    config_heartbeat_s (self->cfg),
                                    config_lost_after_s (self->cfg), now);
    self->beat.warmed = xcalloc ((size_t) n + 1, 1);
    for (int i = 0; i < n; i++)   /* a vacant slot is watched once taken */
        if (self->cfg->nodes[self->me->children[i]].vacant)
            liveness_forget (self->beat.live, i);
    if (self->me->parent >= 0)
        snprintf (self->moved.parent, sizeof self->moved.parent, "%s",
                  self->cfg->nodes[self->me->parent].name);
    warm_pipes (self);
}

void
beat_forget_parent (node_t *self)
{
    liveness_forget (self->beat.live, self->me->nchildren);
}

void
beat_revive_parent (node_t *self, double now)
{
    liveness_revive (self->beat.live, self->me->nchildren, now);
    send_beat_to_parent (self, proto_warm (PROTO_BEAT));
}

void
beat_heard_controller (node_t *self, double now)
{
    self->beat.ctl_heard = now;
}

double
beat_controller_silence (const node_t *self, double now)
{
    return now - self->beat.ctl_heard;
}

void
beat_heard (node_t *self, int slot, double now)
{
    liveness_heard (self->beat.live, slot, now);
}

void
beat_forget (node_t *self, int slot)
{
    liveness_forget (self->beat.live, slot);
}

int
beat_lost (const node_t *self, int slot)
{
    return liveness_lost (self->beat.live, slot);
}

void
beat_warm_child (node_t *self, int slot)
{
    if (self->beat.warmed[slot])
        return;
    /*  Its heartbeat connection is up: the warm-up back. */
    self->beat.warmed[slot] = 1;
    send_beat_to (self, slot, proto_warm (PROTO_BEAT));
}

void
beat_close (node_t *self)
{
    liveness_destroy (&self->beat.live);
    free (self->beat.warmed);
}
