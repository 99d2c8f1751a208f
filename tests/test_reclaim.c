/*  test_reclaim — a parent takes back what a child holds and has not
 *  started (node/core_reclaim.c, docs/adapt.md "Reclaim"): the three
 *  events through real cores and the registered policy, the refusals,
 *  and a parent and a child wired through node/route.h that finish the
 *  bag with every task recorded once after a reclaim.
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
#include "node/route.h"
#include "overlay/config.h"
#include "overlay/util.h"
#include "policies/policy.h"
#include "tests/helpers.h"

static const core_child_info_t kids[2] = {
    {1, 10, 10, 0.01, 0.02, 0, 1}, {2, 10, 10, 0.01, 0.02, 0, 2},
};

static core_cfg_t
make_cfg (int is_root, int nchildren, uint64_t tasks)
{
    return (core_cfg_t){
        .self = is_root ? 0 : 1, .nnodes = 3, .is_root = is_root,
        .task_count = tasks, .task_units = 2, .task_mb = 1, .task_bytes = 1000,
        .chunk_bytes = 1000, .window = 2, .buffer = 3,
        .batch_max = 1, .batch_delay = 0, .meter_window = 0.1,
        .policy = policy_find ("fcfs"),
        .nchildren = nchildren, .children = kids,
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

/*  A leaf (node 1) that started, computes task 0 and holds 1, 2, 3:
 *  buffer 3, each task one chunk. */
static core_t *
busy_leaf (void)
{
    core_t *leaf = make_core (make_cfg (0, 0, 10));
    int n;
    test_core_feed (leaf, (core_event_t){.type = CORE_EV_START}, &n);
    for (uint64_t t = 0; t < 4; t++) {
        if (t == 3)   /* asked for one more once task 0 started */
            assert_int_equal (core_stats (leaf).requested, 4);
        test_core_feed (leaf, (core_event_t){.type = CORE_EV_CHUNK, .task = t, .units = 2,
                                   .bytes = 1000, .index = 0, .count = 1, .len = 1000},
              &n);
    }
    assert_int_equal (core_stats (leaf).computing, 1);
    assert_int_equal (core_stats (leaf).held, 3);
    return leaf;
}

static void
test_a_reclaimed_leaf_gives_back_its_newest_held_tasks (void **state)
{
    (void) state;
    core_t *leaf = busy_leaf ();
    int n;
    const core_action_t *a =
        test_core_feed (leaf, (core_event_t){.type = CORE_EV_RECLAIM, .n = 1}, &n);
    const core_action_t *ret = test_core_find (a, n, CORE_ACT_RETURN);
    assert_non_null (ret);
    assert_int_equal (ret->ndone, 2);
    assert_int_equal (ret->done[0].task, 3);   /* newest first */
    assert_int_equal (ret->done[1].task, 2);
    assert_int_equal (ret->done[0].node, 1);
    int released = 0;
    for (int i = 0; i < n; i++)
        released += a[i].type == CORE_ACT_RELEASE;
    assert_int_equal (released, 2);
    assert_null (test_core_find (a, n, CORE_ACT_REQUEST));   /* holds 1: enough */
    assert_int_equal (core_stats (leaf).held, 1);
    assert_int_equal (core_stats (leaf).returned, 2);
    /*  Its task done, it computes the one it kept and asks for one. */
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 1);
    assert_int_equal (test_core_find (a, n, CORE_ACT_REQUEST)->n, 1);
    /*  A reclaim to the configured buffer gives nothing back and asks
     *  for the rest. */
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_RECLAIM, .n = 3}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_RETURN));
    assert_int_equal (test_core_find (a, n, CORE_ACT_REQUEST)->n, 2);
    core_destroy (&leaf);
}

/*  A shrink's drain (docs/adapt.md, "Shrink"): RECLAIM 0 gives back
 *  every held task, and the leaf asks for nothing more, even once its
 *  running task is done. */
static void
test_a_drained_leaf_gives_back_all_and_asks_for_nothing (void **state)
{
    (void) state;
    core_t *leaf = busy_leaf ();
    int n;
    const core_action_t *a =
        test_core_feed (leaf, (core_event_t){.type = CORE_EV_RECLAIM, .n = 0}, &n);
    const core_action_t *ret = test_core_find (a, n, CORE_ACT_RETURN);
    assert_non_null (ret);
    assert_int_equal (ret->ndone, 3);
    assert_int_equal (core_stats (leaf).held, 0);
    a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    assert_null (test_core_find (a, n, CORE_ACT_REQUEST));
    assert_non_null (test_core_find (a, n, CORE_ACT_REPORT));
    core_destroy (&leaf);
}

static void
test_a_reclaim_forgets_the_asks_the_parent_dropped (void **state)
{
    (void) state;
    core_t *leaf = make_core (make_cfg (0, 0, 10));
    int n;
    test_core_feed (leaf, (core_event_t){.type = CORE_EV_START}, &n);   /* asks for 3 */
    test_core_refuse (leaf, (core_event_t){.type = CORE_EV_RECLAIM, .n = 1, .count = 4},
            "4 asks, 3 are pending");
    const core_action_t *a = test_core_feed (leaf, (core_event_t){.type = CORE_EV_RECLAIM,
                                                        .n = 2, .count = 3}, &n);
    /*  None pending, none held: it asks for its new buffer at once. */
    assert_int_equal (test_core_find (a, n, CORE_ACT_REQUEST)->n, 2);
    core_destroy (&leaf);
}

static void
test_bad_reclaims_are_refused_and_change_nothing (void **state)
{
    (void) state;
    core_t *leaf = busy_leaf ();
    test_core_refuse (leaf,
                      (core_event_t){.type = CORE_EV_RECLAIM, .n = CONFIG_MAX_BUFFER + 1},
                      "0 ..");
    assert_int_equal (core_stats (leaf).held, 3);
    test_core_refuse (leaf, (core_event_t){.type = CORE_EV_RETURNED, .child = 0},
                      "no child");
    core_destroy (&leaf);
    core_t *root = make_core (make_cfg (1, 2, 10));
    int n;
    test_core_feed (root, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_refuse (root, (core_event_t){.type = CORE_EV_RECLAIM, .n = 1}, "the root");
    test_core_refuse (root, (core_event_t){.type = CORE_EV_TAKE_BACK, .child = 2, .n = 1},
                      "slot");
    test_core_refuse (root, (core_event_t){.type = CORE_EV_TAKE_BACK, .child = 0,
                                            .n = CONFIG_MAX_BUFFER + 1}, "hold");
    core_done_t never = {.task = 5, .node = 1};
    test_core_refuse (
        root,
        (core_event_t){.type = CORE_EV_RETURNED, .child = 0, .done = &never, .ndone = 1},
        "never given");
    test_core_refuse (root, (core_event_t){.type = CORE_EV_RETURNED, .child = 0}, "empty");
    core_destroy (&root);
}

static void
test_the_parent_queues_what_comes_back_and_sends_it_again (void **state)
{
    (void) state;
    core_t *root = make_core (make_cfg (1, 2, 6));
    int n;
    test_core_feed (root, (core_event_t){.type = CORE_EV_START}, &n);
    /*  Child 0 asks for 3; the root starts one transfer (single-port). */
    const core_action_t *a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST,
                                                        .child = 0, .n = 3}, &n);
    const core_action_t *sent = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_non_null (sent);
    uint64_t given = sent->task;
    /*  Taken back while it is in flight: the two unserved asks are
     *  dropped, and the RECLAIM says so. */
    a = test_core_feed (
        root, (core_event_t){.type = CORE_EV_TAKE_BACK, .child = 0, .n = 1}, &n);
    const core_action_t *rc = test_core_find (a, n, CORE_ACT_RECLAIM);
    assert_non_null (rc);
    assert_int_equal (rc->child, 0);
    assert_int_equal (rc->n, 1);
    assert_int_equal (rc->count, 2);
    route_t r;
    assert_int_equal (route_action (rc, 0, &r), 0);
    assert_int_equal (r.to, ROUTE_CHILD);
    assert_int_equal (r.ev.type, CORE_EV_RECLAIM);
    assert_int_equal (r.ev.count, 2);
    /*  Its transfer ends, and nothing more goes to it. */
    a = test_core_feed (
        root, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = given}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_SEND_CHUNK));
    /*  It gives the task back: queued here, it goes to the next ask. */
    core_done_t back = {.task = given, .node = 1};
    a = test_core_feed (
        root,
        (core_event_t){.type = CORE_EV_RETURNED, .child = 0, .done = &back, .ndone = 1},
        &n);
    assert_int_equal (core_stats (root).reclaimed, 1);
    test_core_refuse (
        root,
        (core_event_t){.type = CORE_EV_RETURNED, .child = 0, .done = &back, .ndone = 1},
        "never given");
    a = test_core_feed (root, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1},
                        &n);
    sent = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_non_null (sent);
    assert_int_equal (sent->task, given);
    core_destroy (&root);
}

/*  A root and two leaves wired by node/route.h, messages in FIFO order per
 *  node; the root takes back from leaf 1 every `every` steps, alternating
 *  keeps of 1 and 3. Every task is recorded once, none twice. */
typedef struct {
    core_event_t ev;
    core_done_t done[8];
} msg_t;

typedef struct {
    core_t *core[3];
    msg_t *q[3];
    int head[3], len[3];
    int64_t engine[3];
    int *by;
    int finished;
} wire_t;

static void
wire_push (wire_t *w, int to, const core_event_t *ev)
{
    msg_t *m = &w->q[to][w->head[to] + w->len[to]++];
    m->ev = *ev;
    assert_true (ev->ndone <= 8);
    if (ev->ndone)
        memcpy (m->done, ev->done, ev->ndone * sizeof *ev->done);
}

static void
wire_route (wire_t *w, int at, const core_action_t *x)
{
    route_t r;
    assert_int_equal (route_action (x, at - 1, &r), 0);
    if (r.to == ROUTE_PARENT)
        wire_push (w, 0, &r.ev);
    else if (r.to == ROUTE_CHILD)
        wire_push (w, r.child + 1, &r.ev);
    else if (r.to == ROUTE_WORKER)
        w->engine[at] = (int64_t) x->task;
    else if (r.to == ROUTE_CONTROLLER && x->type == CORE_ACT_FINISHED)
        w->finished = 1;
    else if (r.to == ROUTE_CONTROLLER)
        for (uint32_t d = 0; d < x->ndone; d++)
            w->by[x->done[d].task]++;
}

static void
wire_step (wire_t *w, int at)
{
    msg_t m = w->q[at][w->head[at]++];
    w->len[at]--;
    m.ev.done = m.done;
    int n;
    const core_action_t *a = test_core_feed (w->core[at], m.ev, &n);
    for (int i = 0; i < n; i++)
        wire_route (w, at, &a[i]);
}

static void
test_a_tree_under_reclaims_records_every_task_once (void **state)
{
    (void) state;
    enum { TASKS = 300, QMAX = 200000 };
    for (unsigned seed = 1; seed <= 20; seed++) {
        wire_t w = {.by = xcalloc (TASKS, sizeof (int))};
        for (int i = 0; i < 3; i++) {
            core_cfg_t cfg = make_cfg (i == 0, i == 0 ? 2 : 0, TASKS);
            cfg.self = i;
            w.core[i] = make_core (cfg);
            w.q[i] = xcalloc (QMAX, sizeof (msg_t));
            w.engine[i] = -1;
            wire_push (&w, i, &(core_event_t){.type = CORE_EV_START});
        }
        srand (seed);
        uint64_t takes = 0;
        for (int step = 0; !w.finished; step++) {
            assert_true (step < QMAX / 2);
            if (step % 37 == 0)
                wire_push (&w, 0, &(core_event_t){.type = CORE_EV_TAKE_BACK, .child = 0,
                                                  .n = (takes++ % 2) ? 3 : 1});
            int at = rand () % 3;
            if (w.engine[at] >= 0 && rand () % 20 == 0) {
                core_event_t done = {.type = CORE_EV_COMPUTED, .task = w.engine[at]};
                w.engine[at] = -1;
                int n;
                const core_action_t *a = test_core_feed (w.core[at], done, &n);
                for (int i = 0; i < n; i++)
                    wire_route (&w, at, &a[i]);
            }
            else if (w.len[at] > 0)
                wire_step (&w, at);
        }
        for (int t = 0; t < TASKS; t++)
            if (w.by[t] != 1)
                fail_msg ("seed %u: task %d recorded %d times", seed, t, w.by[t]);
        assert_true (core_stats (w.core[0]).reclaimed > 0);
        assert_int_equal (core_stats (w.core[0]).reclaimed,
                          core_stats (w.core[1]).returned);
        /*  Computed once too: nothing given back was also computed. */
        assert_int_equal (core_stats (w.core[0]).duplicates, 0);
        uint64_t computed = 0;
        for (int i = 0; i < 3; i++)
            computed += core_stats (w.core[i]).computed;
        assert_int_equal (computed, TASKS);
        for (int i = 0; i < 3; i++) {
            assert_int_equal (core_stats (w.core[i]).malformed, 0);
            core_destroy (&w.core[i]);
            free (w.q[i]);
        }
        free (w.by);
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_reclaimed_leaf_gives_back_its_newest_held_tasks),
        cmocka_unit_test (test_a_reclaim_forgets_the_asks_the_parent_dropped),
        cmocka_unit_test (test_bad_reclaims_are_refused_and_change_nothing),
        cmocka_unit_test (test_a_drained_leaf_gives_back_all_and_asks_for_nothing),
        cmocka_unit_test (test_the_parent_queues_what_comes_back_and_sends_it_again),
        cmocka_unit_test (test_a_tree_under_reclaims_records_every_task_once),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
