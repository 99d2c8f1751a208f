/*  test_split — ia-split's planned split of the send port, through the
 *  registered policy and the node cores built as a run builds them
 *  (node/setup.h): every child's share is the LP's t_i (GLPK's optimum of
 *  the whole tree's program, overlay/bound_lp.c) on the reference grid and
 *  in a three-level tree; the plan follows the core's beliefs. (On the
 *  virtual clock, tests/test_drive.c races it against IA:Multi.)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/setup.h"
#include "overlay/bound.h"
#include "overlay/util.h"
#include "policies/policy.h"
#include "tests/helpers.h"

/*  Agreement of a share with the LP's, relative to the tree's bound. */
#define SHARE_TOL 1e-6

static config_t *
load (const char *name, uint64_t count, double z, double w)
{
    config_t *cfg = test_config_load (name);
    cfg->tasks.count = count;
    if (z >= 0)
        cfg->tasks.input_mb = z;
    if (w > 0)
        cfg->tasks.units = w;
    config_set_policy (cfg, "ia-split");
    return cfg;
}

/*  Every parent's core plans for each child the tasks/s the LP's optimum
 *  sends it; returns the number of shares compared. */
static int
check_shares_against_lp (const config_t *cfg)
{
    char err[TF_ERRLEN];
    bound_app_t app = bound_app_of (cfg);
    bound_tree_t *tree = bound_tree_new (cfg, BOUND_MULTI, &app, err, sizeof err);
    assert_non_null (tree);
    assert_int_equal (bound_tree_check_lp (tree, err, sizeof err), 0);
    int compared = 0;
    for (int p = 0; p < cfg->nnodes; p++) {
        const config_node_t *node = &cfg->nodes[p];
        if (node->nchildren == 0)
            continue;
        core_t *core = setup_core (cfg, p, NULL, err, sizeof err);
        assert_non_null (core);
        for (int c = 0; c < node->nchildren; c++) {
            double lp = tree->nodes[node->children[c]].lp_t;
            double got = core_split_rate (core, c);
            if (fabs (got - lp) > SHARE_TOL * tree->lp_bound)
                fail_msg ("%s (Z %g, w %g): %s plans %.6f tasks/s for %s, the LP %.6f",
                          cfg->name, cfg->tasks.input_mb, cfg->tasks.units, node->name,
                          got, cfg->nodes[node->children[c]].name, lp);
            compared++;
        }
        core_destroy (&core);
    }
    bound_tree_destroy (&tree);
    return compared;
}

/*  The published grid on the reference fork: 18 cells, 6 shares each. */
static void
test_the_roots_shares_are_the_lps_on_the_grid (void **state)
{
    (void) state;
    const double sends[] = {2, 5, 10}, computes[] = {1, 3, 5, 7, 9, 11};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) {
            config_t *cfg = load ("fork7.json", 100, sends[i], computes[j]);
            assert_int_equal (check_shares_against_lp (cfg), 6);
            config_destroy (&cfg);
        }
}

/*  Three levels: an inner node splits what its own parent's plan gives
 *  it (its target), not its whole subtree's bound. */
static void
test_inner_nodes_split_their_own_share (void **state)
{
    (void) state;
    const double sends[] = {0.5, 2, 5};
    for (int i = 0; i < 3; i++) {
        config_t *cfg = load ("tree3.json", 100, sends[i], -1);
        assert_true (check_shares_against_lp (cfg) > 2);
        config_destroy (&cfg);
    }
}

/*  The plan follows the core's beliefs: a child's IR_s, a child lost
 *  (its share goes to the others), the parent's own rate. */
static void
test_the_plan_follows_the_beliefs (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    config_t *cfg = load ("fork7.json", 100, 10, 3);
    core_t *root = setup_core (cfg, cfg->root, NULL, err, sizeof err);
    assert_non_null (root);
    /*  Slots: Lab3 0, Lab4 1, Lab5 2, Lab6 3, SB0 4, Tenn 5. Lab4 is
     *  saturated, Lab5 takes the rest of the port, the others get 0. */
    double lab4 = core_split_rate (root, 1), lab5 = core_split_rate (root, 2);
    assert_true (lab4 > 0.7 && lab5 > 0.3);
    assert_true (fabs (lab4 + lab5 - 1.07) < 1e-9);   /* B_s = 10.7 / 10 */
    for (int c = 0; c < 6; c++)
        if (c != 1 && c != 2)
            assert_true (core_split_rate (root, c) == 0);
    /*  Lab5 costs the root as much as it brings: the port goes to Lab6. */
    core_set_child_ir (root, 2, 0.05);
    assert_true (core_split_rate (root, 2) == 0);
    assert_true (core_split_rate (root, 3) > 0.3);
    core_set_child_ir (root, 2, 0.0226);
    assert_true (fabs (core_split_rate (root, 2) - lab5) < 1e-9);
    /*  Lab4 lost: Lab5 takes all it can, Lab6 the rest. */
    core_event_t lost = {.type = CORE_EV_LOST, .child = 1};
    assert_int_equal (core_handle (root, &lost, err, sizeof err), 0);
    assert_true (core_split_rate (root, 1) == 0);
    assert_true (core_split_rate (root, 2) > lab5);
    assert_true (core_split_rate (root, 3) > 0);
    core_destroy (&root);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_the_roots_shares_are_the_lps_on_the_grid),
        cmocka_unit_test (test_inner_nodes_split_their_own_share),
        cmocka_unit_test (test_the_plan_follows_the_beliefs),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
