/*  test_bgload — the emulated background load model (node/bgload.h):
 *  determinism of its draws, processor-sharing arithmetic on jobs added
 *  by hand, contenders and their CPU and link shares, steps and a trace,
 *  the job limit, and the long-run validation: a job stream of
 *  utilization U, the foreground always computing, realizes U within
 *  0.03 and leaves the foreground 1 - U within 5%.
 *
 *  Descriptions are built by hand (load_t's fields filled directly), not
 *  parsed. Hand-made cases are exact up to a few roundings: 1e-12.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "node/bgload.h"
#include "overlay/util.h"

#define TOL 1e-12

static void
assert_near (double got, double want)
{
    if (!(fabs (got - want) <= TOL))
        fail_msg ("got %.17g, want %.17g", got, want);
}

static bgload_t *
model (const load_t *load, const char *name)
{
    char err[TF_ERRLEN] = "";
    bgload_t *b = bgload_new (load, name, 0, 0, err, sizeof err);
    if (!b)
        fail_msg ("bgload_new: %s", err);
    return b;
}

/*  One job stream of utilization u, demands of kind/cv, mean 0.2 s,
 *  Poisson arrivals. */
static load_stream_t
stream (double u, dist_kind_t kind, double cv)
{
    return (load_stream_t) {.utilization = u, .demand_kind = kind,
                            .demand_mean_s = 0.2, .demand_cv = cv,
                            .arrival_kind = DIST_EXP, .arrival_cv = 1};
}

/*  The first n event times and job counts of a stream from seed on name,
 *  the foreground always computing. */
static void
events (uint64_t seed, const char *name, int n, double *times, int *jobs)
{
    load_stream_t s = stream (0.5, DIST_EXP, 1);
    load_contender_t c = {.compute = 0.3, .comm = 0.3, .msg_bytes = 800, .period_s = 1};
    load_t load = {.streams = &s, .nstreams = 1, .contenders = &c, .ncontenders = 1,
                   .seed = seed};
    bgload_t *b = model (&load, name);
    for (int i = 0; i < n; i++) {
        times[i] = bgload_next (b, 1);
        bgload_advance (b, times[i], 1);
        jobs[i] = bgload_jobs (b) * 2 + bgload_comm (b);
    }
    bgload_destroy (&b);
}

static void
test_same_seed_same_sequence (void **state)
{
    (void) state;
    double t1[200], t2[200], t3[200], t4[200];
    int j1[200], j2[200], j3[200], j4[200];
    events (11, "solo", 200, t1, j1);
    events (11, "solo", 200, t2, j2);
    assert_memory_equal (t1, t2, sizeof t1);
    assert_memory_equal (j1, j2, sizeof j1);
    /*  Times increase, and the jobs come and go. */
    int most = 0;
    for (int i = 1; i < 200; i++) {
        assert_true (t1[i] >= t1[i - 1]);
        most = j1[i] > most ? j1[i] : most;
    }
    assert_true (most >= 4);
    /*  Another name, or another seed: another sequence. */
    events (11, "solo2", 200, t3, j3);
    events (12, "solo", 200, t4, j4);
    int same3 = 0, same4 = 0;
    for (int i = 0; i < 200; i++) {
        same3 += t3[i] == t1[i];
        same4 += t4[i] == t1[i];
    }
    assert_true (same3 < 5);
    assert_true (same4 < 5);
}

/*  The model run ahead: where a foreground computing all along will
 *  have got the work is where the model itself gets it, event by event
 *  (over many arrivals and ends), and running ahead moves nothing. */
static void
test_finish_ahead (void **state)
{
    (void) state;
    load_stream_t s = stream (0.5, DIST_EXP, 1);
    load_t load = {.streams = &s, .nstreams = 1, .seed = 2};
    bgload_t *b = model (&load, "n");
    bgload_advance (b, 3, 1);
    double at = bgload_now (b), fg = bgload_fg_integral (b), jobs = bgload_jobs (b);
    double t = bgload_finish (b, 10);
    assert_true (t > at + 10);   /* a share: longer than the work */
    assert_true (bgload_now (b) == at && bgload_fg_integral (b) == fg
                 && bgload_jobs (b) == jobs);
    bgload_advance (b, t, 1);
    assert_true (fabs (bgload_fg_integral (b) - fg - 10) < 1e-9);
    assert_true (t < at + 10 / 0.3);   /* about 1 / (1 - U) as long */
    assert_true (bgload_finish (b, 0) == t);
    bgload_destroy (&b);
}

/*  Jobs added by hand on an empty description: processor sharing. */
static void
test_ps_foreground_busy (void **state)
{
    (void) state;
    load_t load = {.seed = 1};
    bgload_t *b = model (&load, "n");
    assert_near (bgload_factor (b), 1);
    assert_true (isinf (bgload_next (b, 1)));
    /*  Jobs of 1 and 2 s with the foreground: each of three gets 1/3, the
     *  first ends at 3 s; then halves: the second's last 1 s ends at 5. */
    assert_int_equal (bgload_add_job (b, 1), 0);
    assert_int_equal (bgload_add_job (b, 2), 0);
    assert_near (bgload_factor (b), 1.0 / 3);
    assert_near (bgload_next (b, 1), 3);
    bgload_advance (b, 3, 1);
    assert_int_equal (bgload_jobs (b), 1);
    assert_near (bgload_factor (b), 0.5);
    assert_near (bgload_next (b, 1), 5);
    bgload_advance (b, 6, 1);
    assert_int_equal (bgload_jobs (b), 0);
    assert_near (bgload_now (b), 6);
    /*  Foreground: 3 x 1/3 + 2 x 1/2 + 1 x 1 = 3 s of CPU; background 3. */
    assert_near (bgload_fg_integral (b), 3);
    assert_near (bgload_busy_integral (b), 3);
    bgload_destroy (&b);
}

static void
test_ps_foreground_idle (void **state)
{
    (void) state;
    load_t load = {.seed = 1};
    bgload_t *b = model (&load, "n");
    /*  Idle foreground: 1/2 each, the 1 s job ends at 2; the other's last
     *  1 s alone, at 3. The background holds the CPU throughout. */
    bgload_add_job (b, 1);
    bgload_add_job (b, 2);
    assert_near (bgload_next (b, 0), 2);
    bgload_advance (b, 2.5, 0);
    assert_int_equal (bgload_jobs (b), 1);
    /*  The foreground starts at 2.5 with 0.5 s of the job left: 1/2 each,
     *  the job ends at 3.5. */
    assert_near (bgload_next (b, 1), 3.5);
    bgload_advance (b, 4, 1);
    assert_int_equal (bgload_jobs (b), 0);
    assert_near (bgload_busy_integral (b), 3);
    assert_near (bgload_fg_integral (b), 0.5 + 0.5);
    /*  A job of demand 0 comes and goes. */
    bgload_add_job (b, 0);
    assert_near (bgload_next (b, 1), 4);
    bgload_advance (b, 4, 1);
    assert_int_equal (bgload_jobs (b), 0);
    bgload_destroy (&b);
}

static void
test_job_limit (void **state)
{
    (void) state;
    load_t load = {.seed = 1};
    bgload_t *b = model (&load, "n");
    for (int i = 0; i < BGLOAD_MAX_JOBS; i++)
        assert_int_equal (bgload_add_job (b, 1 + i), 0);
    assert_int_equal (bgload_add_job (b, 1), -1);
    assert_int_equal (bgload_refused (b), 1);
    assert_int_equal (bgload_jobs (b), BGLOAD_MAX_JOBS);
    assert_int_equal (bgload_add_job (b, -1), -1);
    assert_int_equal (bgload_add_job (b, NAN), -1);
    assert_near (bgload_factor (b), 1.0 / (BGLOAD_MAX_JOBS + 1));
    bgload_destroy (&b);
}

/*  Contenders: one always computing halves the foreground and takes half
 *  the CPU; two always communicating at IR_r 0.01 per MB/s on a 30 MB/s
 *  link leave c = 1 - 0.3 x 2/3 = 0.8 of the CPU and 1/3 of the link. */
static void
test_contenders (void **state)
{
    (void) state;
    load_contender_t c[3] = {{.compute = 1, .period_s = 1},
                             {.comm = 1, .msg_bytes = 800, .period_s = 1},
                             {.comm = 1, .msg_bytes = 800, .period_s = 1}};
    load_t load = {.contenders = c, .ncontenders = 1, .seed = 3};
    bgload_t *b = model (&load, "n");
    assert_int_equal (bgload_computing (b), 1);
    assert_near (bgload_factor (b), 0.5);
    bgload_advance (b, 10, 1);
    assert_near (bgload_busy_integral (b), 5);
    bgload_advance (b, 12, 0);   /* alone with an idle foreground: all of it */
    assert_near (bgload_busy_integral (b), 7);
    bgload_destroy (&b);

    load = (load_t) {.contenders = c + 1, .ncontenders = 2, .seed = 3};
    char err[TF_ERRLEN];
    b = bgload_new (&load, "n", 0.01, 30, err, sizeof err);
    assert_int_equal (bgload_comm (b), 2);
    assert_near (bgload_factor (b), 0.8);
    bgload_advance (b, 10, 1);
    assert_near (bgload_busy_integral (b), 2);
    bgload_destroy (&b);
}

/*  A contenders-only model (a parent's view of its child) agrees with the
 *  whole model on who communicates, at every time. */
static void
test_contenders_only_agrees (void **state)
{
    (void) state;
    load_stream_t s = stream (0.5, DIST_EXP, 1);
    load_contender_t c[2] = {{.compute = 0.2, .comm = 0.5, .msg_bytes = 800, .period_s = 0.5},
                             {.compute = 0.4, .comm = 0.3, .msg_bytes = 800, .period_s = 2}};
    load_point_t st = {.at_s = 3, .load = 2};
    load_t load = {.streams = &s, .nstreams = 1, .contenders = c, .ncontenders = 2,
                   .steps = &st, .nsteps = 1, .seed = 5};
    char err[TF_ERRLEN];
    bgload_t *whole = bgload_new (&load, "child", 0.01, 10, err, sizeof err);
    bgload_t *view = bgload_new_contenders (&load, "child", err, sizeof err);
    assert_non_null (view);
    int changes = 0, last = bgload_comm (view);
    for (double t = 0; t < 100; t += 0.01) {
        bgload_advance (whole, t, 1);
        bgload_advance (view, t, 0);
        assert_int_equal (bgload_comm (whole), bgload_comm (view));
        assert_int_equal (bgload_computing (whole), bgload_computing (view));
        changes += bgload_comm (view) != last;
        last = bgload_comm (view);
    }
    assert_true (changes > 50);
    assert_int_equal (bgload_jobs (view), 0);
    assert_near (bgload_factor (view) * (1 + bgload_computing (view)), 1);
    bgload_destroy (&whole);
    bgload_destroy (&view);
}

/*  Steps and a trace: 1 before their first points, each point holding
 *  until the next, the last for ever; the two multiply. */
static void
test_steps_and_trace (void **state)
{
    (void) state;
    load_point_t st[2] = {{.at_s = 10, .load = 2}, {.at_s = 20, .load = 1.5}};
    load_point_t tr[3] = {{.at_s = 0, .load = 1}, {.at_s = 15, .load = 4},
                          {.at_s = 30, .load = 1.25}};
    load_t load = {.steps = st, .nsteps = 2, .seed = 1};
    bgload_t *b = model (&load, "n");
    assert_near (bgload_factor (b), 1);
    assert_near (bgload_next (b, 1), 10);
    bgload_advance (b, 9.5, 1);
    assert_near (bgload_factor (b), 1);
    bgload_advance (b, 10, 1);
    assert_near (bgload_factor (b), 0.5);
    bgload_advance (b, 25, 1);
    assert_near (bgload_factor (b), 1 / 1.5);
    assert_true (isinf (bgload_next (b, 1)));
    /*  10 s at 1, 10 at 1/2, 5 at 2/3; a level is no background process. */
    assert_near (bgload_fg_integral (b), 10 + 5 + 5 / 1.5);
    assert_near (bgload_busy_integral (b), 0);
    bgload_destroy (&b);

    load = (load_t) {.steps = st, .nsteps = 2, .trace = tr, .ntrace = 3, .seed = 1};
    b = model (&load, "n");
    double at[] = {5, 12, 17, 22, 31, 1e6};
    double want[] = {1, 1 / 2.0, 1 / 8.0, 1 / 6.0, 1 / 1.875, 1 / 1.875};
    for (int i = 0; i < 6; i++) {
        bgload_advance (b, at[i], 0);
        assert_near (bgload_factor (b), want[i]);
    }
    bgload_destroy (&b);
}

/*  The validation: U x demand kind, the foreground always computing,
 *  `seconds` of platform time. */
static void
validate (double u, dist_kind_t kind, double cv, double seconds)
{
    load_stream_t s = stream (u, kind, cv);
    load_t load = {.streams = &s, .nstreams = 1, .seed = 11};
    bgload_t *b = model (&load, "solo");
    bgload_advance (b, seconds, 1);
    double realized = bgload_busy_integral (b) / seconds;
    double fg = bgload_fg_integral (b) / seconds;
    print_message ("U %.2f %s cv %g, %g s: realized %.4f, foreground %.4f (1 - U %.2f), "
                   "%d active at the end\n", u, dist_kind_str (kind), cv, seconds,
                   realized, fg, 1 - u, bgload_jobs (b));
    if (!(fabs (realized - u) <= 0.03))
        fail_msg ("realized utilization %.4f, want %.2f +- 0.03", realized, u);
    if (!(fabs (fg / (1 - u) - 1) <= 0.05))
        fail_msg ("foreground rate %.4f, want %.4f +- 5%%", fg, 1 - u);
    assert_int_equal (bgload_refused (b), 0);
    bgload_destroy (&b);
}

/*  Exponential demands: 100,000 s (the work arrived, a compound Poisson
 *  sum, has a standard deviation of sqrt (U x 0.2 x 2 / T) = 0.17% of T at
 *  U = 0.75, a twentieth of the 5% asked of the foreground's 0.25).
 *  Hyperexponential of cv 3: five times the variance per job, 400,000 s
 *  (0.19%). Each run is a few hundred thousand events: well under a
 *  second of CPU. */
static void
test_validation_exp (void **state)
{
    (void) state;
    validate (0.25, DIST_EXP, 1, 100000);
    validate (0.5, DIST_EXP, 1, 100000);
    validate (0.75, DIST_EXP, 1, 100000);
}

static void
test_validation_h2 (void **state)
{
    (void) state;
    validate (0.25, DIST_H2, 3, 400000);
    validate (0.5, DIST_H2, 3, 400000);
    validate (0.75, DIST_H2, 3, 400000);
}

static void
test_bad_distribution (void **state)
{
    (void) state;
    load_stream_t s = stream (0.5, DIST_EXP, 2);   /* an exponential's cv is 1 */
    load_t load = {.streams = &s, .nstreams = 1, .seed = 1};
    char err[TF_ERRLEN] = "";
    assert_null (bgload_new (&load, "n", 0, 0, err, sizeof err));
    assert_non_null (strstr (err, "cv"));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_same_seed_same_sequence),
        cmocka_unit_test (test_finish_ahead),
        cmocka_unit_test (test_ps_foreground_busy),
        cmocka_unit_test (test_ps_foreground_idle),
        cmocka_unit_test (test_job_limit),
        cmocka_unit_test (test_contenders),
        cmocka_unit_test (test_contenders_only_agrees),
        cmocka_unit_test (test_steps_and_trace),
        cmocka_unit_test (test_validation_exp),
        cmocka_unit_test (test_validation_h2),
        cmocka_unit_test (test_bad_distribution),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
