/*  test_fanout — the ratio rule (node/fanout.h) on hand-computed cases:
 *  the smallest k whose cumulative demand reaches the send limit, every
 *  child when it never does (no limit, tasks of no data), excluded
 *  children never counted, and one child's rate changing k.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/fanout.h"

/*  n identical children of rate r, none excluded. */
static void
same (fanout_child_t *c, int n, double r)
{
    for (int i = 0; i < n; i++)
        c[i] = (fanout_child_t){.rate = r};
}

static void
test_the_port_feeds_the_smallest_k_reaching_the_limit (void **state)
{
    (void) state;
    fanout_child_t c[8];
    /*  S = 1.1 MB/s, Z = 10 MB, 0.125 tasks/s each: 1.25 MB/s from the
     *  first child alone reaches 1.1. */
    same (c, 8, 0.125);
    assert_int_equal (fanout_count (1.1, 10, c, 8), 1);
    /*  Z = 1 MB, 0.4 tasks/s: 0.4, 0.8, 1.2 -> the third reaches it. */
    same (c, 8, 0.4);
    assert_int_equal (fanout_count (1.1, 1, c, 8), 3);
    /*  Z = 0.1 MB, 10/7 tasks/s: 0.143 each, 7 of them 1.0, 8 1.143. */
    same (c, 8, 10.0 / 7);
    assert_int_equal (fanout_count (1.1, 0.1, c, 8), 8);
    /*  Exactly at the limit reaches it: 0.11 x 10 = 1.1; and 0.7 + 0.1
     *  + 0.1 + 0.1 = 1.0, which doubles sum to 0.9999999999999999: a
     *  rounding error below does not add a child. */
    same (c, 8, 0.11);
    assert_int_equal (fanout_count (1.1, 10, c, 8), 1);
    fanout_child_t round[] = {{.rate = 0.7}, {.rate = 0.1}, {.rate = 0.1}, {.rate = 0.1},
                              {.rate = 0.1}};
    assert_int_equal (fanout_count (1.0, 1, round, 5), 4);
    /*  Unequal rates, in the policy's order: 0.2 + 0.3 + 0.5 = 1.0 MB/s
     *  at Z = 1 reaches S = 1.0 at the third. */
    fanout_child_t mix[] = {{.rate = 0.2}, {.rate = 0.3}, {.rate = 0.5}, {.rate = 9}};
    assert_int_equal (fanout_count (1.0, 1, mix, 4), 3);
}

static void
test_every_child_when_the_port_never_fills (void **state)
{
    (void) state;
    fanout_child_t c[5];
    same (c, 5, 0.125);
    /*  No send limit: everyone. */
    assert_int_equal (fanout_count (0, 10, c, 5), 5);
    assert_int_equal (fanout_count (-1, 10, c, 5), 5);
    assert_int_equal (fanout_count (INFINITY, 10, c, 5), 5);
    /*  Tasks carry no data: demand 0, never reaches the limit. */
    assert_int_equal (fanout_count (1.1, 0, c, 5), 5);
    /*  Demand below the limit in all: 5 x 0.125 x 1 = 0.625 < 1.1. */
    assert_int_equal (fanout_count (1.1, 1, c, 5), 5);
    /*  Unknown rates ask nothing; an infinite one fills any port. */
    fanout_child_t u[] = {{.rate = NAN}, {.rate = -1}, {.rate = INFINITY}, {.rate = 1}};
    assert_int_equal (fanout_count (1.1, 1, u, 4), 3);
    assert_true (fanout_demand (NAN, 1) == 0);
    assert_true (fanout_demand (0.5, 0) == 0);
    assert_true (fabs (fanout_demand (0.5, 2) - 1.0) < 1e-12);
    assert_int_equal (fanout_count (1.1, 1, c, 0), 0);
}

static void
test_excluded_children_never_count (void **state)
{
    (void) state;
    /*  The first two excluded: the count starts at the third, whose 0.4
     *  and the fourth's make 0.8, the fifth's 1.2 >= 1.1: 3 counted. */
    fanout_child_t c[6];
    same (c, 6, 0.4);
    c[0].excluded = c[1].excluded = 1;
    assert_int_equal (fanout_count (1.1, 1, c, 6), 3);
    /*  Not reaching it, only those not excluded: 4. */
    assert_int_equal (fanout_count (0, 1, c, 6), 4);
    /*  All excluded: none. */
    for (int i = 0; i < 6; i++)
        c[i].excluded = 1;
    assert_int_equal (fanout_count (1.1, 1, c, 6), 0);
}

static void
test_one_child_s_rate_changes_k (void **state)
{
    (void) state;
    fanout_child_t c[8];
    same (c, 8, 0.4);
    assert_int_equal (fanout_count (1.1, 1, c, 8), 3);   /* 0.4 0.8 1.2 */
    c[0].rate = 0.1;   /* the first slows: 0.1 0.5 0.9 1.3 */
    assert_int_equal (fanout_count (1.1, 1, c, 8), 4);
    c[0].rate = 0.8;   /* it speeds up: 0.8 1.2 */
    assert_int_equal (fanout_count (1.1, 1, c, 8), 2);
    c[0].rate = 2.0;   /* alone it fills the port */
    assert_int_equal (fanout_count (1.1, 1, c, 8), 1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_the_port_feeds_the_smallest_k_reaching_the_limit),
        cmocka_unit_test (test_every_child_when_the_port_never_fills),
        cmocka_unit_test (test_excluded_children_never_count),
        cmocka_unit_test (test_one_child_s_rate_changes_k),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
