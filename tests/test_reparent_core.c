/*  test_reparent_core — a node that lost its parent and is moved under
 *  another (node/core_reparent.c, docs/adapt.md "Re-parent"): what it had
 *  from the old parent is dropped or made stale, a stale task's
 *  completion, result, return or loss is dropped and never goes up, it
 *  asks for nothing while orphaned and for its whole buffer once
 *  re-parented, and the refusals.
 *
 *  The node under test is node 1 of a 4-node tree, children nodes 2 and
 *  3 in slots 0 and 1; every event it sends up is watched: no REPORT,
 *  SEND_RESULT or RETURN may name a stale task.
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

static const core_child_info_t kids[2] = {
    {1, 10, 10, 0.01, 0.02, 0, 2}, {2, 10, 10, 0.01, 0.02, 0, 3},
};

static core_cfg_t
make_cfg (int is_root)
{
    return (core_cfg_t){
        .self = is_root ? 0 : 1, .nnodes = 4, .is_root = is_root,
        .task_count = 20, .task_units = 2, .task_mb = 1, .task_bytes = 1000,
        .chunk_bytes = 1000, .window = 2, .buffer = 3,
        .batch_max = 1, .batch_delay = 0, .meter_window = 0.1,
        .policy = policy_find ("fcfs"), .nchildren = 2, .children = kids,
    };
}

static core_t *
make_core (core_cfg_t cfg)
{
    char err[TF_ERRLEN];
    core_t *core = core_new (&cfg, err, sizeof err);
    if (!core)
        fail_msg ("core_new: %s", err);
    return core;
}

/*  The tasks this node sent up (REPORT, SEND_RESULT, RETURN) since the
 *  test began. */
static uint64_t up[256];
static int nup;

/*  Feed ev and note what went up. */
static const core_action_t *
feed (core_t *core, core_event_t ev, int *n)
{
    const core_action_t *a = test_core_feed (core, ev, n);
    for (int i = 0; i < *n; i++) {
        if (a[i].type == CORE_ACT_SEND_RESULT && nup < 256)
            up[nup++] = a[i].task;
        if (a[i].type == CORE_ACT_REPORT || a[i].type == CORE_ACT_RETURN)
            for (uint32_t k = 0; k < a[i].ndone && nup < 256; k++)
                up[nup++] = a[i].done[k].task;
    }
    return a;
}

static int
went_up (uint64_t task)
{
    for (int i = 0; i < nup; i++)
        if (up[i] == task)
            return 1;
    return 0;
}

/*  Actions of type naming task in a[0..n). */
static int
count (const core_action_t *a, int n, core_action_type_t type, uint64_t task)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += a[i].type == type && a[i].task == task;
    return k;
}

/*  A synthetic task's chunk from the parent (tasks of three chunks when
 *  the config says 3000 bytes). */
static core_event_t
chunk (uint64_t task, uint32_t index, uint32_t nchunks)
{
    return (core_event_t){.type = CORE_EV_CHUNK, .task = task, .units = 2,
                          .bytes = 1000ull * nchunks, .index = index,
                          .count = nchunks, .len = 1000};
}

/*  A started node whose children asked for what is given below, then
 *  tasks 0 .. ntasks-1 of one chunk: 0 computes, 1 goes to child 0, the
 *  rest are held (the port is busy). */
static core_t *
busy_node (core_cfg_t cfg, uint32_t ask0, uint32_t ask1, uint64_t ntasks)
{
    nup = 0;
    core_t *core = make_core (cfg);
    int n;
    feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    if (ask0)
        feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = ask0}, &n);
    if (ask1)
        feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = ask1}, &n);
    for (uint64_t t = 0; t < ntasks; t++)
        feed (core, chunk (t, 0, 1), &n);
    return core;
}

static void
test_held_computing_and_given_tasks_are_stale_and_dropped (void **state)
{
    (void) state;
    core_t *mid = busy_node (make_cfg (0), 2, 0, 4);
    assert_int_equal (core_stats (mid).computing, 1);        /* task 0 */
    assert_int_equal (core_child_stats (mid, 0).given, 1);   /* task 1 */
    assert_int_equal (core_stats (mid).held, 2);             /* tasks 2, 3 */
    int n;
    const core_action_t *a = feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE, 2), 1);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE, 3), 1);
    assert_null (test_core_find (a, n, CORE_ACT_REQUEST));
    assert_int_equal (core_stats (mid).held, 0);
    assert_int_equal (core_stats (mid).stale, 4);
    /*  The one the parent was still to send will not come. */
    test_core_refuse (mid, chunk (4, 0, 1), "unasked");
    /*  Task 0 finishes: its slot is free, its completion dropped; nothing
     *  is asked while orphaned. */
    a = feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE, 0), 1);
    assert_null (test_core_find (a, n, CORE_ACT_REQUEST));
    assert_int_equal (core_stats (mid).computing, 0);
    /*  Child 0's transfer ends and its completion comes: dropped. */
    feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1}, &n);
    core_done_t d1 = {.task = 1, .node = 2};
    feed (mid, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = &d1, .ndone = 1},
          &n);
    assert_int_equal (core_child_stats (mid, 0).given, 0);
    assert_int_equal (core_stats (mid).stale_dropped, 2);
    for (uint64_t t = 0; t < 4; t++)
        assert_false (went_up (t));
    /*  Re-parented: it asks for its whole buffer, and fresh tasks go on
     *  as usual, child 0's ask kept and served. */
    a = feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_REQUEST)->n, 3);
    a = feed (mid, chunk (7, 0, 1), &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 7);
    a = feed (mid, chunk (8, 0, 1), &n);
    assert_int_equal (count (a, n, CORE_ACT_SEND_CHUNK, 8), 1);
    a = feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 7}, &n);
    assert_true (went_up (7));
    core_done_t d8 = {.task = 8, .node = 2};
    feed (mid, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = &d8, .ndone = 1},
          &n);
    assert_true (went_up (8));
    assert_int_equal (core_stats (mid).stale_dropped, 2);
    core_destroy (&mid);
}

static void
test_a_stale_return_and_a_lost_childs_stale_tasks_are_not_queued (void **state)
{
    (void) state;
    core_t *mid = busy_node (make_cfg (0), 1, 1, 3);
    int n;
    /*  Task 1 went to child 0; at its ack, task 2 goes to child 1. */
    feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 1, .task = 2}, &n);
    assert_int_equal (core_child_stats (mid, 1).given, 1);
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    assert_int_equal (core_stats (mid).stale, 3);
    core_done_t back = {.task = 1, .node = 2};
    feed (mid, (core_event_t){.type = CORE_EV_RETURNED, .child = 0, .done = &back,
                              .ndone = 1}, &n);
    assert_int_equal (core_stats (mid).held, 0);
    assert_int_equal (core_stats (mid).reclaimed, 0);
    feed (mid, (core_event_t){.type = CORE_EV_LOST, .child = 1}, &n);
    assert_int_equal (core_stats (mid).held, 0);
    assert_int_equal (core_stats (mid).requeued, 0);
    feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_int_equal (core_stats (mid).stale_dropped, 3);
    /*  Once re-parented, task 1 and 2 are not held: nothing to compute or
     *  send until the new parent's tasks come. */
    const core_action_t *a = feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    assert_int_equal (test_core_find (a, n, CORE_ACT_REQUEST)->n, 3);
    for (uint64_t t = 0; t < 3; t++)
        assert_false (went_up (t));
    core_destroy (&mid);
}

/*  An unsent completion batch is dropped: the root queued them again. */
static void
test_the_unsent_completion_batch_is_dropped (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (0);
    cfg.batch_max = 5;
    cfg.batch_delay = 10;
    core_t *mid = busy_node (cfg, 0, 0, 1);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0, .now = 1}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED, .now = 2}, &n);
    assert_true (core_next_deadline (mid, 2) < 0);
    feed (mid, (core_event_t){.type = CORE_EV_TICK, .now = 20}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT, .now = 21}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_TICK, .now = 40}, &n);
    assert_false (went_up (0));
    core_destroy (&mid);
}

/*  A task relayed to a child as it arrives (cut-through) when the parent
 *  is lost: its partial payload is released, its remaining chunks go to
 *  the child, and the child's completion is dropped. */
static void
test_a_half_arrived_relay_completes_and_is_dropped (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (0);
    cfg.task_bytes = 3000;
    nup = 0;
    core_t *mid = make_core (cfg);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_START}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    for (uint32_t i = 0; i < 3; i++)
        feed (mid, chunk (0, i, 3), &n);   /* task 0 computes */
    const core_action_t *a = feed (mid, chunk (1, 0, 3), &n);
    assert_int_equal (count (a, n, CORE_ACT_SEND_CHUNK, 1), 1);   /* chunk 0 */
    a = feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE, 1), 1);
    assert_int_equal (count (a, n, CORE_ACT_SEND_CHUNK, 1), 1);   /* chunk 1 */
    assert_int_equal (core_stats (mid).stale, 2);
    test_core_refuse (mid, chunk (1, 1, 3), "starts at chunk 1");
    a = feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->index, 2);
    feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1, .index = 1}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1, .index = 2}, &n);
    assert_int_equal (core_child_stats (mid, 0).tasks_sent, 1);
    core_done_t d = {.task = 1, .node = 2};
    feed (mid, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = &d, .ndone = 1},
          &n);
    feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_false (went_up (0));
    assert_false (went_up (1));
    assert_int_equal (core_stats (mid).stale_dropped, 2);
    core_destroy (&mid);
}

/*  Commands, two slots: task 0 computes here, task 1 finished before the
 *  parent was lost and its result stream is half sent, task 2 went to
 *  child 0. */
static core_t *
command_node (void)
{
    core_cfg_t cfg = make_cfg (0);
    cfg.command_tasks = 10;
    cfg.slots = 2;
    nup = 0;
    core_t *mid = make_core (cfg);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_START}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_REQUEST,
                              .child = 0, .n = 1}, &n);
    for (uint64_t t = 0; t < 3; t++) {
        core_event_t ev = {.type = CORE_EV_CHUNK, .task = t, .units = 1, .bytes = 500,
                           .count = 1, .len = 500, .kind = CORE_KIND_COMMAND};
        feed (mid, ev, &n);
    }
    feed (mid, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 2}, &n);
    const core_action_t *a =
        feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 1, .bytes = 3000}, &n);
    assert_int_equal (count (a, n, CORE_ACT_SEND_RESULT, 1), 2);   /* the window */
    assert_int_equal (core_child_stats (mid, 0).given, 1);
    assert_int_equal (core_stats (mid).computing, 1);
    a = feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE_RESULT, 1), 1);
    assert_int_equal (core_stats (mid).stale, 2);
    test_core_refuse (mid, (core_event_t){.type = CORE_EV_RESULT_ACK, .task = 1},
                      "none such");
    return mid;
}

static void
test_a_stale_result_from_a_child_is_acked_and_dropped (void **state)
{
    (void) state;
    core_t *mid = command_node ();
    int n;
    core_event_t r = {.type = CORE_EV_RESULT, .child = 0, .task = 2, .node = 2,
                      .bytes = 1500, .index = 0, .count = 2, .len = 1000};
    const core_action_t *a = feed (mid, r, &n);
    assert_int_equal (count (a, n, CORE_ACT_ACK_RESULT, 2), 1);
    r.index = 1;
    r.len = 500;
    a = feed (mid, r, &n);
    assert_int_equal (count (a, n, CORE_ACT_ACK_RESULT, 2), 1);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE, 2), 1);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE_RESULT, 2), 1);
    assert_null (test_core_find (a, n, CORE_ACT_SEND_RESULT));
    assert_int_equal (core_child_stats (mid, 0).given, 0);
    assert_int_equal (core_stats (mid).stale_dropped, 1);
    assert_false (went_up (2));
    core_destroy (&mid);
}

static void
test_a_stale_command_computed_here_frees_its_result (void **state)
{
    (void) state;
    core_t *mid = command_node ();
    int n;
    const core_action_t *a =
        feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0, .bytes = 700}, &n);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE, 0), 1);
    assert_int_equal (count (a, n, CORE_ACT_RELEASE_RESULT, 0), 1);
    assert_null (test_core_find (a, n, CORE_ACT_SEND_RESULT));
    assert_int_equal (core_stats (mid).computing, 0);
    assert_int_equal (core_stats (mid).stale_dropped, 1);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    assert_false (went_up (0));
    core_destroy (&mid);
}

/*  The rule for a fresh copy of a stale id (node/core_reparent.c): the
 *  first copy to end goes up, the other is dropped. */
static void
test_a_fresh_copy_of_a_stale_task_goes_up_once (void **state)
{
    (void) state;
    core_t *mid = busy_node (make_cfg (0), 0, 0, 1);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    feed (mid, chunk (0, 0, 1), &n);   /* held: the engine runs the old one */
    const core_action_t *a =
        feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_true (went_up (0));
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 0);
    nup = 0;
    feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_false (went_up (0));
    assert_int_equal (core_stats (mid).stale_dropped, 1);
    core_destroy (&mid);
}

/*  A fresh copy given back to the new parent (RECLAIM) does not end
 *  here: the stale copy's end is still dropped. */
static void
test_a_fresh_copy_given_back_leaves_the_stale_one_stale (void **state)
{
    (void) state;
    core_t *mid = busy_node (make_cfg (0), 0, 0, 1);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    feed (mid, chunk (0, 0, 1), &n);
    feed (mid, (core_event_t){.type = CORE_EV_RECLAIM, .n = 0, .count = 2}, &n);
    assert_int_equal (core_stats (mid).held, 0);
    nup = 0;
    feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_false (went_up (0));
    assert_int_equal (core_stats (mid).stale_dropped, 1);
    core_destroy (&mid);
}

/*  Lost twice: the second loss counts only what was not stale yet. */
static void
test_a_second_loss_counts_only_the_new_stale_tasks (void **state)
{
    (void) state;
    core_t *mid = busy_node (make_cfg (0), 0, 0, 2);   /* 0 computes, 1 held */
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    assert_int_equal (core_stats (mid).stale, 2);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    feed (mid, chunk (5, 0, 1), &n);
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    assert_int_equal (core_stats (mid).stale, 3);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_false (went_up (0));
    assert_int_equal (core_stats (mid).stale_dropped, 1);
    core_destroy (&mid);
}

static void
test_orphaned_and_reparent_out_of_turn_are_refused (void **state)
{
    (void) state;
    core_t *root = make_core (make_cfg (1));
    test_core_refuse (root, (core_event_t){.type = CORE_EV_ORPHANED}, "the root");
    core_destroy (&root);
    core_t *mid = busy_node (make_cfg (0), 0, 0, 2);
    test_core_refuse (mid, (core_event_t){.type = CORE_EV_REPARENT}, "not orphaned");
    assert_int_equal (core_stats (mid).held, 1);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    test_core_refuse (mid, (core_event_t){.type = CORE_EV_ORPHANED}, "already");
    assert_int_equal (core_stats (mid).stale, 2);
    feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    test_core_refuse (mid, (core_event_t){.type = CORE_EV_REPARENT}, "not orphaned");
    core_destroy (&mid);
}

/*  A buffer a RECLAIM lowered is the configured one again once
 *  re-parented. */
static void
test_a_reclaimed_buffer_is_restored (void **state)
{
    (void) state;
    core_t *mid = busy_node (make_cfg (0), 0, 0, 1);
    int n;
    feed (mid, (core_event_t){.type = CORE_EV_RECLAIM, .n = 1, .count = 2}, &n);
    feed (mid, (core_event_t){.type = CORE_EV_ORPHANED}, &n);
    const core_action_t *a = feed (mid, (core_event_t){.type = CORE_EV_REPARENT}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_REQUEST)->n, 3);
    core_destroy (&mid);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_held_computing_and_given_tasks_are_stale_and_dropped),
        cmocka_unit_test (test_a_stale_return_and_a_lost_childs_stale_tasks_are_not_queued),
        cmocka_unit_test (test_the_unsent_completion_batch_is_dropped),
        cmocka_unit_test (test_a_half_arrived_relay_completes_and_is_dropped),
        cmocka_unit_test (test_a_stale_result_from_a_child_is_acked_and_dropped),
        cmocka_unit_test (test_a_stale_command_computed_here_frees_its_result),
        cmocka_unit_test (test_a_fresh_copy_of_a_stale_task_goes_up_once),
        cmocka_unit_test (test_a_fresh_copy_given_back_leaves_the_stale_one_stale),
        cmocka_unit_test (test_a_second_loss_counts_only_the_new_stale_tasks),
        cmocka_unit_test (test_orphaned_and_reparent_out_of_turn_are_refused),
        cmocka_unit_test (test_a_reclaimed_buffer_is_restored),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
