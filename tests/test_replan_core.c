/*  test_replan_core — re-planning for free (docs/adapt.md): what the core
 *  believes of its own compute rate and of its children's rates changes
 *  from the next decision on (core_set_compute_rate, core_set_child_rates),
 *  and the real registered policies (policy_find, as a run uses them) act
 *  on it: IA:Single's never-use rule IR_s Z C^n >= 1, CompRate's and BWC's
 *  service orders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "node/core.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  A root of n children (the given facts), Z = 1 MB, w = 2 units, C = 100
 *  units/s; each task one empty chunk, so one ack ends a transfer. */
static core_t *
make_root (const char *policy, const core_child_info_t *kids, int n)
{
    core_cfg_t cfg = {
        .self = 0, .nnodes = 8, .is_root = 1, .task_count = 50,
        .task_units = 2, .task_mb = 1, .task_bytes = 0,
        .chunk_bytes = 400, .window = 2, .buffer = 3,
        .batch_max = 3, .batch_delay = 0.05, .meter_window = 0.1,
        .policy = policy_find (policy),
        .parent = {.compute_rate = 100, .task_mb = 1, .task_units = 2, .is_root = 1},
        .nchildren = n, .children = kids,
    };
    assert_non_null (cfg.policy);
    return test_core_new (&cfg);
}

/*  The child the actions send a chunk to, or -1. */
static int
sent_to (const core_action_t *a, int n, uint64_t *task)
{
    for (int i = 0; i < n; i++)
        if (a[i].type == CORE_ACT_SEND_CHUNK) {
            if (task)
                *task = a[i].task;
            return a[i].child;
        }
    return -1;
}

/*  IA:Single never serves a child with IR_s Z C^n >= 1; once the node's
 *  own C drops so that IR_s Z C^n < 1, the child is served. */
static void
test_lower_own_compute_lifts_the_never_use_rule (void **state)
{
    (void) state;
    /*  IR_s 0.05 x Z 1 x C^n (100 / 2 = 50 tasks/s) = 2.5 >= 1. */
    static const core_child_info_t one[1] = {{10, 10, 10, 0.05, 0.02, 0}};
    core_t *core = make_root ("ia-single", one, 1);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    const core_action_t *a =
        test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 2}, &n);
    assert_int_equal (sent_to (a, n, NULL), -1);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 1}, &n);
    assert_int_equal (sent_to (a, n, NULL), -1);
    /*  Ignored: not > 0 and finite. */
    core_set_compute_rate (core, 0);
    core_set_compute_rate (core, -5);
    core_set_compute_rate (core, INFINITY);
    core_set_compute_rate (core, NAN);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 2}, &n);
    assert_int_equal (sent_to (a, n, NULL), -1);
    /*  C = 10 units/s: 0.05 x 1 x 5 = 0.25 < 1. */
    core_set_compute_rate (core, 10);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 3}, &n);
    assert_int_equal (sent_to (a, n, NULL), 0);
    core_destroy (&core);
}

/*  Both children ask; child 0 is served at its request (alone then). At
 *  its transfer's ack the policy picks the next between the two: return
 *  that child. Before the ack, set is applied (if given). */
static int
next_after_ack (core_t *core, void (*set) (core_t *))
{
    int n;
    uint64_t task = 0;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    const core_action_t *a =
        test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 5}, &n);
    assert_int_equal (sent_to (a, n, &task), 0);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 5}, &n);
    assert_int_equal (sent_to (a, n, NULL), -1);   /* single port: busy */
    if (set)
        set (core);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = task,
                                   .index = 0}, &n);
    return sent_to (a, n, NULL);
}

static void
swap_compute (core_t *core)
{
    core_rates_t fast = {30, NAN, NAN, NAN, NAN}, slow = {5, NAN, NAN, NAN, NAN};
    core_set_child_rates (core, 0, &fast);
    core_set_child_rates (core, 1, &slow);
    /*  Ignored: a bad slot, negative and infinite values. */
    core_rates_t bad = {-1, INFINITY, -2, NAN, NAN};
    core_set_child_rates (core, 0, &bad);
    core_set_child_rates (core, 2, &fast);
    core_set_child_rates (core, -1, &fast);
}

/*  CompRate serves the faster child first; it follows the live rates. */
static void
test_comprate_order_follows_live_compute_rates (void **state)
{
    (void) state;
    static const core_child_info_t two[2] = {
        {10, 10, 10, 0.01, 0.02, 0}, {20, 10, 10, 0.01, 0.02, 0},
    };
    core_t *core = make_root ("comprate", two, 2);
    assert_int_equal (next_after_ack (core, NULL), 1);
    core_destroy (&core);
    core = make_root ("comprate", two, 2);
    assert_int_equal (next_after_ack (core, swap_compute), 0);
    core_destroy (&core);
}

static void
slow_link_1 (core_t *core)
{
    /*  As a declared link change does: link_mbps to its new value, the
     *  idle rate scaled alike (10 -> 2: x 0.2). */
    core_rates_t r = {NAN, 2, 4, NAN, NAN};
    core_set_child_rates (core, 1, &r);
}

/*  BWC serves the fastest link first; it follows the live link rates. */
static void
test_bwc_order_follows_live_link_rates (void **state)
{
    (void) state;
    static const core_child_info_t two[2] = {
        {10, 5, 10, 0.01, 0.02, 0}, {10, 10, 20, 0.01, 0.02, 0},
    };
    core_t *core = make_root ("bwc", two, 2);
    assert_int_equal (next_after_ack (core, NULL), 1);
    core_destroy (&core);
    core = make_root ("bwc", two, 2);
    assert_int_equal (next_after_ack (core, slow_link_1), 0);
    core_destroy (&core);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_lower_own_compute_lifts_the_never_use_rule),
        cmocka_unit_test (test_comprate_order_follows_live_compute_rates),
        cmocka_unit_test (test_bwc_order_follows_live_link_rates),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
