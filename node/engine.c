/*  engine — the worker thread that computes a node's tasks; see engine.h.
 *
 *  An emulated engine in the caller's loop (in_loop) has no actor: the
 *  front keeps the running task (in_loop_t) and integrates its progress
 *  at each speed change and each engine_recv, as the actor does at each
 *  wake-up; everything below about the pipe is the threaded engine's.
 *
 *  Pipe protocol between engine_t (front) and its actor (back), one
 *  message per command, every frame length-checked on receipt:
 *
 *      front -> actor   "START"    task:u64 units:f64
 *      actor -> front   "PROGRESS" units:f64
 *      actor -> front   "DONE"     task:u64 seconds:f64 checksum:i64 units:f64
 *                                  late:f64 ended:f64
 *      front -> actor   "SPEED" factor:f64   (emulated only; in [0, 1])
 *      front -> actor   "$TERM"              (zactor_destroy sends it)
 *
 *  Numbers travel as 8-byte frames in host byte order: both ends are
 *  threads of one process. The checksum is the kernel's (0 when emulated);
 *  engine_recv reads it only to validate the frame. Both PROGRESS and DONE
 *  carry the engine's cumulative units: every finished task's units, plus,
 *  in a PROGRESS, the part of the running task done so far. A DONE adds
 *  the task's units as given to START, so completions sum exactly.
 *
 *  A DONE also says how far the engine fell behind its clock: `late` is
 *  how long after the task's exact end (by the speed integral) the
 *  emulated actor noticed it (0 for the real kernel, whose time is real),
 *  and `ended` when it sent the DONE; the front adds the time the DONE
 *  then waited to be read. Their sum is the engine's lag (engine_lag).
 *
 *  The actor answers $TERM and SPEED promptly even mid-task: the emulated
 *  engine sleeps in slices of at most its progress period polling its
 *  pipe, and the real one checks the pipe every ENGINE_BLOCK_MACS
 *  multiply-adds, a few milliseconds of work at any matrix size.
 *
 *  Emulated progress is the integral of the speed over time, taken piece
 *  by piece: each time the actor wakes it credits the time since it last
 *  did at the speed in force all along, and only then reads a SPEED that
 *  woke it, which applies from that instant. Slices bound how late a
 *  task's end is noticed, not how exact its progress is.
 *
 *  While busy the actor reports progress about every progress_s seconds
 *  (default ENGINE_PROGRESS_EVERY): the emulated engine after a slice,
 *  the real one after a block of rows (counting rows done / N of the
 *  current diagonal), both limited
 *  by the time since the last report, so SPEED messages waking the actor
 *  early, or small blocks, do not add reports. Idle, it sends nothing.
 *  A report is sent without waiting: if the front has stopped reading and
 *  the pipe is full it is dropped, since the next one supersedes it, and
 *  the actor never blocks on one while it should answer $TERM.
 */
#include "node/engine.h"

#include <assert.h>
#include <math.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "node/kernel.h"
#include "overlay/util.h"

#define ENGINE_MIN_N 2
#define ENGINE_MAX_N 16384
#define ENGINE_SEED 0x7472ee           /* every node: the same matrix */
#define ENGINE_BLOCK_MACS 65536        /* real: work between pipe checks */
/* A report is due once this much of the period has passed, so that a
 * slice waking a hair early does not skip a beat. */
#define ENGINE_PROGRESS_DUE 0.9
/* A nap shorter than this is not slept: the actor reads the clock again
 * (a task of a few microseconds or less spins that long), since a sleep
 * costs a system call and a wake-up of about this much anyway. */
#define ENGINE_MIN_NAP 2e-6

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
    int busy;                 /* a START went out; its DONE not yet read */
    double units;             /* cumulative units, as last reported */
    double lag, lag_max;      /* seconds behind at task ends: total, worst */
    in_loop_t loop;           /* in the loop: the running task */
};

/*  The actor's own state; lives on the actor thread's stack. */
typedef struct {
    zsock_t *pipe;
    zpoller_t *poller;        /* on pipe, for the emulated slices */
    engine_cfg_t cfg;
    kernel_t *kernel;         /* real mode only */
    double factor;            /* emulated speed factor, [0, 1] */
    int terminated;           /* $TERM or an interrupt seen */
    double done;              /* units of the tasks finished so far */
    double task_units;        /* units of the running task */
    double every;             /* progress period, seconds */
    double reported;          /* when the last report (or START) was */
    double late;              /* emulated: how long after its exact end the
                                 last task's end was noticed, seconds */
} actor_t;

/*  What a task run ended with. */
typedef enum {
    RUN_DONE = 0,
    RUN_TERMINATED,
} run_result_t;


/*  --------------------------------------------------------------------
 *  Frames */

static void
frame_put_u64 (zmsg_t *msg, uint64_t value)
{
    zmsg_addmem (msg, &value, sizeof (value));
}

static void
frame_put_f64 (zmsg_t *msg, double value)
{
    zmsg_addmem (msg, &value, sizeof (value));
}

/*  Pop an 8-byte frame into out. Returns 0, or -1 if the frame is missing
 *  or has the wrong size. */
static int
frame_pop_8 (zmsg_t *msg, void *out)
{
    zframe_t *frame = zmsg_pop (msg);
    int rc = -1;
    if (frame && zframe_size (frame) == 8) {
        memcpy (out, zframe_data (frame), 8);
        rc = 0;
    }
    zframe_destroy (&frame);
    return rc;
}


/*  --------------------------------------------------------------------
 *  Actor */

/*  Apply a SPEED message: one 8-byte factor, clamped to [0, 1]. A
 *  malformed one (or NaN) is logged and dropped. The real engine keeps the
 *  factor and never uses it. */
static void
actor_speed (actor_t *self, zmsg_t *msg)
{
    double factor;
    if (frame_pop_8 (msg, &factor) || zmsg_size (msg) != 0 || isnan (factor)) {
        zsys_warning ("engine: dropped malformed SPEED");
        return;
    }
    self->factor = factor < 0 ? 0 : factor > 1 ? 1 : factor;
}

static void actor_start (actor_t *self, zmsg_t *msg);

/*  Report progress if one is due at `now`: `in_task` units of the running
 *  task are done (capped at its size, which rounding of the real engine's
 *  last rows or the emulated engine's last slice may overshoot). */
static void
actor_progress (actor_t *self, double in_task, double now)
{
    if (now - self->reported < ENGINE_PROGRESS_DUE * self->every)
        return;
    self->reported = now;

    double units = self->done + fmin (in_task, self->task_units);
    zframe_t *command = zframe_from ("PROGRESS");
    zframe_t *value = zframe_new (&units, sizeof (units));
    /* Once the first frame is in, libzmq takes the rest of the message. */
    if (zframe_send (&command, self->pipe, ZFRAME_MORE | ZFRAME_DONTWAIT) == 0)
        zframe_send (&value, self->pipe, ZFRAME_DONTWAIT);
    zframe_destroy (&command);
    zframe_destroy (&value);
}

/*  Read and handle one command from the pipe. $TERM (or an interrupt)
 *  ends the actor and SPEED is applied at any time; START is taken only
 *  when idle, since the front never sends one mid-task. Anything else is a
 *  programming error on the front side, logged and dropped. */
static void
actor_recv (actor_t *self, int midtask)
{
    zmsg_t *msg = zmsg_recv (self->pipe);
    if (!msg) {
        self->terminated = 1;           /* interrupted */
        return;
    }
    char *command = zmsg_popstr (msg);
    if (command && streq (command, "$TERM"))
        self->terminated = 1;
    else if (command && streq (command, "SPEED"))
        actor_speed (self, msg);
    else if (command && streq (command, "START") && !midtask)
        actor_start (self, msg);
    else
        zsys_warning ("engine: dropped command '%s'%s",
                      command ? command : "(empty)", midtask ? " received mid-task" : "");
    free (command);
    zmsg_destroy (&msg);
}

/*  Sleep for at most `seconds`, returning early if the pipe becomes
 *  readable. Returns 1 if a command waits to be read, else 0. zpoller
 *  counts whole milliseconds, so a remainder below one millisecond is
 *  slept with nanosleep: short tasks stay accurate at high time scales,
 *  and the actor is deaf for under a millisecond; one below ENGINE_MIN_NAP
 *  is not slept at all (the caller reads the clock and comes back). */
static int
actor_nap (actor_t *self, double seconds)
{
    if (seconds >= 0.001) {
        if (zpoller_wait (self->poller, (int) (seconds * 1000)))
            return 1;
        if (zpoller_terminated (self->poller))
            self->terminated = 1;
    } else if (seconds >= ENGINE_MIN_NAP) {
        struct timespec ts = {0, (long) (seconds * 1e9)};
        nanosleep (&ts, NULL);
    }
    return 0;
}

/*  Emulated: progress is the integral of rate * time_scale * factor over
 *  time. Between wake-ups the factor is constant, because a SPEED is read
 *  only after the time up to its arrival has been credited. At factor 0
 *  the actor still wakes every slice and answers its pipe at once. */
static run_result_t
actor_run_emulated (actor_t *self, double units)
{
    double full = self->cfg.rate * self->cfg.time_scale;
    double progress = 0;
    double last = tf_now ();

    while (progress < units && !self->terminated) {
        double speed = full * self->factor;
        double nap = self->every;
        if (speed > 0 && (units - progress) / speed < nap)
            nap = (units - progress) / speed;
        int ready = actor_nap (self, nap);
        double now = tf_now ();
        progress += (now - last) * speed;
        last = now;
        if (progress < units)
            actor_progress (self, progress, now);
        else
            self->late = speed > 0 ? (progress - units) / speed : 0;
        if (ready)
            actor_recv (self, 1);
    }
    return self->terminated ? RUN_TERMINATED : RUN_DONE;
}

/*  Check the pipe without blocking; handle what is there. */
static void
actor_check_pipe (actor_t *self)
{
    if (zsock_events (self->pipe) & ZMQ_POLLIN)
        actor_recv (self, 1);
}

/*  Real: rows [from, to) of diagonal d in blocks, checking the pipe and
 *  reporting progress between blocks; `before` units of the task were
 *  done when the diagonal began. Adds to *checksum. */
static void
actor_run_rows (actor_t *self, uint32_t d, uint32_t from, uint32_t to,
                double before, int64_t *checksum)
{
    uint32_t n = kernel_size (self->kernel);
    uint32_t block = n < ENGINE_BLOCK_MACS ? ENGINE_BLOCK_MACS / n : 1;

    for (uint32_t r = from; r < to && !self->terminated; r += block) {
        uint32_t end = to - r > block ? r + block : to;
        *checksum += kernel_rows (self->kernel, d, r, end, NULL);
        actor_progress (self, before + (double) end / n, tf_now ());
        actor_check_pipe (self);
    }
}

/*  Real: the same work as kernel_units (whole diagonals, then the nearest
 *  number of rows of the next), split so the pipe is checked often. A
 *  task starts at diagonal (task mod N), so a task's checksum does not
 *  depend on which node computed it. */
static run_result_t
actor_run_real (actor_t *self, uint64_t task, double units, int64_t *checksum)
{
    uint32_t n = kernel_size (self->kernel);
    uint64_t diagonals = (uint64_t) units;
    uint32_t rows = (uint32_t) ((units - (double) diagonals) * n + 0.5);
    uint32_t d = (uint32_t) (task % n);

    *checksum = 0;
    for (uint64_t k = 0; k < diagonals && !self->terminated; k++) {
        actor_run_rows (self, d, 0, n, (double) k, checksum);
        d = d + 1 == n ? 0 : d + 1;
    }
    if (rows > 0 && !self->terminated)
        actor_run_rows (self, d, 0, rows, (double) diagonals, checksum);
    return self->terminated ? RUN_TERMINATED : RUN_DONE;
}

/*  Run one START message's task and report it. */
static void
actor_start (actor_t *self, zmsg_t *msg)
{
    uint64_t task;
    double units;
    if (frame_pop_8 (msg, &task) || frame_pop_8 (msg, &units) ||
        zmsg_size (msg) != 0 || !(units >= 0) || units > 1e15) {
        zsys_warning ("engine: dropped malformed START");
        return;
    }

    double start = tf_now ();
    self->task_units = units;
    self->reported = start;
    self->late = 0;
    int64_t checksum = 0;
    run_result_t result = self->kernel
                              ? actor_run_real (self, task, units, &checksum)
                              : actor_run_emulated (self, units);
    if (result == RUN_TERMINATED)
        return;
    self->done += units;

    zmsg_t *done = zmsg_new ();
    zmsg_addstr (done, "DONE");
    frame_put_u64 (done, task);
    frame_put_f64 (done, tf_now () - start);
    frame_put_u64 (done, (uint64_t) checksum);
    frame_put_f64 (done, self->done);
    frame_put_f64 (done, self->late);
    frame_put_f64 (done, tf_now ());
    zmsg_send (&done, self->pipe);
}

static void
engine_actor (zsock_t *pipe, void *args)
{
    actor_t self = {.pipe = pipe, .cfg = *(const engine_cfg_t *) args, .factor = 1};
    self.every = self.cfg.progress_s > 0 ? self.cfg.progress_s : ENGINE_PROGRESS_EVERY;
    /* Sleep as long as asked, not up to the default 50 us of timer slack
     * more: a task's end is noticed that much later otherwise. */
    prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    self.poller = zpoller_new (pipe, NULL);
    if (self.cfg.mode == PLATFORM_REAL)
        self.kernel = kernel_new (self.cfg.matrix_n, ENGINE_SEED);
    zsock_signal (pipe, 0);

    while (!self.terminated)
        actor_recv (&self, 0);
    kernel_destroy (&self.kernel);
    zpoller_destroy (&self.poller);
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
    zactor_destroy (&self->actor);
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
    double speed = l->full * self->factor;
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
    double speed = l->full * self->factor;
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
    double speed = l->full * self->factor;
    double left = l->task_units - l->progress - (now - l->last) * speed;
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
    double speed = l->full * self->factor;
    *start = l->started;
    if (l->ended >= 0)
        *end = l->ended;
    else
        *end = speed > 0 ? l->last + (l->task_units - l->progress) / speed : INFINITY;
    return 1;
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
