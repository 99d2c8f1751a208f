/*  session — one deployment of an experiment's tree. See session.h.
 *
 *  One thread, one loop: the control ROUTER is polled with a short timeout
 *  and, between messages, the loop reaps node processes, checks the
 *  deadlines, watches for Ctrl-C and gives the driver its turn. A session
 *  goes through three phases: the handshake (HELLO -> CONFIG, BOUND), the
 *  work (START sent, STATS flowing, the driver's until it says it is
 *  done) and the shutdown (STOP, REPORT -> BYE, reaping), which every path
 *  goes through, so the processes are stopped and results.json is written
 *  whatever happened.
 */
#include "controller/session.h"

#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/deploy.h"
#include "overlay/curve.h"
#include "overlay/ratelog.h"
#include "overlay/util.h"

/*  How long the loop sleeps at most between checks; how long an
 *  unexpected exit waits for the FAIL that may explain it; how long
 *  REPORTs are awaited when the session already failed. */
#define LOOP_TICK_MS 50
#define EXIT_EXPLAIN_GRACE 0.3
#define FAILED_REPORT_TIMEOUT 2.0
/*  Messages handled before the loop looks at processes and clocks again. */
#define DRAIN_MAX 256
/*  Heap committed when a session starts (tf_heap_reserve): what the
 *  controller's heap grows by during a run, reached at once. Measured on a
 *  15-node tree (docs/performance.md, "Scale and memory"): libzmq's pipes
 *  each take a second 16 KiB queue chunk after their 256th message and
 *  keep it, two pipes a node's connection, 32 KiB a node; the rest is the
 *  heap's churn. */
#define HEAP_RESERVE_BASE (256 * 1024)
#define HEAP_RESERVE_PER_NODE (48 * 1024)
/*  A send to a node that does not read within this is an error. */
#define SEND_TIMEOUT_MS 1000
/*  Words after the node program: --name N --controller EP [--bind A]. */
#define NODE_OPTION_WORDS 6

typedef enum {
    PEER_SPAWNED = 0,        /* process started, no HELLO yet */
    PEER_CONFIGURED,         /* HELLO received, CONFIG sent */
    PEER_BOUND,              /* BOUND received */
    PEER_STARTED,            /* START sent */
    PEER_STOPPED,            /* STOP sent */
    PEER_STATE_COUNT
} peer_state_t;

static const char *const peer_state_names[PEER_STATE_COUNT] = {
    [PEER_SPAWNED] = "spawned", [PEER_CONFIGURED] = "configured",
    [PEER_BOUND] = "bound",     [PEER_STARTED] = "started",
    [PEER_STOPPED] = "stopped",
};

static const char *
peer_state_str (peer_state_t state)
{
    return (unsigned) state < PEER_STATE_COUNT ? peer_state_names[state] : "?";
}

typedef enum {
    PHASE_HANDSHAKE = 0,     /* waiting for every HELLO and BOUND */
    PHASE_RUNNING,           /* START sent, until the driver is done */
    PHASE_STOPPING,          /* finished or failed: shut down */
} run_phase_t;

/*  One node as the controller sees it. */
typedef struct {
    const config_node_t *node;
    peer_state_t state;
    int slot;                /* deploy slot, -1 before spawn */
    int exited;              /* its process has been reaped */
    char *endpoint;          /* from BOUND */
    const char *control;     /* the controller's endpoint it connects to,
                                borrowed from session.controls */
    uint64_t malformed;      /* its messages the controller refused */
    int lost;                /* declared lost: neither heard nor awaited */
    double heard;            /* when its last message came (after START) */
} peer_t;

struct session {
    session_opts_t opt;
    const session_driver_t *driver;   /* during session_execute */
    config_t *cfg;
    json_t *config_object;   /* canonical config, shipped in CONFIG */
    json_t *run;             /* CONFIG's run object, or NULL */
    char **node_argv;        /* wrapper words + node binary, NULL-ended */
    int node_argc;
    char *dir;               /* results directory */
    deploy_t *deploy;
    zsock_t *control;
    zhashx_t *controls;      /* control bind -> endpoint bound there */
    zpoller_t *poller;
    progress_t *progress;    /* borrowed, may be NULL */
    results_t *results;
    peer_t *peers;           /* cfg->nnodes, tree order */
    run_phase_t phase;
    int finished;            /* the driver said its work is done */
    double t_launch;         /* processes spawned */
    double t_handshake;      /* last HELLO or BOUND */
    double t_start;          /* START sent, 0 before */
    double t_ping;           /* the last PINGs went out */
    double t_end;            /* finished, or the failure */
    uint64_t malformed;      /* messages refused, all peers */
    int curve;               /* CURVE on every socket of the run */
    curve_run_t *certs;      /* the run's certificates, or NULL */
    zactor_t *auth;          /* the control socket's ZAP handler, or NULL */
    json_t *keys;            /* every node's public key, for CONFIG */
    ratelog_t refusals;      /* how often refusals are said */
    char *pending_exit;      /* an unexpected exit, waiting for its FAIL */
    int pending_peer;        /* whose: index in peers */
    double pending_deadline;
};

/* ------------------------------------------------------------------------
 *  Messages to the user.
 */


void
session_log (session_t *self, const char *fmt, ...)
{
    if (self && self->progress)
        progress_clear (self->progress);
    fflush (stdout);
    va_list ap;
    va_start (ap, fmt);
    tf_log_line ("treefarm: ", fmt, ap);
    va_end (ap);
}

int
session_ok (const session_t *self)
{
    return results_status (self->results) == RESULTS_RUNNING;
}

/*  Keep the first cause, print it, and move on to the shutdown. Later
 *  causes are dropped. */
void
session_fail (session_t *self, results_status_t status, const char *fmt, ...)
{
    char text[TF_ERRLEN];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    /*  A Ctrl-C on the terminal reaches the nodes too, and they fail:
     *  the interrupt is the cause. */
    if (zsys_interrupted && status == RESULTS_FAILED && session_ok (self)) {
        zsys_interrupted = 0;
        session_fail (self, RESULTS_INTERRUPTED, "interrupted");
    }
    /*  After the first failure, what follows is a consequence (nodes
     *  stopped before START fail, parents lose children): the nodes say
     *  so on their own stderr; the controller keeps quiet. */
    if (!session_ok (self))
        return;
    session_log (self, "%s", text);
    results_set_status (self->results, status, text);
    if (!self->t_end)
        self->t_end = tf_now ();
    self->phase = PHASE_STOPPING;
}

/* ------------------------------------------------------------------------
 *  Sending.
 */


/*  Send msg (taken) to peer through the control ROUTER; say why not
 *  unless quiet. */
static int
send_to (session_t *self, peer_t *peer, zmsg_t *msg, int quiet)
{
    zmsg_pushstr (msg, peer->node->name);
    int rc = zmsg_send (&msg, self->control);
    int e = errno;
    zmsg_destroy (&msg);
    if (rc != 0 && !quiet)
        session_log (self, "node %s: cannot send: %s", peer->node->name, zmq_strerror (e));
    return rc;
}

static int
send_config (session_t *self, peer_t *peer)
{
    zmsg_t *msg = proto_config (self->config_object, self->run, self->keys);
    return send_to (self, peer, msg, 0);
}

/*  Every node is BOUND: tell each where its parent listens. */
static void
start_all (session_t *self)
{
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        int parent = peer->node->parent;
        const char *endpoint = parent >= 0 ? self->peers[parent].endpoint : "";
        if (send_to (self, peer, proto_start (endpoint, self->driver->measure), 0) != 0) {
            session_fail (self, RESULTS_FAILED, "node %s: cannot send START", peer->node->name);
            return;
        }
        peer->state = PEER_STARTED;
    }
    /*  The warm-up of each control connection, our way (overlay/proto.h). */
    for (int k = 0; k < PROTO_WARM_MESSAGES; k++)
        for (int i = 0; i < self->cfg->nnodes; i++)
            send_to (self, &self->peers[i], proto_empty (PROTO_PING), 1);
    self->t_start = tf_now ();
    for (int i = 0; i < self->cfg->nnodes; i++)
        self->peers[i].heard = self->t_start;
    self->phase = PHASE_RUNNING;
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

/*  The peer refused a message of: count it. */
/*  May a refusal be said now (overlay/ratelog.h)? Says first how many
 *  were held back, if any. */
static int
say_refusal (session_t *self)
{
    uint64_t held;
    int say = ratelog_allow (&self->refusals, tf_now (), &held);
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
    self->malformed++;
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
    self->t_handshake = tf_now ();
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
    self->t_handshake = tf_now ();
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (self->peers[i].state != PEER_BOUND)
            return;
    start_all (self);
}

/*  A node's STATS: its latest figures. */
static void
on_stats (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    proto_stats_t stats;
    if (proto_stats_decode (m->object, NULL, 0, 0, &stats, err, sizeof err)
        || results_update_stats (self->results, (int) (peer - self->peers), &stats, err,
                                 sizeof err))
        refuse (self, peer, "STATS: %s", err);
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
    proto_stats_clear (&stats);
    send_to (self, peer, proto_empty (PROTO_BYE), 1);
}

/* ------------------------------------------------------------------------
 *  Losses: a node that dies, hangs or is cut off while the run goes on.
 *  Its parent re-queues what its subtree had (node/core.h, CORE_EV_LOST);
 *  the controller's part is to name it, end what is left of it, stop
 *  waiting for it, and keep the run going. Only the root (the bag) and a
 *  calibration (which needs every link) cannot lose a node.
 */

/*  Node (index) and every node under it are lost; why is about node,
 *  its descendants are lost with it. The run fails instead when the root
 *  is among them, or in a calibration. */
static void
lose_subtree (session_t *self, int node, const char *why)
{
    peer_t *peer = &self->peers[node];
    if (peer->lost)
        return;
    if (node == self->cfg->root || self->driver->measure || self->phase != PHASE_RUNNING) {
        session_fail (self, RESULTS_FAILED, "%snode %s lost: %s%s",
                      node == self->cfg->root ? "the root " : "", peer->node->name, why,
                      node == self->cfg->root && self->cfg->commands.count
                          ? " (--resume continues the run)" : "");
        return;
    }
    peer->lost = 1;
    results_set_lost (self->results, node, why, tf_now () - self->t_start);
    session_log (self, "node %s lost: %s", peer->node->name, why);
    if (peer->slot >= 0)
        deploy_kill (self->deploy, peer->slot);
    char below[TF_ERRLEN];
    snprintf (below, sizeof below, "its parent %s was lost", peer->node->name);
    for (int c = 0; c < peer->node->nchildren; c++)
        lose_subtree (self, peer->node->children[c], below);
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
    if (self->phase == PHASE_STOPPING)
        return;
    if (other >= 0 && self->cfg->nodes[other].parent == from) {
        snprintf (why, sizeof why, "%.64s: %.200s", peer->node->name, m->why);
        lose_subtree (self, other, why);
    }
    else if (other >= 0 && other == peer->node->parent) {
        snprintf (why, sizeof why, "lost its parent %.64s: %.200s", m->text, m->why);
        lose_subtree (self, from, why);
    }
    else
        refuse (self, peer, "LOST names \"%.64s\", neither its parent nor a child", m->text);
}

/*  Started nodes silent for longer than the run's lost-peer silence (and
 *  never less than the nodes' own patience with the controller): lost.
 *  Parents normally notice first; this catches what they cannot (the
 *  root, a node whose parent hangs with it). */
static void
check_silence (session_t *self, double now)
{
    if (self->phase != PHASE_RUNNING)
        return;
    double silence = fmax (PROTO_CONTROL_SILENCE, config_lost_after_s (self->cfg));
    for (int i = 0; i < self->cfg->nnodes && self->phase == PHASE_RUNNING; i++) {
        peer_t *peer = &self->peers[i];
        if (peer->lost || peer->exited || now - peer->heard <= silence)
            continue;
        char why[64];
        snprintf (why, sizeof why, "silent for %.0f s", now - peer->heard);
        lose_subtree (self, i, why);
    }
}

static void handle_exits (session_t *self);


/*  A node gave up. While the run goes on, a node other than the root is
 *  then lost like one that died (its parent re-queues what it had);
 *  otherwise the run fails. If another node's process died just before,
 *  that death is the cause and this failure a consequence (a parent
 *  cannot reach its dead child): look at the processes first. */
static void
on_fail (session_t *self, peer_t *peer, const proto_msg_t *m)
{
    handle_exits (self);
    if (self->phase == PHASE_RUNNING && !self->driver->measure && peer->node->parent >= 0) {
        char why[TF_ERRLEN];
        snprintf (why, sizeof why, "it failed: %.400s", m->text);
        lose_subtree (self, (int) (peer - self->peers), why);
        return;
    }
    if (self->pending_exit && self->pending_peer != (int) (peer - self->peers))
        session_fail (self, RESULTS_FAILED, "%s", self->pending_exit);
    session_fail (self, RESULTS_FAILED, "node %s: %s", peer->node->name, m->text);
}

/*  A message from a node lost already: not re-admitted, whatever it
 *  says. Its FAIL is still read. A node that gives up sends FAIL and
 *  exits; the controller may see the exit, or its parent's LOST, before
 *  it reaches the FAIL queued behind that node's earlier messages (its
 *  warm-up PINGs, on a busy machine), and the FAIL says why. A node lost
 *  with its parent keeps that reason. Its PINGs (the warm-up) and
 *  whatever else was in flight are dropped, the others with a log line. */
static void
on_message_from_lost (session_t *self, peer_t *peer, zmsg_t **msg)
{
    proto_msg_t m;
    char err[TF_ERRLEN];
    int index = (int) (peer - self->peers), parent = peer->node->parent;
    if (proto_decode (msg, &m, err, sizeof err) != 0)
        m.command = PROTO_COMMAND_END;   /* none: say it was dropped */
    if (m.command == PROTO_FAIL && parent >= 0 && !self->peers[parent].lost) {
        char why[TF_ERRLEN];
        snprintf (why, sizeof why, "it failed: %.400s", m.text);
        results_explain_lost (self->results, index, why);
        session_log (self, "node %s lost: %s (said after it was taken for lost)",
                     peer->node->name, why);
    }
    else if (m.command != PROTO_PING && say_refusal (self))
        session_log (self, "message from node %s, lost already; dropped", peer->node->name);
    proto_msg_clear (&m);
}

/*  Receive one message and act on it. */
static void
handle_message (session_t *self)
{
    zmsg_t *msg = zmsg_recv (self->control);
    if (!msg)
        return;
    char name[80], err[TF_ERRLEN];
    zframe_t *identity = zmsg_pop (msg);
    int known = identity_text (identity, name, sizeof name);
    int index = known ? config_find_node (self->cfg, name) : -1;
    zframe_destroy (&identity);
    /*  With CURVE, the key a connection was admitted with names its node:
     *  a node of the run cannot speak under another's name. */
    if (index >= 0 && self->curve && !curve_peer_is (zmsg_last (msg), name)) {
        refuse (self, &self->peers[index], "not authenticated as %s", name);
        zmsg_destroy (&msg);
        return;
    }
    if (index < 0) {
        if (say_refusal (self))
            session_log (self, "message from unknown peer \"%s\"; dropped", name);
        self->malformed++;
        zmsg_destroy (&msg);
        return;
    }
    peer_t *peer = &self->peers[index];
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
    switch (m.command) {
    case PROTO_HELLO:
        on_hello (self, peer, &m);
        break;
    case PROTO_BOUND:
        on_bound (self, peer, &m);
        break;
    case PROTO_STATS:
        on_stats (self, peer, &m);
        break;
    case PROTO_REPORT:
        on_report (self, peer, &m);
        break;
    case PROTO_FAIL:
        on_fail (self, peer, &m);
        break;
    case PROTO_LOST:
        on_lost (self, peer, &m);
        break;
    case PROTO_PING:   /* a node's warm-up (overlay/proto.h) */
        break;
    default:
        if (!self->driver->message
            || self->driver->message (self, self->driver->arg, index, &m, err, sizeof err))
            refuse (self, peer, "%s: %s", proto_command_str (m.command),
                    self->driver->message ? err : "unexpected");
        break;
    }
    proto_msg_clear (&m);
}

/*  Wait up to timeout_ms for messages and handle those that came. */
static void
poll_messages (session_t *self, int timeout_ms)
{
    if (zpoller_wait (self->poller, timeout_ms) != self->control)
        return;
    for (int i = 0; i < DRAIN_MAX && (zsock_events (self->control) & ZMQ_POLLIN); i++)
        handle_message (self);
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

/*  Account for node processes that exited. Before the shutdown, an exit is
 *  a failure, reported after a short grace so that the node's FAIL, which
 *  says why, wins when it comes. After STOP, an unclean exit fails a run
 *  that was going well (a node under valgrind --error-exitcode, say). */
static void
handle_exits (session_t *self)
{
    deploy_exit_t ex;
    char text[TF_ERRLEN];
    while (deploy_poll (self->deploy, &ex)) {
        peer_t *peer = peer_by_slot (self, ex.slot);
        if (peer)
            peer->exited = 1;
        deploy_describe_exit (&ex, text, sizeof text);
        if (peer && peer->lost)
            continue;   /* expected: killed, or stopped on its own */
        /*  While the run goes on, a node that dies is lost. Only an exit
         *  with a status may come with a FAIL that says why (the pending
         *  exit's grace); a death by a signal says it all. */
        if (peer && self->phase == PHASE_RUNNING && !self->driver->measure
            && (peer->node->parent >= 0 || WIFSIGNALED (ex.status))) {
            lose_subtree (self, (int) (peer - self->peers), text);
            continue;
        }
        if (self->phase != PHASE_STOPPING) {
            if (!self->pending_exit && peer) {
                self->pending_exit = xstrdup (text);
                self->pending_peer = (int) (peer - self->peers);
                self->pending_deadline = tf_now () + EXIT_EXPLAIN_GRACE;
            }
        }
        else if (!deploy_exit_is_clean (&ex) && session_ok (self))
            session_fail (self, RESULTS_FAILED, "%s after STOP", text);
    }
}

/* ------------------------------------------------------------------------
 *  The phases.
 */

/*  Append "WHAT NAME, NAME" for the nodes in state to buf, after "; " if
 *  buf is not empty; nothing if no node is in state. */
static void
list_peers_in (session_t *self, peer_state_t state, const char *what, char *buf, size_t len)
{
    size_t used = strlen (buf);
    int n = 0;
    for (int i = 0; i < self->cfg->nnodes && used < len; i++) {
        if (self->peers[i].state != state)
            continue;
        if (n++ == 0)
            used += (size_t) snprintf (buf + used, len - used, "%s%s", used ? "; " : "",
                                       what);
        else
            used += (size_t) snprintf (buf + used, len - used, ", ");
        if (used < len)
            used += (size_t) snprintf (buf + used, len - used, "%s",
                                       self->peers[i].node->name);
    }
}

static void
check_deadlines (session_t *self, double now)
{
    if (zsys_interrupted) {
        /*  Cleared so that a second Ctrl-C can cut the shutdown short. */
        zsys_interrupted = 0;
        session_fail (self, RESULTS_INTERRUPTED, "interrupted");
        return;
    }
    if (self->pending_exit && now >= self->pending_deadline) {
        session_fail (self, RESULTS_FAILED, "%s", self->pending_exit);
        return;
    }
    if (self->opt.timeout > 0 && now - self->t_launch > self->opt.timeout) {
        session_fail (self, RESULTS_FAILED, "run timed out after %g s", self->opt.timeout);
        return;
    }
    /*  Not while a message waits: a controller that was not scheduled for
     *  the whole timeout has the nodes' HELLOs still to read. */
    if (self->phase == PHASE_HANDSHAKE && now - self->t_handshake > SESSION_HANDSHAKE_TIMEOUT
        && !(zsock_events (self->control) & ZMQ_POLLIN)) {
        char missing[TF_ERRLEN - 64] = "";
        list_peers_in (self, PEER_SPAWNED, "no HELLO from ", missing, sizeof missing);
        list_peers_in (self, PEER_CONFIGURED, "no BOUND from ", missing, sizeof missing);
        session_fail (self, RESULTS_FAILED, "handshake timed out after %g s: %s",
                  SESSION_HANDSHAKE_TIMEOUT, missing);
    }
}

/*  The control ROUTER, not bound yet. Returns 0, or -1 after
 *  session_fail. */
static int
make_control (session_t *self)
{
    tf_heap_reserve (HEAP_RESERVE_BASE + (size_t) self->cfg->nnodes * HEAP_RESERVE_PER_NODE);
    self->control = zsock_new (ZMQ_ROUTER);
    if (!self->control) {
        session_fail (self, RESULTS_FAILED, "cannot create the control socket: %s",
                  zmq_strerror (errno));
        return -1;
    }
    zsock_set_router_mandatory (self->control, 1);
    zsock_set_sndtimeo (self->control, SEND_TIMEOUT_MS);
    zsock_set_maxmsgsize (self->control, PROTO_MAX_BODY);
    zsock_set_linger (self->control, 0);
    if (self->curve)
        curve_server (self->control, curve_run_cert (self->certs));
    self->poller = zpoller_new (self->control, NULL);
    /*  Ctrl-C is ours to handle: the poller must not give up on it. */
    zpoller_set_nonstop (self->poller, true);
    self->controls = zhashx_new ();
    zhashx_set_destructor (self->controls, (zhashx_destructor_fn *) zstr_free);
    return 0;
}

/*  Bind the control socket on every endpoint a node needs to reach it
 *  (deploy_control_bind: loopback, the local address that routes to an
 *  ssh host, the ipc endpoint of netns nodes), each once, and note the
 *  endpoint each node connects to. Returns 0, or -1 after session_fail. */
static int
bind_control (session_t *self)
{
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const char *bind = deploy_control_bind (self->deploy, i);
        char *endpoint = zhashx_lookup (self->controls, bind);
        if (!endpoint) {
            if (strchr (bind, '['))
                zsock_set_ipv6 (self->control, 1);
            if (zsock_bind (self->control, "%s", bind) < 0) {
                session_fail (self, RESULTS_FAILED, "cannot bind %s: %s", bind,
                              zmq_strerror (errno));
                return -1;
            }
            endpoint = zsock_last_endpoint (self->control);
            if (!endpoint) {
                session_fail (self, RESULTS_FAILED, "cannot tell where %s was bound",
                              bind);
                return -1;
            }
            zhashx_insert (self->controls, bind, endpoint);
        }
        self->peers[i].control = endpoint;
    }
    return 0;
}

/*  Start every node: wrapper... NODE --name NAME --controller ENDPOINT
 *  [--bind ADDRESS], NODE as the node's host knows it. Returns 0, or -1
 *  after session_fail. */
static int
spawn_all (session_t *self)
{
    char err[TF_ERRLEN];
    int argc = self->node_argc;
    char **argv = xcalloc (argc + NODE_OPTION_WORDS + 1, sizeof *argv);
    memcpy (argv, self->node_argv, argc * sizeof *argv);
    int rc = 0;
    for (int i = 0; i < self->cfg->nnodes && rc == 0; i++) {
        peer_t *peer = &self->peers[i];
        const char *bind = deploy_bind_address (self->deploy, i);
        int k = argc;
        argv[argc - 1] = (char *) deploy_program (self->deploy, i,
                                                  self->node_argv[argc - 1]);
        argv[k++] = "--name";
        argv[k++] = peer->node->name;
        argv[k++] = "--controller";
        argv[k++] = (char *) peer->control;
        if (bind) {
            argv[k++] = "--bind";
            argv[k++] = (char *) bind;
        }
        argv[k] = NULL;
        if (deploy_start (self->deploy, i, argv, err, sizeof err) != 0) {
            session_fail (self, RESULTS_FAILED, "cannot start node %s: %s", peer->node->name,
                      err);
            rc = -1;
        }
        else {
            peer->slot = i;
            results_set_pid (self->results, i, deploy_pid (self->deploy, i));
        }
    }
    free (argv);
    return rc;
}

/*  With CURVE, the ZAP handler that admits exactly the run's nodes to the
 *  control socket, started before it binds. Returns 0, or -1 after
 *  session_fail. */
static int
start_auth (session_t *self)
{
    char err[TF_ERRLEN];
    int n = self->cfg->nnodes;
    if (!self->curve)
        return 0;
    const char **names = xcalloc ((size_t) n, sizeof *names);
    const char **keys = xcalloc ((size_t) n, sizeof *keys);
    for (int i = 0; i < n; i++) {
        names[i] = self->cfg->nodes[i].name;
        keys[i] = curve_run_public (self->certs, i);
    }
    self->auth = curve_auth_new (names, keys, n, err, sizeof err);
    free (keys);
    free (names);
    if (!self->auth) {
        session_fail (self, RESULTS_FAILED, "%s", err);
        return -1;
    }
    return 0;
}

/*  Bind, spawn every node. Returns 0, or -1 after session_fail. */
static int
launch (session_t *self)
{
    if (start_auth (self) != 0 || make_control (self) != 0 || bind_control (self) != 0)
        return -1;
    self->t_launch = self->t_handshake = tf_now ();
    int rc = spawn_all (self);
    /*  Starting 255 processes on a loaded machine takes seconds: the
     *  nodes' silence counts from when the last one was started. */
    self->t_handshake = tf_now ();
    return rc;
}

/*  Tell every node that said HELLO and runs that we are alive: a node
 *  that hears nothing for PROTO_CONTROL_SILENCE exits on its own. */
static void
ping_all (session_t *self, double now)
{
    self->t_ping = now;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        if (peer->state != PEER_SPAWNED && !peer->exited && !peer->lost
            && peer->state != PEER_STOPPED)
            send_to (self, peer, proto_empty (PROTO_PING), 1);
    }
}

/*  The handshake and the run proper, until the driver is done or a
 *  failure. */
static void
run_until_stopping (session_t *self)
{
    while (self->phase != PHASE_STOPPING) {
        double now = tf_now ();
        check_deadlines (self, now);
        if (self->phase == PHASE_STOPPING)
            break;
        if (self->phase == PHASE_RUNNING && self->driver->tick)
            self->driver->tick (self, self->driver->arg, now);
        if (now - self->t_ping >= PROTO_PING_EVERY)
            ping_all (self, now);
        check_silence (self, now);
        uint64_t held = ratelog_overdue (&self->refusals, now);
        if (held)
            session_log (self, "%llu more refused messages not shown",
                         (unsigned long long) held);
        poll_messages (self, LOOP_TICK_MS);
        handle_exits (self);
    }
}

/*  Peers sent STOP that neither reported nor exited. */
static int
awaiting_reports (session_t *self)
{
    int n = 0;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        n += peer->state == PEER_STOPPED && !peer->exited && !peer->lost
          && !results_node_reported (self->results, i);
    }
    return n;
}

/*  Collect REPORTs until every stopped node has reported or exited, for
 *  as long as the tree keeps reporting (SESSION_REPORT_TIMEOUT); a session
 *  that already failed waits FAILED_REPORT_TIMEOUT at most. */
static void
await_reports (session_t *self)
{
    int left = awaiting_reports (self);
    double now = tf_now ();
    double deadline = session_ok (self)
        ? now + SESSION_REPORT_TIMEOUT + SESSION_REPORT_PER_NODE * left
        : now + FAILED_REPORT_TIMEOUT;
    while (left && now < deadline) {
        if (zsys_interrupted) {
            zsys_interrupted = 0;
            session_fail (self, RESULTS_INTERRUPTED, "interrupted");
            break;
        }
        poll_messages (self, LOOP_TICK_MS);
        handle_exits (self);
        int still = awaiting_reports (self);
        now = tf_now ();
        if (still < left && session_ok (self) && now + SESSION_REPORT_TIMEOUT > deadline)
            deadline = now + SESSION_REPORT_TIMEOUT;
        left = still;
    }
}

/*  STOP everyone, collect the REPORTs, reap every process. */
static void
shutdown_run (session_t *self)
{
    self->phase = PHASE_STOPPING;
    /*  A node that exited just before the end, with no FAIL to say why. */
    if (self->pending_exit && session_ok (self))
        session_fail (self, RESULTS_FAILED, "%s", self->pending_exit);
    if (!self->t_end)
        self->t_end = tf_now ();

    if (self->control) {
        for (int i = 0; i < self->cfg->nnodes; i++) {
            peer_t *peer = &self->peers[i];
            if (peer->state >= PEER_CONFIGURED && !peer->exited && !peer->lost) {
                send_to (self, peer, proto_empty (PROTO_STOP), 1);
                peer->state = PEER_STOPPED;
            }
        }
        await_reports (self);
    }
    if (self->finished && session_ok (self)) {
        char missing[TF_ERRLEN / 2];
        size_t used = 0;
        missing[0] = '\0';
        for (int i = 0; i < self->cfg->nnodes && used < sizeof missing; i++)
            if (!results_node_reported (self->results, i) && !self->peers[i].lost)
                used += (size_t) snprintf (missing + used, sizeof missing - used, "%s%s",
                                           used ? ", " : "", self->peers[i].node->name);
        if (used)
            session_fail (self, RESULTS_FAILED, "no REPORT from %s", missing);
    }

    /*  Nodes exit by themselves after REPORT; whoever does not is
     *  terminated, then killed. */
    deploy_wait (self->deploy, session_ok (self) ? SESSION_STOP_GRACE : 0.2);
    handle_exits (self);
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        if (peer->slot >= 0 && deploy_is_running (self->deploy, peer->slot) && !peer->lost
            && session_ok (self))
            session_log (self, "node %s (pid %ld) did not exit after STOP; terminating it",
                     peer->node->name, (long) deploy_pid (self->deploy, peer->slot));
    }
    int killed = deploy_stop (self->deploy, SESSION_STOP_GRACE);
    if (killed)
        session_log (self, "killed %d node process%s that ignored SIGTERM", killed,
                 killed == 1 ? "" : "es");
    handle_exits (self);
}


/*  The node binary: --node-bin, $TREEFARM_NODE, the treefarm-node next to
 *  this executable, or treefarm-node on PATH. Returns a new string. */
static char *
find_node_bin (const char *option)
{
    if (option)
        return xstrdup (option);
    const char *env = getenv ("TREEFARM_NODE");
    if (env && *env)
        return xstrdup (env);
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr (self, '/');
        if (slash) {
            char *candidate = xasprintf ("%.*s/treefarm-node", (int) (slash - self), self);
            if (access (candidate, X_OK) == 0)
                return candidate;
            free (candidate);
        }
    }
    return xstrdup ("treefarm-node");
}

/*  $TREEFARM_NODE_WRAPPER's words, then the node binary: the start of
 *  every node's command line. */
static void
build_node_argv (session_t *self, char *node_bin)
{
    const char *wrapper = getenv ("TREEFARM_NODE_WRAPPER");
    char *words = xstrdup (wrapper ? wrapper : "");
    int n = 0;
    self->node_argv = xcalloc (strlen (words) / 2 + 3, sizeof *self->node_argv);
    char *save = NULL;
    for (char *w = strtok_r (words, " \t", &save); w; w = strtok_r (NULL, " \t", &save))
        self->node_argv[n++] = xstrdup (w);
    self->node_argv[n++] = node_bin;
    self->node_argc = n;
    free (words);
}


/* ------------------------------------------------------------------------
 *  Setting up, and the public face.
 */

int
session_curve_flags (const char *command, int on, int off, session_curve_t *out)
{
    if (on && off)
        return cli_usage_error (command, CLI_EXIT_USAGE, "--curve and --no-curve "
                                "contradict each other");
    *out = on ? SESSION_CURVE_ON : off ? SESSION_CURVE_OFF : SESSION_CURVE_AUTO;
    return -1;
}

config_t *
session_load_config (const char *path)
{
    char err[TF_ERRLEN];
    config_t *cfg = config_load_file (path, err, sizeof err);
    if (cfg && config_check_emulation (cfg, err, sizeof err) != 0)
        config_destroy (&cfg);
    if (cfg && config_kernel_shaped (cfg)
        && (cfg->platform.time_scale != 1 || cfg->platform.payload_scale != 1)) {
        snprintf (err, sizeof err, "%s: every host is netns: (the kernel testbed, which "
                  "shapes links at platform rates): time_scale and payload_scale must "
                  "be 1", path);
        config_destroy (&cfg);
    }
    if (!cfg)
        session_log (NULL, "%s", err);
    return cfg;
}

/*  Every node can be placed on its host and its program runs there, the
 *  checks of docs/deploy.md, before anything starts: slot i is node i. */
static int
check_deployable (session_t *self, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    build_node_argv (self, find_node_bin (self->opt.node_bin));
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const config_node_t *node = &self->cfg->nodes[i];
        int slot = deploy_add (self->deploy, node->name, node->host, why, sizeof why);
        assert (slot < 0 || slot == i);
        if (slot < 0
            || deploy_check (self->deploy, slot, self->node_argv, self->node_argc, why,
                             sizeof why) != 0)
            return tf_error (err, errlen, "%s: tree[%d] (node \"%s\"): %s",
                             self->opt.config_path, i, node->name, why);
    }
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const config_node_t *node = &self->cfg->nodes[i];
        if (deploy_route (self->deploy, i, node->children, node->nchildren, why,
                          sizeof why) != 0)
            return tf_error (err, errlen, "%s: tree[%d] (node \"%s\"): %s",
                             self->opt.config_path, i, node->name, why);
    }
    return 0;
}

/*  Is CURVE on for this run: asked for, or by default when a node is on
 *  an ssh host (docs/security.md)? */
static int
curve_wanted (session_t *self)
{
    if (self->opt.curve != SESSION_CURVE_AUTO)
        return self->opt.curve == SESSION_CURVE_ON;
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (deploy_kind (self->deploy, i) == HOST_SSH)
            return 1;
    return 0;
}

/*  With CURVE, the run's certificates in OUT/.curve, each node's given to
 *  the deployment, which takes it to the node (deploy_set_cert). */
static int
make_certs (session_t *self, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    self->curve = curve_wanted (self);
    results_set_curve (self->results, self->curve);
    if (!self->curve)
        return 0;
    int n = self->cfg->nnodes;
    const char **names = xcalloc ((size_t) n, sizeof *names);
    for (int i = 0; i < n; i++)
        names[i] = self->cfg->nodes[i].name;
    char *dir = xasprintf ("%s/%s", self->dir, CURVE_DIR_NAME);
    self->certs = curve_run_new (dir, names, n, why, sizeof why);
    free (dir);
    free (names);
    if (!self->certs)
        return tf_error (err, errlen, "cannot make the run's CURVE certificates: %s",
                         why);
    self->keys = curve_run_keys (self->certs);
    for (int i = 0; i < n; i++)
        if (deploy_set_cert (self->deploy, i, curve_run_file (self->certs, i), why,
                             sizeof why) != 0)
            return tf_error (err, errlen, "%s: tree[%d] (node \"%s\"): %s",
                             self->opt.config_path, i, self->cfg->nodes[i].name, why);
    return 0;
}

session_t *
session_new (const session_opts_t *opt, config_t **cfg_p)
{
    char err[TF_ERRLEN];
    session_t *self = xcalloc (1, sizeof *self);
    self->opt = *opt;
    self->refusals = ratelog_init (RATELOG_BURST, RATELOG_WINDOW);
    self->cfg = *cfg_p;
    *cfg_p = NULL;
    char *text = config_to_json (self->cfg);
    self->config_object = json_loads (text, 0, NULL);
    free (text);
    if (!json_is_object (self->config_object)) {
        session_log (NULL, "%s: cannot represent the experiment as JSON",
                     opt->config_path);
        goto out_fail;
    }
    deploy_opts_t dopts = {.ssh_config = opt->ssh_config,
                           .push_binary = opt->push_binary};
    self->deploy = deploy_new (&dopts);
    if (check_deployable (self, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        goto out_fail;
    }
    self->dir = opt->out_dir ? xstrdup (opt->out_dir)
                             : results_default_dir (self->cfg->name, time (NULL));
    if (results_make_dir (self->dir, err, sizeof err) != 0) {
        session_log (NULL, "cannot create the results directory: %s", err);
        goto out_fail;
    }
    if (results_check_writable (self->dir, err, sizeof err) != 0) {
        session_log (NULL, "cannot write into the results directory: %s", err);
        goto out_fail;
    }
    self->results = results_new (self->cfg);
    if (make_certs (self, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        goto out_fail;
    }
    self->peers = xcalloc (self->cfg->nnodes, sizeof *self->peers);
    for (int i = 0; i < self->cfg->nnodes; i++) {
        self->peers[i].node = &self->cfg->nodes[i];
        self->peers[i].slot = -1;
    }
    return self;
out_fail:
    session_destroy (&self);
    return NULL;
}

void
session_destroy (session_t **self_p)
{
    session_t *self = *self_p;
    if (!self)
        return;
    deploy_destroy (&self->deploy);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->control);
    zactor_destroy (&self->auth);   /* after the socket it guards */
    curve_run_destroy (&self->certs);
    json_decref (self->keys);
    zhashx_destroy (&self->controls);
    results_destroy (&self->results);
    if (self->peers)
        for (int i = 0; i < self->cfg->nnodes; i++)
            free (self->peers[i].endpoint);
    free (self->peers);
    for (int i = 0; i < self->node_argc; i++)
        free (self->node_argv[i]);
    free (self->node_argv);
    json_decref (self->config_object);
    json_decref (self->run);
    free (self->pending_exit);
    free (self->dir);
    config_destroy (&self->cfg);
    free (self);
    *self_p = NULL;
}

int
session_execute (session_t *self, const session_driver_t *driver)
{
    char err[TF_ERRLEN];
    self->driver = driver;
    if (launch (self) == 0)
        run_until_stopping (self);
    shutdown_run (self);
    if (driver->done)
        driver->done (self, driver->arg);
    double wall = self->t_start ? self->t_end - self->t_start : 0;
    results_set_wall (self->results, wall, self->finished);
    results_set_malformed (self->results, self->malformed);
    if (session_ok (self))
        results_set_status (self->results, RESULTS_COMPLETE, NULL);
    results_status_t status = results_status (self->results);
    int code = status == RESULTS_COMPLETE      ? CLI_EXIT_OK
             : status == RESULTS_INTERRUPTED ? CLI_EXIT_INTERRUPTED
                                             : CLI_EXIT_FAILED;
    if (results_write (self->results, self->dir, err, sizeof err) != 0) {
        session_log (self, "%s", err);
        if (code == CLI_EXIT_OK)
            code = CLI_EXIT_FAILED;
    }
    fflush (stderr);
    self->driver = NULL;
    return code;
}

void
session_finish (session_t *self, double now)
{
    self->finished = 1;
    self->t_end = now;
    self->phase = PHASE_STOPPING;
}

int
session_send (session_t *self, int node, zmsg_t *msg)
{
    return send_to (self, &self->peers[node], msg, 0);
}

void
session_set_progress (session_t *self, progress_t *progress)
{
    self->progress = progress;
}

int
session_running (const session_t *self)
{
    return self->phase == PHASE_RUNNING;
}

int
session_finished (const session_t *self)
{
    return self->finished;
}

double
session_started_at (const session_t *self)
{
    return self->t_start;
}

double
session_ended_at (const session_t *self)
{
    return self->t_end;
}

const config_t *
session_config (const session_t *self)
{
    return self->cfg;
}

results_t *
session_results (session_t *self)
{
    return self->results;
}

const char *
session_dir (const session_t *self)
{
    return self->dir;
}

void
session_set_run (session_t *self, json_t *run)
{
    json_decref (self->run);
    self->run = json_incref (run);
}
