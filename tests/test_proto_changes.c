/*  test_proto_changes — STATS's "changes" and "changes_dropped": a
 *  node's declared changes round-trip; none and no drops leave the keys
 *  out; every malformed change is refused, named: too many, a bad node
 *  name, an unknown "what", a number not finite, a negative time, a key
 *  missing or unknown.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "overlay/proto.h"
#include "overlay/proto_stats.h"
#include "overlay/util.h"
#include "tests/helpers.h"

static void
test_changes_round_trip (void **state)
{
    (void) state;
    proto_change_t items[2] = {
        {.node = "Lab3", .what = "compute", .from = 23.86, .to = 6.0, .at_s = 36.1},
        {.node = "SB0", .what = "ir_send", .from = 0.0342, .to = -0.001, .at_s = 40},
    };
    proto_stats_t s = {.speed_mean = 1, .changes = {.items = items, .n = 2, .dropped = 3}};
    zmsg_t *msg = proto_stats_encode (PROTO_STATS, &s);
    proto_msg_t m;
    char err[TF_ERRLEN] = "";
    if (proto_decode (&msg, &m, err, sizeof err) < 0)
        fail_msg ("%s", err);
    proto_stats_t d;
    if (proto_stats_decode (m.object, NULL, 0, 0, &d, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_int_equal (d.changes.n, 2);
    assert_int_equal (d.changes.dropped, 3);
    assert_string_equal (d.changes.items[0].node, "Lab3");
    assert_string_equal (d.changes.items[0].what, "compute");
    assert_true (d.changes.items[0].from == 23.86 && d.changes.items[0].to == 6.0);
    assert_true (d.changes.items[0].at_s == 36.1);
    assert_string_equal (d.changes.items[1].what, "ir_send");
    assert_true (d.changes.items[1].to == -0.001);
    proto_stats_clear (&d);
    proto_msg_clear (&m);

    proto_stats_t none = {.speed_mean = 1};
    msg = proto_stats_encode (PROTO_REPORT, &none);
    assert_int_equal (proto_decode (&msg, &m, err, sizeof err), 0);
    assert_null (json_object_get (m.object, "changes"));
    assert_null (json_object_get (m.object, "changes_dropped"));
    assert_int_equal (proto_stats_decode (m.object, NULL, 0, 0, &d, err, sizeof err), 0);
    assert_int_equal (d.changes.n, 0);
    assert_null (d.changes.items);
    proto_msg_clear (&m);
}

#define OK "\"node\": \"Lab3\", \"what\": \"link\", \"from\": 10, \"to\": 5"

static void
test_bad_changes_are_refused (void **state)
{
    (void) state;
    test_stats_refused ("{\"changes\": {}}", "\"changes\"");
    test_stats_refused ("{\"changes_dropped\": -1}", "\"changes_dropped\"");
    test_stats_refused ("{\"changes\": [3]}", "changes[0]");
    test_stats_refused ("{\"changes\": [{" OK "}]}", "at_s");
    test_stats_refused ("{\"changes\": [{" OK ", \"at_s\": 1, \"extra\": 1}]}",
                        "changes[0]");
    test_stats_refused ("{\"changes\": [{" OK ", \"at_s\": -1}]}", "\"at_s\"");
    test_stats_refused ("{\"changes\": [{" OK ", \"at_s\": null}]}", "changes[0]");
    test_stats_refused (
        "{\"changes\": [{\"node\": \"\", \"what\": \"link\", \"from\": 1, \"to\": 2, "
        "\"at_s\": 1}]}",
        "\"node\"");
    test_stats_refused (
        "{\"changes\": [{\"node\": \"x\", \"what\": \"speed\", \"from\": 1, \"to\": 2, "
        "\"at_s\": 1}]}",
        "\"what\"");
    test_stats_refused (
        "{\"changes\": [{\"node\": \"x\", \"what\": \"compute\", \"from\": \"1\", "
        "\"to\": 2, \"at_s\": 1}]}",
        "changes[0]");
    /*  A name of PROTO_CHANGE_NODE_MAX characters is one too long. */
    char name[PROTO_CHANGE_NODE_MAX + 1];
    memset (name, 'a', PROTO_CHANGE_NODE_MAX);
    name[PROTO_CHANGE_NODE_MAX] = '\0';
    char text[512];
    snprintf (text, sizeof text, "{\"changes\": [{\"node\": \"%s\", \"what\": \"link\", "
              "\"from\": 1, \"to\": 2, \"at_s\": 1}]}", name);
    test_stats_refused (text, "\"node\"");
    /*  One more than PROTO_MAX_CHANGES, each valid. */
    json_t *a = json_array ();
    for (int i = 0; i <= PROTO_MAX_CHANGES; i++)
        json_array_append_new (a, json_pack ("{s:s, s:s, s:f, s:f, s:f}", "node", "x",
                                             "what", "ir_recv", "from", 0.0, "to", 1.0,
                                             "at_s", 2.0));
    json_t *o = json_pack ("{s:o}", "changes", a);
    char *big = json_dumps (o, 0);
    test_stats_refused (big, "at most");
    json_array_remove (a, 0);
    proto_stats_t d;
    char err[TF_ERRLEN];
    assert_int_equal (proto_stats_decode (o, NULL, 0, 0, &d, err, sizeof err), 0);
    assert_int_equal (d.changes.n, PROTO_MAX_CHANGES);
    proto_stats_clear (&d);
    free (big);
    json_decref (o);
}

/*  How a change reads: rates to 0.1 with their unit, IRs to 4
 *  significant digits without one. */
static void
test_change_text (void **state)
{
    (void) state;
    char buf[128];
    proto_change_t c = {.node = "Lab3", .what = "compute", .from = 23.86, .to = 5.97};
    proto_change_text (&c, buf, sizeof buf);
    assert_string_equal (buf, "compute 23.9 -> 6.0 units/s");
    c = (proto_change_t){.node = "SB0", .what = "link", .from = 7.73, .to = 3.84};
    proto_change_text (&c, buf, sizeof buf);
    assert_string_equal (buf, "link 7.7 -> 3.8 MB/s");
    c = (proto_change_t){.node = "SB0", .what = "ir_send", .from = 0.0342, .to = 0.061094};
    proto_change_text (&c, buf, sizeof buf);
    assert_string_equal (buf, "ir_send 0.0342 -> 0.06109");
    assert_string_equal (proto_change_unit ("ir_recv"), "");
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_changes_round_trip),
        cmocka_unit_test (test_bad_changes_are_refused),
        cmocka_unit_test (test_change_text),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
