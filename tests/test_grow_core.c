/*  test_grow_core — a parent's core with child slots kept for nodes that
 *  join (core_child_info_t.absent, core_attach_child) and children that
 *  leave once drained (core_detach_child), docs/adapt.md "Grow" and
 *  "Shrink": a vacant slot is never served, an attached child is served
 *  like the others by the registered policies, and a detached child is
 *  never served again without being counted lost.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/core.h"
#include "overlay/util.h"
#include "policies/policy.h"
#include "tests/helpers.h"

/*  Slot 0 a real child (node 1), slot 1 vacant (node 2 once joined). */
static const core_child_info_t kids[2] = {
    {1, 10, 10, 0.01, 0.02, 0, 1, 0}, {0, 0, 0, 0, 0, 0, 2, 1},
};

/*  The facts of the node that joins slot 1. */
static const core_child_info_t joined = {1, 10, 10, 0.01, 0.02, 0, 2, 0};

static core_t *
make_root (const char *policy)
{
    core_cfg_t cfg = {
        .self = 0, .nnodes = 3, .is_root = 1,
        .task_count = 10, .task_units = 2, .task_mb = 1, .task_bytes = 1000,
        .chunk_bytes = 1000, .window = 2, .buffer = 3,
        .batch_max = 1, .batch_delay = 0, .meter_window = 0.1,
        .policy = policy_find (policy),
        .parent = {.compute_rate = 1},
        .nchildren = 2, .children = kids,
    };
    assert_non_null (cfg.policy);
    char err[TF_ERRLEN];
    core_t *core = core_new (&cfg, err, sizeof err);
    if (!core)
        fail_msg ("core_new (%s): %s", policy, err);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    return core;
}

/*  Whether any of the n actions sends to child. */
static int
sends_to (const core_action_t *a, int n, int child)
{
    for (int i = 0; i < n; i++)
        if (a[i].type == CORE_ACT_SEND_CHUNK && a[i].child == child)
            return 1;
    return 0;
}

/*  A vacant slot is lost until a node joins it: its asks are refused and
 *  nothing goes to it; attached, it is served like slot 0. */
static void
check_vacant_then_attached (const char *policy)
{
    core_t *root = make_root (policy);
    int n;
    test_core_refuse (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1},
                      "lost");
    const core_action_t *a =
        test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1},
                        &n);
    assert_true (sends_to (a, n, 0));
    assert_false (sends_to (a, n, 1));
    assert_int_equal (core_child_stats (root, 1).given, 0);

    char err[TF_ERRLEN] = "";
    assert_int_equal (core_attach_child (root, 1, &joined, err, sizeof err), 0);
    /*  Slot 0's transfer done (it asked for one), the joined child's ask
     *  is served. */
    const core_action_t *s = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    test_core_feed (root, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = s->task},
                    &n);
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1},
                        &n);
    int served = sends_to (a, n, 1);
    assert_true (served);
    assert_int_equal (core_child_stats (root, 1).given, 1);
    core_destroy (&root);
}

static void
test_ia_multi_serves_a_joined_child_only_once_attached (void **state)
{
    (void) state;
    check_vacant_then_attached ("ia-multi");
}

static void
test_fcfs_serves_a_joined_child_only_once_attached (void **state)
{
    (void) state;
    check_vacant_then_attached ("fcfs");
}

static void
test_attach_refuses_a_taken_or_bad_slot (void **state)
{
    (void) state;
    core_t *root = make_root ("fcfs");
    char err[TF_ERRLEN] = "";
    assert_int_equal (core_attach_child (root, 0, &joined, err, sizeof err), -1);
    assert_non_null (strstr (err, "not vacant"));
    assert_int_equal (core_attach_child (root, 2, &joined, err, sizeof err), -1);
    assert_int_equal (core_attach_child (root, -1, &joined, err, sizeof err), -1);
    assert_int_equal (core_attach_child (root, 1, &joined, err, sizeof err), 0);
    assert_int_equal (core_attach_child (root, 1, &joined, err, sizeof err), -1);
    core_destroy (&root);
}

/*  A child leaves only once nothing given to its subtree is out; then it
 *  is never served again and it is not counted lost. */
static void
test_detach_waits_for_the_subtree_and_is_not_a_loss (void **state)
{
    (void) state;
    core_t *root = make_root ("fcfs");
    int n;
    const core_action_t *a =
        test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1},
                        &n);
    const core_action_t *s = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_non_null (s);
    uint64_t task = s->task;
    assert_int_equal (core_child_stats (root, 0).given, 1);
    char err[TF_ERRLEN] = "";
    assert_int_equal (core_detach_child (root, 0, err, sizeof err), -1);
    assert_non_null (strstr (err, "still has tasks"));
    assert_int_equal (core_detach_child (root, 5, err, sizeof err), -1);

    test_core_feed (root, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = task},
                    &n);
    core_done_t done = {.task = task, .node = 1};
    test_core_feed (root, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = &done,
                                         .ndone = 1}, &n);
    assert_int_equal (core_child_stats (root, 0).given, 0);
    assert_int_equal (core_detach_child (root, 0, err, sizeof err), 0);
    assert_int_equal (core_stats (root).children_lost, 0);
    test_core_refuse (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1},
                      "lost");
    core_destroy (&root);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_ia_multi_serves_a_joined_child_only_once_attached),
        cmocka_unit_test (test_fcfs_serves_a_joined_child_only_once_attached),
        cmocka_unit_test (test_attach_refuses_a_taken_or_bad_slot),
        cmocka_unit_test (test_detach_waits_for_the_subtree_and_is_not_a_loss),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
