/*  bgload — one node's emulated background load (overlay/load.h) as a
 *  discrete-event model: what share of the CPU the node's own task (the
 *  foreground) gets at each platform time, and what the background takes.
 *
 *  Pure: no clock, no sockets. The caller passes platform time (seconds
 *  since the run's start) and whether the foreground computes, which the
 *  model cannot know: a job finishes sooner while the foreground idles.
 *  Every draw comes from overlay/dist.h generators seeded from the
 *  description's seed mixed with the node's name (two nodes with the
 *  same description get different streams) and with the source's index,
 *  one generator per job stream and per contender: a contender's periods
 *  are the same in a model of the whole load and in a contenders-only
 *  one (what a parent builds to know its child's link share).
 *
 *  The model at any time:
 *    n  background jobs active (the open streams' arrivals, each with a
 *       CPU demand, not yet served in full);
 *    i  contenders computing, j communicating (each contender holds a
 *       state for a period of exponential length, mean period_s, drawn
 *       computing with probability compute, communicating with
 *       probability comm, else idle);
 *    L  the steps' and the trace's load level (1 before a first point).
 *  j communicating contenders take j / (j + 1) of the node's link and
 *  cost its CPU ir_recv per MB/s they receive: the CPU left is
 *  c = 1 - ir_recv * link_mbps * j / (j + 1) (as load_delay_comm says).
 *  c is shared by processor sharing among the n jobs, the i computing
 *  contenders and the foreground when it computes: each gets c / s, s
 *  their number. The foreground's factor is c / (n + i + 1) / L.
 *  The background's share of the CPU is 1 - c plus c (n + i) / s (the
 *  whole CPU when the foreground idles and anything of it runs); L is a
 *  speed, not a process, and does not count.
 *
 *  At most BGLOAD_MAX_JOBS jobs are active: an arrival beyond is refused
 *  and counted (bgload_refused). At U <= 0.95 the count stays far below
 *  except over astronomically unlikely stretches.
 */
#ifndef TF_BGLOAD_H
#define TF_BGLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "overlay/load.h"

/*  The most background jobs active at once; their memory is 8 bytes each. */
#define BGLOAD_MAX_JOBS 10000

typedef struct bgload bgload_t;

/*  The model of load (borrowed: it must outlive the model; checked by its
 *  reader) on node name, at platform time 0, nothing active yet but the
 *  contenders' first periods. ir_recv and link_mbps: the node's IR_r and
 *  link rate (MB/s; 0 for a root, which then pays no CPU for its
 *  contenders' messages). Returns NULL with a message in err if a
 *  distribution refuses its parameters. */
bgload_t *bgload_new (const load_t *load, const char *name, double ir_recv,
                      double link_mbps, char *err, size_t errlen);

/*  The same, of the contenders only: no jobs, steps or trace. What a
 *  parent builds to pace a loaded child (bgload_comm). */
bgload_t *bgload_new_contenders (const load_t *load, const char *name,
                                 char *err, size_t errlen);

/*  Destroy and null the pointer. Safe on NULL. */
void bgload_destroy (bgload_t **self_p);

/*  The platform time the model is at (0 at first). */
double bgload_now (const bgload_t *self);

/*  The platform time of the next event (an arrival, a job's end, a
 *  contender's switch, a step or a trace row) if the foreground's state
 *  stays fg_busy, >= bgload_now; INFINITY when nothing will ever happen. */
double bgload_next (const bgload_t *self, int fg_busy);

/*  The most events bgload_finish looks ahead: a millisecond or so of
 *  CPU. */
#define BGLOAD_FINISH_MAX_EVENTS 10000

/*  When a foreground computing from bgload_now on, all along, will have
 *  got `work` platform seconds of a whole CPU (the integral of its
 *  factor): the end of a task, what a runtime may sleep until without
 *  waking for the events before it. The model itself does not move (a
 *  copy runs ahead: the same draws the model will make). Past
 *  BGLOAD_FINISH_MAX_EVENTS events it returns the time it reached, an
 *  earlier one, to be asked again from there. */
double bgload_finish (const bgload_t *self, double work);

/*  Run the model from bgload_now to platform time t (earlier: nothing)
 *  with the foreground computing all along if fg_busy, each event at its
 *  own time; events at t are processed. */
void bgload_advance (bgload_t *self, double t, int fg_busy);

/*  The foreground's rate factor now, in (0, 1]: c / (n + i + 1) / L. */
double bgload_factor (const bgload_t *self);

/*  The background's share of the CPU integrated from 0 to bgload_now,
 *  platform seconds of a whole CPU. */
double bgload_busy_integral (const bgload_t *self);

/*  The foreground's factor integrated over the time it computed:
 *  platform seconds of a whole CPU it got. */
double bgload_fg_integral (const bgload_t *self);

/*  Jobs active now; contenders computing now; contenders communicating
 *  now (j: the node's link keeps 1 / (j + 1) for its own transfers). */
int bgload_jobs (const bgload_t *self);
int bgload_computing (const bgload_t *self);
int bgload_comm (const bgload_t *self);

/*  Arrivals refused because BGLOAD_MAX_JOBS were active. */
uint64_t bgload_refused (const bgload_t *self);

/*  Add a job of demand CPU seconds (>= 0, finite) now, as an arrival
 *  would: for tests of the sharing arithmetic. Returns 0, or -1 (nothing
 *  added) for a bad demand or at BGLOAD_MAX_JOBS. */
int bgload_add_job (bgload_t *self, double demand);

#endif
