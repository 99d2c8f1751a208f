/*  run — `treefarm run`. See run.h and docs/protocol.md.
 *
 *  One thread, one loop: the control ROUTER is polled with a short timeout
 *  and, between messages, the loop reaps node processes, checks the
 *  deadlines, watches for Ctrl-C and redraws the progress line. A run goes
 *  through three phases: the handshake (HELLO -> CONFIG, BOUND), the run
 *  proper (START sent, STATS flowing, until the root's FINISHED) and the
 *  shutdown (STOP, REPORTs, reaping), which every path goes through, so
 *  the processes are stopped and results.json is written whatever
 *  happened. The first failure is the cause and is kept; later ones are
 *  consequences and only logged.
 */
#include "controller/run.h"
#include "controller/cli.h"
#include "controller/measure.h"

#include <czmq.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/deploy.h"
#include "controller/progress.h"
#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/proto.h"
#include "overlay/util.h"
#include "policies/policy.h"

/*  How long the loop sleeps at most between checks; how long an
 *  unexpected exit waits for the FAIL that may explain it; how long
 *  REPORTs are awaited when the run already failed. */
#define LOOP_TICK_MS 50
#define EXIT_EXPLAIN_GRACE 0.3
#define RUN_FAILED_REPORT_TIMEOUT 2.0
/*  Messages handled before the loop looks at processes and clocks again. */
#define DRAIN_MAX 256
/*  A send to a node that does not read within this is an error. */
#define SEND_TIMEOUT_MS 1000
/*  tasks.csv rows reach the disk at least this often (seconds), so a
 *  crash loses at most this much and a full disk shows up promptly. */
#define TASKS_FLUSH_S 1.0

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
    PHASE_RUNNING,           /* START sent, waiting for FINISHED */
    PHASE_STOPPING,          /* finished or failed: shut down */
} run_phase_t;

/*  One node as the controller sees it. */
typedef struct {
    const config_node_t *node;
    peer_state_t state;
    int slot;                /* deploy slot, -1 before spawn */
    int exited;              /* its process has been reaped */
    char *endpoint;          /* from BOUND */
    uint64_t malformed;      /* its messages the controller refused */
} peer_t;

typedef struct {
    const char *config_path;
    const char *policy;      /* --policy, or NULL */
    const char *out_dir;     /* --out, or NULL */
    const char *node_bin;    /* --node-bin, or NULL */
    int quiet;
    double timeout;          /* --timeout, 0 = none */
    int measure;             /* treefarm measure: calibrate, no bag */
    double cal_seconds;      /* platform seconds per phase */
    double cal_warmup;       /* of which not measured */
    const char *platform_out;   /* --out of measure: the platform file */
    const char *plot_node;   /* --plot NODE, or NULL for the root */
} run_options_t;

typedef struct {
    run_options_t opt;
    config_t *cfg;
    json_t *config_object;   /* canonical config, shipped in CONFIG */
    char **node_argv;        /* wrapper words + node binary, NULL-ended */
    int node_argc;
    char *dir;               /* results directory */
    deploy_t *deploy;
    zsock_t *control;
    zpoller_t *poller;
    progress_t *progress;
    results_t *results;
    peer_t *peers;           /* cfg->nnodes, tree order */
    run_phase_t phase;
    int finished;            /* the root said FINISHED */
    double t_launch;         /* processes spawned */
    double t_handshake;      /* last HELLO or BOUND */
    double t_start;          /* START sent, 0 before */
    double t_end;            /* FINISHED, or the failure */
    uint64_t malformed;      /* messages refused, all peers */
    measure_t *measure;      /* treefarm measure: the plan, else NULL */
    int cal_phase;           /* phase in progress, -1 before the first */
    char *pending_exit;      /* an unexpected exit, waiting for its FAIL */
    int pending_peer;        /* whose: index in peers */
    double pending_deadline;
    double t_tasks_flush;    /* tasks.csv last flushed */
} run_t;

/* ------------------------------------------------------------------------
 *  Messages to the user.
 */

static void run_log (run_t *run, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/*  Print "treefarm: ..." on stderr, on a line of its own even while the
 *  progress line is shown. */
static void
run_log (run_t *run, const char *fmt, ...)
{
    if (run)
        progress_clear (run->progress);
    fflush (stdout);
    va_list ap;
    va_start (ap, fmt);
    fputs ("treefarm: ", stderr);
    vfprintf (stderr, fmt, ap);
    fputc ('\n', stderr);
    va_end (ap);
}

/*  Nothing has failed so far. */
static int
run_ok (const run_t *run)
{
    return results_status (run->results) == RESULTS_RUNNING;
}

static void run_fail (run_t *run, results_status_t status, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/*  The run has failed (or was interrupted): keep the first cause, print
 *  it, and move on to the shutdown. Later causes are dropped. */
static void
run_fail (run_t *run, results_status_t status, const char *fmt, ...)
{
    char text[TF_ERRLEN];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    /*  A Ctrl-C on the terminal reaches the nodes too, and they fail:
     *  the interrupt is the cause. */
    if (zsys_interrupted && status == RESULTS_FAILED && run_ok (run)) {
        zsys_interrupted = 0;
        run_fail (run, RESULTS_INTERRUPTED, "interrupted");
    }
    /*  After the first failure, what follows is a consequence (nodes
     *  stopped before START fail, parents lose children): the nodes say
     *  so on their own stderr; the controller keeps quiet. */
    if (!run_ok (run))
        return;
    run_log (run, "%s", text);
    results_set_status (run->results, status, text);
    if (!run->t_end)
        run->t_end = tf_now ();
    run->phase = PHASE_STOPPING;
}

/* ------------------------------------------------------------------------
 *  Sending.
 */

/*  Send msg (taken) to peer through the control ROUTER; say why not
 *  unless quiet. */
static int
send_to (run_t *run, peer_t *peer, zmsg_t *msg, int quiet)
{
    zmsg_pushstr (msg, peer->node->name);
    int rc = zmsg_send (&msg, run->control);
    int e = errno;
    zmsg_destroy (&msg);
    if (rc != 0 && !quiet)
        run_log (run, "node %s: cannot send: %s", peer->node->name, zmq_strerror (e));
    return rc;
}

static int
send_config (run_t *run, peer_t *peer)
{
    json_t *body = json_pack ("{s:O}", "config", run->config_object);
    return send_to (run, peer, proto_encode (PROTO_CONFIG, &body, NULL), 0);
}

/*  Every node is BOUND: tell each where its parent listens. */
static void
start_all (run_t *run)
{
    for (int i = 0; i < run->cfg->nnodes; i++) {
        peer_t *peer = &run->peers[i];
        int parent = peer->node->parent;
        const char *endpoint = parent >= 0 ? run->peers[parent].endpoint : "";
        if (send_to (run, peer, proto_start (endpoint, run->measure != NULL), 0) != 0) {
            run_fail (run, RESULTS_FAILED, "node %s: cannot send START", peer->node->name);
            return;
        }
        peer->state = PEER_STARTED;
    }
    run->t_start = tf_now ();
    run->phase = PHASE_RUNNING;
    progress_start (run->progress, run->t_start);
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
static void
refuse (run_t *run, peer_t *peer, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static void
refuse (run_t *run, peer_t *peer, const char *fmt, ...)
{
    char text[TF_ERRLEN];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    run_log (run, "node %s: %s; dropped", peer->node->name, text);
    peer->malformed++;
    run->malformed++;
}

static void
on_hello (run_t *run, peer_t *peer, const proto_msg_t *m)
{
    const char *name = peer->node->name;
    if (strcmp (m->text, name) != 0) {
        refuse (run, peer, "HELLO names \"%.64s\", not the connection's identity", m->text);
        return;
    }
    if (peer->state != PEER_SPAWNED) {
        refuse (run, peer, "HELLO when %s", peer_state_str (peer->state));
        return;
    }
    json_int_t version = json_integer_value (json_object_get (m->body, "version"));
    if (version != PROTO_VERSION) {
        run_fail (run, RESULTS_FAILED, "node %s speaks protocol version %lld, expected %d",
                  name, (long long) version, PROTO_VERSION);
        return;
    }
    results_set_pid (run->results, (int) (peer - run->peers), m->pid);
    if (send_config (run, peer) != 0) {
        run_fail (run, RESULTS_FAILED, "node %s: cannot send CONFIG", name);
        return;
    }
    peer->state = PEER_CONFIGURED;
    run->t_handshake = tf_now ();
}

static void
on_bound (run_t *run, peer_t *peer, const proto_msg_t *m)
{
    if (peer->state != PEER_CONFIGURED) {
        refuse (run, peer, "BOUND when %s", peer_state_str (peer->state));
        return;
    }
    if (peer->node->nchildren > 0 && !*m->text) {
        run_fail (run, RESULTS_FAILED, "node %s has children but bound no endpoint",
                  peer->node->name);
        return;
    }
    peer->endpoint = xstrdup (m->text);
    peer->state = PEER_BOUND;
    run->t_handshake = tf_now ();
    for (int i = 0; i < run->cfg->nnodes; i++)
        if (run->peers[i].state != PEER_BOUND)
            return;
    start_all (run);
}

static void
on_finished (run_t *run, peer_t *peer)
{
    if (peer->node->index != run->cfg->root) {
        refuse (run, peer, "FINISHED from a node that is not the root");
        return;
    }
    if (run->phase != PHASE_RUNNING) {
        refuse (run, peer, "FINISHED when the run is not under way");
        return;
    }
    run->finished = 1;
    run->t_end = tf_now ();
    run->phase = PHASE_STOPPING;
}

/*  A node's final REPORT: file it and say BYE, which is what lets the
 *  node exit; so a node that exits cleanly has been heard (a REPORT still
 *  in a socket buffer when its sender exits cannot be lost or overtaken
 *  by the exit). A malformed REPORT is refused but still answered: the
 *  node has nothing better to say, and "no REPORT" fails the run. */
static void
on_report (run_t *run, peer_t *peer, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    if (results_update_report (run->results, (int) (peer - run->peers), m->object, err,
                               sizeof err) != 0)
        refuse (run, peer, "REPORT: %s", err);
    send_to (run, peer, proto_empty (PROTO_BYE), 1);
}

/*  The root's first completions: append them to tasks.csv. A refused
 *  record is counted (results_record) and the first of each message
 *  logged; a failed write stops the run. */
static void
on_recorded (run_t *run, peer_t *peer, const proto_msg_t *m)
{
    char err[TF_ERRLEN];
    if (peer->node->index != run->cfg->root || run->measure) {
        refuse (run, peer, "RECORDED from a node that is not the root of a run");
        return;
    }
    int told = 0;
    size_t i;
    json_t *entry;
    json_array_foreach (m->done, i, entry) {
        uint64_t task = (uint64_t) json_integer_value (json_array_get (entry, 0));
        uint64_t node = (uint64_t) json_integer_value (json_array_get (entry, 1));
        if (results_record (run->results, task, node, err, sizeof err) != 0 && !told++)
            refuse (run, peer, "RECORDED: %s", err);
    }
    if (results_check_tasks (run->results, err, sizeof err) != 0)
        run_fail (run, RESULTS_FAILED, "%s", err);
}

/*  Push tasks.csv's rows to the disk every TASKS_FLUSH_S. */
static void
flush_tasks (run_t *run, double now)
{
    char err[TF_ERRLEN];
    if (now - run->t_tasks_flush < TASKS_FLUSH_S)
        return;
    run->t_tasks_flush = now;
    if (results_flush_tasks (run->results, err, sizeof err) != 0)
        run_fail (run, RESULTS_FAILED, "%s", err);
}

static void handle_exits (run_t *run);

/*  A node gave up. If another node's process died just before, that death
 *  is the cause and this failure a consequence (a parent cannot reach its
 *  dead child): look at the processes first. */
static void
on_fail (run_t *run, peer_t *peer, const proto_msg_t *m)
{
    handle_exits (run);
    if (run->pending_exit && run->pending_peer != (int) (peer - run->peers))
        run_fail (run, RESULTS_FAILED, "%s", run->pending_exit);
    run_fail (run, RESULTS_FAILED, "node %s: %s", peer->node->name, m->text);
}

/*  Receive one message and act on it. */
static void
handle_message (run_t *run)
{
    zmsg_t *msg = zmsg_recv (run->control);
    if (!msg)
        return;
    char name[80], err[TF_ERRLEN];
    zframe_t *identity = zmsg_pop (msg);
    int known = identity_text (identity, name, sizeof name);
    int index = known ? config_find_node (run->cfg, name) : -1;
    zframe_destroy (&identity);
    if (index < 0) {
        run_log (run, "message from unknown peer \"%s\"; dropped", name);
        run->malformed++;
        zmsg_destroy (&msg);
        return;
    }
    peer_t *peer = &run->peers[index];
    proto_msg_t m;
    if (proto_decode (&msg, &m, err, sizeof err) != 0) {
        refuse (run, peer, "malformed message: %s", err);
        return;
    }
    switch (m.command) {
    case PROTO_HELLO:
        on_hello (run, peer, &m);
        break;
    case PROTO_BOUND:
        on_bound (run, peer, &m);
        break;
    case PROTO_STATS:
        if (results_update_stats (run->results, index, m.object, err, sizeof err) != 0)
            refuse (run, peer, "STATS: %s", err);
        break;
    case PROTO_FINISHED:
        on_finished (run, peer);
        break;
    case PROTO_RECORDED:
        on_recorded (run, peer, &m);
        break;
    case PROTO_REPORT:
        on_report (run, peer, &m);
        break;
    case PROTO_FAIL:
        on_fail (run, peer, &m);
        break;
    case PROTO_MEASURED:
        if (!run->measure
            || measure_record (run->measure, index, (int) m.phase,
                               json_number_value (json_object_get (m.body, "units_per_s")),
                               json_number_value (json_object_get (m.body, "recv_mbps")),
                               m.object, err, sizeof err) != 0)
            refuse (run, peer, "MEASURED: %s", run->measure ? err : "not calibrating");
        break;
    default:
        refuse (run, peer, "unexpected %s", proto_command_str (m.command));
        break;
    }
    proto_msg_clear (&m);
}

/*  Wait up to timeout_ms for messages and handle those that came. */
static void
poll_messages (run_t *run, int timeout_ms)
{
    if (zpoller_wait (run->poller, timeout_ms) != run->control)
        return;
    for (int i = 0; i < DRAIN_MAX && (zsock_events (run->control) & ZMQ_POLLIN); i++)
        handle_message (run);
}

/* ------------------------------------------------------------------------
 *  Processes.
 */

static peer_t *
peer_by_slot (run_t *run, int slot)
{
    for (int i = 0; i < run->cfg->nnodes; i++)
        if (run->peers[i].slot == slot)
            return &run->peers[i];
    return NULL;
}

/*  Account for node processes that exited. Before the shutdown, an exit is
 *  a failure, reported after a short grace so that the node's FAIL, which
 *  says why, wins when it comes. After STOP, an unclean exit fails a run
 *  that was going well (a node under valgrind --error-exitcode, say). */
static void
handle_exits (run_t *run)
{
    deploy_exit_t ex;
    char text[TF_ERRLEN];
    while (deploy_poll (run->deploy, &ex)) {
        peer_t *peer = peer_by_slot (run, ex.slot);
        if (peer)
            peer->exited = 1;
        deploy_describe_exit (&ex, text, sizeof text);
        if (run->phase != PHASE_STOPPING) {
            if (!run->pending_exit && peer) {
                run->pending_exit = xstrdup (text);
                run->pending_peer = (int) (peer - run->peers);
                run->pending_deadline = tf_now () + EXIT_EXPLAIN_GRACE;
            }
        }
        else if (!deploy_exit_is_clean (&ex) && run_ok (run))
            run_fail (run, RESULTS_FAILED, "%s after STOP", text);
    }
}

/* ------------------------------------------------------------------------
 *  The phases.
 */

/*  Append "WHAT NAME, NAME" for the nodes in state to buf, after "; " if
 *  buf is not empty; nothing if no node is in state. */
static void
list_peers_in (run_t *run, peer_state_t state, const char *what, char *buf, size_t len)
{
    size_t used = strlen (buf);
    int n = 0;
    for (int i = 0; i < run->cfg->nnodes && used < len; i++) {
        if (run->peers[i].state != state)
            continue;
        if (n++ == 0)
            used += (size_t) snprintf (buf + used, len - used, "%s%s", used ? "; " : "",
                                       what);
        else
            used += (size_t) snprintf (buf + used, len - used, ", ");
        if (used < len)
            used += (size_t) snprintf (buf + used, len - used, "%s",
                                       run->peers[i].node->name);
    }
}

static void
check_deadlines (run_t *run, double now)
{
    if (zsys_interrupted) {
        /*  Cleared so that a second Ctrl-C can cut the shutdown short. */
        zsys_interrupted = 0;
        run_fail (run, RESULTS_INTERRUPTED, "interrupted");
        return;
    }
    if (run->pending_exit && now >= run->pending_deadline) {
        run_fail (run, RESULTS_FAILED, "%s", run->pending_exit);
        return;
    }
    if (run->opt.timeout > 0 && now - run->t_launch > run->opt.timeout) {
        run_fail (run, RESULTS_FAILED, "run timed out after %g s", run->opt.timeout);
        return;
    }
    if (run->phase == PHASE_HANDSHAKE && now - run->t_handshake > RUN_HANDSHAKE_TIMEOUT) {
        char missing[TF_ERRLEN - 64] = "";
        list_peers_in (run, PEER_SPAWNED, "no HELLO from ", missing, sizeof missing);
        list_peers_in (run, PEER_CONFIGURED, "no BOUND from ", missing, sizeof missing);
        run_fail (run, RESULTS_FAILED, "handshake timed out after %g s: %s",
                  RUN_HANDSHAKE_TIMEOUT, missing);
    }
}

/*  Bind, spawn every node. Returns 0, or -1 after run_fail. */
static int
launch (run_t *run)
{
    char err[TF_ERRLEN];
    run->control = zsock_new (ZMQ_ROUTER);
    if (!run->control) {
        run_fail (run, RESULTS_FAILED, "cannot create the control socket: %s",
                  zmq_strerror (errno));
        return -1;
    }
    zsock_set_router_mandatory (run->control, 1);
    zsock_set_sndtimeo (run->control, SEND_TIMEOUT_MS);
    zsock_set_maxmsgsize (run->control, PROTO_MAX_BODY);
    zsock_set_linger (run->control, 0);
    const char *bind = deploy_control_bind (run->deploy);
    if (zsock_bind (run->control, "%s", bind) < 0) {
        run_fail (run, RESULTS_FAILED, "cannot bind %s: %s", bind, zmq_strerror (errno));
        return -1;
    }
    run->poller = zpoller_new (run->control, NULL);
    /*  Ctrl-C is ours to handle: the poller must not give up on it. */
    zpoller_set_nonstop (run->poller, true);
    char *endpoint = zsock_last_endpoint (run->control);
    if (!endpoint) {
        run_fail (run, RESULTS_FAILED, "cannot tell where %s was bound", bind);
        return -1;
    }

    /*  wrapper... node-bin --name NAME --controller ENDPOINT */
    int argc = run->node_argc;
    char **argv = xcalloc (argc + 5, sizeof *argv);
    memcpy (argv, run->node_argv, argc * sizeof *argv);
    argv[argc] = "--name";
    argv[argc + 2] = "--controller";
    argv[argc + 3] = endpoint;
    run->t_launch = run->t_handshake = tf_now ();
    int rc = 0;
    for (int i = 0; i < run->cfg->nnodes && rc == 0; i++) {
        peer_t *peer = &run->peers[i];
        argv[argc + 1] = peer->node->name;
        peer->slot = deploy_spawn (run->deploy, peer->node->name, peer->node->host, argv,
                                   err, sizeof err);
        if (peer->slot < 0) {
            run_fail (run, RESULTS_FAILED, "cannot start node %s: %s", peer->node->name,
                      err);
            rc = -1;
        }
        else
            results_set_pid (run->results, i, deploy_pid (run->deploy, peer->slot));
    }
    free (argv);
    zstr_free (&endpoint);
    return rc;
}

/*  Calibration: once the whole tree is connected (the root knows the
 *  tree's bound, so every node's SUBTREE came through), run the phases
 *  one after the other; after the last, stop as a run stops at FINISHED. */
static void
drive_measure (run_t *run, double now)
{
    const config_t *cfg = run->cfg;
    if (run->cal_phase < 0 && !results_node_stats (run->results, cfg->root)->has_bound)
        return;
    if (run->cal_phase >= 0 && !measure_phase_done (run->measure, run->cal_phase))
        return;
    if (++run->cal_phase == measure_phases (run->measure)) {
        run->finished = 1;
        run->t_end = now;
        run->phase = PHASE_STOPPING;
        return;
    }
    if (!run->opt.quiet)
        fprintf (stderr, "[%s] phase %d/%d: %s\n", cfg->name, run->cal_phase + 1,
                 measure_phases (run->measure),
                 measure_phase_str (run->measure, run->cal_phase));
    for (int i = 0; i < cfg->nnodes; i++) {
        json_t *body = measure_request (run->measure, run->cal_phase, i);
        if (send_to (run, &run->peers[i], proto_encode (PROTO_MEASURE, &body, NULL), 0)) {
            run_fail (run, RESULTS_FAILED, "node %s: cannot send MEASURE",
                      run->peers[i].node->name);
            return;
        }
    }
}

/*  The handshake and the run proper, until FINISHED or a failure. */
static void
run_until_stopping (run_t *run)
{
    while (run->phase != PHASE_STOPPING) {
        double now = tf_now ();
        check_deadlines (run, now);
        if (run->phase == PHASE_STOPPING)
            break;
        if (run->phase == PHASE_RUNNING && run->measure)
            drive_measure (run, now);
        else if (run->phase == PHASE_RUNNING)
            progress_update (run->progress, results_completed (run->results), now);
        flush_tasks (run, now);
        poll_messages (run, LOOP_TICK_MS);
        handle_exits (run);
    }
}

/*  Peers sent STOP that neither reported nor exited. */
static int
awaiting_reports (run_t *run)
{
    int n = 0;
    for (int i = 0; i < run->cfg->nnodes; i++) {
        peer_t *peer = &run->peers[i];
        n += peer->state == PEER_STOPPED && !peer->exited
          && !results_node_reported (run->results, i);
    }
    return n;
}

/*  Collect REPORTs until every stopped node has reported or exited, for
 *  as long as the tree keeps reporting (RUN_REPORT_TIMEOUT, run.h); a run
 *  that already failed waits RUN_FAILED_REPORT_TIMEOUT at most. */
static void
await_reports (run_t *run)
{
    int left = awaiting_reports (run);
    double now = tf_now ();
    double deadline = run_ok (run)
        ? now + RUN_REPORT_TIMEOUT + RUN_REPORT_PER_NODE * left
        : now + RUN_FAILED_REPORT_TIMEOUT;
    while (left && now < deadline) {
        if (zsys_interrupted) {
            zsys_interrupted = 0;
            run_fail (run, RESULTS_INTERRUPTED, "interrupted");
            break;
        }
        poll_messages (run, LOOP_TICK_MS);
        handle_exits (run);
        int still = awaiting_reports (run);
        now = tf_now ();
        if (still < left && run_ok (run) && now + RUN_REPORT_TIMEOUT > deadline)
            deadline = now + RUN_REPORT_TIMEOUT;
        left = still;
    }
}

/*  STOP everyone, collect the REPORTs, reap every process. */
static void
shutdown_run (run_t *run)
{
    run->phase = PHASE_STOPPING;
    /*  A node that exited just before FINISHED, with no FAIL to say why. */
    if (run->pending_exit && run_ok (run))
        run_fail (run, RESULTS_FAILED, "%s", run->pending_exit);
    if (!run->t_end)
        run->t_end = tf_now ();

    if (run->control) {
        for (int i = 0; i < run->cfg->nnodes; i++) {
            peer_t *peer = &run->peers[i];
            if (peer->state >= PEER_CONFIGURED && !peer->exited) {
                send_to (run, peer, proto_empty (PROTO_STOP), 1);
                peer->state = PEER_STOPPED;
            }
        }
        await_reports (run);
    }
    if (run->finished && run_ok (run)) {
        char missing[TF_ERRLEN / 2];
        size_t used = 0;
        missing[0] = '\0';
        for (int i = 0; i < run->cfg->nnodes && used < sizeof missing; i++)
            if (!results_node_reported (run->results, i))
                used += (size_t) snprintf (missing + used, sizeof missing - used, "%s%s",
                                           used ? ", " : "", run->peers[i].node->name);
        if (used)
            run_fail (run, RESULTS_FAILED, "no REPORT from %s", missing);
    }

    /*  Nodes exit by themselves after REPORT; whoever does not is
     *  terminated, then killed. */
    deploy_wait (run->deploy, run_ok (run) ? RUN_STOP_GRACE : 0.2);
    handle_exits (run);
    for (int i = 0; i < run->cfg->nnodes; i++) {
        peer_t *peer = &run->peers[i];
        if (peer->slot >= 0 && deploy_is_running (run->deploy, peer->slot) && run_ok (run))
            run_log (run, "node %s (pid %ld) did not exit after STOP; terminating it",
                     peer->node->name, (long) deploy_pid (run->deploy, peer->slot));
    }
    int killed = deploy_stop (run->deploy, RUN_STOP_GRACE);
    if (killed)
        run_log (run, "killed %d node process%s that ignored SIGTERM", killed,
                 killed == 1 ? "" : "es");
    handle_exits (run);
}

/* ------------------------------------------------------------------------
 *  Setting up.
 */

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
build_node_argv (run_t *run, char *node_bin)
{
    const char *wrapper = getenv ("TREEFARM_NODE_WRAPPER");
    char *words = xstrdup (wrapper ? wrapper : "");
    int n = 0;
    run->node_argv = xcalloc (strlen (words) / 2 + 3, sizeof *run->node_argv);
    char *save = NULL;
    for (char *w = strtok_r (words, " \t", &save); w; w = strtok_r (NULL, " \t", &save))
        run->node_argv[n++] = xstrdup (w);
    run->node_argv[n++] = node_bin;
    run->node_argc = n;
    free (words);
}

static void
run_destroy (run_t **run_p)
{
    run_t *run = *run_p;
    if (!run)
        return;
    deploy_destroy (&run->deploy);
    zpoller_destroy (&run->poller);
    zsock_destroy (&run->control);
    progress_destroy (&run->progress);
    results_destroy (&run->results);
    measure_destroy (&run->measure);
    if (run->peers)
        for (int i = 0; i < run->cfg->nnodes; i++)
            free (run->peers[i].endpoint);
    free (run->peers);
    for (int i = 0; i < run->node_argc; i++)
        free (run->node_argv[i]);
    free (run->node_argv);
    json_decref (run->config_object);
    free (run->pending_exit);
    free (run->dir);
    config_destroy (&run->cfg);
    free (run);
    *run_p = NULL;
}

/*  Load and check everything a run needs before anything starts. Returns
 *  a run, or NULL after printing why (a usage error). */
static run_t *
run_prepare (const run_options_t *opt)
{
    char err[TF_ERRLEN];
    run_t *run = xcalloc (1, sizeof *run);
    run->opt = *opt;
    run->cfg = config_load_file (opt->config_path, err, sizeof err);
    if (!run->cfg) {
        run_log (NULL, "%s", err);
        goto out_fail;
    }
    if (config_check_emulation (run->cfg, err, sizeof err) != 0) {
        run_log (NULL, "%s", err);
        goto out_fail;
    }
    if (opt->policy)
        config_set_policy (run->cfg, opt->policy);
    if (!policy_find (run->cfg->policy)) {
        char names[256];
        policy_names (names, sizeof names);
        run_log (NULL, "%s: policy \"%s\" is unknown (known: %s)", opt->config_path,
                 run->cfg->policy, names);
        goto out_fail;
    }
    /*  Results name the policy as the registry does, whatever the spelling
     *  (IA:Single, ia_single, ...). */
    config_set_policy (run->cfg, policy_find (run->cfg->policy)->name);
    char *text = config_to_json (run->cfg);
    run->config_object = json_loads (text, 0, NULL);
    free (text);
    if (!json_is_object (run->config_object)) {
        run_log (NULL, "%s: cannot represent the experiment as JSON", opt->config_path);
        goto out_fail;
    }

    run->deploy = deploy_new ("local", err, sizeof err);
    if (!run->deploy) {
        run_log (NULL, "%s", err);
        goto out_fail;
    }
    for (int i = 0; i < run->cfg->nnodes; i++) {
        const config_node_t *node = &run->cfg->nodes[i];
        if (deploy_check_host (run->deploy, node->host, err, sizeof err) != 0) {
            run_log (NULL, "%s: tree[%d] (node \"%s\"): %s", opt->config_path, i,
                     node->name, err);
            goto out_fail;
        }
    }
    build_node_argv (run, find_node_bin (opt->node_bin));
    const char *host = run->cfg->nodes[run->cfg->root].host;
    if (deploy_check_program (run->deploy, host, run->node_argv[0], err, sizeof err)
        || deploy_check_program (run->deploy, host, run->node_argv[run->node_argc - 1],
                                 err, sizeof err)) {
        run_log (NULL, "cannot run the node: %s (see --node-bin, TREEFARM_NODE, "
                 "TREEFARM_NODE_WRAPPER)", err);
        goto out_fail;
    }

    run->dir = opt->out_dir ? xstrdup (opt->out_dir)
                            : results_default_dir (run->cfg->name, time (NULL));
    if (results_make_dir (run->dir, err, sizeof err) != 0) {
        run_log (NULL, "cannot create the results directory: %s", err);
        goto out_fail;
    }

    run->results = results_new (run->cfg);
    if (!opt->measure && results_open_tasks (run->results, run->dir, err, sizeof err)) {
        run_log (NULL, "%s", err);
        goto out_fail;
    }
    run->cal_phase = -1;
    if (opt->measure)
        run->measure = measure_new (run->cfg, opt->cal_seconds, opt->cal_warmup);
    if (opt->plot_node && config_find_node (run->cfg, opt->plot_node) < 0) {
        run_log (NULL, "%s: --plot: no node named \"%s\"", opt->config_path,
                 opt->plot_node);
        goto out_fail;
    }
    run->peers = xcalloc (run->cfg->nnodes, sizeof *run->peers);
    for (int i = 0; i < run->cfg->nnodes; i++) {
        run->peers[i].node = &run->cfg->nodes[i];
        run->peers[i].slot = -1;
    }
    char *label = xasprintf ("%s/%s", run->cfg->name, run->cfg->policy);
    run->progress = progress_new (stdout,
                                  opt->quiet || opt->measure ? PROGRESS_QUIET : PROGRESS_AUTO,
                                  label, run->cfg->tasks.count,
                                  run->cfg->platform.time_scale);
    free (label);
    return run;
out_fail:
    run_destroy (&run);
    return NULL;
}

/*  Calibration done: the table, the platform file, measure.json, a plot. */
static int
measure_finish (run_t *run, int code)
{
    char err[TF_ERRLEN];
    const config_t *cfg = run->cfg;
    if (code != RUN_EXIT_OK) {
        printf ("calibration of %s: %s\n", cfg->name, results_error (run->results)
                                                        ? results_error (run->results)
                                                        : "failed");
        return code;
    }
    if (measure_compute (run->measure, err, sizeof err) != 0) {
        run_log (run, "calibration: %s", err);
        return RUN_EXIT_FAILED;
    }
    measure_print (run->measure, stdout);
    char *path = run->opt.platform_out ? xstrdup (run->opt.platform_out)
                                       : xasprintf ("%s/platform.json", run->dir);
    char *text = measure_platform_json (run->measure);
    FILE *f = text ? fopen (path, "w") : NULL;
    int ok = f && fputs (text, f) >= 0 && fputc ('\n', f) != EOF;
    ok = (f && fclose (f) == 0) && ok;
    free (text);
    if (!ok) {
        run_log (run, "cannot write the platform file %s", path);
        free (path);
        return RUN_EXIT_FAILED;
    }
    printf ("platform: %s\n", path);
    free (path);
    json_t *json = measure_to_json (run->measure);
    char *mpath = xasprintf ("%s/measure.json", run->dir);
    if (json_dump_file (json, mpath, JSON_INDENT (2) | JSON_REAL_PRECISION (15)) != 0)
        code = RUN_EXIT_FAILED;
    json_decref (json);
    free (mpath);
    int node = run->opt.plot_node ? config_find_node (cfg, run->opt.plot_node) : cfg->root;
    if (measure_plot (run->measure, node, run->dir, err, sizeof err) != 0) {
        run_log (run, "plot: %s", err);
        code = RUN_EXIT_FAILED;
    }
    else
        printf ("plot: %s/interference-%s.png (and .svg)\n", run->dir,
                cfg->nodes[node].name);
    fflush (stdout);
    return code;
}

/*  An emulation that fell behind its clock says so on the terminal too;
 *  results.json carries the figures (fidelity, efficiency_reliable). */
static void
warn_fidelity (run_t *run)
{
    int worst;
    double f = results_fidelity (run->results, &worst);
    if (run->cfg->platform.mode != PLATFORM_EMULATED || f >= RESULTS_FIDELITY_MIN
        || worst < 0)
        return;
    run_log (run, "warning: node %s was behind the emulated clock %.0f%% of the run "
             "(fidelity %.2f < %.2f); timings and efficiency are unreliable: lower "
             "time_scale (now %g)", run->cfg->nodes[worst].name, 100 * (1 - f), f,
             RESULTS_FIDELITY_MIN, run->cfg->platform.time_scale);
}

/*  tasks.csv is complete: close it, and check that a finished run
 *  recorded every task. */
static void
finish_tasks (run_t *run)
{
    char err[TF_ERRLEN];
    if (results_close_tasks (run->results, err, sizeof err) != 0)
        run_fail (run, RESULTS_FAILED, "%s", err);
    uint64_t count = run->cfg->tasks.count, got = results_recorded (run->results);
    if (!run->measure && run->finished && got != count)
        run_fail (run, RESULTS_FAILED, "the root finished with %llu of %llu tasks "
                  "recorded", (unsigned long long) got, (unsigned long long) count);
}

/*  Run, shut down, write the results. Returns the exit code. */
static int
run_execute (run_t *run)
{
    char err[TF_ERRLEN];
    /*  Past `ulimit -f`, write() must fail with EFBIG, not kill us. */
    signal (SIGXFSZ, SIG_IGN);
    if (launch (run) == 0)
        run_until_stopping (run);
    shutdown_run (run);
    finish_tasks (run);

    double wall = run->t_start ? run->t_end - run->t_start : 0;
    results_set_wall (run->results, wall, run->finished);
    results_set_malformed (run->results, run->malformed);
    if (run_ok (run))
        results_set_status (run->results, RESULTS_COMPLETE, NULL);
    if (run->t_start)
        progress_finish (run->progress, results_completed (run->results), run->t_end);
    warn_fidelity (run);

    int code = results_status (run->results) == RESULTS_COMPLETE      ? RUN_EXIT_OK
             : results_status (run->results) == RESULTS_INTERRUPTED ? RUN_EXIT_INTERRUPTED
                                                                      : RUN_EXIT_FAILED;
    if (results_write (run->results, run->dir, err, sizeof err) != 0) {
        run_log (run, "cannot write the results: %s", err);
        if (code == RUN_EXIT_OK)
            code = RUN_EXIT_FAILED;
    }
    fflush (stderr);
    if (run->measure)
        return measure_finish (run, code);
    results_print_summary (run->results, stdout);
    printf ("results: %s/results.json\n", run->dir);
    fflush (stdout);
    return code;
}

/* ------------------------------------------------------------------------
 *  The command line.
 */

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm run CONFIG [--policy NAME] [--out DIR] [--quiet]\n"
             "                           [--node-bin PATH] [--timeout SECONDS]\n"
             "\n"
             "Run the experiment CONFIG on a tree of treefarm-node processes on this\n"
             "machine, show its progress, and write results.json, nodes.csv and\n"
             "tasks.csv into the results directory.\n"
             "\n"
             "options:\n"
             "  --policy NAME      scheduling policy instead of the config's\n"
             "                     (see `treefarm policies`)\n"
             "  --out DIR          results directory, created if needed\n"
             "                     (default: results/NAME-YYYYmmdd-HHMMSS)\n"
             "  --quiet            no progress line\n"
             "  --node-bin PATH    the treefarm-node to run (default: $TREEFARM_NODE,\n"
             "                     else the one next to treefarm, else on PATH)\n"
             "  --timeout SECONDS  fail the run after SECONDS of wall time\n"
             "  -h, --help         show this help\n"
             "\n"
             "environment:\n"
             "  TREEFARM_NODE          the node binary, as --node-bin\n"
             "  TREEFARM_NODE_WRAPPER  words put before every node's command line,\n"
             "                         e.g. \"valgrind --error-exitcode=99 -q\"\n"
             "\n"
             "exit status: 0 complete, 1 the run failed, 2 bad usage or config,\n"
             "130 interrupted. No node process outlives the command.\n");
}


int
run_main (int argc, char **argv)
{
    enum { OPT_POLICY = 256, OPT_OUT, OPT_QUIET, OPT_NODE_BIN, OPT_TIMEOUT };
    static const struct option options[] = {
        {"policy", required_argument, NULL, OPT_POLICY},
        {"out", required_argument, NULL, OPT_OUT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"node-bin", required_argument, NULL, OPT_NODE_BIN},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    run_options_t opt;
    memset (&opt, 0, sizeof opt);
    opterr = 0;
    optind = 0;              /* glibc: a full reset */
    int c;
    while ((c = getopt_long (argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case OPT_POLICY:
            opt.policy = optarg;
            break;
        case OPT_OUT:
            opt.out_dir = optarg;
            break;
        case OPT_QUIET:
            opt.quiet = 1;
            break;
        case OPT_NODE_BIN:
            opt.node_bin = optarg;
            break;
        case OPT_TIMEOUT: {
            char *end;
            errno = 0;
            opt.timeout = strtod (optarg, &end);
            if (errno || end == optarg || *end || !(opt.timeout > 0)
                || !isfinite (opt.timeout))
                return cli_usage_error ("run", RUN_EXIT_USAGE,
                                        "--timeout: \"%s\" is not a positive number of "
                                    "seconds", optarg);
            break;
        }
        case 'h':
            usage (stdout);
            return RUN_EXIT_OK;
        case ':':
            return cli_usage_error ("run", RUN_EXIT_USAGE,
                                    "%s needs an argument", argv[optind - 1]);
        default:
            return cli_usage_error ("run", RUN_EXIT_USAGE,
                                    "unknown option \"%s\"", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error ("run", RUN_EXIT_USAGE, "missing CONFIG");
    if (optind + 1 < argc)
        return cli_usage_error ("run", RUN_EXIT_USAGE,
                                "unexpected argument \"%s\"", argv[optind + 1]);
    opt.config_path = argv[optind];

    run_t *run = run_prepare (&opt);
    if (!run)
        return RUN_EXIT_USAGE;
    int code = run_execute (run);
    run_destroy (&run);
    return code;
}

/* ------------------------------------------------------------------------
 *  treefarm measure
 */

static void
measure_usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm measure CONFIG [--out PLATFORM.json] [--dir DIR]\n"
             "                        [--seconds S] [--warmup S] [--plot NODE]\n"
             "                        [--node-bin PATH] [--quiet] [--timeout SECONDS]\n"
             "\n"
             "Calibrate the deployed tree with the 3-point procedure (DESIGN.md 1,\n"
             "docs/measure.md): every node computes throughout; a first phase moves no\n"
             "data (C); then, for each link, the parent streams to the child as fast as\n"
             "the link allows while its own parent streams to it (MR, C_r at the child;\n"
             "SR, RR, C_sr at the parent). Prints the measured parameters beside the\n"
             "configured ones and writes the measured platform as a config every command\n"
             "accepts.\n"
             "\n"
             "  --out FILE      the platform file (default DIR/platform.json)\n"
             "  --dir DIR       results directory (default results/NAME-TIME):\n"
             "                  results.json, measure.json (every phase's figures) and\n"
             "                  interference-NODE.{png,svg,dat,gp}\n"
             "  --seconds S     platform seconds per phase (default 20)\n"
             "  --warmup S      platform seconds not measured at each phase's start\n"
             "                  (default a quarter of --seconds)\n"
             "  --plot NODE     the node to plot (default the root)\n"
             "  --node-bin PATH the treefarm-node binary (also TREEFARM_NODE)\n"
             "  --quiet         no phase lines on stderr\n"
             "  --timeout S     give up after S wall seconds\n"
             "  -h, --help      this help\n"
             "\n"
             "Exit status: 0 calibrated, 1 failed, 2 bad usage or config, 130 interrupted.\n");
}

int
measure_main (int argc, char **argv)
{
    enum { OPT_OUT = 256, OPT_DIR, OPT_SECONDS, OPT_WARMUP, OPT_PLOT, OPT_QUIET,
           OPT_NODE_BIN, OPT_TIMEOUT };
    static const struct option options[] = {
        {"out", required_argument, NULL, OPT_OUT},
        {"dir", required_argument, NULL, OPT_DIR},
        {"seconds", required_argument, NULL, OPT_SECONDS},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"node-bin", required_argument, NULL, OPT_NODE_BIN},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    run_options_t opt;
    memset (&opt, 0, sizeof opt);
    opt.measure = 1;
    opt.cal_seconds = 20;
    opt.cal_warmup = -1;
    opterr = 0;
    optind = 0;
    int c;
    while ((c = getopt_long (argc, argv, ":h", options, NULL)) != -1) {
        double *number = NULL;
        switch (c) {
        case OPT_OUT:
            opt.platform_out = optarg;
            break;
        case OPT_DIR:
            opt.out_dir = optarg;
            break;
        case OPT_SECONDS:
            number = &opt.cal_seconds;
            break;
        case OPT_WARMUP:
            number = &opt.cal_warmup;
            break;
        case OPT_TIMEOUT:
            number = &opt.timeout;
            break;
        case OPT_PLOT:
            opt.plot_node = optarg;
            break;
        case OPT_QUIET:
            opt.quiet = 1;
            break;
        case OPT_NODE_BIN:
            opt.node_bin = optarg;
            break;
        case 'h':
            measure_usage (stdout);
            return RUN_EXIT_OK;
        case ':':
            return cli_usage_error ("measure", RUN_EXIT_USAGE, "%s needs an argument",
                                    argv[optind - 1]);
        default:
            return cli_usage_error ("measure", RUN_EXIT_USAGE, "unknown option \"%s\"",
                                    argv[optind - 1]);
        }
        if (number) {
            char *end;
            errno = 0;
            *number = strtod (optarg, &end);
            if (errno || end == optarg || *end || !(*number >= 0) || !isfinite (*number)
                || (c != OPT_WARMUP && *number == 0))
                return cli_usage_error ("measure", RUN_EXIT_USAGE, "\"%s\" is not a "
                                        "valid number of seconds", optarg);
        }
    }
    if (optind >= argc || optind + 1 < argc)
        return cli_usage_error ("measure", RUN_EXIT_USAGE, "%s",
                                optind >= argc ? "missing CONFIG" : "one CONFIG only");
    if (opt.cal_warmup < 0)
        opt.cal_warmup = opt.cal_seconds / 4;
    if (opt.cal_warmup >= opt.cal_seconds)
        return cli_usage_error ("measure", RUN_EXIT_USAGE,
                                "--warmup must be below --seconds");
    opt.config_path = argv[optind];
    run_t *run = run_prepare (&opt);
    if (!run)
        return RUN_EXIT_USAGE;
    int code = run_execute (run);
    run_destroy (&run);
    return code;
}
