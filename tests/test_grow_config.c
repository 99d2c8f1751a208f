/*  test_grow_config — the config's side of nodes that join a run
 *  (overlay/config_tree.c, overlay/config_join.c, docs/adapt.md "Grow"):
 *  offered tree[] entries (joins_at_s), platform.join_slots and
 *  platform.admit, their refusals and round trip, and the operations on a
 *  loaded tree: config_attach / config_detach_last, config_add_vacant /
 *  config_fill_vacant, config_node_parse.
 */
#include "overlay/config.h"
#include "overlay/util.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TASKS "\"tasks\": {\"count\": 10, \"input_mb\": 1, \"units\": 1}"
#define ROOT "{\"name\": \"r\", \"compute\": 1}"
#define KID(n) "{\"name\": \"" n "\", \"parent\": \"r\", \"compute\": 1, \"link_mbps\": 5}"

static config_t *
load_text (const char *text)
{
    char err[TF_ERRLEN] = "";
    config_t *config = config_load_string (text, "t.json", err, sizeof err);
    if (!config)
        fail_msg ("%s", err);
    return config;
}

/*  The text must be refused with a message containing want. */
static void
refused (const char *text, const char *want)
{
    char err[TF_ERRLEN] = "";
    config_t *config = config_load_string (text, "t.json", err, sizeof err);
    if (config)
        fail_msg ("loaded, expected: %s", want);
    if (!strstr (err, want))
        fail_msg ("\"%s\" does not contain \"%s\"", err, want);
}

static const char *offering =
    "{" TASKS ", \"platform\": {\"join_slots\": 2, \"admit\": \"always\"},"
    " \"tree\": [" ROOT ", " KID ("a") ","
    " {\"name\": \"j1\", \"parent\": \"a\", \"joins_at_s\": 5, \"compute\": 2,"
    "  \"link_mbps\": 3},"
    " {\"name\": \"j2\", \"joins_at_s\": 0, \"compute\": 4, \"link_mbps\": 6}]}";

static void
test_offered_nodes_leave_the_tree (void **state)
{
    (void) state;
    config_t *c = load_text (offering);
    assert_int_equal (c->nnodes, 2);
    assert_int_equal (c->noffered, 2);
    assert_int_equal (c->join_slots, 2);
    assert_int_equal (c->platform.admit, RECLAIM_ALWAYS);
    assert_int_equal (config_joins (c), 4);
    assert_int_equal (c->capacity, 2 + 2 + 2);
    assert_int_equal (config_find_node (c, "j1"), -1);
    assert_string_equal (c->offered[0].name, "j1");
    assert_int_equal (c->offered[0].parent, config_find_node (c, "a"));
    assert_true (c->offered[0].joins_at_s == 5);
    assert_string_equal (c->offered[1].name, "j2");
    assert_int_equal (c->offered[1].parent, -1);
    assert_true (c->offered[1].compute_rate == 4);

    /*  Round trip: the same offered nodes and options. */
    char *text = config_to_json (c);
    config_t *d = load_text (text);
    assert_int_equal (d->nnodes, 2);
    assert_int_equal (d->noffered, 2);
    assert_int_equal (d->join_slots, 2);
    assert_int_equal (d->platform.admit, RECLAIM_ALWAYS);
    assert_int_equal (d->capacity, c->capacity);
    for (int o = 0; o < 2; o++) {
        assert_string_equal (d->offered[o].name, c->offered[o].name);
        assert_int_equal (d->offered[o].parent, c->offered[o].parent);
        assert_true (d->offered[o].joins_at_s == c->offered[o].joins_at_s);
        assert_true (d->offered[o].link_mbps == c->offered[o].link_mbps);
    }
    free (text);
    config_destroy (&d);
    config_destroy (&c);

    /*  admit never round-trips too (gated is the default, left out). */
    c = load_text ("{" TASKS ", \"platform\": {\"admit\": \"never\"}, \"tree\": [" ROOT "]}");
    assert_int_equal (c->platform.admit, RECLAIM_NEVER);
    assert_int_equal (c->capacity, 1);
    text = config_to_json (c);
    d = load_text (text);
    assert_int_equal (d->platform.admit, RECLAIM_NEVER);
    free (text);
    config_destroy (&d);
    config_destroy (&c);
}

static void
test_bad_offers_are_refused (void **state)
{
    (void) state;
    refused ("{" TASKS ", \"tree\": [" ROOT ", {\"name\": \"j\", \"parent\": \"nope\","
             " \"joins_at_s\": 1, \"compute\": 1, \"link_mbps\": 1}]}",
             "parent \"nope\" is not a node of the tree");
    refused ("{" TASKS ", \"tree\": [" ROOT ", {\"name\": \"j\", \"joins_at_s\": 1,"
             " \"compute\": 1}]}", "link_mbps");
    refused ("{" TASKS ", \"tree\": [" ROOT ", {\"name\": \"j\", \"joins_at_s\": -1,"
             " \"compute\": 1, \"link_mbps\": 1}]}", "joins_at_s");
    refused ("{" TASKS ", \"tree\": [" ROOT ", {\"name\": \"j\", \"joins_at_s\": 1e8,"
             " \"compute\": 1, \"link_mbps\": 1}]}", "joins_at_s");
    refused ("{" TASKS ", \"platform\": {\"admit\": \"sometimes\"}, \"tree\": [" ROOT "]}",
             "platform.admit");
    /*  CONFIG_MAX_JOINS (16) join slots are allowed, 17 are not; 16
     *  slots and one offer are too many. */
    config_t *c = load_text ("{" TASKS ", \"platform\": {\"join_slots\": 16},"
                             " \"tree\": [" ROOT "]}");
    assert_int_equal (c->capacity, 17);
    config_destroy (&c);
    refused ("{" TASKS ", \"platform\": {\"join_slots\": 17}, \"tree\": [" ROOT "]}",
             "join_slots");
    refused ("{" TASKS ", \"platform\": {\"join_slots\": 16}, \"tree\": [" ROOT ","
             " {\"name\": \"j\", \"joins_at_s\": 1, \"compute\": 1, \"link_mbps\": 1}]}",
             "at most 16 nodes may join");
}

static config_node_t
parse_node (const char *text)
{
    json_t *json = json_loads (text, 0, NULL);
    assert_non_null (json);
    config_node_t node;
    char err[TF_ERRLEN] = "";
    if (config_node_parse (json, "node.json", &node, err, sizeof err) != 0)
        fail_msg ("%s", err);
    json_decref (json);
    return node;
}

static void
test_node_parse (void **state)
{
    (void) state;
    config_node_t node = parse_node ("{\"name\": \"n\", \"compute\": 7, \"link_mbps\": 2}");
    assert_string_equal (node.name, "n");
    assert_null (node.parent_name);
    assert_true (node.compute_rate == 7);
    assert_true (node.link_mbps == 2);
    assert_true (node.joins_at_s == -1);
    config_node_clear (&node);

    json_t *json = json_loads ("{\"name\": \"n\", \"compute\": 7}", 0, NULL);
    char err[TF_ERRLEN] = "";
    assert_int_equal (config_node_parse (json, "node.json", &node, err, sizeof err), -1);
    assert_non_null (strstr (err, "node.json"));
    assert_non_null (strstr (err, "link_mbps"));
    json_decref (json);
}

static void
test_attach_and_detach_last (void **state)
{
    (void) state;
    config_t *c = load_text ("{" TASKS ", \"platform\": {\"join_slots\": 2},"
                             " \"tree\": [" ROOT ", " KID ("a") "]}");
    int a = config_find_node (c, "a");
    config_node_t n = parse_node ("{\"name\": \"n\", \"compute\": 3, \"link_mbps\": 2}");
    char err[TF_ERRLEN] = "";
    assert_int_equal (config_attach (c, &n, a, err, sizeof err), 2);
    assert_int_equal (c->nnodes, 3);
    assert_int_equal (c->nodes[2].parent, a);
    assert_int_equal (c->nodes[2].depth, 2);
    assert_int_equal (c->nodes[2].index, 2);
    assert_string_equal (c->nodes[2].parent_name, "a");
    assert_int_equal (c->nodes[a].nchildren, 1);
    assert_int_equal (c->nodes[a].children[0], 2);
    assert_int_equal (config_find_node (c, "n"), 2);

    assert_int_equal (config_attach (c, &n, a, err, sizeof err), -1);   /* taken */
    assert_non_null (strstr (err, "\"n\""));
    free (n.name);
    n.name = xstrdup ("m");
    assert_int_equal (config_attach (c, &n, 7, err, sizeof err), -1);   /* no parent */
    assert_non_null (strstr (err, "parent 7"));
    assert_int_equal (config_attach (c, &n, -1, err, sizeof err), -1);
    assert_int_equal (config_attach (c, &n, 2, err, sizeof err), 3);    /* under n */
    assert_int_equal (c->nodes[3].depth, 3);
    free (n.name);
    n.name = xstrdup ("full");
    assert_int_equal (config_attach (c, &n, 0, err, sizeof err), -1);   /* capacity */
    assert_non_null (strstr (err, "no more nodes"));
    assert_int_equal (c->nnodes, 4);

    /*  n (index 2) has a child now: only m may be taken back, then n. */
    assert_int_equal (config_detach_last (c), 0);
    assert_int_equal (c->nnodes, 3);
    assert_int_equal (c->nodes[2].nchildren, 0);
    assert_int_equal (config_find_node (c, "m"), -1);
    assert_int_equal (config_detach_last (c), 0);
    assert_int_equal (c->nodes[a].nchildren, 0);
    assert_int_equal (config_find_node (c, "n"), -1);
    /*  a is a leaf but the root's only node left after it; the root's
     *  last child is a, so a may go; then the root never. */
    assert_int_equal (config_detach_last (c), 0);
    assert_int_equal (config_detach_last (c), -1);
    assert_int_equal (c->nnodes, 1);
    config_node_clear (&n);
    config_destroy (&c);

    /*  The last node with children is not taken back. */
    c = load_text ("{" TASKS ", \"tree\": [" ROOT ", " KID ("a") ", " KID ("b") ","
                   " {\"name\": \"c\", \"parent\": \"a\", \"compute\": 1, \"link_mbps\": 5}]}");
    /*  c (last, index 3) is a's child but a is not the root's last child:
     *  still c is its parent's last child and a leaf. */
    assert_int_equal (config_detach_last (c), 0);
    /*  b is last now: a leaf, the root's last child. */
    assert_int_equal (config_detach_last (c), 0);
    config_destroy (&c);
    c = load_text ("{" TASKS ", \"tree\": [" ROOT ", "
                   "{\"name\": \"c\", \"parent\": \"a\", \"compute\": 1, \"link_mbps\": 5}, "
                   KID ("a") "]}");
    /*  a is last in tree[] order but has c under it. */
    assert_int_equal (config_detach_last (c), -1);
    assert_int_equal (c->nnodes, 3);
    config_destroy (&c);
}

static void
test_vacant_slots (void **state)
{
    (void) state;
    config_t *c = load_text ("{" TASKS ", \"tree\": [" ROOT ", " KID ("a") "]}");
    int a = config_find_node (c, "a");
    config_add_vacant (c, a, 2);
    assert_int_equal (c->nnodes, 4);
    assert_int_equal (c->nodes[a].nchildren, 2);
    for (int k = 0; k < 2; k++) {
        const config_node_t *v = &c->nodes[c->nodes[a].children[k]];
        assert_true (v->vacant);
        assert_int_equal (v->parent, a);
    }
    assert_string_equal (c->nodes[2].name, "+vacant1");
    assert_string_equal (c->nodes[3].name, "+vacant2");
    config_node_t n = parse_node ("{\"name\": \"n\", \"compute\": 3, \"link_mbps\": 2}");
    char err[TF_ERRLEN] = "";
    assert_int_equal (config_fill_vacant (c, 3, &n, err, sizeof err), 0);
    assert_string_equal (c->nodes[3].name, "n");
    assert_false (c->nodes[3].vacant);
    assert_int_equal (c->nodes[3].parent, a);
    assert_true (c->nodes[3].compute_rate == 3);
    assert_true (c->nodes[2].vacant);
    assert_int_equal (config_fill_vacant (c, 3, &n, err, sizeof err), -1);
    assert_non_null (strstr (err, "not a vacant slot"));
    assert_int_equal (config_fill_vacant (c, a, &n, err, sizeof err), -1);
    assert_int_equal (config_fill_vacant (c, 9, &n, err, sizeof err), -1);
    config_node_clear (&n);
    config_destroy (&c);
}

/*  Re-parenting's side (docs/adapt.md, "Re-parent"): the slots each
 *  node keeps for a lost child's children, and a subtree moved. */
static void
test_move_and_reparent_slots (void **state)
{
    (void) state;
    config_t *c = load_text ("{" TASKS ", \"tree\": [" ROOT ", " KID ("a") ", " KID ("z") ","
                             " {\"name\": \"b\", \"parent\": \"a\", \"compute\": 1,"
                             "  \"link_mbps\": 5},"
                             " {\"name\": \"c\", \"parent\": \"b\", \"compute\": 1,"
                             "  \"link_mbps\": 5},"
                             " {\"name\": \"d\", \"parent\": \"b\", \"compute\": 1,"
                             "  \"link_mbps\": 5}]}");
    int r = 0, a = config_find_node (c, "a"), b = config_find_node (c, "b"),
        z = config_find_node (c, "z"), d = config_find_node (c, "d");
    assert_int_equal (config_reparent_slots (c, r), 1);   /* a has one child */
    assert_int_equal (config_reparent_slots (c, a), 2);   /* b has two */
    assert_int_equal (config_reparent_slots (c, b), 0);   /* leaves under it */
    config_add_vacant (c, b, 3);                          /* not counted */
    assert_int_equal (config_reparent_slots (c, a), 2);
    char err[TF_ERRLEN] = "";
    assert_int_equal (config_move (c, b, r, err, sizeof err), 0);
    assert_int_equal (c->nodes[b].parent, r);
    assert_string_equal (c->nodes[b].parent_name, "r");
    assert_int_equal (c->nodes[a].nchildren, 0);
    assert_int_equal (c->nodes[r].nchildren, 3);
    assert_int_equal (c->nodes[r].children[2], b);
    assert_int_equal (c->nodes[b].depth, 1);
    assert_int_equal (c->nodes[d].depth, 2);              /* the subtree too */
    assert_int_equal (config_move (c, b, d, err, sizeof err), -1);
    assert_non_null (strstr (err, "its own subtree"));
    assert_int_equal (config_move (c, r, z, err, sizeof err), -1);
    assert_int_equal (config_move (c, b, 99, err, sizeof err), -1);
    assert_int_equal (config_move (c, d, z, err, sizeof err), 0);
    assert_int_equal (c->nodes[b].nchildren, 4);          /* c and 3 vacant */
    assert_int_equal (c->nodes[z].children[0], d);
    config_destroy (&c);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_offered_nodes_leave_the_tree),
        cmocka_unit_test (test_bad_offers_are_refused),
        cmocka_unit_test (test_node_parse),
        cmocka_unit_test (test_attach_and_detach_last),
        cmocka_unit_test (test_vacant_slots),
        cmocka_unit_test (test_move_and_reparent_slots),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
