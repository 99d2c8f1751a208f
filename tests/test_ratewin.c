/*  test_ratewin — the windowed effective compute rate: units per busy
 *  second over the window (not a mean of interval rates), intervals
 *  without computing left out, the window's limit, the batch-means
 *  standard error on hand-computed cases, and refused samples.
 *
 *  Every figure below is a few exact binary operations, so comparisons
 *  are to 1e-12.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "node/ratewin.h"

#define TOL 1e-12

static void
assert_near (double got, double want)
{
    if (!(fabs (got - want) <= TOL))
        fail_msg ("got %.17g, want %.17g", got, want);
}

/*  Nothing computed yet: no rate, no error; the first sample is only the
 *  origin. */
static void
test_empty_window_has_no_rate (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (8);
    double se = 0;
    assert_true (isnan (ratewin_rate (w, &se)) && isnan (se));
    assert_int_equal (ratewin_feed (w, 100, 50, 3), 0);
    assert_int_equal (ratewin_count (w), 0);
    assert_true (isnan (ratewin_rate (w, NULL)));
    ratewin_destroy (&w);
    assert_null (w);
    ratewin_destroy (&w);
}

/*  Two intervals, 10 units in 1 busy second and 1 unit in 0.5: the rate
 *  is 11 / 1.5, not the mean of 10 and 2; one interval has no error. */
static void
test_rate_weights_intervals_by_busy_time (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (8);
    double se;
    ratewin_feed (w, 0, 0, 0);
    assert_int_equal (ratewin_feed (w, 1, 10, 1), 1);
    assert_near (ratewin_rate (w, &se), 10);
    assert_true (isnan (se));
    assert_int_equal (ratewin_feed (w, 2, 11, 1.5), 1);
    assert_near (ratewin_rate (w, NULL), 11 / 1.5);
    ratewin_destroy (&w);
}

/*  An interval without busy time carries nothing, even if units moved
 *  (a calibration's probe task): count and rate stay. */
static void
test_idle_intervals_carry_no_information (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (8);
    ratewin_feed (w, 0, 0, 0);
    ratewin_feed (w, 1, 4, 1);
    assert_int_equal (ratewin_feed (w, 2, 4, 1), 0);
    assert_int_equal (ratewin_feed (w, 3, 9, 1), 0);
    assert_int_equal (ratewin_count (w), 1);
    assert_near (ratewin_rate (w, NULL), 4);
    ratewin_feed (w, 4, 15, 2);
    assert_int_equal (ratewin_count (w), 2);
    assert_near (ratewin_rate (w, NULL), (4.0 + 6) / 2);
    ratewin_destroy (&w);
}

/*  A window of 4: after 4 intervals at 1 unit/s and 4 at 2, only the
 *  latter count; the count never passes 4. */
static void
test_window_keeps_the_latest_intervals (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (4);
    double units = 0;
    ratewin_feed (w, 0, 0, 0);
    for (int i = 1; i <= 8; i++) {
        units += i <= 4 ? 1 : 2;
        ratewin_feed (w, i, units, i);
        assert_int_equal (ratewin_count (w), i < 4 ? i : 4);
        if (i == 6)
            assert_near (ratewin_rate (w, NULL), 6.0 / 4);
    }
    assert_near (ratewin_rate (w, NULL), 2);
    ratewin_destroy (&w);
}

/*  Two intervals at 1 and 3 units/s, 1 s each: R = 2, two batches,
 *  se^2 = 2/1 x (1 + 1) / 2^2 = 1. The same rate throughout: se 0. */
static void
test_stderr_by_hand (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (8);
    double se;
    ratewin_feed (w, 0, 0, 0);
    ratewin_feed (w, 1, 1, 1);
    ratewin_feed (w, 2, 4, 2);
    assert_near (ratewin_rate (w, &se), 2);
    assert_near (se, 1);
    ratewin_destroy (&w);

    w = ratewin_new (8);
    ratewin_feed (w, 0, 0, 0);
    for (int i = 1; i <= 5; i++)
        ratewin_feed (w, i, 3.0 * i * 0.5, i * 0.5);
    assert_near (ratewin_rate (w, &se), 3);
    assert_near (se, 0);
    ratewin_destroy (&w);
}

/*  32 intervals alternating 1 and 3 units/s: in RATEWIN_BATCHES = 16
 *  batches of two each batch holds one of each, so the error is 0 (batch
 *  means); a variance of single intervals would give about 0.18. With a
 *  window of three intervals at 1, 3, 5 units/s (three batches of one),
 *  R = 3 and se^2 = 3/2 x ((1-3)^2 + 0 + (5-3)^2) / 3^2 = 4/3. */
static void
test_stderr_uses_batches (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (32);
    double se, units = 0;
    ratewin_feed (w, 0, 0, 0);
    for (int i = 1; i <= 32; i++) {
        units += i % 2 ? 1 : 3;
        ratewin_feed (w, i, units, i);
    }
    assert_near (ratewin_rate (w, &se), 2);
    assert_near (se, 0);
    ratewin_destroy (&w);

    w = ratewin_new (3);
    ratewin_feed (w, 0, 0, 0);
    ratewin_feed (w, 1, 1, 1);
    ratewin_feed (w, 2, 4, 2);
    ratewin_feed (w, 3, 9, 3);
    assert_near (ratewin_rate (w, &se), 3);
    assert_near (se, sqrt (4.0 / 3));
    ratewin_destroy (&w);
}

/*  Refused samples change nothing: the next good one is measured from
 *  the last good one. */
static void
test_refuses_bad_samples (void **state)
{
    (void) state;
    ratewin_t *w = ratewin_new (8);
    assert_int_equal (ratewin_feed (w, NAN, 0, 0), -1);
    ratewin_feed (w, 10, 5, 1);
    assert_int_equal (ratewin_feed (w, 10, 6, 2), -1);    /* same time */
    assert_int_equal (ratewin_feed (w, 9, 6, 2), -1);     /* earlier */
    assert_int_equal (ratewin_feed (w, 11, 4, 2), -1);    /* units back */
    assert_int_equal (ratewin_feed (w, 11, 6, 0.5), -1);  /* busy back */
    assert_int_equal (ratewin_feed (w, 11, INFINITY, 2), -1);
    assert_int_equal (ratewin_feed (w, 11, 6, NAN), -1);
    assert_int_equal (ratewin_count (w), 0);
    assert_int_equal (ratewin_feed (w, 11, 9, 3), 1);
    assert_near (ratewin_rate (w, NULL), 2);
    ratewin_destroy (&w);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_empty_window_has_no_rate),
        cmocka_unit_test (test_rate_weights_intervals_by_busy_time),
        cmocka_unit_test (test_idle_intervals_carry_no_information),
        cmocka_unit_test (test_window_keeps_the_latest_intervals),
        cmocka_unit_test (test_stderr_by_hand),
        cmocka_unit_test (test_stderr_uses_batches),
        cmocka_unit_test (test_refuses_bad_samples),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
