/*  study_cli — `treefarm bench`: the command line, each cell's config,
 *  and DIR. See study.h and study_int.h.
 *
 *  Everything is checked before anything runs: the lists, the size of the
 *  grid, and every (Z, w) of it as a config through the strict loader and
 *  the emulation check, so a bad value is refused with exit 2 at once and
 *  not after an hour of runs; then DIR, whose study.json must describe
 *  this study if it is there.
 */
#include "controller/study_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/results.h"
#include "controller/run.h"
#include "controller/simulate.h"
#include "controller/study_out.h"
#include "overlay/util.h"
#include "policies/policy.h"

config_t *
study_cell_config (const bench_t *b, int i, char *err, size_t errlen)
{
    const study_params_t *p = &b->params;
    const study_run_t *run = &b->runs[i];
    json_t *o = json_deep_copy (b->config);
    json_t *tasks = json_object_get (o, "tasks");
    if (!json_is_object (tasks))
        json_object_set_new (o, "tasks", tasks = json_object ());
    json_object_set_new (tasks, "input_mb", json_real (p->send[run->send]));
    json_object_set_new (tasks, "units", json_real (p->compute[run->compute]));
    json_object_set_new (tasks, "count", json_integer ((json_int_t) p->tasks));
    json_object_set_new (json_object_get (o, "platform"), "time_scale",
                         json_real (p->time_scale));
    json_object_set_new (o, "policy", json_string (p->policy[run->policy]));
    char *text = json_dumps (o, JSON_COMPACT);
    json_decref (o);
    char why[TF_ERRLEN];
    config_t *cfg = text ? config_load_string (text, b->config_path, why, sizeof why)
                         : NULL;
    if (!text)
        snprintf (why, sizeof why, "cannot represent the experiment as JSON");
    free (text);
    if (cfg && config_check_emulation (cfg, why, sizeof why) != 0)
        config_destroy (&cfg);
    if (!cfg)
        tf_error (err, errlen, "--send %g with --compute %g: %s", p->send[run->send],
                  p->compute[run->compute], why);
    return cfg;
}

/*  Every (Z, w) of the grid makes a sound experiment. */
static int
check_cells (const bench_t *b, char *err, size_t errlen)
{
    const study_params_t *p = &b->params;
    for (int k = 0; k < p->npolicy; k++) {
        config_t *cfg = study_cell_config (b, 0, err, errlen);
        int rc = cfg ? run_relay_policy (cfg, p->policy[k], err, errlen) : -1;
        config_destroy (&cfg);
        if (rc != 0)
            return -1;
    }
    for (int s = 0; s < p->nsend; s++)
        for (int c = 0; c < p->ncompute; c++) {
            int i = study_run_index (p, s, c, 0, 1);
            config_t *cfg = study_cell_config (b, i, err, errlen);
            if (!cfg)
                return -1;
            config_destroy (&cfg);
        }
    return 0;
}

/*  DIR exists and is writable, and DIR/study.json describes this study:
 *  written if new, compared if there. */
static int
open_dir (const bench_t *b, char *err, size_t errlen)
{
    if (results_make_dir (b->dir, err, errlen) != 0
        || results_check_writable (b->dir, err, errlen) != 0)
        return -1;
    char *path = xasprintf ("%s/study.json", b->dir), why[TF_ERRLEN];
    json_t *want = study_params_to_json (&b->params, b->config), *have = NULL;
    json_error_t jerr;
    int rc = 0;
    if (access (path, F_OK) == 0) {
        have = json_load_file (path, JSON_REJECT_DUPLICATES, &jerr);
        if (!have)
            rc = tf_error (err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column,
                           jerr.text);
        else if (study_params_match (have, want, why, sizeof why) != 0)
            rc = tf_error (err, errlen, "%s is another study: %s (choose another --out, "
                           "or the same parameters to resume it)", path, why);
    }
    else if (study_out_write_json (b->dir, "study.json", want, err, errlen) != 0)
        rc = -1;
    json_decref (have);
    json_decref (want);
    free (path);
    return rc;
}

/*  The options of `treefarm bench --help`. */
static void
usage_options (FILE *out)
{
    fprintf (out,
             "options (a LIST is comma separated, at most %d values, each once):\n"
             "  --policies LIST    policies, any spelling `treefarm policies` accepts\n"
             "                     (default: every one)\n"
             "  --send LIST        task input sizes, MB (tasks.input_mb; default the\n"
             "                     config's), each > 0\n"
             "  --compute LIST     compute units per task (tasks.units; default the\n"
             "                     config's), each > 0\n"
             "  --tasks N          tasks per run (default the config's tasks.count)\n"
             "  --repeat R         runs per cell, 1 to %d (default 1)\n"
             "  --time-scale S     the runs' platform.time_scale, at most %g (default\n"
             "                     the config's); see docs/study/README.md on fidelity\n"
             "  --out DIR          the study's directory (default\n"
             "                     results/NAME-study-YYYYmmdd-HHMMSS)\n"
             "  --node-bin PATH    the treefarm-node to run, as for treefarm run\n"
             "  --timeout SECONDS  fail a run after SECONDS of wall time\n"
             "  --load FILE        background load on nodes for every run: a JSON\n"
             "                     object, node name -> load (docs/config.md, \"load\")\n"
             "  --adapt            every run adapts to its live rates (docs/adapt.md)\n"
             "  --reclaim MODE     with --adapt: gated (default), always or never\n"
             "  --no-endgame       no end-game, in every run of a policy that has one\n"
             "                     (all but root-computes; docs/policies.md)\n"
             "  --ia-order ORDER   the IR_s the IA order ranks by: alone (default) or\n"
             "                     both, as for treefarm run\n"
             "  --simulate         every cell simulated on SimGrid (docs/simulate.md),\n"
             "                     by treefarm-sim in a child each, its config in\n"
             "                     runs/Z-W-POLICY-R/config.json (not with --load,\n"
             "                     --adapt or --node-bin)\n"
             "  -h, --help         show this help\n",
             STUDY_MAX_VALUES, STUDY_MAX_REPEAT, STUDY_MAX_TIME_SCALE);
}

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm bench CONFIG [--policies LIST] [--send LIST]\n"
             "                       [--compute LIST] [--tasks N] [--repeat R]\n"
             "                       [--time-scale S] [--out DIR] [--node-bin PATH]\n"
             "                       [--timeout SECONDS] [--load FILE]\n"
             "                       [--adapt [--reclaim MODE]] [--no-endgame]\n"
             "                       [--ia-order ORDER] [--simulate]\n"
             "\n"
             "Run every (send size, compute size, policy) cell of a grid on the tree of\n"
             "CONFIG, each R times, one run after another, and compare the policies:\n"
             "makespan, throughput, the bound of the policy's port model, efficiency.\n"
             "Each cell's mean makespan is normalized to root-computes' in the same\n"
             "(send, compute) cell (to the first policy's if root-computes is not\n"
             "listed). docs/study/README.md.\n"
             "\n");
    usage_options (out);
    fprintf (out,
             "\n"
             "At most %d runs (cells x repeats). DIR gets study.json,\n"
             "runs/Z-W-POLICY-R/ (each run's results), runs.csv, runs.json,\n"
             "table.txt, summary.json, normalized-ZMB.{png,svg}, efficiency.{png,svg},\n"
             "their .gp and .dat, and index.html. Run the same command again to\n"
             "resume: runs complete in DIR are not run again; a DIR of another study\n"
             "(another grid, or the other side of --simulate) is refused.\n"
             "\n"
             "exit status: 0 every run complete, 1 a run failed or an output could not\n"
             "be written, 2 bad usage or config (the message names the value) or a\n"
             "simulator that cannot run or refuses a cell, 130 interrupted (completed\n"
             "runs stay in DIR).\n",
             STUDY_MAX_RUNS);
}

/*  A count option's value: a whole number from 1 to max. */
static int
check_count (const char *option, double v, double max, char *err, size_t errlen)
{
    if (v != floor (v) || v < 1 || v > max)
        return tf_error (err, errlen, "--%s: %g is not a whole number from 1 to %.0f",
                         option, v, max);
    return 0;
}

/*  The command line's text into b->params, the config's values where it
 *  gives none. Returns 0, or -1 with a message naming the bad value. */
static int
parse_params (bench_t *b, const config_t *cfg, const char *const text[3],
              double tasks, double repeat, double scale, char *err, size_t errlen)
{
    study_params_t *p = &b->params;
    if (cfg->tasks.count == 0 && (!text[1] || !text[2] || !tasks))
        return tf_error (err, errlen, "%s has no tasks block: give --send, --compute "
                         "and --tasks", b->config_path);
    if (text[0] && study_parse_policies (text[0], p->policy, &p->npolicy, err, errlen))
        return -1;
    for (int i = 0; !text[0] && policy_at (i) && i < STUDY_MAX_VALUES; i++)
        p->policy[p->npolicy++] = policy_at (i)->name;
    p->send[0] = cfg->tasks.input_mb;
    p->compute[0] = cfg->tasks.units;
    p->nsend = p->ncompute = 1;
    if ((text[1] && study_parse_numbers ("send", text[1], CONFIG_MAX_INPUT_MB, p->send,
                                         &p->nsend, err, errlen))
        || (text[2] && study_parse_numbers ("compute", text[2], CONFIG_MAX_UNITS,
                                            p->compute, &p->ncompute, err, errlen))
        || (tasks && check_count ("tasks", tasks, CONFIG_MAX_TASKS, err, errlen))
        || (repeat && check_count ("repeat", repeat, STUDY_MAX_REPEAT, err, errlen)))
        return -1;
    if (scale > STUDY_MAX_TIME_SCALE)
        return tf_error (err, errlen, "--time-scale: %g is more than %g", scale,
                         STUDY_MAX_TIME_SCALE);
    p->tasks = tasks ? (uint64_t) tasks : cfg->tasks.count;
    p->repeat = repeat ? (int) repeat : 1;
    p->time_scale = scale ? scale : cfg->platform.time_scale;
    return study_check_size (p, err, errlen);
}

/*  --simulate: an option the simulator has no use for is refused rather
 *  than ignored, and the simulator must be there before DIR is made (not
 *  found at the first cell). Returns 0, or -1 after saying why. */
static int
prepare_simulate (bench_t *b)
{
    const char *alone = b->load_path     ? "load"
                        : b->adapt       ? "adapt"
                        : b->opt.node_bin ? "node-bin"
                                          : NULL;
    if (alone)
        return cli_usage_error ("bench", CLI_EXIT_USAGE, "--%s does not apply to a "
                                "simulated study (--simulate)", alone), -1;
    char err[TF_ERRLEN];
    b->sim = study_sim_program (err, sizeof err);
    if (!b->sim) {
        simulate_cannot_run ("bench", err);
        return -1;
    }
    return 0;
}

/*  The experiment, the lists and DIR, checked; every cell's config made
 *  once. Returns 0, or -1 after saying why (a usage error). */
static int
bench_prepare (bench_t *b, const char *const text[3], double tasks, double repeat,
               double scale, const char *out)
{
    char err[TF_ERRLEN];
    if (b->params.simulated && prepare_simulate (b) != 0)
        return -1;
    config_t *cfg = run_load_experiment (b->config_path, NULL, b->load_path);
    if (!cfg)
        return -1;
    if (b->no_endgame)
        cfg->platform.endgame = 0;
    if (run_adapt_options (cfg, b->adapt, b->reclaim, "bench") != 0
        || run_ia_order_option (cfg, b->ia_order, "bench") != 0) {
        config_destroy (&cfg);
        return -1;
    }
    int rc = parse_params (b, cfg, text, tasks, repeat, scale, err, sizeof err);
    if (rc == 0) {
        char *canon = config_to_json (cfg);
        b->config = json_loads (canon, 0, NULL);
        free (canon);
        b->name = xstrdup (cfg->name);
        char *label = xasprintf ("%s-study", cfg->name);
        b->dir = out ? xstrdup (out) : results_default_dir (label, time (NULL));
        free (label);
        int n = study_run_count (&b->params);
        b->runs = xcalloc (n, sizeof *b->runs);
        b->cells = xcalloc (n / b->params.repeat, sizeof *b->cells);
        study_runs_init (&b->params, b->runs);
        rc = check_cells (b, err, sizeof err);
        if (rc == 0 && open_dir (b, err, sizeof err) != 0)
            rc = -1;
    }
    if (rc != 0)
        cli_usage_error ("bench", CLI_EXIT_USAGE, "%s", err);
    config_destroy (&cfg);
    return rc;
}

int
study_main (int argc, char **argv)
{
    const char *path = NULL, *out = NULL, *text[3] = {NULL, NULL, NULL};
    double tasks = 0, repeat = 0, scale = 0;
    bench_t b = {.opt = {.command = "bench"}, .live = isatty (STDERR_FILENO)};
    const cli_option_t options[] = {
        {"policies", CLI_STRING, &text[0], NULL},
        {"send", CLI_STRING, &text[1], NULL},
        {"compute", CLI_STRING, &text[2], NULL},
        {"tasks", CLI_POSITIVE, &tasks, "a number of tasks"},
        {"repeat", CLI_POSITIVE, &repeat, "a number of runs"},
        {"time-scale", CLI_POSITIVE, &scale, "a time scale > 0"},
        {"out", CLI_STRING, &out, NULL},
        {"node-bin", CLI_STRING, &b.opt.node_bin, NULL},
        {"timeout", CLI_POSITIVE, &b.opt.timeout, "a positive number of seconds"},
        {"load", CLI_STRING, &b.load_path, NULL},
        {"adapt", CLI_FLAG, &b.adapt, NULL},
        {"reclaim", CLI_STRING, &b.reclaim, NULL},
        {"no-endgame", CLI_FLAG, &b.no_endgame, NULL},
        {"ia-order", CLI_STRING, &b.ia_order, NULL},
        {"simulate", CLI_FLAG, &b.params.simulated, NULL},
    };
    int code = cli_parse ("bench", argc, argv, options, sizeof options / sizeof *options,
                          usage, &path);
    if (code >= 0)
        return code;
    b.config_path = b.opt.config_path = path;
    code = bench_prepare (&b, text, tasks, repeat, scale, out) == 0 ? study_execute (&b)
                                                                     : CLI_EXIT_USAGE;
    json_decref (b.config);
    free (b.name);
    free (b.dir);
    free (b.runs);
    free (b.cells);
    free (b.sim);
    return code;
}
