/*  test_meter — the sliding-window rate meter and the interference factor.
 *
 *  Time is passed in, so every expectation here is exact arithmetic on the
 *  meter's contract (node/meter.h), not a measurement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include "node/meter.h"
#include "overlay/util.h"

/*  Times start far from 0, like the monotonic clock's. */
#define T0 5000.0

/*  Fail unless got is within rel of want (relative). */
static void
check_near (double got, double want, double rel, const char *what)
{
    if (!(fabs (got - want) <= rel * fabs (want)))
        fail_msg ("%s: got %.9g, want %.9g (within %g)", what, got, want, rel);
}

static void
test_new_and_destroy (void **state)
{
    (void) state;
    meter_t *m = meter_new (0.1);
    assert_non_null (m);
    assert_true (meter_rate (m, T0) == 0);
    assert_true (meter_total (m) == 0);
    meter_destroy (&m);
    assert_null (m);
    meter_destroy (&m);         /* safe on NULL */
}

/*  1000 bytes every tenth of a window reads 10000 per window, once a
 *  window has passed: at the samples and between them. During start-up it
 *  never reads high, and from a quarter window on it reads exact at the
 *  samples. Checked for the default window and a 1-second one. */
static void
test_steady_stream_reads_its_rate (void **state)
{
    (void) state;
    const double windows[] = {0.1, 1.0};
    for (int w = 0; w < 2; w++) {
        double window = windows[w], gap = window / 10, want = 1000 / gap;
        meter_t *m = meter_new (window);
        for (int i = 0; i <= 300; i++) {
            double t = T0 + i * gap;
            meter_add (m, t, 1000);
            double at = meter_rate (m, t), between = meter_rate (m, t + 0.4 * gap);
            if (i >= 10) {
                check_near (at, want, 0.01, "at a sample");
                check_near (between, want, 0.01, "between samples");
            } else {
                assert_true (at <= want * 1.000001);
                assert_true (between <= want * 1.000001);
                if (i * gap >= METER_MIN_SPAN * window)
                    check_near (at, want, 0.01, "start-up, at a sample");
            }
        }
        assert_true (meter_total (m) == 301 * 1000.0);
        meter_destroy (&m);
    }
}

/*  A dense stream (5 samples to a bucket, 100 to a window): the oldest
 *  bucket is split by time, and the error stays far below 1%. */
static void
test_dense_stream_reads_its_rate (void **state)
{
    (void) state;
    meter_t *m = meter_new (0.1);
    for (int i = 0; i <= 1000; i++) {
        double t = T0 + i * 0.001;
        meter_add (m, t, 100);
        if (i >= 100) {
            check_near (meter_rate (m, t), 100000, 0.01, "dense, at a sample");
            check_near (meter_rate (m, t + 0.0003), 100000, 0.01, "dense, between");
        }
    }
    meter_destroy (&m);
}

/*  When the samples stop, the rate falls over one window and is exactly 0
 *  from then on; a stream that resumes long after reads right again. */
static void
test_idle_decays_to_zero (void **state)
{
    (void) state;
    meter_t *m = meter_new (0.1);
    double t = T0;
    for (int i = 0; i < 50; i++, t += 0.01)
        meter_add (m, t, 1000);
    double last = t - 0.01;
    check_near (meter_rate (m, last), 100000, 0.01, "before the pause");

    double previous = meter_rate (m, last);
    for (double dt = 0.001; dt < 0.1; dt += 0.001) {
        double r = meter_rate (m, last + dt);
        assert_true (r <= previous);
        previous = r;
    }
    check_near (meter_rate (m, last + 0.05), 50000, 0.01, "half a window idle");
    assert_true (meter_rate (m, last + 0.1) == 0);
    assert_true (meter_rate (m, last + 0.15) == 0);
    assert_true (meter_rate (m, last + 1000) == 0);

    /* An hour later, the same stream again. */
    t = last + 3600;
    for (int i = 0; i <= 20; i++, t += 0.01)
        meter_add (m, t, 1000);
    check_near (meter_rate (m, t - 0.01), 100000, 0.01, "after an hour idle");
    assert_true (meter_total (m) == 71 * 1000.0);
    meter_destroy (&m);
}

/*  The start-up rule: the first sample is never counted, and what follows
 *  it is divided by at least a quarter window. */
static void
test_start_up_rule (void **state)
{
    (void) state;
    /* A lone first sample, however big, reads 0. */
    meter_t *m = meter_new (0.1);
    meter_add (m, T0, 1e9);
    assert_true (meter_rate (m, T0) == 0);
    assert_true (meter_rate (m, T0 + 0.01) == 0);
    assert_true (meter_rate (m, T0 + 0.2) == 0);
    assert_true (meter_total (m) == 1e9);
    meter_destroy (&m);

    /* Two 1 MB samples 1 ms apart: the second over a quarter window, four
     * times what it reads once the meter is a window old, and no more. */
    m = meter_new (0.1);
    meter_add (m, T0, 1e6);
    meter_add (m, T0 + 0.001, 1e6);
    check_near (meter_rate (m, T0 + 0.001), 1e6 / 0.025, 1e-9, "burst at start");
    check_near (meter_rate (m, T0 + 0.020), 1e6 / 0.025, 1e-9, "a fifth window on");
    check_near (meter_rate (m, T0 + 0.050), 1e6 / 0.050, 1e-9, "half a window on");
    /* No jump where the start-up rule meets the sliding window. */
    double before = meter_rate (m, T0 + 0.1 - 1e-7);
    double after = meter_rate (m, T0 + 0.1 + 1e-7);
    check_near (before, 1e6 / 0.1, 1e-5, "just before a window");
    check_near (after, 1e6 / 0.1, 1e-3, "just after a window");
    assert_true (meter_rate (m, T0 + 0.1011) == 0);
    meter_destroy (&m);

    /* A zero marks the start: the first real sample then counts. */
    m = meter_new (0.1);
    meter_add (m, T0, 0);
    meter_add (m, T0 + 0.05, 1000);
    check_near (meter_rate (m, T0 + 0.05), 1000 / 0.05, 1e-9, "after a time mark");
    assert_true (meter_total (m) == 1000);
    meter_destroy (&m);
}

/*  A step from 100000/s to 400000/s (and down to 50000/s) shows in full
 *  one window after it, rising (falling) steadily in between. */
static void
test_step_change_within_a_window (void **state)
{
    (void) state;
    meter_t *m = meter_new (0.1);
    int i = 0;
    for (; i < 100; i++)
        meter_add (m, T0 + i * 0.01, 1000);
    double previous = meter_rate (m, T0 + (i - 1) * 0.01);
    for (int k = 0; k < 10; k++, i++) {
        meter_add (m, T0 + i * 0.01, 4000);
        double r = meter_rate (m, T0 + i * 0.01);
        assert_true (r >= previous);
        previous = r;
    }
    check_near (meter_rate (m, T0 + (i - 1) * 0.01), 400000, 0.01, "a window after the rise");
    for (int k = 0; k < 10; k++, i++)
        meter_add (m, T0 + i * 0.01, 500);
    check_near (meter_rate (m, T0 + (i - 1) * 0.01), 50000, 0.01, "a window after the fall");
    meter_destroy (&m);
}

/*  An earlier time counts as the latest one, for samples and queries
 *  alike; times and amounts that are not numbers change nothing. */
static void
test_time_going_backwards (void **state)
{
    (void) state;
    const double nan = __builtin_nan (""), inf = __builtin_inf ();
    meter_t *m = meter_new (0.1);
    meter_add (m, nan, 1000);           /* no clock yet: ignored */
    assert_true (meter_total (m) == 0);

    meter_add (m, T0, 1000);
    meter_add (m, T0 + 0.05, 1000);
    meter_add (m, T0 - 3, 1000);        /* counts at T0 + 0.05 */
    meter_add (m, nan, 500);            /* likewise */
    meter_add (m, inf, 500);            /* likewise */
    assert_true (meter_total (m) == 4000);
    check_near (meter_rate (m, T0 + 0.05), 3000 / 0.05, 1e-9, "at the latest");
    check_near (meter_rate (m, T0 - 10), 3000 / 0.05, 1e-9, "asked in the past");
    check_near (meter_rate (m, nan), 3000 / 0.05, 1e-9, "asked at NaN");

    meter_add (m, T0 + 0.06, -5);       /* bad amounts are ignored */
    meter_add (m, T0 + 0.06, nan);
    meter_add (m, T0 + 0.06, inf);
    assert_true (meter_total (m) == 4000);
    check_near (meter_rate (m, T0 + 0.12), 3000 / 0.1, 1e-9, "a window on");
    assert_true (meter_rate (m, T0 + 0.16) == 0);

    /* Absurdly far ahead: bucket numbers stay in range, rates defined. */
    meter_add (m, 1e300, 1000);
    meter_add (m, 1e300, 1000);
    double r = meter_rate (m, 1e300);
    assert_true (r >= 0 && isfinite (r));
    assert_true (meter_rate (m, 1e301) == 0);
    assert_true (meter_total (m) == 6000);
    meter_destroy (&m);

    /* A span of times too wide for a double to subtract. */
    m = meter_new (0.1);
    meter_add (m, -1e308, 1000);
    meter_add (m, 1e308, 1000);
    meter_add (m, 1e308, 1000);
    r = meter_rate (m, 1e308);
    assert_true (r >= 0 && isfinite (r));
    meter_destroy (&m);
}


/*  --- against a brute-force sliding window ------------------------------ */

#define REF_MAX 4096

typedef struct {
    double t[REF_MAX], a[REF_MAX];
    int n;
} ref_t;

/*  The contract of meter_rate, computed from every sample. */
static double
ref_rate (const ref_t *r, double window, double now)
{
    if (r->n == 0)
        return 0;
    double age = now - r->t[0];
    double cut = age < window ? r->t[0] : now - window;
    double span = age >= window ? window
                  : age > METER_MIN_SPAN * window ? age : METER_MIN_SPAN * window;
    double sum = 0;
    for (int i = 0; i < r->n; i++)
        if (r->t[i] > cut && r->t[i] <= now)
            sum += r->a[i];
    return sum / span;
}

/*  The amount within one bucket either side of the window's start: what
 *  the meter may misplace. */
static double
ref_near_cut (const ref_t *r, double window, double now)
{
    double width = window / METER_BUCKETS;
    double age = now - r->t[0];
    double cut = age < window ? r->t[0] : now - window;
    double sum = 0;
    for (int i = 0; i < r->n; i++)
        if (r->t[i] > cut - width && r->t[i] <= cut + width)
            sum += r->a[i];
    return sum;
}

static uint64_t rng_state;

static double
uniform (double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double) (rng_state >> 11) / 9007199254740992.0;
}

/*  Random streams queried at random times. Samples further apart than a
 *  bucket: the meter is the exact sliding window. Denser ones: off by no
 *  more than the amount near the window's start. Gaps now and then
 *  outlast the whole ring. */
static void
test_matches_the_exact_window (void **state)
{
    (void) state;
    const double window = 0.1, width = window / METER_BUCKETS;
    for (int dense = 0; dense < 2; dense++) {
        for (uint64_t seed = 1; seed <= 20; seed++) {
            rng_state = seed;
            ref_t *r = xcalloc (1, sizeof (*r));
            meter_t *m = meter_new (window);
            double t = T0 + uniform (0, 1);
            while (r->n < REF_MAX) {
                double amount = uniform (0, 1) < 0.1 ? 0 : uniform (1, 10000);
                meter_add (m, t, amount);
                r->t[r->n] = t;
                r->a[r->n++] = amount;
                double queries[2] = {t, t + uniform (0, 0.06)};
                for (int k = 0; k < 2; k++) {
                    double q = queries[k];
                    double got = meter_rate (m, q), want = ref_rate (r, window, q);
                    double slack = dense ? ref_near_cut (r, window, q) / window : 0;
                    if (!(fabs (got - want) <= slack + 1e-9 * want + 1e-9))
                        fail_msg ("seed %d%s, sample %d: meter %.9g, exact %.9g",
                                  (int) seed, dense ? " (dense)" : "", r->n, got, want);
                }
                double roll = uniform (0, 1);
                if (dense)
                    t += roll < 0.01 ? uniform (0.2, 2) : uniform (0, width / 2);
                else
                    t += roll < 0.05 ? uniform (0.2, 2) : uniform (1.01 * width, window);
            }
            assert_true (meter_total (m) > 0);
            meter_destroy (&m);
            free (r);
        }
    }
}


/*  --- interference_factor ------------------------------------------------ */

static void
test_interference_factor_values (void **state)
{
    (void) state;
    /* The fork7 root sending to Lab3 at 10.8 MB/s with IR_s 0.0333 keeps
     * 1 - 0.35964 of its compute: 9.06 x that is the 5.80 diagonals/s the
     * published table measured ("C root while sending"). */
    double ir = 0.0333, mbps = 10.8;
    double f = interference_factor (0, 0, &ir, &mbps, 1);
    assert_true (fabs (f - 0.64036) < 1e-12);
    assert_true (fabs (9.06 * f - 5.80) < 0.005);

    /* Lab3 receiving from the root at 10.8 MB/s with IR_r 0.0443. */
    f = interference_factor (0.0443, 10.8, NULL, NULL, 0);
    assert_true (fabs (f - (1 - 0.47844)) < 1e-12);

    /* Receiving and two sends together: the terms add. */
    double irs[2] = {0.0333, 0.0208}, rates[2] = {2, 3};
    f = interference_factor (0.0443, 5, irs, rates, 2);
    assert_true (fabs (f - (1 - 0.2215 - 0.0666 - 0.0624)) < 1e-12);

    /* No traffic, no children: full speed. */
    assert_true (interference_factor (0.0443, 0, NULL, NULL, 0) == 1);
    assert_true (interference_factor (0, 0, irs, rates, 0) == 1);
    assert_true (interference_factor (0, 0, NULL, NULL, -1) == 1);
}

static void
test_interference_factor_clamps (void **state)
{
    (void) state;
    const double nan = __builtin_nan (""), inf = __builtin_inf ();
    /* Three sends at 10.8 MB/s with IR_s 0.0333 would cost 108%. */
    double irs[3] = {0.0333, 0.0333, 0.0333}, rates[3] = {10.8, 10.8, 10.8};
    assert_true (interference_factor (0, 0, irs, rates, 3) == 0);
    assert_true (interference_factor (0.0443, 30, NULL, NULL, 0) == 0);
    /* Exactly all of it. */
    assert_true (interference_factor (0.5, 2, NULL, NULL, 0) == 0);

    /* A negative IR (synergy) cannot make a node faster than alone. */
    double neg = -0.01, ten = 10;
    assert_true (interference_factor (0, 0, &neg, &ten, 1) == 1);
    assert_true (interference_factor (0.01, 10, &neg, &ten, 1) == 1);
    assert_true (fabs (interference_factor (0.02, 10, &neg, &ten, 1) - 0.9) < 1e-12);

    /* Never NaN: a NaN term counts as 0, infinities saturate. */
    double one = 1, half = 0.5;
    double f = interference_factor (nan, 10, &half, &one, 1);
    assert_true (f == 0.5);
    f = interference_factor (0.1, nan, NULL, NULL, 0);
    assert_true (f == 1);
    f = interference_factor (0, inf, &half, &one, 1);       /* 0 x inf */
    assert_true (f == 0.5);
    assert_true (interference_factor (0.1, inf, NULL, NULL, 0) == 0);
    assert_true (interference_factor (-0.1, inf, NULL, NULL, 0) == 1);
    double ninf = -inf;
    assert_true (interference_factor (0.1, inf, &ninf, &one, 1) == 1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_new_and_destroy),
        cmocka_unit_test (test_steady_stream_reads_its_rate),
        cmocka_unit_test (test_dense_stream_reads_its_rate),
        cmocka_unit_test (test_idle_decays_to_zero),
        cmocka_unit_test (test_start_up_rule),
        cmocka_unit_test (test_step_change_within_a_window),
        cmocka_unit_test (test_time_going_backwards),
        cmocka_unit_test (test_matches_the_exact_window),
        cmocka_unit_test (test_interference_factor_values),
        cmocka_unit_test (test_interference_factor_clamps),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
