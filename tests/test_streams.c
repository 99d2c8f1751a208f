/*  test_streams — commands' result streams (node/streams.h), driven
 *  directly: up one at a time within the window, acked in order; from a
 *  child only for a task given to it, of sizes within limits, in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "node/streams.h"
#include "overlay/config.h"
#include "overlay/util.h"

static int
count_type (const core_acts_t *acts, core_action_type_t type)
{
    int k = 0;
    for (int i = 0; i < acts->n; i++)
        k += acts->items[i].type == type;
    return k;
}

/*  Streams go up one at a time, window chunks unacknowledged at most;
 *  acks come in order; the last releases the stream and lets the next
 *  go. */
static void
test_streams_go_up_one_at_a_time (void **state)
{
    (void) state;
    streams_t *s = streams_new (10, 2, 1);
    core_acts_t acts = {0};
    char err[TF_ERRLEN];
    streams_push_up (s, (core_done_t){.task = 3, .node = 2, .failed = 1}, 25);
    streams_push_up (s, (core_done_t){.task = 4, .node = 2}, 5);
    streams_pump_up (s, &acts);
    assert_int_equal (acts.n, 2);
    assert_int_equal (acts.items[1].type, CORE_ACT_SEND_RESULT);
    assert_int_equal (acts.items[1].task, 3);
    assert_int_equal (acts.items[1].failed, 1);
    assert_int_equal (acts.items[1].offset, 10);
    assert_int_equal (acts.items[1].count, 3);
    acts.n = 0;
    assert_int_equal (streams_ack_up (s, 3, 1, &acts, err, sizeof err), -1);
    assert_int_equal (streams_ack_up (s, 4, 0, &acts, err, sizeof err), -1);
    assert_int_equal (streams_ack_up (s, 3, 0, &acts, err, sizeof err), 0);
    streams_pump_up (s, &acts);
    assert_int_equal (acts.n, 1);
    assert_int_equal (acts.items[0].len, 5);
    assert_int_equal (streams_ack_up (s, 3, 1, &acts, err, sizeof err), 0);
    assert_int_equal (streams_ack_up (s, 3, 2, &acts, err, sizeof err), 0);
    assert_int_equal (count_type (&acts, CORE_ACT_RELEASE_RESULT), 1);
    acts.n = 0;
    streams_pump_up (s, &acts);
    assert_int_equal (acts.n, 1);
    assert_int_equal (acts.items[0].task, 4);
    core_stats_t st = {0};
    streams_add_stats (s, &st);
    assert_int_equal (st.results_up, 1);
    assert_int_equal (st.result_bytes_out, 25);
    free (acts.items);
    streams_destroy (&s);
    assert_null (s);
    streams_destroy (&s);
}

/*  Result chunk index of task 3 by node 2 from child 0: 15 bytes. */
static core_event_t
result (uint32_t index)
{
    return (core_event_t){.type = CORE_EV_RESULT, .child = 0, .task = 3, .node = 2,
                          .bytes = 15, .index = index, .count = 2,
                          .len = index == 1 ? 5 : 10};
}

static int
check (const streams_t *s, core_event_t ev, int given)
{
    char err[TF_ERRLEN];
    return streams_check_result (s, &ev, given, err, sizeof err);
}

/*  A stream from a child: only of a task given to it, from chunk 0, in
 *  order, of sizes within limits; each chunk acked; the last completes
 *  it. */
static void
test_streams_arrive_in_order (void **state)
{
    (void) state;
    streams_t *s = streams_new (10, 2, 1);
    core_acts_t acts = {0};
    assert_int_equal (check (s, result (0), 0), -1);   /* never given */
    assert_int_equal (check (s, result (1), 1), -1);   /* not from 0 */
    core_event_t ev = result (0);
    ev.bytes = 0;
    assert_int_equal (check (s, ev, 1), -1);
    ev.bytes = CONFIG_MAX_STREAM_BYTES + 1;
    ev.count = (uint32_t) ((CONFIG_MAX_STREAM_BYTES + 10) / 10);
    assert_int_equal (check (s, ev, 1), -1);
    ev = result (0);
    ev.count = 3;
    assert_int_equal (check (s, ev, 1), -1);
    ev = result (0);
    ev.len = 9;
    assert_int_equal (check (s, ev, 1), -1);
    ev = result (0);
    assert_int_equal (check (s, ev, 1), 0);
    core_done_t d;
    assert_int_equal (streams_take_result (s, &ev, &acts, &d), 0);
    assert_int_equal (count_type (&acts, CORE_ACT_ACK_RESULT), 1);
    assert_int_equal (streams_receiving (s, 0), 1);
    ev = result (1);
    ev.failed = 1;
    assert_int_equal (check (s, ev, 0), -1);           /* not as it began */
    ev = result (1);
    assert_int_equal (check (s, ev, 0), 0);            /* given: it is arriving */
    assert_int_equal (streams_take_result (s, &ev, &acts, &d), 1);
    assert_int_equal (d.task, 3);
    assert_int_equal (d.node, 2);
    assert_int_equal (streams_receiving (s, 0), 0);
    core_stats_t st = {0};
    streams_add_stats (s, &st);
    assert_int_equal (st.result_bytes_in, 15);
    free (acts.items);
    streams_destroy (&s);
}

/*  A lost child's half-arrived stream is dropped, once. */
static void
test_lost_child_drops_its_stream (void **state)
{
    (void) state;
    streams_t *s = streams_new (10, 2, 1);
    core_acts_t acts = {0};
    streams_drop_child (s, 0, &acts);
    assert_int_equal (acts.n, 0);
    core_event_t ev = result (0);
    core_done_t d;
    streams_take_result (s, &ev, &acts, &d);
    acts.n = 0;
    streams_drop_child (s, 0, &acts);
    assert_int_equal (acts.n, 1);
    assert_int_equal (acts.items[0].type, CORE_ACT_DROP_RESULT);
    assert_int_equal (acts.items[0].task, 3);
    streams_drop_child (s, 0, &acts);
    assert_int_equal (acts.n, 1);
    free (acts.items);
    streams_destroy (&s);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_streams_go_up_one_at_a_time),
        cmocka_unit_test (test_streams_arrive_in_order),
        cmocka_unit_test (test_lost_child_drops_its_stream),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
