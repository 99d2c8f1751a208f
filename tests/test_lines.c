/*  test_lines — the bounded line reader under the tasks loader and the
 *  journal: lines come out whole whatever the read sizes, a final line
 *  without '\n' is told apart, a line over the limit stops the reader
 *  without being allocated, and line numbers count every line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "overlay/lines.h"

/*  Read the next line and check its status and bytes. */
static void
expect_line (lines_t *lines, lines_status_t status, const char *text, size_t len)
{
    const char *line = NULL;
    size_t n = 0;
    assert_string_equal (lines_status_str (lines_next (lines, &line, &n)),
                         lines_status_str (status));
    assert_int_equal (n, len);
    assert_memory_equal (line, text, len);
}

static void
test_a_buffer_gives_lines_then_its_tail (void **state)
{
    (void) state;
    static const char data[] = "one\n\ntw\0o\nlast";
    lines_t *lines = lines_new_buffer (data, sizeof data - 1, 16);
    expect_line (lines, LINES_LINE, "one", 3);
    expect_line (lines, LINES_LINE, "", 0);
    expect_line (lines, LINES_LINE, "tw\0o", 4);   /* a NUL is a byte like any */
    expect_line (lines, LINES_TAIL, "last", 4);
    assert_int_equal (lines_number (lines), 4);
    const char *line;
    size_t n;
    assert_int_equal (lines_next (lines, &line, &n), LINES_END);
    assert_int_equal (lines_next (lines, &line, &n), LINES_END);
    assert_int_equal (lines_number (lines), 4);
    lines_destroy (&lines);
    assert_null (lines);
}

static void
test_a_line_over_the_limit_stops_the_reader (void **state)
{
    (void) state;
    static const char data[] = "12345678\n123456789\nnext\n";
    lines_t *lines = lines_new_buffer (data, sizeof data - 1, 8);
    expect_line (lines, LINES_LINE, "12345678", 8);   /* exactly the limit */
    const char *line;
    size_t n;
    assert_int_equal (lines_next (lines, &line, &n), LINES_TOO_LONG);
    assert_int_equal (lines_number (lines), 2);
    assert_int_equal (lines_next (lines, &line, &n), LINES_TOO_LONG);   /* stuck */
    assert_int_equal (lines_number (lines), 2);
    lines_destroy (&lines);
}

/*  A pipe delivers the lines in whatever pieces; a reader with a small
 *  limit must refill its buffer many times and lose nothing. */
static void
test_a_pipe_read_in_pieces_gives_the_same_lines (void **state)
{
    (void) state;
    int fds[2];
    assert_int_equal (pipe (fds), 0);
    static const char data[] = "ab\ncdefgh\n\nijklmnop\nqr";
    assert_int_equal (write (fds[1], data, sizeof data - 1), sizeof data - 1);
    close (fds[1]);
    lines_t *lines = lines_new_fd (fds[0], 8);
    expect_line (lines, LINES_LINE, "ab", 2);
    expect_line (lines, LINES_LINE, "cdefgh", 6);
    expect_line (lines, LINES_LINE, "", 0);
    expect_line (lines, LINES_LINE, "ijklmnop", 8);
    expect_line (lines, LINES_TAIL, "qr", 2);
    const char *line;
    size_t n;
    assert_int_equal (lines_next (lines, &line, &n), LINES_END);
    lines_destroy (&lines);
    close (fds[0]);
}

static void
test_a_long_line_from_a_descriptor_is_refused (void **state)
{
    (void) state;
    int fds[2];
    assert_int_equal (pipe (fds), 0);
    static const char data[] = "ok\n0123456789abcdef\n";
    assert_int_equal (write (fds[1], data, sizeof data - 1), sizeof data - 1);
    close (fds[1]);
    lines_t *lines = lines_new_fd (fds[0], 8);
    expect_line (lines, LINES_LINE, "ok", 2);
    const char *line;
    size_t n;
    assert_int_equal (lines_next (lines, &line, &n), LINES_TOO_LONG);
    assert_int_equal (lines_number (lines), 2);
    lines_destroy (&lines);
    close (fds[0]);
}

static void
test_an_empty_input_has_no_line (void **state)
{
    (void) state;
    lines_t *lines = lines_new_buffer (NULL, 0, 8);
    const char *line;
    size_t n;
    assert_int_equal (lines_next (lines, &line, &n), LINES_END);
    assert_int_equal (lines_number (lines), 0);
    lines_destroy (&lines);
}

static void
test_a_bad_descriptor_is_a_read_error (void **state)
{
    (void) state;
    lines_t *lines = lines_new_fd (-1, 8);
    const char *line;
    size_t n;
    assert_int_equal (lines_next (lines, &line, &n), LINES_ERROR);
    assert_int_equal (lines_number (lines), 1);
    lines_destroy (&lines);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_buffer_gives_lines_then_its_tail),
        cmocka_unit_test (test_a_line_over_the_limit_stops_the_reader),
        cmocka_unit_test (test_a_pipe_read_in_pieces_gives_the_same_lines),
        cmocka_unit_test (test_a_long_line_from_a_descriptor_is_refused),
        cmocka_unit_test (test_an_empty_input_has_no_line),
        cmocka_unit_test (test_a_bad_descriptor_is_a_read_error),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
