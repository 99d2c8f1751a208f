/*  test_ratelog — refusals are said at most `burst` a window; the rest are
 *  counted and summed up when the next window opens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "overlay/ratelog.h"

static void
test_a_flood_is_said_burst_lines_a_window (void **state)
{
    (void) state;
    ratelog_t rl = ratelog_init (3, 1.0);
    uint64_t held;
    int said = 0;
    for (int i = 0; i < 1000; i++) {   /* 1000 refusals in 0.1 s */
        said += ratelog_allow (&rl, 10.0 + i * 1e-4, &held);
        assert_true (held == 0);
    }
    assert_int_equal (said, 3);
    /*  The next window: first the 997 held back, then lines again. */
    assert_int_equal (ratelog_allow (&rl, 11.0, &held), 1);
    assert_true (held == 997);
    assert_int_equal (ratelog_allow (&rl, 11.1, &held), 1);
    assert_true (held == 0);
    /*  A flood that stops is summed up once its window is over. */
    for (int i = 0; i < 10; i++)
        ratelog_allow (&rl, 11.2, &held);   /* 1 said (3rd of the window), 9 held */
    assert_true (ratelog_overdue (&rl, 11.5) == 0);   /* its window still runs */
    assert_true (ratelog_overdue (&rl, 12.0) == 9);
    assert_true (ratelog_overdue (&rl, 13.0) == 0);
    /*  A quiet stretch: nothing held, every line said. */
    assert_int_equal (ratelog_allow (&rl, 50.0, &held), 1);
    assert_true (held == 0);
}

static void
test_degenerate_limits_still_say_something (void **state)
{
    (void) state;
    ratelog_t rl = ratelog_init (0, -1);   /* burst 1, window 1 s */
    uint64_t held;
    assert_int_equal (ratelog_allow (&rl, 0, &held), 1);
    assert_int_equal (ratelog_allow (&rl, 0.5, &held), 0);
    assert_int_equal (ratelog_allow (&rl, 1.0, &held), 1);
    assert_true (held == 1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_flood_is_said_burst_lines_a_window),
        cmocka_unit_test (test_degenerate_limits_still_say_something),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
