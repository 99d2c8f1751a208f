/*  test_fit — online least squares, as a node uses it to estimate its
 *  interference rates.
 *
 *  Synthetic data come from the published Lab0 figures (IR near 0.02 -
 *  0.05 per MB/s, rates 0 - 11 MB/s, intercept 1), drawn from a seeded
 *  generator of our own so every run sees the same numbers on any libc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include "node/fit.h"
#include "overlay/util.h"

#define KMAX 8

/*  splitmix64: a small, good, portable generator. */
static uint64_t
rng_next (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/*  Uniform in [0, 1). */
static double
rng_uniform (uint64_t *state)
{
    return (double) (rng_next (state) >> 11) * (1.0 / 9007199254740992.0);
}

/*  Standard normal, Box-Muller. */
static double
rng_normal (uint64_t *state)
{
    double u1 = 1 - rng_uniform (state), u2 = rng_uniform (state);
    return sqrt (-2 * log (u1)) * cos (2 * M_PI * u2);
}

/*  Fail unless got is within rel of want (relative). */
static void
check_near (double got, double want, double rel, const char *what)
{
    if (!(fabs (got - want) <= rel * fabs (want)))
        fail_msg ("%s: got %.12g, want %.12g (within %g)", what, got, want, rel);
}

/*  Fail unless got is within abs of want. */
static void
check_abs (double got, double want, double abs, const char *what)
{
    if (!(fabs (got - want) <= abs))
        fail_msg ("%s: got %.12g, want %.12g (within %g)", what, got, want, abs);
}

/*  A node's transfer rates for one interval: the receive rate is usually
 *  on, each child is sent to half the time, at 0 - 11 MB/s. */
static void
draw_rates (uint64_t *rng, int k, double *x)
{
    for (int j = 0; j < k; j++) {
        double on = rng_uniform (rng) < (j == 0 ? 0.8 : 0.5);
        x[j] = on ? 11 * rng_uniform (rng) : 0;
    }
}

/*  y = b[0] + sum b[j+1] x[j] + sd * noise. */
static double
model (const double *b, int k, const double *x, double sd, uint64_t *rng)
{
    double y = b[0];
    for (int j = 0; j < k; j++)
        y += b[j + 1] * x[j];
    return sd > 0 ? y + sd * rng_normal (rng) : y;
}

static const double lab0[] = {1, -0.0443, -0.0333, -0.0208, -0.0226};

static void
test_new_and_destroy (void **state)
{
    (void) state;
    fit_t *f = fit_new (3);
    assert_non_null (f);
    assert_int_equal (fit_count (f), 0);
    fit_destroy (&f);
    assert_null (f);
    fit_destroy (&f);           /* safe on NULL */
}

/*  With no regressors the fit is the sample mean, and its standard error
 *  the sample standard deviation over sqrt(n). */
static void
test_intercept_only_is_the_mean (void **state)
{
    (void) state;
    const double ys[] = {0.9, 1.1, 1.0, 0.95, 1.2, 0.85};
    int n = 6;
    fit_t *f = fit_new (0);
    for (int i = 0; i < n; i++)
        fit_add (f, ys[i], NULL);
    double coef[1], se[1];
    assert_int_equal (fit_solve (f, coef, se), 1);

    double mean = 0, ss = 0;
    for (int i = 0; i < n; i++)
        mean += ys[i] / n;
    for (int i = 0; i < n; i++)
        ss += (ys[i] - mean) * (ys[i] - mean);
    check_near (coef[0], 1.0, 1e-14, "mean");
    check_near (se[0], sqrt (ss / (n - 1) / n), 1e-12, "se of the mean");
    fit_destroy (&f);
}

/*  No observation: -1 and everything NAN. One observation: the intercept
 *  is that y, nothing else can be estimated, and no error can be. */
static void
test_too_few_observations (void **state)
{
    (void) state;
    double coef[3] = {0, 0, 0}, se[3] = {0, 0, 0};
    fit_t *f = fit_new (2);
    assert_int_equal (fit_solve (f, coef, se), -1);
    for (int j = 0; j < 3; j++)
        assert_true (isnan (coef[j]) && isnan (se[j]));

    const double bad[] = {NAN, 1};
    fit_add (f, 1, bad);        /* ignored: still nothing */
    assert_int_equal (fit_count (f), 0);
    assert_int_equal (fit_solve (f, coef, se), -1);

    const double x[] = {3, 4};
    fit_add (f, 0.8, x);
    assert_int_equal (fit_count (f), 1);
    assert_int_equal (fit_solve (f, coef, se), 1);
    check_near (coef[0], 0.8, 1e-15, "intercept of one point");
    assert_true (isnan (se[0]));
    for (int j = 1; j < 3; j++)
        assert_true (isnan (coef[j]) && isnan (se[j]));
    fit_destroy (&f);
}

/*  Noiseless data from the published rates come back exactly, with zero
 *  standard errors, also when n equals the number of parameters (SEs NAN
 *  then: no degree of freedom is left to estimate them). */
static void
test_noiseless_exact_recovery (void **state)
{
    (void) state;
    int k = 4;
    uint64_t rng = 42;
    fit_t *f = fit_new (k);
    fit_t *tight = fit_new (k);
    double x[KMAX], coef[KMAX], se[KMAX];
    for (int i = 0; i < 60; i++) {
        for (int j = 0; j < k; j++)
            x[j] = 11 * rng_uniform (&rng);
        double y = model (lab0, k, x, 0, &rng);
        fit_add (f, y, x);
        if (i < k + 1)
            fit_add (tight, y, x);
    }
    assert_int_equal (fit_solve (f, coef, se), k + 1);
    for (int j = 0; j <= k; j++) {
        check_abs (coef[j], lab0[j], 1e-12, "coefficient");
        check_abs (se[j], 0, 1e-10, "standard error");
    }
    assert_int_equal (fit_solve (tight, coef, se), k + 1);
    for (int j = 0; j <= k; j++) {
        check_abs (coef[j], lab0[j], 1e-10, "coefficient, n = p");
        assert_true (isnan (se[j]));
    }
    fit_destroy (&f);
    fit_destroy (&tight);
}

/*  Regressors far from the origin relative to their spread (here 1e4 +
 *  0..11) make the raw normal equations hopeless; the fit still recovers
 *  the slopes to many digits. */
static void
test_badly_conditioned_data (void **state)
{
    (void) state;
    int k = 2;
    uint64_t rng = 7;
    const double b[] = {1, -0.0443, -0.0333};
    fit_t *f = fit_new (k);
    double x[KMAX], coef[KMAX], se[KMAX];
    for (int i = 0; i < 200; i++) {
        for (int j = 0; j < k; j++)
            x[j] = 1e4 + 11 * rng_uniform (&rng);
        fit_add (f, model (b, k, x, 0, &rng), x);
    }
    assert_int_equal (fit_solve (f, coef, se), k + 1);
    check_near (coef[1], b[1], 1e-7, "slope 1");
    check_near (coef[2], b[2], 1e-7, "slope 2");
    check_near (coef[0], b[0], 1e-6, "intercept");
    fit_destroy (&f);
}

/*  One regressor, noisy: coefficients and both standard errors equal the
 *  textbook closed forms, computed here by two passes over the data. */
static void
test_simple_regression_matches_textbook (void **state)
{
    (void) state;
    const double xs[] = {0, 1.5, 3, 4.5, 6, 7.5, 9, 10.5};
    const double ys[] = {1.01, 0.93, 0.88, 0.79, 0.75, 0.66, 0.62, 0.52};
    int n = 8;
    fit_t *f = fit_new (1);
    for (int i = 0; i < n; i++)
        fit_add (f, ys[i], &xs[i]);

    double mx = 0, my = 0, sxx = 0, sxy = 0, rss = 0;
    for (int i = 0; i < n; i++) {
        mx += xs[i] / n;
        my += ys[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
    }
    double b1 = sxy / sxx, b0 = my - b1 * mx;
    for (int i = 0; i < n; i++) {
        double r = ys[i] - b0 - b1 * xs[i];
        rss += r * r;
    }
    double s2 = rss / (n - 2);

    double coef[2], se[2];
    assert_int_equal (fit_solve (f, coef, se), 2);
    check_near (coef[1], b1, 1e-12, "slope");
    check_near (coef[0], b0, 1e-12, "intercept");
    check_near (se[1], sqrt (s2 / sxx), 1e-9, "se of the slope");
    check_near (se[0], sqrt (s2 * (1.0 / n + mx * mx / sxx)), 1e-9,
                "se of the intercept");
    fit_destroy (&f);
}

/*  Fill f with n realistic noisy observations of the Lab0 model. */
static void
fill_noisy (fit_t *f, int k, int n, uint64_t seed)
{
    uint64_t rng = seed;
    double x[KMAX];
    for (int i = 0; i < n; i++) {
        draw_rates (&rng, k, x);
        fit_add (f, model (lab0, k, x, 0.02, &rng), x);
    }
}

/*  Realistic noise (sd 0.02 on the normalized rate, 400 intervals): every
 *  interference rate within 10%, the intercept within 2%, and each truth
 *  within four standard errors of its estimate. */
static void
test_noisy_recovery (void **state)
{
    (void) state;
    int k = 4;
    fit_t *f = fit_new (k);
    fill_noisy (f, k, 400, 2024);
    double coef[KMAX], se[KMAX];
    assert_int_equal (fit_solve (f, coef, se), k + 1);
    check_near (coef[0], lab0[0], 0.02, "intercept");
    for (int j = 1; j <= k; j++) {
        check_near (coef[j], lab0[j], 0.10, "interference rate");
        assert_true (se[j] > 0);
        if (!(fabs (coef[j] - lab0[j]) <= 4 * se[j]))
            fail_msg ("coef %d: %.6g is %.1f se from %.6g", j, coef[j],
                      fabs (coef[j] - lab0[j]) / se[j], lab0[j]);
    }
    assert_true (fabs (coef[0] - lab0[0]) <= 4 * se[0]);
    fit_destroy (&f);
}

/*  Sixteen times the data, a quarter the standard error (within 20%). */
static void
test_standard_errors_shrink (void **state)
{
    (void) state;
    int k = 3;
    fit_t *small = fit_new (k), *large = fit_new (k);
    fill_noisy (small, k, 200, 11);
    fill_noisy (large, k, 3200, 12);
    double cs[KMAX], ss[KMAX], cl[KMAX], sl[KMAX];
    assert_int_equal (fit_solve (small, cs, ss), k + 1);
    assert_int_equal (fit_solve (large, cl, sl), k + 1);
    for (int j = 0; j <= k; j++)
        check_near (ss[j] / sl[j], 4, 0.2, "se ratio for 16x the data");
    fit_destroy (&small);
    fit_destroy (&large);
}

/*  A child never sent to (all zero) and a rate stuck at one value (up to
 *  rounding) are left out with NAN; the others are still estimated right. */
static void
test_never_varied_regressor (void **state)
{
    (void) state;
    int k = 4;
    uint64_t rng = 99;
    fit_t *f = fit_new (k);
    double x[KMAX], coef[KMAX], se[KMAX];
    for (int i = 0; i < 300; i++) {
        draw_rates (&rng, k, x);
        x[1] = 0;               /* never sent to */
        /*  Always sent to at the same rate, up to rounding jitter. */
        x[3] = 10.8 + 1e-11 * rng_normal (&rng);
        fit_add (f, model (lab0, k, x, 0.02, &rng), x);
    }
    assert_int_equal (fit_solve (f, coef, se), 3);
    assert_true (isnan (coef[2]) && isnan (se[2]));
    assert_true (isnan (coef[4]) && isnan (se[4]));
    check_near (coef[1], lab0[1], 0.10, "receive IR");
    check_near (coef[3], lab0[3], 0.10, "send IR, child 2");
    /*  The constant rate is absorbed by the intercept. */
    check_near (coef[0], lab0[0] + 10.8 * lab0[4], 0.02, "intercept");
    assert_true (se[0] > 0 && se[1] > 0 && se[3] > 0);
    fit_destroy (&f);
}

/*  Two children always sent to at the same rate (exactly, and up to
 *  measurement jitter of 1e-6 MB/s), and a third regressor an exact
 *  combination of two others: the later ones are left out, the earliest of
 *  each group carries the group's combined effect, and the independent ones
 *  are still right. */
static void
test_collinear_regressors (void **state)
{
    (void) state;
    int k = 4;
    uint64_t rng = 5;
    fit_t *same = fit_new (k);
    fit_t *jitter = fit_new (k);
    fit_t *combo = fit_new (k);
    double x[KMAX], coef[KMAX], se[KMAX];
    for (int i = 0; i < 300; i++) {
        draw_rates (&rng, k, x);
        x[2] = x[1];            /* children 1 and 2 move together */
        fit_add (same, model (lab0, k, x, 0.02, &rng), x);
        x[2] = x[1] + 1e-6 * rng_normal (&rng);
        fit_add (jitter, model (lab0, k, x, 0.02, &rng), x);
        draw_rates (&rng, k, x);
        x[3] = 0.5 * x[0] + 2 * x[1];
        fit_add (combo, model (lab0, k, x, 0, &rng), x);
    }
    assert_int_equal (fit_solve (same, coef, se), k);
    assert_true (isnan (coef[3]) && isnan (se[3]));
    check_near (coef[2], lab0[2] + lab0[3], 0.10, "combined send IR");
    check_near (coef[1], lab0[1], 0.10, "receive IR");
    check_near (coef[4], lab0[4], 0.10, "independent child");
    assert_true (isfinite (se[0]) && isfinite (se[1]) && isfinite (se[2]));

    assert_int_equal (fit_solve (jitter, coef, se), k);
    assert_true (isnan (coef[3]) && isnan (se[3]));
    check_near (coef[2], lab0[2] + lab0[3], 0.10, "combined send IR, jitter");
    check_near (coef[1], lab0[1], 0.10, "receive IR, jitter");

    assert_int_equal (fit_solve (combo, coef, se), k);
    assert_true (isnan (coef[4]) && isnan (se[4]));
    check_near (coef[1], lab0[1] + 0.5 * lab0[4], 1e-9, "x1 with its share");
    check_near (coef[2], lab0[2] + 2 * lab0[4], 1e-9, "x2 with its share");
    check_near (coef[3], lab0[3], 1e-9, "independent child");
    check_near (coef[0], lab0[0], 1e-9, "intercept");
    fit_destroy (&same);
    fit_destroy (&jitter);
    fit_destroy (&combo);
}

/*  Observations with a NAN or an infinity anywhere change nothing. */
static void
test_non_finite_ignored (void **state)
{
    (void) state;
    int k = 2;
    fit_t *clean = fit_new (k), *dirty = fit_new (k);
    uint64_t rng = 3;
    double x[KMAX];
    for (int i = 0; i < 50; i++) {
        draw_rates (&rng, k, x);
        double y = model (lab0, k, x, 0.02, &rng);
        fit_add (clean, y, x);
        fit_add (dirty, y, x);
        double bad[2] = {x[0], INFINITY};
        fit_add (dirty, y, bad);
        fit_add (dirty, NAN, x);
    }
    assert_int_equal (fit_count (dirty), 50);
    double c1[KMAX], s1[KMAX], c2[KMAX], s2[KMAX];
    assert_int_equal (fit_solve (clean, c1, s1), 3);
    assert_int_equal (fit_solve (dirty, c2, s2), 3);
    for (int j = 0; j <= k; j++) {
        assert_true (c1[j] == c2[j]);
        assert_true (s1[j] == s2[j]);
    }
    fit_destroy (&clean);
    fit_destroy (&dirty);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_new_and_destroy),
        cmocka_unit_test (test_intercept_only_is_the_mean),
        cmocka_unit_test (test_too_few_observations),
        cmocka_unit_test (test_noiseless_exact_recovery),
        cmocka_unit_test (test_badly_conditioned_data),
        cmocka_unit_test (test_simple_regression_matches_textbook),
        cmocka_unit_test (test_noisy_recovery),
        cmocka_unit_test (test_standard_errors_shrink),
        cmocka_unit_test (test_never_varied_regressor),
        cmocka_unit_test (test_collinear_regressors),
        cmocka_unit_test (test_non_finite_ignored),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
