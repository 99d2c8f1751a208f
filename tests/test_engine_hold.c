/*  test_engine_hold — engine_hold (node/engine.h), which a calibration's
 *  idle phase uses: a held engine computes nothing, in the loop, with a
 *  thread, and with the real kernel, keeps reporting its unchanged units,
 *  and goes on from where it was once released.
 *
 *  Timing asserts are loose (a loaded two-core machine, valgrind): units
 *  must not move while held, and must move again after.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "node/engine.h"
#include "overlay/util.h"

static engine_t *
new_engine (platform_mode_t mode, int in_loop)
{
    engine_cfg_t cfg = {.mode = mode, .rate = 100, .time_scale = 1, .matrix_n = 256,
                        .in_loop = in_loop};
    char err[TF_ERRLEN] = "";
    engine_t *engine = engine_new (&cfg, err, sizeof err);
    if (!engine)
        fail_msg ("%s", err);
    return engine;
}

static void
sleep_s (double s)
{
    nanosleep (&(struct timespec){(time_t) s, (long) ((s - (time_t) s) * 1e9)}, NULL);
}

/*  Read what the engine says for `seconds`: in the loop, at its
 *  deadlines; with a thread, as its socket has messages. Returns how
 *  many progress reports came; a completion fails the test (the tasks
 *  here outlast it). */
static int
pump (engine_t *engine, double seconds)
{
    double until = tf_now () + seconds;
    int reports = 0;
    zpoller_t *poller = engine_sock (engine) ? zpoller_new (engine_sock (engine), NULL)
                                             : NULL;
    for (double now = tf_now (); now < until; now = tf_now ()) {
        if (poller) {
            if (!zpoller_wait (poller, (int) ((until - now) * 1000) + 1))
                continue;
        } else {
            double due = engine_deadline (engine, now);
            assert_true (due >= 0);
            sleep_s (fmin (due, until - now));
            if (engine_deadline (engine, tf_now ()) > 0)
                continue;
        }
        assert_int_equal (engine_recv (engine, NULL, NULL), 1);
        reports++;
    }
    zpoller_destroy (&poller);
    return reports;
}

/*  Hold a long task mid-way: once what was under way has been read, the
 *  units stay put for 0.2 s of reports, the engine stays busy and held;
 *  released, the units grow again. */
static void
hold_and_release (engine_t *engine)
{
    assert_int_equal (engine_start (engine, 1, 1e9), 0);
    pump (engine, 0.05);
    assert_int_equal (engine_hold (engine, 1), 0);
    assert_true (engine_held (engine));
    pump (engine, 0.05);   /* reports of work done before the hold */
    double held = engine_units (engine);
    assert_true (held > 0);
    int reports = pump (engine, 0.2);
    assert_true (reports >= 3);
    if (engine_units (engine) != held)
        fail_msg ("held at %.9f units, now %.9f", held, engine_units (engine));
    assert_true (engine_busy (engine));
    assert_int_equal (engine_hold (engine, 0), 0);
    assert_false (engine_held (engine));
    pump (engine, 0.1);
    assert_true (engine_units (engine) > held);
}

static void
test_hold_in_loop (void **state)
{
    (void) state;
    engine_t *engine = new_engine (PLATFORM_EMULATED, 1);
    hold_and_release (engine);
    engine_destroy (&engine);
}

static void
test_hold_emulated_thread (void **state)
{
    (void) state;
    engine_t *engine = new_engine (PLATFORM_EMULATED, 0);
    hold_and_release (engine);
    engine_destroy (&engine);
}

/*  The real kernel: its thread burns no CPU while held. */
static void
test_hold_real (void **state)
{
    (void) state;
    engine_t *engine = new_engine (PLATFORM_REAL, 0);
    hold_and_release (engine);
    assert_int_equal (engine_hold (engine, 1), 0);
    pump (engine, 0.05);
    struct timespec a, b;
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &a);
    pump (engine, 0.2);
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &b);
    double cpu = (double) (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    if (cpu > 0.05)
        fail_msg ("held real engine used %.3f CPU s in 0.2 s", cpu);
    engine_destroy (&engine);   /* $TERM while held */
}

/*  A hold before the task: it starts held and computes nothing; the
 *  speed factor set meanwhile applies once released; holding twice or
 *  releasing an engine not held changes nothing. */
static void
test_hold_before_start_and_speed (void **state)
{
    (void) state;
    engine_t *engine = new_engine (PLATFORM_EMULATED, 1);
    assert_int_equal (engine_hold (engine, 1), 0);
    assert_int_equal (engine_hold (engine, 1), 0);
    assert_int_equal (engine_start (engine, 1, 1e9), 0);
    assert_int_equal (engine_set_speed (engine, 0.5), 0);
    pump (engine, 0.05);
    assert_true (engine_units (engine) == 0);
    double start, end;
    assert_int_equal (engine_task_span (engine, &start, &end), 1);
    assert_true (isinf (end));
    assert_int_equal (engine_hold (engine, 0), 0);
    assert_int_equal (engine_hold (engine, 0), 0);
    double t0 = tf_now ();
    pump (engine, 0.05);
    double units = engine_units (engine), t1 = tf_now ();
    assert_true (units > 0 && units <= (t1 - t0) * 100 * 0.5 + 1e-9);
    engine_destroy (&engine);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_hold_in_loop),
        cmocka_unit_test (test_hold_emulated_thread),
        cmocka_unit_test (test_hold_real),
        cmocka_unit_test (test_hold_before_start_and_speed),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
