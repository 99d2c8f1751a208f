/*  test_emulate — the emulated interference model without sockets: the
 *  engine's speed is the model's normalized compute rate of the rates
 *  held since the last update, what the node observed is their integral,
 *  and the mean speed counts busy time only.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/emulate.h"

#define MB 1048576.0
#define ALL 1e9   /* busy the whole interval, charged over all of it */

static void
test_speed_is_the_normalized_compute_rate (void **state)
{
    (void) state;
    /*  IR_r 0.04, IR_s 0.02 and 0.03; one platform MB/s is MB bytes/s
     *  here (payload and time scale 1). */
    const double ir_send[2] = {0.02, 0.03};
    emul_t *e = emul_new (2, 0.04, ir_send, MB, 1);
    double send[2] = {5 * MB, 0};
    double f = emul_update (e, 1.0, 1, 10 * MB, send);
    /*  1 - 0.04 x 10 - 0.02 x 5 = 0.5 */
    assert_true (fabs (f - 0.5) < 1e-12);
    send[1] = 10 * MB;   /* 0.5 - 0.3 = 0.2 */
    assert_true (fabs (emul_update (e, 2.0, 1, 10 * MB, send) - 0.2) < 1e-12);
    /*  More than the node has: the factor stops at 0, it never goes below. */
    send[0] = 100 * MB;
    assert_true (emul_update (e, 3.0, 1, 10 * MB, send) == 0);
    emul_destroy (&e);
    assert_null (e);
}

/*  The runtime's update by bytes moved: however lumpy the arrivals and
 *  however irregular the updates, the compute the transfers take while
 *  busy, the integral of (1 - factor) dt, is IR x the MB moved, and what
 *  the node observed is the bytes moved. */
static void
test_bytes_charge_exactly_ir_times_bytes (void **state)
{
    (void) state;
    const double ir_send[1] = {0.02};
    emul_t *e = emul_new (1, 0.04, ir_send, MB, 1);
    double sent[1] = {0};
    assert_true (emul_update_bytes (e, 1.0, ALL, ALL, 0, sent) == 1.0);   /* notes 0 */
    /*  Updates at uneven moments; 512 KiB chunks land in lumps. */
    const double at[] = {1.010, 1.013, 1.030, 1.031, 1.050, 1.090, 1.100, 1.160, 1.170};
    const double recv_chunks[] = {2, 0, 1, 3, 0, 1, 2, 0, 1};
    const double sent_chunks[] = {0, 1, 1, 0, 2, 0, 0, 1, 0};
    double recv = 0, prev = 1.0, lost = 0;
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
        recv += recv_chunks[k] * 0.5 * MB;
        sent[0] += sent_chunks[k] * 0.5 * MB;
        double f = emul_update_bytes (e, at[k], ALL, ALL, recv, sent);
        assert_true (f >= 0 && f <= 1);
        lost += (1 - f) * (at[k] - prev);
        prev = at[k];
    }
    /*  Lumps larger than an interval can charge are owed to the next:
     *  quiet, busy intervals pay the rest. */
    for (double t = prev + 0.05; t < prev + 1.0; t += 0.05) {
        lost += (1 - emul_update_bytes (e, t, ALL, ALL, recv, sent)) * 0.05;
    }
    /*  10 MB received at 0.04, 5 MB sent at 0.02: 0.5 s of compute. */
    assert_true (fabs (lost - (0.04 * recv / MB + 0.02 * sent[0] / MB)) < 1e-9);
    double obs[2];
    emul_observed (e, emul_updated_at (e), obs);
    assert_true (fabs (obs[0] - recv) < 1e-6 && fabs (obs[1] - sent[0]) < 1e-6);
    emul_destroy (&e);
}

/*  What is owed is owed by a busy engine only: an idle one computes
 *  nothing the bytes could slow. An update closer than EMUL_MIN_INTERVAL
 *  to the last changes nothing; the totals going down (a meter reset)
 *  count as nothing moved. */
static void
test_bytes_debt_only_while_busy (void **state)
{
    (void) state;
    emul_t *e = emul_new (0, 0.1, NULL, MB, 1);
    emul_update_bytes (e, 1.0, ALL, ALL, 0, NULL);
    /*  30 MB in 1 s at 0.1: 3 s of compute in 1 s: 0 now, 2 s owed. */
    assert_true (emul_update_bytes (e, 2.0, ALL, ALL, 30 * MB, NULL) == 0);
    assert_true (emul_update_bytes (e, 2.0 + EMUL_MIN_INTERVAL / 2, ALL, ALL, 40 * MB, NULL) == 1);
    assert_true (emul_update_bytes (e, 3.0, ALL, ALL, 30 * MB, NULL) == 0);   /* 1 s owed */
    assert_true (fabs (emul_update_bytes (e, 5.0, ALL, ALL, 30 * MB, NULL) - 0.5) < 1e-12);
    assert_true (emul_update_bytes (e, 6.0, ALL, ALL, 60 * MB, NULL) == 0);   /* 2 s owed */
    assert_true (emul_update_bytes (e, 7.0, 0, 0, 60 * MB, NULL) == 1);   /* idle: forgiven */
    assert_true (emul_update_bytes (e, 8.0, ALL, ALL, 60 * MB, NULL) == 1);
    assert_true (emul_update_bytes (e, 9.0, ALL, ALL, 1 * MB, NULL) == 1);    /* went down */
    /*  The mean speed: busy 1..6 and 7..9 at 0, 0, 0.5, 0.5, 0, 1, 1. */
    assert_true (fabs (emul_speed_mean (e) - 3.0 / 7) < 1e-12);
    emul_destroy (&e);
}

/*  Bytes moved while the engine was idle are free: a task that started
 *  halfway through an interval is charged for the half it computed, at
 *  the interval's mean rate; and the charge is spread over the part the
 *  speed may still be dated back over (apply_s), the rest owed. */
static void
test_bytes_charge_only_the_busy_part (void **state)
{
    (void) state;
    emul_t *e = emul_new (0, 0.04, NULL, MB, 1);
    emul_update_bytes (e, 1.0, 0, 0, 0, NULL);
    /*  10 MB in 1 s at 0.04: 0.4 of compute lost while busy, 0.5 s busy:
     *  0.2 s charged over the last 0.25 s. */
    assert_true (fabs (emul_update_bytes (e, 2.0, 0.5, 0.25, 10 * MB, NULL) - 0.2) < 1e-12);
    /*  Again, over the last 0.1 s: 0.1 charged, 0.1 owed, paid next. */
    assert_true (emul_update_bytes (e, 3.0, 0.5, 0.1, 20 * MB, NULL) == 0);
    assert_true (fabs (emul_update_bytes (e, 4.0, ALL, ALL, 20 * MB, NULL) - 0.9) < 1e-12);
    /*  Mean speed over the 2 s busy: (0.5 - 0.2) + (0.5 - 0.1) + (1 - 0.1). */
    assert_true (fabs (emul_speed_mean (e) - 1.6 / 2) < 1e-12);
    emul_destroy (&e);
}

static void
test_observed_bytes_integrate_the_held_rates (void **state)
{
    (void) state;
    const double ir_send[1] = {0.01};
    emul_t *e = emul_new (1, 0.01, ir_send, MB, 1);
    double out[2] = {-1, -1};
    emul_observed (e, 5.0, out);   /* nothing held yet */
    assert_true (out[0] == 0 && out[1] == 0);
    double send[1] = {300};
    emul_update (e, 10.0, 0, 100, send);
    emul_observed (e, 12.0, out);  /* 2 s at 100 in, 300 out */
    assert_true (fabs (out[0] - 200) < 1e-9 && fabs (out[1] - 600) < 1e-9);
    send[0] = 0;
    emul_update (e, 13.0, 0, 50, send);   /* 3 s of the old rates are in */
    emul_observed (e, 15.0, out);         /* plus 2 s of the new */
    assert_true (fabs (out[0] - (300 + 100)) < 1e-9);
    assert_true (fabs (out[1] - 900) < 1e-9);
    assert_true (emul_updated_at (e) == 13.0);
    emul_destroy (&e);
}

static void
test_mean_speed_counts_busy_time_only (void **state)
{
    (void) state;
    const double ir_send[1] = {0.1};
    emul_t *e = emul_new (1, 0, ir_send, MB, 1);
    assert_true (emul_speed_mean (e) == 1.0);
    double send[1] = {5 * MB};             /* factor 0.5 from t = 0 */
    emul_update (e, 1e-9, 1, 0, send);
    send[0] = 0;                           /* factor 1 from t = 1 */
    emul_update (e, 1.0, 1, 0, send);      /* busy 1 s at 0.5 */
    emul_update (e, 4.0, 0, 0, send);      /* idle 3 s: not counted */
    emul_update (e, 5.0, 1, 0, send);      /* busy 1 s at 1 */
    assert_true (fabs (emul_speed_mean (e) - 0.75) < 1e-6);
    emul_destroy (&e);
}

static void
test_real_compute_keeps_full_speed (void **state)
{
    (void) state;
    const double ir_send[1] = {0.1};
    emul_t *e = emul_new (1, 0.1, ir_send, MB, 0);
    double send[1] = {5 * MB};
    assert_true (emul_update (e, 1.0, 1, 5 * MB, send) == 1.0);
    double out[2];
    emul_observed (e, 2.0, out);           /* still observed */
    assert_true (fabs (out[1] - 5 * MB) < 1e-6);
    emul_destroy (&e);
}

/*  Only a node whose traffic can slow its engine needs its speed updated
 *  every few milliseconds (node.c keeps its loop that awake only then). */
static void
test_interferes_only_with_some_ir (void **state)
{
    (void) state;
    const double none[2] = {0, 0}, one[2] = {0, 0.2};
    emul_t *e = emul_new (2, 0, none, MB, 1);
    assert_false (emul_interferes (e));
    double send[2] = {5 * MB, 5 * MB};
    assert_true (emul_update (e, 1.0, 1, 5 * MB, send) == 1.0);
    emul_destroy (&e);
    e = emul_new (2, 0, one, MB, 1);
    assert_true (emul_interferes (e));
    emul_destroy (&e);
    e = emul_new (0, 0.1, NULL, MB, 1);
    assert_true (emul_interferes (e));
    emul_destroy (&e);
    e = emul_new (2, 0.1, one, MB, 0);     /* real compute: never */
    assert_false (emul_interferes (e));
    emul_destroy (&e);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_speed_is_the_normalized_compute_rate),
        cmocka_unit_test (test_bytes_charge_exactly_ir_times_bytes),
        cmocka_unit_test (test_bytes_debt_only_while_busy),
        cmocka_unit_test (test_bytes_charge_only_the_busy_part),
        cmocka_unit_test (test_observed_bytes_integrate_the_held_rates),
        cmocka_unit_test (test_mean_speed_counts_busy_time_only),
        cmocka_unit_test (test_real_compute_keeps_full_speed),
        cmocka_unit_test (test_interferes_only_with_some_ir),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
