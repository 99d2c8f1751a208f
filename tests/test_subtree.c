/*  test_subtree — the bound a tree computes for itself, bottom-up, node by
 *  node, without sockets: fed the children's reports in any order, every
 *  node's subtree bound equals the offline bound_tree's, in every model;
 *  bad or repeated reports are refused and change nothing; adapting, the
 *  bound follows the live values and the children's updates.
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

/*  Adapting (docs/adapt.md): a child's repeated SUBTREE is an update;
 *  without adapt it is refused. */
static void
test_updates_are_accepted_only_when_adapting (void **state)
{
    (void) state;
    config_t *cfg = load_tree3 ();
    char err[TF_ERRLEN];
    const double one[BOUND_MODEL_COUNT] = {1, 1, 1}, two[BOUND_MODEL_COUNT] = {2, 2, 2};
    for (int adapt = 0; adapt < 2; adapt++) {
        subtree_t *head = subtree_new (cfg, cfg->root);
        if (adapt)
            subtree_adapt (head);
        for (int slot = 0; slot < 3; slot++)
            assert_int_equal (subtree_child (head, slot, one, err, sizeof err), 0);
        assert_int_equal (subtree_step (head), 1);
        double before = subtree_bounds (head)[BOUND_SINGLE];
        assert_int_equal (subtree_child (head, 0, two, err, sizeof err), adapt ? 0 : -1);
        assert_int_equal (subtree_step (head), adapt);
        if (adapt) {
            /*  More below us: a larger bound now; the first one kept. */
            assert_true (subtree_bounds (head)[BOUND_SINGLE] > before);
            assert_true (subtree_first_bounds (head)[BOUND_SINGLE] == before);
        } else {
            assert_true (subtree_bounds (head)[BOUND_SINGLE] == before);
        }
        subtree_destroy (&head);
    }
    config_destroy (&cfg);
}

/*  The head of tree3's step, by hand, on the dedicated platform: its
 *  compute C (units/s), child slot's link link_mbps (MB/s), every child's
 *  subtree bound `that` (tasks/s). */
static double
head_step (const config_t *cfg, bound_model_t m, double compute, int slot,
           double link_mbps, double that)
{
    bound_app_t app = bound_app_of (cfg);
    app.loaded = 0;
    bound_node_t node;
    bound_child_t kids[3];
    bound_node_init (&node, cfg, cfg->root, &app);
    node.compute = compute / app.units;
    for (int i = 0; i < 3; i++)
        bound_child_init (&kids[i], cfg, cfg->nodes[cfg->root].children[i], &app, that);
    kids[slot].recv_max = link_mbps / app.input_mb;
    bound_step_t step;
    bound_share_t shares[3];
    bound_step (&node, m, kids, 3, INFINITY, &step, shares);
    return step.t;
}

/*  Each live value moves the bound by what bound_step gives for it; the
 *  same input again changes nothing. */
static void
test_live_values_move_the_bound_by_the_step (void **state)
{
    (void) state;
    config_t *cfg = load_tree3 ();
    char err[TF_ERRLEN];
    const config_node_t *head_cfg = &cfg->nodes[cfg->root];
    int a = head_cfg->children[0];   /* rackA, slot 0: single-port, served first */
    const double big[BOUND_MODEL_COUNT] = {50, 50, 50};
    subtree_t *head = subtree_new (cfg, cfg->root);
    subtree_adapt (head);
    for (int slot = 0; slot < 3; slot++)
        assert_int_equal (subtree_child (head, slot, big, err, sizeof err), 0);
    assert_int_equal (subtree_step (head), 1);
    assert_int_equal (subtree_step (head), 0);
    double first[BOUND_MODEL_COUNT];
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        first[m] = subtree_bounds (head)[m];
        assert_true (fabs (first[m] - head_step (cfg, m, head_cfg->compute_rate, 0,
                                                 cfg->nodes[a].link_mbps, 50))
                     < 1e-12);
    }
    /*  Our compute halves. */
    double c = head_cfg->compute_rate / 2;
    subtree_set_self (head, c, NAN);
    assert_int_equal (subtree_step (head), 1);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        double want = head_step (cfg, m, c, 0, cfg->nodes[a].link_mbps, 50);
        assert_true (want < first[m]);
        assert_true (fabs (subtree_bounds (head)[m] - want) < 1e-12);
    }
    double again, irr;
    subtree_self (head, &again, &irr);
    assert_true (again == c);
    /*  Unchanged input, or nothing to take: no new bound. */
    subtree_set_self (head, c, NAN);
    assert_int_equal (subtree_step (head), 0);
    subtree_set_self (head, NAN, NAN);
    subtree_set_child (head, 1, NAN, NAN);
    subtree_set_child (head, 9, 0.1, 0.5);   /* no such slot */
    assert_int_equal (subtree_step (head), 0);
    /*  rackA's link slows to 2 MB/s. */
    double before = subtree_bounds (head)[BOUND_SINGLE];
    subtree_set_child (head, 0, 2, NAN);
    assert_int_equal (subtree_step (head), 1);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        assert_true (fabs (subtree_bounds (head)[m] - head_step (cfg, m, c, 0, 2, 50))
                     < 1e-12);
    assert_true (subtree_bounds (head)[BOUND_SINGLE] < before);
    /*  An update the links cannot carry anyway (50 -> 60 tasks/s): the
     *  step is taken again, the bound is the same, nothing to send. */
    const double more[BOUND_MODEL_COUNT] = {60, 60, 60};
    assert_int_equal (subtree_child (head, 0, more, err, sizeof err), 0);
    assert_int_equal (subtree_step (head), 0);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        assert_true (subtree_first_bounds (head)[m] == first[m]);
    subtree_destroy (&head);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_every_node_matches_the_offline_bound),
        cmocka_unit_test (test_a_parent_waits_for_every_child_and_refuses_bad_reports),
        cmocka_unit_test (test_updates_are_accepted_only_when_adapting),
        cmocka_unit_test (test_live_values_move_the_bound_by_the_step),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
