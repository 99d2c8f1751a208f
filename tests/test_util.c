/*  Unit tests for overlay/util: log lines that never interleave. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "overlay/util.h"

#define WRITERS 4
#define LINES 400

static void
log_to_stderr (const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    tf_log_line (prefix, fmt, ap);
    va_end (ap);
}

/*  Read all of fd into a new NUL-terminated string. */
static char *
slurp_fd (int fd)
{
    size_t len = 0, cap = 1 << 16;
    char *text = xmalloc (cap);
    ssize_t n;
    while ((n = read (fd, text + len, cap - len - 1)) > 0) {
        len += (size_t) n;
        if (cap - len < 4096)
            text = xrealloc (text, cap *= 2);
    }
    text[len] = '\0';
    return text;
}

/*  Writers that share one stderr (a pipe), as the controller and its
 *  nodes share a terminal, each log LINES lines at once: every line read
 *  back is whole, one writer's. */
static void
test_lines_never_interleave (void **state)
{
    (void) state;
    int fds[2];
    assert_int_equal (pipe (fds), 0);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork ();
        assert_true (pids[w] >= 0);
        if (pids[w] == 0) {
            close (fds[0]);
            dup2 (fds[1], STDERR_FILENO);
            char prefix[32];
            snprintf (prefix, sizeof prefix, "writer %d: ", w);
            for (int i = 0; i < LINES; i++)
                log_to_stderr (prefix, "line %d of writer %d, %s", i, w,
                               "padded so that lines are long enough to be cut up");
            _exit (0);
        }
    }
    close (fds[1]);
    char *text = slurp_fd (fds[0]);
    close (fds[0]);
    for (int w = 0; w < WRITERS; w++)
        waitpid (pids[w], NULL, 0);

    int count = 0;
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n"), count++) {
        int w, i, w2;
        char tail[80];
        int ok = sscanf (line, "writer %d: line %d of writer %d, %79[^\n]", &w, &i, &w2, tail)
                 == 4 && w == w2
                 && strcmp (tail, "padded so that lines are long enough to be cut up") == 0;
        if (!ok)
            fail_msg ("a line mixed from several writers: \"%s\"", line);
    }
    assert_int_equal (count, WRITERS * LINES);
    free (text);
}

/*  A message too long for one line is cut, marked, and still ends the
 *  line. */
static void
test_long_line_is_cut (void **state)
{
    (void) state;
    int fds[2];
    assert_int_equal (pipe (fds), 0);
    int saved = dup (STDERR_FILENO);
    dup2 (fds[1], STDERR_FILENO);
    char *big = xmalloc (3 * TF_LOG_LINE_MAX);
    memset (big, 'x', 3 * TF_LOG_LINE_MAX - 1);
    big[3 * TF_LOG_LINE_MAX - 1] = '\0';
    log_to_stderr ("p: ", "%s", big);
    log_to_stderr ("p: ", "short");
    dup2 (saved, STDERR_FILENO);
    close (saved);
    close (fds[1]);
    char *text = slurp_fd (fds[0]);
    close (fds[0]);
    char *nl = strchr (text, '\n');
    assert_non_null (nl);
    assert_int_equal (nl - text, TF_LOG_LINE_MAX - 1);
    assert_memory_equal (text, "p: xxx", 6);
    assert_memory_equal (nl - 3, "...", 3);
    assert_string_equal (nl + 1, "p: short\n");
    free (text);
    free (big);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_lines_never_interleave),
        cmocka_unit_test (test_long_line_is_cut),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
