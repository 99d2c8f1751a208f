/*  test_core — drives the node's decision core event by event, without
 *  sockets: the protocol a node implements, its refusals of bad input, and
 *  a small tree wired by an in-memory network that must complete every
 *  task exactly once under shuffled delivery orders.
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
#include "node/route.h"
#include "overlay/config.h"
#include "overlay/util.h"
#include "tests/helpers.h"

static const core_child_info_t kids[4] = {
    {1, 10, 10, 0.01, 0.02, 0}, {2, 10, 10, 0.01, 0.02, 0},
    {3, 10, 10, 0.01, 0.02, 0}, {4, 10, 10, 0.01, 0.02, 0},
};

static core_cfg_t
make_cfg (int is_root, int nchildren, uint64_t tasks)
{
    return (core_cfg_t){
        .self = is_root ? 0 : 1, .nnodes = 8, .is_root = is_root,
        .task_count = tasks, .task_units = 2, .task_mb = 1, .task_bytes = 1000,
        .chunk_bytes = 400, .window = 2, .buffer = 3,
        .batch_max = 3, .batch_delay = 0.05, .meter_window = 0.1,
        .policy = policy_find ("fcfs"),
        .nchildren = nchildren, .children = kids,
    };
}

static core_t *
make_core (core_cfg_t cfg)
{
    char err[TF_ERRLEN];
    core_t *core = core_new (&cfg, err, sizeof err);
    assert_non_null (core);
    return core;
}

static int
count_type (const core_action_t *a, int n, core_action_type_t type)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += a[i].type == type;
    return k;
}

static core_event_t
chunk_ev (uint64_t task, uint32_t index, uint32_t count, uint64_t len)
{
    return (core_event_t){.type = CORE_EV_CHUNK, .task = task, .units = 2,
                          .bytes = 1000, .index = index, .count = count, .len = len};
}

static void
test_root_alone_computes_every_task_once (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (1, 0, 4));
    int n;
    const core_action_t *a =
        test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    assert_int_equal (n, 1);
    assert_int_equal (a[0].type, CORE_ACT_COMPUTE);
    assert_int_equal (a[0].task, 0);
    for (uint64_t t = 0; t < 4; t++) {
        a = test_core_feed (core, (core_event_t){.type = CORE_EV_COMPUTED, .task = t}, &n);
        if (t < 3) {
            assert_non_null (test_core_find (a, n, CORE_ACT_COMPUTE));
            assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, t + 1);
            assert_null (test_core_find (a, n, CORE_ACT_FINISHED));
        }
        else {
            assert_int_equal (count_type (a, n, CORE_ACT_FINISHED), 1);
            assert_int_equal (count_type (a, n, CORE_ACT_COMPUTE), 0);
            /*  The last batch goes before FINISHED, in the same list. */
            assert_int_equal (count_type (a, n, CORE_ACT_RECORDED), 1);
            assert_true (test_core_find (a, n, CORE_ACT_RECORDED)
                         < test_core_find (a, n, CORE_ACT_FINISHED));
        }
    }
    for (int t = 0; t < 4; t++)
        assert_true (core_is_done (core, t));
    assert_false (core_is_done (core, 4));
    assert_int_equal (core_stats (core).computed, 4);
    assert_int_equal (core_stats (core).completed, 4);
    core_destroy (&core);
    assert_null (core);
}

static void
test_leaf_asks_for_its_buffer_at_start_and_not_again (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (0, 0, 100));
    int n;
    const core_action_t *a =
        test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    assert_int_equal (n, 1);
    assert_int_equal (a[0].type, CORE_ACT_REQUEST);
    assert_int_equal (a[0].n, 3);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 1}, &n);
    assert_int_equal (n, 0);
    core_destroy (&core);
}

static void
test_leaf_acks_every_chunk_then_computes_and_refills (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (0, 0, 100));
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    const core_action_t *a = test_core_feed (core, chunk_ev (7, 0, 3, 400), &n);
    assert_int_equal (n, 1);
    assert_int_equal (a[0].type, CORE_ACT_ACK);
    assert_int_equal (a[0].task, 7);
    assert_int_equal (a[0].index, 0);
    a = test_core_feed (core, chunk_ev (7, 1, 3, 400), &n);
    assert_int_equal (n, 1);
    a = test_core_feed (core, chunk_ev (7, 2, 3, 200), &n);
    assert_int_equal (count_type (a, n, CORE_ACT_ACK), 1);
    const core_action_t *c = test_core_find (a, n, CORE_ACT_COMPUTE);
    assert_non_null (c);
    assert_int_equal (c->task, 7);
    assert_true (c->units == 2.0);
    /* held 0 + pending 2 < buffer 3: ask for one more */
    const core_action_t *r = test_core_find (a, n, CORE_ACT_REQUEST);
    assert_non_null (r);
    assert_int_equal (r->n, 1);
    core_stats_t s = core_stats (core);
    assert_int_equal (s.received, 1);
    assert_int_equal (s.bytes_in, 1000);
    assert_int_equal (s.requested, 4);
    core_destroy (&core);
}

static void
test_leaf_refuses_bad_chunks_and_keeps_its_state (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (0, 0, 100));
    int n;
    test_core_refuse (core, chunk_ev (1, 0, 3, 400), "unasked");
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_refuse (core, chunk_ev (1, 1, 3, 400), "starts at chunk 1");
    test_core_refuse (core, chunk_ev (100, 0, 3, 400), "the bag has 100");
    test_core_refuse (core, chunk_ev (1, 0, 1, 400), "the task has 3 chunks");
    test_core_refuse (core, chunk_ev (1, 0, 3, 1400), "expected 400");
    test_core_feed (core, chunk_ev (1, 0, 3, 400), &n);
    test_core_refuse (core, chunk_ev (2, 0, 3, 400), "while expecting chunk 1/3 of task 1");
    test_core_refuse (core, chunk_ev (1, 2, 3, 200), "while expecting");
    test_core_refuse (core, chunk_ev (1, 1, 3, 700), "expected 400");
    test_core_feed (core, chunk_ev (1, 1, 3, 400), &n);
    const core_action_t *a = test_core_feed (core, chunk_ev (1, 2, 3, 200), &n);
    assert_non_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    test_core_refuse (core, (core_event_t){.type = CORE_EV_COMPUTED, .task = 2}, "not");
    test_core_refuse (core, (core_event_t){.type = CORE_EV_ACK, .child = 0}, "no child");
    assert_int_equal (core_stats (core).received, 1);
    assert_int_equal (core_stats (core).malformed, 10);
    core_destroy (&core);
}

/*  Every size a chunk claims is checked against the task this node
 *  expects (1000 bytes in chunks of 400, 2 units) before it is used: a
 *  claim of INT64_MAX bytes, a total, count, length or units that lie,
 *  are refused and leave the transfer where it was. */
static void
test_leaf_refuses_chunks_whose_sizes_lie (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (0, 0, 100));
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    core_event_t ev = chunk_ev (1, 0, 2, 400);
    ev.bytes = INT64_MAX;
    test_core_refuse (core, ev, "claims 9223372036854775807 bytes");
    ev.bytes = 1 << 30;
    ev.count = (1 << 30) / 400 + 1;
    test_core_refuse (core, ev, "claims 1073741824 bytes, the task has 1000");
    ev = chunk_ev (1, 0, 3, 400);
    ev.bytes = 800;
    ev.count = 2;
    test_core_refuse (core, ev, "claims 800 bytes");
    test_core_refuse (core, chunk_ev (1, 0, 4, 400), "the task has 3 chunks");
    test_core_refuse (core, chunk_ev (1, 0, 2, 400), "the task has 3 chunks");
    test_core_refuse (core, chunk_ev (1, 3, 3, 200), "malformed");
    test_core_refuse (core, chunk_ev (1, 0, 3, 399), "expected 400");
    test_core_refuse (core, chunk_ev (1, 0, 3, 0), "expected 400");
    ev = chunk_ev (1, 0, 3, 400);
    ev.units = 1e300;
    test_core_refuse (core, ev, "claims 1e+300 units");
    ev.units = INFINITY;
    test_core_refuse (core, ev, "units");
    ev.units = NAN;
    test_core_refuse (core, ev, "malformed");
    /*  Nothing moved: the true chunks go through, the last one short. */
    test_core_feed (core, chunk_ev (1, 0, 3, 400), &n);
    test_core_refuse (core, chunk_ev (1, 1, 3, 200), "expected 400");
    test_core_feed (core, chunk_ev (1, 1, 3, 400), &n);
    test_core_refuse (core, chunk_ev (1, 2, 3, 400), "expected 200");
    const core_action_t *a = test_core_feed (core, chunk_ev (1, 2, 3, 200), &n);
    assert_non_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->units, 2);
    assert_int_equal (core_stats (core).bytes_in, 1000);
    assert_int_equal (core_stats (core).malformed, 13);
    core_destroy (&core);
}

/*  A node refuses an experiment whose tasks exceed the global maximum,
 *  and an empty payload is one empty chunk. */
static void
test_task_sizes_have_a_ceiling (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    core_cfg_t cfg = make_cfg (0, 0, 10);
    cfg.task_bytes = CONFIG_MAX_TASK_BYTES + 1;
    assert_null (core_new (&cfg, err, sizeof err));
    cfg.task_bytes = 0;
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    core_event_t ev = chunk_ev (4, 0, 1, 0);
    ev.bytes = 0;
    const core_action_t *a = test_core_feed (core, ev, &n);
    assert_non_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    core_destroy (&core);
}

static void
test_root_streams_chunks_within_the_window (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (1, 1, 10);
    cfg.task_bytes = 4000;   /* 10 chunks of 400 */
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    assert_int_equal (count_type (a, n, CORE_ACT_SEND_CHUNK), 2);   /* window */
    assert_int_equal (a[0].task, 1);   /* task 0 went to the root's engine */
    assert_int_equal (a[0].index, 0);
    assert_int_equal (a[0].count, 10);
    assert_int_equal (a[1].offset, 400);
    for (uint32_t i = 0; i < 10; i++) {
        a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1,
                                       .index = i}, &n);
        int sends = count_type (a, n, CORE_ACT_SEND_CHUNK);
        assert_int_equal (sends, i + 2 < 10 ? 1 : 0);
        if (sends)
            assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->index, i + 2);
    }
    assert_int_equal (count_type (a, n, CORE_ACT_RELEASE), 1);
    assert_int_equal (core_stats (core).forwarded, 1);
    assert_int_equal (core_stats (core).bytes_out, 4000);
    assert_int_equal (core_child_stats (core, 0).tasks_sent, 1);
    test_core_refuse (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1,
                                 .index = 10}, "none such");
    core_destroy (&core);
}

/*  A parent counts, per child, how long transfers waited for their last
 *  ack after the last chunk went out (unpaced: its send time): the
 *  runtime's round trip, which the node reports as link lag. */
static void
test_ack_wait_is_the_time_from_last_chunk_to_its_ack (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (1, 1, 10);   /* 1000 bytes: 3 chunks, window 2 */
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    /*  Chunks 0 and 1 at t = 0; the ack of 0 at 0.1 releases chunk 2. */
    test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .now = 0.1, .task = 1, .index = 0}, &n);
    test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .now = 0.2, .task = 1, .index = 1}, &n);
    assert_true (core_child_stats (core, 0).ack_wait_seconds == 0);
    test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .now = 0.85, .task = 1, .index = 2},
        &n);
    core_child_stats_t cs = core_child_stats (core, 0);
    assert_int_equal (cs.tasks_sent, 1);
    if (fabs (cs.ack_wait_seconds - 0.75) > 1e-9)
        fail_msg ("ack wait %.6f, expected 0.75", cs.ack_wait_seconds);
    assert_true (fabs (cs.send_seconds - 0.85) < 1e-9);
    core_destroy (&core);
}

static void
test_fcfs_serves_oldest_request_one_transfer_at_a_time (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (1, 3, 50));
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 2, .n = 1}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->child, 2);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 2},
                        &n);
    assert_int_equal (n, 0);   /* single-port: child 2's transfer is in flight */
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1},
                        &n);
    assert_int_equal (n, 0);
    /* Finish child 2's transfer (3 chunks, window 2). */
    uint64_t task = 1;
    int order[4], served = 0, current = 2;
    for (;;) {
        for (uint32_t i = 0; i < 3; i++) {
            a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = current,
                                           .task = task, .index = i}, &n);
            for (int k = 0; k < n; k++)
                if (a[k].type == CORE_ACT_SEND_CHUNK && a[k].index == 0) {
                    assert_true (i == 2);   /* never before the last ack */
                    order[served++] = a[k].child;
                    current = a[k].child;
                    task = a[k].task;
                }
        }
        if (served == 3 || !test_core_find (a, n, CORE_ACT_SEND_CHUNK))
            break;
    }
    assert_int_equal (served, 3);
    assert_int_equal (order[0], 0);   /* child 0 asked before child 1 */
    assert_int_equal (order[1], 0);   /* its second task is older than child 1's */
    assert_int_equal (order[2], 1);
    core_destroy (&core);
}

/*  Tasks of the SEND_CHUNK actions among a, in order, with index 0. */
static int
begun (const core_action_t *a, int n, uint64_t *task, int max)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (a[i].type == CORE_ACT_SEND_CHUNK && a[i].index == 0 && k < max)
            task[k++] = a[i].task;
    return k;
}

/*  Paced, a child whose transfer is delivered may get its next task before
 *  that transfer's ack comes back (the ack is the runtime's round trip),
 *  as long as it has fewer than window chunks unacknowledged: its acks
 *  come in order, the oldest transfer's first, and each transfer is
 *  counted and released at its own last ack. */
static void
test_paced_transfers_to_one_child_are_pipelined_within_its_window (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (1, 1, 50);   /* fcfs, window 2 */
    cfg.pace = 1;
    cfg.task_bytes = 0;                     /* one chunk a task */
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 3}, &n);
    uint64_t t[4];
    assert_int_equal (begun (a, n, t, 4), 2);   /* the window's worth */
    assert_int_not_equal (t[0], t[1]);
    assert_int_equal (core_sending (core), 2);
    assert_int_equal (core_port_busy (core, 0), 0);   /* delivered, both */
    /*  Acks in order only: the second transfer's is not awaited yet. */
    test_core_refuse (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = t[1]},
            "none such");
    a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = t[0]}, &n);
    assert_int_equal (count_type (a, n, CORE_ACT_RELEASE), 1);
    assert_int_equal (test_core_find (a, n, CORE_ACT_RELEASE)->task, t[0]);
    assert_int_equal (core_stats (core).forwarded, 1);
    assert_int_equal (begun (a, n, &t[2], 2), 1);   /* its third ask */
    assert_int_equal (core_sending (core), 2);
    /*  Lost now: the two in flight and the one delivered, whose
     *  completion has not come back, are queued again. */
    test_core_feed (core, (core_event_t){.type = CORE_EV_LOST, .child = 0}, &n);
    assert_int_equal (core_stats (core).requeued, 3);
    assert_int_equal (core_sending (core), 0);
    core_destroy (&core);
}

/*  A pipelined transfer follows the one before: it begins once every
 *  chunk of that one is out, within the child's window; the port rule
 *  still applies: unpaced single-port (real mode), where a sent chunk is
 *  only queued, holds the port until the last ack, so it never
 *  pipelines; unpaced multi-port does, once the chunks are sent. */
static void
test_a_pipelined_transfer_begins_after_every_chunk_of_the_last (void **state)
{
    (void) state;
    static const char *const policies[] = {"fcfs", "ia-multi"};
    for (int p = 0; p < 2; p++)
        for (int pace = 1; pace >= 0; pace--) {
            core_cfg_t cfg = make_cfg (1, 1, 50);   /* 1000 B: 3 chunks of 400 */
            cfg.window = 4;
            cfg.pace = pace;
            cfg.policy = policy_find (policies[p]);
            int pipelined = pace || cfg.policy->multiport;
            core_t *core = make_core (cfg);
            int n;
            test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
            const core_action_t *a = test_core_feed (
                core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 3}, &n);
            assert_int_equal (count_type (a, n, CORE_ACT_SEND_CHUNK), pipelined ? 4 : 3);
            const core_action_t *c = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
            uint64_t first = c->task;
            for (uint32_t i = 0; i < 3; i++) {
                assert_int_equal (c[i].type, CORE_ACT_SEND_CHUNK);
                assert_int_equal (c[i].task, first);
                assert_int_equal (c[i].index, i);
            }
            if (pipelined) {
                assert_int_equal (c[3].type, CORE_ACT_SEND_CHUNK);
                assert_int_not_equal (c[3].task, first);
                assert_int_equal (c[3].index, 0);
            }
            /*  Its first ack frees a window slot: the next chunk, never a
             *  third transfer (the second's chunks are not all out). */
            a = test_core_feed (
                core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = first}, &n);
            uint64_t t[2];
            assert_int_equal (begun (a, n, t, 2), 0);
            assert_int_equal (count_type (a, n, CORE_ACT_SEND_CHUNK), pipelined ? 1 : 0);
            core_destroy (&core);
        }
}

static void
test_requests_beyond_the_limit_are_refused (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (1, 1, 50));
    test_core_refuse (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 0},
                      "request");
    test_core_refuse (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 200000}, "limit");
    test_core_refuse (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1},
                      "no child");
    core_destroy (&core);
}

/*  Non-root, task_bytes 0: task arrives from the parent and goes on to
 *  child 0 (which has asked), acknowledged; returns the actions of the
 *  ack. */
static const core_action_t *
pass_on (core_t *core, uint64_t task, int *n)
{
    const core_action_t *a = test_core_feed (core,
                                             (core_event_t){.type = CORE_EV_CHUNK,
                                                            .task = task,
                                                            .units = 2,
                                                            .bytes = 0,
                                                            .index = 0,
                                                            .count = 1},
                                             n);
    const core_action_t *send = test_core_find (a, *n, CORE_ACT_SEND_CHUNK);
    assert_non_null (send);
    assert_int_equal (send->task, task);
    return test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = task, .index = 0},
        n);
}

static void
test_completions_are_batched_by_size_and_by_delay (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (0, 1, 100);
    cfg.task_bytes = 0;   /* one empty chunk per task */
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START, .now = 0}, &n);
    test_core_feed (core, (core_event_t){.type = CORE_EV_CHUNK, .task = 5, .units = 2,
                               .bytes = 0, .index = 0, .count = 1, .now = 0}, &n);
    /*  Busy with 5, it passes 10..14 on to its child, which asked. */
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 5}, &n);
    for (uint64_t t = 10; t < 15; t++)
        pass_on (core, t, &n);
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_COMPUTED, .task = 5, .now = 1.0}, &n);
    assert_int_equal (count_type (a, n, CORE_ACT_REPORT), 0);
    assert_true (core_next_deadline (core, 1.0) > 0.049);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 1.02}, &n);
    assert_int_equal (n, 0);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 1.06}, &n);
    const core_action_t *r = test_core_find (a, n, CORE_ACT_REPORT);
    assert_non_null (r);
    assert_int_equal (r->ndone, 1);
    assert_int_equal (r->done[0].task, 5);
    assert_int_equal (r->done[0].node, 1);
    assert_true (core_next_deadline (core, 1.06) < 0);
    /* A child's batch of 4 with batch_max 3: two reports, immediately. */
    core_done_t batch[4] = {{10, 3}, {11, 3}, {12, 4}, {13, 3}};
    a = test_core_feed (
        core,
        (core_event_t){
            .type = CORE_EV_DONE, .child = 0, .done = batch, .ndone = 4, .now = 2},
        &n);
    assert_int_equal (count_type (a, n, CORE_ACT_REPORT), 2);
    assert_int_equal (a[0].ndone + a[1].ndone, 4);
    assert_int_equal (a[1].done[0].task, 13);
    core_done_t bad[1] = {{100, 3}};
    test_core_refuse (core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = bad,
                                 .ndone = 1}, "out of range");
    /*  Completions of a task never given to that child, or come back
     *  already, are refused, the whole batch with them: 14, out with the
     *  child, is still outstanding after the refusal and accepted alone. */
    core_done_t again[2] = {{14, 3}, {10, 3}};
    test_core_refuse (core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = again,
                                 .ndone = 2}, "never given");
    test_core_feed (core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = again,
                               .ndone = 1, .now = 3}, &n);
    core_destroy (&core);
}

/*  Root: child 0 asks for n tasks; acknowledge every chunk it is sent,
 *  in order, until no transfer is left. */
static void
serve_child (core_t *core, uint32_t tasks)
{
    int n;
    struct { uint64_t task; uint32_t index; } sent[64];
    int head = 0, tail = 0;
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = tasks}, &n);
    for (;;) {
        for (int i = 0; i < n; i++)
            if (a[i].type == CORE_ACT_SEND_CHUNK) {
                assert_true (tail < 64);
                sent[tail].task = a[i].task, sent[tail++].index = a[i].index;
            }
        if (head == tail)
            return;
        a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 0,
                                       .task = sent[head].task,
                                       .index = sent[head].index}, &n);
        head++;
    }
}

static void
test_root_counts_duplicates_and_finishes_once (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (1, 1, 3));
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);   /* computes 0 */
    serve_child (core, 2);                                      /* 1 and 2 */
    core_done_t d1[2] = {{1, 5}, {2, 6}};
    test_core_feed (
        core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = d1, .ndone = 2},
        &n);
    /*  A second completion of 2 from the child: refused, never counted. */
    core_done_t d2[1] = {{2, 5}};
    test_core_refuse (
        core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = d2, .ndone = 1},
        "never given");
    assert_int_equal (core_stats (core).duplicates, 0);
    const core_action_t *a =
        test_core_feed (core, (core_event_t){.type = CORE_EV_COMPUTED, .task = 0}, &n);
    assert_int_equal (count_type (a, n, CORE_ACT_FINISHED), 1);
    /*  The three first completions, streamed once, then FINISHED; the
     *  duplicate of task 2 (by node 5) is counted, never streamed. */
    const core_action_t *r = test_core_find (a, n, CORE_ACT_RECORDED);
    assert_non_null (r);
    assert_int_equal (count_type (a, n, CORE_ACT_RECORDED), 1);
    assert_int_equal (r->ndone, 3);
    assert_true (r->done[0].task == 1 && r->done[0].node == 5);
    assert_true (r->done[1].task == 2 && r->done[1].node == 6);
    assert_true (r->done[2].task == 0 && r->done[2].node == 0);
    assert_int_equal (a[n - 1].type, CORE_ACT_FINISHED);
    test_core_refuse (
        core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = d2, .ndone = 1},
        "never given");
    for (int t = 0; t < 3; t++)
        assert_true (core_is_done (core, t));
    assert_int_equal (core_stats (core).completed, 3);
    assert_int_equal (core_stats (core).duplicates, 0);
    core_destroy (&core);
}

static core_task_info_t
small_command (void *arg, uint64_t task)
{
    (void) arg, (void) task;
    return (core_task_info_t){.bytes = 1000, .units = 1};
}

/*  A result stream of a command never given to that child, or whose
 *  result came back already, is refused at its first chunk. */
static void
test_results_only_of_commands_given (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (1, 1, 3);
    cfg.command_tasks = 3;
    cfg.task_info = small_command;
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);   /* computes 0 */
    serve_child (core, 1);                                      /* 1 to child 0 */
    core_event_t r = {.type = CORE_EV_RESULT, .child = 0, .task = 2, .node = 1,
                      .bytes = 10, .index = 0, .count = 1, .len = 10};
    test_core_refuse (core, r, "never given");
    r.task = 1;
    const core_action_t *a = test_core_feed (core, r, &n);
    assert_int_equal (count_type (a, n, CORE_ACT_ACK_RESULT), 1);
    assert_true (core_is_done (core, 1));
    test_core_refuse (core, r, "never given");   /* it came back already */
    core_destroy (&core);
}

/*  A lost child's tasks, the one in flight included, go out again, to
 *  another child; nothing it sends after is accepted, and it is lost
 *  once. */
static void
test_a_lost_child_s_tasks_go_out_again (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (1, 2, 20));
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);   /* computes 0 */
    serve_child (core, 2);                                      /* 1, 2 to child 0 */
    /*  Task 3 is on its way to child 0 when it is lost. */
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->task, 3);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_LOST, .child = 0}, &n);
    assert_int_equal (core_stats (core).requeued, 3);
    assert_int_equal (core_stats (core).children_lost, 1);
    assert_int_equal (count_type (a, n, CORE_ACT_SEND_CHUNK), 0);
    core_done_t late = {.task = 1, .node = 1};
    test_core_refuse (core, (core_event_t){.type = CORE_EV_DONE, .child = 0, .done = &late,
                                 .ndone = 1}, "lost");
    test_core_refuse (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1},
                      "lost");
    test_core_refuse (core, (core_event_t){.type = CORE_EV_LOST, .child = 0}, "lost");
    /*  Child 1 asks: it gets the lost tasks first, before the bag's next. */
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 4},
                        &n);
    const core_action_t *c = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_non_null (c);
    assert_int_equal (c->child, 1);
    assert_true (c->task >= 1 && c->task <= 3);
    core_destroy (&core);
}

/*  An interior node keeps a command's input until its result is back, so
 *  that it can send it again; a result stream half arrived from a child
 *  that is lost is dropped. */
static void
test_a_lost_child_s_commands_keep_their_inputs (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (0, 2, 4);
    cfg.command_tasks = 4;
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    core_event_t ch = {.type = CORE_EV_CHUNK, .task = 2, .units = 1, .bytes = 300,
                       .index = 0, .count = 1, .len = 300, .kind = CORE_KIND_COMMAND};
    test_core_feed (core, ch, &n); /* 2: computed here */
    ch.task = 3;
    test_core_feed (core, ch, &n);                                        /* 3: held */
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->task, 3);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 3},
                        &n);
    assert_null (test_core_find (a, n, CORE_ACT_RELEASE));           /* kept */
    core_event_t r = {.type = CORE_EV_RESULT, .child = 0, .task = 3, .node = 1,
                      .bytes = 800, .index = 0, .count = 2, .len = 400};
    test_core_feed (core, r, &n);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_LOST, .child = 0}, &n);
    const core_action_t *drop = test_core_find (a, n, CORE_ACT_DROP_RESULT);
    assert_non_null (drop);
    assert_int_equal (drop->task, 3);
    /*  Child 1 gets task 3 again; its result releases the input. */
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1},
                        &n);
    const core_action_t *c = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_true (c && c->task == 3 && c->child == 1 && c->kind == CORE_KIND_COMMAND);
    test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 1, .task = 3}, &n);
    r.child = 1;
    r.bytes = 10, r.count = 1, r.len = 10;
    a = test_core_feed (core, r, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_RELEASE)->task, 3);
    core_destroy (&core);
}

/*  A non-root node with one child: START, then task (5 by default)
 *  arrives whole and goes to the engine, which stays busy with it. */
static core_t *
busy_relay_task (core_cfg_t cfg, uint64_t task)
{
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_feed (core, chunk_ev (task, 0, 3, 400), &n);
    test_core_feed (core, chunk_ev (task, 1, 3, 400), &n);
    const core_action_t *a = test_core_feed (core, chunk_ev (task, 2, 3, 200), &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, task);
    return core;
}

static core_t *
busy_relay (core_cfg_t cfg)
{
    return busy_relay_task (cfg, 5);
}

/*  The chunks of task sent to child 0 among the actions: their indexes,
 *  in order, in sent[] (at most 8); returns how many. */
static int
sends_of (const core_action_t *a, int n, uint64_t task, uint32_t *sent)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (a[i].type == CORE_ACT_SEND_CHUNK) {
            assert_int_equal (a[i].task, task);
            assert_int_equal (a[i].child, 0);
            assert_true (k < 8);
            sent[k++] = a[i].index;
        }
    return k;
}

/*  Cut-through: a relay whose engine is busy forwards a task to a child
 *  that asked as its chunks arrive, each chunk once it holds it and
 *  never before, within the window; the task is never computed here. */
static void
test_a_relay_forwards_a_task_while_it_arrives (void **state)
{
    (void) state;
    core_t *core = busy_relay (make_cfg (0, 1, 100));   /* window 2 */
    int n;
    uint32_t sent[8];
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    assert_int_equal (count_type (a, n, CORE_ACT_SEND_CHUNK), 0);   /* nothing held */
    a = test_core_feed (core, chunk_ev (7, 0, 3, 400), &n);
    assert_int_equal (sends_of (a, n, 7, sent), 1);   /* the window allows 2 */
    assert_int_equal (sent[0], 0);
    assert_int_equal (count_type (a, n, CORE_ACT_ACK), 1);
    a = test_core_feed (core, chunk_ev (7, 1, 3, 400), &n);
    assert_int_equal (sends_of (a, n, 7, sent), 1);
    assert_int_equal (sent[0], 1);
    a = test_core_feed (core, chunk_ev (7, 2, 3, 200), &n);
    assert_int_equal (sends_of (a, n, 7, sent), 0);   /* the window is full */
    assert_int_equal (count_type (a, n, CORE_ACT_COMPUTE), 0);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 7},
                        &n);
    assert_int_equal (sends_of (a, n, 7, sent), 1);
    assert_int_equal (sent[0], 2);
    test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 7, .index = 1}, &n);
    a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 7, .index = 2}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_RELEASE)->task, 7);
    core_stats_t st = core_stats (core);
    assert_int_equal (st.received, 2);
    assert_int_equal (st.forwarded, 1);
    assert_int_equal (st.held, 0);
    core_destroy (&core);
}

/*  Local compute first holds for a task that arrives: with the engine
 *  idle, a relay keeps it until it is whole and computes it, even though
 *  a child has asked; the next task, with the engine busy, cuts through. */
static void
test_an_idle_engine_keeps_the_task_that_arrives (void **state)
{
    (void) state;
    core_t *core = make_core (make_cfg (0, 1, 100));
    int n;
    uint32_t sent[8];
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 2}, &n);
    const core_action_t *a = test_core_feed (core, chunk_ev (7, 0, 3, 400), &n);
    assert_int_equal (sends_of (a, n, 7, sent), 0);
    assert_int_equal (count_type (a, n, CORE_ACT_COMPUTE), 0);   /* not whole yet */
    a = test_core_feed (core, chunk_ev (7, 1, 3, 400), &n);
    assert_int_equal (n, 1);   /* its ack */
    a = test_core_feed (core, chunk_ev (7, 2, 3, 200), &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_COMPUTE)->task, 7);
    assert_int_equal (sends_of (a, n, 7, sent), 0);
    a = test_core_feed (core, chunk_ev (8, 0, 3, 400), &n);
    assert_int_equal (sends_of (a, n, 8, sent), 1);
    assert_int_equal (sent[0], 0);
    core_destroy (&core);
}

/*  A command's input bundle is spooled to a file: a relay forwards it
 *  only once it has all of it (store and forward). */
static void
test_a_command_is_forwarded_only_once_whole (void **state)
{
    (void) state;
    core_cfg_t cfg = make_cfg (0, 1, 4);
    cfg.command_tasks = 2;   /* 0 and 1; 2 and 3 synthetic */
    core_t *core = busy_relay_task (cfg, 3);
    int n;
    uint32_t sent[8];
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    core_event_t ch = {.type = CORE_EV_CHUNK, .task = 1, .units = 1, .bytes = 1000,
                       .index = 0, .count = 3, .len = 400, .kind = CORE_KIND_COMMAND};
    const core_action_t *a = test_core_feed (core, ch, &n);
    assert_int_equal (sends_of (a, n, 1, sent), 0);
    ch.index = 1;
    a = test_core_feed (core, ch, &n);
    assert_int_equal (sends_of (a, n, 1, sent), 0);
    ch.index = 2, ch.len = 200;
    a = test_core_feed (core, ch, &n);
    assert_int_equal (sends_of (a, n, 1, sent), 2);   /* the window */
    assert_int_equal (sent[0], 0);
    assert_int_equal (sent[1], 1);
    core_destroy (&core);
}

static void
test_bad_configurations_are_refused (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    core_cfg_t cfg = make_cfg (1, 0, 10);
    cfg.chunk_bytes = 0;
    assert_null (core_new (&cfg, err, sizeof err));
    cfg = make_cfg (1, 0, 0);
    assert_null (core_new (&cfg, err, sizeof err));
    cfg = make_cfg (1, 0, 10);
    cfg.policy = NULL;
    assert_null (core_new (&cfg, err, sizeof err));
    assert_non_null (strstr (err, "policy"));
    /*  Slots are checked as the config gives them, places a slot apart: the
     *  most slots a config allows, each with a waiting place, is a core. */
    cfg = make_cfg (1, 0, 10);
    cfg.slots = CORE_MAX_SLOTS;
    cfg.depth = 2;
    core_t *core = core_new (&cfg, err, sizeof err);
    assert_non_null (core);
    core_destroy (&core);
    cfg.depth = CORE_MAX_DEPTH + 1;
    assert_null (core_new (&cfg, err, sizeof err));
    assert_non_null (strstr (err, "places a slot"));
}

/*  --- an in-memory tree ------------------------------------------------- */

/*  Tree: 0 root (children 1, 2), 1 (child 3), 2 leaf, 3 leaf. */
#define SIM_NODES 4
static const int sim_parent[SIM_NODES] = {-1, 0, 0, 1};
static const int sim_slot[SIM_NODES] = {-1, 0, 1, 0};

typedef struct {
    core_event_t ev;
    core_done_t *done;   /* owned copy for DONE */
} sim_msg_t;

typedef struct {
    sim_msg_t *q;
    int head, len, cap;
} sim_queue_t;

static void
sim_push (sim_queue_t *q, core_event_t ev, const core_done_t *done)
{
    if (q->head + q->len == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->q = xrealloc (q->q, q->cap * sizeof *q->q);
    }
    sim_msg_t *m = &q->q[q->head + q->len++];
    m->ev = ev;
    m->done = NULL;
    if (done) {
        m->done = xmalloc (ev.ndone * sizeof *done);
        memcpy (m->done, done, ev.ndone * sizeof *done);
    }
}

/*  The in-memory tree's state: a core and an inbox per node, each node's
 *  engine (the task it computes, -1 if idle), and what the root recorded. */
typedef struct {
    core_t *cores[SIM_NODES];
    sim_queue_t qs[SIM_NODES];
    int64_t engine[SIM_NODES];
    uint64_t tasks;
    int *by;                 /* RECORDED per task */
    int per_node[SIM_NODES];
    int finished;
    int dead[SIM_NODES];     /* killed, or below a node killed */
    uint32_t *got[SIM_NODES];   /* per node and task: chunks received */
} sim_t;

/*  Child `slot` of node at. */
static int
sim_child (int at, int slot)
{
    for (int c = 0; c < SIM_NODES; c++)
        if (sim_parent[c] == at && sim_slot[c] == slot)
            return c;
    fail_msg ("node %d has no child in slot %d", at, slot);
    return 0;   /* not reached: fail_msg does not return */
}

/*  What the controller hears from the root: each task recorded once,
 *  every record before FINISHED. */
static void
sim_controller (sim_t *sim, int at, const core_action_t *x)
{
    assert_int_equal (at, 0);
    if (x->type == CORE_ACT_FINISHED) {
        sim->finished = 1;
        return;
    }
    assert_false (sim->finished);   /* every record before FINISHED */
    for (uint32_t d = 0; d < x->ndone; d++) {
        assert_true (x->done[d].task < sim->tasks);
        assert_true (x->done[d].node < SIM_NODES);
        sim->by[x->done[d].task]++;
        sim->per_node[x->done[d].node]++;
    }
}

/*  Carry out one action of node at: the network and the engines, where
 *  node/route.h says each goes. */
static void
sim_route (sim_t *sim, int at, const core_action_t *x)
{
    route_t r;
    assert_int_equal (route_action (x, sim_slot[at], &r), 0);
    if ((r.to == ROUTE_CHILD && sim->dead[sim_child (at, r.child)])
        || (at > 0 && sim->dead[sim_parent[at]]))
        return;   /* to a dead node: the network drops it */
    switch (r.to) {
    case ROUTE_PARENT:
        sim_push (&sim->qs[sim_parent[at]], r.ev, r.ev.done);
        break;
    case ROUTE_CHILD:
        /*  A relay sends a chunk only once it holds it (cut-through). */
        if (at > 0 && sim->got[at][x->task] <= x->index)
            fail_msg ("node %d sent chunk %u of task %llu holding %u of its chunks", at,
                      x->index, (unsigned long long) x->task, sim->got[at][x->task]);
        sim_push (&sim->qs[sim_child (at, r.child)], r.ev, NULL);
        break;
    case ROUTE_WORKER:
        assert_true (sim->engine[at] < 0);   /* one task at a time */
        sim->engine[at] = (int64_t) x->task;
        break;
    case ROUTE_CONTROLLER:
        sim_controller (sim, at, x);
        break;
    default:
        break;
    }
}

/*  The next event, chosen at random among nodes with mail and busy
 *  engines; an engine finishes with probability 1/8 whenever it is
 *  picked, so computing takes time, as it does. Returns 0 and fills
 *  *at and *m, or 1 for a pick that did nothing. */
static int
sim_next (sim_t *sim, unsigned seed, int steps, int *at, sim_msg_t *m)
{
    int ready[2 * SIM_NODES], k = 0;
    for (int i = 0; i < SIM_NODES; i++) {
        if (sim->qs[i].len && !sim->dead[i])
            ready[k++] = i;
        if (sim->engine[i] >= 0 && !sim->dead[i])
            ready[k++] = SIM_NODES + i;
    }
    if (k == 0)
        fail_msg ("seed %u: the tree stalled after %d steps", seed, steps);
    *at = ready[rand () % k];
    if (*at >= SIM_NODES) {
        *at -= SIM_NODES;
        if (rand () % 8)
            return 1;
        *m = (sim_msg_t){.ev = {.type = CORE_EV_COMPUTED, .task = sim->engine[*at]}};
        sim->engine[*at] = -1;
        return 0;
    }
    sim_queue_t *q = &sim->qs[*at];
    *m = q->q[q->head++];
    q->len--;
    return 0;
}

/*  Every task recorded exactly once, each by the node that computed it. */
static void
sim_check (sim_t *sim, unsigned seed)
{
    uint64_t computed = 0;
    for (uint64_t t = 0; t < sim->tasks; t++) {
        assert_true (core_is_done (sim->cores[0], t));
        assert_int_equal (sim->by[t], 1);   /* streamed exactly once */
    }
    for (int i = 0; i < SIM_NODES; i++) {
        core_stats_t st = core_stats (sim->cores[i]);
        assert_int_equal (st.malformed, 0);
        assert_int_equal (sim->per_node[i], st.computed);
        computed += st.computed;
        if (i > 0 && st.computed == 0)
            fail_msg ("seed %u: node %d computed nothing", seed, i);
    }
    assert_int_equal (computed, sim->tasks);
    assert_int_equal (core_stats (sim->cores[0]).duplicates, 0);
    assert_int_equal (core_stats (sim->cores[0]).completed, sim->tasks);
}

/*  Kill node k and everything below it; its parent learns it after what
 *  k sent before dying (the messages in the parent's inbox) arrives. */
static void
sim_kill (sim_t *sim, int k)
{
    for (int i = 1; i < SIM_NODES; i++)
        for (int up = i; up > 0; up = sim_parent[up])
            if (up == k)
                sim->dead[i] = 1;
    sim_push (&sim->qs[sim_parent[k]],
              (core_event_t){.type = CORE_EV_LOST, .child = sim_slot[k]}, NULL);
}

/*  After a loss: every task recorded exactly once all the same; the
 *  nodes alive recorded what they computed. */
static void
sim_check_loss (sim_t *sim, unsigned seed)
{
    for (uint64_t t = 0; t < sim->tasks; t++)
        if (sim->by[t] != 1)
            fail_msg ("seed %u: task %llu recorded %d times", seed,
                      (unsigned long long) t, sim->by[t]);
    for (int i = 0; i < SIM_NODES; i++)
        if (!sim->dead[i]) {
            assert_int_equal (core_stats (sim->cores[i]).malformed, 0);
            assert_int_equal (sim->per_node[i], core_stats (sim->cores[i]).computed);
        }
    assert_int_equal (core_stats (sim->cores[0]).duplicates, 0);
}

/*  Run the in-memory tree; with kill > 0, kill that node at step
 *  kill_step. */
static void
run_sim_killing (unsigned seed, uint64_t tasks, uint32_t window, uint64_t bytes, int kill,
                 int kill_step)
{
    static const int nkids[SIM_NODES] = {2, 1, 0, 0};
    sim_t sim = {.tasks = tasks, .by = xcalloc (tasks, sizeof (int))};
    for (int i = 0; i < SIM_NODES; i++) {
        core_cfg_t cfg = make_cfg (i == 0, nkids[i], tasks);
        cfg.self = i;
        cfg.window = window;
        cfg.task_bytes = bytes;
        cfg.batch_delay = 0;
        sim.cores[i] = make_core (cfg);
        sim.engine[i] = -1;
        sim.got[i] = xcalloc (tasks, sizeof *sim.got[i]);
        sim_push (&sim.qs[i], (core_event_t){.type = CORE_EV_START}, NULL);
    }
    srand (seed);
    for (int steps = 0; !sim.finished; steps++) {
        int at, n;
        sim_msg_t m;
        if (kill > 0 && steps == kill_step)
            sim_kill (&sim, kill);
        if (sim_next (&sim, seed, steps, &at, &m))
            continue;
        m.ev.done = m.done;
        m.ev.now = steps * 0.001;
        const core_action_t *a = test_core_feed (sim.cores[at], m.ev, &n);
        if (m.ev.type == CORE_EV_CHUNK)
            sim.got[at][m.ev.task] = m.ev.index + 1;
        free (m.done);
        assert_true (core_sending (sim.cores[at]) <= 1);   /* FCFS is single-port */
        for (int i = 0; i < n; i++)
            sim_route (&sim, at, &a[i]);
        assert_true (steps < 1000000);
    }
    if (kill > 0)
        sim_check_loss (&sim, seed);
    else
        sim_check (&sim, seed);
    for (int i = 0; i < SIM_NODES; i++) {
        for (int j = sim.qs[i].head; j < sim.qs[i].head + sim.qs[i].len; j++)
            free (sim.qs[i].q[j].done);
        free (sim.qs[i].q);
        free (sim.got[i]);
        core_destroy (&sim.cores[i]);
    }
    free (sim.by);
}

static void
run_sim (unsigned seed, uint64_t tasks, uint32_t window, uint64_t bytes)
{
    run_sim_killing (seed, tasks, window, bytes, 0, 0);
}

static void
test_a_tree_completes_every_task_exactly_once (void **state)
{
    (void) state;
    for (unsigned seed = 1; seed <= 40; seed++)
        run_sim (seed, 200, 1 + seed % 4, seed % 5 == 0 ? 0 : 1000 + seed * 37);
}

/*  A node, or the subtree under node 1, killed at a random step: the
 *  tree still records every task exactly once. */
static void
test_a_tree_survives_a_lost_node (void **state)
{
    (void) state;
    for (unsigned seed = 1; seed <= 60; seed++) {
        srand (seed * 7919);
        int kill = 1 + rand () % (SIM_NODES - 1), step = rand () % 3000;
        run_sim_killing (seed, 200, 1 + seed % 4, 1000 + seed * 37, kill, step);
    }
}


/*  --- pacing and multi-port, in virtual time ---------------------------- */

typedef struct {
    double t;              /* virtual now */
    uint64_t bytes[4];     /* per child, sent */
    double first, last;    /* first and last chunk times */
    int max_active;        /* most children with a transfer under way (a
                              chunk sent, not yet the last) at once */
    int starts[4];         /* transfers begun per child */
    uint32_t left[4];      /* per child, chunks of its transfer unsent */
} pace_run_t;

/*  Note the chunks among actions, for acknowledgement. */
static int
collect_chunks (pace_run_t *r, core_t *core, const core_action_t *a, int n,
                core_action_t *queue, int k)
{
    for (int i = 0; i < n; i++) {
        if (a[i].type != CORE_ACT_SEND_CHUNK)
            continue;
        assert_true (k < 256);
        queue[k++] = a[i];
        int c = a[i].child;
        if (a[i].index == 0) {
            r->starts[c]++;
            /*  Pipelined transfers to one child follow one another: a
             *  next one starts once every chunk of the one before is out. */
            if (r->left[c] > 0)
                fail_msg ("task %llu to child %d began with %u chunks of the one "
                          "before unsent", (unsigned long long) a[i].task, c, r->left[c]);
        }
        r->left[c] = a[i].count - a[i].index - 1;
        int active = 0;
        for (int j = 0; j < 4; j++)
            active += r->left[j] > 0;
        if (active > r->max_active)
            r->max_active = active;

        r->bytes[a[i].child] += a[i].len;
        if (r->first < 0)
            r->first = r->t;
        r->last = r->t;
        assert_true (core_sending (core) >= active);
    }
    return k;
}

/*  Run a root with paced children in virtual time until `until`: every
 *  chunk is acknowledged at once; the clock jumps to the core's deadline,
 *  plus `late` seconds of wake-up lateness. Children keep 1000 asks open. */
static void
pace_run (core_t *core, int nchildren, double until, double late, pace_run_t *r)
{
    int n, k = 0;
    core_action_t queue[256];
    const core_action_t *a;
    memset (r, 0, sizeof *r);
    r->first = -1;
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    k = collect_chunks (r, core, a, n, queue, k);
    for (int c = 0; c < nchildren; c++) {
        a = test_core_feed (
            core, (core_event_t){.type = CORE_EV_REQUEST, .child = c, .n = 1000}, &n);
        k = collect_chunks (r, core, a, n, queue, k);
    }
    int steps = 0;
    while (r->t < until && steps++ < 1000000) {
        /* Acknowledge everything sent, oldest first (a transfer's acks go
         * in order); acks may release more chunks, appended behind. */
        for (int head = 0; head < k; head++) {
            core_action_t x = queue[head];
            a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .now = r->t,
                                           .child = x.child, .task = x.task,
                                           .index = x.index}, &n);
            k = collect_chunks (r, core, a, n, queue, k);
        }
        k = 0;
        double due = core_next_deadline (core, r->t);
        assert_true (due >= 0);   /* a paced sender always has a next chunk */
        r->t += due + late;
        a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = r->t}, &n);
        k = collect_chunks (r, core, a, n, queue, k);
    }
}

static void
test_a_paced_link_runs_at_its_configured_rate (void **state)
{
    (void) state;
    static const core_child_info_t one[1] = {{10, 10, 10, 0.01, 0.02, 100000}};
    for (int jitter = 0; jitter < 2; jitter++) {
        core_cfg_t cfg = make_cfg (1, 1, 100000);
        cfg.children = one;
        cfg.pace = 1;
        cfg.chunk_bytes = 1000;
        cfg.task_bytes = 10000;
        cfg.window = 4;
        core_t *core = make_core (cfg);
        pace_run_t r;
        /* Wake-ups late by 3 ms: a third of a chunk's 10 ms. */
        pace_run (core, 1, 20.0, jitter ? 0.003 : 0, &r);
        double rate = r.bytes[0] / (r.last - r.first + 1000 / 100000.0);
        if (rate < 95000 || rate > 105000)
            fail_msg ("paced at %.0f B/s, configured 100000 (lateness %d)", rate, jitter);
        core_child_stats_t cs = core_child_stats (core, 0);
        assert_true (cs.tasks_sent >= 190);
        /* Sending took all the time: send_seconds ~ the run's length. */
        assert_true (cs.send_seconds > 0.95 * (r.last - r.first));
        core_destroy (&core);
    }
}

static void
test_multiport_stays_within_the_send_limit (void **state)
{
    (void) state;
    /* IR_s falls with the slot: IA:Multi ranks slot 2 first, then 1, 0. */
    static const core_child_info_t three[3] = {
        {10, 10, 10, 0.03, 0.02, 100000}, {10, 10, 10, 0.02, 0.02, 100000},
        {10, 10, 10, 0.01, 0.02, 100000},
    };
    core_cfg_t cfg = make_cfg (1, 3, 100000);
    cfg.children = three;
    cfg.policy = policy_find ("ia-multi");
    cfg.pace = 1;
    cfg.chunk_bytes = 1000;
    cfg.task_bytes = 10000;
    cfg.window = 4;
    cfg.send_limit_bps = 150000;
    core_t *core = make_core (cfg);
    pace_run_t r;
    pace_run (core, 3, 20.0, 0.001, &r);
    double total = r.bytes[0] + r.bytes[1] + r.bytes[2];
    double span = r.last - r.first + 1000 / 150000.0;
    double rate = total / span;
    if (rate > 150000 * 1.05 || rate < 150000 * 0.95)
        fail_msg ("total %.0f B/s against a limit of 150000", rate);
    /* Two links of 100000 are needed to fill 150000: two transfers ran at
     * once. Chunk by chunk, the child IA:Multi ranks first (slot 2, the
     * lowest IR_s) gets its link rate and the second (slot 1) the rest,
     * whatever the slot order. */
    assert_int_equal (r.max_active, 2);
    double r2 = r.bytes[2] / span, r1 = r.bytes[1] / span;
    if (r2 < 95000 || r2 > 105000 || r1 < 45000 || r1 > 55000)
        fail_msg ("child rates %.0f (IR_s 0.01) and %.0f (IR_s 0.02), expected "
                  "100000 and 50000", r2, r1);
    /* Slot 0 asked first and got a transfer while the link was idle; once
     * better children were sending, it got no chunk: the whole run moved
     * at most the one task it began, never a second. */
    if (r.bytes[0] > cfg.task_bytes)
        fail_msg ("the worst child got %llu bytes, more than the one task it began",
                  (unsigned long long) r.bytes[0]);
    assert_int_equal (r.starts[0], 1);
    core_destroy (&core);
}

static void
test_unlimited_multiport_sends_to_every_child_at_once (void **state)
{
    (void) state;
    static const core_child_info_t three[3] = {
        {10, 10, 10, 0.01, 0.02, 100000}, {10, 10, 10, 0.01, 0.02, 50000},
        {10, 10, 10, 0.01, 0.02, 20000},
    };
    core_cfg_t cfg = make_cfg (1, 3, 100000);
    cfg.children = three;
    cfg.policy = policy_find ("ia-multi");
    cfg.pace = 1;
    cfg.chunk_bytes = 1000;
    cfg.task_bytes = 10000;
    core_t *core = make_core (cfg);
    pace_run_t r;
    pace_run (core, 3, 10.0, 0, &r);
    assert_int_equal (r.max_active, 3);
    double span = r.last - r.first;
    assert_true (fabs (r.bytes[0] / span - 100000) < 5000);
    assert_true (fabs (r.bytes[1] / span - 50000) < 2500);
    assert_true (fabs (r.bytes[2] / span - 20000) < 1000);
    /* At most window transfers in flight to one child (pipelined). */
    for (int c = 0; c < 3; c++)
        assert_true ((uint64_t) r.starts[c]
                     <= core_child_stats (core, c).tasks_sent + cfg.window);
    core_destroy (&core);
}

/*  Deliver probe chunk x to the child at t, which takes it unasked,
 *  acknowledges and keeps nothing; the ack goes back. Returns its bytes. */
static uint64_t
deliver_probe (core_t *parent, core_t *child, const core_action_t *x, double t)
{
    int n;
    assert_int_equal (x->task, CORE_PROBE_TASK);
    const core_action_t *c = test_core_feed (
        child, (core_event_t){.type = CORE_EV_CHUNK, .now = t, .task = x->task,
                              .units = x->units, .bytes = x->bytes, .index = x->index,
                              .count = x->count, .len = x->len}, &n);
    assert_int_equal (n, 1);
    assert_int_equal (c[0].type, CORE_ACT_ACK);
    test_core_feed (parent, (core_event_t){.type = CORE_EV_ACK, .now = t, .child = 0,
                                 .task = x->task, .index = x->index}, &n);
    return x->len;
}

static void
test_probes_stream_at_the_link_rate_and_leave_the_bag_alone (void **state)
{
    (void) state;
    static const core_child_info_t one[1] = {{10, 10, 10, 0.01, 0.02, 100000}};
    core_cfg_t cfg = make_cfg (1, 1, 50);
    cfg.children = one;
    cfg.pace = 1;
    cfg.chunk_bytes = 1000;
    cfg.task_bytes = 10000;
    core_t *parent = make_core (cfg);
    core_cfg_t ccfg = make_cfg (0, 0, 50);   /* the same experiment's sizes */
    ccfg.chunk_bytes = cfg.chunk_bytes;
    ccfg.task_bytes = cfg.task_bytes;
    core_t *child = make_core (ccfg);
    int n;
    const core_action_t *a = test_core_feed (
        parent, (core_event_t){.type = CORE_EV_STREAM, .child = 0, .n = 1}, &n);
    assert_int_equal (n, 0);   /* the first chunk is due after one chunk time */
    double t = 0;
    uint64_t acked = 0;
    while (t < 5.0) {
        t += core_next_deadline (parent, t);
        a = test_core_feed (parent, (core_event_t){.type = CORE_EV_TICK, .now = t}, &n);
        core_action_t sent[16];
        int k = 0;
        for (int i = 0; i < n && k < 16; i++) {
            assert_int_not_equal (a[i].type, CORE_ACT_COMPUTE);   /* bag untouched */
            if (a[i].type == CORE_ACT_SEND_CHUNK)
                sent[k++] = a[i];
        }
        for (int i = 0; i < k; i++)
            acked += deliver_probe (parent, child, &sent[i], t);
    }
    /* 100000 B/s for t seconds, to a chunk. */
    if (fabs ((double) acked - 100000 * t) > 1000)
        fail_msg ("probes carried %llu bytes in %.3f s at 100000 B/s",
                  (unsigned long long) acked, t);
    assert_int_equal (core_child_stats (parent, 0).probe_bytes, acked);
    assert_int_equal (core_child_stats (parent, 0).tasks_sent, 0);
    assert_int_equal (core_stats (parent).forwarded, 0);
    assert_int_equal (core_stats (parent).bytes_out, 0);
    assert_int_equal (core_stats (child).probe_bytes_in, acked);
    assert_int_equal (core_stats (child).received, 0);
    assert_int_equal (core_stats (child).held, 0);
    assert_true (core_recv_rate (child, t) > 0);   /* probes drive interference */
    /* Stop: the transfer in flight finishes, no new one starts. */
    test_core_feed (
        parent, (core_event_t){.type = CORE_EV_STREAM, .now = t, .child = 0, .n = 0}, &n);
    assert_true (core_sending (parent) <= 1);
    core_destroy (&parent);
    core_destroy (&child);
}

/*  Single-port and paced: a transfer holds the port until the link has
 *  delivered its last chunk (a paced chunk goes out when its last byte
 *  would arrive), not until that chunk's ack, which is the runtime's
 *  round trip: the next child's transfer starts at the delivery. */
static void
test_paced_single_port_frees_the_port_at_delivery (void **state)
{
    (void) state;
    static const core_child_info_t two[2] = {{10, 10, 10, 0, 0, 1000},
                                             {10, 10, 10, 0, 0, 1000}};
    core_cfg_t cfg = make_cfg (1, 2, 50);   /* fcfs; tasks of 1000 B, chunks of 400 */
    cfg.children = two;
    cfg.pace = 1;
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 1}, &n);
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 1}, &n);
    /*  Child 0's three chunks at 1000 B/s: delivered at 0.4, 0.8, 1.0. */
    double t = 0;
    const core_action_t *a = NULL;
    uint64_t task = 0;
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal (core_port_busy (core, t), 1);
        t += core_next_deadline (core, t);
        a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = t}, &n);
        const core_action_t *c = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
        assert_non_null (c);
        assert_int_equal (c->child, 0);
        assert_int_equal (c->index, i);
        task = c->task;
        if (i < 2)
            test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .now = t, .child = 0,
                                       .task = task, .index = i}, &n);
    }
    assert_true (fabs (t - 1.0) < 1e-9);
    /*  Delivered, not yet acknowledged: child 1's transfer has begun. */
    assert_int_equal (core_sending (core), 2);
    assert_int_equal (core_port_busy (core, t), 1);
    t += core_next_deadline (core, t);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = t}, &n);
    const core_action_t *c = test_core_find (a, n, CORE_ACT_SEND_CHUNK);
    assert_non_null (c);
    assert_int_equal (c->child, 1);
    assert_true (fabs (t - 1.4) < 1e-9);   /* its own link's pace */
    /*  Child 0's last ack, late, is still taken. */
    test_core_feed (
        core,
        (core_event_t){
            .type = CORE_EV_ACK, .now = t, .child = 0, .task = task, .index = 2},
        &n);
    assert_int_equal (core_stats (core).forwarded, 1);
    assert_int_equal (core_sending (core), 1);
    core_destroy (&core);
}

/*  "ir": "measured": a node's online estimate replaces the configured
 *  IR_s, and an IA policy's order follows it from the next decision on. */
static void
test_estimated_ir_reorders_ia_policies (void **state)
{
    (void) state;
    static const core_child_info_t two[2] = {
        {10, 10, 10, 0.010, 0.02, 0}, {10, 10, 10, 0.020, 0.02, 0},
    };
    core_cfg_t cfg = make_cfg (1, 2, 50);
    cfg.children = two;
    cfg.policy = policy_find ("ia-single");
    cfg.task_bytes = 0;   /* one empty chunk a task */
    core_t *core = make_core (cfg);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 5}, &n);
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 5}, &n);
    /* Child 0 (IR_s 0.010) was served at its request; finish that. */
    a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 1, .index = 0}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->child, 0);
    /* Measured: child 1 interferes less than child 0 after all. */
    core_set_child_ir (core, 1, 0.005);
    core_set_child_ir (core, 0, -1);   /* ignored */
    core_set_child_ir (core, 7, 0.001);   /* ignored */
    a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = 2, .index = 0}, &n);
    assert_int_equal (test_core_find (a, n, CORE_ACT_SEND_CHUNK)->child, 1);
    core_destroy (&core);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_root_alone_computes_every_task_once),
        cmocka_unit_test (test_leaf_asks_for_its_buffer_at_start_and_not_again),
        cmocka_unit_test (test_leaf_acks_every_chunk_then_computes_and_refills),
        cmocka_unit_test (test_leaf_refuses_bad_chunks_and_keeps_its_state),
        cmocka_unit_test (test_leaf_refuses_chunks_whose_sizes_lie),
        cmocka_unit_test (test_task_sizes_have_a_ceiling),
        cmocka_unit_test (test_root_streams_chunks_within_the_window),
        cmocka_unit_test (test_fcfs_serves_oldest_request_one_transfer_at_a_time),
        cmocka_unit_test (test_requests_beyond_the_limit_are_refused),
        cmocka_unit_test (test_completions_are_batched_by_size_and_by_delay),
        cmocka_unit_test (test_root_counts_duplicates_and_finishes_once),
        cmocka_unit_test (test_results_only_of_commands_given),
        cmocka_unit_test (test_bad_configurations_are_refused),
        cmocka_unit_test (test_a_lost_child_s_tasks_go_out_again),
        cmocka_unit_test (test_a_lost_child_s_commands_keep_their_inputs),
        cmocka_unit_test (test_a_relay_forwards_a_task_while_it_arrives),
        cmocka_unit_test (test_an_idle_engine_keeps_the_task_that_arrives),
        cmocka_unit_test (test_a_command_is_forwarded_only_once_whole),
        cmocka_unit_test (test_ack_wait_is_the_time_from_last_chunk_to_its_ack),
        cmocka_unit_test (test_a_tree_completes_every_task_exactly_once),
        cmocka_unit_test (test_a_tree_survives_a_lost_node),
        cmocka_unit_test (test_a_paced_link_runs_at_its_configured_rate),
        cmocka_unit_test (test_paced_single_port_frees_the_port_at_delivery),
        cmocka_unit_test (
            test_paced_transfers_to_one_child_are_pipelined_within_its_window),
        cmocka_unit_test (test_a_pipelined_transfer_begins_after_every_chunk_of_the_last),
        cmocka_unit_test (test_multiport_stays_within_the_send_limit),
        cmocka_unit_test (test_unlimited_multiport_sends_to_every_child_at_once),
        cmocka_unit_test (test_probes_stream_at_the_link_rate_and_leave_the_bag_alone),
        cmocka_unit_test (test_estimated_ir_reorders_ia_policies),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
