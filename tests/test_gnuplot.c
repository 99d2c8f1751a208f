/*  test_gnuplot — the one gnuplot runner: a script is drawn into the
 *  output asked for, in the directory asked for; when gnuplot fails (a bad
 *  script, gnuplot not found) the error names the output and quotes
 *  gnuplot's message. gnuplot_quote makes a gnuplot string of any
 *  text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "controller/gnuplot.h"
#include "overlay/util.h"
#include "tests/helpers.h"

typedef struct {
    char dir[64];
    char err[TF_ERRLEN];
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_gnuplot");
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    test_remove_dir (f->dir);
    free (f);
    return 0;
}

/*  Write DIR/name with text; return its path (the caller frees). */
static char *
script (fixture_t *f, const char *name, const char *text)
{
    char *path = xasprintf ("%s/%s", f->dir, name);
    test_write_file (path, text);
    return path;
}

static off_t
size_of (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 ? st.st_size : -1;
}

static void
test_quote (void **state)
{
    (void) state;
    static const char *const cases[][2] = {
        {"plain", "'plain'"}, {"", "''"}, {"it's", "'it''s'"}, {"a b", "'a b'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *q = gnuplot_quote (cases[i][0]);
        assert_string_equal (q, cases[i][1]);
        free (q);
    }
}

/*  A script is drawn, by path or in its directory, into a name with a
 *  space and a quote. */
static void
test_draws (void **state)
{
    fixture_t *f = *state;
    char *gp = script (f, "ok.gp", "plot x\n");
    char *out = xasprintf ("%s/it's a plot.png", f->dir);
    if (gnuplot_draw (NULL, gp, "png", 200, 100, out, f->err, sizeof f->err) != 0)
        fail_msg ("%s", f->err);
    assert_true (size_of (out) > 0);
    free (out);
    if (gnuplot_draw (f->dir, "ok.gp", "svg", 200, 100, "o k.svg", f->err, sizeof f->err))
        fail_msg ("%s", f->err);
    out = xasprintf ("%s/o k.svg", f->dir);
    assert_true (size_of (out) > 0);
    free (out);
    free (gp);
}

/*  gnuplot refuses the script: the error names the output and quotes
 *  gnuplot's complaint ("FILE" line 1: invalid expression). */
static void
test_failing_script (void **state)
{
    fixture_t *f = *state;
    char *gp = script (f, "bad.gp", "plot (\n");
    char *out = xasprintf ("%s/bad.png", f->dir);
    assert_int_equal (gnuplot_draw (NULL, gp, "png", 200, 100, out, f->err, sizeof f->err),
                      -1);
    char *want = xasprintf ("gnuplot failed for %s: ", out);
    if (strncmp (f->err, want, strlen (want)) != 0 || !strstr (f->err, "bad.gp\" line 1"))
        fail_msg ("error \"%s\"", f->err);
    assert_null (strchr (f->err, '\n'));
    free (want);
    assert_int_equal (gnuplot_draw (f->dir, "bad.gp", "png", 200, 100, "bad.png", f->err,
                                    sizeof f->err), -1);
    want = xasprintf ("gnuplot failed for %s/bad.png: ", f->dir);
    if (strncmp (f->err, want, strlen (want)) != 0)
        fail_msg ("error \"%s\"", f->err);
    free (want);
    free (out);
    free (gp);
}

/*  No gnuplot on PATH: the error says so, naming the output. */
static void
test_gnuplot_missing (void **state)
{
    fixture_t *f = *state;
    char *gp = script (f, "ok.gp", "plot x\n");
    char *path = getenv ("PATH") ? xstrdup (getenv ("PATH")) : NULL;
    setenv ("PATH", f->dir, 1);
    int rc = gnuplot_draw (NULL, gp, "png", 200, 100, "x.png", f->err, sizeof f->err);
    if (path)
        setenv ("PATH", path, 1);
    else
        unsetenv ("PATH");
    assert_int_equal (rc, -1);
    if (!strstr (f->err, "gnuplot failed for x.png: ") || !strstr (f->err, "not found"))
        fail_msg ("error \"%s\"", f->err);
    free (path);
    free (gp);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_quote),
        cmocka_unit_test_setup_teardown (test_draws, setup, teardown),
        cmocka_unit_test_setup_teardown (test_failing_script, setup, teardown),
        cmocka_unit_test_setup_teardown (test_gnuplot_missing, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
