/*  test_grow_subtree — the subtree bound of a node with child slots kept
 *  for nodes that join (node/subtree.c, docs/adapt.md "Grow"): a vacant
 *  slot counts as a child that reported 0, so the step needs no word from
 *  it and the bound is the tree's without it; once a node joins the slot
 *  (subtree_attach) the step waits for its SUBTREE, then counts it. And
 *  subtree_child_unused: which child the step leaves unused, and why.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "node/subtree.h"
#include "overlay/util.h"

#define TASKS "\"tasks\": {\"count\": 100, \"input_mb\": 10, \"units\": 5}"
#define ROOT "{\"name\": \"r\", \"compute\": 30}"
#define A "{\"name\": \"a\", \"parent\": \"r\", \"compute\": 10, \"link_mbps\": 10}"
#define J "{\"name\": \"j\", \"parent\": \"r\", \"compute\": 20, \"link_mbps\": 15}"

static config_t *
load_text (const char *text)
{
    char err[TF_ERRLEN] = "";
    config_t *cfg = config_load_string (text, "t.json", err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    return cfg;
}

/*  Node i's leaf bounds (it must have no children). */
static void
leaf_bounds (const config_t *cfg, int i, double *out)
{
    subtree_t *st = subtree_new (cfg, i);
    assert_int_equal (subtree_step (st), 1);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        out[m] = subtree_bounds (st)[m];
    subtree_destroy (&st);
}

/*  The root's bounds in a config without vacant slots, every child
 *  reporting its leaf bound. */
static void
root_bounds (const config_t *cfg, double *out)
{
    char err[TF_ERRLEN];
    subtree_t *st = subtree_new (cfg, cfg->root);
    const config_node_t *r = &cfg->nodes[cfg->root];
    for (int s = 0; s < r->nchildren; s++) {
        double b[BOUND_MODEL_COUNT];
        leaf_bounds (cfg, r->children[s], b);
        assert_int_equal (subtree_child (st, s, b, err, sizeof err), 0);
    }
    assert_int_equal (subtree_step (st), 1);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        out[m] = subtree_bounds (st)[m];
    subtree_destroy (&st);
}

static void
assert_bounds_equal (const double *got, const double *want)
{
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        if (fabs (got[m] - want[m]) > 1e-12 * (1 + want[m]))
            fail_msg ("model %s: %.15g, want %.15g", bound_model_str (m), got[m], want[m]);
}

static void
test_vacant_slots_count_as_zero_until_a_node_joins (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    config_t *plain = load_text ("{" TASKS ", \"tree\": [" ROOT ", " A "]}");
    config_t *grown = load_text ("{" TASKS ", \"tree\": [" ROOT ", " A ", " J "]}");
    double without[BOUND_MODEL_COUNT], with[BOUND_MODEL_COUNT], a[BOUND_MODEL_COUNT];
    root_bounds (plain, without);
    root_bounds (grown, with);
    assert_true (with[BOUND_SINGLE] > without[BOUND_SINGLE]);

    /*  The root's own copy: a and two vacant slots. */
    config_t *cfg = load_text ("{" TASKS ", \"tree\": [" ROOT ", " A "]}");
    config_add_vacant (cfg, cfg->root, 2);
    int ia = config_find_node (cfg, "a");
    leaf_bounds (cfg, ia, a);
    subtree_t *st = subtree_new (cfg, cfg->root);
    assert_int_equal (subtree_step (st), 0);   /* a has not reported */
    assert_int_equal (subtree_child (st, 0, a, err, sizeof err), 0);
    assert_int_equal (subtree_step (st), 1);   /* the vacant slots need not */
    assert_bounds_equal (subtree_bounds (st), without);
    assert_int_equal (subtree_step (st), 0);

    /*  j joins slot 1 as node/attach.c does it: the config's slot filled,
     *  then the subtree told. The step waits for j's SUBTREE. */
    int slot = 1, ij = cfg->nodes[cfg->root].children[slot];
    config_t *desc_cfg = load_text ("{" TASKS ", \"tree\": [" ROOT ", " J "]}");
    const config_node_t *desc = &desc_cfg->nodes[config_find_node (desc_cfg, "j")];
    assert_int_equal (config_fill_vacant (cfg, ij, desc, err, sizeof err), 0);
    subtree_attach (st, slot, desc->link_mbps, desc->ir_send);
    assert_int_equal (subtree_step (st), 0);
    assert_int_equal (subtree_step (st), 0);
    double j[BOUND_MODEL_COUNT];
    leaf_bounds (cfg, ij, j);
    assert_int_equal (subtree_child (st, slot, j, err, sizeof err), 0);
    assert_int_equal (subtree_step (st), 1);
    assert_bounds_equal (subtree_bounds (st), with);
    /*  A second attach of the slot, or of a bad one, is ignored. */
    subtree_attach (st, slot, 1, 0);
    subtree_attach (st, 7, 1, 0);
    assert_int_equal (subtree_step (st), 0);
    assert_int_equal (subtree_child (st, slot, j, err, sizeof err), -1);   /* still had */
    assert_bounds_equal (subtree_bounds (st), with);
    subtree_destroy (&st);
    config_destroy (&desc_cfg);
    config_destroy (&cfg);
    config_destroy (&grown);
    config_destroy (&plain);
}

/*  Adapting, the step computes again after any change, but not while a
 *  joined child's SUBTREE is awaited. */
static void
test_adapting_waits_for_the_joined_child (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    config_t *cfg = load_text ("{" TASKS ", \"tree\": [" ROOT ", " A "]}");
    config_add_vacant (cfg, cfg->root, 1);
    double a[BOUND_MODEL_COUNT];
    leaf_bounds (cfg, config_find_node (cfg, "a"), a);
    subtree_t *st = subtree_new (cfg, cfg->root);
    subtree_adapt (st);
    assert_int_equal (subtree_child (st, 0, a, err, sizeof err), 0);
    assert_int_equal (subtree_step (st), 1);
    subtree_set_self (st, 60, NAN);
    assert_int_equal (subtree_step (st), 1);   /* a change: computed again */
    subtree_attach (st, 1, 15, 0);
    subtree_set_self (st, 90, NAN);
    assert_int_equal (subtree_step (st), 0);   /* waits for the joined child */
    assert_int_equal (subtree_child (st, 1, a, err, sizeof err), 0);
    assert_int_equal (subtree_step (st), 1);
    subtree_destroy (&st);
    config_destroy (&cfg);
}

/*  Child a: IR_s Z C = 0.02 x 10 MB x (30 / 5) tasks/s = 1.2 >= 1, so
 *  sending to it costs the root more than a returns; b (no IR) is used;
 *  the third slot is vacant. */
static void
test_child_unused_and_why (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    config_t *cfg = load_text (
        "{" TASKS ", \"tree\": [" ROOT ","
        " {\"name\": \"a\", \"parent\": \"r\", \"compute\": 10, \"link_mbps\": 10,"
        "  \"ir_send\": 0.02},"
        " {\"name\": \"b\", \"parent\": \"r\", \"compute\": 10, \"link_mbps\": 10}]}");
    config_add_vacant (cfg, cfg->root, 1);
    subtree_t *st = subtree_new (cfg, cfg->root);
    bound_why_t why = BOUND_WHY_COUNT;
    assert_int_equal (subtree_child_unused (st, 0, BOUND_SINGLE, &why), 0);   /* no step */
    for (int s = 0; s < 2; s++) {
        double b[BOUND_MODEL_COUNT];
        leaf_bounds (cfg, cfg->nodes[cfg->root].children[s], b);
        assert_int_equal (subtree_child (st, s, b, err, sizeof err), 0);
    }
    assert_int_equal (subtree_step (st), 1);
    /*  The models that price interference (BWC ignores it). */
    for (int m = BOUND_MULTI; m <= BOUND_SINGLE; m++) {
        why = BOUND_WHY_COUNT;
        assert_int_equal (subtree_child_unused (st, 0, m, &why), 1);
        assert_int_equal (why, BOUND_WHY_INTERFERENCE);
        assert_int_equal (subtree_child_unused (st, 1, m, NULL), 0);
        assert_int_equal (subtree_child_unused (st, 2, m, NULL), 0);   /* vacant */
    }
    assert_int_equal (subtree_child_unused (st, 3, BOUND_SINGLE, NULL), 0);
    assert_int_equal (subtree_child_unused (st, 0, BOUND_MODEL_COUNT, NULL), 0);
    subtree_destroy (&st);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_vacant_slots_count_as_zero_until_a_node_joins),
        cmocka_unit_test (test_adapting_waits_for_the_joined_child),
        cmocka_unit_test (test_child_unused_and_why),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
