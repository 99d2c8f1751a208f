/*  Unit tests for node/liveness: due heartbeats and silent peers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "node/liveness.h"

/*  Beats every 0.1 s, from the first call on; a late loop sends one
 *  beat, not the ones it missed. */
static void
test_beats_are_due_every_interval (void **state)
{
    (void) state;
    liveness_t *live = liveness_new (2, 0.1, 0.5, 10.0);
    assert_true (liveness_beat_due (live, 10.0));
    assert_false (liveness_beat_due (live, 10.05));
    assert_true (liveness_beat_due (live, 10.1));
    assert_true (liveness_beat_due (live, 11.0));    /* late: one beat */
    assert_false (liveness_beat_due (live, 11.05));
    liveness_destroy (&live);
    assert_null (live);
}

/*  A peer heard within lost_after is alive; one silent longer is lost,
 *  once, and never watched again; any peer's traffic keeps only it alive. */
static void
test_a_silent_peer_is_lost_once (void **state)
{
    (void) state;
    liveness_t *live = liveness_new (3, 0.1, 0.5, 0.0);
    double silent = 0;
    liveness_heard (live, 0, 0.4);
    liveness_heard (live, 2, 0.4);
    assert_int_equal (liveness_overdue (live, 0.5, &silent), -1);
    assert_int_equal (liveness_overdue (live, 0.6, &silent), 1);
    assert_true (silent > 0.59 && silent < 0.61);
    assert_true (liveness_lost (live, 1));
    assert_int_equal (liveness_overdue (live, 0.6, &silent), -1);
    liveness_heard (live, 1, 0.7);                  /* too late: lost stays lost */
    assert_int_equal (liveness_overdue (live, 0.95, &silent), 0);
    assert_int_equal (liveness_overdue (live, 0.95, &silent), 2);
    assert_int_equal (liveness_overdue (live, 5.0, &silent), -1);
    liveness_destroy (&live);
}

/*  Forgetting a peer (a send to it failed) stops watching it; the next
 *  deadline is the nearer of the next beat and the next possible loss. */
static void
test_forget_and_deadlines (void **state)
{
    (void) state;
    liveness_t *live = liveness_new (2, 0.1, 0.5, 0.0);
    assert_true (liveness_beat_due (live, 0.0));
    assert_true (liveness_next_deadline (live, 0.0) > 0.099
                 && liveness_next_deadline (live, 0.0) < 0.101);
    assert_true (liveness_beat_due (live, 0.45));
    assert_true (liveness_next_deadline (live, 0.45) > 0.049
                 && liveness_next_deadline (live, 0.45) < 0.051);   /* a loss */
    assert_int_equal (liveness_forget (live, 0), 1);
    assert_int_equal (liveness_forget (live, 0), 0);
    assert_int_equal (liveness_forget (live, 7), 0);
    assert_true (liveness_lost (live, 0));
    assert_false (liveness_lost (live, 7));
    assert_int_equal (liveness_overdue (live, 9.0, NULL), 1);
    assert_int_equal (liveness_overdue (live, 9.0, NULL), -1);
    liveness_destroy (&live);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_beats_are_due_every_interval),
        cmocka_unit_test (test_a_silent_peer_is_lost_once),
        cmocka_unit_test (test_forget_and_deadlines),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
