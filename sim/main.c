/*  treefarm-sim — `treefarm simulate`: a run of the experiment on
 *  SimGrid instead of node processes (docs/simulate.md). The treefarm
 *  command runs this program for `treefarm simulate`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/bag.h"
#include "controller/cli.h"
#include "controller/results.h"
#include "controller/run.h"
#include "controller/timeline.h"
#include "overlay/util.h"
#include "sim/commands.h"
#include "sim/sim.h"

static void usage_options (FILE *out);

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm simulate CONFIG [--policy NAME] [--out DIR] [--quiet]\n"
             "                                [--load FILE] [--adapt [--reclaim MODE]]\n"
             "                                [--no-endgame] [--ia-order ORDER]\n"
             "                                [--trace FILE] [--platform FILE]\n"
             "                                [--tasks FILE | --command CMD --inputs GLOB]\n"
             "                                [--measured DIR] [--task-seconds S]\n"
             "                                [--task-output-mb MB]\n"
             "\n"
             "Simulate the experiment CONFIG on SimGrid: every node's decision core\n"
             "and policy, unchanged, on a simulated host of its compute rate, its\n"
             "link and its parent's send limit simulated links, interference as the\n"
             "model prescribes, background load as its description says. Writes\n"
             "results.json (\"mode\": \"simulated\"), nodes.csv and tasks.csv into the\n"
             "results directory, as `treefarm run` does, and prints the same summary\n"
             "(docs/simulate.md).\n"
             "\n");
    usage_options (out);
    fprintf (out,
             "\n"
             "exit status: 0 complete, 1 the simulation failed, 2 bad usage or\n"
             "config.\n");
}

/*  The options' part of the help. */
static void
usage_options (FILE *out)
{
    fprintf (out,
             "options:\n"
             "  --policy NAME      scheduling policy instead of the config's\n"
             "                     (see `treefarm policies`)\n"
             "  --out DIR          results directory, created if needed\n"
             "                     (default: results/NAME-YYYYmmdd-HHMMSS)\n"
             "  --load FILE        background load on nodes, as for run: a JSON object,\n"
             "                     node name -> load (docs/load.md)\n"
             "  --adapt            estimate the rates live, declare their changes and\n"
             "                     re-plan with them, reclaim from slowed children\n"
             "                     (platform \"adapt\": true; docs/adapt.md; nodes\n"
             "                     offered by joins_at_s are weighed and join as in\n"
             "                     run; join_slots is refused)\n"
             "  --reclaim MODE     with --adapt: gated (default), always, never\n"
             "                     (platform \"reclaim\")\n"
             "  --no-endgame       no end-game (platform \"endgame\": false)\n"
             "  --ia-order ORDER   the IR_s the IA order ranks children by: alone (a\n"
             "                     child's ir_send_alone; the default) or both (its\n"
             "                     ir_send), as for run (platform \"ia_order\")\n"
             "  --trace FILE       write every node's timeline to FILE, Chrome trace-\n"
             "                     event JSON, as run's (docs/trace.md)\n"
             "  --platform FILE    also write the SimGrid platform (XML) to FILE\n"
             "  --tasks FILE       command tasks, as for run (docs/commands.md): their\n"
             "                     inputs move, nothing runs; each takes\n"
             "  --measured DIR     what it took in the finished run in DIR (its\n"
             "                     tasks.csv), scaled by the nodes' compute rates,\n"
             "  --task-seconds S   or S platform seconds on every node, with outputs of\n"
             "  --task-output-mb MB  (default 0; docs/simulate.md, \"Command tasks\")\n"
             "  --command CMD      with --inputs GLOB: one task per file, as for run\n"
             "  --quiet            no progress line\n"
             "  -h, --help         show this help\n");
}

/*  The results directory: --out, or the default; created and writable. */
static char *
out_dir (const config_t *cfg, const char *given)
{
    char err[TF_ERRLEN];
    char *dir = given ? xstrdup (given) : results_default_dir (cfg->name, time (NULL));
    if (results_make_dir (dir, err, sizeof err) != 0
        || results_check_writable (dir, err, sizeof err) != 0) {
        fprintf (stderr, "treefarm simulate: %s\n", err);
        free (dir);
        return NULL;
    }
    return dir;
}

/*  The timeline of the simulated run into path (--trace), as run's. */
static int
write_trace (const config_t *cfg, results_t *results, const char *path)
{
    char err[TF_ERRLEN], warn[TF_ERRLEN];
    if (timeline_write_run (path, cfg, results, warn, sizeof warn, err, sizeof err) != 0) {
        fprintf (stderr, "treefarm simulate: %s\n", err);
        return -1;
    }
    if (*warn)
        fprintf (stderr, "treefarm simulate: warning: --trace: %s (left without spans)\n",
                 warn);
    return 0;
}

/*  Simulate cfg into dir (and its timeline into trace, unless NULL).
 *  Returns the exit status. */
static int
simulate (config_t *cfg, const char *dir, const sim_opts_t *opts, int quiet,
          const char *trace)
{
    char err[TF_ERRLEN];
    results_t *results = results_new (cfg);
    results_set_simulated (results, NULL);
    if (results_open_tasks (results, dir, err, sizeof err) != 0) {
        fprintf (stderr, "treefarm simulate: %s\n", err);
        results_destroy (&results);
        return CLI_EXIT_USAGE;
    }
    sim_figures_t fig = {0};
    int bad = sim_run (cfg, results, opts, &fig, err, sizeof err) != 0;
    if (bad)
        fprintf (stderr, "treefarm simulate: %s\n", err);
    results_measure_bound (results);   /* commands: from their simulated times */
    results_set_simulated (results,
                           json_pack ("{s:f, s:f, s:I, s:I}", "wall_s", fig.wall_s,
                                      "setup_s", fig.setup_s,
                                      "events", (json_int_t) fig.events,
                                      "messages", (json_int_t) fig.messages));
    if (results_close_tasks (results, err, sizeof err) != 0
        || results_write (results, dir, err, sizeof err) != 0) {
        fprintf (stderr, "treefarm simulate: %s\n", err);
        bad = 1;
    }
    if (trace && write_trace (cfg, results, trace) != 0)
        bad = 1;
    if (!quiet || bad)
        results_print_summary (results, stdout);
    if (!quiet)
        printf ("  simulated in %.1f s of wall time (%.1f s to set up): %llu core events, "
                "%llu messages\n  results in %s\n", fig.wall_s, fig.setup_s,
                (unsigned long long) fig.events,
                (unsigned long long) fig.messages, dir);
    results_destroy (&results);
    return bad ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

/*  The command line's choices. */
typedef struct {
    const char *policy, *path, *out, *platform, *load, *trace, *reclaim, *ia_order;
    int quiet, no_endgame, adapt;
    bag_opts_t bag;          /* --tasks, --command, --inputs */
    const char *measured;    /* --measured DIR */
    double task_seconds;     /* --task-seconds, < 0: not given */
    double task_output_mb;   /* --task-output-mb */
} cli_t;

/*  The experiment the options describe, its commands (into *bag and
 *  *cmds) checked; NULL after saying why (a usage error). */
static config_t *
prepare (cli_t *c, bag_t **bag, sim_commands_t **cmds)
{
    char err[TF_ERRLEN];
    config_t *cfg = run_load_experiment (c->path, c->policy, c->load);
    if (cfg && (run_endgame_option (cfg, c->no_endgame, "simulate") != 0
                || run_adapt_options (cfg, c->adapt, c->reclaim, "simulate") != 0
                || run_ia_order_option (cfg, c->ia_order, "simulate") != 0))
        config_destroy (&cfg);
    if (cfg && !(*bag = bag_new (&c->bag, cfg, err, sizeof err)))
        config_destroy (&cfg);
    else if (cfg && cfg->commands.count
             && !(*cmds = sim_commands_new (cfg, bag_tasks (*bag), c->measured,
                                            c->task_seconds, c->task_output_mb, err,
                                            sizeof err)))
        config_destroy (&cfg);
    else if (cfg && sim_check (cfg, err, sizeof err) != 0)
        config_destroy (&cfg);
    else
        return cfg;
    if (*err)
        fprintf (stderr, "treefarm simulate: %s\n", err);
    return NULL;
}

int
main (int argc, char **argv)
{
    cli_t c = {.task_seconds = -1, .bag = {.retries = NAN}};
    const cli_option_t options[] = {
        {"policy", CLI_STRING, &c.policy, NULL},
        {"out", CLI_STRING, &c.out, NULL},
        {"quiet", CLI_FLAG, &c.quiet, NULL},
        {"no-endgame", CLI_FLAG, &c.no_endgame, NULL},
        {"adapt", CLI_FLAG, &c.adapt, NULL},
        {"reclaim", CLI_STRING, &c.reclaim, NULL},
        {"ia-order", CLI_STRING, &c.ia_order, NULL},
        {"platform", CLI_STRING, &c.platform, NULL},
        {"load", CLI_STRING, &c.load, NULL},
        {"trace", CLI_STRING, &c.trace, NULL},
        {"tasks", CLI_STRING, &c.bag.tasks_file, NULL},
        {"command", CLI_STRING, &c.bag.command, NULL},
        {"inputs", CLI_STRING, &c.bag.inputs, NULL},
        {"measured", CLI_STRING, &c.measured, NULL},
        {"task-seconds", CLI_NONNEGATIVE, &c.task_seconds, "a number of seconds >= 0"},
        {"task-output-mb", CLI_NONNEGATIVE, &c.task_output_mb, "a number of MB >= 0"},
    };
    int code = cli_parse ("simulate", argc, argv, options,
                          sizeof options / sizeof *options, usage, &c.path);
    if (code >= 0)
        return code;
    char err[TF_ERRLEN];
    if (c.trace && timeline_check_path (c.trace, c.out, err, sizeof err) != 0)
        return cli_usage_error ("simulate", CLI_EXIT_USAGE, "%s", err);
    bag_t *bag = NULL;
    sim_commands_t *cmds = NULL;
    config_t *cfg = prepare (&c, &bag, &cmds);
    char *dir = cfg ? out_dir (cfg, c.out) : NULL;
    code = CLI_EXIT_USAGE;
    if (dir) {
        sim_opts_t opts = {.platform_xml = c.platform, .progress = !c.quiet,
                           .trace = c.trace != NULL, .commands = cmds};
        code = simulate (cfg, dir, &opts, c.quiet, c.trace);
    }
    free (dir);
    sim_commands_destroy (&cmds);
    bag_destroy (&bag);
    config_destroy (&cfg);
    return code;
}
