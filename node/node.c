/*  node — the ZeroMQ runtime of one tree node. See node.h.
 *
 *  All decisions are the core's; the runtime only translates: socket
 *  messages and worker completions into core events, core actions into
 *  socket messages and worker starts. This file is its event loop, the
 *  wait and teardown; each other part has a file of its own, listed in
 *  node/runtime.h.
 */
#include "node/node.h"

#include "node/runtime.h"
#include "node/waitset.h"
#include "overlay/util.h"

/*  Messages the loop reads from one socket in a turn before it looks at
 *  the clock and the other sockets again. */
#define NODE_DRAIN 64
/*  Sockets one wait may report readable. */
#define NODE_MAX_READY WAITSET_MAX

void
node_log (const node_t *self, const char *fmt, ...)
{
    char prefix[96];
    snprintf (prefix, sizeof prefix, "treefarm-node %s: ", self->opts->name);
    va_list ap;
    va_start (ap, fmt);
    tf_log_line (prefix, fmt, ap);
    va_end (ap);
}

int
node_fail (node_t *self, const char *error)
{
    node_log (self, "%s", error);
    if (self->link.ctl) {
        zmsg_t *msg = proto_fail (error);
        zmsg_send (&msg, self->link.ctl);
    }
    return 1;
}

/*  Wait up to `wait` seconds for the sockets (node/waitset.h: to the
 *  microsecond, never deaf: with time scaled by s, a millisecond late is
 *  s milliseconds of platform time on every paced chunk). Notes how late
 *  the loop woke. Returns how many sockets are readable, in ready[] in
 *  priority order, or -1 when interrupted. */
static int
wait_for (node_t *self, waitset_t *ws, double now, double wait, zsock_t **ready)
{
    double until = now + wait;
    int n = waitset_wait (ws, until, ready, NODE_MAX_READY);
    clock_note_lag (self, tf_now () - until);
    return n;
}

/*  Handle one message from sock. Returns 0 to go on, NODE_STOPPED after
 *  STOP and the final REPORT, anything else after a fatal error (said). */
static int
handle (node_t *self, zsock_t *sock)
{
    const node_link_t *link = &self->link;
    if (sock == link->ctl) {
        int c = receive_control (self);
        if (c < 0) {
            node_fail (self, "calibration failed");
            return -1;
        }
        if (c == 0)
            return 0;
        node_verbose (self, "stopped by the controller");
        return report_final (self) == 0 ? NODE_STOPPED : -1;
    }
    if (sock == engine_sock (self->parts.engine))
        return receive_engine (self);
    for (uint32_t i = 0; i < self->parts.nworkers; i++)
        if (sock == cmdrun_sock (self->parts.cmdrun[i]))
            return receive_cmdrun (self, i);
    if (link->parent && sock == link->parent)
        return receive_parent (self);
    if (link->beat && sock == link->beat) {
        beat_on_parent (self);
        return 0;
    }
    if (link->router && sock == link->router)
        return receive_child (self);
    return 0;
}

/*  Serve what woke the loop: every readable socket in priority order,
 *  each drained of up to NODE_DRAIN messages, so one wake-up and one
 *  turn of clock work serve a burst; then an emulated engine whose task
 *  (or progress report) is due; nothing readable: the clock. */
static int
serve_ready (node_t *self, zsock_t **ready, int n)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int k = 0;
        do
            rc = handle (self, ready[i]);
        while (rc == 0 && ++k < NODE_DRAIN && waitset_readable (ready[i]));
    }
    double now = tf_now ();
    clock_follow_load (self, now);   /* the task's end as the load has it */
    clock_settle (self, now);        /* ... and as the bytes moved have it */
    if (rc == 0 && engine_deadline (self->parts.engine, now) == 0)
        rc = receive_engine (self);   /* emulated, in the loop: after the sockets */
    if (rc == 0 && n == 0) {
        core_event_t tick = {.type = CORE_EV_TICK, .now = tf_now ()};
        return act_feed (self, &tick, "the clock");
    }
    return rc;
}

/*  The sockets the loop waits on, most urgent first: a child's REQUEST or
 *  ACK starts the next transfer, so children come before the parent's
 *  chunks, and both before the engine's completions, so that a node's
 *  own computing never keeps its children waiting (docs/architecture.md,
 *  "Serving before computing"). The controller comes last. */
static waitset_t *
loop_sockets (node_t *self)
{
    const node_link_t *link = &self->link;
    char err[TF_ERRLEN];
    waitset_t *ws = waitset_new (err, sizeof err);
    if (!ws) {
        node_fail (self, err);
        return NULL;
    }
    if (link->router)
        waitset_add (ws, link->router);
    if (link->parent)
        waitset_add (ws, link->parent);
    if (engine_sock (self->parts.engine))   /* NULL: emulated, in the loop */
        waitset_add (ws, engine_sock (self->parts.engine));
    for (uint32_t i = 0; i < self->parts.nworkers; i++)
        waitset_add (ws, cmdrun_sock (self->parts.cmdrun[i]));
    if (link->beat)
        waitset_add (ws, link->beat);
    waitset_add (ws, link->ctl);
    return ws;
}

/*  Begin: a run's START, or, in calibration, one endless engine task with
 *  the bag closed, as every node does in every phase; a leaf's subtree
 *  bound goes up at once. Returns 0, or non-zero after node_fail. */
static int
begin (node_t *self)
{
    int rc;
    if (self->link.measure) {
        core_event_t tick = {.type = CORE_EV_TICK, .now = tf_now ()};
        rc = act_feed (self, &tick, "the clock");
        engine_start (self->parts.engine, CORE_PROBE_TASK, 1e12);
    }
    else {
        report_begin_trace (self);
        char err[TF_ERRLEN];
        if (loadgen_start (self, tf_now (), err, sizeof err) != 0)
            return node_fail (self, err);
        adapt_start (self);
        core_event_t start = {.type = CORE_EV_START, .now = tf_now ()};
        rc = act_feed (self, &start, "the controller");
    }
    if (rc == 0 && act_subtree_bound (self) < 0)
        rc = node_fail (self, "cannot send SUBTREE to the parent");
    return rc;
}

/*  One turn of the loop: the clock, the heartbeats, the parent's outbox,
 *  the wait, what woke it. Returns 0 to go on, else serve's status. */
static int
turn (node_t *self, waitset_t *ws)
{
    zsock_t *ready[NODE_MAX_READY];
    double now = tf_now ();
    double wait = clock_work (self, now);
    if (wait < 0)
        return -1;
    int rc = beat_keep_alive (self, now, &wait);
    if (rc == 0)
        rc = reparent_check (self, now, &wait);
    if (rc != 0 || self->moved.rewait)   /* orphaned: no waiting on its sockets */
        return rc;
    if (self->link.parent && act_flush_parent (self) != 0)
        return node_fail (self, "cannot send to the parent");
    int n = wait_for (self, ws, now, wait, ready);
    if (n < 0)
        return node_fail (self, "interrupted");
    return serve_ready (self, ready, n);
}

/*  The run proper: until STOP, or a fatal error. Returns the exit status. */
static int
serve (node_t *self)
{
    waitset_t *ws = loop_sockets (self);
    if (!ws)
        return 1;
    double now = tf_now ();
    clock_start (self, now);
    act_start (self);
    beat_start (self, now);
    int rc = begin (self);
    while (rc == 0) {
        if (self->moved.rewait) {   /* re-parented: the parent's sockets changed */
            self->moved.rewait = 0;
            waitset_destroy (&ws);
            ws = loop_sockets (self);
            if (!ws)
                return 1;
        }
        rc = turn (self, ws);
    }
    waitset_destroy (&ws);
    return rc == NODE_STOPPED ? 0 : rc == NODE_ORPHANED ? NODE_EXIT_ORPHANED : 1;
}

int
node_run (const node_opts_t *opts)
{
    node_t node = {.opts = opts,
                   .in = {.refusals = ratelog_init (RATELOG_BURST, RATELOG_WINDOW)}},
           *self = &node;
    char err[TF_ERRLEN];
    int status = 1;
    zsys_init ();
    if (waitset_catch_interrupts (err, sizeof err) < 0
        || handshake_run (self, err, sizeof err) < 0
        || build_parts (self, err, sizeof err) < 0)
        status = node_fail (self, err);
    else {
        report_start (self);
        measure_start (self);
        status = serve (self);
    }
    loadgen_stop (self);
    build_close (self);
    act_close (self);
    handshake_close (self);   /* the controller's socket last: a FAIL leaves */
    beat_close (self);
    measure_close (self);
    clock_close (self);
    adapt_close (self);
    report_close (self);
    config_destroy (&self->cfg);
    return status;
}
