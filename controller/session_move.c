/*  session_move — re-parenting, for the session (session_int.h;
 *  docs/adapt.md, "Re-parent").
 *
 *  In an adapting run a node whose parent is lost does not stop: it says
 *  so (LOST) and waits (node/reparent.c). The controller moves it, its
 *  subtree with it, under the nearest node above the lost parent that
 *  has a vacant child slot (every node keeps config_reparent_slots of
 *  them for this, beside those for joining nodes) and takes it in there
 *  by the path a joining node takes: ATTACH to the new parent, which
 *  answers ATTACHED once the slot is ready; then REPARENT tells the node
 *  where its new parent is. The root queued again every task the lost
 *  subtree had; the node dropped what it had from there (stale), so
 *  every task is still recorded exactly once. A node that cannot be
 *  moved is lost as in a run that does not adapt.
 */
#include "controller/session_int.h"

#include <stdio.h>

#include "overlay/util.h"

/*  The nearest node from `from` up that can take a node in now: running,
 *  not lost or leaving, a vacant slot left. -1: none. */
static int
adopter (const session_t *self, int from)
{
    for (int p = from; p >= 0; p = self->cfg->nodes[p].parent) {
        const peer_t *peer = &self->peers[p];
        if (peer->state == PEER_STARTED && !peer->lost && !peer->left && !peer->exited
            && !peer->moving && self->join.vacant[p] > 0)
            return p;
    }
    return -1;
}

/*  A move done (REPARENT sent), for results.json and the log. */
static void
note_move (session_t *self, int node, int from, int to)
{
    double at_s = (tf_now () - self->t.start) * self->cfg->platform.time_scale;
    json_t *entry = json_pack ("{s:s, s:s, s:s, s:f}", "node", self->cfg->nodes[node].name,
                               "from", self->cfg->nodes[from].name, "to",
                               self->cfg->nodes[to].name, "at_s", at_s);
    if (entry)
        results_note_move (self->results, entry);
    session_log (self, "%s re-parented under %s", self->cfg->nodes[node].name,
                 self->cfg->nodes[to].name);
}

/*  A node's public key, NULL without CURVE. */
static const char *
key_of (const session_t *self, const char *name)
{
    return self->setup.keys ? json_string_value (json_object_get (self->setup.keys, name))
                            : NULL;
}

int
session_move (session_t *self, int node, int lost, const char *why)
{
    peer_t *peer = &self->peers[node];
    if (!self->join.on || self->phase != PHASE_RUNNING || self->finished
        || peer->state != PEER_STARTED || peer->lost || peer->left || peer->exited
        || lost == self->cfg->root)
        return 0;
    int to = adopter (self, self->cfg->nodes[lost].parent);
    char err[TF_ERRLEN];
    if (to < 0 || config_move (self->cfg, node, to, err, sizeof err) != 0) {
        session_log (self, "%s cannot be moved: %s", peer->node->name,
                     to < 0 ? "no node above its lost parent has a vacant child slot" : err);
        return 0;
    }
    self->join.vacant[to]--;
    peer->moving = 1;
    peer->moved_from = lost + 1;
    session_log (self, "%s moves under %s: %s", peer->node->name, self->cfg->nodes[to].name,
                 why);
    json_t *desc = config_node_to_json (peer->node);
    zmsg_t *msg = proto_attach (desc, (uint32_t) node, key_of (self, peer->node->name));
    json_decref (desc);
    if (session_send_peer (self, &self->peers[to], msg, 0) != 0) {
        peer->moving = 0;
        session_lose (self, node, "its new parent could not be told");
    }
    return 1;
}

void
session_move_attached (session_t *self, peer_t *parent, peer_t *peer, const proto_msg_t *m)
{
    int node = (int) (peer - self->peers);
    peer->moving = 0;
    if (peer->lost || peer->exited)
        return;   /* died on the way: its new parent loses it in turn */
    if (m->why) {
        char why[TF_ERRLEN];
        snprintf (why, sizeof why, "its new parent %s did not take it: %.300s",
                  parent->node->name, m->why);
        session_lose (self, node, why);
        return;
    }
    zmsg_t *msg = proto_reparent (parent->endpoint, parent->node->name,
                                  key_of (self, parent->node->name));
    if (session_send_peer (self, peer, msg, 0) != 0) {
        session_lose (self, node, "cannot send REPARENT");
        return;
    }
    note_move (self, node, peer->moved_from - 1, (int) (parent - self->peers));
}
