/*  setup — a node's core from the experiment. See setup.h. */
#include "node/setup.h"

#include <math.h>
#include <stdlib.h>

#include "overlay/bound.h"
#include "overlay/util.h"
#include "policies/policy.h"

double
setup_bps_per_mbps (const config_t *cfg)
{
    /*  Fewer bytes per platform byte (payload scale), more per second
     *  (time scale). */
    return CONFIG_MB * cfg->platform.payload_scale * cfg->platform.time_scale;
}

setup_opts_t
setup_opts_default (void)
{
    return (setup_opts_t){.pace = SETUP_PACE_AUTO, .batch_max = SETUP_BATCH_MAX,
                          .batch_delay = SETUP_BATCH_DELAY, .meter_min = SETUP_METER_MIN,
                          .depth = 1};
}

core_child_info_t
setup_child_info (const config_t *cfg, int index, double bps)
{
    const config_node_t *c = &cfg->nodes[index];
    if (c->vacant)
        return (core_child_info_t){1, 1, 1, 0, 0, bps, (uint32_t) index, 1, 0, NAN};
    /*  The online fit estimates IR_s with both computing: under "ir":
     *  "measured" the order follows it, not the configured alone rate. */
    int alone = !cfg->platform.ia_order_both && !cfg->platform.ir_measured;
    return (core_child_info_t){c->compute_rate, c->link_mbps, c->link_idle_mbps,
                               c->ir_send, c->ir_recv, c->link_mbps * bps,
                               (uint32_t) index, 0, 0,
                               alone ? c->ir_send_alone : NAN};
}

/*  What a planned split (ia-split) and the end-game's estimates rest
 *  on, from the config's own multi-port bound: each child's subtree
 *  bound and the node's own, and the tasks/s the node itself gets in the
 *  schedule reaching the root's (its target; left INFINITY on the root,
 *  or if the config's bound cannot be had). */
static void
plan (const config_t *cfg, int node, const setup_opts_t *opts, const bound_app_t *app,
      core_child_info_t *kids, double *target, double *that)
{
    char err[TF_ERRLEN];
    bound_tree_t *own = opts->plan_tree ? NULL
                                        : bound_tree_new (cfg, BOUND_MULTI, app, err,
                                                          sizeof err);
    const bound_tree_t *tree = opts->plan_tree ? opts->plan_tree : own;
    if (!tree)
        return;
    const config_node_t *me = &cfg->nodes[node];
    for (int i = 0; i < me->nchildren; i++)
        kids[i].that = tree->nodes[me->children[i]].that;
    if (me->parent >= 0 && tree->nodes[node].t > 0)
        *target = tree->nodes[node].t;
    *that = tree->nodes[node].that;
    bound_tree_destroy (&own);
}

/*  Whether the core paces its links. */
static int
setup_paced (const config_t *cfg, setup_pace_t pace)
{
    if (pace == SETUP_PACE_AUTO)
        return cfg->platform.mode == PLATFORM_EMULATED && !config_kernel_shaped (cfg);
    return pace == SETUP_PACE_ON;
}

/*  Every node's parent (core_cfg_t.tree_parent), or NULL when the run
 *  has no command tasks: the shape matters only to them (where a result
 *  may come from, which subtrees a failed command avoids), and costs
 *  every core nnodes entries. A vacant slot's index names a joining node
 *  elsewhere: unknown. */
static int32_t *
tree_shape (const config_t *cfg)
{
    if (!cfg->commands.count)
        return NULL;
    int32_t *parents = xcalloc (cfg->nnodes, sizeof *parents);
    for (int i = 0; i < cfg->nnodes; i++)
        parents[i] = cfg->nodes[i].vacant ? -1 : cfg->nodes[i].parent;
    return parents;
}

core_t *
setup_core (const config_t *cfg, int node, const setup_opts_t *opts, char *err,
            size_t errlen)
{
    setup_opts_t defaults = setup_opts_default ();
    opts = opts ? opts : &defaults;
    const config_node_t *me = &cfg->nodes[node];
    double bps = setup_bps_per_mbps (cfg);
    bound_app_t app = bound_app_of (cfg);   /* the task size policies see */
    core_child_info_t *kids = xcalloc (me->nchildren + 1, sizeof *kids);
    for (int i = 0; i < me->nchildren; i++)
        kids[i] = setup_child_info (cfg, me->children[i], bps);
    int32_t *parents = tree_shape (cfg);
    double window = SETUP_METER_PLATFORM / cfg->platform.time_scale;
    core_cfg_t cc = {
        .self = (uint32_t) node,
        .nnodes = (uint32_t) cfg->nnodes,
        .is_root = me->parent < 0,
        .task_count = config_bag_size (cfg),
        .task_units = cfg->tasks.count ? cfg->tasks.units : 1,
        .task_mb = app.input_mb,
        .task_bytes = config_task_bytes (cfg),
        .chunk_bytes = config_chunk_bytes (cfg),
        .window = cfg->platform.window,
        .buffer = cfg->platform.buffer,
        .batch_max = opts->batch_max,
        .batch_delay = opts->batch_delay,
        .policy = policy_find (cfg->policy),
        .pace = setup_paced (cfg, opts->pace),
        .send_limit_bps = me->send_limit_mbps * bps,
        .meter_window = window > opts->meter_min ? window : opts->meter_min,
        .parent = {me->compute_rate, app.input_mb, app.units, me->send_limit_mbps,
                   me->parent < 0, me->parent < 0 ? 0 : me->ir_recv, INFINITY,
                   !cfg->platform.ia_order_both},
        .nchildren = me->nchildren,
        .children = kids,
        .command_tasks = cfg->commands.count,
        .slots = cfg->commands.count ? me->slots : 1,
        .depth = cfg->commands.count ? opts->depth : 1,
        .relay = config_node_is_relay (me),
        .max_attempts = cfg->commands.attempts,
        .task_info = opts->bag ? opts->bag->task_info : NULL,
        .task_arg = opts->bag ? opts->bag->arg : NULL,
        .tree_parent = parents,
        .adapt = cfg->platform.adapt,
        .endgame = {.on = cfg->platform.endgame, .time_scale = cfg->platform.time_scale},
    };
    plan (cfg, node, opts, &app, kids, &cc.parent.target, &cc.endgame.that);
    core_t *core = core_new (&cc, err, errlen);
    free (kids);
    free (parents);
    return core;
}
