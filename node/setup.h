/*  setup — one node's decision core as an experiment describes it.
 *
 *  Every driver of the core builds it the same way from the config: the
 *  ZeroMQ runtime (node/node.c) and a virtual-clock driver alike
 *  (docs/architecture.md, "Drivers"). Rates become physical bytes per
 *  second of this run: platform MB/s x 2^20 x payload scale x time scale.
 */
#ifndef TF_SETUP_H
#define TF_SETUP_H

#include <stddef.h>

#include "node/core.h"
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

/*  Create the core of node (an index into cfg->nodes): its children's
 *  facts, its policy, chunking, window, buffer, pacing (emulated runs),
 *  send limit and meter window, the bag (cfg->commands, then the
 *  synthetic tasks) and the tree's shape. bag is required on the root of
 *  a run with command tasks, ignored elsewhere (may be NULL). Returns NULL
 *  with a message in err. */
core_t *setup_core (const config_t *cfg, int node, const setup_bag_t *bag, char *err,
                    size_t errlen);

#endif
