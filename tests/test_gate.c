/*  test_gate — the cost-benefit rule of the adaptive actions
 *  (node/gate.h): the saving, the decision at its edge, the reclaim's
 *  case, and how many tasks a slowed child should hold.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/gate.h"

static void
test_the_saving_is_the_remaining_work_at_both_rates (void **state)
{
    (void) state;
    gate_case_t c = {.remaining = 10, .t_now = 2, .t_after = 5, .cost = 2.9};
    assert_true (fabs (gate_saved (&c) - 3.0) < 1e-12);   /* 10/2 - 10/5 */
    assert_true (gate_pays (&c));
    c.cost = 3.0;   /* saving no more than the cost: not taken */
    assert_false (gate_pays (&c));
    c.cost = 0;
    c.t_after = 2;   /* no faster after: nothing saved */
    assert_false (gate_pays (&c));
    c.t_after = 1;   /* slower after: a loss */
    assert_true (gate_saved (&c) < 0);
    assert_false (gate_pays (&c));
}

static void
test_nonsense_never_pays (void **state)
{
    (void) state;
    gate_case_t bad[] = {
        {.remaining = 1, .t_now = 0, .t_after = 1},
        {.remaining = 1, .t_now = 1, .t_after = -1},
        {.remaining = -1, .t_now = 1, .t_after = 2},
        {.remaining = 1, .t_now = 1, .t_after = 2, .cost = -1},
        {.remaining = NAN, .t_now = 1, .t_after = 2},
        {.remaining = 1, .t_now = 1, .t_after = 2, .cost = NAN},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_true (isinf (gate_saved (&bad[i])) && gate_saved (&bad[i]) < 0);
        assert_false (gate_pays (&bad[i]));
    }
}

/*  fork7's Lab4 under a load of 4: 0.1735 tasks/s, three tasks held, the
 *  root's subtree at 6.5 tasks/s, 2 MB tasks over 10.81 MB/s. */
static void
test_a_slowed_child_s_tasks_are_worth_taking_back (void **state)
{
    (void) state;
    gate_case_t c = gate_reclaim_case (3, 0.1735, 6.5, 2, 10.81);
    assert_true (fabs (c.cost - 3 * 2 / 10.81) < 1e-12);
    assert_true (fabs (gate_saved (&c) - (3 / 0.1735 - 3 / 6.5)) < 1e-9);
    assert_true (gate_pays (&c));
    /*  Behind a 0.2 MB/s link, moving them again costs more (30 s) than
     *  a child at half the subtree's rate loses (3/0.1 - 3/0.2 = 15 s). */
    c = gate_reclaim_case (3, 0.1, 0.2, 2, 0.2);
    assert_false (gate_pays (&c));
    /*  Nothing to move: free, worth it whenever the child is slower. */
    c = gate_reclaim_case (3, 1, 2, 0, 0);
    assert_true (c.cost == 0 && gate_pays (&c));
    c = gate_reclaim_case (3, 1, 2, 2, 0);   /* a link of 0 MB/s */
    assert_false (gate_pays (&c));
}

static void
test_a_child_holds_what_covers_one_transfer (void **state)
{
    (void) state;
    /*  A 2 MB task over 10 MB/s takes 0.2 s: a child computing a task in
     *  more than that needs one held. */
    assert_int_equal (gate_hold (0.17, 2, 10, 3), 1);
    assert_int_equal (gate_hold (12, 2, 10, 3), 3);   /* 2.4 -> 3 */
    assert_int_equal (gate_hold (100, 2, 10, 3), 3);  /* capped at the buffer */
    assert_int_equal (gate_hold (8, 2, 10, 5), 2);    /* 1.6 -> 2 */
    assert_int_equal (gate_hold (8, 0, 10, 5), 1);    /* nothing to move */
    assert_int_equal (gate_hold (8, 2, 0, 5), 5);     /* no link: keep all */
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_the_saving_is_the_remaining_work_at_both_rates),
        cmocka_unit_test (test_nonsense_never_pays),
        cmocka_unit_test (test_a_slowed_child_s_tasks_are_worth_taking_back),
        cmocka_unit_test (test_a_child_holds_what_covers_one_transfer),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
