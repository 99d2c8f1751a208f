/*  burner — a node's background load in real mode (overlay/load.h) as
 *  real processes the node starts and the kernel's scheduler shares the
 *  CPU with:
 *    steps, trace  duty-cycled CPU burners: a load L is L - 1 CPUs' worth
 *                  of CPU-bound processes, floor(L - 1) burning all the
 *                  time and one burning frac(L - 1) of each period of
 *                  BURNER_PERIOD_S, switching at the points' times;
 *    jobs          a generator process drawing the streams' arrivals and
 *                  demands (overlay/dist.h) and starting, per job, a
 *                  process that burns that much CPU time, at most
 *                  BURNER_MAX_JOBS alive (an arrival past that is
 *                  dropped and counted): processor sharing is the
 *                  kernel's;
 *    contenders    a process per contender, alternating periods
 *                  (exponential, of mean period_s) of computing, of
 *                  sending msg_bytes messages back to back as UDP
 *                  datagrams to the discard port of a host (the node's
 *                  parent's), or of idling.
 *  A description is one CPU's load: a node whose affinity mask holds k
 *  CPUs gets k copies of its burners and job generators (draws seeded
 *  apart), so that L = 2 halves a single-threaded task's speed and U is
 *  the background's share of every CPU, whatever the machine (docs/load.md);
 *  contenders are the machine's, one process each. Every process
 *  inherits the node's CPU affinity, so they burn the node's CPUs. None outlives the node: each asks the kernel for SIGKILL
 *  when its parent dies (the node for its own children, the generator
 *  for its jobs), SIGKILL of the node included, and burner_stop kills
 *  and reaps the node's children by PID.
 *
 *  Times are load seconds from opts->t0 (tf_now, CLOCK_MONOTONIC): real
 *  mode runs at time scale 1. Draws are deterministic from the load's
 *  seed mixed with the node's name (the kernel's timing is not).
 *
 *  The schedule of the duty-cycled burners is pure and tested apart
 *  (burner_slots, burner_slot_step).
 */
#ifndef TF_BURNER_H
#define TF_BURNER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "overlay/load.h"

/*  The period of a partly busy burner: short next to a task, long next
 *  to the kernel's time slice. */
#define BURNER_PERIOD_S 0.1
/*  The most duty-cycled burners: a load above BURNER_MAX_SLOTS + 1 is
 *  generated as that (LOAD_MAX_L bounds one kind; steps times a trace
 *  can multiply past it). */
#define BURNER_MAX_SLOTS 64
/*  The most job processes alive at once: at U = 0.95 (LOAD_MAX_UTILIZATION)
 *  processor sharing holds more than 256 jobs with probability 0.95^256,
 *  about 2e-6. */
#define BURNER_MAX_JOBS 256
/*  The most CPUs a load is copied onto: a node allowed more gets the
 *  load of BURNER_MAX_CPUS (its share then reads low). */
#define BURNER_MAX_CPUS 64
/*  The largest UDP datagram a contender sends: a bigger message is split. */
#define BURNER_MAX_DATAGRAM 65507
/*  The port contenders send to: discard (RFC 863), so nothing answers. */
#define BURNER_DISCARD_PORT 9

typedef struct burner burner_t;

typedef struct {
    const char *node;        /* the node's name: mixed into the seed */
    const char *dest_host;   /* numeric IPv4 or IPv6 address contenders
                                send to; NULL or "": 127.0.0.1 */
    double t0;               /* tf_now () of load time 0 */
} burner_opts_t;

/*  Start the processes of load (borrowed: read here, not kept). Returns
 *  the running load, or NULL with a message in err (a distribution the
 *  load's stream cannot have, an address that does not parse, a fork
 *  that failed: whatever had started is stopped). */
burner_t *burner_start (const load_t *load, const burner_opts_t *opts, char *err,
                        size_t errlen);

/*  CPU seconds the load's processes have used so far (user and system),
 *  as they report it into a counter they share: a burner's report lags
 *  its use by at most about 10 ms of its CPU; a job's last report is its
 *  whole demand. One atomic read. */
double burner_cpu_seconds (const burner_t *self);

/*  Job arrivals dropped so far because BURNER_MAX_JOBS were alive (or a
 *  fork failed). */
uint64_t burner_dropped (const burner_t *self);

/*  CPUs the load burns: the count in the node's affinity mask at start,
 *  at most BURNER_MAX_CPUS; the copies of the load started. */
int burner_ncpus (const burner_t *self);

/*  The PIDs of the node's own load processes (duty-cycled burners, the
 *  job generator, contenders; not the jobs, the generator's children),
 *  up to max into out. Returns how many there are. */
int burner_pids (const burner_t *self, pid_t *out, int max);

/*  Kill (SIGKILL) and reap every process the node started; the jobs die
 *  with the generator (their parent-death signal is sent as it exits,
 *  before it can be reaped). Nulls the pointer; safe on NULL. */
void burner_stop (burner_t **self_p);

/*  --- the schedule of the duty-cycled burners (pure) --------------------- */

/*  How many duty-cycled burners load needs: ceil of the highest excess
 *  L - 1 over its steps times its trace (L as load_level_at: each 1
 *  before its first point, a point holding until the next), at most
 *  BURNER_MAX_SLOTS. 0 without steps and trace. */
int burner_slots (const load_t *load);

/*  What duty-cycled burner `slot` (0 .. burner_slots - 1) does at load
 *  time t: with the excess e = L(t) - 1, slot i burns min(max(e - i, 0),
 *  1) of each period of `period` seconds (the start of each period,
 *  periods counted from time 0). Returns 1 to burn, 0 to idle, and puts
 *  into *until when to ask again: the end of the burn or of the period,
 *  or the next point of the steps or the trace, whichever comes first
 *  (always after t). */
int burner_slot_step (const load_t *load, int slot, double t, double period,
                      double *until);

/*  The seed of draw sequence `index` of node `node` under the load's seed:
 *  the same inputs give the same seed, different names or indices
 *  (almost surely) different ones. */
uint64_t burner_seed (uint64_t seed, const char *node, int index);

#endif
