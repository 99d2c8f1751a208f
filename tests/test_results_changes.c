/*  test_results_changes — an adapting run's declared changes in the
 *  results: each announced once however many STATS carry it, kept when
 *  the message is gone, and results.json's "changes" every node's, by
 *  time, with who declared each and "changes_dropped" when a node kept
 *  fewer; [] when an adapting run changed nothing, absent when the run
 *  does not adapt. The same of the actions nodes weighed: announced once,
 *  results.json's "actions" by time across nodes, ties in node order,
 *  [] when none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/util.h"

static const char *const tree_fmt =
    "{\"name\": \"small\","
    " \"tasks\": {\"count\": 5, \"input_mb\": 1, \"units\": 2},"
    " \"policy\": \"fcfs\","
    " \"platform\": {\"time_scale\": 10, \"adapt\": %s},"
    " \"tree\": ["
    "  {\"name\": \"root\", \"compute\": 4},"
    "  {\"name\": \"a\", \"parent\": \"root\", \"compute\": 2, \"link_mbps\": 5},"
    "  {\"name\": \"b\", \"parent\": \"root\", \"compute\": 3, \"link_mbps\": 5}"
    " ]}";

static config_t *
load (int adapt)
{
    char text[1024], err[TF_ERRLEN];
    snprintf (text, sizeof text, tree_fmt, adapt ? "true" : "false");
    config_t *cfg = config_load_string (text, "<test>", err, sizeof err);
    if (!cfg)
        fail_msg ("config: %s", err);
    return cfg;
}

/*  A STATS body to node, decoded and filed as the controller does, the
 *  decoded message freed at once. */
static void
feed (results_t *r, int node, const char *stats)
{
    json_t *json = json_loads (stats, 0, NULL);
    assert_non_null (json);
    proto_stats_t s;
    char err[TF_ERRLEN];
    if (proto_stats_decode (json, NULL, 0, 0, &s, err, sizeof err) != 0
        || results_update_stats (r, node, &s, err, sizeof err) != 0)
        fail_msg ("refused: %s", err);
    proto_stats_clear (&s);
    json_decref (json);
}

#define LINK_B "{\"node\": \"b\", \"what\": \"link\", \"from\": 5, \"to\": 2.5, \"at_s\": 40}"
#define IR_B "{\"node\": \"b\", \"what\": \"ir_send\", \"from\": 0.03, \"to\": 0.05, \"at_s\": 60}"
#define C_A "{\"node\": \"a\", \"what\": \"compute\", \"from\": 2, \"to\": 0.5, \"at_s\": 50}"

static void
test_changes_announced_once (void **state)
{
    (void) state;
    config_t *cfg = load (1);
    results_t *r = results_new (cfg);
    const proto_change_t *c;
    assert_int_equal (results_new_changes (r, 0, &c), 0);
    feed (r, 0, "{\"changes\": [" LINK_B "]}");
    assert_int_equal (results_new_changes (r, 0, &c), 1);
    assert_string_equal (c[0].node, "b");
    assert_true (c[0].to == 2.5);
    assert_int_equal (results_new_changes (r, 0, &c), 0);
    feed (r, 0, "{\"changes\": [" LINK_B "]}");
    assert_int_equal (results_new_changes (r, 0, &c), 0);
    feed (r, 0, "{\"changes\": [" LINK_B ", " IR_B "]}");
    assert_int_equal (results_new_changes (r, 0, &c), 1);
    assert_string_equal (c[0].what, "ir_send");
    results_destroy (&r);
    config_destroy (&cfg);
}

static void
test_changes_in_results_json_by_time (void **state)
{
    (void) state;
    config_t *cfg = load (1);
    results_t *r = results_new (cfg);
    json_t *o = results_to_json (r);
    json_t *a = json_object_get (o, "changes");
    assert_true (json_is_array (a) && json_array_size (a) == 0);
    assert_null (json_object_get (o, "changes_dropped"));
    json_decref (o);

    feed (r, 0, "{\"changes\": [" LINK_B ", " IR_B "], \"changes_dropped\": 2}");
    feed (r, 1, "{\"changes\": [" C_A "]}");
    o = results_to_json (r);
    a = json_object_get (o, "changes");
    assert_int_equal (json_array_size (a), 3);
    static const char *const order[3][3] = {
        {"b", "link", "root"}, {"a", "compute", "a"}, {"b", "ir_send", "root"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *e = json_array_get (a, i);
        assert_string_equal (json_string_value (json_object_get (e, "node")), order[i][0]);
        assert_string_equal (json_string_value (json_object_get (e, "what")), order[i][1]);
        assert_string_equal (json_string_value (json_object_get (e, "by")), order[i][2]);
    }
    json_t *mid = json_array_get (a, 1);
    assert_true (json_number_value (json_object_get (mid, "from")) == 2);
    assert_true (json_number_value (json_object_get (mid, "to")) == 0.5);
    assert_true (json_number_value (json_object_get (mid, "at_s")) == 50);
    assert_int_equal (json_integer_value (json_object_get (o, "changes_dropped")), 2);
    json_decref (o);
    results_destroy (&r);
    config_destroy (&cfg);

    cfg = load (0);
    r = results_new (cfg);
    o = results_to_json (r);
    assert_null (json_object_get (o, "changes"));
    json_decref (o);
    results_destroy (&r);
    config_destroy (&cfg);
}

#define ACT(node, child, at) \
    "{\"node\": \"" node "\", \"what\": \"reclaim\", \"child\": \"" child "\", " \
    "\"hold\": 1, \"tasks\": 2, \"saved_s\": 3, \"cost_s\": 1, \"taken\": true, " \
    "\"at_s\": " at "}"

static void
test_actions_announced_once_and_by_time (void **state)
{
    (void) state;
    config_t *cfg = load (1);
    results_t *r = results_new (cfg);
    json_t *o = results_to_json (r);
    json_t *a = json_object_get (o, "actions");
    assert_true (json_is_array (a) && json_array_size (a) == 0);
    json_decref (o);
    const proto_action_t *x;
    feed (r, 0, "{\"actions\": [" ACT ("root", "a", "30") ", " ACT ("root", "b", "10") "]}");
    feed (r, 1, "{\"actions\": [" ACT ("a", "a1", "20") ", " ACT ("a", "a2", "30") "]}");
    assert_int_equal (results_new_actions (r, 1, &x), 2);
    assert_int_equal (results_new_actions (r, 1, &x), 0);
    feed (r, 1, "{\"actions\": [" ACT ("a", "a1", "20") ", " ACT ("a", "a2", "30") ", "
                ACT ("a", "a3", "40") "]}");
    assert_int_equal (results_new_actions (r, 1, &x), 1);
    assert_string_equal (x[0].child, "a3");
    o = results_to_json (r);
    a = json_object_get (o, "actions");
    /*  By time; the two at 30 s in node order: root's before a's. */
    static const char *const order[5] = {"b", "a1", "a", "a2", "a3"};
    assert_int_equal (json_array_size (a), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal (json_string_value (json_object_get (json_array_get (a, i),
                                                                 "child")), order[i]);
    json_decref (o);
    results_destroy (&r);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_changes_announced_once),
        cmocka_unit_test (test_changes_in_results_json_by_time),
        cmocka_unit_test (test_actions_announced_once_and_by_time),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
