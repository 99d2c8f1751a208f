/*  session — one deployment of an experiment's tree: the loop, the
 *  phases, the shutdown and the public face. See session.h; the peers'
 *  messages and processes are session_peers.c's, the preparation
 *  session_prepare.c's (session_int.h).
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
#include "controller/session_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/cli.h"
#include "overlay/util.h"

/*  How long the loop sleeps at most between checks; how long REPORTs
 *  are awaited when the session already failed. */
#define LOOP_TICK_MS 50
#define FAILED_REPORT_TIMEOUT 2.0
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
    if (!self->t.end)
        self->t.end = tf_now ();
    self->phase = PHASE_STOPPING;
}

/* ------------------------------------------------------------------------
 *  Sending.
 */


int
session_send_peer (session_t *self, peer_t *peer, zmsg_t *msg, int quiet)
{
    zmsg_pushstr (msg, peer->node->name);
    int rc = zmsg_send (&msg, self->link.control);
    int e = errno;
    zmsg_destroy (&msg);
    if (rc != 0 && !quiet)
        session_log (self, "node %s: cannot send: %s", peer->node->name, zmq_strerror (e));
    return rc;
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
    if (self->pending.text && now >= self->pending.deadline) {
        session_fail (self, RESULTS_FAILED, "%s", self->pending.text);
        return;
    }
    if (self->opt.timeout > 0 && now - self->t.launch > self->opt.timeout) {
        session_fail (self, RESULTS_FAILED, "run timed out after %g s", self->opt.timeout);
        return;
    }
    /*  Not while a message waits: a controller that was not scheduled for
     *  the whole timeout has the nodes' HELLOs still to read. */
    if (self->phase == PHASE_HANDSHAKE && now - self->t.handshake > SESSION_HANDSHAKE_TIMEOUT
        && !(zsock_events (self->link.control) & ZMQ_POLLIN)) {
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
    self->link.control = zsock_new (ZMQ_ROUTER);
    if (!self->link.control) {
        session_fail (self, RESULTS_FAILED, "cannot create the control socket: %s",
                  zmq_strerror (errno));
        return -1;
    }
    zsock_set_router_mandatory (self->link.control, 1);
    zsock_set_sndtimeo (self->link.control, SEND_TIMEOUT_MS);
    zsock_set_maxmsgsize (self->link.control, PROTO_MAX_BODY);
    zsock_set_linger (self->link.control, 0);
    if (self->setup.curve)
        curve_server (self->link.control, curve_run_cert (self->setup.certs));
    self->link.poller = zpoller_new (self->link.control, NULL);
    /*  Ctrl-C is ours to handle: the poller must not give up on it. */
    zpoller_set_nonstop (self->link.poller, true);
    self->link.controls = zhashx_new ();
    zhashx_set_destructor (self->link.controls, (zhashx_destructor_fn *) zstr_free);
    return 0;
}

const char *
session_bind_for (session_t *self, int slot)
{
    const char *bind = deploy_control_bind (self->setup.deploy, slot);
    char *endpoint = zhashx_lookup (self->link.controls, bind);
    if (endpoint)
        return endpoint;
    if (strchr (bind, '['))
        zsock_set_ipv6 (self->link.control, 1);
    if (zsock_bind (self->link.control, "%s", bind) < 0) {
        session_fail (self, RESULTS_FAILED, "cannot bind %s: %s", bind, zmq_strerror (errno));
        return NULL;
    }
    endpoint = zsock_last_endpoint (self->link.control);
    if (!endpoint) {
        session_fail (self, RESULTS_FAILED, "cannot tell where %s was bound", bind);
        return NULL;
    }
    zhashx_insert (self->link.controls, bind, endpoint);
    return endpoint;
}

/*  Bind the control socket on every endpoint a node needs to reach it
 *  (deploy_control_bind: loopback, the local address that routes to an
 *  ssh host, the ipc endpoint of netns nodes), each once, and note the
 *  endpoint each node connects to. Returns 0, or -1 after session_fail. */
static int
bind_control (session_t *self)
{
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (!(self->peers[i].control = session_bind_for (self, i)))
            return -1;
    return 0;
}

int
session_spawn (session_t *self, peer_t *peer, int slot, char *err, size_t errlen)
{
    int argc = self->setup.node_argc;
    char **argv = xcalloc (argc + NODE_OPTION_WORDS + 1, sizeof *argv);
    memcpy (argv, self->setup.node_argv, argc * sizeof *argv);
    const char *bind = deploy_bind_address (self->setup.deploy, slot);
    int k = argc;
    argv[argc - 1] = (char *) deploy_program (self->setup.deploy, slot,
                                              self->setup.node_argv[argc - 1]);
    argv[k++] = "--name";
    argv[k++] = peer->node->name;
    argv[k++] = "--controller";
    argv[k++] = (char *) peer->control;
    if (bind) {
        argv[k++] = "--bind";
        argv[k++] = (char *) bind;
    }
    argv[k] = NULL;
    int rc = deploy_start (self->setup.deploy, slot, argv, err, errlen);
    free (argv);
    if (rc != 0)
        return -1;
    peer->slot = slot;
    results_set_pid (self->results, (int) (peer - self->peers),
                     deploy_pid (self->setup.deploy, slot));
    return 0;
}

/*  Start every node: wrapper... NODE --name NAME --controller ENDPOINT
 *  [--bind ADDRESS], NODE as the node's host knows it; the slurm nodes
 *  all by one srun step (deploy_launch). Returns 0, or -1 after
 *  session_fail. */
static int
spawn_all (session_t *self)
{
    char err[TF_ERRLEN];
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (session_spawn (self, &self->peers[i], i, err, sizeof err) != 0) {
            session_fail (self, RESULTS_FAILED, "cannot start node %s: %s",
                          self->peers[i].node->name, err);
            return -1;
        }
    /*  The nodes deploy_start only armed (slurm) start now, together. */
    if (deploy_launch (self->setup.deploy, err, sizeof err) != 0) {
        session_fail (self, RESULTS_FAILED, "cannot start the Slurm step: %s", err);
        return -1;
    }
    for (int i = 0; i < self->cfg->nnodes; i++)
        results_set_pid (self->results, i, deploy_pid (self->setup.deploy, i));
    return 0;
}

/*  With CURVE, the ZAP handler that admits exactly the run's nodes to the
 *  control socket, started before it binds. Returns 0, or -1 after
 *  session_fail. */
static int
start_auth (session_t *self)
{
    char err[TF_ERRLEN];
    int n = self->cfg->nnodes + self->cfg->noffered;   /* as make_certs made them */
    if (!self->setup.curve)
        return 0;
    const char **names = xcalloc ((size_t) n, sizeof *names);
    const char **keys = xcalloc ((size_t) n, sizeof *keys);
    for (int i = 0; i < n; i++) {
        names[i] = session_slot_name (self, i);
        keys[i] = curve_run_public (self->setup.certs, i);
    }
    /*  `treefarm join` may add nodes: keys made then are admitted then,
     *  through a store the handler rereads (overlay/curve.h). */
    if (self->cfg->join_slots > 0) {
        self->link.zap_dir = xasprintf ("%s/%s/zap", self->dir, CURVE_DIR_NAME);
        self->link.auth = curve_auth_dir_new (self->link.zap_dir, names, keys, n, err,
                                              sizeof err);
    }
    else
        self->link.auth = curve_auth_new (names, keys, n, err, sizeof err);
    free (keys);
    free (names);
    if (!self->link.auth) {
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
    self->t.launch = self->t.handshake = tf_now ();
    int rc = spawn_all (self);
    /*  Starting 255 processes on a loaded machine takes seconds: the
     *  nodes' silence counts from when the last one was started. */
    self->t.handshake = tf_now ();
    return rc;
}

/*  Tell every node that said HELLO and runs that we are alive: a node
 *  that hears nothing for PROTO_CONTROL_SILENCE exits on its own. */
static void
ping_all (session_t *self, double now)
{
    self->t.ping = now;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        if (peer->state != PEER_SPAWNED && !peer->exited && !peer->lost
            && peer->state != PEER_STOPPED)
            session_send_peer (self, peer, proto_empty (PROTO_PING), 1);
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
        if (self->phase == PHASE_RUNNING)
            session_join_tick (self, now);
        if (now - self->t.ping >= PROTO_PING_EVERY)
            ping_all (self, now);
        session_check_silence (self, now);
        uint64_t held = ratelog_overdue (&self->link.refusals, now);
        if (held)
            session_log (self, "%llu more refused messages not shown",
                         (unsigned long long) held);
        session_poll_messages (self, LOOP_TICK_MS);
        session_handle_exits (self);
    }
}

/*  Peers sent STOP that neither reported nor exited, and lost peers
 *  whose FAIL may still say why (session_fails_awaited). */
static int
awaiting_reports (session_t *self)
{
    int n = session_fails_awaited (self, tf_now ());
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
        session_poll_messages (self, LOOP_TICK_MS);
        session_handle_exits (self);
        int still = awaiting_reports (self);
        now = tf_now ();
        if (still < left && session_ok (self) && now + SESSION_REPORT_TIMEOUT > deadline)
            deadline = now + SESSION_REPORT_TIMEOUT;
        left = still;
    }
}

void
session_shutdown (session_t *self)
{
    self->phase = PHASE_STOPPING;
    /*  A node that exited just before the end, with no FAIL to say why. */
    if (self->pending.text && session_ok (self))
        session_fail (self, RESULTS_FAILED, "%s", self->pending.text);
    if (!self->t.end)
        self->t.end = tf_now ();

    if (self->link.control) {
        for (int i = 0; i < self->cfg->nnodes; i++) {
            peer_t *peer = &self->peers[i];
            if (peer->state >= PEER_CONFIGURED && !peer->exited && !peer->lost) {
                session_send_peer (self, peer, proto_empty (PROTO_STOP), 1);
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
    deploy_wait (self->setup.deploy, session_ok (self) ? SESSION_STOP_GRACE : 0.2);
    session_handle_exits (self);
    for (int i = 0; i < self->cfg->nnodes; i++) {
        peer_t *peer = &self->peers[i];
        if (peer->slot >= 0 && deploy_is_running (self->setup.deploy, peer->slot) && !peer->lost
            && session_ok (self))
            session_log (self, "node %s (pid %ld) did not exit after STOP; terminating it",
                     peer->node->name, (long) deploy_pid (self->setup.deploy, peer->slot));
    }
    int killed = deploy_stop (self->setup.deploy, SESSION_STOP_GRACE);
    if (killed)
        session_log (self, "killed %d node process%s that ignored SIGTERM", killed,
                 killed == 1 ? "" : "es");
    session_handle_exits (self);
}


int
session_execute (session_t *self, const session_driver_t *driver)
{
    char err[TF_ERRLEN];
    self->driver = driver;
    if (launch (self) == 0)
        run_until_stopping (self);
    session_shutdown (self);
    if (driver->done)
        driver->done (self, driver->arg);
    double wall = self->t.start ? self->t.end - self->t.start : 0;
    results_set_wall (self->results, wall, self->finished);
    results_set_malformed (self->results, self->link.malformed);
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
    self->t.end = now;
    self->phase = PHASE_STOPPING;
}

int
session_send (session_t *self, int node, zmsg_t *msg)
{
    return session_send_peer (self, &self->peers[node], msg, 0);
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
    return self->t.start;
}

double
session_ended_at (const session_t *self)
{
    return self->t.end;
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
