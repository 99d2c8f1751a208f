/*  run — `treefarm run`. See run.h.
 *
 *  The experiment's driver of a session (controller/session.h): it keeps
 *  the progress line, appends the root's RECORDED completions to
 *  tasks.csv as they come, finishes on the root's FINISHED, and at the end
 *  checks that every task was recorded, warns when the emulation fell
 *  behind, and prints the summary.
 */
#include "controller/run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "controller/cli.h"
#include "controller/progress.h"
#include "controller/results.h"
#include "controller/session.h"
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
        if (results_record (results, m->done[i].task, m->done[i].node, why, sizeof why)
                != 0
            && !refused++)
            snprintf (err, errlen, "%s", why);
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
    }
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
    uint64_t count = session_config (s)->tasks.count, got = results_recorded (results);
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

/*  The experiment at path with the policy the command line names, if any,
 *  spelled as the registry does (IA:Single, ia_single, ...: "ia-single").
 *  NULL after printing why. */
static config_t *
load_experiment (const char *path, const char *policy)
{
    config_t *cfg = session_load_config (path);
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
    return cfg;
}

/*  Run a prepared session to its end; print the outcome. */
static int
run_execute (session_t *s, int quiet)
{
    const config_t *cfg = session_config (s);
    char *label = xasprintf ("%s/%s", cfg->name, cfg->policy);
    run_t run = {.progress = progress_new (stdout, quiet ? PROGRESS_QUIET : PROGRESS_AUTO,
                                           label, cfg->tasks.count,
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
    warn_fidelity (s);
    session_set_progress (s, NULL);
    progress_destroy (&run.progress);
    results_print_summary (session_results (s), stdout);
    printf ("results: %s/results.json\n", session_dir (s));
    fflush (stdout);
    return code;
}

/* ------------------------------------------------------------------------
 *  The command line.
 */

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm run CONFIG [--policy NAME] [--out DIR] [--quiet]\n"
             "                           [--node-bin PATH] [--timeout SECONDS]\n"
             "                           [--ssh-config FILE] [--push-binary]\n"
             "\n"
             "Run the experiment CONFIG on a tree of treefarm-node processes, one per\n"
             "node, each where its host says (local, ssh://[user@]host[:port],\n"
             "netns:NAME; docs/deploy.md), show its progress, and write results.json,\n"
             "nodes.csv and tasks.csv into the results directory.\n"
             "\n"
             "options:\n"
             "  --policy NAME      scheduling policy instead of the config's\n"
             "                     (see `treefarm policies`)\n"
             "  --out DIR          results directory, created if needed\n"
             "                     (default: results/NAME-YYYYmmdd-HHMMSS)\n"
             "  --quiet            no progress line\n"
             "  --node-bin PATH    the treefarm-node to run (default: $TREEFARM_NODE,\n"
             "                     else the one next to treefarm, else on PATH)\n"
             "  --timeout SECONDS  fail the run after SECONDS of wall time\n"
             "  --ssh-config FILE  ssh -F FILE for every ssh host (default: ssh's own,\n"
             "                     ~/.ssh/config)\n"
             "  --push-binary      copy the node binary to every ssh host first, into\n"
             "                     ~/.cache/treefarm/treefarm-node-HASH (skipped when\n"
             "                     there); without it the node must be at the same path\n"
             "                     or on the remote PATH\n"
             "  -h, --help         show this help\n"
             "\n"
             "environment:\n"
             "  TREEFARM_NODE          the node binary, as --node-bin\n"
             "  TREEFARM_NODE_WRAPPER  words put before every node's command line,\n"
             "                         e.g. \"valgrind --error-exitcode=99 -q\"\n"
             "\n"
             "Before anything starts, every ssh host is reached (ssh -o BatchMode=yes)\n"
             "and must run the node, and every namespace must exist.\n"
             "\n"
             "exit status: 0 complete, 1 the run failed, 2 bad usage or config or a\n"
             "host that cannot be used, 130 interrupted. No node process outlives the\n"
             "command.\n");
}


int
run_main (int argc, char **argv)
{
    const char *policy = NULL, *path = NULL;
    int quiet = 0;
    session_opts_t opt = {.command = "run"};
    const cli_option_t options[] = {
        {"policy", CLI_STRING, &policy, NULL},
        {"out", CLI_STRING, &opt.out_dir, NULL},
        {"quiet", CLI_FLAG, &quiet, NULL},
        {"node-bin", CLI_STRING, &opt.node_bin, NULL},
        {"timeout", CLI_POSITIVE, &opt.timeout, "a positive number of seconds"},
        {"ssh-config", CLI_STRING, &opt.ssh_config, NULL},
        {"push-binary", CLI_FLAG, &opt.push_binary, NULL},
    };
    int code = cli_parse ("run", argc, argv, options, sizeof options / sizeof *options,
                          usage, &path);
    if (code >= 0)
        return code;
    opt.config_path = path;
    config_t *cfg = load_experiment (path, policy);
    session_t *s = cfg ? session_new (&opt, &cfg) : NULL;
    char err[TF_ERRLEN];
    if (s && results_open_tasks (session_results (s), session_dir (s), err, sizeof err)) {
        session_log (NULL, "%s", err);
        session_destroy (&s);
    }
    if (!s) {
        config_destroy (&cfg);
        return CLI_EXIT_USAGE;
    }
    code = run_execute (s, quiet);
    session_destroy (&s);
    return code;
}
