/*  actor — what one node does in a simulation: its core's events in,
 *  its actions out where node/route.h says. See sim.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/route.h"
#include "sim/commands.h"
#include "sim/sim_int.h"
#include "sim/s4u.h"

/*  --- messages ------------------------------------------------------------ */

/*  A transfer's timeline (--trace): it is sent and received from the
 *  moment its first chunk leaves the parent to the moment its last one
 *  reaches the child. */
static void
trace_spans_begin (sim_node_t *n, int slot, uint64_t task)
{
    sim_node_t *kid = &n->sim->nodes[n->sim->cfg->nodes[n->index].children[slot]];
    double now = simgrid_get_clock ();
    trace_begin (n->trace, TRACE_SEND, (uint32_t) slot, task, now);
    trace_begin (kid->trace, TRACE_RECEIVE, 0, task, now);
}

static void
trace_spans_end (sim_node_t *kid, const core_event_t *ev)
{
    if (!kid->trace || ev->type != CORE_EV_CHUNK || ev->index + 1 != ev->count)
        return;
    sim_node_t *parent = &kid->sim->nodes[kid->sim->cfg->nodes[kid->index].parent];
    double now = simgrid_get_clock ();
    trace_end (parent->trace, TRACE_SEND, (uint32_t) kid->slot, ev->task, now);
    trace_end (kid->trace, TRACE_RECEIVE, 0, ev->task, now);
}

/*  Send ev (borrowing done and avoid from the action) on channel chan:
 *  the bytes it moves are its chunk's plus its envelope's. */
static void
post (sim_node_t *n, int chan, const core_event_t *ev)
{
    sim_t *s = n->sim;
    sim_msg_t *m = xmalloc (sizeof *m + ev->ndone * sizeof *m->done);
    m->kind = SIM_MSG_EVENT;
    m->ev = *ev;
    if (ev->ndone)
        memcpy (m->done, ev->done, ev->ndone * sizeof *m->done);
    if (ev->navoid)
        memcpy (m->avoid, ev->avoid, ev->navoid * sizeof *m->avoid);
    m->ev.done = NULL;
    m->ev.avoid = NULL;
    double envelope = (SIM_ENVELOPE_BYTES + SIM_DONE_BYTES * (double) ev->ndone)
                    * s->cfg->platform.payload_scale;
    uint64_t len = ev->type == CORE_EV_CHUNK || ev->type == CORE_EV_RESULT ? ev->len : 0;
    if (ev->type == CORE_EV_CHUNK && ev->index == 0 && n->trace)
        trace_spans_begin (n, chan - 1, ev->task);
    if (ev->type == CORE_EV_CHUNK && n->meter)
        sim_adapt_chunk_sent (n, chan - 1, ev);
    long bytes = (long) (len + llround (envelope));
    sg_comm_detach (sg_mailbox_put_init (n->out[chan], m, bytes), free);
    s->messages++;
}

/*  A STOP or a BYE on channel chan: an envelope's bytes. */
static void
post_end (sim_node_t *n, int chan, sim_msg_kind_t kind)
{
    sim_msg_t *m = xcalloc (1, sizeof *m);
    m->kind = kind;
    long bytes = llround (SIM_ENVELOPE_BYTES * n->sim->cfg->platform.payload_scale);
    sg_comm_detach (sg_mailbox_put_init (n->out[chan], m, bytes), free);
}

void
sim_post_subtree (sim_node_t *n, const double *bounds, double compute, double ir_recv)
{
    if (!n->out[0])
        return;   /* the root: no parent */
    sim_msg_t *m = xcalloc (1, sizeof *m);
    m->kind = SIM_MSG_SUBTREE;
    memcpy (m->bounds, bounds, sizeof m->bounds);
    m->compute = compute;
    m->ir_recv = ir_recv;
    double bytes = SIM_ENVELOPE_BYTES + sizeof m->bounds + 2 * sizeof (double);
    sg_comm_detach (sg_mailbox_put_init (n->out[0], m,
                                         llround (bytes * n->sim->cfg->platform.payload_scale)),
                    free);
    n->sim->messages++;
}

/*  The run is over for n (STOP came, or on the root FINISHED): STOP to
 *  every child still in the run, and once each has said BYE, BYE to the
 *  parent. */
static void
stop (sim_node_t *n)
{
    if (n->stopping)
        return;
    n->stopping = 1;
    sim_engines_sample_last (n, simgrid_get_clock ());
    n->byes_due = 0;
    for (int c = 1; c < n->nchan; c++)
        if ((!n->left || !n->left[c]) && !sim_join_vacant (n, c)) {
            post_end (n, c, SIM_MSG_STOP);
            n->byes_due++;
        }
}

void
sim_child_leaves (sim_node_t *n, int slot)
{
    int c = 1 + slot;
    if (n->left[c] || n->stopping)
        return;   /* the STOP going down the tree reaches it anyway */
    n->left[c] = 1;
    n->left_due++;
    post_end (n, c, SIM_MSG_STOP);
}

/*  Once every child said BYE (those that left too), BYE to the parent:
 *  nothing is in flight to or from n any more. */
static void
bye_if_due (sim_node_t *n)
{
    if (!n->stopping || n->byes_due > 0 || n->left_due > 0 || n->done)
        return;
    if (n->index != n->sim->cfg->root)
        post_end (n, 0, SIM_MSG_BYE);
    n->done = 1;
}

/*  --- the core ------------------------------------------------------------- */

static void handle (sim_node_t *n, core_event_t ev);

/*  The root's records and its end, as the controller files them. */
static void
to_controller (sim_node_t *n, const core_action_t *a, double now)
{
    sim_t *s = n->sim;
    char err[TF_ERRLEN];
    if (a->type == CORE_ACT_FINISHED) {
        s->finished = 1;
        s->finished_at = now;
        stop (n);
        return;
    }
    if (a->type != CORE_ACT_RECORDED)
        return;
    for (uint32_t d = 0; d < a->ndone; d++) {
        const core_done_t *x = &a->done[d];
        int node = sim_join_node_of (s, (int) x->node);   /* the cores number the view */
        json_t *info = x->task < s->cfg->commands.count
                           ? sim_commands_info (s->commands, x->task, node, x->attempts)
                           : NULL;
        if (results_record (s->results, x->task, (uint32_t) node, info, err, sizeof err) != 0)
            sim_fail (s, "the root's record: %s", err);
        json_decref (info);
    }
    s->recorded += a->ndone;
    results_note_recorded_at (s->results, now);
    sim_progress (s, now, 0);
}

/*  Carry out the actions of n's last event. */
static void
carry_out (sim_node_t *n, double now)
{
    int count;
    const core_action_t *a = core_actions (n->core, &count);
    for (int i = 0; i < count; i++) {
        route_t r;
        if (route_action (&a[i], n->slot, &r) != 0) {
            sim_fail (n->sim, "%s: action %d cannot be routed",
                      n->sim->cfg->nodes[n->index].name, (int) a[i].type);
            return;
        }
        if (r.to == ROUTE_PARENT)
            post (n, 0, &r.ev);
        else if (r.to == ROUTE_CHILD)
            post (n, 1 + r.child, &r.ev);
        else if (r.to == ROUTE_WORKER && sim_engine_start (n, &a[i], r.ev, now) != 0)
            sim_fail (n->sim, "%s: asked to compute with every engine busy",
                      n->sim->cfg->nodes[n->index].name);
        else if (r.to == ROUTE_CONTROLLER)
            to_controller (n, &a[i], now);
    }
}

void
sim_handle (sim_node_t *n, core_event_t ev)
{
    handle (n, ev);
}

/*  Feed n's core one event now and carry out what it says. An event the
 *  core refuses is a fault of the simulation: it stops there. */
static void
handle (sim_node_t *n, core_event_t ev)
{
    char err[TF_ERRLEN];
    double now = simgrid_get_clock ();
    ev.now = now;
    n->sim->events++;
    if (core_handle (n->core, &ev, err, sizeof err) != 0) {
        sim_fail (n->sim, "%s refused %s at %.6f s: %s",
                  n->sim->cfg->nodes[n->index].name, core_event_str (ev.type), now, err);
        return;
    }
    carry_out (n, now);
}

/*  Engines done by now answer COMPUTED (their speeds first taken to
 *  now); the core gets its TICK when its deadline came. */
static void
due (sim_node_t *n, double now)
{
    sim_engines_follow (n, now);
    core_event_t done;
    while (sim_engine_finished (n, now, &done))
        handle (n, done);
    double tick = core_next_deadline (n->core, now);
    if (tick >= 0 && tick <= SIM_EPSILON)
        handle (n, (core_event_t){.type = CORE_EV_TICK});
}

/*  The next time n must act without a message: its engines' (sim/engine.c)
 *  or its core's deadline; < 0 for none. */
static double
next_wake (const sim_node_t *n, double now)
{
    if (n->stopping)
        return -1;
    double wake = sim_engines_wake (n);
    double tick = core_next_deadline (n->core, now);
    if (tick >= 0 && (wake < 0 || now + tick < wake))
        wake = now + tick;
    return wake;
}

/*  --- the actor ------------------------------------------------------------ */

/*  Message m came on channel c: a core's event or a SUBTREE, unless the
 *  run is over here or the child it comes from left (then only the ends
 *  count). */
static void
arrive (sim_node_t *n, int c, sim_msg_t *m)
{
    int left = n->left && n->left[c];
    if (m->kind == SIM_MSG_STOP || m->kind == SIM_MSG_BYE)
        n->closed[c] = 1;
    if (m->kind == SIM_MSG_STOP)
        stop (n);
    else if (m->kind == SIM_MSG_BYE && left)
        n->left_due--;
    else if (m->kind == SIM_MSG_BYE)
        n->byes_due--;
    else if (m->kind == SIM_MSG_ATTACH && c > 0)
        sim_join_attach (n, c, m);
    else if (n->stopping || left)
        return;
    else if (m->kind == SIM_MSG_SUBTREE)
        sim_adapt_subtree (n, c - 1, m);
    else {
        trace_spans_end (n, &m->ev);
        if (m->ev.type == CORE_EV_CHUNK && c == 0)
            sim_adapt_chunk_arrived (n, &m->ev);
        core_event_t ev = m->ev;
        ev.done = m->done;
        ev.avoid = m->avoid;
        handle (n, ev);
    }
}

/*  Wait for the next message or wake-up, and act on it. */
static void
step (sim_node_t *n)
{
    sg_comm_t *comms = n->comms;
    int *chan = n->chan, k = 0;
    for (int c = 0; c < n->nchan; c++) {
        if (!n->in[c] || n->closed[c])
            continue;
        if (!n->rx[c])
            n->rx[c] = sg_mailbox_get_async (n->in[c], (void **) &n->rx_data[c]);
        comms[k] = n->rx[c];
        chan[k++] = c;
    }
    double now = simgrid_get_clock ();
    double wake = next_wake (n, now);
    ssize_t got = -1;
    if (k)
        got = sim_wait_any_for (comms, k, wake < 0 ? -1 : wake > now ? wake - now : 0);
    if (got < 0 && wake < 0) {
        sim_fail (n->sim, "%s has nothing to wait for", n->sim->cfg->nodes[n->index].name);
        return;
    }
    if (got < 0 && k == 0)
        sg_actor_sleep_until (wake);
    if (got >= 0) {
        int c = chan[got];
        sim_msg_t *m = n->rx_data[c];
        sg_comm_unref (n->rx[c]);
        n->rx[c] = NULL;
        arrive (n, c, m);
        free (m);
    }
    if (!n->stopping) {
        due (n, simgrid_get_clock ());
        sim_engines_sample (n, simgrid_get_clock ());
    }
    bye_if_due (n);
}

void
sim_node_main (int argc, char **argv)
{
    (void) argc;
    (void) argv;
    sim_node_t *n = sg_actor_self_get_data ();
    sim_t *s = n->sim;
    /*  Every mailbox a node receives on delivers at once, before any
     *  node sends: messages flow as soon as they are sent, and a link's
     *  arrive in the order they left. */
    for (int c = 0; c < n->nchan; c++)
        if (n->in[c])
            sg_mailbox_set_receiver (sg_mailbox_get_name (n->in[c]));
    if (!n->joined)   /* a node that joins starts alone, the others long started */
        sg_barrier_wait (s->barrier);
    handle (n, (core_event_t){.type = CORE_EV_START});
    sim_adapt_begin (n);
    due (n, simgrid_get_clock ());
    while (!n->done && !s->failed)
        step (n);
    /*  A vacant slot's receive is the one still posted: no node took it. */
    for (int c = 0; c < n->nchan; c++)
        if (n->rx[c]) {
            sim_comm_cancel (n->rx[c]);
            sg_comm_unref (n->rx[c]);
            n->rx[c] = NULL;
        }
}
