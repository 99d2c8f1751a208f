/*  test_loademul — the emulated background load run alongside an engine
 *  in the loop (loademul_follow, node/runtime.h): however late the model
 *  is brought up to date, the task's end comes out exact, since the
 *  foreground shares the CPU from the task's exact start and each change
 *  of speed is dated back to its event.
 *
 *  Wall time is real here (the engine reads the clock), but every
 *  expected end is exact whatever the sleeps last: the cases are chosen
 *  so that the instants the test cannot control cancel (see each).
 *  Tolerance 1e-9 s: sums of a few terms of about 1 s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>

#include "node/bgload.h"
#include "node/runtime.h"
#include "overlay/util.h"

/*  got within tol of want, compared as doubles (cmocka's
 *  assert_float_equal rounds to float: a millisecond at these clocks). */
static void
assert_near_s (double got, double want, double tol)
{
    if (!(fabs (got - want) <= tol))
        fail_msg ("got %.9f, want %.9f (off by %.3g)", got, want, got - want);
}

static engine_t *
in_loop (double rate)
{
    engine_cfg_t cfg = {.mode = PLATFORM_EMULATED, .rate = rate, .time_scale = 1,
                        .in_loop = 1};
    char err[TF_ERRLEN];
    engine_t *e = engine_new (&cfg, err, sizeof err);
    assert_non_null (e);
    return e;
}

static void
sleep_s (double s)
{
    nanosleep (&(struct timespec){0, (long) (s * 1e9)}, NULL);
}

static double
task_end (engine_t *e)
{
    double start, end;
    assert_int_equal (engine_task_span (e, &start, &end), 1);
    return end;
}

/*  A job of 0.01 s is there from platform 0; a task of 2 units at 100
 *  units/s starts at ps (a hair later). The job runs alone until ps, then
 *  both at 1/2: the job ends at ps + 2 (0.01 - ps), the task having done
 *  100 (0.01 - ps) units; its rest at full speed: its end is 0.03 for any
 *  ps. The model is brought up to date once, 50 ms later. */
static void
test_task_end_is_exact (void **state)
{
    (void) state;
    load_t load = {.seed = 1};
    char err[TF_ERRLEN];
    bgload_t *b = bgload_new (&load, "n", 0, 0, err, sizeof err);
    engine_t *e = in_loop (100);
    loademul_clock_t c = {.t0 = tf_now (), .time_scale = 1, .interference = 1};
    bgload_add_job (b, 0.01);
    engine_start (e, 1, 2);
    sleep_s (0.05);
    loademul_follow (b, e, &c, tf_now ());
    assert_int_equal (bgload_jobs (b), 0);
    assert_near_s (task_end (e), c.t0 + 0.03, 1e-9);
    assert_true (engine_deadline (e, tf_now ()) == 0);
    double read = tf_now ();
    assert_int_equal (engine_recv (e, NULL, NULL), 0);
    assert_true (engine_lag (e, NULL) >= read - (c.t0 + 0.03) - 1e-9);
    /*  The model went on without the foreground after its end: the
     *  foreground got the task's 0.02 CPU seconds, the job its 0.01. */
    loademul_follow (b, e, &c, tf_now ());
    assert_near_s (bgload_fg_integral (b), 0.02, 1e-9);
    assert_near_s (bgload_busy_integral (b), 0.01, 1e-9);
    engine_destroy (&e);
    bgload_destroy (&b);
}

/*  At interference 0.5: a task of 100 units at 50 units/s from ps; a job
 *  of 0.01 s comes at p1 (when the test adds it), halves the task's speed
 *  until p1 + 0.02 (0.5 units), then the rest at 50: the end is
 *  p1 + 0.02 + (99.5 - 50 (p1 - ps)) / 50 = ps + 2.01 for any p1. The
 *  loop learns of the job's end 50 ms late. */
static void
test_interference_and_a_late_job (void **state)
{
    (void) state;
    load_t load = {.seed = 1};
    char err[TF_ERRLEN];
    bgload_t *b = bgload_new (&load, "n", 0, 0, err, sizeof err);
    engine_t *e = in_loop (100);
    loademul_clock_t c = {.t0 = tf_now (), .time_scale = 1, .interference = 0.5};
    engine_set_speed (e, 0.5);
    engine_start (e, 2, 100);
    double start, end;
    engine_task_span (e, &start, &end);
    sleep_s (0.005);
    loademul_follow (b, e, &c, tf_now ());
    bgload_add_job (b, 0.01);
    loademul_follow (b, e, &c, tf_now ());   /* no time passed: the new factor */
    sleep_s (0.05);
    loademul_follow (b, e, &c, tf_now ());
    assert_int_equal (bgload_jobs (b), 0);
    assert_near_s (task_end (e), start + 2.01, 1e-9);
    engine_destroy (&e);
    bgload_destroy (&b);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_task_end_is_exact),
        cmocka_unit_test (test_interference_and_a_late_job),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
