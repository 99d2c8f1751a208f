/*  Unit tests for overlay/util: log lines that never interleave. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/*  This process's RssAnon in KiB (/proc/self/status). */
static long
rss_anon_kib (void)
{
    FILE *f = fopen ("/proc/self/status", "r");
    assert_non_null (f);
    char line[256];
    long kib = -1;
    while (fgets (line, sizeof line, f))
        if (sscanf (line, "RssAnon: %ld", &kib) == 1)
            break;
    fclose (f);
    assert_true (kib >= 0);
    return kib;
}

#if defined(__SANITIZE_ADDRESS__)
#define REPLACED_MALLOC 1       /* ASan's allocator: no glibc heap to measure */
#else
#define REPLACED_MALLOC 0
#endif

/*  A block from xcalloc_resident is zeroed and resident at once; one as
 *  large from xcalloc is not (glibc maps it and the kernel fills pages on
 *  first touch), which is what made tables sized up front look like
 *  growth. */
static void
test_resident_block (void **state)
{
    (void) state;
    size_t n = 8u << 20;
    long r0 = rss_anon_kib ();
    unsigned char *p = xcalloc_resident (n, 1);
    long r1 = rss_anon_kib ();
    for (size_t i = 0; i < n; i += 4093)
        assert_int_equal (p[i], 0);
    assert_int_equal (p[n - 1], 0);
    unsigned char *q = xcalloc (n, 1);
    long r2 = rss_anon_kib ();
    if (!REPLACED_MALLOC) {
        assert_true (r1 - r0 >= 7 * 1024);
        assert_true (r2 - r1 < 1024);
    }
    free (q);
    free (p);
}

/*  tf_heap_reserve leaves its bytes resident in the heap, and small
 *  allocations up to that much then cost no new resident memory. Without
 *  the raised trim threshold, glibc would give the freed top back at once
 *  and the second half would grow instead. */
static void
test_heap_reserve (void **state)
{
    (void) state;
    /*  glibc's default, which freeing a large mapped block (the test
     *  above) raises on its own. */
    mallopt (M_TRIM_THRESHOLD, 128 * 1024);
    long r0 = rss_anon_kib ();
    tf_heap_reserve (4u << 20);
    long r1 = rss_anon_kib ();
    enum { PIECES = 2048, SIZE = 1000 };   /* about 2 MiB in small blocks */
    char **piece = xcalloc (PIECES, sizeof *piece);
    for (int i = 0; i < PIECES; i++) {
        piece[i] = xmalloc (SIZE);
        memset (piece[i], 0x5a, SIZE);
    }
    long r2 = rss_anon_kib ();
    for (int i = 0; i < PIECES; i++)
        free (piece[i]);
    free (piece);
    if (!REPLACED_MALLOC) {
        assert_true (r1 - r0 >= 3 * 1024 + 512);
        assert_true (r2 - r1 < 256);
    }
}

/*  GLIBC_TUNABLES as the controller leaves it for its nodes, and as a
 *  node puts it back for its commands: appended to the user's value, none
 *  made up, the user's own tcache_count kept. */
static void
env_is (const char *tunables, const char *tuned)
{
    const char *t = getenv ("GLIBC_TUNABLES"), *m = getenv (TF_MALLOC_TUNED_ENV);
    if (tunables)
        assert_string_equal (t ? t : "(unset)", tunables);
    else
        assert_null (t);
    if (tuned)
        assert_string_equal (m ? m : "(unset)", tuned);
    else
        assert_null (m);
}

static void
test_malloc_env (void **state)
{
    (void) state;
    const char *users[] = {NULL, "", "glibc.malloc.perturb=0"};
    for (size_t i = 0; i < sizeof users / sizeof *users; i++) {
        if (users[i])
            setenv ("GLIBC_TUNABLES", users[i], 1);
        else
            unsetenv ("GLIBC_TUNABLES");
        unsetenv (TF_MALLOC_TUNED_ENV);
        tf_malloc_env_for_nodes ();
        env_is (i == 2 ? "glibc.malloc.perturb=0:" TF_MALLOC_TUNABLE : TF_MALLOC_TUNABLE,
                "1");
        tf_malloc_env_restore ();
        env_is (i == 2 ? users[i] : NULL, NULL);
    }
    /*  The user's own tcache_count stands, and nothing is to be undone. */
    setenv ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=3", 1);
    tf_malloc_env_for_nodes ();
    env_is ("glibc.malloc.tcache_count=3", NULL);
    tf_malloc_env_restore ();
    env_is ("glibc.malloc.tcache_count=3", NULL);
    /*  Changed since (not ending in ours): left as it is. */
    setenv ("GLIBC_TUNABLES", "glibc.malloc.perturb=1", 1);
    setenv (TF_MALLOC_TUNED_ENV, "1", 1);
    tf_malloc_env_restore ();
    env_is ("glibc.malloc.perturb=1", NULL);
    unsetenv ("GLIBC_TUNABLES");
}

static int
exists (const char *dir, const char *name)
{
    char *p = xasprintf ("%s/%s", dir, name);
    int rc = access (p, F_OK) == 0;
    free (p);
    return rc;
}

static void
touch (const char *dir, const char *name)
{
    char *p = xasprintf ("%s/%s", dir, name);
    FILE *f = fopen (p, "w");
    assert_non_null (f);
    fclose (f);
    free (p);
}

/*  tf_remove_tree: a path that is not there is no error; below_only
 *  empties a directory (files and a subdirectory with its own) and keeps
 *  it, an empty one included; otherwise the directory goes too. */
static void
test_remove_tree (void **state)
{
    (void) state;
    char dir[] = "/tmp/test_util.XXXXXX";
    assert_non_null (mkdtemp (dir));
    char *sub = xasprintf ("%s/sub", dir);
    tf_remove_tree (sub, 0);
    tf_remove_tree (sub, 1);
    tf_remove_tree (dir, 1);
    assert_true (access (dir, F_OK) == 0);
    assert_int_equal (mkdir (sub, 0700), 0);
    touch (sub, "a");
    touch (dir, "b");
    tf_remove_tree (dir, 1);
    assert_true (access (dir, F_OK) == 0);
    assert_false (exists (dir, "b"));
    assert_false (exists (dir, "sub"));
    touch (dir, "c");
    tf_remove_tree (dir, 0);
    assert_false (access (dir, F_OK) == 0);
    free (sub);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_lines_never_interleave),
        cmocka_unit_test (test_long_line_is_cut),
        cmocka_unit_test (test_resident_block),
        cmocka_unit_test (test_malloc_env),
        cmocka_unit_test (test_heap_reserve),
        cmocka_unit_test (test_remove_tree),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
