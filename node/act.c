/*  act — carrying out the core's actions. Where each goes and what it
 *  becomes there is node/route.h's; this file encodes that event as the
 *  wire message for the parent or the child (the receiving node decodes
 *  it back, node/inbound.h), starts the node's own engine or command
 *  worker, tells the controller, or does the node's bookkeeping. It owns
 *  the parent's outbox (a loop turn's small messages go as one BATCH)
 *  and the children a send failed to (node_outbox_t). It also keeps the
 *  payloads of tasks in transit (node/payload.h), so a node forwards the
 *  very bytes it received, without copying them.
 */
#include <inttypes.h>

#include "node/inbound.h"
#include "node/route.h"
#include "node/runtime.h"
#include "overlay/util.h"

int
act_flush_parent (node_t *self)
{
    node_outbox_t *out = &self->out;
    if (out->nout == 0)
        return 0;
    zmsg_t *msg = out->nout == 1 ? out->outbox[0] : proto_batch (out->outbox, out->nout);
    out->outbox[0] = NULL;
    out->nout = 0;
    if (zmsg_send (&msg, self->link.parent) == 0)
        return 0;
    zmsg_destroy (&msg);
    return -1;
}

/*  A REQUEST, ACK or DONE for the parent, sent when the loop turn ends
 *  (flush_parent), so those of one turn go as one message. */
static int
to_parent (node_t *self, zmsg_t **msg_p)
{
    if (!self->link.parent) {   /* an orphan (node/reparent.c): stale, dropped */
        zmsg_destroy (msg_p);
        return 0;
    }
    if (self->out.nout == PROTO_MAX_BATCH && act_flush_parent (self) != 0) {
        zmsg_destroy (msg_p);
        return -1;
    }
    self->out.outbox[self->out.nout++] = *msg_p;
    *msg_p = NULL;
    return 0;
}

int
act_subtree_send (node_t *self, int force)
{
    /*  Adapting, the bound follows the live estimates and a step may
     *  leave a child worth shrinking: node/adaptor.h's. */
    if (self->adapt.ad)
        return adapt_step (self, force);
    subtree_t *st = self->parts.subtree;
    int changed = subtree_step (st);
    const double *bounds = subtree_bounds (st);
    /*  Until every child reported there is nothing to send: the first
     *  SUBTREE will carry what changed meanwhile. */
    if (!(changed || force) || !bounds || !self->link.parent)
        return 0;
    if (act_flush_parent (self) != 0)   /* in order after what is waiting */
        return -1;
    zmsg_t *msg = proto_subtree (bounds);
    return zmsg_send (&msg, self->link.parent);
}

int
act_subtree_bound (node_t *self)
{
    return act_subtree_send (self, 0);
}

/*  The bytes of one chunk: the root makes them, others forward what they
 *  received (node/payload.h: a frame the store keeps, *shared set, to be
 *  sent without giving it up); a command's come from its files
 *  (node/cargo.h), a frame of the caller's. */
static zframe_t *
chunk_frame (node_t *self, const core_action_t *a, int *shared)
{
    *shared = a->kind != CORE_KIND_COMMAND;
    if (*shared)
        return payload_chunk (self->parts.payloads, a->task, a->index, a->offset, a->len);
    char err[TF_ERRLEN];
    zframe_t *f = cargo_input_chunk (self->parts.cargo, a->task, a->offset, a->len, err,
                                     sizeof err);
    if (!f)
        node_log (self, "task %" PRIu64 ": %s", a->task, err);
    return f;
}

/*  Send to a child, and then, when not NULL, `shared` as the message's
 *  last frame without giving it up: ZFRAME_REUSE makes libzmq share its
 *  bytes (reference counted), not copy them. A child whose connection is
 *  gone (the ROUTER is mandatory: EHOSTUNREACH) is noted, to be declared
 *  lost once the actions in hand are carried out (settle_losses);
 *  whatever else was for it is dropped meanwhile. */
static int
send_shared (node_t *self, int slot, zmsg_t **msg_p, zframe_t *shared)
{
    const char *name = self->cfg->nodes[self->me->children[slot]].name;
    if (self->out.unreachable[slot]) {
        zmsg_destroy (msg_p);
        return 0;
    }
    zmsg_pushstr (*msg_p, name);
    zsock_t *router = self->link.router;
    int rc = shared ? zmsg_sendm (msg_p, router) : zmsg_send (msg_p, router);
    if (rc == 0 && shared)
        rc = zframe_send (&shared, router, ZFRAME_REUSE);
    if (rc == 0)
        return 0;
    int error = zmq_errno ();
    zmsg_destroy (msg_p);
    if (error == EHOSTUNREACH) {
        self->out.unreachable[slot] = 1;
        return 0;
    }
    node_log (self, "cannot send to child %s: %s", name, zmq_strerror (error));
    return -1;
}

int
act_send_to_child (node_t *self, int slot, zmsg_t **msg_p)
{
    return send_shared (self, slot, msg_p, NULL);
}

/*  Hand a command task to the worker. */
static int
compute_command (node_t *self, uint64_t task)
{
    char err[TF_ERRLEN];
    json_t *job = cargo_job (self->parts.cargo, task, (uint32_t) self->me->index, err,
                             sizeof err);
    if (!job) {
        node_log (self, "%s", err);
        return -1;
    }
    json_object_set_new (job, "node_name", json_string (self->opts->name));
    /*  The worker holding fewest jobs: an idle one first, else one with a
     *  command running and none waiting (the core never hands out more
     *  than slots x CMDRUN_DEPTH). */
    uint32_t best = 0;
    for (uint32_t i = 1; i < self->parts.nworkers; i++)
        if (cmdrun_jobs (self->parts.cmdrun[i]) < cmdrun_jobs (self->parts.cmdrun[best]))
            best = i;
    int rc = self->parts.nworkers ? cmdrun_start (self->parts.cmdrun[best], job) : -1;
    json_decref (job);
    return rc;
}

/*  Root: flush the journal now (before FINISHED: every record is on disk
 *  before the controller hears the bag is done). */
static int
journal_now (node_t *self)
{
    char err[TF_ERRLEN];
    cargo_t *cargo = self->parts.cargo;
    if (!cargo || cargo_journal_tick (cargo, tf_now (), 1, err, sizeof err) == 0)
        return 0;
    node_log (self, "journal: %s", err);
    return -1;
}

/*  RECORDED's details of each command: its journal record. */
static json_t *
recorded_info (node_t *self, const core_action_t *a, int *ok)
{
    json_t *info = json_array ();
    char err[TF_ERRLEN];
    *ok = 1;
    for (uint32_t i = 0; i < a->ndone && self->parts.cargo; i++) {
        const char *where = self->cfg->nodes[a->done[i].node].name;
        json_t *rec = cargo_recorded (self->parts.cargo, &a->done[i], where, tf_now (), err,
                                      sizeof err);
        if (!rec) {
            node_log (self, "journal: %s", err);
            *ok = 0;
            rec = json_null ();
        }
        json_array_append_new (info, rec);
    }
    if (!self->parts.cargo || self->cfg->commands.count == 0) {
        json_decref (info);
        return NULL;
    }
    return info;
}

int
act_release_recorded (node_t *self)
{
    zlist_t *held = self->out.recorded;
    if (zlist_size (held) == 0
        || (self->parts.cargo && cargo_journal_pending (self->parts.cargo) > 0))
        return 0;
    zmsg_t *msg;
    while ((msg = zlist_pop (held)))
        if (zmsg_send (&msg, self->link.ctl) != 0) {
            zmsg_destroy (&msg);
            return -1;
        }
    return 0;
}

/*  RECORDED (root) to the controller, with each command's record. A task
 *  counts as done for the user once the controller has it, so the
 *  message waits until the journal has made its records durable (the
 *  journal's batch, at most ROOTBAG_JOURNAL_DELAY later: node/clock.c
 *  releases it); held ones go in order, so a later one waits too. */
static int
send_recorded (node_t *self, const core_action_t *a)
{
    int ok = 1;
    json_t *info = recorded_info (self, a, &ok);
    zmsg_t *msg = inbound_encode_done (PROTO_RECORDED, a->done, a->ndone, &info);
    if (!ok) {
        zmsg_destroy (&msg);
        return -1;
    }
    zlist_append (self->out.recorded, msg);
    return act_release_recorded (self);
}

/*  A RESULT chunk (ev) of the stream's bytes a->offset on: sent at once,
 *  in order after what the outbox holds. */
static int
send_result (node_t *self, const core_action_t *a, const core_event_t *ev)
{
    char err[TF_ERRLEN];
    zframe_t *f = cargo_result_chunk (self->parts.cargo, ev->task, a->offset, ev->len, err,
                                      sizeof err);
    if (!f) {
        node_log (self, "task %" PRIu64 ": %s", ev->task, err);
        return -1;
    }
    zmsg_t *msg = inbound_encode (ev, &f);
    if (!self->link.parent) {   /* an orphan: nothing goes up */
        zmsg_destroy (&msg);
        return 0;
    }
    if (act_flush_parent (self) != 0) {
        zmsg_destroy (&msg);
        return -1;
    }
    return zmsg_send (&msg, self->link.parent);
}

/*  The parent's event as its wire message (node/inbound.h): REQUEST, ACK,
 *  DONE and RETURN wait in the outbox for the end of the loop turn. */
static int
act_up (node_t *self, const core_action_t *a, const core_event_t *ev)
{
    if (ev->type == CORE_EV_RESULT)
        return send_result (self, a, ev);
    zmsg_t *msg = inbound_encode (ev, NULL);
    return to_parent (self, &msg);
}

/*  Child slot's event as its wire message: a chunk, whose bytes are a
 *  shared frame or the caller's (chunk_frame), a result's ack, or a
 *  RECLAIM. */
static int
act_down (node_t *self, const core_action_t *a, int slot, const core_event_t *ev)
{
    zmsg_t *msg;
    if (ev->type != CORE_EV_CHUNK) {   /* RESULT_ACK, RECLAIM */
        msg = inbound_encode (ev, NULL);
        return act_send_to_child (self, slot, &msg);
    }
    int shared;
    zframe_t *frame = chunk_frame (self, a, &shared);
    if (!frame) {
        node_log (self, "no payload for task %" PRIu64 " chunk %u", ev->task, ev->index);
        return -1;
    }
    zframe_t *own = shared ? NULL : frame;
    msg = inbound_encode (ev, &own);
    report_chunk_span (self, TRACE_SEND, (uint32_t) slot, ev->task, ev->index, ev->count);
    return send_shared (self, slot, &msg, shared ? frame : NULL);
}

/*  The node's own engine, or a command worker, takes the task. */
static int
act_compute (node_t *self, const core_action_t *a)
{
    if (a->kind == CORE_KIND_COMMAND)
        return compute_command (self, a->task);
    report_span (self, 1, TRACE_COMPUTE, 0, a->task);
    report_engine_started (self, tf_now ());
    return engine_start (self->parts.engine, a->task, a->units);
}

/*  RECORDED and FINISHED, for the controller. */
static int
act_controller (node_t *self, const core_action_t *a)
{
    if (a->type == CORE_ACT_RECORDED)
        return send_recorded (self, a);
    if (journal_now (self) != 0 || act_release_recorded (self) != 0)
        return -1;
    zmsg_t *msg = proto_empty (PROTO_FINISHED);
    return zmsg_send (&msg, self->link.ctl);
}

/*  The node's own bookkeeping: payloads and result streams done with, a
 *  retry. */
static int
act_self (node_t *self, const core_action_t *a)
{
    switch (a->type) {
    case CORE_ACT_RELEASE:
        payload_release (self->parts.payloads, a->task);
        if (self->parts.cargo)
            cargo_input_release (self->parts.cargo, a->task);
        return 0;
    case CORE_ACT_RELEASE_RESULT:
        if (self->me->parent >= 0)
            cargo_result_release (self->parts.cargo, a->task);
        return 0;
    case CORE_ACT_DROP_RESULT:
        cargo_result_discard (self->parts.cargo, a->task);
        return 0;
    default:   /* CORE_ACT_RETRY */
        node_log (self, "task %" PRIu64 " failed on %s (attempt %u): trying it again",
                  a->task, self->cfg->nodes[a->node].name, a->n);
        cargo_retried (self->parts.cargo, a->task);
        return 0;
    }
}

/*  Carry out one action where node/route.h says it goes. */
static int
act (node_t *self, const core_action_t *a)
{
    route_t r;
    if (route_action (a, 0, &r) != 0)
        return -1;
    switch (r.to) {
    case ROUTE_PARENT:
        return act_up (self, a, &r.ev);
    case ROUTE_CHILD:
        return act_down (self, a, r.child, &r.ev);
    case ROUTE_WORKER:
        return act_compute (self, a);
    case ROUTE_CONTROLLER:
        return act_controller (self, a);
    default:
        return act_self (self, a);
    }
}

int
act_perform (node_t *self)
{
    int n;
    const core_action_t *acts = core_actions (self->parts.core, &n);
    for (int i = 0; i < n; i++)
        if (act (self, &acts[i]) < 0) {
            char why[TF_ERRLEN];
            snprintf (why, sizeof why, "cannot carry out %s",
                      core_action_str (acts[i].type));
            node_fail (self, why);
            return -1;
        }
    return 0;
}

int
act_offer (node_t *self, core_event_t *ev, const char *peer)
{
    char err[TF_ERRLEN];
    if (core_handle (self->parts.core, ev, err, sizeof err) < 0) {
        receive_log_refusal (self, "refused %s from %s: %s", core_event_str (ev->type), peer,
                             err);
        return 0;
    }
    return 1;
}

int
act_feed (node_t *self, core_event_t *ev, const char *peer)
{
    int rc = act_offer (self, ev, peer) ? act_perform (self) : 0;
    return rc == 0 ? beat_settle_losses (self) : rc;
}

void
act_start (node_t *self)
{
    self->out.unreachable = xcalloc ((size_t) self->me->nchildren + 1, 1);
    self->out.recorded = zlist_new ();
}

int
act_unreachable (const node_t *self, int slot)
{
    return self->out.unreachable[slot];
}

void
act_cut_off (node_t *self, int slot)
{
    self->out.unreachable[slot] = 1;
}

void
act_drop_outbox (node_t *self)
{
    for (uint32_t i = 0; i < self->out.nout; i++)
        zmsg_destroy (&self->out.outbox[i]);
    self->out.nout = 0;
}

void
act_close (node_t *self)
{
    act_drop_outbox (self);
    free (self->out.unreachable);
    zmsg_t *msg;
    while (self->out.recorded && (msg = zlist_pop (self->out.recorded)))
        zmsg_destroy (&msg);
    zlist_destroy (&self->out.recorded);
}
