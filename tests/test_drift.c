/*  test_drift — the change rule: the band (k standard errors, or the
 *  relative or absolute floor when wider), m consecutive intervals out on
 *  the same side, the count started again by an interval in band or out
 *  on the other side, NaN intervals that neither count nor reset, and the
 *  new reference the last of the m values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "node/drift.h"

#define TOL 1e-12

static void
assert_near (double got, double want)
{
    if (!(fabs (got - want) <= TOL))
        fail_msg ("got %.17g, want %.17g", got, want);
}

static drift_t
make (double k, int m, double rel, double abs, double ref)
{
    drift_rule_t r = {.k = k, .m = m, .rel = rel, .abs = abs};
    drift_t d;
    drift_init (&d, &r, ref);
    return d;
}

/*  k se is the band when wider than the floors: 3 x 1 around 100 lets
 *  102.9 through, not 103.1; the floors are tiny here. */
static void
test_band_is_k_standard_errors (void **state)
{
    (void) state;
    drift_t d = make (3, 1, 0.001, 0, 100);
    assert_int_equal (drift_feed (&d, 102.9, 1, NULL), 0);
    assert_int_equal (drift_feed (&d, 97.1, 1, NULL), 0);
    double from = 0;
    assert_int_equal (drift_feed (&d, 103.1, 1, &from), 1);
    assert_near (from, 100);
    assert_near (d.ref, 103.1);
}

/*  m = 3: two out above are not enough, the third declares and the
 *  reference is the last of the three (the first may straddle the
 *  change). */
static void
test_m_consecutive_same_side (void **state)
{
    (void) state;
    drift_t d = make (3, 3, 0.10, 0, 20);
    assert_int_equal (drift_feed (&d, 10, 0.1, NULL), 0);
    assert_int_equal (drift_feed (&d, 11, 0.1, NULL), 0);
    double from = 0;
    assert_int_equal (drift_feed (&d, 12, 0.1, &from), 1);
    assert_near (from, 20);
    assert_near (d.ref, 12);
    /* around the new reference, 11.5 is in band */
    assert_int_equal (drift_feed (&d, 11.5, 0.1, NULL), 0);
    assert_int_equal (d.out, 0);
}

/*  An interval in band, or out on the other side, starts again. */
static void
test_reset_in_band_or_other_side (void **state)
{
    (void) state;
    drift_t d = make (3, 2, 0.10, 0, 20);
    assert_int_equal (drift_feed (&d, 10, 0.1, NULL), 0);
    assert_int_equal (drift_feed (&d, 20, 0.1, NULL), 0);    /* in band */
    assert_int_equal (drift_feed (&d, 10, 0.1, NULL), 0);
    assert_int_equal (drift_feed (&d, 30, 0.1, NULL), 0);    /* above */
    assert_int_equal (d.side, 1);
    assert_int_equal (d.out, 1);
    assert_int_equal (drift_feed (&d, 10, 0.1, NULL), 0);    /* below */
    assert_near (d.ref, 20);
    assert_int_equal (drift_feed (&d, 12, 0.1, NULL), 1);
    assert_near (d.ref, 12);
}

/*  NaN neither counts nor resets: out, NaN, out declares; NaN se leaves
 *  the floors as the band. */
static void
test_nan_neither_counts_nor_resets (void **state)
{
    (void) state;
    drift_t d = make (3, 2, 0.10, 0, 20);
    assert_int_equal (drift_feed (&d, 10, 0.1, NULL), 0);
    assert_int_equal (drift_feed (&d, NAN, 0.1, NULL), 0);
    assert_int_equal (d.out, 1);
    assert_int_equal (drift_feed (&d, NAN, NAN, NULL), 0);
    assert_int_equal (drift_feed (&d, 14, NAN, NULL), 1);
    assert_near (d.ref, 14);
}

/*  The relative floor: se 0 (a noise-free estimate) still needs 10% of
 *  the reference; the absolute floor rules around a reference of 0. */
static void
test_floors (void **state)
{
    (void) state;
    drift_t d = make (3, 1, 0.10, 0, 20);
    assert_int_equal (drift_feed (&d, 21.9, 0, NULL), 0);
    assert_int_equal (drift_feed (&d, 18.1, 0, NULL), 0);
    assert_int_equal (drift_feed (&d, 22.1, 0, NULL), 1);

    drift_t z = make (3, 1, 0.10, 0.05, 0);
    assert_int_equal (drift_feed (&z, 0.049, 0.001, NULL), 0);
    assert_int_equal (drift_feed (&z, -0.049, 0, NULL), 0);
    assert_int_equal (drift_feed (&z, 0.051, 0.001, NULL), 1);
    assert_near (z.ref, 0.051);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_band_is_k_standard_errors),
        cmocka_unit_test (test_m_consecutive_same_side),
        cmocka_unit_test (test_reset_in_band_or_other_side),
        cmocka_unit_test (test_nan_neither_counts_nor_resets),
        cmocka_unit_test (test_floors),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
