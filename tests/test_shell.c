/*  test_shell — shell_quote: whatever a word holds (quotes, spaces, shell
 *  syntax, nothing at all), sh reads the quoted text back as exactly that
 *  one word.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "controller/shell.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  What sh makes of `printf '[%s]' QUOTED` for word: "[word]" when the
 *  quoting holds. A new string. */
static char *
sh_reads (const char *word, char *dir)
{
    char *quoted = shell_quote (word);
    char *out = xasprintf ("%s/out", dir);
    char *cmd = xasprintf ("printf '[%%s]' %s > %s", quoted, out);
    assert_int_equal (system (cmd), 0);
    char *text = test_read_file (out);
    free (quoted);
    free (out);
    free (cmd);
    return text;
}

static void
test_quoted_text (void **state)
{
    (void) state;
    static const char *const cases[][2] = {
        {"plain", "'plain'"},
        {"", "''"},
        {"two words", "'two words'"},
        {"it's", "'it'\\''s'"},
        {"''", "''\\'''\\'''"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *q = shell_quote (cases[i][0]);
        assert_string_equal (q, cases[i][1]);
        free (q);
    }
}

static void
test_sh_reads_one_word_back (void **state)
{
    (void) state;
    static const char *const words[] = {
        "", " ", "two words", "it's", "'", "''", "a'b'c", "$HOME", "`id`", "$(id)",
        "a\"b", "back\\slash", "semi;colon && rm -rf x", "new\nline", "*", "-n",
    };
    char dir[64];
    test_temp_dir (dir, sizeof dir, "test_shell");
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        char *want = xasprintf ("[%s]", words[i]);
        char *got = sh_reads (words[i], dir);
        if (strcmp (got, want) != 0)
            fail_msg ("sh read %s for %s", got, want);
        free (want);
        free (got);
    }
    test_remove_dir (dir);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_quoted_text),
        cmocka_unit_test (test_sh_reads_one_word_back),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
