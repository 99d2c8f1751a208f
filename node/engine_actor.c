/*  engine_actor — the threaded engine's actor: the worker thread that
 *  computes a node's tasks, emulated or with the real kernel; see
 *  engine.h. The front (engine.c) starts it with zactor_new.
 *
 *  Pipe protocol between engine_t (front) and its actor (back), one
 *  message per command, every frame length-checked on receipt:
 *
 *      front -> actor   "START"    task:u64 units:f64
 *      actor -> front   "PROGRESS" units:f64
 *      actor -> front   "DONE"     task:u64 seconds:f64 checksum:i64 units:f64
 *                                  late:f64 ended:f64
 *      front -> actor   "SPEED" factor:f64   (emulated only; in [0, 1])
 *      front -> actor   "HOLD"  on:u64       (1 hold, 0 release)
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
 *  A held actor computes nothing (engine_hold): the emulated one runs at
 *  speed 0, the real one waits on its pipe before its next block of rows;
 *  both keep reporting their unchanged units while busy.
 *
 *  The actor answers $TERM, SPEED and HOLD promptly even mid-task: the emulated
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
#include "node/engine_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "node/kernel.h"
#include "overlay/util.h"

/*  The actor's own state; lives on the actor thread's stack. */
typedef struct {
    zsock_t *pipe;
    zpoller_t *poller;        /* on pipe, for the emulated slices */
    engine_cfg_t cfg;
    kernel_t *kernel;         /* real mode only */
    double factor;            /* emulated speed factor, [0, 1] */
    int held;                 /* HOLD: compute nothing until released */
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

void
frame_put_u64 (zmsg_t *msg, uint64_t value)
{
    zmsg_addmem (msg, &value, sizeof (value));
}

void
frame_put_f64 (zmsg_t *msg, double value)
{
    zmsg_addmem (msg, &value, sizeof (value));
}

/*  Pop an 8-byte frame into out. Returns 0, or -1 if the frame is missing
 *  or has the wrong size. */
int
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

/*  Apply a HOLD message: one 8-byte flag, 0 or 1. A malformed one is
 *  logged and dropped. */
static void
actor_hold (actor_t *self, zmsg_t *msg)
{
    uint64_t on;
    if (frame_pop_8 (msg, &on) || zmsg_size (msg) != 0 || on > 1) {
        zsys_warning ("engine: dropped malformed HOLD");
        return;
    }
    self->held = (int) on;
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
 *  ends the actor and SPEED and HOLD are applied at any time; START is taken only
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
    else if (command && streq (command, "HOLD"))
        actor_hold (self, msg);
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
        double speed = self->held ? 0 : full * self->factor;
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

/*  Real: while held, wait on the pipe a progress period at a time,
 *  reporting the unchanged progress (in_task units of the task), so a
 *  held node burns no CPU and its readers still see time pass. */
static void
actor_wait_held (actor_t *self, double in_task)
{
    while (self->held && !self->terminated) {
        if (actor_nap (self, self->every))
            actor_recv (self, 1);
        actor_progress (self, in_task, tf_now ());
    }
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
        actor_wait_held (self, before + (double) r / n);
        if (self->terminated)
            break;
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

    if (self->cfg.mode == PLATFORM_REAL && !self->kernel)
        self->kernel = kernel_new (self->cfg.matrix_n, ENGINE_SEED);
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

void
engine_actor (zsock_t *pipe, void *args)
{
    actor_t self = {.pipe = pipe, .cfg = *(const engine_cfg_t *) args, .factor = 1};
    self.every = self.cfg.progress_s > 0 ? self.cfg.progress_s : ENGINE_PROGRESS_EVERY;
    /* Sleep as long as asked, not up to the default 50 us of timer slack
     * more: a task's end is noticed that much later otherwise. */
    prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    self.poller = zpoller_new (pipe, NULL);
    if (self.cfg.mode == PLATFORM_REAL && !self.cfg.lazy_kernel)
        self.kernel = kernel_new (self.cfg.matrix_n, ENGINE_SEED);
    zsock_signal (pipe, 0);

    while (!self.terminated)
        actor_recv (&self, 0);
    kernel_destroy (&self.kernel);
    zpoller_destroy (&self.poller);
}


