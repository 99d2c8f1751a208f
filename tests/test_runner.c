/*  test_runner — one command task run in a work directory
 *  (node/runner.h), with real processes.
 *
 *  A command's exit status, its killing signal, a timeout and a cancel
 *  come back as results; a timeout or cancel stops the whole process
 *  group, grandchildren included, quickly, and SIGKILLs what ignores
 *  SIGTERM after the grace; a command that is not found exits 127 with a
 *  message, like a shell; the command sees its environment additions, its
 *  arguments unsplit, its work directory, /dev/null as stdin and no
 *  descriptor but stdio; the result carries the end of stderr. Then which
 *  files a finished task sends back, declared or found.
 *
 *  The test process is a child subreaper, so the runner's orphaned
 *  grandchildren become its children and it can tell how they ended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "node/bundle.h"
#include "node/runner.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  Upper bounds on wall time only tell an ending the test wants (SIGTERM
 *  at once, SIGKILL after the grace) from one it does not (the command's
 *  own 30 s); which signal ended it is asserted exactly. A machine busy
 *  with sanitizers and other tests may take seconds to fork and reap, so
 *  the bound is generous: a unit test must not time anything. */
#define SLOW_MACHINE_S 15.0

typedef struct {
    char root[64];
    char work[96];
    char out[96];            /* stdout file */
    char errp[96];           /* stderr file */
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->root, sizeof f->root, "test_runner");
    snprintf (f->work, sizeof f->work, "%s/work", f->root);
    snprintf (f->out, sizeof f->out, "%s/stdout", f->root);
    snprintf (f->errp, sizeof f->errp, "%s/stderr", f->root);
    assert_int_equal (mkdir (f->work, 0755), 0);
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    test_remove_dir (f->root);
    free (f);
    return 0;
}

static runner_spec_t
spec_sh (const fixture_t *f, const char *sh, double timeout)
{
    return (runner_spec_t) {.sh = sh, .timeout_s = timeout, .workdir = f->work,
                            .stdout_path = f->out, .stderr_path = f->errp};
}

/*  Run spec; fail unless the runner itself worked. */
static void
run (const runner_spec_t *spec, int cancel_fd, runner_result_t *res)
{
    char err[TF_ERRLEN] = "";
    if (runner_run (spec, cancel_fd, res, err, sizeof err) != 0)
        fail_msg ("runner_run: %s", err);
}

static void
run_sh (const fixture_t *f, const char *sh, runner_result_t *res)
{
    runner_spec_t spec = spec_sh (f, sh, 0);
    run (&spec, -1, res);
}

/* ------------------------------------------------------------------------
 *  How a command ends.
 */

static void
test_exit_statuses (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    const char *const argv[] = {"true", NULL};
    runner_spec_t spec = {.argv = argv, .workdir = f->work, .stdout_path = f->out,
                          .stderr_path = f->errp};
    run (&spec, -1, &res);
    assert_true (res.exited && res.exit_code == 0 && res.signal == 0);
    assert_false (res.timed_out || res.cancelled);
    assert_true (res.wall_s >= 0 && res.wall_s < SLOW_MACHINE_S);

    run_sh (f, "echo oops >&2; exit 3", &res);
    assert_true (res.exited);
    assert_int_equal (res.exit_code, 3);
    assert_string_equal (res.stderr_tail, "oops\n");
    assert_int_equal (res.stderr_len, 5);
    assert_false (res.stderr_truncated);

    run_sh (f, "kill -9 $$", &res);
    assert_false (res.exited);
    assert_int_equal (res.signal, SIGKILL);
    assert_false (res.timed_out || res.cancelled);
}

/*  Read the pid a command wrote into file under the work directory. */
static pid_t
read_pid (const fixture_t *f, const char *file)
{
    char *path = xasprintf ("%s/%s", f->work, file);
    char *text = test_read_file (path);
    pid_t pid = (pid_t) atoi (text);
    free (text);
    free (path);
    assert_true (pid > 1);
    return pid;
}

/*  pid, a grandchild of the runner, is gone within a second: reaped by
 *  its parent, or killed and reaped here (this process is a subreaper,
 *  so orphans come to it). */
static void
expect_killed (pid_t pid)
{
    double t0 = tf_now ();
    while (tf_now () - t0 < 1.0) {
        int status;
        if (waitpid (pid, &status, WNOHANG) == pid) {
            assert_true (WIFSIGNALED (status));
            return;
        }
        if (kill (pid, 0) != 0 && errno == ESRCH)
            return;
        nanosleep (&(struct timespec) {0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg ("process %d still alive", (int) pid);
}

/*  Reap the orphans earlier commands left to this subreaper, waiting up
 *  to a second for the last ones to end. */
static void
reap_orphans (void)
{
    double t0 = tf_now ();
    pid_t r;
    while ((r = waitpid (-1, NULL, WNOHANG)) >= 0 && tf_now () - t0 < 1.0)
        if (r == 0)
            nanosleep (&(struct timespec) {0, 10 * 1000 * 1000}, NULL);
}

/*  A timeout of 0.3 s stops a shell and its background grandchild within
 *  well under 5 s, with SIGTERM. */
static void
test_timeout_kills_the_group (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    runner_spec_t spec = spec_sh (f, "sleep 30 & echo $! > gpid; sleep 30", 0.3);
    run (&spec, -1, &res);
    assert_true (res.timed_out);
    assert_false (res.cancelled || res.exited);
    assert_int_equal (res.signal, SIGTERM);
    assert_true (res.wall_s >= 0.3 && res.wall_s < SLOW_MACHINE_S);
    expect_killed (read_pid (f, "gpid"));
}

/*  SIGTERM goes to the whole group at once: a grandchild that traps it
 *  cleans up while its leader ignores it. A leader that ignores SIGTERM
 *  is SIGKILLed after the grace, with what is left of its group. */
static void
test_timeout_escalates_to_sigkill (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    runner_spec_t spec = spec_sh (f, "sh -c 'trap \"echo term > gotterm; exit\" TERM;"
                                     " sleep 30 & wait' &"
                                     " trap '' TERM; sleep 30 & echo $! > gpid; sleep 30",
                                  0.2);
    run (&spec, -1, &res);
    char *got = xasprintf ("%s/gotterm", f->work);
    char *text = test_read_file (got);
    assert_string_equal (text, "term\n");
    free (text);
    free (got);
    assert_true (res.timed_out);
    assert_int_equal (res.signal, SIGKILL);
    assert_true (res.wall_s >= 0.2 + RUNNER_KILL_GRACE);
    assert_true (res.wall_s < 0.2 + RUNNER_KILL_GRACE + SLOW_MACHINE_S);
    expect_killed (read_pid (f, "gpid"));
}

static void *
cancel_later (void *arg)
{
    int fd = *(int *) arg;
    nanosleep (&(struct timespec) {0, 200 * 1000 * 1000}, NULL);
    if (write (fd, "x", 1) != 1)
        abort ();
    return NULL;
}

/*  A byte on the cancel pipe after 0.2 s stops the command and its
 *  grandchild at once; a command that ends first is not cancelled. */
static void
test_cancel_via_pipe (void **state)
{
    fixture_t *f = *state;
    int fds[2];
    assert_int_equal (pipe2 (fds, O_CLOEXEC), 0);
    pthread_t thread;
    assert_int_equal (pthread_create (&thread, NULL, cancel_later, &fds[1]), 0);
    runner_result_t res;
    runner_spec_t spec = spec_sh (f, "sleep 30 & echo $! > gpid; sleep 30", 0);
    run (&spec, fds[0], &res);
    pthread_join (thread, NULL);
    assert_true (res.cancelled);
    assert_false (res.timed_out || res.exited);
    assert_int_equal (res.signal, SIGTERM);
    /*  The thread's 0.2 s started before the runner's clock, so the
     *  runner may see a little less: only the upper bound means anything. */
    assert_true (res.wall_s > 0 && res.wall_s < SLOW_MACHINE_S);
    expect_killed (read_pid (f, "gpid"));

    char byte;
    assert_int_equal (read (fds[0], &byte, 1), 1);
    spec = spec_sh (f, "exit 0", 0);
    run (&spec, fds[0], &res);
    assert_true (res.exited && !res.cancelled);
    close (fds[0]);
    close (fds[1]);
}

/*  A normal exit also kills what the command left running. */
static void
test_exit_kills_leftovers (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    run_sh (f, "sleep 30 & echo $! > gpid", &res);
    assert_true (res.exited && res.exit_code == 0);
    expect_killed (read_pid (f, "gpid"));
}

/* ------------------------------------------------------------------------
 *  What a command sees.
 */

/*  Additions are in the environment, replace the node's variable of the
 *  same key (a later addition an earlier one), and the rest of the node's
 *  environment is there. env itself prints the environment as given, so a
 *  duplicate would show. */
static void
test_environment (void **state)
{
    fixture_t *f = *state;
    setenv ("TF_RUNNER_OLD", "old", 1);
    setenv ("TF_RUNNER_KEPT", "kept", 1);
    const char *const env[] = {"TF_RUNNER_NEW=hello world", "TF_RUNNER_OLD=first",
                               "TF_RUNNER_OLD=new", NULL};
    const char *const argv[] = {"env", NULL};
    runner_spec_t spec = {.argv = argv, .env = env, .workdir = f->work,
                          .stdout_path = f->out, .stderr_path = f->errp};
    runner_result_t res;
    run (&spec, -1, &res);
    char *out = test_read_file (f->out);
    char mine[256] = "";
    for (char *line = strtok (out, "\n"); line; line = strtok (NULL, "\n"))
        if (strncmp (line, "TF_RUNNER_", 10) == 0 && strlen (mine) + strlen (line) < 250)
            strcat (strcat (mine, line), ";");
    assert_string_equal (mine, "TF_RUNNER_KEPT=kept;TF_RUNNER_NEW=hello world;"
                               "TF_RUNNER_OLD=new;");
    free (out);
    unsetenv ("TF_RUNNER_OLD");
    unsetenv ("TF_RUNNER_KEPT");
}

/*  argv entries keep their spaces; sh runs pipes; the cwd is the work
 *  directory; stdin is /dev/null; stdout and stderr may share a file. */
static void
test_arguments_and_shell (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    const char *const argv[] = {"printf", "%s|", "a b", "c  d", "", NULL};
    runner_spec_t spec = {.argv = argv, .workdir = f->work, .stdout_path = f->out,
                          .stderr_path = f->errp};
    run (&spec, -1, &res);
    char *out = test_read_file (f->out);
    assert_string_equal (out, "a b|c  d||");
    free (out);

    /*  Make this process's stdin a pipe (at end of file), so an inherited
     *  stdin would show. */
    int p[2], saved = dup (STDIN_FILENO);
    assert_int_equal (pipe (p), 0);
    close (p[1]);
    assert_int_equal (dup2 (p[0], STDIN_FILENO), STDIN_FILENO);
    close (p[0]);
    run_sh (f, "printf 'x\\ny\\nz\\n' | wc -l | tr -d ' '; pwd; cat; readlink /proc/self/fd/0",
            &res);
    dup2 (saved, STDIN_FILENO);
    close (saved);
    out = test_read_file (f->out);
    char *want = xasprintf ("3\n%s\n/dev/null\n", f->work);
    assert_string_equal (out, want);
    free (want);
    free (out);

    spec = spec_sh (f, "echo one; echo two >&2; echo three", 0);
    spec.stderr_path = f->out;
    run (&spec, -1, &res);
    out = test_read_file (f->out);
    assert_string_equal (out, "one\ntwo\nthree\n");
    free (out);
}

/*  Not found: 127 and a message in the stderr file, for argv and for sh;
 *  a file that is not executable: 126. */
static void
test_exec_failure_is_like_a_shell (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    const char *const argv[] = {"treefarm-no-such-command", "x", NULL};
    runner_spec_t spec = {.argv = argv, .workdir = f->work, .stdout_path = f->out,
                          .stderr_path = f->errp};
    run (&spec, -1, &res);
    assert_true (res.exited);
    assert_int_equal (res.exit_code, 127);
    char *text = test_read_file (f->errp);
    assert_string_equal (text, "treefarm: treefarm-no-such-command: command not found\n");
    assert_string_equal (res.stderr_tail, text);
    free (text);

    const char *const abs[] = {"/nonexistent/cmd", NULL};
    spec.argv = abs;
    run (&spec, -1, &res);
    assert_int_equal (res.exit_code, 127);
    assert_non_null (strstr (res.stderr_tail, "/nonexistent/cmd: No such file"));

    char *plain = xasprintf ("%s/plain", f->work);
    close (open (plain, O_WRONLY | O_CREAT, 0644));
    const char *const noexec[] = {plain, NULL};
    spec.argv = noexec;
    run (&spec, -1, &res);
    assert_int_equal (res.exit_code, 126);
    assert_non_null (strstr (res.stderr_tail, "Permission denied"));
    free (plain);

    run_sh (f, "treefarm-no-such-command", &res);
    assert_int_equal (res.exit_code, 127);
    assert_non_null (strstr (res.stderr_tail, "not found"));
}

/*  A long stderr comes back as its last RUNNER_TAIL_BYTES bytes. */
static void
test_stderr_tail (void **state)
{
    fixture_t *f = *state;
    runner_result_t res;
    run_sh (f, "i=0; while [ $i -lt 1000 ]; do echo \"line $i\" >&2; i=$((i+1)); done",
            &res);
    char *text = test_read_file (f->errp);
    size_t len = strlen (text);
    assert_true (len > RUNNER_TAIL_BYTES);
    assert_true (res.stderr_truncated);
    assert_int_equal (res.stderr_len, RUNNER_TAIL_BYTES);
    assert_memory_equal (res.stderr_tail, text + len - RUNNER_TAIL_BYTES, RUNNER_TAIL_BYTES);
    assert_int_equal (res.stderr_tail[RUNNER_TAIL_BYTES], '\0');
    free (text);
}

/*  The child inherits no descriptor but stdio, even ones the node opened
 *  without close-on-exec: ls sees 0, 1, 2 and its own. */
static void
test_no_descriptor_leaks (void **state)
{
    fixture_t *f = *state;
    int leak[2];
    assert_int_equal (pipe (leak), 0);   /* no O_CLOEXEC on purpose */
    runner_result_t res;
    const char *const argv[] = {"ls", "/proc/self/fd", NULL};
    runner_spec_t spec = {.argv = argv, .workdir = f->work, .stdout_path = f->out,
                          .stderr_path = f->errp};
    run (&spec, -1, &res);
    close (leak[0]);
    close (leak[1]);
    char *out = test_read_file (f->out);
    assert_string_equal (out, "0\n1\n2\n3\n");
    free (out);
}

/*  A command starts with no signal blocked or ignored and every handler
 *  the default, whatever the node's thread has (blocked and ignored
 *  signals survive exec); and the caller's mask is as it was, though the
 *  runner blocks every signal across vfork. */
static void
test_signals_reset_and_mask_kept (void **state)
{
    fixture_t *f = *state;
    test_signals_t saved;
    test_signals_disturb (&saved);
    runner_result_t res;
    const char *const argv[] = TEST_SIGNALS_ARGV;
    runner_spec_t spec = {.argv = argv, .workdir = f->work, .stdout_path = f->out,
                          .stderr_path = f->errp};
    run (&spec, -1, &res);
    assert_true (test_signals_restore (&saved));
    assert_true (res.exited && res.exit_code == 0);
    char *out = test_read_file (f->out);
    if (!test_signals_clean (out))
        fail_msg ("the command's signals: %s", out);
    free (out);
}

/*  What the runner refuses to start, with -1 and a message; nothing ran. */
static void
test_bad_specs (void **state)
{
    fixture_t *f = *state;
    reap_orphans ();
    const char *const argv[] = {"true", NULL}, *const empty[] = {NULL};
    const char *const bad_env[] = {"NOEQUALS", NULL}, *const bad_env2[] = {"=x", NULL};
    runner_spec_t base = {.argv = argv, .workdir = f->work, .stdout_path = f->out,
                          .stderr_path = f->errp};
    /*  One entry over each limit. */
    const char **many_args = xcalloc (RUNNER_MAX_ARGS + 2, sizeof *many_args);
    const char **many_env = xcalloc (RUNNER_MAX_ENV + 2, sizeof *many_env);
    for (int i = 0; i <= RUNNER_MAX_ARGS; i++)
        many_args[i] = "true";
    for (int i = 0; i <= RUNNER_MAX_ENV; i++)
        many_env[i] = "K=V";
    enum { NSPECS = 12 };
    runner_spec_t specs[NSPECS];
    const char *expect[NSPECS];
    for (int i = 0; i < NSPECS; i++)
        specs[i] = base;
    specs[0].sh = "true", expect[0] = "exactly one of argv and sh";
    specs[1].argv = NULL, expect[1] = "exactly one of argv and sh";
    specs[2].argv = empty, expect[2] = "empty argv";
    specs[3].env = bad_env, expect[3] = "\"NOEQUALS\" is not KEY=VALUE";
    specs[4].env = bad_env2, expect[4] = "\"=x\" is not KEY=VALUE";
    specs[5].timeout_s = -1, expect[5] = "timeout -1 s";
    specs[6].timeout_s = NAN, expect[6] = "timeout nan s";
    specs[7].workdir = "/nonexistent", expect[7] = "workdir /nonexistent: No such file";
    specs[8].stdout_path = "/nonexistent/out", expect[8] = "/nonexistent/out: No such";
    specs[9].timeout_s = RUNNER_MAX_TIMEOUT * 2, expect[9] = "must be 0 to 2.592e+06";
    specs[10].argv = many_args, expect[10] = "more than 4096 arguments";
    specs[11].env = many_env, expect[11] = "more than 1024 environment additions";
    for (int i = 0; i < NSPECS; i++) {
        char err[TF_ERRLEN] = "";
        runner_result_t res;
        assert_int_equal (runner_run (&specs[i], -1, &res, err, sizeof err), -1);
        if (!strstr (err, expect[i]))
            fail_msg ("spec %d: \"%s\" lacks \"%s\"", i, err, expect[i]);
    }
    free (many_args);
    free (many_env);
    char err[TF_ERRLEN] = "";
    runner_result_t res;
    assert_int_equal (runner_run (&base, 999, &res, err, sizeof err), -1);
    assert_non_null (strstr (err, "cancel descriptor 999"));
    assert_int_equal (waitpid (-1, NULL, WNOHANG), -1);   /* no child started */
    assert_int_equal (errno, ECHILD);
}

/* ------------------------------------------------------------------------
 *  Outputs.
 */

static void
make_file (const fixture_t *f, const char *name)
{
    char *path = xasprintf ("%s/%s", f->work, name);
    for (char *p = path + strlen (f->work) + 1; (p = strchr (p, '/')); p++) {
        *p = '\0';
        mkdir (path, 0755);
        *p = '/';
    }
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true (fd >= 0);
    close (fd);
    free (path);
}

/*  Declared outputs come back in their order; a missing one, a symlink,
 *  a directory, one behind a symlinked directory or a bad name is an
 *  error naming it. */
static void
test_outputs_declared (void **state)
{
    fixture_t *f = *state;
    make_file (f, "out1");
    make_file (f, "sub/out2");
    char *link = xasprintf ("%s/link", f->work), *dlink = xasprintf ("%s/dlink", f->work);
    assert_int_equal (symlink ("out1", link), 0);
    assert_int_equal (symlink ("sub", dlink), 0);
    const char *const ok[] = {"sub/out2", "out1"};
    char **names;
    size_t n;
    char err[TF_ERRLEN] = "";
    assert_int_equal (runner_outputs (f->work, ok, 2, NULL, 0, &names, &n, err, sizeof err), 0);
    assert_int_equal (n, 2);
    assert_string_equal (names[0], "sub/out2");
    assert_string_equal (names[1], "out1");
    runner_names_free (&names, n);
    assert_null (names);

    const struct {
        const char *name, *expect;
    } bad[] = {
        {"sub/missing", "declared output \"sub/missing\" is missing"},
        {"nodir/x", "declared output \"nodir/x\": \"nodir\" is missing"},
        {"link", "declared output \"link\" is not a regular file"},
        {"sub", "declared output \"sub\" is not a regular file"},
        {"dlink/out2", "\"dlink\" is a symlink or not a directory"},
        {"../x", "\"..\" component"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *const list[] = {"out1", bad[i].name};
        assert_int_equal (runner_outputs (f->work, list, 2, NULL, 0, &names, &n, err,
                                          sizeof err), -1);
        assert_null (names);
        if (!strstr (err, bad[i].expect))
            fail_msg ("\"%s\": \"%s\" lacks \"%s\"", bad[i].name, err, bad[i].expect);
    }
    free (link);
    free (dlink);
}

/*  Without declared outputs: every regular file, sorted, except the
 *  staged ones; symlinks (to files or directories) and fifos skipped. */
static void
test_outputs_listed (void **state)
{
    fixture_t *f = *state;
    const char *const files[] = {"in1", "d/in2", "out/b/c", "z", "out/a", "d/kept"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        make_file (f, files[i]);
    char *p = xasprintf ("%s/fifo", f->work), *l1 = xasprintf ("%s/l1", f->work),
         *l2 = xasprintf ("%s/l2", f->work), *empty = xasprintf ("%s/emptydir", f->work);
    assert_int_equal (mkfifo (p, 0644), 0);
    assert_int_equal (symlink ("z", l1), 0);
    assert_int_equal (symlink ("out", l2), 0);
    assert_int_equal (mkdir (empty, 0755), 0);
    const char *const staged[] = {"in1", "d/in2", "not-there"};
    char **names;
    size_t n;
    char err[TF_ERRLEN] = "";
    assert_int_equal (runner_outputs (f->work, NULL, 0, staged, 3, &names, &n, err,
                                      sizeof err), 0);
    const char *want[] = {"d/kept", "out/a", "out/b/c", "z"};
    assert_int_equal (n, 4);
    for (size_t i = 0; i < n; i++)
        assert_string_equal (names[i], want[i]);
    runner_names_free (&names, n);
    free (p), free (l1), free (l2), free (empty);

    assert_int_equal (runner_outputs ("/nonexistent", NULL, 0, NULL, 0, &names, &n, err,
                                      sizeof err), -1);
    assert_non_null (strstr (err, "/nonexistent"));
}

/*  An empty work directory has no outputs; more than BUNDLE_MAX_FILES, or
 *  a directory deeper than RUNNER_MAX_DEPTH, is an error. */
static void
test_outputs_limits (void **state)
{
    fixture_t *f = *state;
    char **names;
    size_t n = 99;
    char err[TF_ERRLEN] = "";
    assert_int_equal (runner_outputs (f->work, NULL, 0, NULL, 0, &names, &n, err,
                                      sizeof err), 0);
    assert_int_equal (n, 0);
    runner_names_free (&names, n);

    for (int i = 0; i < BUNDLE_MAX_FILES; i++) {
        char name[32];
        snprintf (name, sizeof name, "d%d/f%d", i % 10, i);
        make_file (f, name);
    }
    const char *const staged[] = {"d0/f0"};
    assert_int_equal (runner_outputs (f->work, NULL, 0, staged, 1, &names, &n, err,
                                      sizeof err), 0);
    assert_int_equal (n, BUNDLE_MAX_FILES - 1);
    runner_names_free (&names, n);
    make_file (f, "one-more");
    assert_int_equal (runner_outputs (f->work, NULL, 0, staged, 1, &names, &n, err,
                                      sizeof err), 0);
    runner_names_free (&names, n);
    make_file (f, "two-more");
    assert_int_equal (runner_outputs (f->work, NULL, 0, staged, 1, &names, &n, err,
                                      sizeof err), -1);
    assert_non_null (strstr (err, "more than 4096 files"));

    char *deep = xasprintf ("%s/deep", f->root);
    assert_int_equal (mkdir (deep, 0755), 0);
    char *path = xstrdup (deep);
    for (int i = 0; i <= RUNNER_MAX_DEPTH; i++) {
        char *next = xasprintf ("%s/d", path);
        free (path);
        path = next;
        assert_int_equal (mkdir (path, 0755), 0);
    }
    assert_int_equal (runner_outputs (deep, NULL, 0, NULL, 0, &names, &n, err, sizeof err),
                      -1);
    assert_non_null (strstr (err, "nested deeper than 128"));
    free (path);
    free (deep);
}

int
main (void)
{
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_exit_statuses, setup, teardown),
        cmocka_unit_test_setup_teardown (test_timeout_kills_the_group, setup, teardown),
        cmocka_unit_test_setup_teardown (test_timeout_escalates_to_sigkill, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_cancel_via_pipe, setup, teardown),
        cmocka_unit_test_setup_teardown (test_exit_kills_leftovers, setup, teardown),
        cmocka_unit_test_setup_teardown (test_environment, setup, teardown),
        cmocka_unit_test_setup_teardown (test_arguments_and_shell, setup, teardown),
        cmocka_unit_test_setup_teardown (test_exec_failure_is_like_a_shell, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_stderr_tail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_no_descriptor_leaks, setup, teardown),
        cmocka_unit_test_setup_teardown (test_signals_reset_and_mask_kept, setup, teardown),
        cmocka_unit_test_setup_teardown (test_bad_specs, setup, teardown),
        cmocka_unit_test_setup_teardown (test_outputs_declared, setup, teardown),
        cmocka_unit_test_setup_teardown (test_outputs_listed, setup, teardown),
        cmocka_unit_test_setup_teardown (test_outputs_limits, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
