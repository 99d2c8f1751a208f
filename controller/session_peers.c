/*  session_peers — the node processes and their messages, for the
 *  session (session_int.h): the handshake (HELLO -> CONFIG, BOUND, then
 *  START to all), STATS and REPORT filed into the results, the losses (a
 *  node that dies, hangs, is cut off or gives up while the run goes on)
 *  and the exits of the processes.
 *
 *  A node that gives up sends FAIL and exits; its parent then reports it
 *  LOST. The controller may see the three in any order (the FAIL waits
 *  behind the node's earlier messages, the exit is reaped whenever the
 *  loop looks): whatever the order, a node lost for itself is lost for
 *  the FAIL's reason (lose_by_fail). docs/reliability.md has the rules.
 */
#include "controller/session_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "overlay/util.h"

/*  Messages handled before the loop looks at processes and clocks again. */
#define DRAIN_MAX 256

/*  peer_t.lost: why a node is lost. */
enum {
    LOST_NOT = 0,
    LOST_ITSELF,             /* its exit, silence, its parent's LOST, its FAIL */
    LOST_WITH_PARENT,        /* its parent was lost: it keeps that reason */
};

static const char *const peer_state_names[PEER_STATE_COUNT] = {
    [PEER_SPAWNED] = "spawned", [PEER_CONFIGURED] = "configured",
    [PEER_BOUND] = "bound",     [PEER_STARTED] = "started",
    [PEER_STOPPED] = "stopped",
};

const char *
peer_state_str (peer_state_t state)
{
    return (unsigned) state < PEER_STATE_COUNT ? peer_state_names[state] : "?";
}

/* ------------------------------------------------------------------------
 *  The handshake.
 */

zmsg_t *
session_config_for (session_t *self, const peer_t *peer)
{
    if ((int) (peer - self->peers) < self->join.tree || !self->join.on)
        return proto_config (self->config_object, self->run, self->setup.keys);
    char *text = config_to_json (self->cfg);   /* with the node that joins */
    json_t *object = json_loads (text, 0, NULL);
    free (text);
    zmsg_t *msg = proto_config (object, self->run, self->setup.keys);
    json_decref (object);
    return msg;
}

static int
send_config (session_t *self, peer_t *peer)
{
    return session_send_peer (self, peer, session_config_for (self, peer), 0);
}

/*  Every node is BOUND: tell each where its parent listens. */
static void
start_all (session_t *self)
{
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        int parent = peer->node->parent;
        const char *endpoint = parent >= 0 ? self->peers[parent].endpoint : "";
        if (session_send_peer (self, peer, proto_start (endpoint, self->driver->measure), 0) != 0) {
            session_fail (self, RESULTS_FAILED, "node %s: cannot send START", peer->node->name);
            return;
        }
        peer->state = PEER_STARTED;
    }
    self->t.start = tf_now ();
    results_set_startup (self->results, self->t.start - self->t.created);
    for (int i = 0; i < self->cfg->nnodes; i++)
        self->peers[i].heard = self->t.start;
    self->phase = PHASE_RUNNING;
    session_join_start (self);
}

/* ------------------------------------------------------------------------
 *  Receiving.
 */

/*  The identity frame as printable text in buf; returns 1 if it can be a
 *  node name at all. */
static int
identity_text (zframe_t *frame, char *buf, size_t len)
{
    size_t size = frame ? zframe_size (frame) : 0;
    const byte *data = frame ? zframe_data (frame) : NULL;
    int plain = size > 0 && size < 64;
    for (size_t i = 0; i < size && plain; i++)
        plain = (data[i] >= 'A' && data[i] <= 'Z') || (data[i] >= 'a' && data[i] <= 'z')
             || (data[i] >= '0' && data[i] <= '9') || data[i] == '_' || data[i] == '.'
             || data[i] == '-';
    if (plain) {
        snprintf (buf, len, "%.*s", (int) size, (const char *) data);
        return 1;
    }
    size_t used = (size_t) snprintf (buf, len, "0x");
    for (size_t i = 0; i < size && used + 3 < len && i < 16; i++)
        used += (size_t) snprintf (buf + used, len - used, "%02x", data[i]);
    return 0;
}

/*  May a refusal be said now (overlay/ratelog.h)? Says first how many
 *  were held back, if any. */
static int
say_refusal (session_t *self)
{
    uint64_t held;
    int say = ratelog_allow (&self->link.refusals, tf_now (), &held);
    if (held)
        session_log (self, "%llu more refused messages not shown",
                     (unsigned long long) held);
    return say;
}

static void
refuse (session_t *self, peer_t *peer, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static void
refuse (session_t *self, peer_t *peer, const char *fmt, ...)
{
    char text[TF_ERRLEN];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    if (say_refusal (self))
        session_log (self, "node %s: %s; dropped", peer->node->name, text);
    peer->malformed++;
    self->link.malformed++;
}

static void
on_hello (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    const char *name = peer->node->name;
    if (strcmp (m->text, name) != 0) {
        refuse (self, peer, "HELLO names \"%.64s\", not the connection's identity", m->text);
        return;
    }
    if (peer->state != PEER_SPAWNED) {
        refuse (self, peer, "HELLO when %s", peer_state_str (peer->state));
        return;
    }
    if (m->version != PROTO_VERSION) {
        session_fail (self, RESULTS_FAILED, "node %s speaks protocol version %d, expected %d",
                      name, m->version, PROTO_VERSION);
        return;
    }
    results_set_pid (self->results, (int) (peer - self->peers), m->pid);
    if (send_config (self, peer) != 0) {
        session_fail (self, RESULTS_FAILED, "node %s: cannot send CONFIG", name);
        return;
    }
    peer->state = PEER_CONFIGURED;
    self->t.handshake = tf_now ();
}

static void
on_bound (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    if (peer->state != PEER_CONFIGURED) {
        refuse (self, peer, "BOUND when %s", peer_state_str (peer->state));
        return;
    }
    if (peer->node->nchildren > 0 && !*m->text) {
        session_fail (self, RESULTS_FAILED, "node %s has children but bound no endpoint",
                  peer->node->name);
        return;
    }
    peer->endpoint = xstrdup (m->text);
    peer->state = PEER_BOUND;
    if (self->phase == PHASE_RUNNING) {   /* a node that joins the run */
        session_join_bound (self, peer);
        return;
    }
    /*  The warm-up of its control connection, our way (overlay/proto.h),
     *  while it waits for START: sent with START instead, 64 of them
     *  would queue behind the last BOUND and hold up the run's start. */
    session_send_peer (self, peer, proto_warm (PROTO_PING), 1);
    self->t.handshake = tf_now ();
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (self->peers[i].state != PEER_BOUND)
            return;
    start_all (self);
}

/*  Say each change node declared the first time a message brings it:
 *  "Lab3: compute 23.9 -> 6.0 units/s at 36.1 s", and who measured it
 *  when that is another node (a link, an IR_s: the parent). */
static void
announce_changes (session_t *self, int node)
{
    const proto_change_t *c;
    int n = results_new_changes (self->results, node, &c);
    const char *by = self->cfg->nodes[node].name;
    for (int i = 0; i < n; i++) {
        char text[128];
        proto_change_text (&c[i], text, sizeof text);
        int other = strcmp (c[i].node, by) != 0;
        session_log (self, "%s: %s at %.1f s%s%s%s", c[i].node, text, c[i].at_s,
                     other ? " (measured by " : "", other ? by : "", other ? ")" : "");
    }
}

/*  Say each costly action a node weighed the first time a message brings
 *  it: "Lab0: reclaim from Lab4: 2 tasks back, it holds 1 (saves 16.8 s,
 *  costs 0.4 s) at 47.1 s", or why it was not taken. */
static void
announce_actions (session_t *self, int node)
{
    const proto_action_t *a;
    int n = results_new_actions (self->results, node, &a);
    for (int i = 0; i < n; i++) {
        char text[256];
        proto_action_text (&a[i], text, sizeof text);
        session_log (self, "%s: %s at %.1f s", a[i].node, text, a[i].at_s);
    }
}

/*  A node's STATS: its latest figures. */
static void
on_stats (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    proto_stats_t stats;
    int node = (int) (peer - self->peers);
    if (proto_stats_decode (m->object, NULL, 0, 0, &stats, err, sizeof err)
        || results_update_stats (self->results, node, &stats, err, sizeof err))
        refuse (self, peer, "STATS: %s", err);
    else {
        announce_changes (self, node);
        announce_actions (self, node);
    }
    proto_stats_clear (&stats);
}

/*  A node's final REPORT: file it and say BYE, which is what lets the
 *  node exit; so a node that exits cleanly has been heard (a REPORT still
 *  in a socket buffer when its sender exits cannot be lost or overtaken
 *  by the exit). A malformed REPORT is refused but still answered: the
 *  node has nothing better to say, and "no REPORT" fails the run. */
static void
on_report (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    proto_stats_t stats;
    int node = (int) (peer - self->peers);
    if (proto_stats_decode (m->object, m->payload, 1, peer->node->nchildren, &stats, err,
                            sizeof err)
        || results_update_report (self->results, node, &stats, err, sizeof err))
        refuse (self, peer, "REPORT: %s", err);
    else {
        announce_changes (self, node);
        announce_actions (self, node);
    }
    proto_stats_clear (&stats);
    session_send_peer (self, peer, proto_empty (PROTO_BYE), 1);
}


/* ------------------------------------------------------------------------
 *  Losses: a node that dies, hangs, is cut off or gives up while the run
 *  goes on. Its parent re-queues what its subtree had (node/core.h,
 *  CORE_EV_LOST); the controller's part is to name it, end what is left
 *  of it, stop waiting for it, and keep the run going. Only the root (the
 *  bag) and a calibration (which needs every link) cannot lose a node.
 */

/*  Does what peer says or does now belong to the run proper: the run goes
 *  on, or the driver finished it and STOP has not gone to peer yet (a
 *  FAIL, an exit or a LOST read in the same turn as the root's last word
 *  happened while the run went on)? */
static int
in_run (const session_t *self, const peer_t *peer)
{
    return self->phase == PHASE_RUNNING
        || (self->finished && session_ok (self) && peer->state == PEER_STARTED);
}

/*  Node (index) and, with it, every node under it are lost (how: LOST_*);
 *  why is about node. The run fails instead when the root is among them,
 *  or in a calibration, or outside the run proper (in_run). */
static void
lose_subtree (session_t *self, int node, const char *why, int how)
{
    peer_t *peer = &self->peers[node];
    if (peer->lost)
        return;
    if (node == self->cfg->root || self->driver->measure || !in_run (self, peer)) {
        session_fail (self, RESULTS_FAILED, "%snode %s lost: %s%s",
                      node == self->cfg->root ? "the root " : "", peer->node->name, why,
                      node == self->cfg->root && self->cfg->commands.count
                          ? " (--resume continues the run)" : "");
        return;
    }
    double now = tf_now ();
    peer->lost = how;
    /*  Lost for itself: a FAIL of its own may still be on its way. */
    if (how == LOST_ITSELF)
        peer->fail_awaited = now + SESSION_EXIT_EXPLAIN_GRACE;
    results_set_lost (self->results, node, why, now - self->t.start);
    session_log (self, "node %s lost: %s", peer->node->name, why);
    if (peer->slot >= 0)
        deploy_kill (self->setup.deploy, peer->slot);
    char below[TF_ERRLEN];
    snprintf (below, sizeof below, "its parent %s was lost", peer->node->name);
    /*  From the last: a child that moves (session_move) leaves the list,
     *  which shifts only the children after it, seen already. */
    for (int c = peer->node->nchildren; c-- > 0;) {
        int kid = peer->node->children[c];
        if (!session_move (self, kid, node, below))
            lose_subtree (self, kid, below, LOST_WITH_PARENT);
    }
}

void
session_lose (session_t *self, int node, const char *why)
{
    lose_subtree (self, node, why, LOST_ITSELF);
}

/*  Node gave up, saying text (its FAIL), while the run goes on. Lost
 *  already (its exit, its parent's LOST or its silence came first), the
 *  FAIL's reason replaces the one it was lost for; lost with its parent,
 *  it keeps that one. Not lost yet, it is lost for the FAIL's reason. */
static void
lose_by_fail (session_t *self, int node, const char *text)
{
    peer_t *peer = &self->peers[node];
    char why[TF_ERRLEN];
    snprintf (why, sizeof why, "it failed: %.400s", text);
    if (!peer->lost) {
        lose_subtree (self, node, why, LOST_ITSELF);
        peer->fail_awaited = 0;
        return;
    }
    if (peer->lost != LOST_ITSELF || !peer->fail_awaited)
        return;   /* with its parent, or explained already */
    peer->fail_awaited = 0;
    results_explain_lost (self->results, node, why);
    session_log (self, "node %s lost: %s (said after it was taken for lost)",
                 peer->node->name, why);
}

/*  LOST {peer, why} from a node: its child (that child's subtree is
 *  lost) or its parent (then it is, and stops on its own). Ignored after
 *  the run began stopping. */
static void
on_lost (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    int from = (int) (peer - self->peers), other = config_find_node (self->cfg, m->text);
    char why[TF_ERRLEN];
    /*  Once the run is stopping, nodes leave one by one and may see each
     *  other go: nothing is lost any more. */
    if (!in_run (self, peer) || peer->left || (other >= 0 && self->peers[other].left))
        return;   /* a node let go, or its parent: expected */
    if (other >= 0
        && (peer->moved_from == other + 1 || self->peers[other].moved_from == from + 1))
        return;   /* a parent and a child parted by a move: expected */
    if (other >= 0 && self->cfg->nodes[other].parent == from) {
        snprintf (why, sizeof why, "%.64s: %.200s", peer->node->name, m->why);
        lose_subtree (self, other, why, LOST_ITSELF);
    }
    else if (other >= 0 && other == peer->node->parent) {
        snprintf (why, sizeof why, "lost its parent %.64s: %.200s", m->text, m->why);
        if (!session_move (self, from, other, why))
            lose_subtree (self, from, why, LOST_ITSELF);
    }
    else
        refuse (self, peer, "LOST names \"%.64s\", neither its parent nor a child", m->text);
}

void
session_check_silence (session_t *self, double now)
{
    if (self->phase != PHASE_RUNNING)
        return;
    double silence = fmax (PROTO_CONTROL_SILENCE, config_lost_after_s (self->cfg));
    for (int i = 0; i < self->cfg->nnodes && self->phase == PHASE_RUNNING; i++) {
        peer_t *peer = &self->peers[i];
        if (peer->lost || peer->left || peer->exited || now - peer->heard <= silence)
            continue;
        char why[64];
        snprintf (why, sizeof why, "silent for %.0f s", now - peer->heard);
        lose_subtree (self, i, why, LOST_ITSELF);
    }
}

int
session_fails_awaited (session_t *self, double now)
{
    int n = 0;
    for (int i = 0; i < self->cfg->nnodes; i++)
        n += self->peers[i].lost == LOST_ITSELF && self->peers[i].fail_awaited > now;
    return n;
}

/*  A node gave up. While the run goes on, a node other than the root is
 *  then lost like one that died (its parent re-queues what it had), for
 *  the FAIL's reason even if its own exit is reaped here first;
 *  otherwise the run fails. If another node's process died just before,
 *  that death is the cause and this failure a consequence (a parent
 *  cannot reach its dead child): look at the processes first. */
static void
on_fail (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    session_handle_exits (self);
    int node = (int) (peer - self->peers);
    /*  During the run a FAIL loses the node; the root's fails the run
     *  as a lost root (an interrupted root: its Slurm step cancelled). */
    if (peer->lost || (in_run (self, peer) && !self->driver->measure)) {
        lose_by_fail (self, node, m->text);
        return;
    }
    if (self->pending.text && self->pending.peer != node)
        session_fail (self, RESULTS_FAILED, "%s", self->pending.text);
    session_fail (self, RESULTS_FAILED, "node %s: %s", peer->node->name, m->text);
}

/*  A message from a node lost already: not re-admitted, whatever it
 *  says. Its FAIL is still read (lose_by_fail). Its PINGs (the warm-up)
 *  and whatever else was in flight are dropped, the others with a log
 *  line. */
static void
on_message_from_lost (session_t *self, peer_t *peer, zmsg_t **msg)
{
    proto_msg_t m;
    char err[TF_ERRLEN];
    if (proto_decode (msg, &m, err, sizeof err) != 0)
        m.command = PROTO_COMMAND_END;   /* none: say it was dropped */
    if (m.command == PROTO_FAIL)
        lose_by_fail (self, (int) (peer - self->peers), m.text);
    else if (m.command != PROTO_PING && say_refusal (self))
        session_log (self, "message from node %s, lost already; dropped", peer->node->name);
    proto_msg_clear (&m);
}

/*  Act on a message m from peer, who is in the run and not lost. */
static void
dispatch (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    const session_driver_t *driver = self->driver;
    switch (m->command) {
    case PROTO_HELLO:
        on_hello (self, peer, m);
        break;
    case PROTO_BOUND:
        on_bound (self, peer, m);
        break;
    case PROTO_STATS:
        on_stats (self, peer, m);
        break;
    case PROTO_REPORT:
        on_report (self, peer, m);
        break;
    case PROTO_FAIL:
        on_fail (self, peer, m);
        break;
    case PROTO_LOST:
        on_lost (self, peer, m);
        break;
    case PROTO_PING:   /* a node's warm-up (overlay/proto.h) */
        break;
    case PROTO_ATTACHED:
        session_join_attached (self, peer, m);
        break;
    case PROTO_DRAINED:
        session_join_drained (self, peer, m);
        break;
    default:
        if (!driver->message
            || driver->message (self, driver->arg, (int) (peer - self->peers), m, err,
                                sizeof err))
            refuse (self, peer, "%s: %s", proto_command_str (m->command),
                    driver->message ? err : "unexpected");
        break;
    }
}

/*  The peer that sent msg, whose identity frame is popped; NULL (msg
 *  destroyed, the refusal said and counted) if no node of the run may
 *  send it. */
static peer_t *
sender_of (session_t *self, zmsg_t **msg)
{
    char name[80];
    zframe_t *identity = zmsg_pop (*msg);
    int known = identity_text (identity, name, sizeof name);
    int index = known ? config_find_node (self->cfg, name) : -1;
    zframe_destroy (&identity);
    /*  With CURVE, the key a connection was admitted with names its node:
     *  a node of the run cannot speak under another's name. */
    if (index >= 0 && self->setup.curve && !curve_peer_is (zmsg_last (*msg), name)) {
        refuse (self, &self->peers[index], "not authenticated as %s", name);
        zmsg_destroy (msg);
        return NULL;
    }
    if (index < 0) {
        if (say_refusal (self))
            session_log (self, "message from unknown peer \"%s\"; dropped", name);
        self->link.malformed++;
        zmsg_destroy (msg);
        return NULL;
    }
    return &self->peers[index];
}

void
session_handle_message (session_t *self)
{
    char err[TF_ERRLEN];
    zmsg_t *msg = zmsg_recv (self->link.control);
    peer_t *peer = msg ? sender_of (self, &msg) : NULL;
    if (!peer)
        return;
    if (peer->lost) {
        on_message_from_lost (self, peer, &msg);
        return;
    }
    peer->heard = tf_now ();
    proto_msg_t m;
    if (proto_decode (&msg, &m, err, sizeof err) != 0) {
        refuse (self, peer, "malformed message: %s", err);
        return;
    }
    dispatch (self, peer, &m);
    proto_msg_clear (&m);
}

void
session_poll_messages (session_t *self, int timeout_ms)
{
    if (zpoller_wait (self->link.poller, timeout_ms) != self->link.control)
        return;
    for (int i = 0; i < DRAIN_MAX && (zsock_events (self->link.control) & ZMQ_POLLIN); i++)
        session_handle_message (self);
}

/* ------------------------------------------------------------------------
 *  Processes.
 */

static peer_t *
peer_by_slot (session_t *self, int slot)
{
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (self->peers[i].slot == slot)
            return &self->peers[i];
    return NULL;
}

/*  Before the shutdown, an exit is a failure, reported after a short
 *  grace so that the node's FAIL, which says why, wins when it comes.
 *  After STOP, an unclean exit fails a run that was going well (a node
 *  under valgrind --error-exitcode, say). */
void
session_handle_exits (session_t *self)
{
    deploy_exit_t ex;
    char text[TF_ERRLEN];
    while (deploy_poll (self->setup.deploy, &ex)) {
        peer_t *peer = peer_by_slot (self, ex.slot);
        if (peer)
            peer->exited = 1;
        deploy_describe_exit (&ex, text, sizeof text);
        if (peer && (peer->lost || peer->left))
            continue;   /* expected: killed, stopped on its own, or let go */
        /*  While the run goes on, a node that dies is lost. Only an exit
         *  with a status may come with a FAIL that says why (the pending
         *  exit's grace); a death by a signal says it all. */
        if (peer && in_run (self, peer) && !self->driver->measure
            && (peer->node->parent >= 0 || WIFSIGNALED (ex.status))) {
            lose_subtree (self, (int) (peer - self->peers), text, LOST_ITSELF);
            continue;
        }
        if (self->phase != PHASE_STOPPING) {
            if (!self->pending.text && peer) {
                self->pending.text = xstrdup (text);
                self->pending.peer = (int) (peer - self->peers);
                self->pending.deadline = tf_now () + SESSION_EXIT_EXPLAIN_GRACE;
            }
        }
        else if (!deploy_exit_is_clean (&ex) && session_ok (self))
            session_fail (self, RESULTS_FAILED, "%s after STOP", text);
    }
}
