/*  engine — a simulated node's engines: the tasks it computes, at the
 *  host's speed slowed by interference and by its background load. See
 *  sim.h and docs/simulate.md.
 *
 *  An engine's work is in seconds at full speed; it runs at a speed in
 *  (0, 1] that changes only at this node's own events: a speed sample
 *  (every SIM_SAMPLE_S while an interfered engine computes: what the
 *  node's links carry, node/emulate.h) or an event of its background
 *  load's model (node/bgload.h: an arrival, a job's end, a contender's
 *  switch, a step). At each, the work done at the old speed is taken and
 *  the end is set again at the new one, so the progress is the speeds'
 *  exact integral.
 */
#include <math.h>

#include "node/bgload.h"
#include "node/observe.h"
#include "sim/commands.h"
#include "sim/s4u.h"
#include "sim/sim_int.h"

/*  The slowest an engine runs: it never stops outright. */
#define SIM_MIN_SPEED 0.01

static int
any_busy (const sim_node_t *n)
{
    return n->running > 0;
}

/*  The background's model to now, with the foreground as it was since the
 *  last call: its factor, and the link from the parent as its
 *  communicating contenders leave it (1 / (j + 1)). */
static void
follow_load (sim_node_t *n, double now)
{
    if (!n->bg)
        return;
    double ts = n->sim->cfg->platform.time_scale, t = now * ts;
    int fg = any_busy (n);
    /*  An event the actor woke for is due now, though its time came back
     *  through the simulated clock a rounding off. */
    for (double next; (next = bgload_next (n->bg, fg)) <= t + SIM_EPSILON * ts;)
        bgload_advance (n->bg, next, fg);
    if (bgload_now (n->bg) < t)
        bgload_advance (n->bg, t, fg);
    n->load_factor = bgload_factor (n->bg);
    int j = bgload_comm (n->bg);
    if (n->down && j != n->comm_j) {
        sg_link_set_bandwidth (n->down, n->down_bps / (j + 1));
        n->comm_j = j;
    }
}

/*  The interference factor from what the node's links carry now: its
 *  link from its parent down, each child's down. */
static void
sample (sim_node_t *n, double now)
{
    int k = n->nchan - 1, busy = 0;
    for (int i = 0; i < k; i++)
        n->send[i] = sim_link_usage (n->kid_down[i]);
    for (int e = 0; e < n->neng; e++)
        busy |= n->eng[e].busy && n->eng[e].interfered;
    double recv = n->down ? sim_link_usage (n->down) : 0;
    n->emul_speed = emul_update (n->emul, now, busy, recv, n->send);
    n->sample_at = busy ? now + SIM_SAMPLE_S : -1;
}

/*  Every busy engine's work done so far at its speed taken, and its end
 *  set again at the speed in force now. */
static void
reschedule (sim_node_t *n, double now)
{
    for (int e = 0; e < n->neng; e++) {
        sim_engine_t *g = &n->eng[e];
        if (!g->busy)
            continue;
        g->work -= (now - g->last) * g->speed;
        g->work = g->work > 0 ? g->work : 0;
        g->last = now;
        double speed = (g->interfered ? n->emul_speed : 1) * n->load_factor;
        g->speed = speed > SIM_MIN_SPEED ? speed : SIM_MIN_SPEED;
        g->end = now + g->work / g->speed;
    }
}

void
sim_engines_follow (sim_node_t *n, double now)
{
    follow_load (n, now);
    if (n->emul && n->sample_at >= 0 && n->sample_at <= now + SIM_EPSILON)
        sample (n, now);
    reschedule (n, now);
}

double
sim_engines_wake (const sim_node_t *n)
{
    double wake = n->sample_at;
    for (int e = 0; e < n->neng; e++)
        if (n->eng[e].busy && (wake < 0 || n->eng[e].end < wake))
            wake = n->eng[e].end;
    if (n->bg) {
        double t = bgload_next (n->bg, any_busy (n)) / n->sim->cfg->platform.time_scale;
        if (isfinite (t) && (wake < 0 || t < wake))
            wake = t;
    }
    return wake;
}

int
sim_engine_start (sim_node_t *n, const core_action_t *a, core_event_t done, double now)
{
    sim_engine_t *g = NULL;
    for (int e = 0; e < n->neng && !g; e++)
        if (!n->eng[e].busy)
            g = &n->eng[e];
    if (!g)
        return -1;
    follow_load (n, now);   /* the background to now, the engine idle */
    reschedule (n, now);
    int command = a->kind == CORE_KIND_COMMAND;   /* its time, and its outputs back */
    double work = command ? sim_commands_seconds (n->sim->commands, a->task, n->index)
                                / n->sim->cfg->platform.time_scale
                          : a->units / n->speed;
    if (command)
        done.bytes = sim_commands_bytes_out (n->sim->commands, a->task);
    *g = (sim_engine_t){.busy = 1, .interfered = n->emul && a->kind == CORE_KIND_SYNTHETIC,
                        .work = work, .work0 = work, .units = a->units, .speed = 1,
                        .last = now, .end = now + work, .done = done};
    if (n->running++ == 0)
        n->busy_since = now;
    if (n->trace)
        trace_begin (n->trace, TRACE_COMPUTE, (uint32_t) (g - n->eng), a->task, now);
    if (g->interfered)
        sample (n, now);
    reschedule (n, now);
    return 0;
}

int
sim_engine_finished (sim_node_t *n, double now, core_event_t *done)
{
    for (int e = 0; e < n->neng; e++) {
        sim_engine_t *g = &n->eng[e];
        if (!g->busy || g->end > now + SIM_EPSILON)
            continue;
        follow_load (n, now);   /* the background to now, the engine busy */
        g->busy = 0;
        n->units_done += g->units;
        if (--n->running == 0) {
            n->busy_s += now - n->busy_since;
            observe_idle (n->observe);
        }
        *done = g->done;
        done->type = CORE_EV_COMPUTED;
        if (n->trace)
            trace_end (n->trace, TRACE_COMPUTE, (uint32_t) e, done->task, now);
        if (n->emul)
            sample (n, now);
        reschedule (n, now);
        return 1;
    }
    return 0;
}

/*  Units done by now: those of the tasks finished and the running ones'
 *  progress. */
static double
units_by (const sim_node_t *n, double now)
{
    double units = n->units_done;
    for (int e = 0; e < n->neng; e++) {   /* the running tasks' progress */
        const sim_engine_t *g = &n->eng[e];
        double left = g->work - (now - g->last) * g->speed;
        if (g->busy && g->work0 > 0)
            units += g->units * (1 - (left > 0 ? left : 0) / g->work0);
    }
    return units;
}

/*  Record a sample of n's counters now. */
static void
record (sim_node_t *n, double now, double units)
{
    core_stats_t c = core_stats (n->core);
    n->observed[0] = (double) c.bytes_in;
    for (int i = 0; i < n->nchan - 1; i++)
        n->observed[1 + i] = (double) core_child_stats (n->core, i).bytes_sent;
    observe_sample (n->observe, now, units, any_busy (n), n->observed);
}

void
sim_engines_sample (sim_node_t *n, double now)
{
    if (!observe_due (n->observe, now))
        return;
    double units = units_by (n, now);
    record (n, now, units);
    sim_adapt_sample (n, now, units);
}

void
sim_engines_sample_last (sim_node_t *n, double now)
{
    record (n, now, units_by (n, now));
}
