/*  test_calphase — one calibration phase at a node, on a virtual clock:
 *  the snapshot at the end of the warm-up, the rates measured from there
 *  to the end, the deadlines the runtime must wake for, and refusals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/calphase.h"

static void
test_a_phase_measures_from_warmup_to_end (void **state)
{
    (void) state;
    calphase_t *c = calphase_new (2);
    const int streams[2] = {0, 1};
    uint64_t out[2] = {0, 0};
    calphase_counters_t k = {.units = 0, .units_at = 0, .bytes_in = 0, .bytes_out = out};
    calphase_result_t r;
    assert_true (calphase_next (c, 0) < 0);          /* idle: nothing due */
    assert_int_equal (calphase_begin (c, 3, 10.0, 1.0, 5.0, streams), 0);
    assert_true (calphase_active (c));
    assert_false (calphase_streams (c, 0));
    assert_true (calphase_streams (c, 1));
    assert_true (fabs (calphase_next (c, 10.0) - 1.0) < 1e-12);   /* warm-up ends */
    assert_int_equal (calphase_tick (c, 10.5, &k, &r), 0);       /* not yet */
    /*  At 11 (warm-up over): 2 units done, 1000 bytes in, 500 out. */
    k.units = 2, k.units_at = 11, k.bytes_in = 1000, out[1] = 500;
    assert_int_equal (calphase_tick (c, 11.0, &k, &r), 0);
    assert_true (fabs (calphase_next (c, 11.0) - 4.0) < 1e-12);   /* end at 15 */
    assert_int_equal (calphase_begin (c, 4, 12.0, 1.0, 5.0, streams), -1);   /* busy */
    /*  At 15: 10 units (reported at 14.8), 9000 in, 4500 out in 4 s. */
    k.units = 10, k.units_at = 14.8, k.bytes_in = 9000, out[1] = 4500;
    assert_int_equal (calphase_tick (c, 15.0, &k, &r), 1);
    assert_false (calphase_active (c));
    assert_int_equal (r.phase, 3);
    assert_true (fabs (r.seconds - 4.0) < 1e-12);
    assert_true (fabs (r.units_per_s - 8 / 3.8) < 1e-12);
    assert_true (fabs (r.recv_bps - 2000) < 1e-9);
    assert_true (r.send_bps[0] == 0 && fabs (r.send_bps[1] - 1000) < 1e-9);
    assert_int_equal (calphase_tick (c, 16.0, &k, &r), 0);       /* over */
    calphase_destroy (&c);
    assert_null (c);
}

static void
test_bad_times_are_refused (void **state)
{
    (void) state;
    calphase_t *c = calphase_new (0);
    assert_int_equal (calphase_begin (c, 0, 0, 5.0, 5.0, NULL), -1);   /* warm-up = length */
    assert_int_equal (calphase_begin (c, 0, 0, -1.0, 5.0, NULL), -1);
    assert_int_equal (calphase_begin (c, 0, 0, NAN, 5.0, NULL), -1);
    assert_false (calphase_active (c));
    assert_int_equal (calphase_begin (c, 0, 0, 0, 5.0, NULL), 0);
    calphase_destroy (&c);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_phase_measures_from_warmup_to_end),
        cmocka_unit_test (test_bad_times_are_refused),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
