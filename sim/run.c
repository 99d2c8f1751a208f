/*  run — a simulation from the config to its results. See sim.h.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include "node/bgload.h"
#include "node/core_report.h"
#include "node/observe.h"
#include "node/setup.h"
#include "overlay/load.h"
#include "sim/commands.h"
#include "sim/platform.h"
#include "sim/sim_int.h"

void
sim_fail (sim_t *s, const char *fmt, ...)
{
    if (!s->failed) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (s->error, sizeof s->error, fmt, ap);
        va_end (ap);
    }
    s->failed = 1;
    s->finished = 1;
    sg_actor_kill_all ();
}

void
sim_progress (sim_t *s, double now, int last)
{
    double wall = tf_now ();
    if (!s->progress || (!last && wall - s->shown < (s->progress == 1 ? SIM_PROGRESS_S
                                                                       : 10 * SIM_PROGRESS_S)))
        return;
    s->shown = wall;
    uint64_t total = config_bag_size (s->cfg);
    fprintf (stderr, "%s[%s/%s] simulated %llu/%llu tasks  %.1f%%  %.1f platform s  "
             "wall %.1f s%s", s->progress == 1 ? "\r" : "", s->cfg->name, s->cfg->policy,
             (unsigned long long) s->recorded, (unsigned long long) total,
             100.0 * (double) s->recorded / (double) total,
             now * s->cfg->platform.time_scale, wall - s->wall0,
             s->progress == 1 && !last ? "" : "\n");
}

int
sim_check (const config_t *cfg, char *err, size_t errlen)
{
    /*  The config's offered nodes are offered at their second as a run
     *  offers them (sim/join.c); `treefarm join` offers a node to a
     *  running process, and a simulation is none. */
    if (cfg->join_slots)
        return tf_error (err, errlen, "%s: platform \"join_slots\" is for treefarm join, "
                         "which offers a node to a running run's process: a simulation "
                         "has none to offer it to (docs/simulate.md, \"What is "
                         "simulated\")", cfg->path);
    if (cfg->noffered && cfg->commands.count)
        return tf_error (err, errlen, "%s: nodes offered during the run (joins_at_s) with "
                         "command tasks are not simulated yet (docs/simulate.md, \"What "
                         "is simulated\")", cfg->path);
    if (cfg->tasks.count == 0 && cfg->commands.count == 0)
        return tf_error (err, errlen, "%s: no \"tasks\": give them, or command tasks "
                         "(--tasks FILE or --command CMD --inputs GLOB)", cfg->path);
    if (config_node_is_relay (&cfg->nodes[cfg->root]))
        return tf_error (err, errlen, "%s: tree[%d] (node \"%s\") is a relay (\"slots\": "
                         "0): relays are not simulated yet", cfg->path, cfg->root,
                         cfg->nodes[cfg->root].name);
    for (int i = 0; i < cfg->nnodes; i++)
        if (cfg->nodes[i].depth > SIM_MAX_DEPTH)
            return tf_error (err, errlen, "%s: node \"%s\" is %d levels deep; a simulated "
                             "tree has at most %d", cfg->path, cfg->nodes[i].name,
                             cfg->nodes[i].depth, SIM_MAX_DEPTH);
    return 0;
}

/*  The platform into a temporary file (and opts' copy), loaded. */
static int
load_platform (const config_t *view, const sim_opts_t *opts, char *err, size_t errlen)
{
    char path[] = "/tmp/treefarm-sim-XXXXXX.xml";
    int fd = mkstemps (path, 4);
    FILE *out = fd >= 0 ? fdopen (fd, "w") : NULL;
    if (!out) {
        tf_error (err, errlen, "cannot write a temporary platform file: %s", strerror (errno));
        if (fd >= 0)
            close (fd), unlink (path);
        return -1;
    }
    int bad = sim_platform_write (view, out);
    bad |= fclose (out) != 0;
    if (!bad && opts->platform_xml) {
        FILE *copy = fopen (opts->platform_xml, "w");
        bad = !copy || sim_platform_write (view, copy) != 0;
        if (copy && fclose (copy) != 0)
            bad = 1;
        if (bad) {
            tf_error (err, errlen, "cannot write %s: %s", opts->platform_xml,
                     strerror (errno));
            unlink (path);
            return -1;
        }
    }
    if (bad) {
        tf_error (err, errlen, "cannot write the platform file %s", path);
        unlink (path);
        return -1;
    }
    simgrid_load_platform (path);
    unlink (path);
    return 0;
}

/*  SimGrid's engine, its network model chosen (docs/simulate.md, "The
 *  network model"): CM02, a flow gets its max-min fair share of every
 *  link it crosses and takes the links' latencies, with no TCP window
 *  cap, no bandwidth or latency correction factors and no cross-traffic
 *  of acknowledgements; quiet unless something is wrong. */
static void
init_engine (void)
{
    static char name[] = "treefarm-sim";
#ifdef __SANITIZE_ADDRESS__
    /*  AddressSanitizer cannot follow SimGrid's own stack switching
     *  (raw contexts): under it, every actor is a thread of its own. It
     *  must be said before the engine starts. */
    static char threads[] = "--cfg=contexts/factory:thread";
    static char *argv[] = {name, threads, NULL};
    int argc = 2;
#else
    static char *argv[] = {name, NULL};
    int argc = 1;
#endif
    xbt_log_control_set ("root.thresh:warning");
    simgrid_init (&argc, argv);
    sg_cfg_set_string ("network/model", "CM02");
    sg_cfg_set_double ("network/TCP-gamma", 0);
    sg_cfg_set_boolean ("network/crosstraffic", "no");
    sg_cfg_set_int ("contexts/stack-size", SIM_STACK_KIB);
}

/*  Link `name` if it is "<prefix><i><suffix>" for a node i, into
 *  links[i]. */
static void
match_link (sim_t *s, sg_link_t link, const char *name, const char *format,
            sg_link_t *links)
{
    int i, end = -1;   /* sscanf counts i even when the suffix fails */
    if (sscanf (name, format, &i, &end) == 1 && end > 0 && name[end] == '\0' && i >= 0
        && i < s->view->nnodes)
        links[i] = link;
}

/*  Every node's link from its parent, the way down (sim/platform.h's
 *  "l<i>_DOWN"), into s->down, and its send limit's ("s<i>") into
 *  s->limit: by one pass over SimGrid's links, as a lookup by name walks
 *  every zone. Returns 0, or -1 with a message when a link down is
 *  missing. */
static int
find_down_links (sim_t *s, char *err, size_t errlen)
{
    s->down = xcalloc (s->view->nnodes, sizeof *s->down);
    s->limit = xcalloc (s->view->nnodes, sizeof *s->limit);
    size_t n = sg_link_count ();
    sg_link_t *all = sg_link_list ();
    for (size_t k = 0; k < n; k++) {
        const char *name = sg_link_get_name (all[k]);
        match_link (s, all[k], name, "l%d_DOWN%n", s->down);
        match_link (s, all[k], name, "s%d%n", s->limit);
    }
    free (all);
    for (int i = 0; i < s->view->nnodes; i++)
        if (s->view->nodes[i].parent >= 0 && !s->down[i])
            return tf_error (err, errlen, "the platform has no link l%d_DOWN (node %s)",
                             i, s->view->nodes[i].name);
    return 0;
}

/*  The root's view of a command task: its input bytes (units: 1, as the
 *  runtime's root says; its time is the simulation's, sim/commands.h). */
static core_task_info_t
command_info (void *arg, uint64_t task)
{
    const sim_t *s = arg;
    return (core_task_info_t){.bytes = sim_commands_bytes_in (s->commands, task),
                              .units = 1};
}

/*  Node n's channels: a mailbox each way to its parent and to each
 *  child slot, vacant ones too, "m<from>-<to>" (view indices); its links
 *  the way down, for its interference; its children's slots. */
static void
make_channels (sim_t *s, sim_node_t *n)
{
    const config_node_t *me = &s->view->nodes[n->at];
    n->nchan = 1 + me->nchildren;
    n->in = xcalloc (n->nchan, sizeof *n->in);
    n->out = xcalloc (n->nchan, sizeof *n->out);
    n->rx = xcalloc (n->nchan, sizeof *n->rx);
    n->rx_data = xcalloc (n->nchan, sizeof *n->rx_data);
    n->comms = xcalloc (n->nchan, sizeof *n->comms);
    n->chan = xcalloc (n->nchan, sizeof *n->chan);
    n->send = xcalloc (n->nchan, sizeof *n->send);
    n->closed = xcalloc (n->nchan, sizeof *n->closed);
    n->observed = xcalloc (n->nchan, sizeof *n->observed);
    n->kid_down = xcalloc (n->nchan, sizeof *n->kid_down);
    for (int c = 0; c < n->nchan; c++) {
        int peer = c == 0 ? me->parent : me->children[c - 1];
        if (peer < 0)
            continue;
        char box[64];
        snprintf (box, sizeof box, "m%d-%d", peer, n->at);
        n->in[c] = sg_mailbox_by_name (box);
        snprintf (box, sizeof box, "m%d-%d", n->at, peer);
        n->out[c] = sg_mailbox_by_name (box);
    }
    for (int k = 0; k < me->nchildren; k++) {
        int kid = sim_join_node_of (s, me->children[k]);
        if (kid >= 0)
            s->nodes[kid].slot = k;
        n->kid_down[k] = s->down[me->children[k]];
    }
    n->down = me->parent < 0 ? NULL : s->down[n->at];
    /*  A slot's send limit link is there whether or not the node that
     *  takes it has one (sim/platform.h): only a limit is one. */
    n->limit = me->send_limit_mbps > 0 ? s->limit[n->at] : NULL;
}

int
sim_node_build (sim_t *s, int i, int at, char *err, size_t errlen)
{
    const config_t *cfg = s->view;
    const config_node_t *me = &cfg->nodes[at];
    sim_node_t *n = &s->nodes[i];
    setup_opts_t o = setup_opts_default ();
    o.pace = SETUP_PACE_OFF;
    o.meter_min = 0;
    /*  The plan computed once is of the tree at the start: a node that
     *  joined has its own of the tree it joined, as a joined process does. */
    o.plan_tree = s->nodes[i].joined ? NULL : s->plan;
    setup_bag_t bag = {command_info, s};
    o.bag = s->commands ? &bag : NULL;
    n->sim = s;
    n->index = i;
    n->at = at;
    n->core = setup_core (cfg, at, &o, err, errlen);
    if (!n->core)
        return -1;
    char name[64];
    snprintf (name, sizeof name, "n%d", at);
    n->host = sg_host_by_name (name);
    n->speed = me->compute_rate * cfg->platform.time_scale;
    make_channels (s, n);
    n->neng = cfg->commands.count && me->slots ? (int) me->slots : 1;   /* 0: 1 */
    n->eng = xcalloc (n->neng, sizeof *n->eng);
    for (int k = 0; k < me->nchildren; k++)
        n->send[k] = cfg->nodes[me->children[k]].ir_send;
    n->emul = emul_new (me->nchildren, me->parent < 0 ? 0 : me->ir_recv, n->send,
                        setup_bps_per_mbps (cfg), 1);
    if (!emul_interferes (n->emul))
        emul_destroy (&n->emul);
    n->emul_speed = n->load_factor = 1;
    if (n->down)
        n->down_bps = sg_link_get_bandwidth (n->down);
    if (me->load) {
        char why[TF_ERRLEN];
        n->bg = bgload_new (me->load, me->name, me->ir_recv,
                            me->parent >= 0 ? me->link_mbps : 0, why, sizeof why);
        if (!n->bg)
            return tf_error (err, errlen, "node \"%s\": load: %s", me->name, why);
        n->load_factor = bgload_factor (n->bg);
    }
    sim_adapt_new (n);
    n->sample_at = -1;
    n->observe = observe_new (me->nchildren, SIM_SAMPLES, cfg->platform.sample_ms / 1000.0,
                              cfg->platform.time_scale, setup_bps_per_mbps (cfg));
    if (s->tracing)
        n->trace = trace_new (TRACE_MAX_SPANS, (uint32_t) n->neng, (uint32_t) me->nchildren);
    return 0;
}

/*  Node i of the tree from the start: built, its actor created. */
static int
make_node (sim_t *s, int i, char *err, size_t errlen)
{
    if (sim_node_build (s, i, i, err, errlen) != 0)
        return -1;
    sim_node_t *n = &s->nodes[i];
    sg_actor_t a = sg_actor_init (s->cfg->nodes[i].name, n->host);
    sg_actor_set_data (a, n);
    sg_actor_start_ (a, sim_node_main, 0, NULL);
    return 0;
}

static void
free_nodes (sim_t *s)
{
    for (int i = 0; s->nodes && i < s->cfg->nnodes; i++) {
        sim_node_t *n = &s->nodes[i];
        core_destroy (&n->core);
        free (n->in);
        free (n->out);
        free (n->rx);
        free (n->rx_data);
        free (n->comms);
        free (n->chan);
        free (n->send);
        free (n->closed);
        free (n->kid_down);
        free (n->eng);
        emul_destroy (&n->emul);
        bgload_destroy (&n->bg);
        trace_destroy (&n->trace);
        observe_destroy (&n->observe);
        free (n->observed);
        sim_adapt_free (n);
    }
    free (s->nodes);
    free (s->down);
    free (s->limit);
    bound_tree_destroy (&s->plan);
    sim_join_free (s);
}

/*  Node n's effective compute rate over the run, as a node measures
 *  it (docs/measure.md): the units of the tasks it finished (a command
 *  counts 1, as in the core) over the platform seconds its engines were
 *  busy (unknown, NaN, if it computed nothing);
 *  with a background load, what its description predicts at the end,
 *  the background's realized share of the CPU and its kind (a dedicated
 *  node's are left to the results). */
static proto_rate_stats_t
effective_rate (const sim_t *s, const sim_node_t *n, const core_stats_t *c)
{
    proto_rate_stats_t r = {.measured = NAN, .measured_se = NAN, .predicted = NAN,
                            .load_utilization = NAN};
    double ts = s->cfg->platform.time_scale, busy = n->busy_s * ts;
    if (c->computed > 0 && busy > 0)
        r.measured = n->units_done / busy;
    const config_node_t *me = &s->cfg->nodes[n->index];
    if (n->bg) {
        double end = s->finished_at * ts;
        r.predicted = me->compute_rate
                    * load_predict (me->load, end, me->ir_recv,
                                    me->parent >= 0 ? me->link_mbps : 0);
        r.load_utilization = end > 0 ? bgload_busy_integral (n->bg) / end : NAN;
        snprintf (r.load_kind, sizeof r.load_kind, "%s", load_kind_str (me->load));
    }
    return r;
}

/*  Node n's timeline into st as its REPORT would carry it: its spans as
 *  text, whole up to the first one dropped. */
static void
trace_text (const sim_t *s, const sim_node_t *n, proto_stats_t *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    if (!out)
        return;
    int bad = trace_write (n->trace, out);
    if (fclose (out) != 0 || bad) {
        free (text);
        return;
    }
    double first;
    st->trace_csv = text;
    st->trace_dropped = trace_dropped (n->trace, &first);
    st->trace_end = st->trace_dropped ? first : s->finished_at;
}

/*  Node n's samples into st as its REPORT would carry them (CSV, the
 *  children's names as columns, platform units). */
static void
samples_text (const sim_t *s, sim_node_t *n, proto_stats_t *st)
{
    const config_node_t *me = &s->view->nodes[n->at];
    const char **names = xcalloc (me->nchildren + 1, sizeof *names);
    for (int k = 0; k < me->nchildren; k++)
        names[k] = s->view->nodes[me->children[k]].name;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    int bad = !out || observe_write_csv (n->observe, out, names,
                                         CONFIG_MB * s->cfg->platform.payload_scale) != 0;
    if (out && fclose (out) != 0)
        bad = 1;
    free (names);
    if (bad)
        free (text);
    else
        st->samples_csv = text;
}

/*  Every node's counters, as its REPORT would give them. */
static void
file_reports (sim_t *s)
{
    const config_t *cfg = s->cfg;
    char err[TF_ERRLEN];
    for (int i = 0; i < cfg->nnodes; i++) {
        sim_node_t *n = &s->nodes[i];
        if (!n->core)
            continue;   /* admitted, but the run ended before it joined */
        const config_node_t *me = &s->view->nodes[n->at];
        core_stats_t c = core_stats (n->core);
        proto_stats_t st = core_report_counters (&c);
        if (n->running)
            n->busy_s += s->finished_at - n->busy_since;
        st.compute_seconds = n->busy_s;
        st.speed_mean = n->emul ? emul_speed_mean (n->emul) : 1;
        st.rate = effective_rate (s, n, &c);
        st.slots = (uint64_t) n->neng;
        st.children = xcalloc (me->nchildren + 1, sizeof *st.children);
        for (int k = 0; k < me->nchildren; k++) {
            const config_node_t *kid = &s->view->nodes[me->children[k]];
            if (kid->vacant)   /* no child: nothing to say, as a node's REPORT */
                continue;
            core_child_stats_t cs = core_child_stats (n->core, k);
            st.children[st.nchildren++] = (proto_child_stats_t){
                .name = xstrdup (kid->name), .tasks = cs.tasks_sent,
                .bytes = cs.bytes_sent, .requested = cs.requested,
                .send_seconds = cs.send_seconds};
        }
        if (n->trace)
            trace_text (s, n, &st);
        samples_text (s, n, &st);
        sim_adapt_report (n, &st);
        if (results_update_report (s->results, i, &st, err, sizeof err) != 0)
            sim_fail (s, "%s", err);
        proto_stats_clear (&st);
    }
}

/*  Everything before the run: the cores' view, the engine, the platform,
 *  the plan, every node of the tree at START and its actor, and the
 *  offers' actor. Returns 0, or -1 with err, all freed. */
static int
set_up (sim_t *s, const sim_opts_t *opts, char *err, size_t errlen)
{
    const config_t *cfg = s->cfg;
    int nnodes = cfg->nnodes;   /* the tree at START: those that join come later */
    if (sim_join_prepare (s, err, errlen) != 0)
        return -1;
    init_engine ();
    s->nodes = xcalloc (cfg->capacity > nnodes ? cfg->capacity : nnodes, sizeof *s->nodes);
    if (load_platform (s->view, opts, err, errlen) != 0
        || find_down_links (s, err, errlen) != 0) {
        free_nodes (s);
        return -1;
    }
    bound_app_t app = bound_app_of (cfg);
    s->plan = bound_tree_new (s->view, BOUND_MULTI, &app, NULL, 0);
    s->barrier = sg_barrier_init ((unsigned) nnodes);
    s->shown = tf_now ();
    for (int i = 0; i < nnodes; i++)
        if (make_node (s, i, err, errlen) != 0) {
            free_nodes (s);
            return -1;
        }
    sim_join_start (s);
    return 0;
}

int
sim_run (config_t *cfg, results_t *results, const sim_opts_t *opts, sim_figures_t *fig,
         char *err, size_t errlen)
{
    sim_opts_t none = {0};
    opts = opts ? opts : &none;
    if (sim_check (cfg, err, errlen) != 0)
        return -1;
    sim_t s = {.cfg = cfg, .results = results, .tracing = opts->trace,
               .commands = opts->commands,
               .progress = !opts->progress ? 0 : isatty (2) ? 1 : 2};
    double t0 = tf_now ();
    s.wall0 = t0;
    if (set_up (&s, opts, err, errlen) != 0)
        return -1;
    double setup_s = tf_now () - t0;
    simgrid_run ();
    sim_progress (&s, simgrid_get_clock (), 1);
    if (!s.finished)
        sim_fail (&s, "the tree stalled at %.3f simulated s with %llu of %llu tasks "
                  "recorded", simgrid_get_clock (), (unsigned long long) s.recorded,
                  (unsigned long long) config_bag_size (cfg));
    if (!s.failed)
        file_reports (&s);
    results_set_wall (results, s.failed ? simgrid_get_clock () : s.finished_at, !s.failed);
    results_set_status (results, s.failed ? RESULTS_FAILED : RESULTS_COMPLETE,
                        s.failed ? s.error : NULL);
    if (fig)
        *fig = (sim_figures_t){.makespan = s.finished_at, .events = s.events,
                               .messages = s.messages, .wall_s = tf_now () - t0,
                               .setup_s = setup_s};
    sg_barrier_destroy (s.barrier);
    free_nodes (&s);
    if (s.failed)
        tf_error (err, errlen, "%s", s.error);
    return s.failed ? -1 : 0;
}
