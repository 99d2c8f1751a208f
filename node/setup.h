/*  setup — one node's decision core as an experiment describes it.
 *
 *  Every driver of the core builds it the same way from the config: the
 *  ZeroMQ runtime (node/build.c) and a virtual-clock driver alike
 *  (docs/architecture.md, "Drivers"); what differs between drivers (the
 *  pacing, the batching delay, the meter window's wall-time floor) is
 *  theirs to choose (setup_opts_t). Rates become physical bytes per
 *  second of this run: platform MB/s x 2^20 x payload scale x time scale.
 */
#ifndef TF_SETUP_H
#define TF_SETUP_H

#include <stddef.h>

#include "node/core.h"
#include "overlay/bound.h"
#include "overlay/config.h"

/*  Completions travel up in batches of at most SETUP_BATCH_MAX, or after
 *  SETUP_BATCH_DELAY wall seconds: few messages at high task rates, and a
 *  root that learns of a completion within a few milliseconds. */
#define SETUP_BATCH_MAX 64
#define SETUP_BATCH_DELAY 0.05

/*  Rates are measured over 100 ms of platform time (the smoothing of
 *  emulated interference), but never under 20 ms of wall time, a few
 *  chunks at the time scales used. */
#define SETUP_METER_PLATFORM 0.1
#define SETUP_METER_MIN 0.02

/*  Physical bytes per second of this run per platform MB/s. */
double setup_bps_per_mbps (const config_t *cfg);

/*  The root's view of its command tasks: each one's input bundle bytes
 *  (core_cfg_t.task_info). */
typedef struct {
    core_task_info_t (*task_info) (void *arg, uint64_t task);
    void *arg;
} setup_bag_t;

/*  Whether links and the send limit are paced by the core's pacers. */
typedef enum {
    SETUP_PACE_AUTO = 0,     /* as the runtime does: in an emulated run
                                whose links the kernel does not shape */
    SETUP_PACE_ON,
    SETUP_PACE_OFF,          /* a driver whose network model paces the
                                links itself */
} setup_pace_t;

/*  What a driver chooses about its cores; setup_opts_default() is what
 *  the ZeroMQ runtime uses. Times are in the driver's clock: a driver
 *  on a virtual clock may want no wall-time floor under the meter window
 *  (meter_min 0) and its own batching delay. */
typedef struct {
    setup_pace_t pace;
    uint32_t batch_max;      /* completions per DONE or RECORDED, >= 1 */
    double batch_delay;      /* seconds a partial batch waits, >= 0 */
    double meter_min;        /* the meter window's floor, seconds: the
                                window is SETUP_METER_PLATFORM of platform
                                time, never under this */
    const setup_bag_t *bag;  /* required on the root of a run with command
                                tasks, ignored elsewhere (may be NULL) */
    /*  The config's multi-port bound tree (bound_tree_new, BOUND_MULTI),
     *  when the driver builds every node's core and computed it once for
     *  all of them; NULL: each core's setup computes it (the runtime's
     *  one core a process). */
    const bound_tree_t *plan_tree;
    /*  Places per command slot in the core, 1 .. CORE_MAX_DEPTH (0:
     *  1): what the driver's slot holds at once (the runtime's worker: a
     *  command running and the next waiting, CMDRUN_DEPTH; a
     *  simulation's: 1). */
    uint32_t depth;
} setup_opts_t;

/*  The runtime's options: pacing SETUP_PACE_AUTO, batches of
 *  SETUP_BATCH_MAX or SETUP_BATCH_DELAY, a meter window of at least
 *  SETUP_METER_MIN, no bag. */
setup_opts_t setup_opts_default (void);

/*  What the core knows of child index of cfg at bps bytes/s per MB/s: a
 *  vacant slot (docs/adapt.md, "Grow") is absent, with rates the
 *  policies can rank until a node takes it; a joined node's facts are
 *  the same as a node's of the tree from the start. */
core_child_info_t setup_child_info (const config_t *cfg, int index, double bps);

/*  Create the core of node (an index into cfg->nodes): its children's
 *  facts, its policy, chunking, window, buffer, pacing, send limit and
 *  meter window, the bag (cfg->commands, then the synthetic tasks) and
 *  the tree's shape, with what opts chooses (NULL: setup_opts_default()).
 *  Returns NULL with a message in err. */
core_t *setup_core (const config_t *cfg, int node, const setup_opts_t *opts, char *err,
                    size_t errlen);

#endif
