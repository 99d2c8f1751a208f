/*  test_proto_actions — STATS's "actions" (overlay/proto_actions.c): the
 *  costly actions a node weighed round-trip, taken or not; none leaves
 *  the keys out; each malformed one is refused, named; and how an action
 *  reads in the log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "overlay/proto.h"
#include "overlay/proto_stats.h"
#include "overlay/util.h"
#include "tests/helpers.h"

static void
test_actions_round_trip (void **state)
{
    (void) state;
    proto_action_t items[2] = {
        {.node = "Lab0", .what = "reclaim", .child = "Lab4", .hold = 1, .tasks = 2,
         .saved_s = 11.2, .cost_s = 0.37, .taken = 1, .at_s = 43.7},
        {.node = "Lab0", .what = "reclaim", .child = "Tenn", .hold = 1, .tasks = 2,
         .saved_s = -0.5, .cost_s = 20, .taken = 0, .at_s = 50},
    };
    proto_stats_t s = {.speed_mean = 1, .actions = {.items = items, .n = 2, .dropped = 4}};
    zmsg_t *msg = proto_stats_encode (PROTO_STATS, &s);
    proto_msg_t m;
    char err[TF_ERRLEN] = "";
    if (proto_decode (&msg, &m, err, sizeof err) < 0)
        fail_msg ("%s", err);
    proto_stats_t d;
    if (proto_stats_decode (m.object, NULL, 0, 0, &d, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_int_equal (d.actions.n, 2);
    assert_int_equal (d.actions.dropped, 4);
    const proto_action_t *a = &d.actions.items[0];
    assert_string_equal (a->node, "Lab0");
    assert_string_equal (a->what, "reclaim");
    assert_string_equal (a->child, "Lab4");
    assert_int_equal (a->hold, 1);
    assert_int_equal (a->tasks, 2);
    assert_true (a->saved_s == 11.2 && a->cost_s == 0.37 && a->at_s == 43.7);
    assert_true (a->taken);
    assert_false (d.actions.items[1].taken);
    assert_true (d.actions.items[1].saved_s == -0.5);
    proto_stats_clear (&d);
    proto_msg_clear (&m);

    proto_stats_t none = {.speed_mean = 1};
    msg = proto_stats_encode (PROTO_STATS, &none);
    assert_int_equal (proto_decode (&msg, &m, err, sizeof err), 0);
    assert_null (json_object_get (m.object, "actions"));
    assert_null (json_object_get (m.object, "actions_dropped"));
    proto_msg_clear (&m);
}

#define A "\"node\": \"Lab0\", \"child\": \"Lab4\", \"saved_s\": 1, \"cost_s\": 0.5, " \
          "\"taken\": true, \"at_s\": 3"

static void
test_bad_actions_are_refused (void **state)
{
    (void) state;
    test_stats_refused ("{\"actions\": {}}", "\"actions\"");
    test_stats_refused ("{\"actions_dropped\": -1}", "\"actions_dropped\"");
    test_stats_refused ("{\"actions\": [1]}", "actions[0]");
    test_stats_refused ("{\"actions\": [{" A ", \"what\": \"reclaim\", \"hold\": 1}]}",
                        "actions[0]");
    test_stats_refused ("{\"actions\": [{" A
                        ", \"what\": \"grow\", \"hold\": 1, \"tasks\": 0}]}",
                        "\"what\"");
    test_stats_refused ("{\"actions\": [{" A
                        ", \"what\": \"reclaim\", \"hold\": 1, \"tasks\": -1}]}",
                        "\"tasks\"");
    test_stats_refused ("{\"actions\": [{" A ", \"what\": \"reclaim\", \"hold\": 100000, "
             "\"tasks\": 0}]}", "\"hold\"");
    test_stats_refused ("{\"actions\": [{" A
                        ", \"what\": \"reclaim\", \"hold\": 1, \"tasks\": 0, "
                        "\"more\": 1}]}",
                        "actions[0]");
    test_stats_refused (
        "{\"actions\": [{\"node\": \"\", \"child\": \"Lab4\", \"saved_s\": 1, "
        "\"cost_s\": 0.5, \"taken\": true, \"at_s\": 3, \"what\": \"reclaim\", "
        "\"hold\": 1, \"tasks\": 0}]}",
        "\"node\"");
    test_stats_refused (
        "{\"actions\": [{\"node\": \"a\", \"child\": \"b\", \"saved_s\": 1, "
        "\"cost_s\": 0.5, \"taken\": true, \"at_s\": -3, \"what\": \"reclaim\", "
        "\"hold\": 1, \"tasks\": 0}]}",
        "\"at_s\"");
    json_t *arr = json_array ();
    for (int i = 0; i <= PROTO_MAX_ACTIONS; i++)
        json_array_append_new (arr, json_pack ("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:b, "
                                               "s:f}", "node", "a", "what", "restore",
                                               "child", "b", "hold", 3, "tasks", 0,
                                               "saved_s", 0.0, "cost_s", 0.0, "taken", 1,
                                               "at_s", 1.0));
    json_t *o = json_pack ("{s:o}", "actions", arr);
    char *big = json_dumps (o, 0);
    test_stats_refused (big, "at most");
    free (big);
    json_decref (o);
}

static void
test_action_text (void **state)
{
    (void) state;
    char buf[256];
    proto_action_t a = {.node = "Lab0", .what = "reclaim", .child = "Lab4", .hold = 1,
                        .tasks = 2, .saved_s = 11.23, .cost_s = 0.37, .taken = 1};
    proto_action_text (&a, buf, sizeof buf);
    assert_string_equal (buf, "reclaim from Lab4: 2 tasks back, it holds 1 (saves 11.2 s, "
                              "costs 0.4 s)");
    a.taken = 0;
    a.tasks = 1;
    proto_action_text (&a, buf, sizeof buf);
    assert_string_equal (buf, "no reclaim from Lab4: 1 task would save 11.2 s and cost "
                              "0.4 s");
    a = (proto_action_t){.what = "restore", .child = "Lab4", .hold = 3, .taken = 1};
    proto_action_text (&a, buf, sizeof buf);
    assert_string_equal (buf, "restore Lab4: it holds 3 again");
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_actions_round_trip),
        cmocka_unit_test (test_bad_actions_are_refused),
        cmocka_unit_test (test_action_text),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
