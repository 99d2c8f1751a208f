/*  test_route — a core's actions to their destinations' events: each
 *  action kind goes where the protocol says and becomes the event the
 *  destination's core expects, field by field; the event borrows from
 *  the action; a type out of range is refused; and a real leaf's first
 *  REQUEST, routed, is accepted by a real root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "node/route.h"
#include "overlay/util.h"

static route_t
routed (core_action_t a, int slot)
{
    route_t r;
    memset (&r, 0x5a, sizeof r);   /* every field must be written */
    assert_int_equal (route_action (&a, slot, &r), 0);
    return r;
}

static void
test_request_ack_and_report_go_up_from_the_slot (void **state)
{
    (void) state;
    route_t r = routed ((core_action_t){.type = CORE_ACT_REQUEST, .n = 7}, 3);
    assert_int_equal (r.to, ROUTE_PARENT);
    assert_int_equal (r.ev.type, CORE_EV_REQUEST);
    assert_int_equal (r.ev.child, 3);
    assert_int_equal (r.ev.n, 7);
    assert_true (r.ev.now == 0);

    r = routed ((core_action_t){.type = CORE_ACT_ACK, .task = 41, .index = 5}, 2);
    assert_int_equal (r.to, ROUTE_PARENT);
    assert_int_equal (r.ev.type, CORE_EV_ACK);
    assert_int_equal (r.ev.child, 2);
    assert_int_equal (r.ev.task, 41);
    assert_int_equal (r.ev.index, 5);

    core_done_t done[2] = {{.task = 1, .node = 4}, {.task = 9, .node = 5}};
    core_action_t rep = {.type = CORE_ACT_REPORT, .done = done, .ndone = 2};
    r = routed (rep, 1);
    assert_int_equal (r.to, ROUTE_PARENT);
    assert_int_equal (r.ev.type, CORE_EV_DONE);
    assert_int_equal (r.ev.child, 1);
    assert_int_equal (r.ev.ndone, 2);
    assert_ptr_equal (r.ev.done, done);   /* borrowed */
}

static void
test_a_result_chunk_goes_up_whole (void **state)
{
    (void) state;
    route_t r = routed ((core_action_t){.type = CORE_ACT_SEND_RESULT, .task = 12,
                                        .node = 6, .failed = 1, .bytes = 5000,
                                        .index = 2, .count = 3, .offset = 4096,
                                        .len = 904},
                        4);
    assert_int_equal (r.to, ROUTE_PARENT);
    assert_int_equal (r.ev.type, CORE_EV_RESULT);
    assert_int_equal (r.ev.child, 4);
    assert_int_equal (r.ev.task, 12);
    assert_int_equal (r.ev.node, 6);
    assert_int_equal (r.ev.failed, 1);
    assert_int_equal (r.ev.bytes, 5000);
    assert_int_equal (r.ev.index, 2);
    assert_int_equal (r.ev.count, 3);
    assert_int_equal (r.ev.len, 904);
}

static void
test_chunks_and_result_acks_go_down_to_their_child (void **state)
{
    (void) state;
    core_action_t a = {.type = CORE_ACT_SEND_CHUNK, .child = 2, .task = 8, .units = 1.5,
                       .bytes = 10000, .index = 1, .count = 3, .offset = 4096, .len = 4096,
                       .kind = CORE_KIND_COMMAND, .avoid = {3, 7}, .navoid = 2};
    route_t r;
    assert_int_equal (route_action (&a, 9, &r), 0);
    assert_int_equal (r.to, ROUTE_CHILD);
    assert_int_equal (r.child, 2);
    assert_int_equal (r.ev.type, CORE_EV_CHUNK);
    assert_int_equal (r.ev.child, 0);   /* a child hears its one parent */
    assert_int_equal (r.ev.task, 8);
    assert_true (r.ev.units == 1.5);
    assert_int_equal (r.ev.bytes, 10000);
    assert_int_equal (r.ev.index, 1);
    assert_int_equal (r.ev.count, 3);
    assert_int_equal (r.ev.len, 4096);
    assert_int_equal (r.ev.kind, CORE_KIND_COMMAND);
    assert_int_equal (r.ev.navoid, 2);
    assert_ptr_equal (r.ev.avoid, a.avoid);   /* borrowed */

    a.navoid = 0;
    assert_int_equal (route_action (&a, 9, &r), 0);
    assert_null (r.ev.avoid);

    r = routed ((core_action_t){.type = CORE_ACT_ACK_RESULT, .child = 1, .task = 3,
                                .index = 4}, 0);
    assert_int_equal (r.to, ROUTE_CHILD);
    assert_int_equal (r.child, 1);
    assert_int_equal (r.ev.type, CORE_EV_RESULT_ACK);
    assert_int_equal (r.ev.task, 3);
    assert_int_equal (r.ev.index, 4);
}

static void
test_compute_goes_to_the_worker_as_its_completion (void **state)
{
    (void) state;
    route_t r = routed ((core_action_t){.type = CORE_ACT_COMPUTE, .task = 17, .units = 2,
                                        .kind = CORE_KIND_COMMAND}, 1);
    assert_int_equal (r.to, ROUTE_WORKER);
    assert_int_equal (r.ev.type, CORE_EV_COMPUTED);
    assert_int_equal (r.ev.task, 17);
    assert_int_equal (r.ev.bytes, 0);
    assert_int_equal (r.ev.failed, 0);
}

static void
test_the_rest_stays_home_or_goes_to_the_controller (void **state)
{
    (void) state;
    static const core_action_type_t home[] = {CORE_ACT_RELEASE, CORE_ACT_RELEASE_RESULT,
                                              CORE_ACT_DROP_RESULT, CORE_ACT_RETRY};
    for (size_t i = 0; i < sizeof home / sizeof *home; i++) {
        route_t r = routed ((core_action_t){.type = home[i], .task = 5}, 1);
        assert_int_equal (r.to, ROUTE_SELF);
        assert_int_equal (r.ev.type, 0);
        assert_int_equal (r.ev.task, 0);
    }
    route_t r = routed ((core_action_t){.type = CORE_ACT_RECORDED, .ndone = 1}, 1);
    assert_int_equal (r.to, ROUTE_CONTROLLER);
    r = routed ((core_action_t){.type = CORE_ACT_FINISHED}, 1);
    assert_int_equal (r.to, ROUTE_CONTROLLER);
    assert_int_equal (r.ev.ndone, 0);
}

/*  The end-game's CANCEL and the bag's end go down to the child's slot. */
static void
test_cancel_and_empty_go_down_to_the_child (void **state)
{
    (void) state;
    route_t r = routed ((core_action_t){.type = CORE_ACT_CANCEL, .child = 4, .task = 77}, 1);
    assert_int_equal (r.to, ROUTE_CHILD);
    assert_int_equal (r.child, 4);
    assert_int_equal (r.ev.type, CORE_EV_CANCEL);
    assert_int_equal (r.ev.task, 77);
    r = routed ((core_action_t){.type = CORE_ACT_EMPTY, .child = 2}, 1);
    assert_int_equal (r.to, ROUTE_CHILD);
    assert_int_equal (r.child, 2);
    assert_int_equal (r.ev.type, CORE_EV_EMPTY);
    assert_string_equal (core_action_str (CORE_ACT_CANCEL), "CANCEL");
    assert_string_equal (core_event_str (CORE_EV_EMPTY), "EMPTY");
}

static void
test_every_action_type_has_a_route_and_names (void **state)
{
    (void) state;
    for (int t = 0; t < CORE_ACT_COUNT; t++) {
        route_t r;
        core_action_t a = {.type = (core_action_type_t) t};
        assert_int_equal (route_action (&a, 0, &r), 0);
        assert_string_not_equal (route_to_str (r.to), "?");
    }
    route_t r;
    core_action_t bad = {.type = CORE_ACT_COUNT};
    assert_int_equal (route_action (&bad, 0, &r), -1);
    assert_string_equal (route_to_str (ROUTE_COUNT), "?");
    assert_string_equal (route_to_str (ROUTE_WORKER), "worker");
}

/*  A leaf's START asks its parent for its buffer; routed, the root's
 *  core accepts the REQUEST and answers with a chunk for that very
 *  child, which the leaf's core accepts in turn. */
static void
test_routed_events_are_what_the_other_core_accepts (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    core_child_info_t kid = {1, 10, 10, 0, 0, 0, 1};
    core_cfg_t rc = {.self = 0, .nnodes = 2, .is_root = 1, .task_count = 4,
                     .task_units = 1, .task_mb = 1, .task_bytes = 100, .chunk_bytes = 64,
                     .window = 2, .buffer = 1, .batch_max = 4, .batch_delay = 0.1,
                     .policy = policy_find ("fcfs"), .meter_window = 0.1,
                     .nchildren = 1, .children = &kid};
    core_cfg_t lc = rc;
    lc.self = 1, lc.is_root = 0, lc.nchildren = 0, lc.children = NULL;
    core_t *root = core_new (&rc, err, sizeof err), *leaf = core_new (&lc, err, sizeof err);
    assert_non_null (root);
    assert_non_null (leaf);
    core_event_t start = {.type = CORE_EV_START};
    assert_int_equal (core_handle (root, &start, err, sizeof err), 0);
    assert_int_equal (core_handle (leaf, &start, err, sizeof err), 0);
    int n, sent = 0;
    const core_action_t *a = core_actions (leaf, &n);
    for (int i = 0; i < n; i++) {
        route_t r;
        assert_int_equal (route_action (&a[i], 0, &r), 0);
        if (r.to == ROUTE_PARENT)
            assert_int_equal (core_handle (root, &r.ev, err, sizeof err), 0);
    }
    a = core_actions (root, &n);
    for (int i = 0; i < n; i++) {
        route_t r;
        assert_int_equal (route_action (&a[i], 0, &r), 0);
        if (r.to == ROUTE_CHILD) {
            assert_int_equal (r.child, 0);
            assert_int_equal (core_handle (leaf, &r.ev, err, sizeof err), 0);
            sent++;
        }
    }
    assert_true (sent > 0);
    core_destroy (&root);
    core_destroy (&leaf);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_request_ack_and_report_go_up_from_the_slot),
        cmocka_unit_test (test_a_result_chunk_goes_up_whole),
        cmocka_unit_test (test_chunks_and_result_acks_go_down_to_their_child),
        cmocka_unit_test (test_compute_goes_to_the_worker_as_its_completion),
        cmocka_unit_test (test_the_rest_stays_home_or_goes_to_the_controller),
        cmocka_unit_test (test_cancel_and_empty_go_down_to_the_child),
        cmocka_unit_test (test_every_action_type_has_a_route_and_names),
        cmocka_unit_test (test_routed_events_are_what_the_other_core_accepts),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
