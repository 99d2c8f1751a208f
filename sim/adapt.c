/*  adapt — an adapting run simulated (docs/simulate.md, docs/adapt.md):
 *  every node's adaptation is node/adaptor.h's, the very code the
 *  runtime runs, with this actor as its driver. See sim_int.h.
 *
 *  The adaptor is fed what the runtime feeds it, taken where the
 *  simulation has it: a sample at the node's own events once a sample
 *  interval has passed (its engines' units and busy time, the bytes its
 *  core received and sent), the online fit solved at most every
 *  SIM_FIT_EVERY simulated second (the runtime's pace) over the node's
 *  samples, a child's SUBTREE when its message arrives. What it asks
 *  for goes where it goes in the runtime: a TAKE_BACK to the node's own
 *  core (its RECLAIM then travels to the child as any action does),
 *  SUBTREE up the child's link, and a shrunk child that drained leaves
 *  the run as the controller lets it go (STOP to it and its subtree;
 *  results' nodes[].left_s). Changes and actions are said on stderr as
 *  the controller says them, when they happen.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/adaptor.h"
#include "node/observe.h"
#include "node/setup.h"
#include "node/subtree.h"
#include "sim/s4u.h"
#include "sim/sim_int.h"

/*  Simulated seconds between solving a node's fit again (the runtime's
 *  NODE_FIT_EVERY, wall seconds of the emulated run). */
#define SIM_FIT_EVERY 1.0

/*  A link carrying less than (1 - this) of its bandwidth is not what
 *  limits its flow (SimGrid's shares are exact but for rounding). */
#define SIM_LINK_SLACK 1e-3

/*  --- the adaptor's hooks ------------------------------------------------- */

static int
hook_feed (void *arg, core_event_t *ev)
{
    sim_node_t *n = arg;
    sim_handle (n, *ev);
    return n->sim->failed ? -1 : 0;
}

static int
hook_subtree (void *arg, const double *bounds, double compute, double ir_recv)
{
    sim_post_subtree (arg, bounds, compute, ir_recv);
    return 0;
}

void
sim_say (const sim_t *s, const char *fmt, ...)
{
    if (s->progress == 1)
        fputs ("\r\033[K", stderr);
    fflush (stdout);
    va_list ap;
    va_start (ap, fmt);
    tf_log_line ("treefarm simulate: ", fmt, ap);
    va_end (ap);
}

static void
hook_drained (void *arg, int slot)
{
    sim_node_t *n = arg;
    const config_t *cfg = n->sim->cfg;
    int kid = cfg->nodes[n->index].children[slot];
    sim_say (n->sim, "%s drained by %s: it leaves the run", cfg->nodes[kid].name,
             cfg->nodes[n->index].name);
    results_set_left (n->sim->results, kid, simgrid_get_clock ());
    sim_child_leaves (n, slot);
}

/*  The adaptor's own lines: a failure to say (the verbose ones, which
 *  only `treefarm-node --verbose` prints, are not). */
static void
hook_say (void *arg, int verbose, const char *text)
{
    sim_node_t *n = arg;
    if (!verbose)
        sim_say (n->sim, "%s: %s", n->sim->cfg->nodes[n->index].name, text);
}

/*  --- saying what changed ----------------------------------------------------- */

/*  The changes and actions n's adaptor brought since the last call, as
 *  the controller announces them (controller/session_peers.c). */
static void
announce (sim_node_t *n)
{
    int nc, na;
    adaptor_counts (n->ad, &nc, &na);
    if (nc == n->said_changes && na == n->said_actions)
        return;
    proto_changes_t changes;
    proto_actions_t actions;
    adaptor_fill_changes (n->ad, &changes);
    adaptor_fill_actions (n->ad, &actions);
    const char *by = n->sim->cfg->nodes[n->index].name;
    for (int i = n->said_changes; i < changes.n; i++) {
        const proto_change_t *c = &changes.items[i];
        char text[128];
        proto_change_text (c, text, sizeof text);
        int other = strcmp (c->node, by) != 0;
        sim_say (n->sim, "%s: %s at %.1f s%s%s%s", c->node, text, c->at_s,
                 other ? " (measured by " : "", other ? by : "", other ? ")" : "");
    }
    for (int i = n->said_actions; i < actions.n; i++) {
        char text[256];
        proto_action_text (&actions.items[i], text, sizeof text);
        sim_say (n->sim, "%s: %s at %.1f s", actions.items[i].node, text,
                 actions.items[i].at_s);
    }
    n->said_changes = changes.n;
    n->said_actions = actions.n;
    free (changes.items);
    free (actions.items);
}

/*  --- a link's own rate ---------------------------------------------------------- */

/*  Whether a chunk n sends to child slot now shares the send limit with
 *  so much else that the child's link cannot run at its own rate: what
 *  flows on the link already runs below its bandwidth, or what the
 *  limit leaves beside the other transfers flowing through it is (as a
 *  paced core's chunk would wait on the total's pacer longer than on the
 *  link's, node/xfer_pace.c). */
static int
held_by_limit (const sim_node_t *n, int slot)
{
    if (!n->limit)
        return 0;
    sg_link_t link = n->kid_down[slot];
    double bw = sg_link_get_bandwidth (link), own = sim_link_usage (link);
    if (own > 0 && own < bw * (1 - SIM_LINK_SLACK))
        return 1;
    double others = sim_link_usage (n->limit) - own;
    double room = sg_link_get_bandwidth (n->limit) - (others > 0 ? others : 0);
    return room < bw * (1 - SIM_LINK_SLACK);
}

void
sim_adapt_chunk_sent (sim_node_t *n, int slot, const core_event_t *ev)
{
    sim_linkmeter_t *m = &n->meter[slot];
    if (ev->index == 0) {
        /*  A transfer that starts while the last one is still arriving
         *  shares the link with it: neither is the link's alone. */
        int overlap = m->on;
        *m = (sim_linkmeter_t){.task = ev->task, .on = 1, .held = overlap,
                               .start = simgrid_get_clock ()};
    }
    if (!m->on || m->task != ev->task)
        return;
    m->bytes += (double) ev->len;
    m->held |= held_by_limit (n, slot);
}

void
sim_adapt_chunk_arrived (sim_node_t *kid, const core_event_t *ev)
{
    const config_t *cfg = kid->sim->cfg;
    sim_node_t *n = &kid->sim->nodes[cfg->nodes[kid->index].parent];
    if (!n->meter)
        return;
    sim_linkmeter_t *m = &n->meter[kid->slot];
    if (!m->on || m->task != ev->task)
        return;
    /*  A flow that joined the limit since the chunks left shows now. */
    if (ev->index + 1 != ev->count) {
        m->held |= held_by_limit (n, kid->slot);
        return;
    }
    m->on = 0;
    if (m->held)
        return;
    /*  A paced core's transfer is its bytes at the link's rate, without
     *  the latency the simulated link adds to its last chunk. */
    double ts = cfg->platform.time_scale;
    double took = simgrid_get_clock () - m->start - sg_link_get_latency (n->kid_down[kid->slot]);
    if (!(took > 0))
        return;
    n->link_mb[kid->slot] += m->bytes * ts / setup_bps_per_mbps (cfg);
    n->link_s[kid->slot] += took * ts;
}

/*  --- the driver's side -------------------------------------------------------- */

void
sim_adapt_new (sim_node_t *n)
{
    const config_t *cfg = n->sim->view;   /* the core's, vacant slots too */
    if (!cfg->platform.adapt)
        return;
    n->subtree = subtree_new (cfg, n->at);
    n->left = xcalloc (n->nchan, sizeof *n->left);
    n->meter = xcalloc (n->nchan, sizeof *n->meter);
    n->link_mb = xcalloc (n->nchan, sizeof *n->link_mb);
    n->link_s = xcalloc (n->nchan, sizeof *n->link_s);
    adaptor_hooks_t hooks = {hook_feed, hook_subtree, hook_drained, NULL, hook_say, n};
    n->ad = adaptor_new (cfg, n->at, n->core, n->subtree, &hooks, 0);
    n->fit_at = -INFINITY;
}

void
sim_adapt_begin (sim_node_t *n)
{
    if (n->ad)
        adaptor_step (n->ad, 0, 0);   /* a leaf knows its bound at once */
}

/*  The fit over n's samples, solved again when a sample joined it and
 *  SIM_FIT_EVERY has passed. */
static void
fit (sim_node_t *n, double now)
{
    long count = observe_count (n->observe);
    if (count == n->fit_n || now - n->fit_at < SIM_FIT_EVERY)
        return;
    n->fit_at = now;
    n->fit_n = count;
    const observe_estimates_t *est = observe_estimates (n->observe);
    adaptor_fit (n->ad, now * n->sim->cfg->platform.time_scale, est);
}

void
sim_adapt_sample (sim_node_t *n, double now, double units)
{
    if (!n->ad)
        return;
    double ts = n->sim->cfg->platform.time_scale;
    double busy = n->busy_s + (n->running ? now - n->busy_since : 0);
    adaptor_sample (n->ad, now * ts, units, busy * ts, n->observed, n->link_mb, n->link_s);
    fit (n, now);
    adaptor_poll_drained (n->ad);
    announce (n);
}

void
sim_adapt_subtree (sim_node_t *n, int slot, const sim_msg_t *m)
{
    if (!n->ad)
        return;
    char err[TF_ERRLEN];
    double t = simgrid_get_clock () * n->sim->cfg->platform.time_scale;
    if (adaptor_child_subtree (n->ad, t, slot, m->bounds, m->compute, m->ir_recv, err,
                               sizeof err) == 1)
        sim_fail (n->sim, "%s refused SUBTREE from %s: %s", n->sim->cfg->nodes[n->index].name,
                  n->sim->cfg->nodes[n->sim->cfg->nodes[n->index].children[slot]].name, err);
    announce (n);
}

void
sim_adapt_report (const sim_node_t *n, proto_stats_t *st)
{
    if (!n->ad)
        return;
    adaptor_fill_changes (n->ad, &st->changes);
    adaptor_fill_actions (n->ad, &st->actions);
    /*  The root's: the first bound the tree computed and the bound now. */
    const double *first = subtree_first_bounds (n->subtree);
    const double *now = subtree_bounds (n->subtree);
    if (first && n->index == n->sim->cfg->root) {
        st->has_bound = 1;
        st->has_live_bound = 1;
        for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
            st->bound[m] = first[m];
            st->live_bound[m] = now[m];
        }
    }
}

void
sim_adapt_free (sim_node_t *n)
{
    adaptor_destroy (&n->ad);
    subtree_destroy (&n->subtree);
    free (n->left);
    free (n->meter);
    free (n->link_mb);
    free (n->link_s);
    n->left = NULL;
    n->meter = NULL;
    n->link_mb = n->link_s = NULL;
}
