/*  engine — the worker thread that computes a node's tasks; see engine.h.
 *
 *  An emulated engine in the caller's loop (in_loop) has no actor: the
 *  front keeps the running task (in_loop_t) and integrates its progress
 *  at each speed change and each engine_recv, as the actor does at each
 *  wake-up; everything below about the pipe is the threaded engine's.
 *
 *  The threaded engine's actor and its pipe are engine_actor.c
 *  (node/engine_int.h).
 */
#include "node/engine_int.h"

#include <assert.h>
#include <math.h>

#include "node/waitset.h"
#include "overlay/util.h"

/*  An emulated engine in the caller's loop: the running task as numbers. */
typedef struct {
    double full;              /* rate * time_scale: units/s at factor 1 */
    double every;             /* progress period, seconds */
    uint64_t task;
    double task_units;        /* the running task's units */
    double progress;          /* of them, done as of `last` */
    double last;              /* when progress was last integrated */
    double started;           /* when the task started */
    double ended;             /* its exact end, once progress reached its
                                 units; -1 before */
    double changed;           /* when the factor in force was set */
    double reported;          /* when progress was last reported */
    double done;              /* units of the tasks finished so far */
} in_loop_t;

struct engine {
    zactor_t *actor;          /* NULL for an engine in the loop */
    platform_mode_t mode;
    double factor;            /* the speed factor last sent */
    int held;                 /* engine_hold: computing nothing */
    int busy;                 /* a START went out; its DONE not yet read */
    double units;             /* cumulative units, as last reported */
    double lag, lag_max;      /* seconds behind at task ends: total, worst */
    in_loop_t loop;           /* in the loop: the running task */
};

/*  In the loop: units per second in force (none while held). */
static double
loop_speed (const engine_t *self)
{
    return self->held ? 0 : self->loop.full * self->factor;
}

/*  --------------------------------------------------------------------
 *  Front */

static int
engine_check_cfg (const engine_cfg_t *cfg, char *err, size_t errlen)
{
    if (cfg->progress_s != 0 && !(cfg->progress_s >= ENGINE_PROGRESS_EVERY
                                  && cfg->progress_s <= ENGINE_PROGRESS_MAX))
        return tf_error (err, errlen, "engine: progress period must be 0 or in [%g, %g] s, "
                         "got %g", ENGINE_PROGRESS_EVERY, ENGINE_PROGRESS_MAX, cfg->progress_s);
    switch (cfg->mode) {
    case PLATFORM_EMULATED:
        if (!(cfg->rate > 0) || !isfinite (cfg->rate))
            return tf_error (err, errlen,
                             "engine: emulated compute rate must be a positive "
                             "number of units/s, got %g", cfg->rate);
        if (!(cfg->time_scale > 0) || !isfinite (cfg->time_scale))
            return tf_error (err, errlen,
                             "engine: time_scale must be a positive number, "
                             "got %g", cfg->time_scale);
        if (!(cfg->rate * cfg->time_scale > 0) ||
            !isfinite (cfg->rate * cfg->time_scale))
            return tf_error (err, errlen,
                             "engine: emulated rate x time_scale (%g x %g) "
                             "is out of range", cfg->rate, cfg->time_scale);
        return 0;
    case PLATFORM_REAL:
        if (cfg->matrix_n < ENGINE_MIN_N || cfg->matrix_n > ENGINE_MAX_N)
            return tf_error (err, errlen,
                             "engine: matrix_n must be in [%d, %d], got %u",
                             ENGINE_MIN_N, ENGINE_MAX_N, cfg->matrix_n);
        return 0;
    }
    return tf_error (err, errlen, "engine: unknown platform mode %d",
                     (int) cfg->mode);
}

engine_t *
engine_new (const engine_cfg_t *cfg, char *err, size_t errlen)
{
    assert (cfg);
    if (engine_check_cfg (cfg, err, errlen))
        return NULL;

    engine_t *self = xcalloc (1, sizeof (*self));
    self->mode = cfg->mode;
    self->factor = 1;
    if (cfg->mode == PLATFORM_EMULATED && cfg->in_loop) {
        self->loop.full = cfg->rate * cfg->time_scale;
        self->loop.every = cfg->progress_s > 0 ? cfg->progress_s : ENGINE_PROGRESS_EVERY;
        return self;
    }
    /* The actor copies *cfg before it signals, and zactor_new waits for
     * that signal, so the caller's cfg need not outlive this call. */
    self->actor = zactor_new (engine_actor, (void *) cfg);
    if (!self->actor) {
        free (self);
        tf_error (err, errlen, "engine: cannot start the engine thread");
        return NULL;
    }
    return self;
}

void
engine_destroy (engine_t **self_p)
{
    assert (self_p);
    engine_t *self = *self_p;
    if (!self)
        return;
    waitset_actor_destroy (&self->actor);
    free (self);
    *self_p = NULL;
}

/*  In the loop: credit the running task's progress up to now at the
 *  speed in force since it was last credited, noting the exact moment it
 *  reaches the task's units (progress stops there). */
static void
loop_integrate (engine_t *self, double now)
{
    in_loop_t *l = &self->loop;
    if (!self->busy || l->ended >= 0 || !(now > l->last))
        return;
    double speed = loop_speed (self);
    double add = (now - l->last) * speed;
    if (l->progress + add >= l->task_units) {
        l->ended = l->last + (speed > 0 ? (l->task_units - l->progress) / speed : 0);
        l->progress = l->task_units;
    } else
        l->progress += add;
    l->last = now;
}

/*  In the loop: take the running task's progress back to `at` (at or
 *  after the last speed change, so the speed in force held since):
 *  its part after `at` is to be credited at another speed. */
static void
loop_rewind (engine_t *self, double at)
{
    in_loop_t *l = &self->loop;
    if (!self->busy)
        return;
    at = fmax (at, l->started);
    double speed = loop_speed (self);
    if (l->ended >= 0 && at < l->ended) {
        l->progress = l->task_units - (l->ended - at) * speed;
        l->ended = -1;
        l->last = at;
    } else if (l->ended < 0 && at < l->last) {
        l->progress = fmax (0, l->progress - (l->last - at) * speed);
        l->last = at;
    }
}

/*  In the loop: the running task's end, or a progress report. */
static int
loop_recv (engine_t *self, uint64_t *task, double *seconds)
{
    in_loop_t *l = &self->loop;
    if (!self->busy)
        return -1;
    double now = tf_now ();
    loop_integrate (self, now);
    if (l->ended < 0) {
        self->units = l->done + l->progress;
        l->reported = now;
        return 1;
    }
    double late = fmax (0, now - l->ended);
    l->done += l->task_units;
    self->units = l->done;
    self->busy = 0;
    self->lag += late;
    self->lag_max = fmax (self->lag_max, late);
    if (task)
        *task = l->task;
    if (seconds)
        *seconds = now - l->started;
    return 0;
}

double
engine_deadline (const engine_t *self, double now)
{
    assert (self);
    const in_loop_t *l = &self->loop;
    if (self->actor || !self->busy)
        return -1;
    if (l->ended >= 0)
        return 0;
    double speed = loop_speed (self);
    double left = engine_task_left (self, now);
    double due = l->reported + l->every - now;
    if (speed > 0 && left / speed < due)
        due = left / speed;
    return due > 0 ? due : 0;
}

int
engine_start (engine_t *self, uint64_t task, double units)
{
    assert (self);
    if (self->busy)
        return -1;
    assert (units >= 0 && units <= 1e15);
    if (!self->actor) {
        double now = tf_now ();
        self->loop.task = task;
        self->loop.task_units = units;
        self->loop.progress = 0;
        self->loop.last = self->loop.started = self->loop.reported = now;
        self->loop.ended = -1;
        self->busy = 1;
        return 0;
    }

    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, "START");
    frame_put_u64 (msg, task);
    frame_put_f64 (msg, units);
    if (zmsg_send (&msg, self->actor)) {
        zmsg_destroy (&msg);
        return -1;
    }
    self->busy = 1;
    return 0;
}

int
engine_set_speed_at (engine_t *self, double factor, double at)
{
    assert (self);
    if (self->actor)
        return engine_set_speed (self, factor);
    if (isnan (factor) || isnan (at))
        return -1;
    factor = factor < 0 ? 0 : factor > 1 ? 1 : factor;
    if (self->mode != PLATFORM_EMULATED || factor == self->factor)
        return 0;
    in_loop_t *l = &self->loop;
    double now = tf_now ();
    at = fmax (fmin (at, now), l->changed);
    loop_integrate (self, now);
    loop_rewind (self, at);
    self->factor = factor;
    l->changed = at;
    loop_integrate (self, now);
    return 0;
}

int
engine_task_span (const engine_t *self, double *start, double *end)
{
    assert (self);
    const in_loop_t *l = &self->loop;
    if (self->actor || !self->busy)
        return 0;
    double speed = loop_speed (self);
    *start = l->started;
    if (l->ended >= 0)
        *end = l->ended;
    else
        *end = speed > 0 ? l->last + (l->task_units - l->progress) / speed : INFINITY;
    return 1;
}

double
engine_speed_set_at (const engine_t *self)
{
    assert (self);
    return self->actor ? 0 : self->loop.changed;
}

double
engine_task_left (const engine_t *self, double now)
{
    assert (self);
    const in_loop_t *l = &self->loop;
    if (self->actor || !self->busy)
        return -1;
    if (l->ended >= 0)
        return 0;
    double done = l->progress + (now - l->last) * loop_speed (self);
    return fmax (0, l->task_units - done);
}

int
engine_set_speed (engine_t *self, double factor)
{
    assert (self);
    if (!self->actor)
        return engine_set_speed_at (self, factor, tf_now ());
    if (isnan (factor))
        return -1;
    factor = factor < 0 ? 0 : factor > 1 ? 1 : factor;
    if (self->mode != PLATFORM_EMULATED || factor == self->factor)
        return 0;

    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, "SPEED");
    frame_put_f64 (msg, factor);
    if (zmsg_send (&msg, self->actor)) {
        zmsg_destroy (&msg);
        return -1;
    }
    self->factor = factor;
    return 0;
}

/*  In the loop the hold is one more factor of the speed, so the running
 *  task's progress is credited up to now first, as at a speed change,
 *  and no later change may be dated before it. The actor is told, since
 *  it holds the task. */
int
engine_hold (engine_t *self, int on)
{
    assert (self);
    on = on != 0;
    if (on == self->held)
        return 0;
    if (!self->actor) {
        double now = tf_now ();
        loop_integrate (self, now);
        self->held = on;
        self->loop.changed = now;
        return 0;
    }
    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, "HOLD");
    frame_put_u64 (msg, (uint64_t) on);
    if (zmsg_send (&msg, self->actor)) {
        zmsg_destroy (&msg);
        return -1;
    }
    self->held = on;
    return 0;
}

int
engine_held (const engine_t *self)
{
    assert (self);
    return self->held;
}

zsock_t *
engine_sock (engine_t *self)
{
    assert (self);
    return self->actor ? zactor_sock (self->actor) : NULL;
}

int
engine_recv (engine_t *self, uint64_t *task, double *seconds)
{
    assert (self);
    if (!self->actor)
        return loop_recv (self, task, seconds);
    zmsg_t *msg = zmsg_recv (self->actor);
    if (!msg)
        return -1;

    int rc = -1;
    uint64_t id, checksum;
    double wall, units, late, ended;
    char *command = zmsg_popstr (msg);
    if (command && streq (command, "PROGRESS") && !frame_pop_8 (msg, &units) &&
        zmsg_size (msg) == 0 && units >= 0 && isfinite (units)) {
        self->units = units;
        rc = 1;
    } else if (command && streq (command, "DONE") && !frame_pop_8 (msg, &id) &&
               !frame_pop_8 (msg, &wall) && !frame_pop_8 (msg, &checksum) &&
               !frame_pop_8 (msg, &units) && !frame_pop_8 (msg, &late) &&
               !frame_pop_8 (msg, &ended) && zmsg_size (msg) == 0 && units >= 0 &&
               isfinite (units) && late >= 0 && isfinite (ended)) {
        if (task)
            *task = id;
        if (seconds)
            *seconds = wall;
        self->units = units;
        self->busy = 0;
        double lag = late + fmax (0, tf_now () - ended);
        self->lag += lag;
        self->lag_max = fmax (self->lag_max, lag);
        rc = 0;
    }
    free (command);
    zmsg_destroy (&msg);
    return rc;
}

double
engine_lag (const engine_t *self, double *max)
{
    assert (self);
    if (max)
        *max = self->lag_max;
    return self->lag;
}

double
engine_units (const engine_t *self)
{
    assert (self);
    return self->units;
}

int
engine_busy (const engine_t *self)
{
    assert (self);
    return self->busy;
}
