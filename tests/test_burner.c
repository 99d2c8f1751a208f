/*  test_burner — the schedule of real mode's duty-cycled burners
 *  (node/burner.h): how many a load needs, which of them burns at a time
 *  t and until when (L - 1 CPUs' worth: floor(L - 1) full burners and
 *  one burning frac(L - 1) of each period), steps times a trace, the
 *  switch at a point's time; and the seeds of the draws. The processes
 *  themselves are tested by tests/it_loadreal.sh.
 *
 *  Tolerance 1e-9: every expected time is a sum or product of a few
 *  decimal numbers (a period of 0.1, its fractions), a few ulps off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "node/burner.h"

#define TOL 1e-9
#define P 0.1

static void
assert_near (double got, double want)
{
    if (!(fabs (got - want) <= TOL))
        fail_msg ("got %.17g, want %.17g", got, want);
}

/*  Slot `slot` at t: burns (1) or idles (0), until `until`. */
static void
assert_step (const load_t *load, int slot, double t, int burn, double until)
{
    double got = -1;
    int rc = burner_slot_step (load, slot, t, P, &got);
    if (rc != burn)
        fail_msg ("slot %d at t %g: %s, want %s", slot, t, rc ? "burns" : "idles",
                  burn ? "burns" : "idles");
    assert_near (got, until);
}

/*  Steps: L = 1 before 2 s, 2.5 from 2 s, 1.25 from 5 s. */
static load_point_t steps3[] = {{2, 2.5}, {5, 1.25}};

static void
test_slots_count (void **state)
{
    (void) state;
    load_t none = {0};
    assert_int_equal (burner_slots (&none), 0);
    load_t l = {.steps = steps3, .nsteps = 2};
    assert_int_equal (burner_slots (&l), 2);   /* ceil(2.5 - 1) */
    load_point_t whole[] = {{0, 4.0}};
    load_t w = {.steps = whole, .nsteps = 1};
    assert_int_equal (burner_slots (&w), 3);   /* L = 4: three full burners */
    load_point_t big[] = {{0, 64}};
    load_point_t trace[] = {{1, 64}};
    load_t b = {.steps = big, .nsteps = 1, .trace = trace, .ntrace = 1};
    assert_int_equal (burner_slots (&b), BURNER_MAX_SLOTS);   /* 64 x 64, capped */
}

/*  The level is steps times trace: 2 x 1.5 = 3 needs two burners, which
 *  neither list alone does. */
static void
test_slots_product (void **state)
{
    (void) state;
    load_point_t s[] = {{0, 2.0}};
    load_point_t tr[] = {{1, 1.5}, {3, 1.0}};
    load_t l = {.steps = s, .nsteps = 1, .trace = tr, .ntrace = 2};
    assert_int_equal (burner_slots (&l), 2);
    assert_step (&l, 1, 0.5, 0, 0.6);        /* L = 2 before the trace: slot 1 idle */
    assert_step (&l, 1, 1.02, 1, 1.1);       /* L = 3 from 1 s: slot 1 burns all */
    assert_step (&l, 1, 2.95, 1, 3.0);       /* until the trace's next row */
    assert_step (&l, 1, 3.0, 0, 3.1);        /* L = 2 again */
}

static void
test_before_first_point (void **state)
{
    (void) state;
    load_t l = {.steps = steps3, .nsteps = 2};
    assert_step (&l, 0, 0, 0, P);            /* L = 1: nobody burns */
    assert_step (&l, 0, 1.95, 0, 2.0);       /* the step comes before the period's end */
    assert_step (&l, 1, 1.97, 0, 2.0);
}

/*  L = 2.5: slot 0 burns every period whole, slot 1 the first half. */
static void
test_full_and_partial (void **state)
{
    (void) state;
    load_t l = {.steps = steps3, .nsteps = 2};
    assert_step (&l, 0, 2.0, 1, 2.1);
    assert_step (&l, 0, 3.33, 1, 3.4);
    assert_step (&l, 1, 2.0, 1, 2.05);       /* frac 0.5 of the period */
    assert_step (&l, 1, 2.04, 1, 2.05);
    assert_step (&l, 1, 2.05, 0, 2.1);
    assert_step (&l, 1, 2.09, 0, 2.1);
    assert_step (&l, 1, 4.16, 0, 4.2);
    assert_step (&l, 1, 4.1 + 1e-7, 1, 4.15);
    assert_step (&l, 2, 3.0, 0, 3.1);        /* beyond the excess: idle */
}

/*  At 5 s the load drops to 1.25: slot 0 burns a quarter, slot 1 stops,
 *  mid-period switches happen at the point's time. */
static void
test_switch_at_point (void **state)
{
    (void) state;
    load_point_t mid[] = {{0, 3.0}, {1.03, 1.25}};
    load_t m = {.steps = mid, .nsteps = 2};
    assert_step (&m, 1, 1.01, 1, 1.03);      /* the point comes mid-period */
    assert_step (&m, 1, 1.03, 0, 1.1);
    assert_step (&m, 0, 1.03, 0, 1.1);       /* 1.03 is past 1.025, the quarter's end */
    assert_step (&m, 0, 1.1, 1, 1.125);
    load_t l = {.steps = steps3, .nsteps = 2};
    assert_step (&l, 0, 5.0, 1, 5.025);
    assert_step (&l, 0, 5.03, 0, 5.1);
    assert_step (&l, 1, 5.0, 0, 5.1);
    assert_step (&l, 0, 1e6 + 0.01, 1, 1e6 + 0.025);   /* the last point holds */
}

static void
test_seed (void **state)
{
    (void) state;
    uint64_t a = burner_seed (3, "solo", 0);
    assert_true (a == burner_seed (3, "solo", 0));
    assert_true (a != burner_seed (3, "solo", 1));
    assert_true (a != burner_seed (4, "solo", 0));
    assert_true (a != burner_seed (3, "sola", 0));
    assert_true (burner_seed (0, "", 0) != burner_seed (0, "", 1));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_slots_count),
        cmocka_unit_test (test_slots_product),
        cmocka_unit_test (test_before_first_point),
        cmocka_unit_test (test_full_and_partial),
        cmocka_unit_test (test_switch_at_point),
        cmocka_unit_test (test_seed),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
