/*  test_waitset — the node loop's wait: it ends on its deadline and not
 *  before, at once on a waiting message, and on an interrupt whenever the
 *  signal came, the one that lands before the wait begins included (the
 *  node that slept 9 s to its next deadline after its ssh session sent it
 *  SIGTERM).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/waitset.h"
#include "overlay/util.h"

static void
test_the_deadline_ends_the_wait_not_before (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    waitset_t *ws = waitset_new (err, sizeof err);
    assert_non_null (ws);
    zsock_t *sock = zsock_new_pair ("inproc://deadline");
    assert_int_equal (waitset_add (ws, sock), 0);
    zsock_t *ready[1];
    double until = tf_now () + 0.05;
    assert_int_equal (waitset_wait (ws, until, ready, 1), 0);
    double now = tf_now ();
    assert_true (now >= until);
    assert_true (now < until + 5);
    /*  A deadline already past only looks at the sockets. */
    assert_int_equal (waitset_wait (ws, now - 1, ready, 1), 0);
    zsock_destroy (&sock);
    waitset_destroy (&ws);
}

static void
test_a_waiting_message_ends_it_at_once (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    waitset_t *ws = waitset_new (err, sizeof err);
    zsock_t *quiet = zsock_new_pair ("@inproc://quiet");
    zsock_t *in = zsock_new_pair ("@inproc://busy");
    zsock_t *out = zsock_new_pair (">inproc://busy");
    waitset_add (ws, quiet);
    waitset_add (ws, in);
    zstr_send (out, "task");
    zsock_t *ready[2];
    double t0 = tf_now ();
    assert_int_equal (waitset_wait (ws, t0 + 10, ready, 2), 1);
    assert_ptr_equal (ready[0], in);
    assert_true (tf_now () - t0 < 5);
    zsock_destroy (&out);
    zsock_destroy (&in);
    zsock_destroy (&quiet);
    waitset_destroy (&ws);
}

/*  Last: the process stays interrupted. */
static void
test_an_interrupt_before_the_wait_ends_it (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    assert_int_equal (waitset_catch_interrupts (err, sizeof err), 0);
    waitset_t *ws = waitset_new (err, sizeof err);
    zsock_t *sock = zsock_new_pair ("inproc://interrupt");
    waitset_add (ws, sock);
    raise (SIGTERM);   /* lands before the wait, as after a loop's check */
    assert_true (zsys_interrupted);
    zsock_t *ready[1];
    double t0 = tf_now ();
    assert_int_equal (waitset_wait (ws, t0 + 10, ready, 1), -1);
    assert_true (tf_now () - t0 < 5);
    /*  And every wait after it. */
    assert_int_equal (waitset_wait (ws, tf_now () + 10, ready, 1), -1);
    zsock_destroy (&sock);
    waitset_destroy (&ws);
}

int
main (void)
{
    zsys_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_the_deadline_ends_the_wait_not_before),
        cmocka_unit_test (test_a_waiting_message_ends_it_at_once),
        cmocka_unit_test (test_an_interrupt_before_the_wait_ends_it),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
