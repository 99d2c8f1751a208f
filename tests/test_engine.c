/*  test_engine — the compute engine actor, emulated and real.
 *
 *  Timing asserts are lower-bound strict (an emulated task never finishes
 *  early) and upper-bound generous, so they hold on a loaded two-core
 *  machine and under valgrind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "node/engine.h"
#include "overlay/util.h"

/*  Wait up to timeout_ms for any message, progress or completion, without
 *  reading it. Returns 0 when one is ready. */
static int
wait_ready (engine_t *engine, int timeout_ms)
{
    zpoller_t *poller = zpoller_new (engine_sock (engine), NULL);
    void *which = zpoller_wait (poller, timeout_ms);
    zpoller_destroy (&poller);
    return which ? 0 : -1;
}

/*  Read messages for up to timeout_ms until a completion, which fills
 *  task and seconds (either may be NULL). Progress reports are read and
 *  passed over; anything else fails the test. Returns 0 when a completion
 *  was read, -1 if none came in time. */
static int
wait_done (engine_t *engine, int timeout_ms, uint64_t *task, double *seconds)
{
    double deadline = tf_now () + timeout_ms / 1000.0;
    for (;;) {
        int left = (int) ((deadline - tf_now ()) * 1000);
        if (wait_ready (engine, left > 0 ? left : 0))
            return -1;
        int rc = engine_recv (engine, task, seconds);
        assert_in_range (rc, 0, 1);
        if (rc == 0)
            return 0;
    }
}

static engine_t *
new_emulated (double rate, double time_scale)
{
    engine_cfg_t cfg = {.mode = PLATFORM_EMULATED, .rate = rate,
                        .time_scale = time_scale};
    char err[TF_ERRLEN] = "";
    engine_t *engine = engine_new (&cfg, err, sizeof (err));
    assert_non_null (engine);
    assert_string_equal (err, "");
    return engine;
}

static engine_t *
new_real (uint32_t n)
{
    engine_cfg_t cfg = {.mode = PLATFORM_REAL, .matrix_n = n};
    char err[TF_ERRLEN] = "";
    engine_t *engine = engine_new (&cfg, err, sizeof (err));
    assert_non_null (engine);
    return engine;
}

static double
cpu_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/*  2 units at 4 units/s, 10 times faster: 0.05 s of wall time, reported
 *  and observed; the engine sleeps rather than burning CPU. */
static void
test_emulated_duration (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);

    double cpu0 = cpu_now ();
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 17, 2), 0);
    uint64_t task = 0;
    double seconds = -1;
    assert_int_equal (wait_done (engine, 5000, &task, &seconds), 0);
    double wall = tf_now () - t0;
    double cpu = cpu_now () - cpu0;

    assert_true (task == 17);
    assert_true (seconds >= 0.045);
    assert_true (seconds < 0.5);
    assert_true (wall >= seconds);
    assert_true (cpu < 0.5 * wall);

    /* Twice the units, twice the time: 4 units take 0.1 s. */
    assert_int_equal (engine_start (engine, 18, 4), 0);
    assert_int_equal (wait_done (engine, 5000, &task, &seconds), 0);
    assert_true (task == 18);
    assert_true (seconds >= 0.095);
    assert_true (seconds < 1.0);
    engine_destroy (&engine);
    assert_null (engine);
}

/*  Many short tasks at a high time scale: none finishes early, and the
 *  sub-millisecond remainders do not round up to whole milliseconds. */
/*  engine_lag counts how late a task's end reached the front: a DONE read
 *  at once adds little; one left unread for 0.2 s adds at least that, and
 *  becomes the worst. */
static void
test_lag_counts_a_completion_read_late (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (100, 10);   /* 1 unit: 1 ms */
    double max = -1;
    assert_true (engine_lag (engine, &max) == 0 && max == 0);
    assert_int_equal (engine_start (engine, 1, 1), 0);
    assert_int_equal (wait_done (engine, 5000, NULL, NULL), 0);
    double prompt = engine_lag (engine, &max);
    assert_true (prompt >= 0 && prompt < 0.1);

    assert_int_equal (engine_start (engine, 2, 1), 0);
    zclock_sleep (200);   /* the task ends after 1 ms; nobody reads */
    assert_int_equal (wait_done (engine, 5000, NULL, NULL), 0);
    double late = engine_lag (engine, &max) - prompt;
    if (late < 0.19 || late > 2)
        fail_msg ("a DONE read 0.2 s late added %.3f s of lag", late);
    assert_true (max >= 0.19);
    engine_destroy (&engine);
}

static void
test_emulated_short_tasks (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (9, 100);  /* 1 unit = 1.11 ms */
    double t0 = tf_now ();
    for (uint64_t i = 0; i < 20; i++) {
        assert_int_equal (engine_start (engine, i, 1), 0);
        uint64_t task;
        double seconds;
        assert_int_equal (wait_done (engine, 5000, &task, &seconds), 0);
        assert_true (task == i);
        assert_true (seconds >= 1.0 / 900);
    }
    assert_true (tf_now () - t0 >= 20.0 / 900);
    engine_destroy (&engine);
}

/*  The task id travels unchanged, all 64 bits of it; busy is set by a
 *  start and cleared only by reading the completion. */
static void
test_task_id_and_busy (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (100, 1);
    const uint64_t ids[] = {0, 1, UINT64_MAX, 0x8000000000000001ull,
                            0x0123456789abcdefull};

    assert_false (engine_busy (engine));
    for (size_t i = 0; i < sizeof (ids) / sizeof (ids[0]); i++) {
        assert_int_equal (engine_start (engine, ids[i], i % 2 ? 0.5 : 0), 0);
        assert_true (engine_busy (engine));
        /* Under 9 ms of work: no progress report, the completion is the
         * first message. */
        assert_int_equal (wait_ready (engine, 5000), 0);
        assert_true (engine_busy (engine));     /* done, but not yet read */
        uint64_t task = 42;
        double seconds = -1;
        assert_int_equal (engine_recv (engine, &task, &seconds), 0);
        assert_true (task == ids[i]);
        assert_true (seconds >= (i % 2 ? 0.005 * 0.99 : 0));
        assert_false (engine_busy (engine));
    }
    engine_destroy (&engine);
}

/*  One task at a time: a second start is refused and changes nothing. */
static void
test_start_while_busy (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (10, 1);   /* 0.5 units: 0.05 s */
    assert_int_equal (engine_start (engine, 1, 0.5), 0);
    assert_int_equal (engine_start (engine, 2, 0.5), -1);
    assert_true (engine_busy (engine));

    uint64_t task;
    double seconds;
    assert_int_equal (wait_done (engine, 5000, &task, &seconds), 0);
    assert_true (task == 1);
    /* No second completion follows: the refused start never ran. */
    assert_int_equal (wait_ready (engine, 150), -1);

    assert_int_equal (engine_start (engine, 3, 0), 0);
    assert_int_equal (wait_done (engine, 5000, &task, &seconds), 0);
    assert_true (task == 3);
    engine_destroy (&engine);
}

/*  A destroy that hangs would hang the whole test run: past this many
 *  seconds SIGALRM kills the process instead, a failure with a cause. */
#define DESTROY_WATCHDOG 20

/*  Destroying an engine in the middle of a 1000-second task returns
 *  promptly; so does destroying one whose completion was never read. */
static void
test_destroy_mid_task_emulated (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (1, 1);
    assert_int_equal (engine_start (engine, 5, 1000), 0);
    zclock_sleep (30);
    double t0 = tf_now ();
    alarm (DESTROY_WATCHDOG);
    engine_destroy (&engine);
    alarm (0);
    assert_true (tf_now () - t0 < 0.5);
    assert_null (engine);

    engine = new_emulated (1000, 1);
    assert_int_equal (engine_start (engine, 6, 1), 0);
    assert_int_equal (wait_ready (engine, 5000), 0);
    t0 = tf_now ();
    engine_destroy (&engine);
    assert_true (tf_now () - t0 < 0.5);

    engine_destroy (&engine);   /* safe on NULL */
}

static void
test_destroy_mid_task_real (void **state)
{
    (void) state;
    engine_t *engine = new_real (1024);
    assert_int_equal (engine_start (engine, 5, 1e6), 0);
    zclock_sleep (30);
    double t0 = tf_now ();
    alarm (DESTROY_WATCHDOG);
    engine_destroy (&engine);
    alarm (0);
    assert_true (tf_now () - t0 < 0.5);
    assert_null (engine);
}

/*  The real engine burns CPU through 3 diagonals and reports. */
static void
test_real_completes (void **state)
{
    (void) state;
    engine_t *engine = new_real (64);
    for (uint64_t id = 100; id < 103; id++) {
        assert_int_equal (engine_start (engine, id, 3), 0);
        assert_true (engine_busy (engine));
        uint64_t task;
        double seconds = -1;
        assert_int_equal (wait_done (engine, 10000, &task, &seconds), 0);
        assert_true (task == id);
        assert_true (seconds > 0 && seconds < 10);
        assert_false (engine_busy (engine));
    }
    /* Fractional units and zero units are accepted too. */
    assert_int_equal (engine_start (engine, 7, 0.25), 0);
    assert_int_equal (wait_done (engine, 10000, NULL, NULL), 0);
    assert_int_equal (engine_start (engine, 8, 0), 0);
    assert_int_equal (wait_done (engine, 10000, NULL, NULL), 0);
    engine_destroy (&engine);

    /* The smallest matrix works. */
    engine = new_real (2);
    assert_int_equal (engine_start (engine, 9, 5.5), 0);
    assert_int_equal (wait_done (engine, 10000, NULL, NULL), 0);
    engine_destroy (&engine);
}

/*  Expect cfg to be refused with a message containing `word`. */
static void
check_rejected (engine_cfg_t cfg, const char *word)
{
    char err[TF_ERRLEN] = "";
    engine_t *engine = engine_new (&cfg, err, sizeof (err));
    assert_null (engine);
    if (!strstr (err, word))
        fail_msg ("message '%s' does not mention '%s'", err, word);
    /* Without an error buffer, still refused, no crash. */
    assert_null (engine_new (&cfg, NULL, 0));
}

static void
test_invalid_configs (void **state)
{
    (void) state;
    const double nan = __builtin_nan ("");
    const double inf = __builtin_inf ();
    engine_cfg_t ok = {.mode = PLATFORM_EMULATED, .rate = 1, .time_scale = 1};
    engine_cfg_t cfg;

    cfg = ok, cfg.rate = 0, check_rejected (cfg, "rate");
    cfg = ok, cfg.rate = -3, check_rejected (cfg, "rate");
    cfg = ok, cfg.rate = nan, check_rejected (cfg, "rate");
    cfg = ok, cfg.rate = inf, check_rejected (cfg, "rate");
    cfg = ok, cfg.time_scale = 0, check_rejected (cfg, "time_scale");
    cfg = ok, cfg.time_scale = -1, check_rejected (cfg, "time_scale");
    cfg = ok, cfg.time_scale = nan, check_rejected (cfg, "time_scale");
    cfg = ok, cfg.rate = 1e300, cfg.time_scale = 1e300,
    check_rejected (cfg, "rate x time_scale");

    engine_cfg_t real = {.mode = PLATFORM_REAL, .matrix_n = 1024};
    cfg = real, cfg.matrix_n = 0, check_rejected (cfg, "matrix_n");
    cfg = real, cfg.matrix_n = 1, check_rejected (cfg, "matrix_n");
    cfg = real, cfg.matrix_n = 16385, check_rejected (cfg, "matrix_n");

    cfg = ok, cfg.mode = (platform_mode_t) 7, check_rejected (cfg, "mode");
    cfg = ok, cfg.progress_s = 0.001, check_rejected (cfg, "progress");
    cfg = ok, cfg.progress_s = 2, check_rejected (cfg, "progress");
    cfg = ok, cfg.progress_s = nan, check_rejected (cfg, "progress");

    /* A real engine ignores rate and time_scale; an emulated one, N. */
    cfg = real, cfg.rate = 0, cfg.time_scale = 0;
    engine_t *engine = engine_new (&cfg, NULL, 0);
    assert_non_null (engine);
    engine_destroy (&engine);
    cfg = ok, cfg.matrix_n = 0;
    engine = engine_new (&cfg, NULL, 0);
    assert_non_null (engine);
    engine_destroy (&engine);
}


/*  --- speed ------------------------------------------------------------- */

/*  Run one task to completion; return the seconds it reports and, in
 *  *wall, the seconds from just before the start to its completion. */
static double
run_task (engine_t *engine, uint64_t id, double units, double *wall)
{
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, id, units), 0);
    uint64_t task = 0;
    double seconds = -1;
    assert_int_equal (wait_done (engine, 10000, &task, &seconds), 0);
    if (wall)
        *wall = tf_now () - t0;
    assert_true (task == id);
    return seconds;
}

/*  At half speed, 2 units at 4 units/s, 10 times faster, take 0.1 s
 *  instead of 0.05; the factor holds for the next task too. */
static void
test_half_speed_doubles_a_task (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);
    assert_int_equal (engine_set_speed (engine, 0.5), 0);
    for (uint64_t id = 1; id <= 2; id++) {
        double wall;
        double seconds = run_task (engine, id, 2, &wall);
        assert_true (seconds >= 0.095);
        assert_true (seconds < 0.5);
        assert_true (wall >= seconds);
    }
    engine_destroy (&engine);
}

/*  12 units at 40 units/s: 0.3 s at full speed. After 50 ms (2 units) the
 *  speed drops to 0.25, so the other 10 units take 1 s: 1.2 - 3 x (the
 *  switch time) in all. Never faster than full speed; clearly slower;
 *  within a loose margin of the piecewise sum. */
static void
test_slow_down_mid_task (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 1, 12), 0);
    zclock_sleep (50);
    double switched = tf_now () - t0;
    assert_int_equal (engine_set_speed (engine, 0.25), 0);
    double seconds = -1;
    assert_int_equal (wait_done (engine, 10000, NULL, &seconds), 0);

    double expected = 1.2 - 3 * switched;
    assert_true (seconds >= 0.3);
    if (seconds < 0.6 || seconds > expected + 0.3)
        fail_msg ("took %.3f s; switching at %.3f s, expected %.3f", seconds, switched,
                  expected);
    engine_destroy (&engine);
}

/*  4 units at a quarter of 40 units/s, sped up to full after ~0.1 s: done
 *  at 0.1 + 0.75 x (the switch time). The actor reads the switch no
 *  earlier than it was sent, so that is a strict lower bound. */
static void
test_speed_up_mid_task (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);
    assert_int_equal (engine_set_speed (engine, 0.25), 0);
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 1, 4), 0);
    zclock_sleep (100);
    double before = tf_now () - t0;
    assert_int_equal (engine_set_speed (engine, 1), 0);
    double after = tf_now () - t0;
    double seconds = -1;
    assert_int_equal (wait_done (engine, 10000, NULL, &seconds), 0);
    double wall = tf_now () - t0;

    if (wall < 0.1 + 0.75 * before - 1e-6 || wall > 0.1 + 0.75 * after + 0.15)
        fail_msg ("took %.3f s; switching at %.3f-%.3f s, expected %.3f", wall, before,
                  after, 0.1 + 0.75 * before);
    assert_true (seconds <= wall);
    engine_destroy (&engine);
}

/*  At speed 0 a task makes no progress, without burning CPU; back at 1
 *  it finishes the work it had left. Both mid-task and from the start. */
static void
test_speed_zero_pauses_a_task (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (10, 1);    /* 3 units: 0.3 s */
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 1, 3), 0);
    zclock_sleep (30);
    assert_int_equal (engine_set_speed (engine, 0), 0);
    double cpu0 = cpu_now (), w0 = tf_now ();
    assert_int_equal (wait_done (engine, 400, NULL, NULL), -1);
    assert_true (cpu_now () - cpu0 < 0.5 * (tf_now () - w0));
    double resumed = tf_now () - t0;
    assert_int_equal (engine_set_speed (engine, 1), 0);
    double seconds = -1;
    assert_int_equal (wait_done (engine, 10000, NULL, &seconds), 0);
    double wall = tf_now () - t0;
    assert_true (wall >= resumed);
    assert_true (seconds >= 0.3);
    assert_true (seconds < resumed + 1.0);

    /* Paused before the start: nothing until resumed (0.05 s of work
     * would be done by then at full speed), then all of it. */
    assert_int_equal (engine_set_speed (engine, 0), 0);
    assert_int_equal (engine_start (engine, 2, 0.5), 0);
    assert_int_equal (wait_done (engine, 150, NULL, NULL), -1);
    double w1 = tf_now ();
    assert_int_equal (engine_set_speed (engine, 1), 0);
    assert_int_equal (wait_done (engine, 10000, NULL, &seconds), 0);
    assert_true (tf_now () - w1 >= 0.05 - 1e-6);
    assert_true (seconds >= 0.05);
    engine_destroy (&engine);
}

/*  $TERM is answered promptly at speed 0, mid-task and idle. */
static void
test_destroy_at_speed_zero (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (1, 1);
    assert_int_equal (engine_set_speed (engine, 0), 0);
    assert_int_equal (engine_start (engine, 5, 5), 0);
    zclock_sleep (30);
    double t0 = tf_now ();
    alarm (DESTROY_WATCHDOG);
    engine_destroy (&engine);
    alarm (0);
    assert_true (tf_now () - t0 < 0.5);
    assert_null (engine);

    engine = new_emulated (1, 1);
    assert_int_equal (engine_set_speed (engine, 0), 0);
    t0 = tf_now ();
    alarm (DESTROY_WATCHDOG);
    engine_destroy (&engine);
    alarm (0);
    assert_true (tf_now () - t0 < 0.5);
}

/*  Factors outside [0, 1] are clamped; NaN is refused and changes
 *  nothing. */
static void
test_speed_is_clamped (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);
    assert_int_equal (engine_set_speed (engine, 5), 0);       /* = 1 */
    assert_true (run_task (engine, 1, 2, NULL) >= 0.045);

    assert_int_equal (engine_set_speed (engine, -1), 0);      /* = 0 */
    assert_int_equal (engine_start (engine, 2, 0.1), 0);      /* 2.5 ms at 1 */
    assert_int_equal (wait_done (engine, 100, NULL, NULL), -1);
    assert_int_equal (engine_set_speed (engine, __builtin_nan ("")), -1);
    assert_int_equal (wait_done (engine, 50, NULL, NULL), -1);
    assert_int_equal (engine_set_speed (engine, 1), 0);
    assert_int_equal (wait_done (engine, 5000, NULL, NULL), 0);
    engine_destroy (&engine);
}

/*  The actor checks what reaches it itself: malformed SPEED messages are
 *  dropped, and out-of-range factors clamped, whoever sent them. */
static void
test_actor_checks_speed_messages (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);
    zsock_t *pipe = engine_sock (engine);
    double value = 0;
    float small = 0;
    zsock_send (pipe, "s", "SPEED");                          /* no factor */
    zsock_send (pipe, "sb", "SPEED", &small, sizeof (small)); /* 4 bytes */
    zsock_send (pipe, "sbs", "SPEED", &value, sizeof (value), "extra");
    value = __builtin_nan ("");
    zsock_send (pipe, "sb", "SPEED", &value, sizeof (value));
    /* None of them took: full speed still, 2 units in 0.05 s. */
    double seconds = run_task (engine, 1, 2, NULL);
    assert_true (seconds >= 0.045 && seconds < 0.5);

    value = -3;                                                /* = 0 */
    zsock_send (pipe, "sb", "SPEED", &value, sizeof (value));
    assert_int_equal (engine_start (engine, 2, 0.1), 0);
    assert_int_equal (wait_done (engine, 100, NULL, NULL), -1);
    value = 7;                                                 /* = 1 */
    zsock_send (pipe, "sb", "SPEED", &value, sizeof (value));
    assert_int_equal (wait_done (engine, 5000, NULL, &seconds), 0);
    assert_true (seconds >= 0.1);
    assert_true (run_task (engine, 3, 2, NULL) >= 0.045);     /* 7 was not 7 */
    engine_destroy (&engine);
}

/*  A real engine accepts a speed and ignores it: its interference is real. */
static void
test_real_ignores_speed (void **state)
{
    (void) state;
    engine_t *engine = new_real (64);
    assert_int_equal (engine_set_speed (engine, 0), 0);
    assert_int_equal (engine_start (engine, 1, 3), 0);
    assert_int_equal (engine_set_speed (engine, 0.5), 0);
    assert_int_equal (wait_done (engine, 10000, NULL, NULL), 0);
    assert_int_equal (engine_set_speed (engine, 1), 0);
    engine_destroy (&engine);
}


/*  --- progress ---------------------------------------------------------- */

/*  Read one message before `deadline` (tf_now seconds) and expect a
 *  progress report. Returns 1 when one was read, 0 at the deadline. A
 *  completion fails the test: the callers' tasks outlast their deadlines. */
static int
next_progress (engine_t *engine, double deadline)
{
    int left = (int) ((deadline - tf_now ()) * 1000);
    if (left <= 0 || wait_ready (engine, left))
        return 0;
    assert_int_equal (engine_recv (engine, NULL, NULL), 1);
    assert_true (engine_busy (engine));
    return 1;
}

/*  At 4 units/s, 10 times faster, half speed: 20 units/s. Sampled over
 *  0.3 s of a long task, units never go down, never run ahead of the time
 *  since the start (strict), and are not far behind it (loose). Reports
 *  come about every 10 ms: at least a third of that many. */
static void
test_units_grow_while_busy (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (4, 10);
    assert_true (engine_units (engine) == 0);
    assert_int_equal (engine_set_speed (engine, 0.5), 0);
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 1, 1000), 0);

    int reports = 0;
    double last = 0;
    while (next_progress (engine, t0 + 0.3)) {
        double units = engine_units (engine);
        double elapsed = tf_now () - t0;
        reports++;
        if (units < last || units > 20 * elapsed + 1e-9)
            fail_msg ("report %d: %.6f units at %.4f s, after %.6f", reports, units,
                      elapsed, last);
        last = units;
    }
    double elapsed = tf_now () - t0;
    if (reports < 10 || last < 20 * (elapsed - 0.1) * 0.5)
        fail_msg ("%d reports in %.3f s, last at %.4f units", reports, elapsed, last);
    assert_true (engine_busy (engine));
    engine_destroy (&engine);
}

/*  A longer progress period means fewer reports (each wakes the node's
 *  loop): with progress_s 0.05, a task of 0.4 s brings at most one report
 *  per 0.045 s of its run, and still some. */
static void
test_progress_period_is_honoured (void **state)
{
    (void) state;
    engine_cfg_t cfg = {.mode = PLATFORM_EMULATED, .rate = 10, .time_scale = 1,
                        .progress_s = 0.05};
    char err[TF_ERRLEN] = "";
    engine_t *engine = engine_new (&cfg, err, sizeof (err));
    assert_non_null (engine);
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 1, 4), 0);
    int reports = 0, rc;
    do {
        assert_int_equal (wait_ready (engine, 10000), 0);
        rc = engine_recv (engine, NULL, NULL);
        assert_in_range (rc, 0, 1);
        reports += rc;
    } while (rc == 1);
    double elapsed = tf_now () - t0;
    if (reports < 1 || reports > elapsed / 0.045 + 1)
        fail_msg ("%d reports in %.3f s with a 0.05 s period", reports, elapsed);
    engine_destroy (&engine);
}

/*  Run `count` tasks of `units` each; during each, reports lie between
 *  the totals before and after it, and each completion brings the total
 *  to the exact sum of the units so far. */
static void
check_units_sum (engine_t *engine, int count, double units)
{
    double total = engine_units (engine);
    for (int i = 0; i < count; i++) {
        assert_int_equal (engine_start (engine, (uint64_t) i, units), 0);
        double last = total;
        int rc;
        do {
            assert_int_equal (wait_ready (engine, 10000), 0);
            rc = engine_recv (engine, NULL, NULL);
            assert_in_range (rc, 0, 1);
            double now = engine_units (engine);
            if (now < last || now > total + units + 1e-9)
                fail_msg ("task %d: %.9f units after %.9f, total before %.9f", i, now,
                          last, total);
            last = now;
        } while (rc == 1);
        total += units;
        assert_float_equal (engine_units (engine), total, 1e-9);
    }
}

/*  3 tasks of 2.5 units at 100 units/s: 25 ms each, so some reports come
 *  between completions; the total is 7.5, whatever the slices. */
static void
test_units_sum_completions_emulated (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (100, 1);
    check_units_sum (engine, 3, 2.5);
    assert_float_equal (engine_units (engine), 7.5, 1e-9);
    /* A slowed task and an empty one count their units, no more. */
    assert_int_equal (engine_set_speed (engine, 0.5), 0);
    check_units_sum (engine, 1, 0.3);
    check_units_sum (engine, 1, 0);
    assert_float_equal (engine_units (engine), 7.8, 1e-9);
    engine_destroy (&engine);
}

/*  The real engine counts the units it was given, even where its last
 *  diagonal's rows round up (0.3 of 2048 rows is 614.4, run as 614; 0.7
 *  is 1433.6, run as 1434). Tens of milliseconds a diagonal: reports come
 *  between completions. */
static void
test_units_sum_completions_real (void **state)
{
    (void) state;
    engine_t *engine = new_real (2048);
    assert_true (engine_units (engine) == 0);
    check_units_sum (engine, 3, 2.5);
    assert_float_equal (engine_units (engine), 7.5, 1e-9);
    check_units_sum (engine, 1, 0.3);
    check_units_sum (engine, 1, 0.7);
    check_units_sum (engine, 1, 0);
    assert_float_equal (engine_units (engine), 8.5, 1e-9);
    engine_destroy (&engine);
}

/*  At speed 0 the units stand still, while reports keep coming (the task
 *  is still running); back at speed 1 they grow again. */
static void
test_speed_zero_stops_units (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (10, 1);
    assert_int_equal (engine_start (engine, 1, 1000), 0);
    zclock_sleep (50);
    assert_int_equal (engine_set_speed (engine, 0), 0);
    /* Reports already sent, or credited just before the actor read the
     * SPEED, may still show growth: let them pass. */
    double until = tf_now () + 0.05;
    while (next_progress (engine, until))
        ;
    double paused = engine_units (engine);
    assert_true (paused > 0);

    int reports = 0;
    until = tf_now () + 0.2;
    while (next_progress (engine, until)) {
        reports++;
        if (engine_units (engine) != paused)
            fail_msg ("paused at %.9f units, report %d says %.9f", paused, reports,
                      engine_units (engine));
    }
    assert_true (reports >= 5);

    assert_int_equal (engine_set_speed (engine, 1), 0);
    until = tf_now () + 0.1;
    while (next_progress (engine, until))
        ;
    assert_true (engine_units (engine) > paused);
    engine_destroy (&engine);
}

/*  Reports come only while busy: none before the first task, and none
 *  after a completion, here one that sent several. */
static void
test_no_progress_when_idle (void **state)
{
    (void) state;
    engine_t *engine = new_emulated (10, 1);
    assert_int_equal (wait_ready (engine, 50), -1);

    assert_int_equal (engine_start (engine, 1, 1), 0);   /* 0.1 s */
    int reports = 0;
    int rc;
    do {
        assert_int_equal (wait_ready (engine, 10000), 0);
        rc = engine_recv (engine, NULL, NULL);
        assert_in_range (rc, 0, 1);
        reports += rc;
    } while (rc == 1);
    assert_true (reports >= 3);
    assert_float_equal (engine_units (engine), 1, 1e-9);

    assert_int_equal (wait_ready (engine, 50), -1);
    assert_float_equal (engine_units (engine), 1, 1e-9);
    engine_destroy (&engine);
}

/*  One diagonal of a 2048 x 2048 matrix takes tens of milliseconds: the
 *  real engine reports the rows done as a fraction of it along the way. */
static void
test_real_progress_is_fractional (void **state)
{
    (void) state;
    engine_t *engine = new_real (2048);
    assert_int_equal (engine_start (engine, 1, 1), 0);
    int fractional = 0;
    int rc;
    double last = 0;
    do {
        assert_int_equal (wait_ready (engine, 10000), 0);
        rc = engine_recv (engine, NULL, NULL);
        assert_in_range (rc, 0, 1);
        double units = engine_units (engine);
        assert_true (units >= last && units <= 1);
        if (rc == 1 && units > 0 && units < 1)
            fractional++;
        last = units;
    } while (rc == 1);
    assert_true (fractional >= 1);
    assert_float_equal (engine_units (engine), 1, 1e-9);
    engine_destroy (&engine);
}

/*  --- an emulated engine in the caller's loop ------------------------ */

static engine_t *
new_in_loop (double rate)
{
    engine_cfg_t cfg = {.mode = PLATFORM_EMULATED, .rate = rate, .time_scale = 1,
                        .in_loop = 1};
    char err[TF_ERRLEN] = "";
    engine_t *engine = engine_new (&cfg, err, sizeof (err));
    assert_non_null (engine);
    return engine;
}

static void
sleep_s (double s)
{
    if (s > 0)
        nanosleep (&(struct timespec){(time_t) s, (long) ((s - (time_t) s) * 1e9)}, NULL);
}

/*  Drive an engine in the loop as node.c does: wait for its deadline,
 *  then read it. Returns the completion's seconds; *reports counts the
 *  progress reports before it. */
static double
loop_until_done (engine_t *engine, uint64_t want, int *reports)
{
    uint64_t task = 0;
    double seconds = -1;
    *reports = 0;
    for (;;) {
        double due = engine_deadline (engine, tf_now ());
        assert_true (due >= 0 && due <= ENGINE_PROGRESS_EVERY + 1e-9);
        sleep_s (due);
        int rc = engine_recv (engine, &task, &seconds);
        if (rc == 0)
            break;
        assert_int_equal (rc, 1);
        (*reports)++;
    }
    assert_int_equal (task, want);
    return seconds;
}

/*  No thread, no socket: a task of 2 units at 100 units/s ends no earlier
 *  than 20 ms after its start, with progress reports on the way, and the
 *  units sum exactly. */
static void
test_in_loop_engine_runs_a_task_as_a_deadline (void **state)
{
    (void) state;
    engine_t *engine = new_in_loop (100);
    assert_null (engine_sock (engine));
    assert_true (engine_deadline (engine, tf_now ()) < 0);   /* idle */
    double t0 = tf_now ();
    assert_int_equal (engine_start (engine, 7, 2), 0);
    assert_int_equal (engine_start (engine, 8, 2), -1);   /* one at a time */
    int reports;
    double seconds = loop_until_done (engine, 7, &reports);
    assert_true (tf_now () - t0 >= 0.02 - 1e-6);
    assert_true (seconds >= 0.02 - 1e-6);
    assert_true (reports >= 1);
    assert_false (engine_busy (engine));
    assert_true (engine_units (engine) == 2);
    assert_true (engine_deadline (engine, tf_now ()) < 0);
    double max;
    assert_true (engine_lag (engine, &max) >= 0 && max >= 0);
    engine_destroy (&engine);
}

/*  Progress is the integral of the speed: at factor 1 for a while, then
 *  0.5, the units done lie between what the instants bracketing each
 *  change allow; at factor 0 a task makes no progress and still reports. */
static void
test_in_loop_engine_integrates_speed_changes (void **state)
{
    (void) state;
    engine_t *engine = new_in_loop (100);
    double t0a = tf_now ();
    engine_start (engine, 1, 1000);
    double t0b = tf_now ();
    sleep_s (0.01);
    double t1a = tf_now ();
    engine_set_speed (engine, 0.5);
    double t1b = tf_now ();
    sleep_s (0.01);
    double t2a = tf_now ();
    assert_int_equal (engine_recv (engine, NULL, NULL), 1);
    double t2b = tf_now ();
    double units = engine_units (engine);
    double lo = (t1a - t0b) * 100 + (t2a - t1b) * 50, hi = (t1b - t0a) * 100 + (t2b - t1a) * 50;
    if (units < lo - 1e-9 || units > hi + 1e-9)
        fail_msg ("%.6f units, expected within [%.6f, %.6f]", units, lo, hi);
    engine_set_speed (engine, 0);
    double before = engine_units (engine);
    sleep_s (0.02);
    assert_int_equal (engine_recv (engine, NULL, NULL), 1);
    assert_true (engine_units (engine) - before < 0.01 * 50);   /* only the instant
                                                                    before the stop */
    double due = engine_deadline (engine, tf_now ());
    assert_true (due >= 0 && due <= ENGINE_PROGRESS_EVERY);
    engine_destroy (&engine);
}

/*  got within tol of want, compared as doubles (cmocka's
 *  assert_float_equal rounds to float: a millisecond at these clocks). */
static void
assert_near_s (double got, double want, double tol)
{
    if (!(fabs (got - want) <= tol))
        fail_msg ("got %.9f, want %.9f (off by %.3g)", got, want, got - want);
}

/*  A speed change dated back: the task's progress takes each factor from
 *  its exact moment, however late the change is made, so its end is
 *  exact; a change is never dated before the last one; a task that ended
 *  before a change keeps its end, and one the change reaches ends later
 *  than the old speed said. */
static void
test_in_loop_engine_back_dated_speed (void **state)
{
    (void) state;
    engine_t *engine = new_in_loop (100);
    double start, end;
    assert_int_equal (engine_task_span (engine, &start, &end), 0);   /* idle */
    engine_start (engine, 1, 1000);
    assert_int_equal (engine_task_span (engine, &start, &end), 1);
    sleep_s (0.02);
    /*  0.5 from start + 5 ms, 0.25 from 3 ms later: 0.5 + 0.15 units done
     *  by then, the rest at 25 units/s. */
    double at1 = start + 0.005, at2 = at1 + 0.003;
    assert_int_equal (engine_set_speed_at (engine, 0.5, at1), 0);
    assert_int_equal (engine_set_speed_at (engine, 0.25, at2), 0);
    engine_task_span (engine, &start, &end);
    assert_near_s (end, at2 + (1000 - 0.5 - 0.15) / 25, 1e-9);
    /*  Dated before the last change: from the last change. */
    assert_int_equal (engine_set_speed_at (engine, 1, start), 0);
    engine_task_span (engine, &start, &end);
    assert_near_s (end, at2 + (1000 - 0.5 - 0.15) / 100, 1e-9);
    /*  Dated in the future: from now. */
    double before = tf_now ();
    engine_set_speed_at (engine, 0.5, before + 100);
    double after = tf_now ();
    engine_task_span (engine, &start, &end);
    /*  Changed at x in [before, after]: the end x + (999.35 - 100 (x - at2))
     *  / 50 is the later, the earlier x. */
    assert_true (end <= before + (999.35 - (before - at2) * 100) / 50 + 1e-9);
    assert_true (end >= after + (999.35 - (after - at2) * 100) / 50 - 1e-9);
    engine_destroy (&engine);

    /*  1 unit: done at start + 10 ms at full speed, unless halved first. */
    engine = new_in_loop (100);
    engine_start (engine, 2, 1);
    sleep_s (0.02);
    engine_task_span (engine, &start, &end);
    engine_set_speed_at (engine, 0.5, start + 0.015);   /* after its end */
    engine_task_span (engine, &start, &end);
    assert_near_s (end, start + 0.01, 1e-9);
    engine_set_speed_at (engine, 1, start);   /* clamped: no change */
    engine_destroy (&engine);

    engine = new_in_loop (100);
    engine_start (engine, 3, 1);
    sleep_s (0.02);
    engine_task_span (engine, &start, &end);
    engine_set_speed_at (engine, 0.5, start + 0.005);   /* before it */
    engine_task_span (engine, &start, &end);
    assert_near_s (end, start + 0.005 + 0.5 / 50, 1e-9);
    assert_true (engine_deadline (engine, tf_now ()) == 0);
    double read = tf_now ();
    assert_int_equal (engine_recv (engine, NULL, NULL), 0);
    assert_true (engine_lag (engine, NULL) >= read - end - 1e-9);
    assert_true (engine_units (engine) == 1);
    engine_destroy (&engine);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_emulated_duration),
        cmocka_unit_test (test_emulated_short_tasks),
        cmocka_unit_test (test_lag_counts_a_completion_read_late),
        cmocka_unit_test (test_task_id_and_busy),
        cmocka_unit_test (test_start_while_busy),
        cmocka_unit_test (test_destroy_mid_task_emulated),
        cmocka_unit_test (test_destroy_mid_task_real),
        cmocka_unit_test (test_real_completes),
        cmocka_unit_test (test_invalid_configs),
        cmocka_unit_test (test_half_speed_doubles_a_task),
        cmocka_unit_test (test_slow_down_mid_task),
        cmocka_unit_test (test_speed_up_mid_task),
        cmocka_unit_test (test_speed_zero_pauses_a_task),
        cmocka_unit_test (test_destroy_at_speed_zero),
        cmocka_unit_test (test_speed_is_clamped),
        cmocka_unit_test (test_actor_checks_speed_messages),
        cmocka_unit_test (test_real_ignores_speed),
        cmocka_unit_test (test_units_grow_while_busy),
        cmocka_unit_test (test_progress_period_is_honoured),
        cmocka_unit_test (test_units_sum_completions_emulated),
        cmocka_unit_test (test_units_sum_completions_real),
        cmocka_unit_test (test_speed_zero_stops_units),
        cmocka_unit_test (test_no_progress_when_idle),
        cmocka_unit_test (test_real_progress_is_fractional),
        cmocka_unit_test (test_in_loop_engine_runs_a_task_as_a_deadline),
        cmocka_unit_test (test_in_loop_engine_integrates_speed_changes),
        cmocka_unit_test (test_in_loop_engine_back_dated_speed),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
