/*  receive — what a node hears: messages from its parent, its children
 *  and the controller, and its workers' completions, fed to the core as
 *  events (the conversions are node/inbound.h's, pure). A message that
 *  breaks the protocol is refused: counted, said (rate limited), dropped
 *  (node_receive_t). See node/runtime.h.
 */
#include <inttypes.h>

#include "node/inbound.h"
#include "node/runtime.h"
#include "overlay/util.h"

void
receive_log_refusal (node_t *self, const char *fmt, ...)
{
    uint64_t held;
    int say = ratelog_allow (&self->in.refusals, tf_now (), &held);
    if (held)
        node_log (self, "%llu more refusals not shown", (unsigned long long) held);
    if (!say)
        return;
    char text[TF_ERRLEN];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    node_log (self, "%s", text);
}

void
receive_refuse (node_t *self, const char *peer, const char *why)
{
    self->in.refused++;
    receive_log_refusal (self, "refused a message from %s: %s", peer, why);
}

/*  Keep the bytes of a chunk the core accepted, so we can forward them:
 *  a command's in its spool, a synthetic task's in memory (the frame
 *  itself, node/payload.h), except on a leaf, which forwards nothing. The
 *  core checked its sizes against the task's; they size memory only
 *  within PROTO_MAX_TASK_BYTES all the same. Returns 0, or -1 after
 *  saying why (a spool that cannot be written is fatal). */
static int
store_chunk (node_t *self, proto_msg_t *m)
{
    if (m->kind == CORE_KIND_COMMAND) {
        char err[TF_ERRLEN];
        cargo_t *cargo = self->parts.cargo;
        if (cargo && cargo_input_store (cargo, m->task, m->bytes, m->index,
                                        zframe_data (m->payload),
                                        zframe_size (m->payload), err, sizeof err) == 0)
            return 0;
        return node_fail (self, cargo ? err : "a command task in a run without any"), -1;
    }
    if (self->me->nchildren == 0 || m->task == CORE_PROBE_TASK)
        return 0;
    if (m->bytes > PROTO_MAX_TASK_BYTES) {
        node_log (self, "dropped a payload of %" PRIu64 " bytes", m->bytes);
        return 0;
    }
    if (payload_put (self->parts.payloads, m->task, m->bytes, m->index, &m->payload) != 0)
        return node_fail (self, "a chunk out of order reached the payload store"), -1;
    return 0;
}

/*  A child's SUBTREE: keep its bounds, once, every model present; in
 *  an adapting run each one again replaces the last, its live compute
 *  rate and IR_r are what the core believes of the child, and a change
 *  in its rate may call for a costly action (node/adaptor.h). */
static int
on_subtree (node_t *self, int slot, const proto_msg_t *m, const char *peer)
{
    char err[TF_ERRLEN];
    int rc;
    if (self->adapt.ad)
        rc = adapt_subtree (self, slot, m, err, sizeof err);
    else
        rc = subtree_child (self->parts.subtree, slot, m->bounds, err, sizeof err) != 0
                 ? 1 : act_subtree_bound (self);
    if (rc == 1) {
        receive_log_refusal (self, "refused SUBTREE from %s: %s", peer, err);
        self->in.refused++;
        return 0;
    }
    return rc;
}

int
receive_parent (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->link.parent);
    proto_msg_t m;
    char why[TF_ERRLEN];
    if (!msg)
        return 0;
    beat_heard (self, self->me->nchildren, tf_now ());   /* any traffic */
    if (proto_decode (&msg, &m, why, sizeof why) < 0) {
        receive_refuse (self, "the parent", why);
        return 0;
    }
    int rc = 0;
    core_event_t ev;
    if (inbound_from_parent (&m, tf_now (), &ev, why, sizeof why) != 0)
        receive_refuse (self, "the parent", why);
    else if (ev.type != CORE_EV_CHUNK)   /* RESULT_ACK, RECLAIM: no payload */
        rc = act_feed (self, &ev, "the parent");
    else if (act_offer (self, &ev, "the parent")) {
        report_chunk_span (self, TRACE_RECEIVE, 0, m.task, m.index, m.count);
        rc = store_chunk (self, &m) == 0 ? act_perform (self) : -1;
    }
    proto_msg_clear (&m);
    return rc;
}

/*  A chunk of a child's result stream: the core checks it, cargo keeps
 *  its bytes (a spool, or on the root the task's outputs). A stream cargo
 *  cannot keep is logged; the task then counts as failed on the root. */
static int
on_result (node_t *self, core_event_t *ev, const proto_msg_t *m, const char *name)
{
    char err[TF_ERRLEN];
    if (!self->parts.cargo) {
        receive_refuse (self, name, "a result stream in a run without commands");
        return 0;
    }
    /*  A result of a task not out with that child (a late duplicate, say)
     *  is refused here, before its bytes touch any file. */
    if (!act_offer (self, ev, name))
        return 0;
    if (cargo_result_store (self->parts.cargo, m->task, m->bytes, m->index, m->count,
                            zframe_data (m->payload), zframe_size (m->payload), err,
                            sizeof err) != 0) {
        node_log (self, "result of task %" PRIu64 " from %s: %s", m->task, name, err);
        if (self->me->parent >= 0)
            return node_fail (self, err), -1;
    }
    return act_perform (self);
}

/*  The child slot an identity speaks for, and whether it is the child's
 *  heartbeat connection ("NAME/beat"); -1 for a stranger. */
static intptr_t
child_slot (node_t *self, char *identity, int *beat)
{
    if (!identity)
        return -1;
    size_t len = strlen (identity), suffix = strlen (NODE_BEAT_SUFFIX);
    *beat = len > suffix && strcmp (identity + len - suffix, NODE_BEAT_SUFFIX) == 0;
    if (*beat)
        identity[len - suffix] = '\0';
    intptr_t slot = (intptr_t) zhashx_lookup (self->link.slots, identity) - 1;
    if (*beat)
        identity[len - suffix] = '/';
    return slot;
}

void
receive_beat_message (node_t *self, zmsg_t **msg_p, const char *name)
{
    proto_msg_t m;
    char why[TF_ERRLEN];
    if (proto_decode (msg_p, &m, why, sizeof why) < 0)
        receive_refuse (self, name, why);
    else if (m.command != PROTO_BEAT)
        receive_refuse (self, name, proto_command_str (m.command));
    proto_msg_clear (&m);
}

/*  A message on a child's connection: the core's events, results and
 *  subtree bounds. */
static int
on_child_message (node_t *self, int slot, zmsg_t **msg_p, const char *name)
{
    proto_msg_t m;
    char why[TF_ERRLEN];
    int rc = 0;
    if (proto_decode (msg_p, &m, why, sizeof why) < 0) {
        receive_refuse (self, name, why);
        return 0;
    }
    core_event_t ev;
    core_done_t *done;
    switch (inbound_from_child (&m, slot, tf_now (), &ev, &done, why, sizeof why)) {
    case INBOUND_EVENT:
        rc = ev.type == CORE_EV_RESULT ? on_result (self, &ev, &m, name)
                                       : act_feed (self, &ev, name);
        break;
    case INBOUND_SUBTREE:
        if (on_subtree (self, slot, &m, name) < 0)
            rc = node_fail (self, "cannot send SUBTREE to the parent");
        break;
    default:
        receive_refuse (self, name, why);
        break;
    }
    free (done);
    proto_msg_clear (&m);
    return rc;
}

/*  A message on a child's connection, or each part of its BATCH in
 *  order (none after one that got the child declared lost). */
static int
on_child_messages (node_t *self, int slot, zmsg_t **msg_p, const char *name)
{
    zmsg_t *parts[PROTO_MAX_BATCH];
    char why[TF_ERRLEN];
    int n = proto_unbatch (msg_p, parts, why, sizeof why);
    if (n < 0) {
        receive_refuse (self, name, why);
        return 0;
    }
    if (n == 0)
        return on_child_message (self, slot, msg_p, name);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (rc == 0 && !beat_lost (self, slot))
            rc = on_child_message (self, slot, &parts[i], name);
        zmsg_destroy (&parts[i]);
    }
    return rc;
}

int
receive_child (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->link.router);
    if (!msg)
        return 0;
    char *name = zmsg_popstr (msg);
    int beat = 0;
    intptr_t slot = child_slot (self, name, &beat);
    int rc = 0;
    if (slot >= 0 && adapt_child_left (self, (int) slot))
        zmsg_destroy (&msg);   /* it left (drained): its last beats mean nothing */
    else if (slot < 0 || beat_lost (self, (int) slot)) {
        receive_refuse (self, name ? name : "?",
                        slot < 0 ? "not one of our children" : "a child lost already");
        zmsg_destroy (&msg);
    }
    else if (self->link.cert && !curve_peer_is (zmsg_last (msg), self->cfg->nodes[
                               self->me->children[slot]].name)) {
        /*  A key of the run, but another child's: it cannot speak for
         *  this one. */
        receive_refuse (self, name, "not authenticated as this child");
        zmsg_destroy (&msg);
    }
    else {
        beat_heard (self, (int) slot, tf_now ());   /* any traffic */
        if (beat) {
            beat_warm_child (self, (int) slot);
            receive_beat_message (self, &msg, name);
        }
        else
            rc = on_child_messages (self, (int) slot, &msg, name);
    }
    free (name);
    return rc;
}

int
receive_control (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->link.ctl);
    proto_msg_t m;
    char why[TF_ERRLEN];
    if (!msg)
        return 0;
    if (proto_decode (&msg, &m, why, sizeof why) < 0) {
        receive_refuse (self, "the controller", why);
        return 0;
    }
    beat_heard_controller (self, tf_now ());
    int rc = 0;
    if (m.command == PROTO_STOP)
        rc = 1;
    else if (m.command == PROTO_PING)
        rc = 0;
    else if (m.command == PROTO_MEASURE)
        rc = measure_on_message (self, &m);
    else if (m.command == PROTO_ATTACH)
        rc = attach_child (self, &m);
    else if (m.command == PROTO_REPARENT)
        rc = reparent_on_message (self, &m);
    else
        receive_refuse (self, "the controller", proto_command_str (m.command));
    proto_msg_clear (&m);
    return rc;
}

int
receive_engine (node_t *self)
{
    uint64_t task;
    double seconds;
    int rc = engine_recv (self->parts.engine, &task, &seconds);
    if (rc < 0)
        return node_fail (self, "the compute engine sent something unexpected"), -1;
    double now = tf_now ();
    report_units (self, now, engine_units (self->parts.engine));
    if (rc == 1)
        return 0;   /* progress only */
    report_computed (self, seconds, 0, task, tf_now ());
    core_event_t ev = {.type = CORE_EV_COMPUTED, .now = now, .task = task};
    int r = act_feed (self, &ev, "the engine");
    if (!engine_busy (self->parts.engine))
        report_engine_idle (self);
    return r;
}

int
receive_cmdrun (node_t *self, uint32_t slot)
{
    cmdrun_t *worker = self->parts.cmdrun[slot];
    uint64_t task, bytes;
    int failed;
    double started;
    json_t *info;
    if (cmdrun_recv (worker, &task, &bytes, &failed, &started, &info) != 0)
        return node_fail (self, "the command worker sent something unexpected"), -1;
    double seconds = json_number_value (json_object_get (info, "seconds"));
    /*  The span is the command's run: the worker may have started the
     *  next one before this outcome came. */
    report_span_at (self, 1, TRACE_COMPUTE, slot, task, started);
    report_computed (self, seconds, slot, task, started + seconds);
    cargo_computed (self->parts.cargo, task, bytes, &info);
    core_event_t ev = {.type = CORE_EV_COMPUTED, .now = tf_now (), .task = task,
                       .bytes = bytes, .failed = failed};
    return act_feed (self, &ev, "the command worker");
}

void
receive_flush_refusals (node_t *self, double now)
{
    uint64_t held = ratelog_overdue (&self->in.refusals, now);
    if (held)
        node_log (self, "%llu more refusals not shown", (unsigned long long) held);
}

uint64_t
receive_refused (const node_t *self)
{
    return self->in.refused;
}
