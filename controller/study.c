/*  study — `treefarm bench`. See study.h.
 *
 *  First the pure part (lists, the grid, reading a run back, the cells),
 *  then the command: check everything up front, run what DIR lacks one
 *  run after another in this process, show one progress line for the
 *  whole study, and have study_out.c write the files after every run.
 *
 *  Why in process (run_synthetic) rather than a child `treefarm run` per
 *  run: the same code path with no binary to find and no command line to
 *  build, each cell's config edited as JSON and checked by the strict
 *  loader before anything runs, and a Ctrl-C that reaches the run under
 *  way through the session's own handling (it ends its nodes and writes
 *  its results.json as interrupted) and then stops the study.
 */
#include "controller/study.h"

#include <czmq.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/results.h"
#include "controller/run.h"
#include "controller/session.h"
#include "controller/study_out.h"
#include "overlay/config.h"
#include "overlay/util.h"
#include "policies/policy.h"

/*  Two figures read back from results.json are the same number when they
 *  differ by less than this, relative: JSON keeps 17 digits, and a
 *  config's numbers go through the same loader on both sides. */
#define STUDY_SAME_REL 1e-9

static const char *const status_names[] = {"pending", "complete", "failed"};

const char *
study_status_str (study_status_t status)
{
    return status >= 0 && status <= STUDY_RUN_FAILED ? status_names[status] : "?";
}

/*  The next item of a comma-separated list at *text: copied into item
 *  (len bytes, cut short), *text moved past it and its comma. Returns 0
 *  at the end of the text (nothing left), 1 otherwise. */
static int
next_item (const char **text, char *item, size_t len)
{
    if (!*text)
        return 0;
    const char *comma = strchr (*text, ',');
    size_t n = comma ? (size_t) (comma - *text) : strlen (*text);
    snprintf (item, len, "%.*s", (int) n, *text);
    *text = comma ? comma + 1 : NULL;
    return 1;
}

int
study_parse_numbers (const char *option, const char *text, double max, double *values,
                     int *n, char *err, size_t errlen)
{
    char item[64], q[96];
    *n = 0;
    while (next_item (&text, item, sizeof item)) {
        char *end;
        errno = 0;
        double v = strtod (item, &end);
        tf_quote (q, sizeof q, item);
        if (errno || end == item || *end || !isfinite (v) || v <= 0)
            return tf_error (err, errlen, "--%s: %s is not a number > 0", option, q);
        if (v > max)
            return tf_error (err, errlen, "--%s: %s is more than %g", option, q, max);
        for (int i = 0; i < *n; i++)
            if (values[i] == v)
                return tf_error (err, errlen, "--%s: %s appears twice", option, q);
        if (*n == STUDY_MAX_VALUES)
            return tf_error (err, errlen, "--%s: more than %d values", option,
                             STUDY_MAX_VALUES);
        values[(*n)++] = v;
    }
    if (*n == 0)
        return tf_error (err, errlen, "--%s: no value", option);
    return 0;
}

int
study_parse_policies (const char *text, const char **names, int *n, char *err,
                      size_t errlen)
{
    char item[64], q[96], known[256];
    *n = 0;
    while (next_item (&text, item, sizeof item)) {
        const policy_t *policy = policy_find (item);
        tf_quote (q, sizeof q, item);
        if (!policy) {
            policy_names (known, sizeof known);
            return tf_error (err, errlen, "--policies: %s is not a policy (known: %s)",
                             q, known);
        }
        for (int i = 0; i < *n; i++)
            if (names[i] == policy->name)
                return tf_error (err, errlen, "--policies: %s appears twice (as %s)", q,
                                 policy->name);
        if (*n == STUDY_MAX_VALUES)
            return tf_error (err, errlen, "--policies: more than %d values",
                             STUDY_MAX_VALUES);
        names[(*n)++] = policy->name;
    }
    if (*n == 0)
        return tf_error (err, errlen, "--policies: no value");
    return 0;
}

int
study_run_count (const study_params_t *p)
{
    return p->nsend * p->ncompute * p->npolicy * p->repeat;
}

int
study_check_size (const study_params_t *p, char *err, size_t errlen)
{
    /*  Each factor is at most 100, so the product fits an int. */
    if (study_run_count (p) > STUDY_MAX_RUNS)
        return tf_error (err, errlen, "%d send sizes x %d compute sizes x %d policies "
                         "x %d repeats = %d runs, more than %d", p->nsend, p->ncompute,
                         p->npolicy, p->repeat, study_run_count (p), STUDY_MAX_RUNS);
    return 0;
}

int
study_run_index (const study_params_t *p, int s, int c, int k, int r)
{
    return ((s * p->ncompute + c) * p->npolicy + k) * p->repeat + (r - 1);
}

void
study_runs_init (const study_params_t *p, study_run_t *runs)
{
    for (int s = 0; s < p->nsend; s++)
        for (int c = 0; c < p->ncompute; c++)
            for (int k = 0; k < p->npolicy; k++)
                for (int r = 1; r <= p->repeat; r++)
                    runs[study_run_index (p, s, c, k, r)] = (study_run_t){
                        .send = s, .compute = c, .policy = k, .repeat = r,
                        .makespan_s = NAN, .throughput = NAN, .bound = NAN,
                        .efficiency = NAN, .fidelity = NAN, .wall_s = NAN,
                        .steady_efficiency = NAN, .tail_s = NAN};
}

char *
study_run_name (const study_params_t *p, int i)
{
    int r = i % p->repeat + 1, cell = i / p->repeat;
    int k = cell % p->npolicy, c = cell / p->npolicy % p->ncompute;
    int s = cell / p->npolicy / p->ncompute;
    return xasprintf ("%g-%g-%s-%d", p->send[s], p->compute[c], p->policy[k], r);
}

int
study_reference (const study_params_t *p)
{
    for (int k = 0; k < p->npolicy; k++)
        if (!strcmp (p->policy[k], STUDY_REFERENCE_POLICY))
            return k;
    return 0;
}

static int
same (double a, double b)
{
    return fabs (a - b) <= STUDY_SAME_REL * fmax (fabs (a), fabs (b));
}

/*  The number at results' path "a.b" (NAN if absent or not a number). */
static double
number_at (const json_t *results, const char *outer, const char *inner)
{
    const json_t *o = json_object_get (results, outer);
    if (inner)
        o = json_object_get (o, inner);
    return json_is_number (o) ? json_number_value (o) : NAN;
}

/*  Is results the run of run's cell? */
static int
same_cell (const study_params_t *p, const study_run_t *run, const json_t *results,
           char *err, size_t errlen)
{
    const json_t *tasks = json_object_get (json_object_get (results, "config"), "tasks");
    const char *policy = json_string_value (json_object_get (results, "policy"));
    double z = json_number_value (json_object_get (tasks, "input_mb"));
    double w = json_number_value (json_object_get (tasks, "units"));
    double count = json_number_value (json_object_get (tasks, "count"));
    if (!policy || strcmp (policy, p->policy[run->policy]))
        return tf_error (err, errlen, "policy %s, not %s", policy ? policy : "missing",
                         p->policy[run->policy]);
    if (!same (z, p->send[run->send]) || !same (w, p->compute[run->compute])
        || !same (count, (double) p->tasks))
        return tf_error (err, errlen, "tasks of %g MB, %g units, %g tasks: not %g MB, "
                         "%g units, %llu tasks", z, w, count, p->send[run->send],
                         p->compute[run->compute], (unsigned long long) p->tasks);
    double ts = number_at (results, "time_scale", NULL);
    if (!same (ts, p->time_scale))
        return tf_error (err, errlen, "time scale %g, not %g", ts, p->time_scale);
    return 0;
}

int
study_run_from_json (const study_params_t *p, study_run_t *run, const json_t *results,
                     char *err, size_t errlen)
{
    if (same_cell (p, run, results, err, errlen) != 0)
        return -1;
    const char *status = json_string_value (json_object_get (results, "status"));
    if (!status || strcmp (status, "complete")) {
        run->status = STUDY_RUN_PENDING;
        return 0;
    }
    study_run_t got = *run;
    got.makespan_s = number_at (results, "makespan_s", NULL);
    got.throughput = number_at (results, "throughput", NULL);
    got.bound = number_at (results, "bound", "tasks_per_s");
    got.efficiency = number_at (results, "efficiency", NULL);
    got.fidelity = number_at (results, "fidelity", "min");
    got.wall_s = number_at (results, "wall_s", NULL);
    got.steady_efficiency = number_at (results, "steady", "efficiency");
    got.tail_s = number_at (results, "tail", "seconds");
    got.reliable = json_is_true (json_object_get (results, "efficiency_reliable"));
    if (!(got.makespan_s > 0) || isnan (got.throughput) || isnan (got.bound)
        || isnan (got.efficiency))
        return tf_error (err, errlen, "complete, but without makespan_s, throughput, "
                         "bound or efficiency");
    got.status = STUDY_RUN_COMPLETE;
    got.error[0] = '\0';
    *run = got;
    return 0;
}

/*  Means of the complete runs of cell i into *cell. */
static void
summarize_cell (const study_params_t *p, const study_run_t *runs, int i,
                study_cell_t *cell)
{
    double span = 0, eff = 0;
    *cell = (study_cell_t){.runs = p->repeat, .makespan_s = NAN, .normalized = NAN,
                           .efficiency = NAN, .eff_min = NAN, .eff_max = NAN,
                           .reliable = 1};
    for (int r = 0; r < p->repeat; r++) {
        const study_run_t *run = &runs[i * p->repeat + r];
        if (run->status != STUDY_RUN_COMPLETE)
            continue;
        cell->complete++;
        span += run->makespan_s;
        eff += run->efficiency;
        cell->eff_min = isnan (cell->eff_min) ? run->efficiency
                                              : fmin (cell->eff_min, run->efficiency);
        cell->eff_max = isnan (cell->eff_max) ? run->efficiency
                                              : fmax (cell->eff_max, run->efficiency);
        cell->reliable = cell->reliable && run->reliable;
    }
    if (cell->complete) {
        cell->makespan_s = span / cell->complete;
        cell->efficiency = eff / cell->complete;
    }
}

void
study_summarize (const study_params_t *p, const study_run_t *runs, study_cell_t *cells)
{
    int ncells = study_run_count (p) / p->repeat, ref = study_reference (p);
    for (int i = 0; i < ncells; i++)
        summarize_cell (p, runs, i, &cells[i]);
    for (int i = 0; i < ncells; i++) {
        /*  The reference's cell in the same (Z, w): same row, policy ref. */
        double base = cells[i - i % p->npolicy + ref].makespan_s;
        cells[i].normalized = base > 0 ? cells[i].makespan_s / base : NAN;
    }
}

static json_t *
numbers_json (const double *values, int n)
{
    json_t *a = json_array ();
    for (int i = 0; i < n; i++)
        json_array_append_new (a, json_real (values[i]));
    return a;
}

json_t *
study_params_to_json (const study_params_t *p, const json_t *config)
{
    json_t *policies = json_array ();
    for (int k = 0; k < p->npolicy; k++)
        json_array_append_new (policies, json_string (p->policy[k]));
    return json_pack ("{s:O, s:o, s:o, s:o, s:i, s:I, s:f}", "config", config,
                      "send_mb", numbers_json (p->send, p->nsend), "units",
                      numbers_json (p->compute, p->ncompute), "policies", policies,
                      "repeat", p->repeat, "tasks", (json_int_t) p->tasks,
                      "time_scale", p->time_scale);
}

int
study_params_match (const json_t *have, const json_t *want, char *err, size_t errlen)
{
    static const char *const keys[] = {"send_mb", "units", "policies", "repeat",
                                       "tasks", "time_scale", "config"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const json_t *a = json_object_get (have, keys[i]);
        const json_t *b = json_object_get (want, keys[i]);
        if (a && b && json_equal (a, b))
            continue;
        if (!strcmp (keys[i], "config"))
            return tf_error (err, errlen, "it was made with another experiment config");
        char *ta = a ? json_dumps (a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        char *tb = json_dumps (b, JSON_COMPACT | JSON_ENCODE_ANY);
        tf_error (err, errlen, "its %s is %s, not %s", keys[i], ta ? ta : "missing",
                  tb ? tb : "?");
        free (ta);
        free (tb);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 *  The command.
 */

typedef struct {
    study_params_t params;
    const char *config_path;
    const char *load_path;   /* --load FILE, or NULL */
    int adapt;               /* --adapt */
    int no_endgame;          /* --no-endgame, for every policy with one */
    const char *reclaim;     /* --reclaim MODE, or NULL */
    json_t *config;          /* the experiment, canonical JSON */
    char *name;              /* the experiment's name */
    char *dir;               /* DIR */
    study_run_t *runs;
    study_cell_t *cells;
    session_opts_t opt;      /* every run's, but for out_dir */
    int live;                /* stderr is a terminal: one line in place */
    int ran;                 /* runs this invocation ran to an end */
    double ran_wall;         /* their wall seconds, spawn to reap */
} bench_t;

/*  The config of run i: the experiment with the cell's Z, w and policy,
 *  the study's task count and time scale, through the strict loader and
 *  the emulation check. NULL with a message naming the cell. */
static config_t *
cell_config (const bench_t *b, int i, char *err, size_t errlen)
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
    for (int s = 0; s < p->nsend; s++)
        for (int c = 0; c < p->ncompute; c++) {
            config_t *cfg = cell_config (b, study_run_index (p, s, c, 0, 1), err, errlen);
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

/*  Read DIR/runs/NAME/results.json of run i back into it, if there;
 *  nothing (a missing file) leaves it pending. Returns 0, or -1 with a
 *  message (an unreadable file, another cell's run). */
static int
read_run (bench_t *b, int i, char *err, size_t errlen)
{
    char *name = study_run_name (&b->params, i);
    char *path = xasprintf ("%s/runs/%s/results.json", b->dir, name);
    json_error_t jerr;
    json_t *results = access (path, F_OK) == 0 ? json_load_file (path, 0, &jerr) : NULL;
    char why[TF_ERRLEN];
    int rc = 0;
    if (!results && access (path, F_OK) == 0)
        rc = tf_error (err, errlen, "%s: %s", path, jerr.text);
    else if (results
             && study_run_from_json (&b->params, &b->runs[i], results, why, sizeof why))
        rc = tf_error (err, errlen, "%s: not this study's run: %s", path, why);
    json_decref (results);
    free (path);
    free (name);
    return rc;
}

/*  "2 MB, 5 units, ia-multi, rep 1" of run i. */
static void
describe_run (const bench_t *b, int i, char *buf, size_t len)
{
    const study_run_t *run = &b->runs[i];
    snprintf (buf, len, "%g MB, %g units, %s, rep %d", b->params.send[run->send],
              b->params.compute[run->compute], b->params.policy[run->policy],
              run->repeat);
}

/*  "; ~12 min left" from the mean wall time of the runs so far, or "". */
static void
time_left (const bench_t *b, int pending, char *buf, size_t len)
{
    double left = b->ran ? b->ran_wall / b->ran * pending : NAN;
    if (pending == 0 || isnan (left))
        snprintf (buf, len, "%s", pending ? "" : "; done");
    else if (left < 90)
        snprintf (buf, len, "; ~%.0f s left", left);
    else
        snprintf (buf, len, "; ~%.0f min left", left / 60);
}

/*  The progress line after run i ended, k runs of n done, pending still
 *  to run: in place on a terminal, a line otherwise, and a failure
 *  always on a line of its own. */
static void
show_progress (const bench_t *b, int i, int k, int n, int pending)
{
    const study_run_t *run = &b->runs[i];
    char what[128], left[64], outcome[TF_ERRLEN + 64];
    describe_run (b, i, what, sizeof what);
    time_left (b, pending, left, sizeof left);
    if (run->status == STUDY_RUN_COMPLETE)
        snprintf (outcome, sizeof outcome, "makespan %.1f s, efficiency %.0f%%%s",
                  run->makespan_s, 100 * run->efficiency,
                  run->reliable ? "" : " (UNRELIABLE: fidelity low)");
    else
        snprintf (outcome, sizeof outcome, "FAILED: %s", run->error);
    int line = !b->live || run->status != STUDY_RUN_COMPLETE || pending == 0;
    fprintf (stderr, "%scell %d/%d (%s): %s%s%s", b->live ? "\r\033[K" : "", k, n, what,
             outcome, left, line ? "\n" : "");
    fflush (stderr);
}

/*  Run i, in DIR/runs/NAME, and read its figures back. Returns the run's
 *  exit status; the run is complete, failed (with its error), or pending
 *  again if it was interrupted. */
static int
run_one (bench_t *b, int i)
{
    study_run_t *run = &b->runs[i];
    char err[TF_ERRLEN];
    char *name = study_run_name (&b->params, i);
    char *dir = xasprintf ("%s/runs/%s", b->dir, name);
    char *path = xasprintf ("%s/results.json", dir);
    unlink (path);           /* an earlier attempt's must not be read back */
    session_opts_t opt = b->opt;
    opt.out_dir = dir;
    config_t *cfg = cell_config (b, i, err, sizeof err);
    int made = cfg != NULL;
    double t0 = tf_now ();
    int code = cfg ? run_synthetic (&opt, &cfg, RUN_SILENT) : CLI_EXIT_USAGE;
    json_t *results = json_load_file (path, 0, NULL);
    run->status = STUDY_RUN_PENDING;
    if (results && study_run_from_json (&b->params, run, results, err, sizeof err) != 0)
        run->status = STUDY_RUN_FAILED;
    else if (code != CLI_EXIT_INTERRUPTED && run->status != STUDY_RUN_COMPLETE) {
        const char *why = json_string_value (json_object_get (results, "error"));
        if (why)
            snprintf (err, sizeof err, "%s", why);
        else if (made)
            snprintf (err, sizeof err, "exit status %d, %s", code,
                      results ? "no error given" : "no results.json");
        run->status = STUDY_RUN_FAILED;
    }
    if (run->status == STUDY_RUN_FAILED)
        snprintf (run->error, sizeof run->error, "%s", err);
    if (code != CLI_EXIT_INTERRUPTED) {
        b->ran++;
        b->ran_wall += tf_now () - t0;
    }
    json_decref (results);
    free (path);
    free (dir);
    free (name);
    return code;
}

/*  Runs already complete in DIR, and a word about it. */
static int
read_runs (bench_t *b)
{
    int n = study_run_count (&b->params), done = 0;
    char err[TF_ERRLEN];
    for (int i = 0; i < n; i++) {
        if (read_run (b, i, err, sizeof err) != 0)
            session_log (NULL, "warning: %s; running it again", err);
        done += b->runs[i].status == STUDY_RUN_COMPLETE;
    }
    if (done == n)
        session_log (NULL, "%s: every cell is done already (%d runs); nothing to run",
                     b->dir, n);
    else if (done)
        session_log (NULL, "%s: resuming: %d of %d runs are done already", b->dir, done,
                     n);
    return done;
}

/*  The study's files from what is known now. Returns 0, or -1 after
 *  saying why. */
static int
write_outputs (bench_t *b, int plots)
{
    char err[TF_ERRLEN];
    study_summarize (&b->params, b->runs, b->cells);
    study_t st = {.params = &b->params, .name = b->name, .dir = b->dir,
                  .runs = b->runs, .cells = b->cells};
    if (study_out_write_data (&st, err, sizeof err) != 0
        || (plots && study_out_write_plots (&st, err, sizeof err) != 0)) {
        session_log (NULL, "%s", err);
        return -1;
    }
    return 0;
}

/*  Run every pending run in the grid's order; write the files after each
 *  and, at the end, the plots and index.html. Returns the exit status. */
static int
execute (bench_t *b)
{
    int n = study_run_count (&b->params), done = read_runs (b), code = CLI_EXIT_OK;
    zsys_init ();            /* Ctrl-C sets zsys_interrupted from now on */
    for (int i = 0; i < n && code == CLI_EXIT_OK; i++) {
        if (b->runs[i].status == STUDY_RUN_COMPLETE)
            continue;
        if (zsys_interrupted) {
            code = CLI_EXIT_INTERRUPTED;
            break;
        }
        int rc = run_one (b, i);
        if (rc == CLI_EXIT_INTERRUPTED || rc == CLI_EXIT_USAGE) {
            code = rc;       /* interrupted, or nothing can run here: stop */
            break;
        }
        done++;
        show_progress (b, i, done, n, n - done);
        write_outputs (b, 0);
    }
    if (code == CLI_EXIT_INTERRUPTED)
        session_log (NULL, "interrupted: %d of %d runs done, in %s; run the same "
                     "command again to resume", done, n, b->dir);
    zsys_interrupted = 0;    /* the plots run even after a Ctrl-C */
    int failed = 0;
    for (int i = 0; i < n; i++)
        failed += b->runs[i].status == STUDY_RUN_FAILED;
    if (write_outputs (b, 1) != 0 && code == CLI_EXIT_OK)
        code = CLI_EXIT_FAILED;
    if (failed && code == CLI_EXIT_OK) {
        session_log (NULL, "%d of %d runs failed (runs.csv says why)", failed, n);
        code = CLI_EXIT_FAILED;
    }
    printf ("study: %s/index.html (table.txt, runs.csv, runs.json, summary.json)\n",
            b->dir);
    return code;
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
             "\n"
             "Run every (send size, compute size, policy) cell of a grid on the tree of\n"
             "CONFIG, each R times, one run after another, and compare the policies:\n"
             "makespan, throughput, the bound of the policy's port model, efficiency.\n"
             "Each cell's mean makespan is normalized to root-computes' in the same\n"
             "(send, compute) cell (to the first policy's if root-computes is not\n"
             "listed). docs/study/README.md.\n"
             "\n"
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
             "  -h, --help         show this help\n"
             "\n"
             "At most %d runs (cells x repeats). DIR gets study.json,\n"
             "runs/Z-W-POLICY-R/ (each run's results), runs.csv, runs.json,\n"
             "table.txt, summary.json, normalized-ZMB.{png,svg}, efficiency.{png,svg},\n"
             "their .gp and .dat, and index.html. Run the same command again to\n"
             "resume: runs complete in DIR are not run again; a DIR of another study\n"
             "is refused.\n"
             "\n"
             "exit status: 0 every run complete, 1 a run failed or an output could not\n"
             "be written, 2 bad usage or config (the message names the value), 130\n"
             "interrupted (completed runs stay in DIR).\n",
             STUDY_MAX_VALUES, STUDY_MAX_REPEAT, STUDY_MAX_TIME_SCALE, STUDY_MAX_RUNS);
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

/*  The experiment, the lists and DIR, checked; every cell's config made
 *  once. Returns 0, or -1 after saying why (a usage error). */
static int
bench_prepare (bench_t *b, const char *const text[3], double tasks, double repeat,
               double scale, const char *out)
{
    char err[TF_ERRLEN];
    config_t *cfg = run_load_experiment (b->config_path, NULL, b->load_path);
    if (!cfg)
        return -1;
    if (b->no_endgame)
        cfg->platform.endgame = 0;
    if (run_adapt_options (cfg, b->adapt, b->reclaim, "bench") != 0) {
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
    };
    int code = cli_parse ("bench", argc, argv, options, sizeof options / sizeof *options,
                          usage, &path);
    if (code >= 0)
        return code;
    b.config_path = b.opt.config_path = path;
    code = bench_prepare (&b, text, tasks, repeat, scale, out) == 0 ? execute (&b)
                                                                     : CLI_EXIT_USAGE;
    json_decref (b.config);
    free (b.name);
    free (b.dir);
    free (b.runs);
    free (b.cells);
    return code;
}
