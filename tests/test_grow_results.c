/*  test_grow_results — the bound a run that grew is judged against
 *  (controller/results.c, results_judged_bound, docs/adapt.md "Grow"):
 *  the offline bound when no node joined, else the rate that would have
 *  done the run's tasks in the ideal makespan of the bound as it grew.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/proto_stats.h"
#include "overlay/util.h"

/*  One node: its bound is compute / units = 4 / 2 = 2 tasks/s. */
static const char *const one_node =
    "{\"name\": \"g\", \"tasks\": {\"count\": 10, \"input_mb\": 1, \"units\": 2},"
    " \"policy\": \"fcfs\", \"platform\": {\"join_slots\": 2},"
    " \"tree\": [{\"name\": \"root\", \"compute\": 4}]}";

typedef struct {
    config_t *cfg;
    results_t *r;
} fix_t;

/*  The run, its root having completed all 10 tasks. */
static fix_t
ran (void)
{
    char err[TF_ERRLEN];
    fix_t f;
    f.cfg = config_load_string (one_node, "<test>", err, sizeof err);
    if (!f.cfg)
        fail_msg ("config: %s", err);
    f.r = results_new (f.cfg);
    json_t *json = json_loads ("{\"completed\": 10}", 0, NULL);
    proto_stats_t s;
    if (proto_stats_decode (json, NULL, 0, 0, &s, err, sizeof err) != 0
        || results_update_stats (f.r, 0, &s, err, sizeof err) != 0)
        fail_msg ("refused: %s", err);
    proto_stats_clear (&s);
    json_decref (json);
    return f;
}

static void
done (fix_t *f)
{
    results_destroy (&f->r);
    config_destroy (&f->cfg);
}

static void
join (fix_t *f, const char *node, int admitted, double at_s, double bound_after)
{
    json_t *e = json_pack ("{s:s, s:f, s:b, s:f}", "node", node, "at_s", at_s, "admitted",
                           admitted, "bound_after", bound_after);
    results_note_join (f->r, e);
}

static void
test_no_join_is_judged_against_the_offline_bound (void **state)
{
    (void) state;
    fix_t f = ran ();
    double final = 0;
    assert_float_equal (results_judged_bound (f.r, &final), 2.0, 1e-12);
    assert_float_equal (final, 2.0, 1e-12);
    /*  A join not admitted changes nothing. */
    join (&f, "x", 0, 1, 100);
    assert_float_equal (results_judged_bound (f.r, &final), 2.0, 1e-12);
    assert_float_equal (final, 2.0, 1e-12);
    done (&f);
}

static void
test_admitted_joins_raise_the_judged_bound (void **state)
{
    (void) state;
    fix_t f = ran ();
    /*  Bound 2 until 2 s: 4 tasks; then bound 4 for the other 6: 1.5 s.
     *  Ideal makespan 3.5 s, judged bound 10 / 3.5. */
    join (&f, "j1", 1, 2, 4);
    double final = 0;
    assert_float_equal (results_judged_bound (f.r, &final), 10 / 3.5, 1e-12);
    assert_float_equal (final, 4, 1e-12);
    /*  A second at 3 s (4 + 4 x 1 = 8 tasks done by then), bound 8 for
     *  the last 2: 0.25 s. Ideal 3.25 s, judged bound 10 / 3.25. */
    join (&f, "j2", 1, 3, 8);
    assert_float_equal (results_judged_bound (f.r, &final), 10 / 3.25, 1e-12);
    assert_float_equal (final, 8, 1e-12);
    /*  One at 9 s: the ideal run had ended (3.25 s), it does not count. */
    join (&f, "j3", 1, 9, 100);
    assert_float_equal (results_judged_bound (f.r, &final), 10 / 3.25, 1e-12);
    assert_float_equal (final, 8, 1e-12);
    assert_float_equal (results_judged_bound (f.r, NULL), 10 / 3.25, 1e-12);
    done (&f);
}

/*  A join after the offline ideal makespan (10 / 2 = 5 s) does not count. */
static void
test_a_join_after_the_ideal_end_does_not_count (void **state)
{
    (void) state;
    fix_t f = ran ();
    join (&f, "late", 1, 5, 100);
    double final = 0;
    assert_float_equal (results_judged_bound (f.r, &final), 2.0, 1e-12);
    assert_float_equal (final, 2.0, 1e-12);
    done (&f);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_no_join_is_judged_against_the_offline_bound),
        cmocka_unit_test (test_admitted_joins_raise_the_judged_bound),
        cmocka_unit_test (test_a_join_after_the_ideal_end_does_not_count),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
