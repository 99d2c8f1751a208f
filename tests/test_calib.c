/*  test_calib — the calibration's plan and arithmetic (controller/calib.h)
 *  on hand-made figures: a chain R -> A -> X, so that one edge's sender
 *  receives meanwhile (RR), with figures made from known parameters by
 *  the model, different in each edge's two phases, so that a formula fed
 *  the wrong phase's figures misses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "controller/calib.h"
#include "tests/helpers.h"
#include "overlay/util.h"

static const char *const CHAIN =
    "{'name': 'chain', 'tasks': {'count': 1, 'input_mb': 1, 'units': 1},"
    " 'tree': ["
    "  {'name': 'R', 'compute': 10},"
    "  {'name': 'A', 'parent': 'R', 'compute': 4, 'link_mbps': 8,"
    "   'ir_send': 0.03, 'ir_send_alone': 0.02, 'ir_recv': 0.05},"
    "  {'name': 'X', 'parent': 'A', 'compute': 5, 'link_mbps': 5,"
    "   'ir_send': 0.06, 'ir_recv': 0.04}]}";

/*  The parameters the figures are made from. */
#define IR_R_A 0.05
#define IR_R_X 0.04
#define IR_S_A 0.03
#define IR_S_A_ALONE 0.02
#define IR_S_X 0.06
#define IR_S_X_ALONE 0.045

enum { R, A, X };

/*  One node's reply: compute rate, receive rate, send rate to its one
 *  child (ignored for the leaf). */
typedef struct {
    double units, recv, send;
} fig_t;

/*  Per phase, per node (R, A, X): the model's figures. Phases: 0 none;
 *  1 R -> A; 2 the same, A idle; 3 A -> X with R -> A; 4 the same, X idle.
 *  Each phase's rates differ from its twin's, so a mix-up shows. */
static const fig_t FIGS[5][3] = {
    {{10, 0, 0}, {4, 0, 0}, {5, 0, 0}},
    {{10 * (1 - IR_S_A * 8), 0, 8}, {4 * (1 - IR_R_A * 8), 8, 0}, {5, 0, 0}},
    {{10 * (1 - IR_S_A_ALONE * 7.5), 0, 7.5}, {0, 7.5, 0}, {5, 0, 0}},
    {{10 * (1 - IR_S_A * 6), 0, 6},
     {4 * (1 - IR_R_A * 6 - IR_S_X * 5), 6, 5}, {5 * (1 - IR_R_X * 5), 5, 0}},
    {{10 * (1 - IR_S_A * 7), 0, 7},
     {4 * (1 - IR_R_A * 7 - IR_S_X_ALONE * 4), 7, 4}, {0, 4, 0}},
};

/*  Record every node's figures of every phase, fig overriding. */
static void
record_all (calib_t *plan, const config_t *cfg, const fig_t figs[5][3])
{
    char err[TF_ERRLEN];
    for (int p = 0; p < 5; p++)
        for (int i = 0; i < 3; i++) {
            const config_node_t *n = &cfg->nodes[i];
            json_t *send = json_object ();
            if (n->nchildren)
                json_object_set_new (send, cfg->nodes[n->children[0]].name,
                                     json_real (figs[p][i].send));
            if (calib_record (plan, i, p, figs[p][i].units, figs[p][i].recv, send, err,
                              sizeof err) != 0)
                fail_msg ("phase %d node %d: %s", p, i, err);
            json_decref (send);
        }
}

static config_t *
chain (void)
{
    config_t *cfg = test_config_from (CHAIN);
    assert_int_equal (config_find_node (cfg, "R"), R);
    assert_int_equal (config_find_node (cfg, "A"), A);
    assert_int_equal (config_find_node (cfg, "X"), X);
    return cfg;
}

static void
assert_close (double got, double want)
{
    if (!(fabs (got - want) <= 1e-12))
        fail_msg ("got %.15g, want %.15g", got, want);
}

/*  Two phases per edge, the idle one right after: the child is told to
 *  stay idle, the parent streams as in the first, nobody else idles. */
static void
test_plan_has_an_idle_phase_per_edge (void **state)
{
    (void) state;
    config_t *cfg = chain ();
    calib_t *plan = calib_new (cfg, 20, 5);
    assert_int_equal (calib_phases (plan), 5);
    assert_string_equal (calib_phase_str (plan, 1), "R -> A");
    assert_string_equal (calib_phase_str (plan, 2), "R -> A, A idle");
    assert_string_equal (calib_phase_str (plan, 4), "A -> X (A receiving), X idle");
    for (int p = 0; p < 5; p++)
        for (int i = 0; i < 3; i++) {
            calib_request_t r = calib_request (plan, p, i);
            int want = (p == 2 && i == A) || (p == 4 && i == X);
            if (r.idle != want)
                fail_msg ("phase %d node %d: idle %d", p, i, r.idle);
        }
    for (int p = 1; p <= 2; p++) {
        calib_request_t r = calib_request (plan, p, R);
        assert_int_equal (r.nstreams, 1);
        assert_string_equal (r.streams[0], "A");
        assert_int_equal (calib_request (plan, p, A).nstreams, 0);
    }
    for (int p = 3; p <= 4; p++) {
        assert_string_equal (calib_request (plan, p, A).streams[0], "X");
        assert_string_equal (calib_request (plan, p, R).streams[0], "A");
    }
    calib_destroy (&plan);
    config_destroy (&cfg);
}

/*  Every parameter back from the figures: IR_s from each edge's first
 *  phase, IR_s alone from its idle phase, with the sender's RR there. */
static void
test_ir_send_alone_from_the_idle_phase (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    config_t *cfg = chain ();
    calib_t *plan = calib_new (cfg, 20, 5);
    record_all (plan, cfg, FIGS);
    if (calib_compute (plan, err, sizeof err) != 0)
        fail_msg ("%s", err);
    const calib_node_t *a = calib_node (plan, A), *x = calib_node (plan, X);
    assert_close (a->ir_r, IR_R_A);
    assert_close (x->ir_r, IR_R_X);
    assert_close (a->ir_s, IR_S_A);
    assert_close (a->ir_s_alone, IR_S_A_ALONE);
    assert_close (x->ir_s, IR_S_X);
    assert_close (x->ir_s_alone, IR_S_X_ALONE);
    assert_close (a->sr_alone, 7.5);
    assert_close (a->rr_alone, 0);          /* the root receives nothing */
    assert_close (x->sr_alone, 4);
    assert_close (x->rr_alone, 7);
    assert_close (x->c_sr_alone, FIGS[4][A].units);
    assert_close (x->c_idle, 0);
    calib_destroy (&plan);
    config_destroy (&cfg);
}

/*  A child that computed in its idle phase measured another point than
 *  asked: refused, naming it. */
static void
test_a_child_computing_when_idle_is_refused (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    fig_t figs[5][3];
    memcpy (figs, FIGS, sizeof figs);
    figs[4][X].units = 5 * (1 - IR_R_X * 4);   /* X computed as if not idle */
    config_t *cfg = chain ();
    calib_t *plan = calib_new (cfg, 20, 5);
    record_all (plan, cfg, figs);
    assert_int_equal (calib_compute (plan, err, sizeof err), -1);
    if (!strstr (err, "node X computed") || !strstr (err, "idle phase"))
        fail_msg ("error \"%s\"", err);
    calib_destroy (&plan);
    config_destroy (&cfg);
}

/*  The platform file carries ir_send_alone per non-root node, a negative
 *  one (noise) written as 0 and the node marked clamped; measure.json
 *  names each idle phase's idle node and gives the alone figures. */
static void
test_platform_and_json_carry_ir_send_alone (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    fig_t figs[5][3];
    memcpy (figs, FIGS, sizeof figs);
    figs[2][R].units = 10.2;   /* R computed faster sending to idle A: IR < 0 */
    config_t *cfg = chain ();
    calib_t *plan = calib_new (cfg, 20, 5);
    record_all (plan, cfg, figs);
    assert_int_equal (calib_compute (plan, err, sizeof err), 0);
    assert_true (calib_node (plan, A)->ir_s_alone < 0);
    char *text = calib_platform_json (plan);
    assert_non_null (text);
    assert_int_equal (calib_node (plan, A)->clamped, 1);
    assert_int_equal (calib_node (plan, X)->clamped, 0);
    config_t *got = config_load_string (text, "platform.json", err, sizeof err);
    if (!got)
        fail_msg ("%s: %s", err, text);
    assert_true (got->nodes[A].ir_send_alone == 0);
    assert_close (got->nodes[X].ir_send_alone, IR_S_X_ALONE);
    assert_close (got->nodes[X].ir_send, IR_S_X);
    config_destroy (&got);
    free (text);

    json_t *j = calib_to_json (plan);
    json_t *phases = json_object_get (j, "phases");
    assert_int_equal (json_array_size (phases), 5);
    assert_true (json_is_null (json_object_get (json_array_get (phases, 1), "idle")));
    assert_string_equal (json_string_value (json_object_get (json_array_get (phases, 2),
                                                             "idle")), "A");
    assert_string_equal (json_string_value (json_object_get (json_array_get (phases, 4),
                                                             "idle")), "X");
    json_t *xn = json_array_get (json_object_get (j, "nodes"), X);
    assert_close (json_number_value (json_object_get (xn, "ir_s_alone")), IR_S_X_ALONE);
    assert_close (json_number_value (json_object_get (xn, "rr_alone")), 7);
    json_decref (j);
    calib_destroy (&plan);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_plan_has_an_idle_phase_per_edge),
        cmocka_unit_test (test_ir_send_alone_from_the_idle_phase),
        cmocka_unit_test (test_a_child_computing_when_idle_is_refused),
        cmocka_unit_test (test_platform_and_json_carry_ir_send_alone),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
