/*  test_study — the pure part of `treefarm bench` (controller/study.h):
 *  the command line's lists and their limits, the grid's order and run
 *  names, reading a run back from its results.json, the cells' means and
 *  their normalization to RootComputes (or to the first policy), and
 *  whether an existing study.json is the same study.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "controller/study.h"
#include "overlay/config.h"

static void
test_numbers (void **state)
{
    (void) state;
    double v[STUDY_MAX_VALUES];
    int n;
    char err[TF_ERRLEN];
    assert_int_equal (study_parse_numbers ("send", "2,5,10,0.5", 100, v, &n, err,
                                           sizeof err), 0);
    assert_int_equal (n, 4);
    assert_true (v[0] == 2 && v[1] == 5 && v[2] == 10 && v[3] == 0.5);
    /*  Each bad value is refused by name. */
    static const char *const bad[][2] = {
        {"0", "\"0\""}, {"-1", "\"-1\""}, {"x", "\"x\""}, {"2,,3", "\"\""},
        {"2,5,2", "\"2\" appears twice"}, {"101", "\"101\" is more than 100"},
        {"nan", "\"nan\""}, {"inf", "\"inf\""}, {"5x", "\"5x\""}, {"", "\"\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal (study_parse_numbers ("send", bad[i][0], 100, v, &n, err,
                                               sizeof err), -1);
        if (!strstr (err, bad[i][1]) || !strstr (err, "--send"))
            fail_msg ("\"%s\": %s", bad[i][0], err);
    }
    /*  At most STUDY_MAX_VALUES values. */
    char list[1024] = "";
    for (int i = 1; i <= STUDY_MAX_VALUES; i++)
        snprintf (list + strlen (list), sizeof list - strlen (list), "%s%d",
                  i > 1 ? "," : "", i);
    assert_int_equal (study_parse_numbers ("compute", list, 100, v, &n, err, sizeof err),
                      0);
    assert_int_equal (n, STUDY_MAX_VALUES);
    strcat (list, ",99");
    assert_int_equal (study_parse_numbers ("compute", list, 100, v, &n, err, sizeof err),
                      -1);
    assert_non_null (strstr (err, "more than 64 values"));
}

static void
test_policies (void **state)
{
    (void) state;
    const char *names[STUDY_MAX_VALUES];
    int n;
    char err[TF_ERRLEN];
    assert_int_equal (study_parse_policies ("IA:Multi,fcfs,RootComputes", names, &n, err,
                                            sizeof err), 0);
    assert_int_equal (n, 3);
    assert_string_equal (names[0], "ia-multi");
    assert_string_equal (names[2], "root-computes");
    assert_int_equal (study_parse_policies ("fcfs,nope", names, &n, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"nope\" is not a policy"));
    assert_non_null (strstr (err, "ia-single-opt"));   /* the known ones listed */
    assert_int_equal (study_parse_policies ("ia_multi,IA:Multi", names, &n, err,
                                            sizeof err), -1);
    assert_non_null (strstr (err, "\"IA:Multi\" appears twice"));
}

/*  2 sends x 2 computes x 3 policies x repeat. */
static study_params_t
small_params (int repeat, const char *p0, const char *p1, const char *p2)
{
    return (study_params_t){.send = {2, 10}, .nsend = 2, .compute = {1, 5},
                            .ncompute = 2, .policy = {p0, p1, p2}, .npolicy = 3,
                            .repeat = repeat, .tasks = 40, .time_scale = 20};
}

static void
test_grid (void **state)
{
    (void) state;
    study_params_t p = small_params (2, "ia-multi", "fcfs", "root-computes");
    char err[TF_ERRLEN];
    assert_int_equal (study_run_count (&p), 24);
    assert_int_equal (study_check_size (&p, err, sizeof err), 0);
    /*  Send sizes outermost, repeats innermost; names say the cell. */
    assert_int_equal (study_run_index (&p, 0, 0, 0, 1), 0);
    assert_int_equal (study_run_index (&p, 0, 0, 0, 2), 1);
    assert_int_equal (study_run_index (&p, 0, 0, 1, 1), 2);
    assert_int_equal (study_run_index (&p, 1, 1, 2, 2), 23);
    char *name = study_run_name (&p, study_run_index (&p, 1, 0, 2, 2));
    assert_string_equal (name, "10-1-root-computes-2");
    free (name);
    study_run_t runs[24];
    study_runs_init (&p, runs);
    for (int i = 0; i < 24; i++) {
        char *n = study_run_name (&p, i);
        char *want = xasprintf ("%g-%g-%s-%d", p.send[runs[i].send],
                                p.compute[runs[i].compute], p.policy[runs[i].policy],
                                runs[i].repeat);
        assert_string_equal (n, want);
        assert_int_equal (runs[i].status, STUDY_RUN_PENDING);
        free (n);
        free (want);
    }
    /*  The product is bounded. */
    p.nsend = p.ncompute = STUDY_MAX_VALUES;
    p.repeat = 1;
    assert_int_equal (study_check_size (&p, err, sizeof err), -1);
    assert_non_null (strstr (err, "12288 runs, more than 10000"));
}

/*  Make run (s, c, k, r) complete with makespan span and efficiency eff. */
static void
complete (const study_params_t *p, study_run_t *runs, int s, int c, int k, int r,
          double span, double eff)
{
    study_run_t *run = &runs[study_run_index (p, s, c, k, r)];
    run->status = STUDY_RUN_COMPLETE;
    run->makespan_s = span;
    run->efficiency = eff;
    run->reliable = 1;
}

static void
test_normalize (void **state)
{
    (void) state;
    study_params_t p = small_params (2, "ia-multi", "fcfs", "root-computes");
    study_run_t runs[24];
    study_cell_t cells[12];
    study_runs_init (&p, runs);
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < 3; k++)
                for (int r = 1; r <= 2; r++)
                    complete (&p, runs, s, c, k, r, 10.0 * (s + 1) + c + k + r,
                              0.5 + 0.1 * r);
    /*  One failed run does not count in its cell's means. */
    runs[study_run_index (&p, 0, 1, 1, 2)].status = STUDY_RUN_FAILED;
    runs[study_run_index (&p, 0, 1, 1, 2)].reliable = 0;
    /*  An unreliable run flags its cell. */
    runs[study_run_index (&p, 1, 0, 0, 1)].reliable = 0;
    study_summarize (&p, runs, cells);
    for (int i = 0; i < 12; i++) {
        int s = i / 6, c = i / 3 % 2, k = i % 3;
        double ref = 10.0 * (s + 1) + c + 2 + 1.5;   /* root-computes' mean */
        double mean = (s == 0 && c == 1 && k == 1) ? 10.0 + 1 + 1 + 1
                                                   : 10.0 * (s + 1) + c + k + 1.5;
        assert_true (fabs (cells[i].makespan_s - mean) < 1e-12);
        if (k == 2)
            assert_true (cells[i].normalized == 1.0);   /* exactly */
        assert_true (fabs (cells[i].normalized - mean / ref) < 1e-12);
        assert_int_equal (cells[i].complete, (s == 0 && c == 1 && k == 1) ? 1 : 2);
        assert_int_equal (cells[i].reliable, !(s == 1 && c == 0 && k == 0));
    }
    assert_true (fabs (cells[0].efficiency - 0.65) < 1e-12);
    assert_true (fabs (cells[0].eff_min - 0.6) < 1e-12);
    assert_true (fabs (cells[0].eff_max - 0.7) < 1e-12);
    /*  No reference run complete in a cell: its row is unknown, not 0. */
    runs[study_run_index (&p, 1, 1, 2, 1)].status = STUDY_RUN_PENDING;
    runs[study_run_index (&p, 1, 1, 2, 2)].status = STUDY_RUN_FAILED;
    study_summarize (&p, runs, cells);
    assert_true (isnan (cells[9].normalized) && isnan (cells[11].normalized));
    assert_true (isnan (cells[11].makespan_s));
    assert_false (isnan (cells[6].normalized));
}

static void
test_reference_first (void **state)
{
    (void) state;
    study_params_t p = small_params (1, "fcfs", "ia-multi", "bwc");
    assert_int_equal (study_reference (&p), 0);
    p = small_params (1, "fcfs", "root-computes", "bwc");
    assert_int_equal (study_reference (&p), 1);
    p = small_params (1, "fcfs", "ia-multi", "bwc");
    study_run_t runs[12];
    study_cell_t cells[12];
    study_runs_init (&p, runs);
    for (int i = 0; i < 12; i++) {
        runs[i].status = STUDY_RUN_COMPLETE;
        runs[i].makespan_s = 4.0 + i;
    }
    study_summarize (&p, runs, cells);
    assert_true (cells[3].normalized == 1.0);
    assert_true (fabs (cells[4].normalized - 8.0 / 7.0) < 1e-12);
}

/*  A results.json of the run of (2 MB, 5 units, fcfs), 40 tasks at 20. */
static json_t *
results_of (const char *status, const char *policy, double z)
{
    return json_pack ("{s:s, s:s, s:f, s:{s:{s:f, s:f, s:i}}, s:f, s:f, s:f, s:{s:f}, "
                      "s:f, s:b, s:{s:f}}", "status", status, "policy", policy,
                      "time_scale", 20.0, "config", "tasks", "input_mb", z, "units", 5.0,
                      "count", 40, "makespan_s", 12.5, "wall_s", 0.7, "throughput", 3.2,
                      "bound", "tasks_per_s", 6.4, "efficiency", 0.5,
                      "efficiency_reliable", 0, "fidelity", "min", 0.85);
}

static void
test_read_back (void **state)
{
    (void) state;
    study_params_t p = small_params (1, "ia-multi", "fcfs", "root-computes");
    study_run_t runs[12];
    study_runs_init (&p, runs);
    study_run_t *run = &runs[study_run_index (&p, 0, 1, 1, 1)];
    char err[TF_ERRLEN];
    json_t *r = results_of ("complete", "fcfs", 2);
    assert_int_equal (study_run_from_json (&p, run, r, err, sizeof err), 0);
    json_decref (r);
    assert_int_equal (run->status, STUDY_RUN_COMPLETE);
    assert_true (run->makespan_s == 12.5 && run->throughput == 3.2 && run->bound == 6.4
                 && run->efficiency == 0.5 && run->fidelity == 0.85
                 && run->wall_s == 0.7);
    assert_false (run->reliable);
    /*  Another cell's run, or another policy's, is not this one. */
    study_runs_init (&p, runs);
    r = results_of ("complete", "fcfs", 10);
    assert_int_equal (study_run_from_json (&p, run, r, err, sizeof err), -1);
    assert_non_null (strstr (err, "10 MB"));
    json_decref (r);
    r = results_of ("complete", "bwc", 2);
    assert_int_equal (study_run_from_json (&p, run, r, err, sizeof err), -1);
    json_decref (r);
    assert_int_equal (run->status, STUDY_RUN_PENDING);
    /*  A run that did not complete runs again. */
    r = results_of ("interrupted", "fcfs", 2);
    assert_int_equal (study_run_from_json (&p, run, r, err, sizeof err), 0);
    assert_int_equal (run->status, STUDY_RUN_PENDING);
    json_decref (r);
}

static void
test_params_match (void **state)
{
    (void) state;
    study_params_t p = small_params (1, "ia-multi", "fcfs", "root-computes");
    json_t *config = json_pack ("{s:s}", "name", "fork7");
    json_t *have = study_params_to_json (&p, config);
    /*  Through a file and back, as study.json is read. */
    char *text = json_dumps (have, 0);
    json_decref (have);
    have = json_loads (text, 0, NULL);
    free (text);
    json_t *want = study_params_to_json (&p, config);
    char err[TF_ERRLEN];
    assert_int_equal (study_params_match (have, want, err, sizeof err), 0);
    json_decref (want);
    p.send[1] = 5;
    want = study_params_to_json (&p, config);
    assert_int_equal (study_params_match (have, want, err, sizeof err), -1);
    assert_non_null (strstr (err, "send_mb is [2.0,10.0], not [2.0,5.0]"));
    json_decref (want);
    p = small_params (1, "ia-multi", "fcfs", "root-computes");
    p.time_scale = 40;
    want = study_params_to_json (&p, config);
    assert_int_equal (study_params_match (have, want, err, sizeof err), -1);
    assert_non_null (strstr (err, "time_scale"));
    json_decref (want);
    p.time_scale = 20;
    json_object_set_new (config, "name", json_string ("tree3"));
    want = study_params_to_json (&p, config);
    assert_int_equal (study_params_match (have, want, err, sizeof err), -1);
    assert_non_null (strstr (err, "another experiment config"));
    json_decref (want);
    json_decref (have);
    json_decref (config);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_numbers),
        cmocka_unit_test (test_policies),
        cmocka_unit_test (test_grid),
        cmocka_unit_test (test_normalize),
        cmocka_unit_test (test_reference_first),
        cmocka_unit_test (test_read_back),
        cmocka_unit_test (test_params_match),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
