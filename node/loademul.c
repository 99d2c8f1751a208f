/*  loademul — emulated background load: the node's model of it
 *  (node/bgload.h) run alongside the engine in the loop. See
 *  node/runtime.h.
 *
 *  The model and the engine depend on each other: the background's
 *  events set the engine's speed, and the engine's task (the foreground)
 *  is one more sharer of the CPU while it computes. The loop notices
 *  both late, so the model is run forward in platform time from where it
 *  stands, event by event, following the engine's task: it computes from
 *  the task's start to its exact end (engine_task_span, the end as the
 *  speed in force says, exact once reached), and each background event
 *  sets the engine's speed dated back to its own moment
 *  (engine_set_speed_at). The speed is the model's factor; the
 *  transfers' interference is charged apart, dated back (node/clock.c).
 *
 *  The loop need not wake for the background's events at all: while a
 *  task runs, a copy of the model runs ahead to the task's end
 *  (bgload_finish), and the engine is set to end it then
 *  (loademul_deadline); each follow puts back the true speeds, dated.
 */
#include <math.h>

#include "node/bgload.h"
#include "node/runtime.h"
#include "overlay/util.h"

/*  Platform time of wall time w, and back. */
static double
platform_at (const node_t *self, double w)
{
    return (w - self->load.t0) * self->cfg->platform.time_scale;
}

static double
wall_at (const node_t *self, double t)
{
    return self->load.t0 + t / self->cfg->platform.time_scale;
}

/*  The same for loademul_follow's clock. */
static double
plat (const loademul_clock_t *c, double w)
{
    return (w - c->t0) * c->time_scale;
}

static double
wall (const loademul_clock_t *c, double t)
{
    return c->t0 + t / c->time_scale;
}

int
loademul_start (node_t *self, double now, char *err, size_t errlen)
{
    (void) now;
    const config_node_t *me = self->me;
    double link = me->parent >= 0 ? me->link_mbps : 0;
    char why[TF_ERRLEN];
    self->load.emul = bgload_new (self->load.load, me->name, me->ir_recv, link,
                                  why, sizeof why);
    if (!self->load.emul)
        return tf_error (err, errlen, "node \"%s\": load: %s", me->name, why);
    self->load.ahead.end = -1;
    engine_set_speed (self->parts.engine, bgload_factor (self->load.emul));
    return 0;
}

/*  The model's next step from where it stands (platform time tb) toward
 *  platform time `to`: the foreground's state over it in *fg, the end of
 *  the step returned (the task's start or end, an event, or `to`). */
static double
next_step (bgload_t *b, engine_t *engine, const loademul_clock_t *c, double tb,
           double to, int *fg)
{
    double start, end;
    int task = engine_task_span (engine, &start, &end);
    double ps = task ? plat (c, start) : INFINITY;
    double pe = task ? plat (c, end) : INFINITY;
    *fg = ps <= tb && pe > tb;
    double edge = ps > tb ? ps : pe > tb ? pe : INFINITY;
    return fmin (fmin (edge, bgload_next (b, *fg)), to);
}

/*  The engine runs at the model's factor from the model's time on (a
 *  change of no speed costs nothing), then the model steps. */
void
loademul_follow (bgload_t *b, engine_t *engine, const loademul_clock_t *c, double now)
{
    double to = plat (c, now);
    for (;;) {
        engine_set_speed_at (engine, c->interference * bgload_factor (b),
                             wall (c, bgload_now (b)));
        if (!(bgload_now (b) < to))
            break;
        int fg;
        double t = next_step (b, engine, c, bgload_now (b), to, &fg);
        bgload_advance (b, t, fg);
    }
}

/*  Run the node's model to wall time now. */
static void
follow (node_t *self, double now)
{
    /*  The transfers' interference is charged apart, dated back
     *  (node/clock.c): between its updates the engine runs at the
     *  background's factor alone. */
    loademul_clock_t c = {self->load.t0, self->cfg->platform.time_scale, 1};
    loademul_follow (self->load.emul, self->parts.engine, &c, now);
}

double
loademul_factor (node_t *self, double now)
{
    if (!self->load.emul)
        return 1;
    follow (self, now);
    return bgload_factor (self->load.emul);
}

/*  The running task's end, wall time, with `left` units still to do: the
 *  model run ahead of now with the task computing (bgload_finish: the
 *  draws the model will make). Kept while the task is the same: the
 *  model's future does not change. */
static double
task_end (node_t *self, double start, double left)
{
    if (self->load.ahead.end >= 0 && self->load.ahead.start == start)
        return self->load.ahead.end;
    double rate = self->me->compute_rate;   /* per platform s of a CPU */
    double t = rate > 0 ? bgload_finish (self->load.emul, left / rate) : INFINITY;
    self->load.ahead.start = start;
    self->load.ahead.end = isfinite (t) ? wall_at (self, t) : INFINITY;
    return self->load.ahead.end;
}

/*  The engine is told to end its task when the model says, at the mean
 *  speed that takes it there: the loop then sleeps until the task's end
 *  without waking for the background's events before it. The next
 *  follow puts back the speeds they set, each from its own moment
 *  (engine_set_speed_at), so the task's progress stays their exact
 *  integral. */
double
loademul_deadline (node_t *self, double now)
{
    double start, end;
    if (!self->load.emul || !engine_task_span (self->parts.engine, &start, &end)
        || end <= now)
        return -1;
    follow (self, now);   /* the model at now: where running ahead starts */
    double left = engine_task_left (self->parts.engine, now);
    double t = task_end (self, start, left);
    double full = self->me->compute_rate * self->cfg->platform.time_scale;
    if (!isfinite (t) || left <= 0 || t <= now) {   /* the engine's own says */
        self->load.ahead.end = -1;
        return -1;
    }
    engine_set_speed_at (self->parts.engine, left / (full * (t - now)), now);
    return t - now;
}

double
loademul_busy_integral (node_t *self, double now)
{
    if (!self->load.emul)
        return 0;
    follow (self, now);
    return bgload_busy_integral (self->load.emul) / self->cfg->platform.time_scale;
}

void
loademul_stop (node_t *self)
{
    if (self->load.emul && bgload_refused (self->load.emul))
        node_log (self, "background load: %llu job arrivals refused at %d active",
                  (unsigned long long) bgload_refused (self->load.emul),
                  BGLOAD_MAX_JOBS);
    bgload_destroy (&self->load.emul);
}


/*  --------------------------------------------------------------------
 *  The children's links */

/*  Does load have a contender that communicates? */
static int
communicates (const load_t *load)
{
    for (int k = 0; load && k < load->ncontenders; k++)
        if (load->contenders[k].comm > 0)
            return 1;
    return 0;
}

int
loademul_links_start (node_t *self, char *err, size_t errlen)
{
    const config_node_t *me = self->me;
    for (int i = 0; i < me->nchildren; i++) {
        const config_node_t *child = &self->cfg->nodes[me->children[i]];
        if (!communicates (child->load))
            continue;
        if (!self->load.links)
            self->load.links = xcalloc ((size_t) me->nchildren, sizeof *self->load.links);
        char why[TF_ERRLEN];
        self->load.links[i] = bgload_new_contenders (child->load, child->name,
                                                     why, sizeof why);
        if (!self->load.links[i])
            return tf_error (err, errlen, "node \"%s\": load: %s", child->name, why);
        core_set_link_share (self->parts.core, i, 1.0 / (1 + bgload_comm (self->load.links[i])));
    }
    return 0;
}

void
loademul_links_follow (node_t *self, double now)
{
    double t = platform_at (self, now);
    for (int i = 0; self->load.links && i < self->me->nchildren; i++) {
        bgload_t *b = self->load.links[i];
        if (!b || t <= bgload_now (b))
            continue;
        bgload_advance (b, t, 0);
        core_set_link_share (self->parts.core, i, 1.0 / (1 + bgload_comm (b)));
    }
}

double
loademul_links_deadline (node_t *self, double now)
{
    if (!self->load.links || core_sending (self->parts.core) == 0)
        return -1;
    double t = INFINITY;
    for (int i = 0; i < self->me->nchildren; i++)
        if (self->load.links[i])
            t = fmin (t, bgload_next (self->load.links[i], 0));
    if (!isfinite (t))
        return -1;
    double due = wall_at (self, t) - now;
    return due > 0 ? due : 0;
}

void
loademul_links_stop (node_t *self)
{
    for (int i = 0; self->load.links && i < self->me->nchildren; i++)
        bgload_destroy (&self->load.links[i]);
    free (self->load.links);
    self->load.links = NULL;
}
