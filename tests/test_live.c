/*  test_live — the live estimates and the changes they declare: a step
 *  in the compute rate declared within the expected check intervals with
 *  its from and to; sending at a steady rate with IR_s > 0 and no
 *  background declares no compute change (the interference factor is
 *  taken out); a slower link declared for its child only; noisy but
 *  stationary input declares nothing; an IR estimate leaving its band is
 *  declared, one inside its absolute floor is not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "node/drift.h"
#include "node/live.h"

#define TOL 1e-9

static void
assert_near (double got, double want, double tol)
{
    if (!(fabs (got - want) <= tol))
        fail_msg ("got %.17g, want %.17g", got, want);
}

/*  Two children, C 20, IR_r 0, links 10 MB/s, IR_s 0.03 and 0; check
 *  intervals of 5 s and 3 samples. */
static live_t *
make (void)
{
    static const double link[2] = {10, 10}, irs[2] = {0.03, 0};
    live_cfg_t cfg = {.nchildren = 2, .compute = 20, .ir_recv = 0, .link_mbps = link,
                      .ir_send = irs, .interval_s = 5, .min_samples = 3};
    return live_new (&cfg);
}

/*  C 20 -> 5 at t = 30, samples of 1 s busy throughout: the intervals
 *  ending at 35 and 40 are out of band, so the change is declared at
 *  40, from 20 to 5; nothing before, nothing after. */
static void
test_compute_step_declared (void **state)
{
    (void) state;
    live_t *l = make ();
    double send[2] = {0, 0};
    int declared = 0;
    for (int t = 1; t <= 100; t++) {
        double c = t <= 30 ? 20 : 5;
        live_compute (l, t, 1, c, 1, 0, send);
        int n;
        const live_change_t *ch = live_take (l, &n);
        for (int i = 0; i < n; i++) {
            declared++;
            assert_int_equal (ch[i].what, LIVE_COMPUTE);
            assert_int_equal (ch[i].child, -1);
            assert_near (ch[i].from, 20, TOL);
            assert_near (ch[i].to, 5, TOL);
            assert_true (ch[i].at > 30 && ch[i].at <= 30 + (DRIFT_M + 1) * 5);
        }
    }
    assert_int_equal (declared, 1);
    assert_near (live_ref (l, LIVE_COMPUTE, -1), 5, TOL);
    live_destroy (&l);
    assert_null (l);
}

/*  Sending 10 MB/s to child 0 (IR_s 0.03) makes the engine run at 0.7 of
 *  C: units 14 a busy second. Corrected, that is C 20: no change. */
static void
test_interference_alone_declares_nothing (void **state)
{
    (void) state;
    live_t *l = make ();
    double send[2] = {10, 0};
    for (int t = 1; t <= 200; t++) {
        live_compute (l, t, 1, 20 * 0.7, 1, 0, send);
        int n;
        live_take (l, &n);
        assert_int_equal (n, 0);
    }
    assert_near (live_ref (l, LIVE_COMPUTE, -1), 20, TOL);
    live_destroy (&l);
}

/*  Child 1's link 10 -> 5 MB/s at t = 50 (each sample a second of link
 *  time); child 0 stays at 10. Declared once, for child 1. */
static void
test_link_slowdown_for_its_child (void **state)
{
    (void) state;
    live_t *l = make ();
    double mb[2] = {0, 0}, s[2] = {0, 0};
    int declared = 0;
    for (int t = 0; t <= 120; t++) {
        for (int c = 0; c < 2; c++) {
            live_link (l, c, t, mb[c], s[c]);
            mb[c] += c == 1 && t >= 50 ? 5 : 10;
            s[c] += 1;
        }
        int n;
        const live_change_t *ch = live_take (l, &n);
        for (int i = 0; i < n; i++) {
            declared++;
            assert_int_equal (ch[i].what, LIVE_LINK);
            assert_int_equal (ch[i].child, 1);
            assert_near (ch[i].from, 10, TOL);
            assert_near (ch[i].to, 5, TOL);
            assert_true (ch[i].at > 50 && ch[i].at <= 50 + (DRIFT_M + 1) * 5);
        }
    }
    assert_int_equal (declared, 1);
    assert_near (live_ref (l, LIVE_LINK, 0), 10, TOL);
    assert_near (live_ref (l, LIVE_LINK, 1), 5, TOL);
    assert_true (isnan (live_ref (l, LIVE_LINK, 2)));
    live_destroy (&l);
}

/*  A fixed pseudo-random normal deviate (Box-Muller on an LCG): the test
 *  is the same on every run. */
static double
gauss (uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u1 = ((*s >> 11) + 1.0) / 9007199254740993.0;
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u2 = (*s >> 11) / 9007199254740992.0;
    return sqrt (-2 * log (u1)) * cos (2 * M_PI * u2);
}

/*  C 20 and links 10 with 10% noise on every sample, busy time and link
 *  seconds varying too, over 2000 s (400 check intervals): nothing. */
static void
test_noisy_stationary_declares_nothing (void **state)
{
    (void) state;
    live_t *l = make ();
    uint64_t seed = 12345;
    double send[2] = {0, 0}, mb[2] = {0, 0}, s[2] = {0, 0};
    for (int t = 1; t <= 2000; t++) {
        double busy = 0.5 + 0.5 * (t % 3) / 2.0;
        live_compute (l, t, 1, 20 * busy * (1 + 0.1 * gauss (&seed)), busy, 0, send);
        for (int c = 0; c < 2; c++) {
            double secs = 0.2 + 0.8 * ((t + c) % 4) / 3.0;
            live_link (l, c, t, mb[c], s[c]);
            mb[c] += 10 * secs * (1 + 0.1 * gauss (&seed));
            s[c] += secs;
        }
        int n;
        live_take (l, &n);
        assert_int_equal (n, 0);
    }
    live_destroy (&l);
}

/*  IR_s of child 0, 0.03: the fit says 0.031 +- 0.001 (in band), then
 *  0.06 +- 0.002 twice: declared. IR_r 0 -> 0.008 +- 0.0001 stays
 *  inside the absolute floor; NaN says nothing. */
static void
test_ir_leaving_band_declared (void **state)
{
    (void) state;
    live_t *l = make ();
    double irs[2] = {0.031, NAN}, se[2] = {0.001, NAN};
    int n;
    for (int i = 0; i < 5; i++) {
        live_fit (l, i, 0.008, 0.0001, irs, se);
        live_take (l, &n);
        assert_int_equal (n, 0);
    }
    irs[0] = 0.06;
    se[0] = 0.002;
    live_fit (l, 5, 0.008, 0.0001, irs, se);
    live_take (l, &n);
    assert_int_equal (n, 0);
    live_fit (l, 6, NAN, NAN, irs, se);
    const live_change_t *ch = live_take (l, &n);
    assert_int_equal (n, 1);
    assert_int_equal (ch[0].what, LIVE_IR_SEND);
    assert_int_equal (ch[0].child, 0);
    assert_near (ch[0].from, 0.03, TOL);
    assert_near (ch[0].to, 0.06, TOL);
    assert_near (ch[0].at, 6, TOL);
    live_take (l, &n);
    assert_int_equal (n, 0);
    assert_near (live_ref (l, LIVE_IR_RECV, -1), 0, TOL);
    assert_string_equal (live_what_str (LIVE_IR_SEND), "ir_send");
    assert_string_equal (live_unit_str (LIVE_LINK), "MB/s");
    assert_string_equal (live_what_str (LIVE_WHAT_COUNT), "?");
    live_destroy (&l);
}

/*  A negative IR is no estimate; and once the compute rate has changed,
 *  the fit's IRs (one intercept over the whole run) are not used: the
 *  same IR_s that was declared above is not, after a compute step. */
static void
test_fit_irs_void_after_a_compute_change (void **state)
{
    (void) state;
    live_t *l = make ();
    double irs[2] = {-0.5, NAN}, se[2] = {0.001, NAN}, send[2] = {0, 0};
    int n;
    for (int i = 0; i < 4; i++) {
        live_fit (l, i, -2, 0.001, irs, se);
        live_take (l, &n);
        assert_int_equal (n, 0);
    }
    for (int t = 1; t <= 60; t++) {
        live_compute (l, t, 1, t <= 30 ? 20 : 5, 1, 0, send);
        live_take (l, &n);
    }
    assert_near (live_ref (l, LIVE_COMPUTE, -1), 5, TOL);
    irs[0] = 0.06;
    for (int i = 61; i < 70; i++) {
        live_fit (l, i, 0.5, 0.0001, irs, se);
        live_take (l, &n);
        assert_int_equal (n, 0);
    }
    assert_near (live_ref (l, LIVE_IR_SEND, 0), 0.03, TOL);
    live_destroy (&l);
}

/*  An IR the fit gives without a usable standard error (NaN, or
 *  negative) is no estimate: far out of band many times over, it
 *  declares nothing; the same value with one, twice, does. */
static void
test_an_ir_without_a_standard_error_says_nothing (void **state)
{
    (void) state;
    live_t *l = make ();
    double irs[2] = {1.4, NAN}, se[2] = {NAN, NAN};
    int n;
    for (int i = 0; i < 6; i++) {
        se[0] = i % 2 ? NAN : -1.5;
        live_fit (l, i, NAN, NAN, irs, se);
        live_take (l, &n);
        assert_int_equal (n, 0);
    }
    assert_near (live_ref (l, LIVE_IR_SEND, 0), 0.03, TOL);
    se[0] = 0.01;
    live_fit (l, 6, NAN, NAN, irs, se);
    live_fit (l, 7, NAN, NAN, irs, se);
    live_take (l, &n);
    assert_int_equal (n, 1);
    assert_near (live_ref (l, LIVE_IR_SEND, 0), 1.4, TOL);
    live_destroy (&l);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_compute_step_declared),
        cmocka_unit_test (test_interference_alone_declares_nothing),
        cmocka_unit_test (test_link_slowdown_for_its_child),
        cmocka_unit_test (test_noisy_stationary_declares_nothing),
        cmocka_unit_test (test_ir_leaving_band_declared),
        cmocka_unit_test (test_fit_irs_void_after_a_compute_change),
        cmocka_unit_test (test_an_ir_without_a_standard_error_says_nothing),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
