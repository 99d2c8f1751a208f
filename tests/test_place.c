/*  test_place — where a node offered to a running run joins, and whether
 *  it pays (controller/join.h, place_choose): the parent whose bound
 *  gains most, Weissman's gate on the remaining tasks, a fixed parent,
 *  no room, the config left as it was, and bad input refused.
 *
 *  Run from the repository root, or set TF_SRCDIR to it.
 */
#include "controller/join.h"
#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/util.h"
#include "tests/helpers.h"

#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*  Relative tolerance for bounds computed by hand. */
#define HAND_TOL 1e-9

/*  Room enough for a vacant slot count per node of every tree here. */
#define MAX_TEST_NODES 16

/*  A star whose root's one port is saturated (single-port model, Z = 1,
 *  w = 1): R computes 1 task/s, A (fast link, 10 tasks/s) and B (slow
 *  link, 1 task/s) 1 task/s each. R's port serves A first (0.1 s a task)
 *  and then B with what is left: 1 + 1 + 0.9 = 2.9 tasks/s. */
#define RELAY_TREE                                                              \
    "{'name': 'relay', 'tasks': {'count': 1000, 'input_mb': 1, 'units': 1},"   \
    " 'platform': {'join_slots': 2}, 'tree': ["                                 \
    "  {'name': 'R', 'compute': 1},"                                            \
    "  {'name': 'A', 'parent': 'R', 'compute': 1, 'link_mbps': 10},"            \
    "  {'name': 'B', 'parent': 'R', 'compute': 1, 'link_mbps': 1}]}"

/*  The node offered: like B, a slow link. Under R it competes for the
 *  saturated port and adds nothing; under A, whose port is idle, it gets
 *  its 1 task/s through A's fast link (0.1 s of R's port), so R's port
 *  serves A 2 tasks/s (0.2 s) and B 0.8: 1 + 2 + 0.8 = 3.8 tasks/s. */
#define SLOW_NODE "{'name': 'N', 'compute': 1, 'link_mbps': 1}"

/*  The reference fork (configs/fork7.json), with room for joins nodes. */
static config_t *
fork7_with_room (int joins)
{
    char path[1024], err[TF_ERRLEN] = "";
    snprintf (path, sizeof path, "%s/configs/fork7.json", test_srcdir ());
    json_error_t jerr;
    json_t *json = json_load_file (path, 0, &jerr);
    if (!json)
        fail_msg ("%s: %s", path, jerr.text);
    json_object_set_new (json_object_get (json, "platform"), "join_slots",
                         json_integer (joins));
    char *text = json_dumps (json, 0);
    config_t *cfg = config_load_string (text, path, err, sizeof err);
    if (!cfg)
        fail_msg ("config: %s", err);
    free (text);
    json_decref (json);
    return cfg;
}

static void
node_from (const char *text, config_node_t *node)
{
    char *dq = test_dequote (text), err[TF_ERRLEN] = "";
    json_t *json = json_loads (dq, 0, NULL);
    if (!json || config_node_parse (json, "<test node>", node, err, sizeof err) < 0)
        fail_msg ("node: %s\n%s", err, dq);
    json_decref (json);
    free (dq);
}

/*  Every node of cfg with n vacant child slots. */
static const int *
slots_all (const config_t *cfg, int n)
{
    static int vacant[MAX_TEST_NODES];
    assert_true (cfg->nnodes <= MAX_TEST_NODES);
    for (int i = 0; i < MAX_TEST_NODES; i++)
        vacant[i] = n;
    return vacant;
}

/*  place_choose that must succeed. */
static place_t
choose (config_t *cfg, const config_node_t *node, const int *vacant, bound_model_t model,
        double remaining, double cost_s, double live_factor, int always)
{
    place_t out;
    char err[TF_ERRLEN] = "";
    if (place_choose (cfg, node, vacant, model, remaining, cost_s, live_factor, always,
                      &out, err, sizeof err) < 0)
        fail_msg ("place_choose: %s", err);
    return out;
}

static void
assert_near (double actual, double expected)
{
    if (!(fabs (actual - expected) <= HAND_TOL * fmax (fabs (expected), 1e-12)))
        fail_msg ("%.12g, expected %.12g", actual, expected);
}

static void
test_a_saturated_root_places_the_node_under_a_relay (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (RELAY_TREE);
    config_node_t node;
    node_from (SLOW_NODE, &node);
    place_t out = choose (cfg, &node, slots_all (cfg, 1), BOUND_SINGLE, 300, 0.5, 1, 0);
    assert_int_equal (out.parent, config_find_node (cfg, "A"));
    assert_near (out.bound_now, 2.9);
    assert_near (out.bound_after, 3.8);
    assert_near (out.gain_s, 300 * (1 / 2.9 - 1 / 3.8));
    assert_true (out.admit);
    assert_string_equal (out.why, "joins under A: bound 2.9 -> 3.8 tasks/s, saves 24.5 s "
                                  "on 300 tasks > start-up 0.5 s");

    /*  R and B have room: it gains nothing under either (B's own slow
     *  link keeps B's subtree at 1 task/s), and the earlier is named. */
    assert_int_equal (config_find_node (cfg, "B"), 2);
    int not_a[MAX_TEST_NODES] = {[0] = 1, [2] = 1};
    out = choose (cfg, &node, not_a, BOUND_SINGLE, 300, 0.5, 1, 0);
    assert_int_equal (out.parent, cfg->root);
    assert_near (out.bound_after, 2.9);
    assert_true (out.gain_s == 0);
    assert_false (out.admit);
    assert_string_equal (out.why, "not admitted: under the best parent (R) the bound "
                                  "stays 2.9 tasks/s (gain 0.0 s on 300 tasks <= start-up 0.5 s)");
    config_node_clear (&node);
    config_destroy (&cfg);
}

static void
test_the_gain_must_exceed_the_start_up_cost (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (RELAY_TREE);
    config_node_t node;
    node_from (SLOW_NODE, &node);
    const int *vacant = slots_all (cfg, 1);
    assert_true (choose (cfg, &node, vacant, BOUND_SINGLE, 1000, 1, 1, 0).admit);

    place_t out = choose (cfg, &node, vacant, BOUND_SINGLE, 0, 1, 1, 0);
    assert_false (out.admit);           /* nothing left to gain on */
    assert_true (out.gain_s == 0);
    assert_false (choose (cfg, &node, vacant, BOUND_SINGLE, 0, 0, 1, 0).admit);

    out = choose (cfg, &node, vacant, BOUND_SINGLE, 1000, 1e9, 1, 0);
    assert_false (out.admit);           /* costs more than it saves */
    assert_int_equal (out.parent, config_find_node (cfg, "A"));
    assert_non_null (strstr (out.why, "not admitted: under the best parent (A) the bound "
                                      "goes 2.9 -> 3.8 tasks/s"));

    out = choose (cfg, &node, vacant, BOUND_SINGLE, 1000, 1e9, 1, 1);
    assert_true (out.admit);            /* the run admits every offer */
    assert_int_equal (out.parent, config_find_node (cfg, "A"));
    assert_string_equal (out.why, "joins under A because the run admits every offer: bound "
                                  "2.9 -> 3.8 tasks/s, saves 81.7 s on 1000 tasks against "
                                  "start-up 1000000000.0 s");
    config_node_clear (&node);
    config_destroy (&cfg);
}

static void
test_the_live_factor_scales_both_bounds (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (RELAY_TREE);
    config_node_t node;
    node_from (SLOW_NODE, &node);
    const int *vacant = slots_all (cfg, 1);
    place_t out = choose (cfg, &node, vacant, BOUND_SINGLE, 300, 0, 0.5, 0);
    assert_near (out.bound_now, 1.45);
    assert_near (out.bound_after, 1.9);
    assert_near (out.gain_s, 300 * (1 / 1.45 - 1 / 1.9));
    out = choose (cfg, &node, vacant, BOUND_SINGLE, 300, 0, NAN, 0);
    assert_near (out.bound_now, 2.9);   /* unknown: as configured */
    out = choose (cfg, &node, vacant, BOUND_SINGLE, 300, 0, -2, 0);
    assert_near (out.bound_after, 3.8);
    config_node_clear (&node);
    config_destroy (&cfg);
}

static void
test_a_fixed_parent_is_the_only_one_tried (void **state)
{
    (void) state;
    config_t *cfg = fork7_with_room (1);
    config_node_t node;
    node_from ("{'name': 'New', 'compute': 20, 'link_mbps': 10, 'send_limit_mbps': 10}",
               &node);
    const int *vacant = slots_all (cfg, 1);
    place_t best = choose (cfg, &node, vacant, BOUND_MULTI, 1000, 0.6, 1, 0);
    assert_true (best.parent >= 0);

    /*  Tenn's 0.2 MB/s link starves anything below it. */
    int tenn = config_find_node (cfg, "Tenn");
    assert_int_not_equal (best.parent, tenn);
    node.parent_name = xstrdup ("Tenn");
    place_t fixed = choose (cfg, &node, vacant, BOUND_MULTI, 1000, 0.6, 1, 0);
    assert_int_equal (fixed.parent, tenn);
    assert_true (fixed.bound_after < best.bound_after);
    assert_non_null (strstr (fixed.why, "under its parent (Tenn)"));

    /*  Its parent full: not placed anywhere else. */
    int all_but_tenn[MAX_TEST_NODES];
    memcpy (all_but_tenn, vacant, sizeof all_but_tenn);
    all_but_tenn[tenn] = 0;
    fixed = choose (cfg, &node, all_but_tenn, BOUND_MULTI, 1000, 0.6, 1, 0);
    assert_false (fixed.admit);
    assert_int_equal (fixed.parent, -1);
    assert_string_equal (fixed.why, "not admitted: its parent Tenn has no vacant child slot");
    config_node_clear (&node);
    config_destroy (&cfg);
}

static void
test_no_room_admits_nothing (void **state)
{
    (void) state;
    config_t *cfg = fork7_with_room (1);
    config_node_t node;
    node_from ("{'name': 'New', 'compute': 20, 'link_mbps': 10}", &node);
    place_t out = choose (cfg, &node, slots_all (cfg, 0), BOUND_MULTI, 1000, 0.6, 1, 1);
    assert_false (out.admit);
    assert_int_equal (out.parent, -1);
    assert_string_equal (out.why, "not admitted: no node of the run has a vacant child slot");
    config_destroy (&cfg);

    cfg = fork7_with_room (0);          /* no room in the run at all */
    out = choose (cfg, &node, slots_all (cfg, 1), BOUND_MULTI, 1000, 0.6, 1, 1);
    assert_false (out.admit);
    assert_int_equal (out.parent, -1);
    assert_non_null (strstr (out.why, "room for no more nodes"));
    config_node_clear (&node);
    config_destroy (&cfg);
}

static void
test_the_config_is_left_as_it_was (void **state)
{
    (void) state;
    config_t *cfg = fork7_with_room (2);
    config_node_t node;
    node_from ("{'name': 'New', 'compute': 20, 'link_mbps': 10}", &node);
    char *before = config_to_json (cfg);
    int nnodes = cfg->nnodes, root_children = cfg->nodes[cfg->root].nchildren;
    for (bound_model_t model = 0; model < BOUND_MODEL_COUNT; model++)
        choose (cfg, &node, slots_all (cfg, 1), model, 1000, 0.6, 1, 0);
    assert_int_equal (cfg->nnodes, nnodes);
    assert_int_equal (cfg->nodes[cfg->root].nchildren, root_children);
    for (int i = 0; i < cfg->nnodes; i++)
        assert_int_equal (cfg->nodes[i].nchildren, i == cfg->root ? root_children : 0);
    char *after = config_to_json (cfg);
    assert_string_equal (after, before);
    free (before);
    free (after);
    config_node_clear (&node);
    config_destroy (&cfg);
}

/*  place_choose must refuse with an error that mentions what. */
static void
assert_refused (config_t *cfg, const config_node_t *node, const int *vacant,
                double remaining, double cost_s, const char *what)
{
    place_t out;
    char err[TF_ERRLEN] = "";
    assert_int_equal (place_choose (cfg, node, vacant, BOUND_MULTI, remaining, cost_s, 1, 0,
                                    &out, err, sizeof err),
                      -1);
    if (!strstr (err, what))
        fail_msg ("error \"%s\" does not mention \"%s\"", err, what);
}

static void
test_bad_input_is_refused (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (RELAY_TREE);
    config_node_t node;
    node_from (SLOW_NODE, &node);
    const int *vacant = slots_all (cfg, 1);
    assert_refused (cfg, &node, vacant, -1, 0, "remaining tasks -1");
    assert_refused (cfg, &node, vacant, NAN, 0, "remaining tasks");
    assert_refused (cfg, &node, vacant, 10, -0.5, "start-up cost");
    assert_refused (cfg, &node, vacant, 10, INFINITY, "start-up cost");
    assert_refused (cfg, &node, NULL, 10, 0, "vacant");
    config_node_clear (&node);
    node_from ("{'name': 'A', 'compute': 1, 'link_mbps': 1}", &node);
    assert_refused (cfg, &node, vacant, 10, 0, "in the run already");
    config_node_clear (&node);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_saturated_root_places_the_node_under_a_relay),
        cmocka_unit_test (test_the_gain_must_exceed_the_start_up_cost),
        cmocka_unit_test (test_the_live_factor_scales_both_bounds),
        cmocka_unit_test (test_a_fixed_parent_is_the_only_one_tried),
        cmocka_unit_test (test_no_room_admits_nothing),
        cmocka_unit_test (test_the_config_is_left_as_it_was),
        cmocka_unit_test (test_bad_input_is_refused),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
