/*  test_progress — the controller's progress line: the rate in platform
 *  tasks/s over the last seconds and, when the run adapts, the live
 *  efficiency against the bound of the platform as it now is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "controller/progress.h"

static void
says (const char *line, const char *want)
{
    if (!strstr (line, want))
        fail_msg ("\"%s\" does not say \"%s\"", line, want);
}

static void
test_the_live_efficiency_is_the_rate_against_the_live_bound (void **state)
{
    (void) state;
    FILE *out = fopen ("/dev/null", "w");
    assert_non_null (out);
    /*  Time scale 2: 40 tasks in 5 wall seconds are 4 platform tasks/s. */
    progress_t *p = progress_new (out, PROGRESS_QUIET, "star/ia-single", 200, 2);
    char line[256];
    progress_start (p, 100);
    progress_update (p, 40, 105);
    progress_format (p, 40, 105, line, sizeof line);
    says (line, "4.00 platform tasks/s  ETA");
    assert_null (strstr (line, "of bound"));
    /*  A live bound of 5 tasks/s: 80% of it. */
    progress_set_bound (p, 5);
    progress_format (p, 40, 105, line, sizeof line);
    says (line, "4.00 platform tasks/s  80% of bound 5.00  ETA");
    /*  It follows the bound as it changes. */
    progress_set_bound (p, 4.4);
    progress_format (p, 40, 105, line, sizeof line);
    says (line, "91% of bound 4.40");
    /*  None known: none shown. */
    progress_set_bound (p, NAN);
    progress_format (p, 40, 105, line, sizeof line);
    assert_null (strstr (line, "of bound"));
    progress_set_bound (p, 0);
    progress_format (p, 40, 105, line, sizeof line);
    assert_null (strstr (line, "of bound"));
    progress_destroy (&p);
    fclose (out);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_the_live_efficiency_is_the_rate_against_the_live_bound),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
