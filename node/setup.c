/*  setup — a node's core from the experiment. See setup.h. */
#include "node/setup.h"

#include <stdlib.h>

#include "overlay/util.h"
#include "policies/policy.h"

double
setup_bps_per_mbps (const config_t *cfg)
{
    /*  Fewer bytes per platform byte (payload scale), more per second
     *  (time scale). */
    return CONFIG_MB * cfg->platform.payload_scale * cfg->platform.time_scale;
}

core_t *
setup_core (const config_t *cfg, int node, char *err, size_t errlen)
{
    const config_node_t *me = &cfg->nodes[node];
    double bps = setup_bps_per_mbps (cfg);
    core_child_info_t *kids = xcalloc (me->nchildren + 1, sizeof *kids);
    for (int i = 0; i < me->nchildren; i++) {
        const config_node_t *c = &cfg->nodes[me->children[i]];
        kids[i] = (core_child_info_t){c->compute_rate, c->link_mbps, c->link_idle_mbps,
                                      c->ir_send, c->ir_recv, c->link_mbps * bps};
    }
    double window = SETUP_METER_PLATFORM / cfg->platform.time_scale;
    core_cfg_t cc = {
        .self = (uint32_t) node,
        .nnodes = (uint32_t) cfg->nnodes,
        .is_root = me->parent < 0,
        .task_count = cfg->tasks.count,
        .task_units = cfg->tasks.units,
        .task_mb = cfg->tasks.input_mb,
        .task_bytes = config_task_bytes (cfg),
        .chunk_bytes = config_chunk_bytes (cfg),
        .window = cfg->platform.window,
        .buffer = cfg->platform.buffer,
        .batch_max = SETUP_BATCH_MAX,
        .batch_delay = SETUP_BATCH_DELAY,
        .policy = policy_find (cfg->policy),
        .pace = cfg->platform.mode == PLATFORM_EMULATED,
        .send_limit_bps = me->send_limit_mbps * bps,
        .meter_window = window > SETUP_METER_MIN ? window : SETUP_METER_MIN,
        .parent = {me->compute_rate, cfg->tasks.input_mb, cfg->tasks.units,
                   me->send_limit_mbps, me->parent < 0},
        .nchildren = me->nchildren,
        .children = kids,
    };
    core_t *core = core_new (&cc, err, errlen);
    free (kids);
    return core;
}
