/*  test_bound — the throughput bounds of overlay/bound.h against values
 *  computed by hand (each test shows its arithmetic), the reference fork
 *  for all 18 application types of docs/model.md, "The reference platform" in the three models, and
 *  a property test: over a few hundred random trees the greedy equals
 *  the GLPK optimum at every node and its schedule obeys every
 *  constraint of the model.
 *
 *  Run from the repository root, or set TF_SRCDIR to it.
 */
#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/util.h"
#include "tests/helpers.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*  Random trees in the property test, per model (-DRANDOM_TREES=N for a
 *  longer soak). */
#ifndef RANDOM_TREES
#define RANDOM_TREES 300
#endif

/*  Relative tolerance for hand-computed values (they are given to 9 or
 *  more significant digits). */
#define HAND_TOL 1e-8

/*  Fail unless actual is within rel (relative) of expected. */
#define assert_near(actual, expected, rel) \
    assert_near_at ((actual), (expected), (rel), #actual, __FILE__, __LINE__)

static void
assert_near_at (double actual, double expected, double rel, const char *what,
                const char *file, int line)
{
    double scale = fmax (fabs (expected), 1e-12);
    if (!(fabs (actual - expected) <= rel * scale)) {
        print_error ("%s:%d: %s = %.12g, expected %.12g\n", file, line, what, actual,
                     expected);
        _fail (file, line);
    }
}

/*  The bound of cfg in model for the config's application type. */
static bound_tree_t *
tree_of (const config_t *cfg, bound_model_t model)
{
    bound_app_t app = {cfg->tasks.input_mb, cfg->tasks.units};
    char err[TF_ERRLEN] = "";
    bound_tree_t *tree = bound_tree_new (cfg, model, &app, err, sizeof err);
    if (!tree)
        fail_msg ("bound_tree_new: %s", err);
    return tree;
}

static const bound_entry_t *
entry (const bound_tree_t *tree, const char *name)
{
    int i = config_find_node (tree->cfg, name);
    if (i < 0)
        fail_msg ("no node %s", name);
    return &tree->nodes[i];
}

/*  Solve the LP and require it to agree with the greedy everywhere. */
static void
assert_lp_equal (bound_tree_t *tree)
{
    char err[TF_ERRLEN] = "";
    if (bound_tree_check_lp (tree, err, sizeof err) != 0)
        fail_msg ("LP: %s", err);
    double rel;
    bound_lp_cmp_t verdict = bound_tree_lp_verdict (tree, &rel);
    if (verdict != BOUND_LP_EQUAL)
        fail_msg ("%s, model %s: %s (relative difference %g; greedy %.12g, LP %.12g)",
                  tree->cfg->name, bound_model_str (tree->model),
                  bound_lp_cmp_str (verdict), rel, tree->bound, tree->lp_bound);
}

/*  Assert a node's place in the schedule. */
static void
assert_role (const bound_tree_t *tree, const char *name, bound_role_t role,
             bound_why_t why)
{
    const bound_entry_t *e = entry (tree, name);
    if (e->role != role || e->why != why)
        fail_msg ("%s: %s (%s), expected %s (%s)", name, bound_role_str (e->role),
                  bound_why_str (e->why), bound_role_str (role), bound_why_str (why));
}

/* ------------------------------------------------------------------------
 *  Names and parsing.
 */

static void
test_names (void **state)
{
    (void) state;
    bound_model_t model = BOUND_MULTI;
    assert_int_equal (bound_model_parse ("single", &model), 0);
    assert_int_equal (model, BOUND_SINGLE);
    assert_int_equal (bound_model_parse ("bwc", &model), 0);
    assert_int_equal (model, BOUND_BWC);
    assert_int_equal (bound_model_parse ("multi", &model), 0);
    assert_int_equal (model, BOUND_MULTI);
    assert_int_equal (bound_model_parse ("Multi", &model), -1);
    assert_int_equal (bound_model_parse ("", &model), -1);
    assert_int_equal (bound_model_parse (NULL, &model), -1);
    assert_int_equal (model, BOUND_MULTI);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        assert_int_equal (bound_model_parse (bound_model_str (m), &model), 0);
        assert_int_equal (model, m);
    }
    assert_string_equal (bound_model_str (BOUND_MODEL_COUNT), "?");
    assert_string_equal (bound_why_str (BOUND_WHY_INTERFERENCE), "IR_s Z C >= 1");
    assert_string_equal (bound_why_str (BOUND_WHY_OUT_BW),
                         "outgoing bandwidth exhausted");
    assert_string_equal (bound_why_str (BOUND_WHY_IN_BW), "incoming bandwidth exhausted");
    assert_string_equal (bound_why_str (BOUND_WHY_CPU), "CPU exhausted by interference");
    assert_string_equal (bound_role_str (BOUND_ROLE_PARTIAL), "partial");
    assert_int_equal (bound_lp_compare (1.0, 1.0 + 1e-9), BOUND_LP_EQUAL);
    assert_int_equal (bound_lp_compare (1.0, 1.0 + 1e-5), BOUND_LP_BELOW);
    assert_int_equal (bound_lp_compare (1.0 + 1e-5, 1.0), BOUND_LP_ABOVE);
}

static void
test_bad_application (void **state)
{
    (void) state;
    config_t *cfg = test_config_from ("{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
                                 " 'tree': [{'name': 'r', 'compute': 1}]}");
    char err[TF_ERRLEN] = "";
    bound_app_t bad[] = {{-1, 1}, {NAN, 1}, {INFINITY, 1}, {1, 0}, {1, -2}, {1, NAN}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = '\0';
        assert_null (bound_tree_new (cfg, BOUND_MULTI, &bad[k], err, sizeof err));
        assert_true (strlen (err) > 0);
    }
    assert_non_null (strstr (err, "units"));
    config_destroy (&cfg);
}

/* ------------------------------------------------------------------------
 *  Small trees by hand.
 */

/*  A lone root: compute 9 units/s, w = 3 units: C = 9/3 = 3 tasks/s, all
 *  computed at the root, in every model. */
static void
test_lone_root (void **state)
{
    (void) state;
    config_t *cfg = test_config_from ("{'tasks': {'count': 1, 'input_mb': 2, 'units': 3},"
                                 " 'tree': [{'name': 'r', 'compute': 9}]}");
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        bound_tree_t *tree = tree_of (cfg, m);
        assert_near (tree->bound, 3.0, HAND_TOL);
        const bound_entry_t *r = entry (tree, "r");
        assert_near (r->that, 3.0, HAND_TOL);
        assert_near (r->t, 3.0, HAND_TOL);
        assert_near (r->s, 3.0, HAND_TOL);
        assert_near (r->share, 1.0, HAND_TOL);
        assert_int_equal (r->role, BOUND_ROLE_ROOT);
        assert_int_equal (r->limit, BOUND_WHY_NONE);
        assert_true (isinf (r->node.recv_max));
        assert_lp_equal (tree);
        assert_near (tree->lp_bound, 3.0, HAND_TOL);
        bound_tree_destroy (&tree);
        assert_null (tree);
    }
    config_destroy (&cfg);
}

/*  One child. Z = 1 MB, w = 2 units.
 *  root: C0 = 4/2 = 2 tasks/s.
 *  c: C = 6/2 = 3, B_r = 4/1 = 4, r = IR_r Z C = 0.05 * 1 * 3 = 0.15,
 *     That(c) = min (4, 3 / 1.15) = 2.608695652173913.
 *  a = IR_s Z C0 = 0.1 * 1 * 2 = 0.2.
 *  multi: T(root) = 2 + 2.608695652 * (1 - 0.2) = 4.086956521739130;
 *     S(root) = 4.086956522 - 2.608695652 = 1.478260870
 *            (= C0 (1 - IR_s Z T(c)) = 2 (1 - 0.1 * 2.608695652)).
 *  single: the port is busy 2.6087/4 = 65% of the time: same figures.
 *  bwc: no interference: That(c) = min (4, 3) = 3, T(root) = 2 + 3 = 5. */
static void
test_one_child (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 2},"
        " 'tree': [{'name': 'root', 'compute': 4},"
        "  {'name': 'c', 'parent': 'root', 'compute': 6, 'link_mbps': 4,"
        "   'ir_send': 0.1, 'ir_recv': 0.05}]}");
    for (int m = BOUND_MULTI; m <= BOUND_SINGLE; m++) {
        bound_tree_t *tree = tree_of (cfg, m);
        assert_near (entry (tree, "c")->that, 2.608695652173913, HAND_TOL);
        assert_near (entry (tree, "c")->load, 0.2, HAND_TOL);
        assert_near (tree->bound, 4.086956521739130, HAND_TOL);
        assert_near (entry (tree, "root")->s, 1.478260869565217, HAND_TOL);
        assert_near (entry (tree, "root")->share, 1.478260869565217 / 4.086956521739130,
                     HAND_TOL);
        assert_near (entry (tree, "c")->s, 2.608695652173913, HAND_TOL);
        assert_role (tree, "c", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
        assert_int_equal (entry (tree, "root")->limit, BOUND_WHY_NONE);
        assert_lp_equal (tree);
        bound_tree_destroy (&tree);
    }
    bound_tree_t *tree = tree_of (cfg, BOUND_BWC);
    assert_near (entry (tree, "c")->that, 3.0, HAND_TOL);
    assert_near (tree->bound, 5.0, HAND_TOL);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  A child excluded by IR_s Z C >= 1. Z = 1, w = 1, root C0 = 8.
 *  x: IR_s 0.125: a = 0.125 * 1 * 8 = 1 exactly: never used (IA models).
 *  y: IR_s 0.0625: a = 0.5; That(y) = min (10, 4) = 4.
 *  multi and single: T(root) = 8 + 4 * (1 - 0.5) = 10 (single: port
 *  4/10 busy). bwc ignores interference: x (That 5, B_r 8, port 5/8) and y
 *  (That 4, B_r 10, port 4/10) both fit: 8 + 5 + 4 = 17. */
static void
test_excluded_child (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 8},"
        "  {'name': 'x', 'parent': 'root', 'compute': 5, 'link_mbps': 10,"
        "   'ir_send': 0.125},"
        "  {'name': 'y', 'parent': 'root', 'compute': 4, 'link_mbps': 10,"
        "   'ir_send': 0.0625}]}");
    for (int m = BOUND_MULTI; m <= BOUND_SINGLE; m++) {
        bound_tree_t *tree = tree_of (cfg, m);
        assert_near (entry (tree, "x")->load, 1.0, 1e-15);
        assert_near (tree->bound, 10.0, HAND_TOL);
        assert_role (tree, "x", BOUND_ROLE_UNUSED, BOUND_WHY_INTERFERENCE);
        assert_role (tree, "y", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
        assert_true (entry (tree, "x")->t == 0);
        assert_near (entry (tree, "x")->that, 5.0, HAND_TOL);
        assert_near (entry (tree, "root")->s, 6.0, HAND_TOL);   /* 8 (1 - 0.0625 * 4) */
        assert_lp_equal (tree);
        bound_tree_destroy (&tree);
    }
    bound_tree_t *tree = tree_of (cfg, BOUND_BWC);
    assert_near (tree->bound, 17.0, HAND_TOL);
    assert_role (tree, "x", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  A bandwidth-limited fork. Z = 2 MB, w = 1, root C0 = 6, send limit
 *  10 MB/s: B_s = 5 tasks/s. Every link 8 MB/s: B_r = 4. No IR_r, so
 *  That(child) = its compute rate. In tree order:
 *    c4: C 2,   IR_s 0.04 -> a = 0.04 * 2 * 6 = 0.48
 *    c1: C 2,   IR_s 0.01 -> a = 0.12
 *    c5: C 1,   IR_s 0.1  -> a = 1.2: excluded
 *    c3: C 3,   IR_s 0.03 -> a = 0.36
 *    c2: C 1.5, IR_s 0.02 -> a = 0.24
 *  multi, by a: c1 2 (sum 2), c2 1.5 (3.5), c3 the partial 5 - 3.5 = 1.5,
 *    c4 nothing (B_s used up).
 *    T = 6 + 2 * 0.88 + 1.5 * 0.76 + 1.5 * 0.64 = 6 + 1.76 + 1.14 + 0.96 = 9.86;
 *    S(root) = 9.86 - 5 = 4.86 = 6 (1 - 2 (0.01*2 + 0.02*1.5 + 0.03*1.5)).
 *  single: every B_r is 4, so the priority B_r (1 - a) is the same order;
 *    the port allows sum x <= 4: c1 2, c2 1.5, c3 0.5.
 *    T = 6 + 1.76 + 1.14 + 0.5 * 0.64 = 9.22.
 *  bwc: a = 0, every c_i = 1/4: tree order; the port fits 4 tasks/s:
 *    c4 2, c1 2 (sum c_i/w_i = 2/4 + 2/4 = 1, so p = 2 and no partial):
 *    1/w_tree = 6 + 2 + 2 = 10. */
static void
test_bandwidth_fork (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 2, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 6, 'send_limit_mbps': 10},"
        "  {'name': 'c4', 'parent': 'root', 'compute': 2, 'link_mbps': 8,"
        "   'ir_send': 0.04},"
        "  {'name': 'c1', 'parent': 'root', 'compute': 2, 'link_mbps': 8,"
        "   'ir_send': 0.01},"
        "  {'name': 'c5', 'parent': 'root', 'compute': 1, 'link_mbps': 8,"
        "   'ir_send': 0.1},"
        "  {'name': 'c3', 'parent': 'root', 'compute': 3, 'link_mbps': 8,"
        "   'ir_send': 0.03},"
        "  {'name': 'c2', 'parent': 'root', 'compute': 1.5, 'link_mbps': 8,"
        "   'ir_send': 0.02}]}");
    bound_tree_t *tree = tree_of (cfg, BOUND_MULTI);
    assert_near (tree->bound, 9.86, HAND_TOL);
    assert_near (entry (tree, "root")->s, 4.86, HAND_TOL);
    assert_role (tree, "c1", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "c2", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "c3", BOUND_ROLE_PARTIAL, BOUND_WHY_OUT_BW);
    assert_role (tree, "c4", BOUND_ROLE_UNUSED, BOUND_WHY_OUT_BW);
    assert_role (tree, "c5", BOUND_ROLE_UNUSED, BOUND_WHY_INTERFERENCE);
    assert_near (entry (tree, "c3")->t, 1.5, HAND_TOL);
    assert_near (entry (tree, "c3")->s, 1.5, HAND_TOL);
    assert_near (entry (tree, "c3")->share, 1.5 / 9.86, HAND_TOL);
    assert_int_equal (entry (tree, "root")->limit, BOUND_WHY_OUT_BW);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);

    tree = tree_of (cfg, BOUND_SINGLE);
    assert_near (tree->bound, 9.22, HAND_TOL);
    assert_near (entry (tree, "c3")->t, 0.5, HAND_TOL);
    assert_role (tree, "c3", BOUND_ROLE_PARTIAL, BOUND_WHY_OUT_BW);
    assert_role (tree, "c4", BOUND_ROLE_UNUSED, BOUND_WHY_OUT_BW);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);

    tree = tree_of (cfg, BOUND_BWC);
    assert_near (tree->bound, 10.0, HAND_TOL);
    assert_role (tree, "c4", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "c1", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "c3", BOUND_ROLE_UNUSED, BOUND_WHY_OUT_BW);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  The classic bandwidth-centric formula. Z = 1, w = 1, root w_0 = 1/1.
 *    A: C 3,   link 6: c = 1/6, w = 1/3, c/w = 0.5; IR_s 2 (ignored by
 *       bwc; the IA models exclude it: a = 2 * 1 * 1 >= 1)
 *    B: C 1.6, link 4: c = 1/4, w = 1/1.6, c/w = 0.4
 *    C: C 5,   link 2: That = min (2, 5) = 2: c = 1/2, w = 1/2, c/w = 1
 *    D: C 1,   link 1: c = 1
 *  Sorted by c: A, B, C, D. A + B: 0.9 <= 1; + C: 1.9 > 1, so p = 2 and
 *  1/w_tree = 1 + 3 + 1.6 + (1 - 0.9) / (1/2) = 5.8; C gets 0.2, D none.
 *  single-port IA: A excluded; B, C, D have a = 0, r = 0, so by
 *  B_r (1 - 0): B (port 0.4), C (port 1.0 for 2 tasks/s, gets the rest,
 *  0.6 * 2 = 1.2): T = 1 + 1.6 + 1.2 = 3.8. */
static void
test_bwc_classic (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 1},"
        "  {'name': 'D', 'parent': 'root', 'compute': 1, 'link_mbps': 1},"
        "  {'name': 'C', 'parent': 'root', 'compute': 5, 'link_mbps': 2},"
        "  {'name': 'A', 'parent': 'root', 'compute': 3, 'link_mbps': 6, 'ir_send': 2},"
        "  {'name': 'B', 'parent': 'root', 'compute': 1.6, 'link_mbps': 4}]}");
    bound_tree_t *tree = tree_of (cfg, BOUND_BWC);
    assert_near (tree->bound, 5.8, HAND_TOL);
    assert_near (entry (tree, "C")->that, 2.0, HAND_TOL);
    assert_near (entry (tree, "C")->t, 0.2, HAND_TOL);
    assert_role (tree, "A", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "B", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "C", BOUND_ROLE_PARTIAL, BOUND_WHY_OUT_BW);
    assert_role (tree, "D", BOUND_ROLE_UNUSED, BOUND_WHY_OUT_BW);
    assert_true (entry (tree, "A")->load == 0);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);

    tree = tree_of (cfg, BOUND_SINGLE);
    assert_near (tree->bound, 3.8, HAND_TOL);
    assert_role (tree, "A", BOUND_ROLE_UNUSED, BOUND_WHY_INTERFERENCE);
    assert_near (entry (tree, "C")->t, 1.2, HAND_TOL);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  B_r^n caps T(n): forwarding beyond it is pointless, and the greedy as first stated (docs/model.md)
 *  read literally (give every child its That) would leave S(n) < 0.
 *  Z = 1, w = 1. root C 1; mid C 2, B_r 3, IR_r 0.1: r = 0.1 * 1 * 2 =
 *  0.2; leaf C 10, B_r 10: That 10; no IR_s anywhere.
 *  mid uncapped: (2 + 10) / 1.2 = 10 > B_r = 3, so T(mid) = 3 and mid
 *  sends only what it needs: 3 * 1.2 = 2 + x, x = 1.6 (leaf partial,
 *  incoming bandwidth exhausted); S(mid) = 3 - 1.6 = 1.4
 *  (= C (1 - IR_r Z T) = 2 (1 - 0.1 * 3)).
 *  root: 1 + 3 = 4; shares 1/4, 1.4/4, 1.6/4. */
static void
test_recv_cap (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 1},"
        "  {'name': 'mid', 'parent': 'root', 'compute': 2, 'link_mbps': 3,"
        "   'ir_recv': 0.1},"
        "  {'name': 'leaf', 'parent': 'mid', 'compute': 10, 'link_mbps': 10}]}");
    for (int m = BOUND_MULTI; m <= BOUND_SINGLE; m++) {
        bound_tree_t *tree = tree_of (cfg, m);
        assert_near (entry (tree, "mid")->that, 3.0, HAND_TOL);
        assert_int_equal (entry (tree, "mid")->that_limit, BOUND_WHY_IN_BW);
        assert_near (entry (tree, "mid")->s, 1.4, HAND_TOL);
        assert_near (entry (tree, "leaf")->t, 1.6, HAND_TOL);
        assert_role (tree, "leaf", BOUND_ROLE_PARTIAL, BOUND_WHY_IN_BW);
        assert_near (tree->bound, 4.0, HAND_TOL);
        assert_near (entry (tree, "root")->share, 0.25, HAND_TOL);
        assert_near (entry (tree, "mid")->share, 0.35, HAND_TOL);
        assert_near (entry (tree, "leaf")->share, 0.40, HAND_TOL);
        assert_lp_equal (tree);
        bound_tree_destroy (&tree);
    }
    config_destroy (&cfg);
}

/*  The CPU runs out before the port (multi-port): S(n) >= 0 binds. Z = 1,
 *  w = 1, root C 1, no send limit; child C 10, B_r 100, IR_s 0.5: a = 0.5.
 *  Giving the child its That = 10 would claim T = 1 + 10 * 0.5 = 6 with
 *  S = 6 - 10 < 0, which no schedule reaches (the LP says 2). The CPU
 *  allows sum (a + r) x <= C: 0.5 x <= 1, x = 2; T = 1 + 2 * 0.5 = 2, S = 0. */
static void
test_cpu_limit_multi (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 1},"
        "  {'name': 'c', 'parent': 'root', 'compute': 10, 'link_mbps': 100,"
        "   'ir_send': 0.5}]}");
    bound_tree_t *tree = tree_of (cfg, BOUND_MULTI);
    assert_near (tree->bound, 2.0, HAND_TOL);
    assert_near (entry (tree, "c")->t, 2.0, HAND_TOL);
    assert_near (entry (tree, "root")->s + 1.0, 1.0, HAND_TOL);
    assert_role (tree, "c", BOUND_ROLE_PARTIAL, BOUND_WHY_CPU);
    assert_lp_equal (tree);
    assert_near (tree->lp_bound, 2.0, HAND_TOL);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  The single-port priority is not optimal when the CPU runs out first.
 *  Z = 1, w = 1, root C 1.
 *    A: C 10, B_r 10, IR_s 0.5: a = 0.5, That 10, priority 10 * 0.5 = 5
 *    B: C 2,  B_r 2,  IR_s 0.1: a = 0.1, That 2,  priority 2 * 0.9 = 1.8
 *  By priority alone: A first, the CPU allows 0.5 x <= 1, x_A = 2, B
 *  nothing: T = 1 + 2 * 0.5 = 2.
 *  The LP: max 0.5 xA + 0.9 xB, xA/10 + xB/2 <= 1 (port), 0.5 xA + 0.1 xB
 *  <= 1 (CPU). Vertices: (2, 0) -> 1; (0, 2) -> 1.8; both bind: xA = 10 -
 *  5 xB, 5 - 2.5 xB + 0.1 xB = 1, xB = 5/3, xA = 5/3 -> 7/3. So T = 1 +
 *  7/3 = 10/3, S(root) = 0, both children partial, port and CPU used up. */
static void
test_cpu_limit_single (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 1},"
        "  {'name': 'A', 'parent': 'root', 'compute': 10, 'link_mbps': 10,"
        "   'ir_send': 0.5},"
        "  {'name': 'B', 'parent': 'root', 'compute': 2, 'link_mbps': 2,"
        "   'ir_send': 0.1}]}");
    bound_tree_t *tree = tree_of (cfg, BOUND_SINGLE);
    assert_near (tree->bound, 10.0 / 3, HAND_TOL);
    assert_near (entry (tree, "A")->t, 5.0 / 3, HAND_TOL);
    assert_near (entry (tree, "B")->t, 5.0 / 3, HAND_TOL);
    assert_true (entry (tree, "root")->s < 1e-9);
    assert_role (tree, "A", BOUND_ROLE_PARTIAL, BOUND_WHY_OUT_BW_CPU);
    assert_role (tree, "B", BOUND_ROLE_PARTIAL, BOUND_WHY_OUT_BW_CPU);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  A deep chain R -> N1 -> N2 -> N3, Z = 1, w = 2.
 *    R:  C 6/2 = 3, root
 *    N1: C 4, B_r 4.5, IR_r 0.05: r = 0.2; IR_s 0.1:  a at R  = 0.1 * 3 = 0.3
 *    N2: C 2, B_r 4,   IR_r 0.1:  r = 0.2; IR_s 0.05: a at N1 = 0.05 * 4 = 0.2
 *    N3: C 1.5, B_r 1, no IR_r;            IR_s 0.2:  a at N2 = 0.2 * 2 = 0.4
 *  Bottom-up:
 *    That(N3) = min (1, 1.5) = 1 (incoming bandwidth).
 *    N2: (2 + 1 * 0.6) / 1.2 = 13/6 = 2.1667 < 4; CPU: (0.4 + 0.2) * 1 <= 2.
 *    N1: uncapped (4 + 0.8 * 13/6) / 1.2 = 43/9 = 4.78 > 4.5, so That(N1) =
 *        4.5 and N2 gets (4.5 * 1.2 - 4) / 0.8 = 1.75 (partial, incoming
 *        bandwidth exhausted).
 *    R:  3 + 0.7 * 4.5 = 6.15; S(R) = 6.15 - 4.5 = 1.65.
 *  Top-down: N1 gets 4.5, S(N1) = 4.5 - 1.75 = 2.75. N2 gets only 1.75 <
 *  13/6, so it sends N3 just enough: 1.75 * 1.2 = 2 + 0.6 x, x = 1/6 (N3
 *  partial: its parent gets only a partial share); S(N2) = 1.75 - 1/6.
 *  Sum of S: 1.65 + 2.75 + 1.58333 + 0.16667 = 6.15. */
static void
test_deep_chain (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 1, 'units': 2},"
        " 'tree': [{'name': 'N3', 'parent': 'N2', 'compute': 3, 'link_mbps': 1,"
        "   'ir_send': 0.2},"
        "  {'name': 'N2', 'parent': 'N1', 'compute': 4, 'link_mbps': 4, 'ir_send': 0.05,"
        "   'ir_recv': 0.1},"
        "  {'name': 'N1', 'parent': 'R', 'compute': 8, 'link_mbps': 4.5, 'ir_send': 0.1,"
        "   'ir_recv': 0.05},"
        "  {'name': 'R', 'compute': 6}]}");
    for (int m = BOUND_MULTI; m <= BOUND_SINGLE; m++) {
        bound_tree_t *tree = tree_of (cfg, m);
        assert_near (entry (tree, "N3")->that, 1.0, HAND_TOL);
        assert_int_equal (entry (tree, "N3")->that_limit, BOUND_WHY_IN_BW);
        assert_near (entry (tree, "N2")->that, 13.0 / 6, HAND_TOL);
        assert_near (entry (tree, "N1")->that, 4.5, HAND_TOL);
        assert_near (tree->bound, 6.15, HAND_TOL);
        assert_near (entry (tree, "R")->s, 1.65, HAND_TOL);
        assert_near (entry (tree, "N1")->s, 2.75, HAND_TOL);
        assert_near (entry (tree, "N2")->t, 1.75, HAND_TOL);
        assert_near (entry (tree, "N2")->s, 1.75 - 1.0 / 6, HAND_TOL);
        assert_near (entry (tree, "N3")->t, 1.0 / 6, HAND_TOL);
        assert_role (tree, "N1", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
        assert_role (tree, "N2", BOUND_ROLE_PARTIAL, BOUND_WHY_IN_BW);
        assert_role (tree, "N3", BOUND_ROLE_PARTIAL, BOUND_WHY_SHARE);
        assert_int_equal (tree->order[0], config_find_node (cfg, "R"));
        assert_int_equal (tree->order[3], config_find_node (cfg, "N3"));
        assert_lp_equal (tree);
        bound_tree_destroy (&tree);
    }
    config_destroy (&cfg);
}

/*  A long chain (deeper than any sane recursion): 2000 nodes, each C 1
 *  task/s, links 10000 MB/s, no interference, Z = 1: T(root) = 2000. */
static void
test_long_chain (void **state)
{
    (void) state;
    const int n = 2000;
    size_t len = 256 + (size_t) n * 96;
    char *text = xmalloc (len);
    size_t used = (size_t) snprintf (text, len,
                                     "{'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
                                     " 'tree': [{'name': 'n0', 'compute': 1}");
    for (int i = 1; i < n; i++)
        used += (size_t) snprintf (text + used, len - used,
                                   ", {'name': 'n%d', 'parent': 'n%d', 'compute': 1,"
                                   " 'link_mbps': 10000}", i, i - 1);
    snprintf (text + used, len - used, "]}");
    config_t *cfg = test_config_from (text);
    free (text);
    bound_tree_t *tree = tree_of (cfg, BOUND_MULTI);
    assert_near (tree->bound, 2000.0, HAND_TOL);
    assert_near (entry (tree, "n1000")->that, 1000.0, HAND_TOL);
    assert_near (entry (tree, "n1999")->share, 1.0 / 2000, HAND_TOL);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  Z = 0: tasks carry no data; links limit nothing and there is no
 *  interference, so every node computes at full rate in every model:
 *  w = 1, 2 + 3 + 4 = 9 tasks/s despite 0.1 MB/s links and large IR. */
static void
test_zero_input (void **state)
{
    (void) state;
    config_t *cfg = test_config_from (
        "{'tasks': {'count': 1, 'input_mb': 0, 'units': 1},"
        " 'tree': [{'name': 'root', 'compute': 2, 'send_limit_mbps': 0.1},"
        "  {'name': 'a', 'parent': 'root', 'compute': 3, 'link_mbps': 0.1, 'ir_send': 5,"
        "   'ir_recv': 5},"
        "  {'name': 'b', 'parent': 'root', 'compute': 4, 'link_mbps': 0.1,"
        "   'ir_send': 5}]}");
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        bound_tree_t *tree = tree_of (cfg, m);
        assert_near (tree->bound, 9.0, HAND_TOL);
        assert_true (isinf (entry (tree, "a")->node.recv_max));
        assert_true (isinf (entry (tree, "root")->node.send_max));
        assert_role (tree, "a", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
        assert_role (tree, "b", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
        assert_lp_equal (tree);
        bound_tree_destroy (&tree);
    }
    config_destroy (&cfg);
}

/*  The step on its own, as a node of a running tree takes it: its own
 *  parameters plus the subtree bounds its children reported. The numbers
 *  are test_bandwidth_fork's root (multi): C 6, B_s 5, children
 *  (That, a/C = IR_s Z): (2, 0.08), (2, 0.02), (1, 0.2), (3, 0.06),
 *  (1.5, 0.04). Then the same node capped at a target of 7 tasks/s: 7 =
 *  6 + gain, gain 1 = 2 * 0.88 is reached within the first child: x =
 *  1 / 0.88; the rest get nothing (the node's share is partial). A
 *  target of 0: nothing at all. */
static void
test_step_alone (void **state)
{
    (void) state;
    bound_node_t node = {
        .compute = 6, .recv_max = INFINITY, .send_max = 5, .recv_loss = 0,
    };
    bound_child_t children[] = {
        {.that = 2, .recv_max = 4, .send_loss = 0.08},
        {.that = 2, .recv_max = 4, .send_loss = 0.02},
        {.that = 1, .recv_max = 4, .send_loss = 0.2},
        {.that = 3, .recv_max = 4, .send_loss = 0.06},
        {.that = 1.5, .recv_max = 4, .send_loss = 0.04},
    };
    bound_share_t shares[5];
    bound_step_t step;
    bound_step (&node, BOUND_MULTI, children, 5, INFINITY, &step, shares);
    assert_near (step.t, 9.86, HAND_TOL);
    assert_near (step.s, 4.86, HAND_TOL);
    assert_near (step.sent, 5.0, HAND_TOL);
    assert_int_equal (step.limit, BOUND_WHY_OUT_BW);
    assert_int_equal (shares[0].role, BOUND_ROLE_UNUSED);
    assert_int_equal (shares[1].role, BOUND_ROLE_SATURATED);
    assert_int_equal (shares[2].why, BOUND_WHY_INTERFERENCE);
    assert_near (shares[2].load, 1.2, HAND_TOL);
    assert_near (shares[3].x, 1.5, HAND_TOL);
    assert_int_equal (shares[3].role, BOUND_ROLE_PARTIAL);

    bound_step (&node, BOUND_MULTI, children, 5, 7.0, &step, shares);
    assert_near (step.t, 7.0, HAND_TOL);
    assert_near (shares[1].x, 1 / 0.88, HAND_TOL);
    assert_int_equal (shares[1].role, BOUND_ROLE_PARTIAL);
    assert_int_equal (shares[1].why, BOUND_WHY_SHARE);
    assert_int_equal (shares[4].role, BOUND_ROLE_UNUSED);
    assert_int_equal (shares[4].why, BOUND_WHY_SHARE);
    assert_int_equal (step.limit, BOUND_WHY_SHARE);

    bound_step (&node, BOUND_MULTI, children, 5, 0.0, &step, shares);
    assert_true (step.t == 0 && step.s == 0 && step.sent == 0);
    assert_int_equal (step.limit, BOUND_WHY_IDLE);
    assert_int_equal (shares[1].why, BOUND_WHY_IDLE);

    /*  A leaf: min (B_r, C / (1 + r)) = min (4, 3 / 1.5) = 2. */
    bound_node_t leaf = {
        .compute = 3, .recv_max = 4, .send_max = INFINITY, .recv_loss = 1.0 / 6,
    };
    bound_step (&leaf, BOUND_SINGLE, NULL, 0, INFINITY, &step, NULL);
    assert_near (step.t, 2.0, HAND_TOL);
    assert_int_equal (step.limit, BOUND_WHY_NONE);
    bound_step (&leaf, BOUND_BWC, NULL, 0, INFINITY, &step, NULL);
    assert_near (step.t, 3.0, HAND_TOL);
}

/* ------------------------------------------------------------------------
 *  The reference fork.
 */

static config_t *
fork7 (void)
{
    char *path = xasprintf ("%s/configs/fork7.json", test_srcdir ());
    char err[TF_ERRLEN] = "";
    config_t *cfg = config_load_file (path, err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    free (path);
    return cfg;
}

/*  fork7, Z = 2 MB, w = 5 diagonals (the config's type), multi-port:
 *    Lab0: C = 9.06/5 = 1.812, B_s = 10.7/2 = 5.35.
 *    child  C      r = IR_r Z C   That = min (B_r, C/(1+r))   a = IR_s Z C0
 *    Lab3   4.772  0.4227992      3.353951844                 0.1206792
 *    Lab4   0.694  0.0630152      0.652859903                 0.0753792
 *    Lab5   0.604  0.0750168      0.561851685                 0.0819024
 *    Lab6   1.654  0.043004       1.585804081                 0.1199544
 *    SB0    4.51   0.38335        3.260201684 (B_r 3.865)     0.1239408
 *    Tenn   2.646  0.68796        0.1 = B_r (0.2/2)           0.1199544
 *  By a: Lab4, Lab5, Lab6 and Tenn (tied, tree order), Lab3, SB0.
 *  0.652860 + 0.561852 + 1.585804 + 0.1 = 2.900516; Lab3 gets the rest of
 *  5.35, 2.449484; SB0 nothing.
 *  T = 1.812 + 0.652860 (0.924621) + 0.561852 (0.918098) + 1.585804
 *  (0.880046) + 0.1 (0.880046) + 2.449484 (0.879321) = 6.568949515.
 *  The CPU is far from short: sum a x = 0.593 < 1.812. */
static void
test_fork7_default (void **state)
{
    (void) state;
    config_t *cfg = fork7 ();
    bound_tree_t *tree = tree_of (cfg, BOUND_MULTI);
    assert_near (tree->bound, 6.568949515, HAND_TOL);
    assert_near (entry (tree, "Lab3")->that, 3.353951844, HAND_TOL);
    assert_near (entry (tree, "Lab4")->that, 0.652859903, HAND_TOL);
    assert_near (entry (tree, "Lab5")->that, 0.561851685, HAND_TOL);
    assert_near (entry (tree, "Lab6")->that, 1.585804081, HAND_TOL);
    assert_near (entry (tree, "SB0")->that, 3.260201684, HAND_TOL);
    assert_near (entry (tree, "Tenn")->that, 0.1, HAND_TOL);
    assert_int_equal (entry (tree, "Tenn")->that_limit, BOUND_WHY_IN_BW);
    assert_near (entry (tree, "Lab3")->t, 2.449484331, HAND_TOL);
    assert_near (entry (tree, "Lab0")->s, 6.568949515 - 5.35, HAND_TOL);
    assert_role (tree, "Lab4", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "Lab5", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "Lab6", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "Tenn", BOUND_ROLE_SATURATED, BOUND_WHY_NONE);
    assert_role (tree, "Lab3", BOUND_ROLE_PARTIAL, BOUND_WHY_OUT_BW);
    assert_role (tree, "SB0", BOUND_ROLE_UNUSED, BOUND_WHY_OUT_BW);
    assert_lp_equal (tree);
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
}

/*  fork7 for the 18 application types (Z in {2, 5, 10} MB x w in {1, 3,
 *  5, 7, 9, 11} diagonals), in the three models. The expected bounds were
 *  computed by a separate 40-line Python script written from docs/model.md
 *  alone (not from this code): for each child That = min (link/Z, C/(1 +
 *  IR_r Z C)) (C = compute/w), a = IR_s Z C0 (0 in bwc); multi: children
 *  with a < 1 by a, each min (That, B_s left), T = C0 + sum x (1 - a);
 *  single and bwc: by (link/Z)(1 - a), each min (That, port left x
 *  link/Z), the port left shrinking by x Z / link. (The CPU limit, which
 *  the script ignores, binds in none of them.) Z = 10, w = 1: every
 *  child has a >= 1 (0.0208 x 10 x 9.06 = 1.88 is the smallest), so the
 *  root uses no child: T = C0 = 9.06. */
static void
test_fork7_all_types (void **state)
{
    (void) state;
    static const double sizes[3] = {2, 5, 10};
    static const double units[6] = {1, 3, 5, 7, 9, 11};
    static const double expected[BOUND_MODEL_COUNT][18] = {
        [BOUND_MULTI] = {12.207161890, 7.434028947, 6.568949515, 6.209052394, 6.011959351,
                         5.534222363, 9.172115188, 4.382157467, 3.425440840, 3.036979279,
                         2.827566729, 2.697090869, 9.060000000, 3.400930602, 2.441432378,
                         2.016549249, 1.790115304, 1.650168178},
        [BOUND_SINGLE] = {12.119251367, 7.413689099, 6.580090738, 6.020038109,
                          5.586940186, 5.299650268, 9.172115188, 4.344371448,
                          3.394359438, 3.025175997, 2.826298403, 2.699937640,
                          9.060000000, 3.393148503, 2.423850273, 1.997862082,
                          1.773386704, 1.636017896},
        [BOUND_BWC] = {14.463209991, 8.421069997, 7.212641998, 6.650520542, 6.056103795,
                       5.657721287, 11.222000000, 5.181069997, 3.972641998, 3.454744284,
                       3.167023332, 2.983928181, 10.141000000, 4.101000000, 2.892641998,
                       2.374744284, 2.087023332, 1.903928181},
    };
    config_t *cfg = fork7 ();
    char err[TF_ERRLEN] = "";
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        for (int k = 0; k < 18; k++) {
            bound_app_t app = {sizes[k / 6], units[k % 6]};
            bound_tree_t *tree = bound_tree_new (cfg, m, &app, err, sizeof err);
            assert_non_null (tree);
            if (fabs (tree->bound - expected[m][k]) > 1e-8 * expected[m][k])
                fail_msg ("%s Z=%g w=%g: %.9f, expected %.9f", bound_model_str (m),
                          app.input_mb, app.units, tree->bound, expected[m][k]);
            assert_lp_equal (tree);
            double sum = 0;
            for (int i = 0; i < tree->nnodes; i++)
                sum += tree->nodes[i].s;
            assert_near (sum, tree->bound, 1e-12);
            if (m != BOUND_BWC && app.input_mb == 10 && app.units == 1) {
                assert_near (entry (tree, "Lab0")->share, 1.0, 1e-15);
                for (int i = 0; i < tree->nnodes; i++)
                    if (i != cfg->root) {
                        assert_int_equal (tree->nodes[i].role, BOUND_ROLE_UNUSED);
                        assert_int_equal (tree->nodes[i].why, BOUND_WHY_INTERFERENCE);
                    }
            }
            bound_tree_destroy (&tree);
        }
    config_destroy (&cfg);
}

/* ------------------------------------------------------------------------
 *  Random trees.
 */

/*  A small deterministic generator (the test must not depend on libc's);
 *  -DRNG_SEED=N draws other trees. */
#ifndef RNG_SEED
#define RNG_SEED 0x9e3779b97f4a7c15ULL
#endif
static uint64_t rng_state = RNG_SEED;

static double
rng_unit (void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double) (rng_state >> 11) / 9007199254740992.0;
}

static double
rng_range (double lo, double hi)
{
    return lo + (hi - lo) * rng_unit ();
}

/*  A random experiment: 1 to 25 nodes, each under a random earlier one;
 *  rates over two orders of magnitude; interference scaled per tree from
 *  negligible to heavy, so that every limit shows up somewhere. */
static char *
random_config (int seq)
{
    static const double sizes[] = {0, 0.5, 1, 2, 5, 10};
    static const double ir_scales[] = {0.005, 0.03, 0.1, 0.4};
    int n = 1 + (int) (rng_unit () * 25);
    double z = sizes[(int) (rng_unit () * 6)];
    double w = 1 + (int) (rng_unit () * 11);
    double ir = ir_scales[(int) (rng_unit () * 4)];
    size_t len = 256 + (size_t) n * 256, used = 0;
    char *text = xmalloc (len);
    used += (size_t) snprintf (text + used, len - used,
                               "{\"name\": \"random%d\", \"tasks\": {\"count\": 1, "
                               "\"input_mb\": %.17g, \"units\": %.17g}, \"tree\": [",
                               seq, z, w);
    for (int i = 0; i < n; i++) {
        used += (size_t) snprintf (text + used, len - used, "%s{\"name\": \"n%d\", "
                                   "\"compute\": %.17g", i ? ", " : "", i,
                                   rng_range (0.5, 30));
        if (rng_unit () < 0.5) {
            double limit = rng_range (0.5, 20);
            used += (size_t) snprintf (text + used, len - used,
                                       ", \"send_limit_mbps\": %.17g", limit);
        }
        if (i > 0) {
            /*  One draw per statement: argument order is unspecified. */
            int parent = (int) (rng_unit () * i);
            double link = rng_range (0.1, 20);
            double ir_send = rng_range (0, ir);
            double ir_recv = rng_range (0, ir);
            used += (size_t) snprintf (
                text + used, len - used,
                ", \"parent\": \"n%d\", \"link_mbps\": %.17g, \"ir_send\": %.17g, "
                "\"ir_recv\": %.17g",
                parent, link, ir_send, ir_recv);
        }
        used += (size_t) snprintf (text + used, len - used, "}");
    }
    snprintf (text + used, len - used, "]}");
    return text;
}

/*  The schedule the tree reports obeys the model: flows within bounds,
 *  S >= 0, T = S + what goes to the children, the compute, port and
 *  B_r constraints, and the S add up to the bound. */
static void
assert_schedule_feasible (const bound_tree_t *tree)
{
    const double tol = 1e-9;
    int ia = tree->model != BOUND_BWC;
    double total = 0;
    for (int p = 0; p < tree->nnodes; p++) {
        const bound_entry_t *e = &tree->nodes[p];
        double scale = fmax (1, e->that);
        double c = e->node.compute, r = ia ? e->node.recv_loss * c : 0;
        double sent = 0, gain = 0, port = 0;
        for (int k = 0; k < e->config->nchildren; k++) {
            const bound_entry_t *ch = &tree->nodes[e->config->children[k]];
            double a = ia ? ch->send_loss * c : 0;
            assert_true (ch->t >= 0 && ch->t <= ch->that * (1 + tol));
            if (ia && a >= 1)
                assert_true (ch->t == 0);
            sent += ch->t;
            gain += ch->t * (1 - a);
            port += tree->model == BOUND_MULTI ? ch->t : ch->t / ch->node.recv_max;
        }
        assert_true (e->s >= 0);
        assert_true (fabs (e->t - e->s - sent) <= tol * scale);
        assert_true (e->t * (1 + r) <= c + gain + tol * scale);
        assert_true (e->t <= e->node.recv_max * (1 + tol));
        double port_max = tree->model == BOUND_MULTI ? e->node.send_max : 1;
        assert_true (port <= port_max * (1 + tol) + tol);
        total += e->s;
    }
    assert_true (fabs (total - tree->bound) <= tol * fmax (1, tree->bound));
}

static void
test_random_trees (void **state)
{
    (void) state;
    int limits[BOUND_WHY_COUNT] = {0};
    int priced = 0;
    char err[TF_ERRLEN];
    for (int seq = 0; seq < RANDOM_TREES; seq++) {
        char *text = random_config (seq);
        config_t *cfg = config_load_string (text, "<random>", err, sizeof err);
        if (!cfg)
            fail_msg ("random config %d: %s\n%s", seq, err, text);
        for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
            bound_tree_t *tree = tree_of (cfg, m);
            if (bound_tree_check_lp (tree, err, sizeof err) != 0)
                fail_msg ("random config %d: LP: %s", seq, err);
            double rel;
            bound_lp_cmp_t verdict = bound_tree_lp_verdict (tree, &rel);
            if (verdict != BOUND_LP_EQUAL) {
                fprintf (stderr, "%s\n", text);
                fail_msg ("random config %d (printed above), model %s: %s "
                          "(relative difference %g)",
                          seq, bound_model_str (m), bound_lp_cmp_str (verdict), rel);
            }
            assert_schedule_feasible (tree);
            for (int i = 0; i < tree->nnodes; i++) {
                limits[tree->nodes[i].that_limit]++;
                if (m == BOUND_SINGLE
                    && tree->nodes[i].that_limit == BOUND_WHY_OUT_BW_CPU)
                    priced++;
            }
            bound_tree_destroy (&tree);
        }
        config_destroy (&cfg);
        free (text);
    }
    /*  The trees reach every limit, so the comparison covers every branch
     *  of the step, the CPU's price included. */
    for (int why = BOUND_WHY_NONE; why <= BOUND_WHY_OUT_BW_CPU; why++)
        if (why != BOUND_WHY_INTERFERENCE && limits[why] == 0)
            fail_msg ("no random tree is limited by \"%s\"", bound_why_str (why));
    assert_true (priced > 0);
    print_message ("random trees: limits none %d, out %d, in %d, cpu %d, out+cpu %d "
                   "(single-port priced %d)\n",
                   limits[BOUND_WHY_NONE], limits[BOUND_WHY_OUT_BW],
                   limits[BOUND_WHY_IN_BW], limits[BOUND_WHY_CPU],
                   limits[BOUND_WHY_OUT_BW_CPU], priced);
}

static int
teardown_glpk (void **state)
{
    (void) state;
    bound_lp_cleanup ();
    return 0;
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_names),
        cmocka_unit_test (test_bad_application),
        cmocka_unit_test (test_lone_root),
        cmocka_unit_test (test_one_child),
        cmocka_unit_test (test_excluded_child),
        cmocka_unit_test (test_bandwidth_fork),
        cmocka_unit_test (test_bwc_classic),
        cmocka_unit_test (test_recv_cap),
        cmocka_unit_test (test_cpu_limit_multi),
        cmocka_unit_test (test_cpu_limit_single),
        cmocka_unit_test (test_deep_chain),
        cmocka_unit_test (test_long_chain),
        cmocka_unit_test (test_zero_input),
        cmocka_unit_test (test_step_alone),
        cmocka_unit_test (test_fork7_default),
        cmocka_unit_test (test_fork7_all_types),
        cmocka_unit_test (test_random_trees),
    };
    return cmocka_run_group_tests (tests, NULL, teardown_glpk);
}
