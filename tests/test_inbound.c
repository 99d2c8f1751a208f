/*  test_inbound — what a node hears, as its core's events: each message
 *  a parent or a child sends becomes the event it stands for, field by
 *  field; every other command from that side is refused with its name;
 *  and an action routed (node/route.h), encoded as the runtime encodes
 *  it and decoded again, comes back as the very event route gave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/inbound.h"
#include "node/route.h"
#include "overlay/util.h"

/*  Decode msg (consumed) into *m; the caller clears it. */
static void
decoded (zmsg_t *msg, proto_msg_t *m)
{
    char err[TF_ERRLEN];
    if (proto_decode (&msg, m, err, sizeof err) != 0)
        fail_msg ("decode: %s", err);
}

static zframe_t *
bytes (size_t n)
{
    zframe_t *f = zframe_new (NULL, n);
    memset (zframe_data (f), 'x', n);
    return f;
}

static void
test_a_parent_s_chunk_and_result_ack (void **state)
{
    (void) state;
    proto_msg_t m;
    core_event_t ev;
    char why[64];
    uint32_t avoid[2] = {4, 6};
    zframe_t *f = bytes (300);
    decoded (proto_chunk (9, 2.5, 1000, 1, 4, CORE_KIND_COMMAND, avoid, 2, &f), &m);
    assert_int_equal (inbound_from_parent (&m, 7.5, &ev, why, sizeof why), 0);
    assert_int_equal (ev.type, CORE_EV_CHUNK);
    assert_true (ev.now == 7.5);
    assert_int_equal (ev.task, 9);
    assert_true (ev.units == 2.5);
    assert_int_equal (ev.bytes, 1000);
    assert_int_equal (ev.index, 1);
    assert_int_equal (ev.count, 4);
    assert_int_equal (ev.len, 300);   /* the payload's size */
    assert_int_equal (ev.kind, CORE_KIND_COMMAND);
    assert_int_equal (ev.navoid, 2);
    assert_int_equal (ev.avoid[0], 4);
    assert_int_equal (ev.avoid[1], 6);
    proto_msg_clear (&m);

    decoded (proto_result_ack (12, 3), &m);
    assert_int_equal (inbound_from_parent (&m, 1, &ev, why, sizeof why), 0);
    assert_int_equal (ev.type, CORE_EV_RESULT_ACK);
    assert_int_equal (ev.task, 12);
    assert_int_equal (ev.index, 3);
    assert_true (ev.now == 1);
    proto_msg_clear (&m);
}

/*  What only a child, or the controller, sends is refused from the
 *  parent, with the command's name. */
static void
test_a_parent_is_refused_what_it_never_sends (void **state)
{
    (void) state;
    proto_done_t d = {.task = 1, .node = 2};
    double b[BOUND_MODEL_COUNT] = {1, 1, 1};
    zframe_t *f = bytes (10);
    zmsg_t *msgs[] = {proto_request (2), proto_ack (1, 0), proto_done (PROTO_DONE, &d, 1, NULL),
                      proto_result (1, 2, 0, 10, 0, 1, &f), proto_subtree (b),
                      proto_empty (PROTO_BEAT), proto_empty (PROTO_STOP),
                      proto_done (PROTO_RETURN, &d, 1, NULL)};
    const char *names[] = {"REQUEST", "ACK", "DONE", "RESULT", "SUBTREE", "BEAT", "STOP",
                           "RETURN"};
    for (size_t i = 0; i < sizeof msgs / sizeof *msgs; i++) {
        proto_msg_t m;
        core_event_t ev;
        char why[64] = "";
        decoded (msgs[i], &m);
        assert_int_equal (inbound_from_parent (&m, 1, &ev, why, sizeof why), -1);
        assert_string_equal (why, names[i]);
        proto_msg_clear (&m);
    }
}

static void
test_a_child_s_request_ack_and_done (void **state)
{
    (void) state;
    proto_msg_t m;
    core_event_t ev;
    core_done_t *done;
    char why[64];
    decoded (proto_request (5), &m);
    assert_int_equal (inbound_from_child (&m, 3, 2, &ev, &done, why, sizeof why),
                      INBOUND_EVENT);
    assert_int_equal (ev.type, CORE_EV_REQUEST);
    assert_int_equal (ev.child, 3);
    assert_int_equal (ev.n, 5);
    assert_true (ev.now == 2);
    assert_null (done);
    proto_msg_clear (&m);

    decoded (proto_ack (8, 2), &m);
    assert_int_equal (inbound_from_child (&m, 1, 2, &ev, &done, why, sizeof why),
                      INBOUND_EVENT);
    assert_int_equal (ev.type, CORE_EV_ACK);
    assert_int_equal (ev.child, 1);
    assert_int_equal (ev.task, 8);
    assert_int_equal (ev.index, 2);
    assert_null (done);
    proto_msg_clear (&m);

    proto_done_t d[3] = {{.task = 4, .node = 1}, {.task = 7, .node = 2}, {.task = 9, .node = 1}};
    decoded (proto_done (PROTO_DONE, d, 3, NULL), &m);
    assert_int_equal (inbound_from_child (&m, 2, 2, &ev, &done, why, sizeof why),
                      INBOUND_EVENT);
    assert_int_equal (ev.type, CORE_EV_DONE);
    assert_int_equal (ev.child, 2);
    assert_int_equal (ev.ndone, 3);
    assert_non_null (done);
    assert_ptr_equal (ev.done, done);
    for (int i = 0; i < 3; i++) {
        assert_int_equal (done[i].task, d[i].task);
        assert_int_equal (done[i].node, d[i].node);
    }
    free (done);
    proto_msg_clear (&m);
}

static void
test_a_child_s_result_and_subtree (void **state)
{
    (void) state;
    proto_msg_t m;
    core_event_t ev;
    core_done_t *done;
    char why[64];
    zframe_t *f = bytes (123);
    decoded (proto_result (6, 4, 1, 5000, 2, 5, &f), &m);
    assert_int_equal (inbound_from_child (&m, 1, 3, &ev, &done, why, sizeof why),
                      INBOUND_EVENT);
    assert_int_equal (ev.type, CORE_EV_RESULT);
    assert_int_equal (ev.child, 1);
    assert_int_equal (ev.task, 6);
    assert_int_equal (ev.node, 4);
    assert_int_equal (ev.failed, 1);
    assert_int_equal (ev.bytes, 5000);
    assert_int_equal (ev.index, 2);
    assert_int_equal (ev.count, 5);
    assert_int_equal (ev.len, 123);
    assert_null (done);
    proto_msg_clear (&m);

    double b[BOUND_MODEL_COUNT] = {1, 2, 3};
    decoded (proto_subtree (b), &m);
    assert_int_equal (inbound_from_child (&m, 1, 3, &ev, &done, why, sizeof why),
                      INBOUND_SUBTREE);
    assert_null (done);
    proto_msg_clear (&m);
}

static void
test_a_child_is_refused_what_it_never_sends (void **state)
{
    (void) state;
    zframe_t *f = bytes (10);
    zmsg_t *msgs[] = {proto_chunk (1, 1, 10, 0, 1, 0, NULL, 0, &f), proto_result_ack (1, 0),
                      proto_empty (PROTO_BEAT), proto_empty (PROTO_STOP),
                      proto_empty (PROTO_FINISHED), proto_reclaim (1, 0)};
    const char *names[] = {"CHUNK", "RESULT_ACK", "BEAT", "STOP", "FINISHED", "RECLAIM"};
    for (size_t i = 0; i < sizeof msgs / sizeof *msgs; i++) {
        proto_msg_t m;
        core_event_t ev;
        core_done_t *done = (core_done_t *) 1;
        char why[64] = "";
        decoded (msgs[i], &m);
        assert_int_equal (inbound_from_child (&m, 0, 1, &ev, &done, why, sizeof why),
                          INBOUND_REFUSED);
        assert_string_equal (why, names[i]);
        assert_null (done);
        proto_msg_clear (&m);
    }
}

/*  Route an action (node/route.h), encode its event as node/act.c does
 *  (inbound_encode), decode it on the other side: the same event, at the
 *  receiver's time. */
static core_event_t
round_trip (const core_action_t *a, int slot, core_done_t **done)
{
    route_t r;
    assert_int_equal (route_action (a, slot, &r), 0);
    const core_event_t *ev = &r.ev;
    zframe_t *f = bytes (ev->len);
    zmsg_t *msg = inbound_encode (ev, &f);
    assert_non_null (msg);
    if (ev->type == CORE_EV_CHUNK || ev->type == CORE_EV_RESULT)
        assert_null (f);   /* the payload is the message's */
    zframe_destroy (&f);
    proto_msg_t m;
    decoded (msg, &m);
    core_event_t got;
    char why[64];
    *done = NULL;
    if (r.to == ROUTE_PARENT)
        assert_int_equal (inbound_from_child (&m, slot, 0, &got, done, why, sizeof why),
                          INBOUND_EVENT);
    else
        assert_int_equal (inbound_from_parent (&m, 0, &got, why, sizeof why), 0);
    assert_int_equal (got.type, ev->type);
    assert_int_equal (got.child, ev->child);
    assert_int_equal (got.task, ev->task);
    assert_int_equal (got.n, ev->n);
    assert_true (got.units == ev->units);
    assert_int_equal (got.bytes, ev->bytes);
    assert_int_equal (got.index, ev->index);
    assert_int_equal (got.count, ev->count);
    assert_int_equal (got.len, ev->len);
    assert_int_equal (got.kind, ev->kind);
    assert_int_equal (got.navoid, ev->navoid);
    for (uint32_t i = 0; i < ev->navoid; i++)
        assert_int_equal (got.avoid[i], ev->avoid[i]);
    assert_int_equal (got.node, ev->node);
    assert_int_equal (got.failed, ev->failed);
    assert_int_equal (got.ndone, ev->ndone);
    for (uint32_t i = 0; i < ev->ndone; i++) {
        assert_int_equal (got.done[i].task, ev->done[i].task);
        assert_int_equal (got.done[i].node, ev->done[i].node);
    }
    proto_msg_clear (&m);
    return got;
}

static void
test_routed_events_survive_the_wire (void **state)
{
    (void) state;
    core_done_t done[2] = {{.task = 3, .node = 5}, {.task = 8, .node = 6}};
    core_action_t acts[] = {
        {.type = CORE_ACT_REQUEST, .n = 4},
        {.type = CORE_ACT_ACK, .task = 17, .index = 3},
        {.type = CORE_ACT_REPORT, .done = done, .ndone = 2},
        {.type = CORE_ACT_SEND_RESULT, .task = 11, .node = 2, .failed = 1, .bytes = 900,
         .index = 1, .count = 2, .offset = 512, .len = 388},
        {.type = CORE_ACT_SEND_CHUNK, .child = 1, .task = 5, .units = 1.25, .bytes = 3000,
         .index = 2, .count = 3, .offset = 2048, .len = 952, .kind = CORE_KIND_COMMAND,
         .avoid = {2, 9, 4}, .navoid = 3},
        {.type = CORE_ACT_SEND_CHUNK, .child = 0, .task = 6, .units = 2, .bytes = 100,
         .index = 0, .count = 1, .len = 100},
        {.type = CORE_ACT_ACK_RESULT, .child = 2, .task = 11, .index = 1},
        {.type = CORE_ACT_RECLAIM, .child = 1, .n = 2, .count = 5},
        {.type = CORE_ACT_RETURN, .done = done, .ndone = 2},
    };
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
        core_done_t *got;
        round_trip (&acts[i], 2, &got);
        free (got);
    }
}

/*  Only events that travel between nodes have a message. */
static void
test_local_events_have_no_message (void **state)
{
    (void) state;
    core_event_type_t local[] = {CORE_EV_START, CORE_EV_COMPUTED, CORE_EV_TICK,
                                 CORE_EV_STREAM, CORE_EV_LOST, CORE_EV_TAKE_BACK};
    for (size_t i = 0; i < sizeof local / sizeof *local; i++) {
        core_event_t ev = {.type = local[i]};
        assert_null (inbound_encode (&ev, NULL));
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_parent_s_chunk_and_result_ack),
        cmocka_unit_test (test_a_parent_is_refused_what_it_never_sends),
        cmocka_unit_test (test_a_child_s_request_ack_and_done),
        cmocka_unit_test (test_a_child_s_result_and_subtree),
        cmocka_unit_test (test_a_child_is_refused_what_it_never_sends),
        cmocka_unit_test (test_routed_events_survive_the_wire),
        cmocka_unit_test (test_local_events_have_no_message),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
