/*  run — `treefarm run`. See run.h.
 *
 *  The experiment's driver of a session (controller/session.h): it keeps
 *  the progress line, appends the root's RECORDED completions to
 *  tasks.csv as they come, finishes on the root's FINISHED, and at the end
 *  checks that every task was recorded, warns when the emulation fell
 *  behind, and prints the summary.
 */
#include "controller/run.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "controller/bag.h"
#include "controller/cli.h"
#include "controller/progress.h"
#include "controller/results.h"
#include "controller/session.h"
#include "controller/slurm_cli.h"
#include "controller/timeline.h"
#include "overlay/config.h"
#include "overlay/proto.h"
#include "overlay/util.h"
#include "policies/policy.h"

/*  tasks.csv rows reach the disk at least this often (seconds), so a
 *  crash loses at most this much and a full disk shows up promptly. */
#define TASKS_FLUSH_S 1.0

typedef struct {
    progress_t *progress;
    int progress_started;
    double t_tasks_flush;    /* tasks.csv last flushed */
    slurm_watch_t job;   /* the Slurm job's end (slurm_cli.h) */
} run_t;

/*  The root's first completions: append them to tasks.csv. A refused
 *  record is counted (results_record) and the first of each message
 *  refused; a failed write stops the run. */
static int
on_recorded (session_t *s, int node, const proto_msg_t *m, char *err, size_t errlen)
{
    const config_t *cfg = session_config (s);
    results_t *results = session_results (s);
    if (node != cfg->root)
        return tf_error (err, errlen, "from a node that is not the root");
    int refused = 0;
    char why[TF_ERRLEN];
    for (uint32_t i = 0; i < m->ndone; i++)
        if (results_record (results, m->done[i].task, m->done[i].node,
                            json_array_get (m->info, i), why, sizeof why) != 0
            && !refused++)
            snprintf (err, errlen, "%s", why);
    results_note_recorded_at (results, tf_now () - session_started_at (s));
    if (results_check_tasks (results, why, sizeof why) != 0)
        session_fail (s, RESULTS_FAILED, "%s", why);
    return refused ? -1 : 0;
}

/*  FINISHED, only from the root and only while the run is under way. */
static int
on_finished (session_t *s, int node, char *err, size_t errlen)
{
    if (node != session_config (s)->root)
        return tf_error (err, errlen, "from a node that is not the root");
    if (!session_running (s))
        return tf_error (err, errlen, "when the run is not under way");
    session_finish (s, tf_now ());
    return 0;
}

static int
run_message (session_t *s, void *arg, int node, const proto_msg_t *m, char *err,
             size_t errlen)
{
    (void) arg;
    if (m->command == PROTO_FINISHED)
        return on_finished (s, node, err, errlen);
    if (m->command == PROTO_RECORDED)
        return on_recorded (s, node, m, err, errlen);
    return tf_error (err, errlen, "unexpected");
}

/*  The progress line, and tasks.csv pushed to the disk every TASKS_FLUSH_S. */
static void
run_tick (session_t *s, void *arg, double now)
{
    run_t *run = arg;
    if (!run->progress_started) {
        progress_start (run->progress, session_started_at (s));
        run->progress_started = 1;
        slurm_watch_start (&run->job, s);
    }
    slurm_watch_tick (&run->job, s, now);
    /*  Adapting: the live efficiency, against the platform as it now is. */
    progress_set_bound (run->progress, results_live_bound (session_results (s)));
    progress_update (run->progress, results_completed (session_results (s)), now);
    if (now - run->t_tasks_flush < TASKS_FLUSH_S)
        return;
    run->t_tasks_flush = now;
    char err[TF_ERRLEN];
    if (results_flush_tasks (session_results (s), err, sizeof err) != 0)
        session_fail (s, RESULTS_FAILED, "%s", err);
}

/*  tasks.csv is complete: close it, and check that a finished run
 *  recorded every task. */
static void
run_done (session_t *s, void *arg)
{
    (void) arg;
    char err[TF_ERRLEN];
    results_t *results = session_results (s);
    if (results_close_tasks (results, err, sizeof err) != 0)
        session_fail (s, RESULTS_FAILED, "%s", err);
    results_measure_bound (results);
    uint64_t count = config_bag_size (session_config (s)), got = results_recorded (results);
    if (session_finished (s) && got != count)
        session_fail (s, RESULTS_FAILED, "the root finished with %llu of %llu tasks "
                      "recorded", (unsigned long long) got, (unsigned long long) count);
}

/*  An emulation that fell behind its clock says so on the terminal too;
 *  results.json carries the figures (fidelity, efficiency_reliable). */
static void
warn_fidelity (session_t *s)
{
    const config_t *cfg = session_config (s);
    int worst;
    double f = results_fidelity (session_results (s), &worst);
    if (cfg->platform.mode != PLATFORM_EMULATED || f >= RESULTS_FIDELITY_MIN || worst < 0)
        return;
    session_log (s, "warning: node %s was behind the emulated clock %.0f%% of the run "
                 "(fidelity %.2f < %.2f); timings and efficiency are unreliable: lower "
                 "time_scale (now %g)", cfg->nodes[worst].name, 100 * (1 - f), f,
                 RESULTS_FIDELITY_MIN, cfg->platform.time_scale);
}

int
run_adapt_options (config_t *cfg, int adapt, const char *reclaim, const char *command)
{
    if (adapt)
        cfg->platform.adapt = 1;
    /*  Taking a node in is a costly action: only an adapting run weighs
     *  it (docs/adapt.md, "Grow"). */
    /*  The adaptor estimates every node's compute rate and re-plans by
     *  it; a relay's C = 0 is not one it was built to estimate. */
    const config_node_t *root = &cfg->nodes[cfg->root];
    if (cfg->platform.adapt && config_node_is_relay (root))
        return cli_usage_error (command, CLI_EXIT_USAGE, "%s: tree[%d] (node \"%s\") is "
                                "a relay (\"slots\": 0): a run with a relay does not "
                                "adapt yet (--adapt, or \"adapt\": true)", cfg->path,
                                root->index, root->name), -1;
    if (config_joins (cfg) > 0 && !cfg->platform.adapt)
        return cli_usage_error (command, CLI_EXIT_USAGE, "%s: nodes that join the run "
                                "(joins_at_s, join_slots) need --adapt (or \"adapt\": "
                                "true in the platform)", cfg->path), -1;
    if (!reclaim)
        return 0;
    int mode = reclaim_mode_parse (reclaim);
    if (mode < 0)
        return cli_usage_error (command, CLI_EXIT_USAGE, "--reclaim: unknown mode \"%s\" "
                                "(gated, always, never)", reclaim), -1;
    if (!cfg->platform.adapt)
        return cli_usage_error (command, CLI_EXIT_USAGE, "--reclaim needs --adapt (or "
                                "\"adapt\": true in the platform)"), -1;
    cfg->platform.reclaim = (reclaim_mode_t) mode;
    return 0;
}

int
run_endgame_option (config_t *cfg, int no_endgame, const char *command)
{
    if (no_endgame)
        cfg->platform.endgame = 0;
    const policy_t *p = policy_find (cfg->policy);
    if (!cfg->platform.endgame && p && p->root_only)
        return cli_usage_error (command, CLI_EXIT_USAGE, "%s: the end-game switched off "
                                "(--no-endgame, or \"endgame\": false) makes no sense "
                                "with policy %s: it sends no task to a child, so it has "
                                "no end-game", cfg->path, p->name), -1;
    return 0;
}

int
run_relay_policy (const config_t *cfg, const char *policy, char *err, size_t errlen)
{
    const policy_t *p = policy_find (policy);
    const config_node_t *root = &cfg->nodes[cfg->root];
    if (!p || !p->root_only || !config_node_is_relay (root))
        return 0;
    return tf_error (err, errlen, "%s: policy %s computes every task on the root, and "
                     "tree[%d] (node \"%s\") is a relay (\"slots\": 0) that computes "
                     "none", cfg->path, p->name, root->index, root->name);
}

int
run_ia_order_option (config_t *cfg, const char *order, const char *command)
{
    if (!order)
        return 0;
    int both = config_ia_order_parse (order);
    if (both < 0)
        return cli_usage_error (command, CLI_EXIT_USAGE, "--ia-order: unknown order \"%s\" "
                                "(alone, both)", order), -1;
    cfg->platform.ia_order_both = both;
    return 0;
}

config_t *
run_load_experiment (const char *path, const char *policy, const char *load_path)
{
    config_t *cfg = session_load_config (path, load_path);
    if (!cfg)
        return NULL;
    if (policy)
        config_set_policy (cfg, policy);
    if (!policy_find (cfg->policy)) {
        char names[256];
        policy_names (names, sizeof names);
        session_log (NULL, "%s: policy \"%s\" is unknown (known: %s)", path, cfg->policy,
                     names);
        config_destroy (&cfg);
        return NULL;
    }
    config_set_policy (cfg, policy_find (cfg->policy)->name);
    char err[TF_ERRLEN];
    if (run_relay_policy (cfg, cfg->policy, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        config_destroy (&cfg);
    }
    return cfg;
}

/*  --trace FILE: the nodes' timelines as a Chrome trace (controller/
 *  timeline.h), whatever the outcome: what arrived. A file that cannot
 *  be written fails a run that was otherwise complete. */
static int
write_trace (session_t *s, const char *path, int code)
{
    char err[TF_ERRLEN], warn[TF_ERRLEN];
    if (timeline_write_run (path, session_config (s), session_results (s), warn,
                            sizeof warn, err, sizeof err) != 0) {
        session_log (s, "%s", err);
        return code == CLI_EXIT_OK ? CLI_EXIT_FAILED : code;
    }
    if (*warn)
        session_log (s, "warning: --trace: %s (left without spans)", warn);
    printf ("trace: %s\n", path);
    return code;
}

/*  Run a prepared session to its end; print the outcome unless quiet is
 *  RUN_SILENT. */
static int
run_execute (session_t *s, run_quiet_t quiet, const char *trace)
{
    const config_t *cfg = session_config (s);
    char *label = xasprintf ("%s/%s", cfg->name, cfg->policy);
    run_t run = {.progress = progress_new (stdout, quiet ? PROGRESS_QUIET : PROGRESS_AUTO,
                                           label, config_bag_size (cfg),
                                           cfg->platform.time_scale)};
    free (label);
    session_set_progress (s, run.progress);
    session_driver_t driver = {.tick = run_tick, .message = run_message,
                               .done = run_done, .arg = &run};
    /*  Past `ulimit -f`, write() must fail with EFBIG, not kill us. */
    signal (SIGXFSZ, SIG_IGN);
    int code = session_execute (s, &driver);
    if (session_started_at (s))
        progress_finish (run.progress, results_completed (session_results (s)),
                         session_ended_at (s));
    if (quiet != RUN_SILENT)
        warn_fidelity (s);   /* a silent run's caller reports fidelity itself */
    session_set_progress (s, NULL);
    progress_destroy (&run.progress);
    if (quiet != RUN_SILENT) {
        results_print_summary (session_results (s), stdout);
        printf ("results: %s/results.json\n", session_dir (s));
    }
    if (trace)
        code = write_trace (s, trace, code);
    fflush (stdout);
    if (code == CLI_EXIT_OK && results_failed (session_results (s)) > 0)
        code = CLI_EXIT_FAILED;   /* every task ran; some failed */
    return code;
}

/*  The session of *cfg_p (taken) with the bag bo names, its tasks.csv
 *  open and its run object set; run it. Returns the exit status. */
static int
run_config (const session_opts_t *opt, const bag_opts_t *bo, config_t **cfg_p,
            run_quiet_t quiet, const char *trace)
{
    char err[TF_ERRLEN];
    config_t *cfg = *cfg_p;
    *cfg_p = NULL;
    bag_t *bag = cfg ? bag_new (bo, cfg, err, sizeof err) : NULL;
    if (cfg && !bag)
        session_log (NULL, "%s", err);
    session_t *s = bag ? session_new (opt, &cfg) : NULL;
    json_t *run = NULL;
    if (s && (results_open_tasks (session_results (s), session_dir (s), err, sizeof err)
              || !(run = bag_prepare (bag, session_dir (s), session_config (s),
                                      session_results (s), err, sizeof err)))) {
        session_log (NULL, "%s", err);
        session_destroy (&s);
    }
    int code = CLI_EXIT_USAGE;
    if (s) {
        session_set_run (s, run);
        if (bag_resumed (bag))
            session_log (s, "resuming: %llu tasks are done already",
                         (unsigned long long) bag_resumed (bag));
        results_set_resumed (session_results (s), bag_resumed (bag));
        code = run_execute (s, quiet, trace);
    }
    json_decref (run);
    session_destroy (&s);
    bag_destroy (&bag);
    config_destroy (&cfg);
    return code;
}

int
run_synthetic (const session_opts_t *opt, config_t **cfg_p, run_quiet_t quiet)
{
    bag_opts_t bo = {.retries = NAN, .out_dir = opt->out_dir};
    return run_config (opt, &bo, cfg_p, quiet, NULL);
}

/* ------------------------------------------------------------------------
 *  The command line.
 */

/*  The options of `treefarm run`, for its usage. */
static void
usage_options (FILE *out)
{
    fprintf (out,
             "options:\n"
             "  --tasks FILE       command tasks, JSON Lines (docs/commands.md)\n"
             "  --command CMD      one task per file of --inputs, GNU parallel style:\n"
             "                     {} the staged input, {/} its base name, {.} without\n"
             "                     extension, {/.} both, {#} the sequence number\n"
             "  --inputs GLOB      the files for --command, e.g. 'data/*.txt'\n"
             "  --retries N        tries of a failing command on other nodes (default 2)\n"
             "  --resume           continue the run in --out DIR: skip every task its\n"
             "                     journal holds\n"
             "  --policy NAME      scheduling policy instead of the config's\n"
             "                     (see `treefarm policies`)\n"
             "  --load FILE        background load on nodes: a JSON object, node name\n"
             "                     -> load, replacing the config's (docs/config.md,\n"
             "                     \"load\"; docs/load.md)\n"
             "  --adapt            estimate the rates live, declare their changes and\n"
             "                     re-plan with them (platform \"adapt\": true;\n"
             "                     docs/adapt.md)\n"
             "  --reclaim MODE     with --adapt, when a parent takes back what a slowed\n"
             "                     child holds: gated (when it pays, the default),\n"
             "                     always, never (platform \"reclaim\")\n"
             "  --no-endgame       no end-game: hand tasks out to the last, copy none\n"
             "                     (platform \"endgame\": false; docs/policies.md)\n"
             "  --ia-order ORDER   which IR_s the IA order ranks children by: alone\n"
             "                     (measured while the parent computes alone, a\n"
             "                     child's ir_send_alone; the default) or both (its\n"
             "                     ir_send) (platform \"ia_order\"; docs/policies.md)\n"
             "  --out DIR          results directory, created if needed\n"
             "                     (default: results/NAME-YYYYmmdd-HHMMSS)\n"
             "  --trace FILE       write every node's timeline to FILE, Chrome trace-\n"
             "                     event JSON for ui.perfetto.dev or chrome://tracing\n"
             "  --quiet            no progress line\n"
             "  --node-bin PATH    the treefarm-node to run (default: $TREEFARM_NODE,\n"
             "                     else the one next to treefarm, else on PATH)\n"
             "  --timeout SECONDS  fail the run after SECONDS of wall time\n");
}

/*  The options of `treefarm run` about where the nodes run. */
static void
usage_deploy_options (FILE *out)
{
    fprintf (out,
             "  --ssh-config FILE  ssh -F FILE for every ssh host (default: ssh's own,\n"
             "                     ~/.ssh/config)\n"
             "  --push-binary      copy the node binary to every ssh host first, into\n"
             "                     ~/.cache/treefarm/treefarm-node-HASH (skipped when\n"
             "                     there); without it the node must be at the same path\n"
             "                     or on the remote PATH\n");
    slurm_cli_usage (out);
    fprintf (out,
             "  --curve            CURVE on every socket: each peer authenticated by a\n"
             "                     key made for the run, traffic encrypted (the\n"
             "                     default when a node is on an ssh or slurm host;\n"
             "                     docs/security.md)\n"
             "  --no-curve         plain TCP, even with ssh hosts (trusted networks)\n"
             "  -h, --help         show this help\n");
}

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm run CONFIG [--policy NAME] [--out DIR] [--quiet]\n"
             "                           [--node-bin PATH] [--timeout SECONDS]\n"
             "                           [--tasks FILE | --command CMD --inputs GLOB]\n"
             "                           [--retries N] [--resume]\n"
             "                           [--ssh-config FILE] [--push-binary]\n"
             "                           [--slurm | --slurm-args ARGS]\n"
             "                           [--tree auto --fanout K]\n"
             "                           [--curve | --no-curve] [--trace FILE]\n"
             "                           [--load FILE] [--adapt [--reclaim MODE]]\n"
             "                           [--no-endgame] [--ia-order ORDER]\n"
             "\n"
             "Run the experiment CONFIG on a tree of treefarm-node processes, one per\n"
             "node, each where its host says (local, ssh://[user@]host[:port],\n"
             "netns:NAME, slurm; docs/deploy.md), show its progress, and write results.json,\n"
             "nodes.csv and tasks.csv into the results directory; command tasks'\n"
             "outputs land in DIR/tasks/ID/ (docs/commands.md).\n"
             "\n");
    usage_options (out);
    usage_deploy_options (out);
    fprintf (out,
             "\n"
             "environment:\n"
             "  TREEFARM_NODE          the node binary, as --node-bin\n"
             "  TREEFARM_NODE_WRAPPER  words put before every node's command line,\n"
             "                         e.g. \"valgrind --error-exitcode=99 -q\"\n"
             "\n"
             "Before anything starts, every ssh host is reached (ssh -o BatchMode=yes)\n"
             "and must run the node, every namespace must exist, and with --slurm the\n"
             "allocation must hold every node and its hosts resolve here.\n"
             "\n"
             "exit status: 0 complete, 1 the run failed or a command failed after its\n"
             "last attempt, 2 bad usage, config, tasks file or a host that cannot be\n"
             "used, 130 interrupted. No node process outlives the command.\n");
}


/*  --trace FILE: it can be written, and the bag records what the trace
 *  needs. Returns -1 to go on, or the exit code. */
static int
trace_option (const char *trace, const char *out_dir, bag_opts_t *bo)
{
    char err[TF_ERRLEN];
    if (trace && timeline_check_path (trace, out_dir, err, sizeof err) != 0)
        return cli_usage_error ("run", CLI_EXIT_USAGE, "%s", err);
    bo->trace = trace != NULL;
    return -1;
}

int
run_main (int argc, char **argv)
{
    const char *policy = NULL, *path = NULL, *trace = NULL;
    const char *reclaim = NULL, *ia_order = NULL;
    slurm_cli_t so = {0};
    int quiet = 0, curve_on = 0, curve_off = 0, adapt = 0, no_endgame = 0;
    session_opts_t opt = {.command = "run"};
    bag_opts_t bo = {.retries = NAN};
    const cli_option_t options[] = {
        {"policy", CLI_STRING, &policy, NULL},
        {"out", CLI_STRING, &opt.out_dir, NULL},
        {"quiet", CLI_FLAG, &quiet, NULL},
        {"node-bin", CLI_STRING, &opt.node_bin, NULL},
        {"timeout", CLI_POSITIVE, &opt.timeout, "a positive number of seconds"},
        {"tasks", CLI_STRING, &bo.tasks_file, NULL},
        {"command", CLI_STRING, &bo.command, NULL},
        {"inputs", CLI_STRING, &bo.inputs, NULL},
        {"retries", CLI_NONNEGATIVE, &bo.retries, "a number of tries"},
        {"resume", CLI_FLAG, &bo.resume, NULL},
        {"ssh-config", CLI_STRING, &opt.ssh_config, NULL},
        {"push-binary", CLI_FLAG, &opt.push_binary, NULL},
        {"slurm", CLI_FLAG, &opt.slurm, NULL},
        {"slurm-args", CLI_STRING, &so.args, NULL},
        {"tree", CLI_STRING, &so.tree, NULL},
        {"fanout", CLI_POSITIVE, &so.fanout, "a number of children"},
        {"curve", CLI_FLAG, &curve_on, NULL},
        {"no-curve", CLI_FLAG, &curve_off, NULL},
        {"trace", CLI_STRING, &trace, NULL},
        {"load", CLI_STRING, &so.load, NULL},
        {"adapt", CLI_FLAG, &adapt, NULL},
        {"reclaim", CLI_STRING, &reclaim, NULL},
        {"no-endgame", CLI_FLAG, &no_endgame, NULL},
        {"ia-order", CLI_STRING, &ia_order, NULL},
    };
    int code = cli_parse ("run", argc, argv, options, sizeof options / sizeof *options,
                          usage, &path);
    if (code < 0 && (code = session_curve_flags ("run", curve_on, curve_off, &opt.curve)) < 0)
        code = trace_option (trace, opt.out_dir, &bo);
    if (code >= 0)
        return code;
    opt.config_path = path;
    bo.out_dir = opt.out_dir;
    config_t *cfg = run_load_experiment (path, policy, so.load);
    if (cfg && (run_adapt_options (cfg, adapt, reclaim, "run") != 0
                || run_endgame_option (cfg, no_endgame, "run") != 0
                || run_ia_order_option (cfg, ia_order, "run") != 0
                || slurm_cli_apply (&cfg, &so, opt.slurm, path, argc, argv) != 0))
        config_destroy (&cfg);
    return cfg ? run_config (&opt, &bo, &cfg, quiet ? RUN_QUIET : RUN_LOUD, trace)
               : CLI_EXIT_USAGE;
}
