/*  test_xfer — a parent's transfers to its children (node/xfer.h),
 *  driven directly: asks, the port rule, windows, ordered acks,
 *  pipelining, pacing, cut-through, probes, the subtree's tasks and a
 *  lost child.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include "node/xfer.h"
#include "overlay/util.h"

#define T0 1000.0

/*  Children 0 .. n-1, fcfs, chunks of 10 bytes, unpaced unless told. */
static xfer_cfg_t
cfg_of (int n, uint32_t window, core_child_info_t *kids)
{
    for (int i = 0; i < n; i++)
        kids[i] = (core_child_info_t){.compute_rate = 1, .link_mbps = 1,
                                      .link_idle_mbps = 1, .node = (uint32_t) i + 1};
    return (xfer_cfg_t){.nchildren = n, .children = kids, .chunk_bytes = 10,
                        .window = window, .meter_window = 0.1,
                        .policy = policy_find ("fcfs"), .probe_units = 1,
                        .probe_bytes = 25};
}

/*  The child picked at now among the ready ones, all of them (only < 0)
 *  or child only alone: the caller having tasks for those. */
static int
pick (xfer_t *x, double now, int only)
{
    int n, k = 0, *ready = xfer_list_ready (x, now, &n);
    for (int i = 0; i < n; i++)
        if (only < 0 || ready[i] == only)
            ready[k++] = ready[i];
    return xfer_pick_child (x, now, ready, k);
}

static int
count_type (const core_acts_t *acts, core_action_type_t type)
{
    int k = 0;
    for (int i = 0; i < acts->n; i++)
        k += acts->items[i].type == type;
    return k;
}

static task_t
task_of (uint64_t id, uint64_t bytes)
{
    return (task_t){.id = id, .units = 1, .bytes = bytes};
}

/*  Asks are bounded; a bad or lost slot is refused. */
static void
test_asks_are_checked (void **state)
{
    (void) state;
    core_child_info_t kids[2];
    xfer_cfg_t cfg = cfg_of (2, 2, kids);
    xfer_t *x = xfer_new (&cfg);
    char err[TF_ERRLEN];
    assert_int_equal (xfer_check_child (x, 2, err, sizeof err), -1);
    assert_int_equal (xfer_check_child (x, -1, err, sizeof err), -1);
    assert_int_equal (xfer_check_child (x, 1, err, sizeof err), 0);
    assert_int_equal (xfer_add_ask (x, 0, 0, err, sizeof err), -1);
    assert_int_equal (xfer_add_ask (x, 0, XFER_MAX_WANTED, err, sizeof err), 0);
    assert_int_equal (xfer_add_ask (x, 0, 1, err, sizeof err), -1);
    assert_int_equal (xfer_child_stats (x, 0).requested, XFER_MAX_WANTED);
    assert_int_equal (xfer_child_node (x, 1), 2);
    uint32_t n;
    xfer_lose_child (x, 1, &n);
    assert_int_equal (n, 0);
    assert_int_equal (xfer_check_child (x, 1, err, sizeof err), -1);
    xfer_destroy (&x);
    assert_null (x);
    xfer_destroy (&x);
}

/*  Single-port, unpaced: one transfer holds the port until its last ack;
 *  only a child that asked, and has a task, is picked; the window bounds
 *  the chunks unacknowledged; acks come in order. */
static void
test_single_port_and_window (void **state)
{
    (void) state;
    core_child_info_t kids[2];
    xfer_cfg_t cfg = cfg_of (2, 2, kids);
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    assert_int_equal (pick (x, T0, -1), -1);   /* no ask */
    xfer_add_ask (x, 0, 1, err, sizeof err);
    xfer_add_ask (x, 1, 1, err, sizeof err);
    assert_int_equal (pick (x, T0, 1), 1);
    assert_int_equal (pick (x, T0, -1), 0);    /* asked first */
    xfer_start_task (x, 0, &(task_t){.id = 7, .units = 1, .bytes = 45}, T0);
    assert_int_equal (pick (x, T0, -1), -1);   /* port held */
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 2);                                    /* the window */
    assert_int_equal (acts.items[1].type, CORE_ACT_SEND_CHUNK);
    assert_int_equal (acts.items[1].index, 1);
    assert_int_equal (acts.items[1].count, 5);
    assert_int_equal (acts.items[1].offset, 10);
    acts.n = 0;
    assert_int_equal (xfer_ack_chunk (x, 0, 7, 1, T0, &acts, err, sizeof err), -1);
    assert_int_equal (xfer_ack_chunk (x, 0, 8, 0, T0, &acts, err, sizeof err), -1);
    assert_int_equal (xfer_ack_chunk (x, 0, 7, 0, T0, &acts, err, sizeof err), 0);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 1);
    assert_int_equal (acts.items[0].index, 2);
    for (uint32_t i = 1; i < 5; i++) {
        acts.n = 0;
        assert_int_equal (xfer_ack_chunk (x, 0, 7, i, T0 + 1, &acts, err, sizeof err), 0);
        xfer_pump_chunks (x, &acts, T0 + 1);
    }
    assert_int_equal (count_type (&acts, CORE_ACT_RELEASE), 1);
    core_child_stats_t s = xfer_child_stats (x, 0);
    assert_int_equal (s.tasks_sent, 1);
    assert_int_equal (s.bytes_sent, 45);
    assert_true (s.send_seconds == 1);
    assert_int_equal (xfer_sending (x), 0);
    assert_int_equal (pick (x, T0 + 1, -1), 1);
    free (acts.items);
    xfer_destroy (&x);
}

/*  Multi-port: another transfer starts while the outgoing total, a young
 *  transfer counted at its link's rate (unknown: the whole limit), is
 *  below 90% of the send limit; a child already receiving is not
 *  started again. */
static void
test_multiport_starts_while_bandwidth_is_spare (void **state)
{
    (void) state;
    core_child_info_t kids[3];
    for (int unknown = 0; unknown < 2; unknown++) {
        xfer_cfg_t cfg = cfg_of (3, 4, kids);
        cfg.policy = policy_find ("ia-multi");
        cfg.pace = 1;
        cfg.send_limit_bps = 100;
        for (int i = 0; i < 3; i++)
            kids[i].link_bps = unknown ? 0 : 45;
        xfer_t *x = xfer_new (&cfg);
        char err[TF_ERRLEN];
        for (int i = 0; i < 3; i++)
            xfer_add_ask (x, i, 1, err, sizeof err);
        int first = pick (x, T0, -1);
        assert_true (first >= 0);
        xfer_start_task (x, first, &(task_t){.id = 1, .units = 1, .bytes = 100}, T0);
        int second = pick (x, T0, -1);
        if (unknown) {
            assert_int_equal (second, -1);
        } else {
            assert_true (second >= 0 && second != first);
            xfer_start_task (x, second, &(task_t){.id = 2, .units = 1, .bytes = 100}, T0);
            assert_int_equal (pick (x, T0, -1), -1);   /* 90 of 100 */
            assert_int_equal (xfer_port_busy (x, T0), 2);
        }
        xfer_destroy (&x);
    }
}

/*  A command's input stays on a keep_commands node at its last ack. */
static void
test_command_input_kept_until_its_result (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 4, kids);
    cfg.keep_commands = 1;
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 1, err, sizeof err);
    task_t t = {.id = 3, .units = 1, .bytes = 5, .kind = CORE_KIND_COMMAND, .navoid = 1,
                .avoid = {2}};
    xfer_start_task (x, 0, &t, T0);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.items[0].kind, CORE_KIND_COMMAND);
    assert_int_equal (acts.items[0].navoid, 1);
    assert_int_equal (acts.items[0].avoid[0], 2);
    acts.n = 0;
    assert_int_equal (xfer_ack_chunk (x, 0, 3, 0, T0, &acts, err, sizeof err), 0);
    assert_int_equal (count_type (&acts, CORE_ACT_RELEASE), 0);
    assert_int_equal (xfer_child_stats (x, 0).tasks_sent, 1);
    free (acts.items);
    xfer_destroy (&x);
}

/*  Pipelined (paced, the link's rate unknown: a chunk is delivered as
 *  it goes): once every chunk of a transfer is out, the child's next
 *  task may start within its window; each transfer is released at its
 *  own last ack, in order. */
static void
test_pipelined_transfers_drain_in_order (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 3, kids);
    cfg.pace = 1;
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 3, err, sizeof err);
    xfer_start_task (x, 0, &(task_t){.id = 1, .units = 1, .bytes = 20}, T0);
    assert_int_equal (pick (x, T0, -1), -1);   /* chunks left */
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 2);
    assert_int_equal (pick (x, T0, -1), 0);
    xfer_start_task (x, 0, &(task_t){.id = 2, .units = 1, .bytes = 20}, T0);
    acts.n = 0;
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 1);                  /* 3 unacknowledged */
    assert_int_equal (xfer_sending (x), 2);
    assert_int_equal (pick (x, T0, -1), -1);   /* window full */
    acts.n = 0;
    assert_int_equal (xfer_ack_chunk (x, 0, 2, 0, T0, &acts, err, sizeof err), -1);
    assert_int_equal (xfer_ack_chunk (x, 0, 1, 0, T0, &acts, err, sizeof err), 0);
    assert_int_equal (xfer_ack_chunk (x, 0, 1, 1, T0, &acts, err, sizeof err), 0);
    assert_int_equal (count_type (&acts, CORE_ACT_RELEASE), 1);
    assert_int_equal (acts.items[0].task, 1);
    assert_int_equal (xfer_sending (x), 1);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.items[acts.n - 1].index, 1);
    assert_int_equal (acts.items[acts.n - 1].task, 2);
    free (acts.items);
    xfer_destroy (&x);
}

/*  Paced: a chunk waits for its link (10 bytes at 100 B/s: 0.1 s each),
 *  an idle link banks nothing, next_due says when; the port is held
 *  until the last chunk is delivered, not until its ack. */
static void
test_pacing_holds_chunks_to_the_link_rate (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 8, kids);
    cfg.pace = 1;
    kids[0].link_bps = 100;
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 2, err, sizeof err);
    xfer_start_task (x, 0, &(task_t){.id = 1, .units = 1, .bytes = 20}, T0);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 0);
    assert_true (xfer_next_due (x, T0) == T0 + 0.1);
    xfer_pump_chunks (x, &acts, T0 + 0.1);
    assert_int_equal (acts.n, 1);
    xfer_pump_chunks (x, &acts, T0 + 0.15);
    assert_int_equal (acts.n, 1);
    xfer_pump_chunks (x, &acts, T0 + 0.2);
    assert_int_equal (acts.n, 2);
    assert_int_equal (xfer_port_busy (x, T0 + 0.15), 1);  /* still on the link */
    assert_true (xfer_next_due (x, T0 + 0.15) == T0 + 0.2);
    assert_int_equal (xfer_port_busy (x, T0 + 0.2), 0);   /* delivered */
    assert_int_equal (xfer_sending (x), 1);                /* acks due */
    assert_true (xfer_next_due (x, T0 + 0.2) < 0);
    xfer_pump_chunks (x, &acts, T0 + 5);
    assert_int_equal (acts.n, 2);
    free (acts.items);
    xfer_destroy (&x);
}

/*  A link share (the child's background communicating): from the next
 *  chunk on, chunks go at share x the link rate; out-of-range shares are
 *  ignored. 10 bytes at 100 B/s x 1/2: 0.2 s, then back to 0.1 at 1. */
static void
test_link_share_slows_the_pacer (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 8, kids);
    cfg.pace = 1;
    kids[0].link_bps = 100;
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 1, err, sizeof err);
    xfer_set_link_share (x, 0, 0);     /* ignored */
    xfer_set_link_share (x, 0, 1.5);   /* ignored */
    xfer_set_link_share (x, 5, 0.5);   /* no such child */
    xfer_set_link_share (x, 0, 0.5);
    xfer_start_task (x, 0, &(task_t){.id = 1, .units = 1, .bytes = 30}, T0);
    assert_true (xfer_next_due (x, T0) == T0 + 0.2);
    xfer_pump_chunks (x, &acts, T0 + 0.2);
    assert_int_equal (acts.n, 1);
    assert_true (fabs (xfer_next_due (x, T0 + 0.2) - (T0 + 0.4)) < 1e-9);
    xfer_set_link_share (x, 0, 1);
    assert_true (fabs (xfer_next_due (x, T0 + 0.2) - (T0 + 0.3)) < 1e-9);
    xfer_pump_chunks (x, &acts, T0 + 0.3);
    assert_int_equal (acts.n, 2);
    free (acts.items);
    xfer_destroy (&x);
}

/*  Send task id of 20 bytes to child 0 from T0, pumping and acking each
 *  chunk when due, the acks a whole second later. */
static void
send_paced (xfer_t *x, uint64_t id, double *now)
{
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 1, err, sizeof err);
    xfer_start_task (x, 0, &(task_t){.id = id, .units = 1, .bytes = 20}, *now);
    while (acts.n < 2) {
        double due = xfer_next_due (x, *now);
        assert_true (due >= *now);
        *now = due;
        xfer_pump_chunks (x, &acts, *now);
    }
    *now += 1;
    for (uint32_t i = 0; i < 2; i++)
        assert_int_equal (xfer_ack_chunk (x, 0, id, i, *now, &acts, err, sizeof err), 0);
    free (acts.items);
}

/*  The link's own stats: a transfer the link alone paced (100 B/s, no
 *  send limit) counts its bytes and its 0.2 s to the last delivery, not
 *  the ack's second; under a send limit slower than the link (50 B/s)
 *  a transfer waits on the total's pacer and is left out. */
static void
test_link_stats_only_of_link_paced_transfers (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 8, kids);
    cfg.pace = 1;
    kids[0].link_bps = 100;
    xfer_t *x = xfer_new (&cfg);
    double now = T0;
    send_paced (x, 1, &now);
    core_child_stats_t s = xfer_child_stats (x, 0);
    assert_int_equal (s.tasks_sent, 1);
    assert_int_equal (s.link_bytes, 20);
    assert_true (fabs (s.link_seconds - 0.2) < 1e-9);
    xfer_destroy (&x);

    cfg.send_limit_bps = 50;
    x = xfer_new (&cfg);
    now = T0;
    send_paced (x, 2, &now);
    s = xfer_child_stats (x, 0);
    assert_int_equal (s.tasks_sent, 1);
    assert_int_equal (s.link_bytes, 0);
    assert_true (s.link_seconds == 0);
    xfer_destroy (&x);
}

/*  Cut-through: of a task still arriving, only the chunks here go. */
static void
test_cut_through_sends_only_arrived_chunks (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 8, kids);
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 1, err, sizeof err);
    xfer_set_arriving (x, 1, 4, 1);
    xfer_start_task (x, 0, &(task_t){.id = 4, .units = 1, .bytes = 30}, T0);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 1);
    xfer_set_arriving (x, 1, 4, 2);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 2);
    xfer_set_arriving (x, 0, 4, 3);   /* whole */
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 3);
    free (acts.items);
    xfer_destroy (&x);
}

/*  Calibration probes go back to back to a streaming child, counted
 *  apart from tasks and never released; stopping ends them. */
static void
test_probes_stream_while_asked (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 8, kids);
    xfer_t *x = xfer_new (&cfg);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    xfer_set_streaming (x, 0, 1, T0);
    xfer_serve_probes (x, T0);
    xfer_pump_chunks (x, &acts, T0);
    assert_int_equal (acts.n, 3);   /* 25 bytes */
    assert_int_equal (acts.items[0].task, CORE_PROBE_TASK);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal (xfer_ack_chunk (x, 0, CORE_PROBE_TASK, i, T0, &acts, err,
                                          sizeof err), 0);
    assert_int_equal (count_type (&acts, CORE_ACT_RELEASE), 0);
    core_child_stats_t s = xfer_child_stats (x, 0);
    assert_int_equal (s.probe_bytes, 25);
    assert_int_equal (s.bytes_sent, 0);
    assert_int_equal (s.tasks_sent, 0);
    xfer_serve_probes (x, T0);
    assert_int_equal (xfer_sending (x), 1);   /* the next one */
    xfer_set_streaming (x, 0, 0, T0);
    acts.n = 0;
    xfer_pump_chunks (x, &acts, T0);
    for (uint32_t i = 0; i < 3; i++)
        xfer_ack_chunk (x, 0, CORE_PROBE_TASK, i, T0, &acts, err, sizeof err);
    xfer_serve_probes (x, T0);
    assert_int_equal (xfer_sending (x), 0);
    free (acts.items);
    xfer_destroy (&x);
}

/*  Completions come back all or none; a lost child gives back every
 *  task its subtree had, and is never picked again. */
static void
test_given_tasks_come_back_once (void **state)
{
    (void) state;
    core_child_info_t kids[1];
    xfer_cfg_t cfg = cfg_of (1, 8, kids);
    xfer_t *x = xfer_new (&cfg);
    char err[TF_ERRLEN];
    xfer_add_ask (x, 0, 5, err, sizeof err);
    for (uint64_t id = 0; id < 3; id++) {
        task_t t = task_of (id, 0);
        xfer_start_task (x, 0, &t, T0);
    }
    core_done_t bad[2] = {{.task = 0}, {.task = 9}};
    assert_int_equal (xfer_take_given (x, 0, bad, 2, err, sizeof err), -1);
    assert_int_equal (xfer_was_given (x, 0, 0), 1);   /* none taken */
    core_done_t good[1] = {{.task = 0}};
    assert_int_equal (xfer_take_given (x, 0, good, 1, err, sizeof err), 0);
    assert_int_equal (xfer_was_given (x, 0, 0), 0);
    assert_int_equal (xfer_take_given (x, 0, good, 1, err, sizeof err), -1);
    xfer_drop_given (x, 0, 1);
    uint32_t n;
    const task_t *back = xfer_lose_child (x, 0, &n);
    assert_int_equal (n, 1);
    assert_int_equal (back[0].id, 2);
    assert_int_equal (xfer_sending (x), 0);
    assert_int_equal (pick (x, T0, -1), -1);
    xfer_destroy (&x);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_asks_are_checked),
        cmocka_unit_test (test_single_port_and_window),
        cmocka_unit_test (test_multiport_starts_while_bandwidth_is_spare),
        cmocka_unit_test (test_command_input_kept_until_its_result),
        cmocka_unit_test (test_pipelined_transfers_drain_in_order),
        cmocka_unit_test (test_pacing_holds_chunks_to_the_link_rate),
        cmocka_unit_test (test_link_share_slows_the_pacer),
        cmocka_unit_test (test_link_stats_only_of_link_paced_transfers),
        cmocka_unit_test (test_cut_through_sends_only_arrived_chunks),
        cmocka_unit_test (test_probes_stream_while_asked),
        cmocka_unit_test (test_given_tasks_come_back_once),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
