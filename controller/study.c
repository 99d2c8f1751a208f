/*  study — `treefarm bench`, its pure part. See study.h.
 *
 *  The lists of the command line, the grid's order and names, reading a
 *  run back from its results.json, the cells' means and normalization,
 *  and whether an existing study.json is this study: everything tests/
 *  test_study.c checks without a process. The command itself is
 *  study_cli.c (the command line, the cells' configs, DIR) and
 *  study_run.c (running the cells, the progress line); study_int.h says
 *  what they share.
 */
#include "controller/study.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const char *mode = json_string_value (json_object_get (results, "mode"));
    int simulated = mode && !strcmp (mode, "simulated");
    if (simulated != !!p->simulated)
        return tf_error (err, errlen, "%s", simulated ? "a simulated run, not one in "
                         "process" : "a run in process, not a simulated one");
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
    return json_pack ("{s:O, s:o, s:o, s:o, s:i, s:I, s:f, s:b}", "config", config,
                      "send_mb", numbers_json (p->send, p->nsend), "units",
                      numbers_json (p->compute, p->ncompute), "policies", policies,
                      "repeat", p->repeat, "tasks", (json_int_t) p->tasks,
                      "time_scale", p->time_scale, "simulated", !!p->simulated);
}

/*  Were both made with --simulate, or both without? A study.json from
 *  before --simulate has no "simulated": its runs ran in process. */
static int
same_mode (const json_t *have, const json_t *want, char *err, size_t errlen)
{
    int had = json_is_true (json_object_get (have, "simulated"));
    int wants = json_is_true (json_object_get (want, "simulated"));
    if (had == wants)
        return 0;
    return tf_error (err, errlen, "it was made %s --simulate, and this study is %s",
                     had ? "with" : "without", wants ? "simulated" : "not");
}

int
study_params_match (const json_t *have, const json_t *want, char *err, size_t errlen)
{
    static const char *const keys[] = {"send_mb", "units", "policies", "repeat",
                                       "tasks", "time_scale", "config"};
    if (same_mode (have, want, err, errlen) != 0)
        return -1;
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
