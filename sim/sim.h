/*  sim — a run of the decision cores on SimGrid (docs/simulate.md).
 *
 *  Every node of the config is a SimGrid actor on its own host (the
 *  platform of sim/platform.h) driving its node's unchanged core
 *  (node/core.h, built by node/setup.h like every driver's) through the
 *  one route between core and drivers (node/route.h):
 *  - an action for the parent or a child is a message on the mailbox of
 *    that direction of that link, sized as the bytes it moves (a chunk's
 *    or a result's, plus an envelope), so it crosses the link's latency
 *    and shares its bandwidth (and the parent's send limit) with what
 *    else flows there; a link's messages arrive in the order they were
 *    sent, as on the runtime's TCP connections;
 *  - a task to compute runs on the node's engine at the host's speed,
 *    slowed, with interference, by what the node's own transfers cost
 *    it (node/emulate.h), taken again every SIM_SAMPLE_S while transfers
 *    flow;
 *  - the core's deadlines are the actor's timeouts;
 *  - the root's records go to the results (controller/results.h) as the
 *    controller files them, and FINISHED ends the simulation.
 *  The cores pace nothing: the network model carries the links.
 */
#ifndef TF_SIM_SIM_H
#define TF_SIM_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "controller/results.h"
#include "overlay/config.h"

/*  How often a busy engine under interference takes its speed again,
 *  simulated seconds (the runtime's NODE_SPEED_EVERY scale). */
#define SIM_SAMPLE_S 1e-3

/*  Bytes of a message's envelope and of each completion it carries, at
 *  platform scale (the runtime's frames are of that order); a message
 *  moves them times the payload scale, on top of a chunk's bytes. */
#define SIM_ENVELOPE_BYTES 64
#define SIM_DONE_BYTES 16

/*  The deepest tree simulated: a route lookup walks the zones from both
 *  ends up to the parent's (sim/platform.h). */
#define SIM_MAX_DEPTH 256

/*  The samples a node keeps (node/observe.h: thinned to every second one
 *  when full, so they cover the whole run): the runtime keeps 1024, but
 *  at ten thousand nodes that would be 400 MB. */
#define SIM_SAMPLES 64

/*  Each actor's stack, KiB: the core's deepest call is a few KiB. */
#define SIM_STACK_KIB 64

typedef struct {
    const char *platform_xml;   /* write the platform here too (NULL: only
                                   to a temporary file) */
    int progress;               /* a progress line on stderr */
    const struct sim_commands *commands;   /* the command tasks' figures
                                   (sim/commands.h); NULL: none */
    int trace;                  /* record every node's timeline (--trace):
                                   its spans go to the results as a
                                   REPORT's would */
} sim_opts_t;

/*  What a simulation counted, for docs/performance.md. */
typedef struct {
    double makespan;         /* simulated seconds, START to FINISHED */
    uint64_t events;         /* core events handled over every node */
    uint64_t messages;       /* messages sent between nodes */
    double wall_s;           /* wall seconds the simulation took, */
    double setup_s;          /* of which setting up: the platform loaded,
                                every core built, every actor created */
} sim_figures_t;

/*  Check that cfg can be simulated (a tree of at most SIM_MAX_DEPTH
 *  levels). Returns 0, or -1 with a message naming what. */
int sim_check (const config_t *cfg, char *err, size_t errlen);

/*  Simulate cfg (checked) to its end, filing into results (created on
 *  cfg, its tasks.csv open) every record, every node's counters, the
 *  outcome and the makespan; the offered nodes admitted are attached to
 *  cfg as a run's controller attaches them. Returns 0 when the run
 *  completed, -1 with a message in err (the results then say why too).
 *  Call once per process: SimGrid's engine is global. */
int sim_run (config_t *cfg, results_t *results, const sim_opts_t *opts, sim_figures_t *fig,
             char *err, size_t errlen);

#endif
