/*  reparent — an adapting run's node whose parent is lost waits to be
 *  moved under another (docs/adapt.md, "Re-parent"), instead of
 *  stopping: it tells the controller (LOST), closes its connections to
 *  the lost parent and has its core make stale everything it had from
 *  there (CORE_EV_ORPHANED: the root queued all of it again when it lost
 *  the subtree). The controller takes it in at another node (ATTACH
 *  there, as for a node that joins) and sends REPARENT: the node
 *  connects to its new parent, passes its subtree's bound up and asks
 *  for tasks anew (CORE_EV_REPARENT). An orphan that hears nothing for
 *  NODE_REPARENT_WAIT_S stops as an orphan of a run that does not adapt
 *  does. See node/runtime.h.
 */
#include "node/runtime.h"
#include "overlay/util.h"

/*  Drop the parent's connections and what waits to go there. */
static void
cut_parent (node_t *self)
{
    act_drop_outbox (self);
    zsock_destroy (&self->link.parent);
    zsock_destroy (&self->link.beat);
    beat_forget_parent (self);
    self->moved.rewait = 1;
}

/*  Become an orphan now: the sockets to the parent closed first, so that
 *  nothing the core's ORPHANED emits goes up. Returns 0, or non-zero
 *  after a fatal error (said). */
static int
orphan (node_t *self, double now)
{
    cut_parent (self);
    self->moved.orphaned_at = now;
    core_event_t ev = {.type = CORE_EV_ORPHANED, .now = now};
    uint64_t before = core_stats (self->parts.core).stale;
    int rc = act_feed (self, &ev, "the runtime");
    node_log (self, "%" PRIu64 " tasks it had from %s are stale: the root queued them "
              "again", core_stats (self->parts.core).stale - before, self->moved.parent);
    return rc;
}

int
reparent_may_wait (const node_t *self)
{
    return self->cfg->platform.adapt && !self->link.measure && self->me->parent >= 0;
}

int
reparent_orphaned (node_t *self, const char *why)
{
    node_log (self, "lost the parent %s (%s): waiting to be re-parented",
              self->moved.parent, why);
    zmsg_t *msg = proto_lost (self->moved.parent, why);
    zmsg_send (&msg, self->link.ctl);
    return orphan (self, tf_now ());
}

int
reparent_check (node_t *self, double now, double *wait)
{
    if (self->moved.orphaned_at <= 0)
        return 0;
    double until = self->moved.orphaned_at + NODE_REPARENT_WAIT_S;
    if (now >= until) {
        node_log (self, "no new parent came in %.0f s: stopping", NODE_REPARENT_WAIT_S);
        return NODE_ORPHANED;
    }
    if (until - now < *wait)
        *wait = until - now;
    return 0;
}

int
reparent_on_message (node_t *self, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    if (!reparent_may_wait (self)) {
        receive_refuse (self, "the controller", "REPARENT in a run that does not adapt, "
                        "or to the root");
        return 0;
    }
    if (!self->link.cert != !m->key) {   /* a CURVE socket needs the server's key */
        receive_refuse (self, "the controller", self->link.cert
                        ? "REPARENT without the new parent's CURVE key"
                        : "REPARENT with a CURVE key in a run without CURVE");
        return 0;
    }
    double now = tf_now ();
    if (self->moved.orphaned_at <= 0 && orphan (self, now) != 0)
        return -1;
    if (self->link.cert)
        snprintf (self->link.parent_key, sizeof self->link.parent_key, "%s", m->key);
    if (handshake_connect_parent (self, m->text, err, sizeof err) != 0)
        return node_fail (self, err);
    snprintf (self->moved.parent, sizeof self->moved.parent, "%s", m->why);
    self->moved.orphaned_at = 0;
    self->moved.rewait = 1;
    beat_revive_parent (self, now);
    node_log (self, "re-parented under %s", self->moved.parent);
    core_event_t ev = {.type = CORE_EV_REPARENT, .now = now};
    int rc = act_feed (self, &ev, "the controller");
    if (rc == 0 && act_subtree_send (self, 1) != 0)
        rc = node_fail (self, "cannot send SUBTREE to the new parent");
    return rc;
}
