/*  test_relay — a node that only relays ("slots": 0, docs/config.md
 *  "Relays"): what the loader accepts and refuses, its canonical form,
 *  the bound with C = 0 at the root (checked by the LP), and a relay's
 *  core, which forwards every task and computes none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "node/core.h"
#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  A relay root over two workers; ROOT is spliced in as the root's keys. */
#define TREE(ROOT, MORE)                                                         \
    "{'tasks': {'count': 10, 'input_mb': 1, 'units': 1}, 'tree': ["              \
    "{'name': 'head'" ROOT "},"                                                  \
    "{'name': 'w1', 'parent': 'head', 'compute': 10, 'link_mbps': 100" MORE "}," \
    "{'name': 'w2', 'parent': 'head', 'compute': 20, 'link_mbps': 100}]}"

/*  text (single quotes) must be refused with exactly "x.json: " want. */
static void
assert_refused (const char *text, const char *want)
{
    char *json = test_dequote (text), err[TF_ERRLEN] = "", full[TF_ERRLEN];
    config_t *cfg = config_load_string (json, "x.json", err, sizeof err);
    free (json);
    snprintf (full, sizeof full, "x.json: %s", want);
    if (cfg || strcmp (err, full) != 0)
        fail_msg ("expected \"%s\", got %s\"%s\"", full, cfg ? "a config and " : "", err);
}

/*  text (single quotes) loaded as relay.json; the test fails if refused. */
static config_t *
load_text (const char *text)
{
    char *json = test_dequote (text), err[TF_ERRLEN] = "";
    config_t *cfg = config_load_string (json, "relay.json", err, sizeof err);
    free (json);
    if (!cfg)
        fail_msg ("refused: %s", err);
    return cfg;
}

static void
test_relay_root_loads_and_round_trips (void **state)
{
    (void) state;
    const char *forms[] = {TREE (", 'slots': 0", ""), TREE (", 'slots': 0, 'compute': 0", "")};
    for (int f = 0; f < 2; f++) {
        config_t *cfg = load_text (forms[f]);
        const config_node_t *head = &cfg->nodes[cfg->root];
        assert_true (config_node_is_relay (head));
        assert_false (config_node_is_relay (&cfg->nodes[1]));
        assert_true (head->compute_rate == 0);
        assert_int_equal (head->slots, 0);
        char *text = config_to_json (cfg), err[TF_ERRLEN] = "";
        json_t *doc = json_loads (text, 0, NULL);
        json_t *entry = json_array_get (json_object_get (doc, "tree"), 0);
        assert_true (json_integer_value (json_object_get (entry, "slots")) == 0
                     && json_is_integer (json_object_get (entry, "slots")));
        assert_true (json_number_value (json_object_get (entry, "compute")) == 0);
        json_decref (doc);
        config_t *again = config_load_string (text, "<controller>", err, sizeof err);
        if (!again)
            fail_msg ("the canonical form reloads: %s\n%s", err, text);
        assert_true (config_node_is_relay (&again->nodes[again->root]));
        char *text2 = config_to_json (again);
        assert_string_equal (text, text2);
        free (text);
        free (text2);
        config_destroy (&again);
        config_destroy (&cfg);
    }
    /*  A slot of 0 is no longer a default: an absent one still is. */
    config_t *cfg = load_text (TREE (", 'compute': 5", ""));
    assert_false (config_node_is_relay (&cfg->nodes[cfg->root]));
    assert_int_equal (cfg->nodes[cfg->root].slots, 0);
    char *text = config_to_json (cfg);
    assert_null (strstr (text, "\"slots\""));
    free (text);
    config_destroy (&cfg);
}

static void
test_what_a_relay_may_not_be (void **state)
{
    (void) state;
    assert_refused (TREE (", 'slots': 0, 'compute': 9.06", ""),
                    "tree[0] (node \"head\"): compute: a relay (\"slots\": 0) computes "
                    "nothing, so compute must be 0 or absent, got 9.06");
    assert_refused (TREE (", 'compute': 0", ""),
                    "tree[0] (node \"head\"): compute: must be > 0, got 0 (a node that "
                    "only forwards is a relay: write \"slots\": 0)");
    assert_refused (TREE (", 'compute': 0, 'slots': 2", ""),
                    "tree[0] (node \"head\"): compute: must be > 0, got 0 (a node that "
                    "only forwards is a relay: write \"slots\": 0)");
    assert_refused ("{'tasks': {'count': 1, 'input_mb': 1, 'units': 1}, "
                    "'tree': [{'name': 'solo', 'slots': 0}]}",
                    "tree[0] (node \"solo\"): slots: a relay (\"slots\": 0) computes "
                    "nothing and has no children to forward its tasks to");
    assert_refused (TREE (", 'compute': 1", ", 'slots': 0"),
                    "tree[1] (node \"w1\"): compute: a relay (\"slots\": 0) computes "
                    "nothing, so compute must be 0 or absent, got 10");
    assert_refused ("{'tasks': {'count': 1, 'input_mb': 1, 'units': 1}, 'tree': ["
                    "{'name': 'a', 'compute': 1}, {'name': 'b', 'parent': 'a', "
                    "'slots': 0, 'link_mbps': 1}, {'name': 'c', 'parent': 'b', "
                    "'compute': 1, 'link_mbps': 1}]}",
                    "tree[1] (node \"b\"): slots: only the root may be a relay "
                    "(\"slots\": 0); relays below the root are not supported yet");
    assert_refused ("{'tasks': {'count': 1, 'input_mb': 1, 'units': 1}, "
                    "'platform': {'adapt': true}, 'tree': ["
                    "{'name': 'a', 'compute': 1}, {'name': 'b', 'parent': 'a', "
                    "'slots': 0, 'link_mbps': 1, 'joins_at_s': 5}]}",
                    "tree[1] (node \"b\"): slots: a node offered to a running run "
                    "(joins_at_s, treefarm join) cannot be a relay (\"slots\": 0)");
    assert_refused (TREE (", 'slots': 0, 'load': {'steps': [{'at_s': 0, 'load': 2}]}", ""),
                    "tree[0] (node \"head\"): load: a relay (\"slots\": 0) computes "
                    "nothing, so a background load on it would change nothing");
}

/*  `treefarm join`'s node file and a --load file are refused the same. */
static void
test_join_and_load_files_refuse_a_relay (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "", dir[256];
    config_node_t node;
    json_t *json = json_loads ("{\"name\": \"s9\", \"parent\": \"head\", \"slots\": 0, "
                               "\"link_mbps\": 10}", 0, NULL);
    assert_int_equal (config_node_parse (json, "s9.json", &node, err, sizeof err), -1);
    assert_string_equal (err, "s9.json: node (node \"s9\"): slots: a node offered to a "
                              "running run (joins_at_s, treefarm join) cannot be a relay "
                              "(\"slots\": 0)");
    json_decref (json);

    config_t *cfg = load_text (TREE (", 'slots': 0", ""));
    test_temp_dir (dir, sizeof dir, "test_relay");
    char *path = xasprintf ("%s/loads.json", dir);
    test_write_file (path, "{\"head\": {\"steps\": [{\"at_s\": 0, \"load\": 2}]}}");
    assert_int_equal (config_apply_load_file (cfg, path, err, sizeof err), -1);
    char *want = xasprintf ("%s: node \"head\": a relay (\"slots\": 0) computes nothing, "
                            "so a background load on it would change nothing", path);
    assert_string_equal (err, want);
    assert_null (cfg->nodes[cfg->root].load);
    free (want);
    free (path);
    test_remove_dir (dir);
    config_destroy (&cfg);
}

/*  fork7 with Lab0 a relay: every model's bound is what the children
 *  take alone (the root computes nothing, S = 0), the root's limit is
 *  its port, never its CPU, and the LP over the whole tree agrees. */
static void
test_fork7_relay_bound (void **state)
{
    (void) state;
    config_t *cfg = test_config_load ("fork7.json");
    config_node_t *root = &cfg->nodes[cfg->root];
    root->compute_rate = 0;   /* as the loader reads "slots": 0 */
    assert_true (config_node_is_relay (root));
    bound_app_t app = {cfg->tasks.input_mb, cfg->tasks.units};
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        char err[TF_ERRLEN] = "";
        bound_tree_t *tree = bound_tree_new (cfg, (bound_model_t) m, &app, err, sizeof err);
        assert_non_null (tree);
        const bound_entry_t *r = &tree->nodes[cfg->root];
        assert_true (r->s == 0);
        double sum = 0;
        for (int k = 0; k < root->nchildren; k++)
            sum += tree->nodes[root->children[k]].t;
        if (fabs (sum - tree->bound) > 1e-9 * tree->bound)
            fail_msg ("%s: the children take %.9g, the bound is %.9g",
                      bound_model_str ((bound_model_t) m), sum, tree->bound);
        assert_true (r->that_limit != BOUND_WHY_CPU && r->that_limit != BOUND_WHY_OUT_BW_CPU);
        if (m == BOUND_MULTI)   /* the send limit, 10.7 MB/s of 2 MB tasks */
            assert_true (fabs (tree->bound - 10.7 / 2) < 1e-9);
        if (bound_tree_check_lp (tree, err, sizeof err) != 0)
            fail_msg ("LP: %s", err);
        double rel;
        if (bound_tree_lp_verdict (tree, &rel) != BOUND_LP_EQUAL)
            fail_msg ("%s: greedy %.12g, LP %.12g", bound_model_str ((bound_model_t) m),
                      tree->bound, tree->lp_bound);
        bound_tree_destroy (&tree);
    }
    config_destroy (&cfg);
}

/*  A relay with no send limit and no interference: the bound is its
 *  children's compute, 10 + 20 tasks/s. */
static void
test_unlimited_relay_bound (void **state)
{
    (void) state;
    config_t *cfg = load_text (TREE (", 'slots': 0", ""));
    bound_app_t app = {cfg->tasks.input_mb, cfg->tasks.units};
    char err[TF_ERRLEN] = "";
    bound_tree_t *tree = bound_tree_new (cfg, BOUND_MULTI, &app, err, sizeof err);
    assert_non_null (tree);
    assert_true (fabs (tree->bound - 30) < 1e-9);
    assert_int_equal (bound_tree_check_lp (tree, err, sizeof err), 0);
    assert_int_equal (bound_tree_lp_verdict (tree, NULL), BOUND_LP_EQUAL);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

static const core_child_info_t kids[2] = {
    {1, 10, 10, 0, 0, 0}, {2, 10, 10, 0, 0, 0},
};

/*  A relay root's core starts nothing on its own engine: every task goes
 *  to a child that asks, and none is ever computed or copied here. */
static void
test_relay_core_forwards_and_never_computes (void **state)
{
    (void) state;
    core_cfg_t cfg = {
        .self = 0, .nnodes = 3, .is_root = 1, .task_count = 4, .task_units = 1,
        .task_mb = 0.001, .task_bytes = 100, .chunk_bytes = 400, .window = 2,
        .buffer = 3, .batch_max = 1, .batch_delay = 0.05, .meter_window = 0.1,
        .policy = policy_find ("fcfs"), .nchildren = 2, .children = kids, .relay = 1,
        .endgame = {.on = 1, .time_scale = 1},
    };
    core_t *core = test_core_new (&cfg);
    int n;
    const core_action_t *a = test_core_feed (core, (core_event_t){.type = CORE_EV_START}, &n);
    assert_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 0, .n = 3},
                        &n);
    assert_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    for (uint64_t t = 0; t < 3; t++)   /* one chunk each, acked: sent */
        a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 0, .task = t,
                                                 .index = 0}, &n);
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_REQUEST, .child = 1, .n = 3},
                        &n);
    assert_non_null (test_core_find (a, n, CORE_ACT_SEND_CHUNK));
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_ACK, .child = 1, .task = 3,
                                             .index = 0}, &n);
    /*  The bag is out and the engine idle: the end-game would copy here. */
    assert_null (test_core_find (a, n, CORE_ACT_COMPUTE));
    assert_int_equal (core_stats (core).forwarded, 4);
    assert_int_equal (core_stats (core).computed, 0);
    core_destroy (&core);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_relay_root_loads_and_round_trips),
        cmocka_unit_test (test_what_a_relay_may_not_be),
        cmocka_unit_test (test_join_and_load_files_refuse_a_relay),
        cmocka_unit_test (test_fork7_relay_bound),
        cmocka_unit_test (test_unlimited_relay_bound),
        cmocka_unit_test (test_relay_core_forwards_and_never_computes),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
