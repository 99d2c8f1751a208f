/*  build — the decision core of a node and what works around it: the
 *  payload store, command tasks' files and workers (and, on the root of
 *  a resumed run, the journal's completed tasks), emulated interference,
 *  the subtree bound and the compute engine (node_parts_t). See
 *  node/runtime.h.
 */
#include <unistd.h>

#include "node/runtime.h"
#include "node/setup.h"
#include "overlay/journal.h"
#include "overlay/util.h"

/*  Heap committed at start (tf_heap_reserve), what a node's heap grows by
 *  in a run, reached at once: libzmq's pipes each take a second 16 KiB
 *  queue chunk after their 256th message and keep it (two pipes a
 *  connection: the parent, each child, the controller), and the heap's
 *  churn under load (docs/performance.md, "Scale and memory"). */
#define NODE_HEAP_BASE (64 * 1024)
#define NODE_HEAP_PER_PEER (32 * 1024)

/*  A resumed run: a journaled task is complete already. */
static int
mark_journaled (json_t *record, unsigned line, void *arg)
{
    node_t *self = arg;
    cargo_t *cargo = self->parts.cargo;
    (void) line;
    json_t *id = json_object_get (record, "id"), *task = json_object_get (record, "task");
    int64_t at = json_is_string (id) ? cargo_find (cargo, json_string_value (id))
               : json_is_integer (task) && json_integer_value (task) >= (json_int_t)
                     self->cfg->commands.count ? (int64_t) json_integer_value (task)
                                               : -1;
    if (at >= 0)
        core_mark_done (self->parts.core, (uint64_t) at);
    return 0;
}

/*  Root: the commands' files and the journal. */
static int
root_cargo (node_t *self, char *err, size_t errlen)
{
    int64_t n = cargo_root (self->parts.cargo, self->link.run.tasks,
                            self->link.run.out,
                            self->link.run.journal, err, errlen);
    if (n < 0)
        return -1;
    if ((uint64_t) n != self->cfg->commands.count)
        return tf_error (err, errlen, "the tasks file holds %lld commands, the run %llu",
                         (long long) n, (unsigned long long) self->cfg->commands.count);
    return 0;
}

/*  Root of a resumed run: every task in the journal is done already. */
static int
resume (node_t *self, char *err, size_t errlen)
{
    unsigned torn = 0;
    if (!self->link.run.resume)
        return 0;
    if (journal_load (self->link.run.journal, mark_journaled, self, &torn,
                      err, errlen) != 0)
        return -1;
    if (torn)
        node_log (self, "the journal's last line was torn (a crash): ignored");
    return 0;
}

/*  Command tasks' files and their workers, one a slot (as many slots
 *  as this machine has CPUs when the experiment leaves them out; none on
 *  a relay). */
static int
make_workers (node_t *self, char *err, size_t errlen)
{
    node_parts_t *parts = &self->parts;
    parts->cargo = cargo_new (self->link.run.scratch, self->opts->name, err,
                              errlen);
    if (!parts->cargo)
        return -1;
    config_node_t *me = &self->cfg->nodes[self->me->index];
    /*  A relay's 0 is no default: it runs no command (no worker). */
    if (me->slots == 0 && !config_node_is_relay (me)) {
        long cpus = sysconf (_SC_NPROCESSORS_ONLN);
        me->slots = cpus < 1 ? 1 : cpus > CONFIG_MAX_SLOTS ? CONFIG_MAX_SLOTS
                                                           : (uint32_t) cpus;
    }
    parts->nworkers = me->slots;
    parts->cmdrun = xcalloc (parts->nworkers, sizeof *parts->cmdrun);
    for (uint32_t i = 0; i < parts->nworkers; i++) {
        char *work = xasprintf ("%s/work/%u", cargo_scratch (parts->cargo), i);
        parts->cmdrun[i] = cmdrun_new (work);
        free (work);
    }
    return 0;
}

/*  The decision core (node/setup.h) and, for a run with command tasks,
 *  their files and worker (a run of synthetic tasks alone has neither:
 *  no journal, no thread). */
static int
make_cargo_and_core (node_t *self, char *err, size_t errlen)
{
    int root = self->me->parent < 0;
    if (self->cfg->commands.count > 0 && make_workers (self, err, errlen) != 0)
        return -1;
    if (root && self->parts.cargo && root_cargo (self, err, errlen) != 0)
        return -1;
    setup_bag_t bag = {cargo_task_info, self->parts.cargo};
    setup_opts_t opts = setup_opts_default ();
    opts.bag = self->parts.cargo ? &bag : NULL;
    opts.depth = CMDRUN_DEPTH;
    self->parts.core = setup_core (self->cfg, self->me->index, &opts, err, errlen);
    if (!self->parts.core)
        return -1;
    return root && self->parts.cargo ? resume (self, err, errlen) : 0;
}

/*  How often the busy engine reports progress. Where its speed varies
 *  (real compute, emulated interference) a sample or a calibration
 *  phase's snapshot takes the units of the last report, so every 10 ms
 *  keeps them exact enough to measure IR (a 50-ms period made it_measure's
 *  IRs 20% high). Where the speed is constant, twice per sample interval
 *  (a sample is taken at the first report after it is due, every 1 to
 *  1.5 intervals), within the engine's limits: each report wakes the
 *  loop, and at every 10 ms hundreds of emulated nodes spent most of a
 *  machine's CPU on them (docs/performance.md, "Scale and memory"). */
static double
engine_progress_period (const config_t *cfg, const emul_t *emul)
{
    if (cfg->platform.mode != PLATFORM_EMULATED || emul_interferes (emul))
        return ENGINE_PROGRESS_EVERY;
    double p = cfg->platform.sample_ms / 1000.0 / 2;
    return p < ENGINE_PROGRESS_EVERY ? ENGINE_PROGRESS_EVERY
         : p > ENGINE_PROGRESS_MAX  ? ENGINE_PROGRESS_MAX : p;
}

int
build_parts (node_t *self, char *err, size_t errlen)
{
    const config_t *cfg = self->cfg;
    const config_node_t *me = self->me;
    node_parts_t *parts = &self->parts;
    parts->bps_per_mbps = setup_bps_per_mbps (cfg);
    tf_heap_reserve (NODE_HEAP_BASE + (size_t) (me->nchildren + 2) * NODE_HEAP_PER_PEER);
    parts->payloads = payload_store_new (config_chunk_bytes (cfg));
    payload_tune_allocator ();
    if (make_cargo_and_core (self, err, errlen) != 0)
        return -1;
    double *ir_send = xcalloc (me->nchildren + 1, sizeof *ir_send);
    for (int i = 0; i < me->nchildren; i++)
        ir_send[i] = cfg->nodes[me->children[i]].ir_send;
    parts->emul = emul_new (me->nchildren, me->ir_recv, ir_send, parts->bps_per_mbps,
                            cfg->platform.mode == PLATFORM_EMULATED);
    free (ir_send);
    parts->subtree = subtree_new (cfg, me->index);
    /*  A relay's core never starts a task, so its engine is never given
     *  one: any valid rate does, and 1 keeps the engine's checks. */
    double rate = config_node_is_relay (me) ? 1 : me->compute_rate;
    engine_cfg_t ec = {cfg->platform.mode, rate, cfg->platform.time_scale,
                       cfg->platform.matrix_n, engine_progress_period (cfg, parts->emul),
                       .in_loop = 1, .lazy_kernel = cfg->commands.count > 0};
    parts->engine = engine_new (&ec, err, errlen);
    return parts->engine ? 0 : -1;
}

void
build_close (node_t *self)
{
    node_parts_t *parts = &self->parts;
    engine_destroy (&parts->engine);
    for (uint32_t i = 0; i < parts->nworkers; i++)
        cmdrun_destroy (&parts->cmdrun[i]);
    free (parts->cmdrun);
    cargo_destroy (&parts->cargo);
    core_destroy (&parts->core);
    payload_store_destroy (&parts->payloads);
    emul_destroy (&parts->emul);
    subtree_destroy (&parts->subtree);
}
