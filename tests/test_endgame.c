/*  test_endgame — the end of the bag (node/core_endgame.c, docs/policies.md
 *  "The end-game"), through real cores fed by hand: a root holds back a
 *  slow child near the end, copies the task left out there once idle,
 *  and records it once whichever copy finishes first, the child's copy
 *  finishing while the CANCEL is on its way included; a child gives
 *  back a cancelled task it holds (whole, or once it has arrived), lets
 *  one it computes finish, ignores a CANCEL for a task it no longer has;
 *  the refusals; EMPTY waits until a child has asked; a root leaves a
 *  waiting place empty when a child would otherwise go without.
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

/*  The root (C = 1 unit/s, tasks of 1 unit) and one child computing
 *  0.7 units/s over a fast link: the tree drains 1.7 tasks/s. */
static const core_child_info_t slow_child[1] = {
    {.compute_rate = 0.7, .link_mbps = 1000, .link_idle_mbps = 1000, .link_bps = 1e9,
     .node = 1},
};

static core_cfg_t
root_cfg (uint64_t tasks, int endgame)
{
    return (core_cfg_t){
        .self = 0, .nnodes = 2, .is_root = 1, .task_count = tasks, .task_units = 1,
        .task_mb = 0.001, .task_bytes = 1000, .chunk_bytes = 1000, .window = 2,
        .buffer = 3, .batch_max = 1, .batch_delay = 0, .meter_window = 0.1,
        .policy = policy_find ("fcfs"),
        .parent = {.compute_rate = 1, .task_mb = 0.001, .task_units = 1, .is_root = 1},
        .nchildren = 1, .children = slow_child,
        .endgame = {.on = endgame, .time_scale = 1, .that = 1.7},
    };
}

static int
count (const core_action_t *a, int n, core_action_type_t type)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += a[i].type == type;
    return k;
}

/*  Three tasks: the root computes task 0; the child asks and gets task 1
 *  (it finishes it in 1.43 s, the root behind one more task in 1.59 s);
 *  task 2 it does not get (behind task 1, 2.86 s; the root alone, 1 s):
 *  rule a. The root computes task 2, then, idle with the bag empty,
 *  copies task 1 (1.43 s there, 1 s here): rule b. Returns the root
 *  computing the copy at t = 2. */
static core_t *
root_copying (int endgame)
{
    core_cfg_t cfg = root_cfg (3, endgame);
    core_t *root = test_core_new (&cfg);
    int n;
    const core_action_t *a = test_core_feed (root, (core_event_t){.type = CORE_EV_START}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 0);
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 3}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->task, 1);
    /*  Single-port: the next transfer waits for the ack. */
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_ACK, .now = 0.01, .child = 0,
                                             .task = 1}, &n);
    const core_action_t *next = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    if (!endgame) {
        assert_non_null (next);
        assert_int_equal (next->task, 2);
        return root;
    }
    assert_null (next);
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_COMPUTED, .now = 1, .task = 0},
                        &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 2);
    assert_non_null (test_core_find (a, n, CORE_ACT_EMPTY));   /* the bag is out */
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_COMPUTED, .now = 2, .task = 2},
                        &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 1);   /* the copy */
    assert_int_equal (core_stats (root).copies, 1);
    return root;
}

static void
test_without_the_end_game_the_slow_child_gets_two (void **state)
{
    (void) state;
    core_t *root = root_copying (0);
    core_destroy (&root);
}

/*  The root's copy finishes first: recorded, and the child told; the
 *  child's copy, finished while the CANCEL was on its way, is dropped
 *  when its completion comes: one record, no duplicate, no refusal. */
static void
test_the_copy_that_wins_is_recorded_and_the_other_dropped (void **state)
{
    (void) state;
    core_t *root = root_copying (1);
    int n;
    const core_action_t *a = test_core_feed (
        root, (core_event_t){.type = CORE_EV_COMPUTED, .now = 3, .task = 1}, &n);
    const core_action_t *rec = test_core_find (a, n, CORE_ACT_RECORDED);
    assert_non_null (rec);
    assert_int_equal (rec->done[0].task, 1);
    assert_int_equal (rec->done[0].node, 0);
    assert_non_null (test_core_find (a, n, CORE_ACT_FINISHED));
    const core_action_t *cancel = test_core_find (a, n, CORE_ACT_CANCEL);
    assert_non_null (cancel);
    assert_int_equal (cancel->child, 0);
    assert_int_equal (cancel->task, 1);
    core_done_t late = {.task = 1, .node = 1};
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_DONE, .now = 3.1, .child = 0,
                                             .done = &late, .ndone = 1}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_RECORDED));
    core_stats_t st = core_stats (root);
    assert_int_equal (st.completed, 3);
    assert_int_equal (st.duplicates, 0);
    assert_int_equal (st.malformed, 0);
    assert_int_equal (st.copies_won, 1);
    assert_int_equal (st.cancelled, 1);
    assert_int_equal (st.wasted, 1);
    assert_int_equal (core_child_stats (root, 0).given, 0);
    core_destroy (&root);
}

/*  The child's copy finishes first: recorded as the child's; the root's,
 *  still computing, is dropped when it ends; nothing is cancelled. */
static void
test_the_childs_copy_that_wins_is_recorded_and_ours_dropped (void **state)
{
    (void) state;
    core_t *root = root_copying (1);
    int n;
    core_done_t first = {.task = 1, .node = 1};
    const core_action_t *a = test_core_feed (
        root, (core_event_t){.type = CORE_EV_DONE, .now = 2.5, .child = 0, .done = &first,
                             .ndone = 1}, &n);
    const core_action_t *rec = test_core_find (a, n, CORE_ACT_RECORDED);
    assert_non_null (rec);
    assert_int_equal (rec->done[0].node, 1);
    assert_non_null (test_core_find (a, n, CORE_ACT_FINISHED));
    assert_null (test_core_find (a, n, CORE_ACT_CANCEL));
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_COMPUTED, .now = 3, .task = 1},
                        &n);
    assert_null (test_core_find (a, n, CORE_ACT_RECORDED));
    core_stats_t st = core_stats (root);
    assert_int_equal (st.completed, 3);
    assert_int_equal (st.duplicates, 0);
    assert_int_equal (st.copies_won, 0);
    assert_int_equal (st.wasted, 1);
    core_destroy (&root);
}

/*  A leaf (node 1): computing task 0, holding 1, 2 and 3. */
static core_cfg_t
leaf_cfg (void)
{
    return (core_cfg_t){
        .self = 1, .nnodes = 2, .task_count = 10, .task_units = 1, .task_mb = 0.001,
        .task_bytes = 2000, .chunk_bytes = 1000, .window = 2, .buffer = 3, .batch_max = 1,
        .meter_window = 0.1, .policy = policy_find ("fcfs"),
        .parent = {.compute_rate = 0.7, .task_mb = 0.001, .task_units = 1},
        .endgame = {.on = 1, .time_scale = 1},
    };
}

/*  Task t arrives whole (two chunks) at the leaf. */
static const core_action_t *
arrive (core_t *leaf, uint64_t t, int chunks, int *n)
{
    const core_action_t *a = NULL;
    for (int i = 0; i < chunks; i++)
        a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CHUNK, .task = t, .units = 1,
                                                 .bytes = 2000, .index = (uint32_t) i,
                                                 .count = 2, .len = 1000}, n);
    return a;
}

static void
test_a_child_gives_back_what_it_holds_and_lets_the_rest_finish (void **state)
{
    (void) state;
    core_cfg_t cfg = leaf_cfg ();
    core_t *leaf = test_core_new (&cfg);
    int n;
    test_core_feed (leaf, (core_event_t){.type = CORE_EV_START}, &n);
    for (uint64_t t = 0; t < 4; t++)
        arrive (leaf, t, 2, &n);
    assert_int_equal (core_stats (leaf).held, 3);
    /*  Held: given back at once. */
    const core_action_t *a =
        test_core_feed (leaf, (core_event_t){.type = CORE_EV_CANCEL, .task = 2}, &n);
    const core_action_t *ret = test_core_find (a, n, CORE_ACT_RETURN);
    assert_non_null (ret);
    assert_int_equal (ret->ndone, 1);
    assert_int_equal (ret->done[0].task, 2);
    assert_int_equal (core_stats (leaf).held, 2);
    /*  Computing: it finishes, and its completion goes up as usual (the
     *  copier drops it). */
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CANCEL, .task = 0}, &n);
    assert_int_equal (n - count (a, n, CORE_ACT_REQUEST), 0);
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_REPORT)->done[0].task, 0);
    /*  Gone already (reported), or never here: nothing to do. */
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CANCEL, .task = 0}, &n);
    assert_int_equal (n, 0);
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CANCEL, .task = 7}, &n);
    assert_int_equal (n, 0);
    /*  Arriving: given back once whole, not before. */
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CHUNK, .task = 5, .units = 1,
                                             .bytes = 2000, .index = 0, .count = 2,
                                             .len = 1000}, &n);
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CANCEL, .task = 5}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_RETURN));
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_CHUNK, .task = 5, .units = 1,
                                             .bytes = 2000, .index = 1, .count = 2,
                                             .len = 1000}, &n);
    ret = test_core_find (a, n, CORE_ACT_RETURN);
    assert_non_null (ret);
    assert_int_equal (ret->done[0].task, 5);
    assert_int_equal (core_stats (leaf).returned, 2);
    assert_int_equal (core_stats (leaf).malformed, 0);
    core_destroy (&leaf);
}

static void
test_cancel_and_drained_are_refused_where_they_make_no_sense (void **state)
{
    (void) state;
    core_cfg_t lc = leaf_cfg (), rc = root_cfg (3, 1);
    core_t *leaf = test_core_new (&lc);
    test_core_refuse (leaf, (core_event_t){.type = CORE_EV_CANCEL, .task = 10}, "range");
    core_t *root = test_core_new (&rc);
    test_core_refuse (root, (core_event_t){.type = CORE_EV_CANCEL, .task = 1}, "parent");
    test_core_refuse (root, (core_event_t){.type = CORE_EV_EMPTY}, "parent");
    int n;
    test_core_feed (leaf, (core_event_t){.type = CORE_EV_EMPTY}, &n);
    test_core_feed (leaf, (core_event_t){.type = CORE_EV_EMPTY}, &n);
    core_destroy (&leaf);
    core_destroy (&root);
}

static core_task_info_t
one_unit_command (void *arg, uint64_t task)
{
    (void) arg;
    (void) task;
    return (core_task_info_t){.bytes = 1000, .units = 1};
}

/*  Commands, the root's one slot holding a command running and one
 *  waiting (depth 2), a child as fast as the root: of four tasks the root
 *  takes 0 and 1, the child gets 2, and then 3 too (it finishes it at
 *  2 s; the root, behind the one waiting, at 2 s as well): held back, the
 *  root would end at 3 s with the child idle from 1 s. */
static void
test_a_waiting_command_counts_ahead_of_a_kept_task (void **state)
{
    (void) state;
    static const core_child_info_t peer[1] = {
        {.compute_rate = 1, .link_mbps = 1000, .link_idle_mbps = 1000, .link_bps = 1e9,
         .node = 1},
    };
    core_cfg_t cfg = root_cfg (4, 1);
    cfg.children = peer;
    cfg.endgame.that = 2;
    cfg.command_tasks = 4;
    cfg.task_info = one_unit_command;
    cfg.slots = 1;
    cfg.depth = 2;
    core_t *root = test_core_new (&cfg);
    int n;
    const core_action_t *a = test_core_feed (root, (core_event_t){.type = CORE_EV_START}, &n);
    assert_int_equal (count (a, n, CORE_ACT_COMPUTE), 2);
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 5}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->task, 2);
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_ACK, .now = 0.01, .child = 0,
                                             .task = 2}, &n);
    const core_action_t *next = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_non_null (next);
    assert_int_equal (next->task, 3);
    core_destroy (&root);
}

/*  Two commands, a root with one slot of two places (depth 2) and a
 *  child as fast: the root runs one and leaves the other for the child
 *  rather than holding it behind its own (the bag holds no more tasks
 *  than the root has children), and rule a lets it go there (the root's
 *  slot is busy for a second: the child ends it first). With three tasks
 *  the root fills both places and the child gets the third. */
static void
test_a_waiting_place_is_left_when_a_child_would_go_without (void **state)
{
    (void) state;
    static const core_child_info_t peer[1] = {
        {.compute_rate = 1, .link_mbps = 1000, .link_idle_mbps = 1000, .link_bps = 1e9,
         .node = 1},
    };
    for (uint64_t tasks = 2; tasks <= 3; tasks++) {
        core_cfg_t cfg = root_cfg (tasks, 1);
        cfg.children = peer;
        cfg.command_tasks = tasks;
        cfg.task_info = one_unit_command;
        cfg.slots = 1;
        cfg.depth = 2;
        core_t *root = test_core_new (&cfg);
        int n;
        const core_action_t *a = test_core_feed (root, (core_event_t){.type = CORE_EV_START},
                                                 &n);
        assert_int_equal (count (a, n, CORE_ACT_COMPUTE), tasks == 2 ? 1 : 2);
        a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 3},
                            &n);
        const core_action_t *sent = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
        assert_non_null (sent);
        assert_int_equal (sent->task, tasks - 1);
        core_destroy (&root);
    }
}

/*  A bag that empties before the child has asked (one task, the root
 *  computes it): no EMPTY to the child yet, whose connection may not be
 *  up (a message to it would be taken for a lost child); it is told when
 *  it asks, and once. */
static void
test_a_child_is_told_empty_once_it_has_asked (void **state)
{
    (void) state;
    core_cfg_t cfg = root_cfg (1, 1);
    core_t *root = test_core_new (&cfg);
    int n;
    const core_action_t *a = test_core_feed (root, (core_event_t){.type = CORE_EV_START}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 0);
    assert_null (test_core_find (a, n, CORE_ACT_EMPTY));
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .now = 0.1, .child = 0,
                                             .n = 2}, &n);
    assert_int_equal (count (a, n, CORE_ACT_EMPTY), 1);
    assert_int_equal (test_core_find (a, n, CORE_ACT_EMPTY)->child, 0);
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .now = 0.2, .child = 0,
                                             .n = 1}, &n);
    assert_int_equal (count (a, n, CORE_ACT_EMPTY), 0);
    core_destroy (&root);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_without_the_end_game_the_slow_child_gets_two),
        cmocka_unit_test (test_a_waiting_command_counts_ahead_of_a_kept_task),
        cmocka_unit_test (test_the_copy_that_wins_is_recorded_and_the_other_dropped),
        cmocka_unit_test (test_the_childs_copy_that_wins_is_recorded_and_ours_dropped),
        cmocka_unit_test (test_a_child_gives_back_what_it_holds_and_lets_the_rest_finish),
        cmocka_unit_test (test_cancel_and_drained_are_refused_where_they_make_no_sense),
        cmocka_unit_test (test_a_child_is_told_empty_once_it_has_asked),
        cmocka_unit_test (test_a_waiting_place_is_left_when_a_child_would_go_without),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
