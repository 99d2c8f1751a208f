/*  test_subtree — the bound a tree computes for itself, bottom-up, node by
 *  node, without sockets: fed the children's reports in any order, every
 *  node's subtree bound equals the offline bound_tree's, in every model;
 *  bad or repeated reports are refused and change nothing.
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

/*  configs/tree3.json: 9 nodes, 3 levels. */
static config_t *
load_tree3 (void)
{
    char err[TF_ERRLEN], path[4096];
    const char *src = getenv ("TF_SRCDIR");
    snprintf (path, sizeof path, "%s/configs/tree3.json", src ? src : ".");
    config_t *cfg = config_load_file (path, err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    return cfg;
}

/*  Run the tree's SUBTREE exchange in memory, leaves first or in reverse
 *  config order; every node's bound must equal the offline one. */
static void
test_every_node_matches_the_offline_bound (void **state)
{
    (void) state;
    config_t *cfg = load_tree3 ();
    char err[TF_ERRLEN];
    bound_app_t app = {cfg->tasks.input_mb, cfg->tasks.units};
    for (int order = 0; order < 2; order++) {
        subtree_t **st = xcalloc (cfg->nnodes, sizeof *st);
        for (int i = 0; i < cfg->nnodes; i++)
            st[i] = subtree_new (cfg, i);
        /*  Repeatedly: whoever can step, steps and reports to its parent. */
        for (int round = 0; round < cfg->nnodes; round++)
            for (int k = 0; k < cfg->nnodes; k++) {
                int i = order ? cfg->nnodes - 1 - k : k;
                if (!subtree_step (st[i]))
                    continue;
                int p = cfg->nodes[i].parent;
                if (p < 0)
                    continue;
                int slot = 0;
                while (cfg->nodes[p].children[slot] != i)
                    slot++;
                assert_int_equal (subtree_child (st[p], slot, subtree_bounds (st[i]), err,
                                                 sizeof err), 0);
            }
        for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
            bound_tree_t *tree = bound_tree_new (cfg, m, &app, err, sizeof err);
            assert_non_null (tree);
            for (int i = 0; i < cfg->nnodes; i++) {
                assert_non_null (subtree_bounds (st[i]));
                double want = tree->nodes[i].that;
                if (fabs (subtree_bounds (st[i])[m] - want) > 1e-12 * (1 + want))
                    fail_msg ("%s, model %s: %.15g in the tree, %.15g offline",
                              cfg->nodes[i].name, bound_model_str (m),
                              subtree_bounds (st[i])[m], want);
            }
            bound_tree_destroy (&tree);
        }
        for (int i = 0; i < cfg->nnodes; i++)
            subtree_destroy (&st[i]);
        free (st);
    }
    config_destroy (&cfg);
}

static void
test_a_parent_waits_for_every_child_and_refuses_bad_reports (void **state)
{
    (void) state;
    config_t *cfg = load_tree3 ();
    char err[TF_ERRLEN];
    subtree_t *head = subtree_new (cfg, cfg->root);   /* 3 children */
    const double good[BOUND_MODEL_COUNT] = {1, 1, 1};
    double bad[BOUND_MODEL_COUNT] = {1, NAN, 1};
    assert_null (subtree_bounds (head));
    assert_int_equal (subtree_step (head), 0);
    assert_int_equal (subtree_child (head, 0, good, err, sizeof err), 0);
    assert_int_equal (subtree_child (head, 0, good, err, sizeof err), -1);   /* twice */
    assert_int_equal (subtree_child (head, 3, good, err, sizeof err), -1);   /* no slot */
    assert_int_equal (subtree_child (head, 1, bad, err, sizeof err), -1);    /* NaN */
    bad[1] = -1;
    assert_int_equal (subtree_child (head, 1, bad, err, sizeof err), -1);    /* < 0 */
    assert_int_equal (subtree_child (head, 1, good, err, sizeof err), 0);
    assert_int_equal (subtree_step (head), 0);   /* the third is missing */
    assert_int_equal (subtree_child (head, 2, good, err, sizeof err), 0);
    assert_int_equal (subtree_step (head), 1);   /* known, once */
    assert_int_equal (subtree_step (head), 0);
    assert_non_null (subtree_bounds (head));
    subtree_destroy (&head);
    assert_null (head);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_every_node_matches_the_offline_bound),
        cmocka_unit_test (test_a_parent_waits_for_every_child_and_refuses_bad_reports),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
