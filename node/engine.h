/*  engine — the worker thread that computes a node's tasks.
 *
 *  An engine is a czmq actor. The node's runtime hands it one task at a
 *  time (engine_start) and polls engine_sock for progress reports and
 *  completions (engine_recv); the actor exits on $TERM even in the middle
 *  of a task.
 *
 *  Two kinds:
 *  - emulated: a task of w units takes w / (C * s) seconds of wall time for
 *    a configured rate C and time scale s, slowed by a speed factor the
 *    node sets from the interference it observes (engine_set_speed). The
 *    actor sleeps rather than burns CPU, in slices of at most progress_s
 *    seconds (a report each), waking at once for $TERM and speed changes.
 *  - real: a task runs the diagonal kernel (node/kernel.h) for w units on an
 *    N x N matrix, burning real CPU, checking its pipe between blocks of rows.
 *
 *  An emulated engine may instead run in the caller's loop (in_loop): no
 *  thread and no socket (engine_sock is NULL), the running task is only a
 *  deadline. The loop waits no longer than engine_deadline says and then
 *  calls engine_recv, which answers as the actor's messages would: a
 *  progress report about every ENGINE_PROGRESS_EVERY seconds while busy,
 *  and the completion once the integral of the speed reaches the task's
 *  units. Progress is integrated exactly at every speed change, which may
 *  be dated back to when it happened (engine_set_speed_at). A task
 *  then costs the node no thread hand-off: two wake-ups and two inter-
 *  thread signals fewer per task (docs/performance.md, "Dispatch").
 */
#ifndef TF_ENGINE_H
#define TF_ENGINE_H

#include <czmq.h>
#include <stdint.h>

#include "overlay/config.h"

/*  The default period of progress reports while busy (engine_cfg_t
 *  progress_s 0), which is also the emulated actor's longest nap; a
 *  period is at most ENGINE_PROGRESS_MAX. */
#define ENGINE_PROGRESS_EVERY 0.010
#define ENGINE_PROGRESS_MAX 1.0

typedef struct engine engine_t;

typedef struct {
    platform_mode_t mode;
    double rate;             /* emulated: units/s, > 0 */
    double time_scale;       /* emulated: s, > 0 */
    uint32_t matrix_n;       /* real: N */
    double progress_s;       /* seconds between progress reports while
                                busy: 0 for ENGINE_PROGRESS_EVERY, else in
                                [ENGINE_PROGRESS_EVERY, ENGINE_PROGRESS_MAX].
                                Each report wakes the node's loop: a node
                                that samples every 100 ms needs one about
                                every 50, not 10 (node/build.c) */
    int in_loop;             /* emulated: run in the caller's loop, no
                                thread (ignored in real mode) */
    int lazy_kernel;         /* real: make the kernel (N x N, 4 MiB at the
                                default N) at the first task, not at the
                                start: a run of commands may never need
                                it, and its start-up is shorter */
} engine_cfg_t;

/*  Start an engine thread. Returns NULL with a message in err if the
 *  configuration is invalid. */
engine_t *engine_new (const engine_cfg_t *cfg, char *err, size_t errlen);

/*  Stop the thread (interrupting a running task) and null the pointer. */
void engine_destroy (engine_t **self_p);

/*  Hand the engine a task. It must be idle: one task at a time. Returns 0,
 *  or -1 if the engine is busy. */
int engine_start (engine_t *self, uint64_t task, double units);

/*  The socket to poll; readable when a progress report or a completion
 *  waits to be read by engine_recv. NULL for an engine in the loop. */
zsock_t *engine_sock (engine_t *self);

/*  An engine in the loop: seconds from now until engine_recv has
 *  something to say (the running task's end at the speed in force, or
 *  its next progress report), 0 when due; -1 when idle, and always for
 *  an engine with a thread (poll engine_sock instead). */
double engine_deadline (const engine_t *self, double now);

/*  Read one message from the engine. A completion fills the task id and
 *  the wall seconds it took and returns 0. A progress report (the actor
 *  sends one about every progress_s seconds while busy) only
 *  updates engine_units and returns 1. Returns -1 if what arrived was
 *  neither. Call only when engine_sock is readable (an engine in the
 *  loop: when engine_deadline says 0). */
int engine_recv (engine_t *self, uint64_t *task, double *seconds);

/*  Compute units done since the engine started, counting progress inside
 *  the running task, as of the last message engine_recv read (so at most
 *  about progress_s seconds old while busy, exact at each
 *  completion). */
double engine_units (const engine_t *self);

/*  Seconds the engine fell behind its clock, summed over the tasks whose
 *  completion engine_recv has read: for each, how long after the task's
 *  exact end the actor noticed it (emulated; 0 for the real kernel) plus
 *  how long its DONE then waited to be read. Stores the worst single one
 *  in *max unless max is NULL. An engine that keeps up lags by scheduling
 *  jitter only (tens of microseconds a task); one starved of CPU, by
 *  whole time slices. */
double engine_lag (const engine_t *self, double *max);

/*  An engine in the loop: the running task's units still to compute at
 *  now (before or after its last integration: the speed in force since
 *  its last change is constant), 0 once they are done; -1 when idle (or
 *  an engine with a thread). */
double engine_task_left (const engine_t *self, double now);

/*  Set the emulated engine's speed factor in [0, 1] (values outside are
 *  clamped): from the moment the actor reads it, progress accrues at
 *  rate * time_scale * factor units per second, including inside the
 *  running task; a task's progress is the exact integral of that rate
 *  over time. At factor 0 a task makes no progress, and the actor still
 *  answers $TERM and later speed changes within a slice. The factor holds
 *  for later tasks until changed; an engine starts at 1. The node calls it
 *  with interference_factor (node/meter.h) of the transfer rates it
 *  observes. A real engine ignores it (its interference is real). Setting
 *  the factor already in force sends nothing. Returns 0, or -1 (and
 *  changes nothing) if factor is NaN or the engine thread is gone. */
int engine_set_speed (engine_t *self, double factor);

/*  The same for an engine in the loop, the change dated `at` (wall
 *  seconds, tf_now's clock) rather than now: the running task's progress
 *  is taken back to `at` and credited at factor from there, so a change
 *  the caller learns of late still applies from its exact moment; a task
 *  whose end (at the old speed) came before `at` keeps it. `at` is
 *  clamped to [the last change, now]: a change is never dated before an
 *  earlier one. With a thread: engine_set_speed (now). Returns as it. */
int engine_set_speed_at (engine_t *self, double factor, double at);

/*  Hold the engine (on) or release it (off): held, it computes nothing,
 *  whatever its speed factor (kept, and applied again on release), in
 *  both modes: the emulated engine's progress stops, the real kernel
 *  stops between blocks of rows and burns no CPU. A task in hand, or one
 *  started while held, keeps its progress and goes on once released; the
 *  engine stays busy and still reports its (unchanged) units every
 *  progress period, so readers see time pass. A calibration's idle phase
 *  holds its node's endless task (docs/measure.md). Returns 0, or -1 if
 *  the engine thread is gone. */
int engine_hold (engine_t *self, int on);

/*  Whether the engine is held (engine_hold). */
int engine_held (const engine_t *self);

/*  An engine in the loop with a task in hand (started, its completion not
 *  yet read): its start in *start and its exact end in *end (wall
 *  seconds), the end projected at the speed in force if not yet reached
 *  (INFINITY at speed 0); returns 1. Idle, or with a thread: 0. */
int engine_task_span (const engine_t *self, double *start, double *end);

/*  An engine in the loop: when its speed factor was last set (the moment
 *  it was dated to), before which engine_set_speed_at cannot date a
 *  change; 0 before any change, and always for an engine with a
 *  thread. */
double engine_speed_set_at (const engine_t *self);

/*  True while a task is running. */
int engine_busy (const engine_t *self);

#endif
