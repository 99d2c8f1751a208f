/*  session_join — nodes that join the running tree, for the session
 *  (session_int.h; controller/join.h, docs/adapt.md "Grow").
 *
 *  A node offered to the run (the config's joins_at_s, or `treefarm join`
 *  through the join socket) is weighed by place_choose: the parent whose
 *  bound gains most, and whether the gain on the remaining tasks exceeds
 *  its start-up cost. An admitted node is appended to the tree
 *  (config_attach: it takes the next index), started on its host, and
 *  goes through the handshake like any other: HELLO, CONFIG (an
 *  experiment that holds it), BOUND. Then its parent is told (ATTACH) and
 *  takes it in a vacant slot; only when the parent answers ATTACHED does
 *  the node get START, so its first REQUEST always finds its slot. A
 *  node that fails on the way is lost like any other (its parent never
 *  gave it a task, so nothing goes out again).
 */
#include "controller/session_int.h"

#include <stdio.h>
#include <string.h>

#include "controller/join.h"
#include "controller/join_sock.h"
#include "overlay/util.h"

/*  Platform seconds since START. */
static double
platform_now (const session_t *self, double now)
{
    return (now - self->t.start) * self->cfg->platform.time_scale;
}

void
session_join_start (session_t *self)
{
    session_join_t *j = &self->join;
    const config_t *cfg = self->cfg;
    j->tree = cfg->nnodes;
    int reparent = 0;   /* slots kept to move a lost node's children */
    for (int i = 0; i < cfg->nnodes; i++)
        reparent += config_reparent_slots (cfg, i);
    j->on = cfg->platform.adapt && config_joins (cfg) + reparent > 0
         && !self->driver->measure;
    if (!j->on)
        return;
    j->vacant = xcalloc ((size_t) cfg->capacity + 1, sizeof *j->vacant);
    j->spawned = xcalloc ((size_t) cfg->capacity + 1, sizeof *j->spawned);
    for (int i = 0; i < cfg->nnodes; i++)   /* as each node counts its own */
        j->vacant[i] = config_joins (cfg) + config_reparent_slots (cfg, i);
    j->startup_s = self->t.start - self->t.launch;
    if (cfg->join_slots == 0)
        return;
    char err[TF_ERRLEN];
    j->sock = join_sock_bind (self->dir, err, sizeof err);
    if (!j->sock)
        session_log (self, "treefarm join is off for this run: %s", err);
}

void
session_join_close (session_t *self)
{
    join_sock_close (&self->join.sock, self->dir);
    free (self->join.vacant);
    self->join.vacant = NULL;
    free (self->join.spawned);
    self->join.spawned = NULL;
}

/*  What was decided of node, for results.json and the log. */
static void
note_decision (session_t *self, const config_node_t *node, const place_t *p, double at_s)
{
    json_t *entry = place_json (self->cfg, node, p, at_s);
    if (entry)
        results_note_join (self->results, entry);
    session_log (self, "%s %s", node->name, p->why);
}

/*  Append node under parent and start its process in deploy slot
 *  `slot`. Returns its index, or -1 after saying why. */
static int
admit (session_t *self, const config_node_t *node, int parent, int slot)
{
    char err[TF_ERRLEN];
    int g = config_attach (self->cfg, node, parent, err, sizeof err);
    if (g < 0) {
        session_log (self, "%s cannot join: %s", node->name, err);
        return -1;
    }
    peer_t *peer = &self->peers[g];
    memset (peer, 0, sizeof *peer);
    peer->node = &self->cfg->nodes[g];
    peer->slot = -1;
    peer->heard = tf_now ();   /* silent too long before HELLO: lost */
    peer->control = session_bind_for (self, slot);
    if (!peer->control)
        return -1;
    self->join.vacant[parent]--;
    self->join.vacant[g] = config_joins (self->cfg);
    self->join.spawned[g] = tf_now ();
    place_live_admitted (&self->join.live, results_live_bound (self->results));
    if (session_spawn (self, peer, slot, err, sizeof err) != 0) {
        char why[TF_ERRLEN + 32];
        snprintf (why, sizeof why, "cannot start it: %s", err);
        session_lose (self, g, why);
        return -1;
    }
    return g;
}

/*  Weigh node, offered now; admit it as platform.admit says: when it
 *  pays (gated), always, or never (the decision is still weighed and
 *  said). *out gets the decision. Returns the node's index when
 *  admitted, else -1. */
static int
offer (session_t *self, const config_node_t *node, int slot, place_t *out)
{
    char err[TF_ERRLEN];
    double now = tf_now ();
    uint64_t total = config_bag_size (self->cfg), done = results_recorded (self->results);
    double remaining = done < total ? (double) (total - done) : 0;
    double cost = self->join.startup_s * self->cfg->platform.time_scale;
    if (place_offer (self->cfg, node, self->join.vacant, results_policy_model (self->cfg),
                     remaining, cost, results_live_bound (self->results), &self->join.live,
                     out, err, sizeof err) != 0) {
        session_log (self, "%s cannot be placed: %s", node->name, err);
        return -1;
    }
    note_decision (self, node, out, platform_now (self, now));
    return out->admit ? admit (self, node, out->parent, slot) : -1;
}

/*  The config's offered nodes whose time has come. */
static void
offer_due (session_t *self, double now)
{
    config_t *cfg = self->cfg;
    for (int k = 0; k < cfg->noffered; k++) {
        config_node_t *node = &cfg->offered[k];
        if (node->index != -1 || platform_now (self, now) < node->joins_at_s)
            continue;
        place_t p;
        int g = offer (self, node, self->join.tree + k, &p);
        node->index = g >= 0 ? g : -2;
    }
}

/*  Why a node `treefarm join` offers cannot be weighed at all, or NULL. */
static const char *
refusal (session_t *self, const config_node_t *node, char *buf, size_t len)
{
    const config_t *cfg = self->cfg;
    int named = config_find_node (cfg, node->name) >= 0;
    for (int k = 0; k < cfg->noffered && !named; k++)
        named = strcmp (cfg->offered[k].name, node->name) == 0;
    if (self->finished || self->phase != PHASE_RUNNING)
        return "the run is finishing";
    if (named)
        return snprintf (buf, len, "a node called \"%s\" is in the run already", node->name),
               buf;
    if (self->join.by_command >= cfg->join_slots)
        return snprintf (buf, len, "the run took the %u nodes its join_slots allow",
                         cfg->join_slots), buf;
    if (node->parent_name && config_find_node (cfg, node->parent_name) < 0)
        return snprintf (buf, len, "parent \"%s\" is not a node of the run",
                         node->parent_name), buf;
    return NULL;
}

/*  With CURVE, the keys of a node `treefarm join` offers, made for it
 *  now (docs/security.md): its certificate, for its deploy slot, and its
 *  public key, admitted by the control socket and shipped in CONFIG (its
 *  parent gets it in ATTACH) before its process starts. Returns 0, or -1
 *  with err. */
static int
issue_keys (session_t *self, const config_node_t *node, int slot, char *err, size_t errlen)
{
    int i = curve_run_add (self->setup.certs, node->name, err, errlen);
    if (i < 0
        || deploy_set_cert (self->setup.deploy, slot, self->setup.certs, i, err,
                            errlen) != 0
        || curve_auth_admit (self->link.zap_dir, node->name,
                             curve_run_public (self->setup.certs, i), err, errlen) != 0)
        return -1;
    json_object_set_new (self->setup.keys, node->name,
                         json_string (curve_run_public (self->setup.certs, i)));
    return 0;
}

/*  One request on the join socket: refused, declined or admitted. */
static void
on_join_request (session_t *self)
{
    char err[TF_ERRLEN], buf[TF_ERRLEN];
    zframe_t *peer = NULL;
    config_node_t node;
    memset (&node, 0, sizeof node);
    if (join_sock_read (self->join.sock, &peer, &node, err, sizeof err) != 0) {
        if (peer)
            join_sock_answer (self->join.sock, &peer, 2, NULL, err);
        return;
    }
    const char *no = refusal (self, &node, buf, sizeof buf);
    char hostwhy[TF_ERRLEN];
    int slot = no ? -1 : deploy_add (self->setup.deploy, node.name, node.host, hostwhy,
                                     sizeof hostwhy);
    if (!no && (slot < 0 || deploy_check (self->setup.deploy, slot, self->setup.node_argv,
                                          self->setup.node_argc, hostwhy, sizeof hostwhy)))
        no = hostwhy;
    if (!no && self->setup.curve && issue_keys (self, &node, slot, hostwhy, sizeof hostwhy))
        no = hostwhy;
    if (no) {
        session_log (self, "refused %s, offered by treefarm join: %s", node.name, no);
        join_sock_answer (self->join.sock, &peer, 2, NULL, no);
        config_node_clear (&node);
        return;
    }
    place_t p;
    int g = offer (self, &node, slot, &p);
    self->join.by_command += g >= 0;
    if (g >= 0)
        session_say_target (self, slot, node.name);
    join_sock_answer (self->join.sock, &peer, p.admit ? (g >= 0 ? 0 : 2) : 1,
                      g >= 0 ? self->cfg->nodes[g].parent_name : NULL, p.why);
    config_node_clear (&node);
}

void
session_join_tick (session_t *self, double now)
{
    if (!self->join.on)
        return;
    if (!self->finished)
        offer_due (self, now);
    /*  Requests are answered even once the work is done: refused, saying
     *  so (refusal), rather than left to the command's timeout. */
    for (int i = 0; self->join.sock && i < 16
                    && (zsock_events (self->join.sock) & ZMQ_POLLIN); i++)
        on_join_request (self);
}

void
session_join_bound (session_t *self, peer_t *peer)
{
    int parent = peer->node->parent;
    json_t *desc = config_node_to_json (peer->node);
    const char *key = self->setup.keys ? json_string_value (json_object_get (
                                             self->setup.keys, peer->node->name))
                                       : NULL;
    zmsg_t *msg = proto_attach (desc, (uint32_t) (peer - self->peers), key);
    json_decref (desc);
    if (session_send_peer (self, &self->peers[parent], msg, 0) != 0)
        session_lose (self, (int) (peer - self->peers), "its parent could not be told");
}

void
session_join_attached (session_t *self, peer_t *parent, const proto_msg_t *m)
{
    int g = config_find_node (self->cfg, m->text);
    peer_t *peer = g >= 0 ? &self->peers[g] : NULL;
    if (peer && peer->moving && peer->node->parent == (int) (parent - self->peers)) {
        session_move_attached (self, parent, peer, m);
        return;
    }
    if (!peer || peer->node->parent != (int) (parent - self->peers)
        || peer->state != PEER_BOUND || peer->lost) {
        session_log (self, "node %s: ATTACHED for %.64s, which is not joining under it; "
                     "dropped", parent->node->name, m->text);
        return;
    }
    if (m->why) {
        char why[TF_ERRLEN];
        snprintf (why, sizeof why, "%s did not take it: %.300s", parent->node->name, m->why);
        session_lose (self, g, why);
        return;
    }
    double since = tf_now () - self->t.start;
    results_set_joined (self->results, g, since);
    if (session_send_peer (self, peer, proto_start_since (parent->endpoint, 0, since), 0)
        != 0) {
        session_lose (self, g, "cannot send START");
        return;
    }
    session_send_peer (self, peer, proto_warm (PROTO_PING), 1);
    peer->state = PEER_STARTED;
    peer->heard = tf_now ();
    self->join.startup_s = peer->heard - self->join.spawned[g];   /* measured */
    session_log (self, "%s joined under %s", peer->node->name, parent->node->name);
}

/*  Node and its subtree leave: STOP each, noted as let go. */
static void
let_go (session_t *self, int node, double now)
{
    peer_t *peer = &self->peers[node];
    if (peer->lost || peer->left)
        return;
    peer->left = 1;
    results_set_left (self->results, node, now - self->t.start);
    if (peer->state != PEER_STOPPED && !peer->exited) {
        session_send_peer (self, peer, proto_empty (PROTO_STOP), 1);
        peer->state = PEER_STOPPED;
    }
    for (int c = 0; c < peer->node->nchildren; c++)
        let_go (self, peer->node->children[c], now);
}

void
session_join_drained (session_t *self, peer_t *parent, const proto_msg_t *m)
{
    int c = config_find_node (self->cfg, m->text);
    if (c < 0 || self->cfg->nodes[c].parent != (int) (parent - self->peers)) {
        session_log (self, "node %s: DRAINED names %.64s, not one of its children; dropped",
                     parent->node->name, m->text);
        return;
    }
    if (self->phase != PHASE_RUNNING || self->peers[c].lost)
        return;
    session_log (self, "%s drained by %s: it leaves the run", m->text, parent->node->name);
    let_go (self, c, tf_now ());
}
