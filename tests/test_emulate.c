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
        cmocka_unit_test (test_observed_bytes_integrate_the_held_rates),
        cmocka_unit_test (test_mean_speed_counts_busy_time_only),
        cmocka_unit_test (test_real_compute_keeps_full_speed),
        cmocka_unit_test (test_interferes_only_with_some_ir),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
