/*  study_run — `treefarm bench`: running the cells. See study.h and
 *  study_int.h.
 *
 *  Run what DIR lacks one run after another in this process, show one
 *  progress line for the whole study, and have study_out.c write the
 *  files after every run.
 *
 *  Why in process (run_synthetic) rather than a child `treefarm run` per
 *  run: the same code path with no binary to find and no command line to
 *  build, each cell's config edited as JSON and checked by the strict
 *  loader before anything runs, and a Ctrl-C that reaches the run under
 *  way through the session's own handling (it ends its nodes and writes
 *  its results.json as interrupted) and then stops the study. A simulated
 *  study (--simulate) is the exception: SimGrid runs one simulation per
 *  process, so each cell is a child (study_sim.c), read back the same way.
 */
#include "controller/study_int.h"

#include <czmq.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/run.h"
#include "controller/session.h"
#include "controller/study_out.h"
#include "overlay/util.h"

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
    char err[TF_ERRLEN] = "";
    char *name = study_run_name (&b->params, i);
    char *dir = xasprintf ("%s/runs/%s", b->dir, name);
    char *path = xasprintf ("%s/results.json", dir);
    unlink (path);           /* an earlier attempt's must not be read back */
    session_opts_t opt = b->opt;
    opt.out_dir = dir;
    config_t *cfg = study_cell_config (b, i, err, sizeof err);
    double t0 = tf_now ();
    int code = !cfg   ? CLI_EXIT_USAGE
               : b->sim ? study_sim_cell (b, &cfg, dir, err, sizeof err)
                        : run_synthetic (&opt, &cfg, RUN_SILENT);
    json_t *results = json_load_file (path, 0, NULL);
    run->status = STUDY_RUN_PENDING;
    if (results && study_run_from_json (&b->params, run, results, err, sizeof err) != 0)
        run->status = STUDY_RUN_FAILED;
    else if (code != CLI_EXIT_INTERRUPTED && run->status != STUDY_RUN_COMPLETE) {
        const char *why = json_string_value (json_object_get (results, "error"));
        if (why)
            snprintf (err, sizeof err, "%s", why);
        else if (!*err)      /* else the cell's config or the simulator said */
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

int
study_execute (bench_t *b)
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
