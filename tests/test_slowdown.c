/*  test_slowdown — the predicted rate factors under background load: the
 *  Poisson-binomial against hand-computed cases and brute force, the
 *  Figueira & Berman slowdown (p CPU-bound contenders give p + 1, a
 *  worked example with a delay table), the Anglano job stream's 1 - U
 *  over classes, the Weissman 1 / L, and every refusal with its message.
 *
 *  Tolerance: 1e-12 throughout. Every expected value below is exact in
 *  binary or a few roundings away; the dynamic program takes p <= 50
 *  steps, each a convex combination adding at most a few ulps (2.2e-16)
 *  per entry, so its error stays near 50 * 4 * 2.2e-16 = 4.4e-14: 1e-12
 *  leaves a margin of 20 and still catches any wrong term (the smallest
 *  term a mutation could drop or double below is 1e-3 or more).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "overlay/slowdown.h"

#define TOL 1e-12

static void
assert_near (double got, double want)
{
    if (!(fabs (got - want) <= TOL))
        fail_msg ("got %.17g, want %.17g", got, want);
}

static void
assert_dist (const double *got, const double *want, int n)
{
    for (int i = 0; i < n; i++)
        assert_near (got[i], want[i]);
}

static void
test_poisson_binomial_by_hand (void **state)
{
    (void) state;
    double d[8];
    /*  p = 0: no event, none happens for sure. */
    assert_int_equal (slowdown_poisson_binomial (NULL, 0, d), 0);
    assert_near (d[0], 1.0);
    /*  p = 1: {1 - q, q}. */
    assert_int_equal (slowdown_poisson_binomial ((double[]){0.3}, 1, d), 0);
    assert_dist (d, (double[]){0.7, 0.3}, 2);
    /*  p = 2, q = {0.2, 0.6}: P0 = 0.8 * 0.4 = 0.32,
     *  P1 = 0.2 * 0.4 + 0.8 * 0.6 = 0.56, P2 = 0.2 * 0.6 = 0.12. */
    assert_int_equal (slowdown_poisson_binomial ((double[]){0.2, 0.6}, 2, d), 0);
    assert_dist (d, (double[]){0.32, 0.56, 0.12}, 3);
    /*  The same the other way round: the order of the events is no matter. */
    assert_int_equal (slowdown_poisson_binomial ((double[]){0.6, 0.2}, 2, d), 0);
    assert_dist (d, (double[]){0.32, 0.56, 0.12}, 3);
    /*  All ones: all four for sure; all zeros: none. */
    assert_int_equal (slowdown_poisson_binomial ((double[]){1, 1, 1, 1}, 4, d), 0);
    assert_dist (d, (double[]){0, 0, 0, 0, 1}, 5);
    assert_int_equal (slowdown_poisson_binomial ((double[]){0, 0, 0, 0}, 4, d), 0);
    assert_dist (d, (double[]){1, 0, 0, 0, 0}, 5);
}

/*  A fixed pseudo-random fraction in [0, 1] (an LCG: deterministic). */
static double
next_fraction (uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / (double) (1u << 24);
}

static void
test_poisson_binomial_sums_to_one_and_matches_brute_force (void **state)
{
    (void) state;
    double q[50], d[51];
    uint32_t s = 21;
    for (int k = 0; k < 50; k++)
        q[k] = next_fraction (&s);
    assert_int_equal (slowdown_poisson_binomial (q, 50, d), 0);
    double sum = 0, mean = 0, want_mean = 0;
    for (int i = 0; i <= 50; i++) {
        assert_true (d[i] >= 0.0);
        sum += d[i];
        mean += i * d[i];
    }
    for (int k = 0; k < 50; k++)
        want_mean += q[k];
    assert_near (sum, 1.0);
    assert_near (mean, want_mean);   /* E[count] = sum of the q */
    /*  The first 10 against every one of the 2^10 outcomes. */
    double brute[11] = {0};
    for (unsigned set = 0; set < 1u << 10; set++) {
        double pr = 1.0;
        for (int k = 0; k < 10; k++)
            pr *= (set >> k & 1) ? q[k] : 1.0 - q[k];
        brute[__builtin_popcount (set)] += pr;
    }
    assert_int_equal (slowdown_poisson_binomial (q, 10, d), 0);
    assert_dist (d, brute, 11);
}

static void
test_poisson_binomial_refuses (void **state)
{
    (void) state;
    double d[3] = {7, 7, 7};
    assert_int_equal (slowdown_poisson_binomial ((double[]){0.5}, -1, d), -1);
    assert_int_equal (slowdown_poisson_binomial ((double[]){0.5, 1.5}, 2, d), -1);
    assert_int_equal (slowdown_poisson_binomial ((double[]){-0.1, 0.5}, 2, d), -1);
    assert_int_equal (slowdown_poisson_binomial ((double[]){0.5, NAN}, 2, d), -1);
    assert_int_equal (slowdown_poisson_binomial (NULL, 2, d), -1);
    assert_dist (d, (double[]){7, 7, 7}, 3);   /* untouched */
}

static void
test_cpu_bound_contenders_give_p_plus_one (void **state)
{
    (void) state;
    double ones[SLOWDOWN_CONTENDERS_MAX], zeros[SLOWDOWN_CONTENDERS_MAX] = {0};
    double delay[SLOWDOWN_CONTENDERS_MAX], out;
    for (int k = 0; k < SLOWDOWN_CONTENDERS_MAX; k++) {
        ones[k] = 1.0;
        delay[k] = 5.0;   /* never weighed: nobody communicates */
    }
    int ps[] = {0, 1, 3, SLOWDOWN_CONTENDERS_MAX};
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
        int p = ps[j];
        assert_int_equal (slowdown_contenders (ones, zeros, p, NULL, &out, NULL, 0), 0);
        assert_near (out, p + 1.0);
        assert_int_equal (slowdown_contenders (ones, zeros, p, delay, &out, NULL, 0), 0);
        assert_near (out, p + 1.0);
    }
    /*  The 5b: 3 burners on the node's core, 4x as long. */
    assert_int_equal (slowdown_contenders (ones, zeros, 3, NULL, &out, NULL, 0), 0);
    assert_near (1.0 / out, 0.25);
}

/*  Three contenders, c = {0.5, 0.25, 0}, m = {0.25, 0.5, 1}, delay_comm =
 *  {0.2, 0.5, 1.0} for 1, 2, 3 communicating at once.
 *    pcomp over {0.5, 0.25, 0}: P0 = 0.5 * 0.75 = 0.375,
 *      P1 = 0.5 * 0.75 + 0.5 * 0.25 = 0.5, P2 = 0.5 * 0.25 = 0.125, P3 = 0;
 *      sum_i P_i * i = 0.5 + 0.25 = 0.75 (= sum of the c).
 *    pcomm over {0.25, 0.5, 1}: the third always communicates, so it is
 *      1 + the count of the first two: Q1 = 0.75 * 0.5 = 0.375,
 *      Q2 = 0.25 * 0.5 + 0.75 * 0.5 = 0.5, Q3 = 0.25 * 0.5 = 0.125;
 *      sum_i Q_i * delay(i) = 0.375 * 0.2 + 0.5 * 0.5 + 0.125 * 1.0 = 0.45.
 *    slowdown = 1 + 0.75 + 0.45 = 2.2; with no delay table, 1.75. */
static void
test_mixed_contenders_worked_example (void **state)
{
    (void) state;
    double c[] = {0.5, 0.25, 0}, m[] = {0.25, 0.5, 1}, delay[] = {0.2, 0.5, 1.0};
    double out = 0;
    assert_int_equal (slowdown_contenders (c, m, 3, delay, &out, NULL, 0), 0);
    assert_near (out, 2.2);
    assert_int_equal (slowdown_contenders (c, m, 3, NULL, &out, NULL, 0), 0);
    assert_near (out, 1.75);
    /*  A sum over 1 by rounding (fractions computed, not typed) passes:
     *  1e-13 is within SLOWDOWN_FRACTION_SLACK; 1e-9 over is refused below. */
    double c2[] = {0.24, 0.7}, m2[] = {0.76 + 1e-13, 0.3 + 1e-13};
    assert_true (c2[0] + m2[0] > 1.0 && c2[1] + m2[1] > 1.0);
    assert_int_equal (slowdown_contenders (c2, m2, 2, NULL, &out, NULL, 0), 0);
    assert_near (out, 1.0 + 0.24 + 0.7);
}

static void
expect_contenders_refused (const double *c, const double *m, int p,
                           const double *delay, const char *words)
{
    char err[256] = "";
    double out = -7;
    assert_int_equal (slowdown_contenders (c, m, p, delay, &out, err, sizeof err), -1);
    assert_true (out == -7);
    if (!strstr (err, words))
        fail_msg ("message \"%s\" lacks \"%s\"", err, words);
}

static void
test_contenders_refusals_name_the_parameter (void **state)
{
    (void) state;
    double ok[SLOWDOWN_CONTENDERS_MAX + 1] = {0};
    expect_contenders_refused (ok, ok, -1, NULL, "p = -1");
    expect_contenders_refused (ok, ok, SLOWDOWN_CONTENDERS_MAX + 1, NULL, "p = 65");
    expect_contenders_refused (NULL, ok, 1, NULL, "compute is NULL");
    expect_contenders_refused (ok, NULL, 1, NULL, "comm is NULL");
    double half[] = {0.5, 0.5};
    expect_contenders_refused ((double[]){0.5, 1.5}, ok, 2, NULL,
                               "contender 1: compute 1.5 is not in [0, 1]");
    expect_contenders_refused ((double[]){0.5, NAN}, ok, 2, NULL,
                               "contender 1: compute nan is not in [0, 1]");
    expect_contenders_refused (ok, (double[]){-0.25, 0}, 2, NULL,
                               "contender 0: comm -0.25 is not in [0, 1]");
    expect_contenders_refused (half, (double[]){0.5, 0.6}, 2, NULL,
                               "contender 1: compute 0.5 + comm 0.6 is over 1");
    expect_contenders_refused (half, (double[]){0.5, 0.5 + 1e-9}, 2, NULL,
                               "contender 1: compute 0.5 + comm");
    expect_contenders_refused (half, half, 2, (double[]){0.1, -1},
                               "delay_comm 1 (for 2 communicating) is -1");
    expect_contenders_refused (half, half, 2, (double[]){INFINITY, 0},
                               "delay_comm 0 (for 1 communicating) is inf");
}

static void
test_job_stream_expands_by_one_over_one_minus_u (void **state)
{
    (void) state;
    double u = -1, f = -1;
    /*  The example: U = 0.5 from demands of 0.2 s at 2.5 a second;
     *  a foreground task takes twice as long. */
    assert_int_equal (slowdown_jobs ((double[]){2.5}, (double[]){0.2}, 1, &u, &f,
                                     NULL, 0), 0);
    assert_near (u, 0.5);
    assert_near (f, 0.5);
    assert_near (1.0 / f, 2.0);
    /*  Three classes sum: 0.125 + 0.25 + 0.375 = 0.75, so 4x as long. */
    double lambda[] = {1.0, 0.5, 3.0}, demand[] = {0.125, 0.5, 0.125};
    assert_int_equal (slowdown_jobs (lambda, demand, 3, &u, &f, NULL, 0), 0);
    assert_near (u, 0.75);
    assert_near (f, 0.25);
    assert_near (1.0 / f, 4.0);
    /*  An idle class adds nothing. */
    assert_int_equal (slowdown_jobs ((double[]){0, 2}, (double[]){9, 0.25}, 2, &u,
                                     &f, NULL, 0), 0);
    assert_near (u, 0.5);
    assert_near (f, 0.5);
}

static void
expect_jobs_refused (const double *lambda, const double *demand, int k,
                     const char *words)
{
    char err[256] = "";
    double u = -7, f = -7;
    assert_int_equal (slowdown_jobs (lambda, demand, k, &u, &f, err, sizeof err), -1);
    assert_true (u == -7 && f == -7);
    if (!strstr (err, words))
        fail_msg ("message \"%s\" lacks \"%s\"", err, words);
}

static void
test_jobs_refusals_name_the_parameter (void **state)
{
    (void) state;
    double one[] = {1, 1};
    expect_jobs_refused (one, one, 0, "k = 0 classes");
    expect_jobs_refused (NULL, one, 1, "lambda is NULL");
    expect_jobs_refused (one, NULL, 1, "demand is NULL");
    expect_jobs_refused ((double[]){0.1, -1}, one, 2, "class 1: lambda -1");
    expect_jobs_refused ((double[]){0.1, INFINITY}, one, 2, "class 1: lambda inf");
    expect_jobs_refused (one, (double[]){0, 0.1}, 2, "class 0: demand 0");
    expect_jobs_refused (one, (double[]){0.1, NAN}, 2, "class 1: demand nan");
    /*  Saturated: exactly 1, and over it summed over classes. */
    expect_jobs_refused ((double[]){4}, (double[]){0.25}, 1,
                         "U = 1 over 1 classes is not below 1 (a saturated node)");
    expect_jobs_refused ((double[]){2, 2}, (double[]){0.25, 0.375}, 2,
                         "U = 1.25 over 2 classes");
    /*  Finite inputs whose product overflows. */
    expect_jobs_refused ((double[]){1e300}, (double[]){1e300}, 1, "U = inf");
    /*  Just below 1 is still a (slow) node. */
    double u, f;
    assert_int_equal (slowdown_jobs ((double[]){0.99}, (double[]){1}, 1, &u, &f,
                                     NULL, 0), 0);
    assert_near (f, 0.01);
}

static void
test_steps_factor_is_one_over_load (void **state)
{
    (void) state;
    double f = -1;
    assert_int_equal (slowdown_steps_factor (2.0, &f, NULL, 0), 0);
    assert_near (f, 0.5);
    assert_int_equal (slowdown_steps_factor (1.0, &f, NULL, 0), 0);
    assert_near (f, 1.0);
    assert_int_equal (slowdown_steps_factor (4.0, &f, NULL, 0), 0);
    assert_near (f, 0.25);
    double bad[] = {0.5, 0.0, -2.0, NAN, INFINITY};
    const char *words[] = {"load 0.5 is not", "load 0 is not", "load -2 is not",
                           "load nan is not", "load inf is not"};
    for (int i = 0; i < 5; i++) {
        char err[128] = "";
        f = -7;
        assert_int_equal (slowdown_steps_factor (bad[i], &f, err, sizeof err), -1);
        assert_true (f == -7);
        if (!strstr (err, words[i]))
            fail_msg ("message \"%s\" lacks \"%s\"", err, words[i]);
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_poisson_binomial_by_hand),
        cmocka_unit_test (test_poisson_binomial_sums_to_one_and_matches_brute_force),
        cmocka_unit_test (test_poisson_binomial_refuses),
        cmocka_unit_test (test_cpu_bound_contenders_give_p_plus_one),
        cmocka_unit_test (test_mixed_contenders_worked_example),
        cmocka_unit_test (test_contenders_refusals_name_the_parameter),
        cmocka_unit_test (test_job_stream_expands_by_one_over_one_minus_u),
        cmocka_unit_test (test_jobs_refusals_name_the_parameter),
        cmocka_unit_test (test_steps_factor_is_one_over_load),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
