/*  test_deploy — node processes as the controller manages them: a program
 *  that cannot be started is an error of the spawn, not a strange exit;
 *  exits are reported with their status; deploy_stop and deploy_destroy
 *  leave nothing alive, escalating to SIGKILL for a process that ignores
 *  SIGTERM; a node dies with its controller even when the controller is
 *  SIGKILLed; a node inherits no descriptor but stdio, and reads
 *  /dev/null. Real processes (sh, sleep), no sockets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller/deploy.h"
#include "overlay/util.h"

static int
setup (void **state)
{
    char err[TF_ERRLEN];
    deploy_t *deploy = deploy_new ("local", err, sizeof err);
    if (!deploy)
        fail_msg ("deploy_new: %s", err);
    *state = deploy;
    return 0;
}

static int
teardown (void **state)
{
    deploy_t *deploy = *state;
    deploy_destroy (&deploy);
    assert_null (deploy);
    return 0;
}

static int
spawn (deploy_t *deploy, const char *name, char *const argv[])
{
    char err[TF_ERRLEN] = "";
    int slot = deploy_spawn (deploy, name, "127.0.0.1", argv, err, sizeof err);
    if (slot < 0)
        fail_msg ("spawn %s: %s", argv[0], err);
    return slot;
}

/*  Wait up to 5 s for the next exit. */
static void
next_exit (deploy_t *deploy, deploy_exit_t *out)
{
    for (int i = 0; i < 500; i++) {
        if (deploy_poll (deploy, out))
            return;
        usleep (10000);
    }
    fail_msg ("no process exited within 5 s");
}

/*  A pid no longer exists (reaped, not a zombie). */
static int
gone (pid_t pid)
{
    return kill (pid, 0) != 0 && errno == ESRCH;
}

static void
test_exit_statuses_are_reported (void **state)
{
    deploy_t *deploy = *state;
    char *ok[] = {"true", NULL};
    char *three[] = {"sh", "-c", "exit 3", NULL};
    int a = spawn (deploy, "A", ok);
    int b = spawn (deploy, "B", three);
    assert_int_equal (a, 0);
    assert_int_equal (b, 1);
    assert_int_equal (deploy_size (deploy), 2);
    assert_string_equal (deploy_name (deploy, b), "B");
    assert_true (deploy_pid (deploy, a) > 0);

    char text[256];
    int seen = 0;
    for (int i = 0; i < 2; i++) {
        deploy_exit_t ex;
        next_exit (deploy, &ex);
        deploy_describe_exit (&ex, text, sizeof text);
        assert_false (ex.signalled);
        if (ex.slot == a) {
            assert_true (deploy_exit_is_clean (&ex));
            assert_non_null (strstr (text, "node A (pid "));
            assert_non_null (strstr (text, "exited with status 0"));
        }
        else {
            assert_int_equal (ex.slot, b);
            assert_false (deploy_exit_is_clean (&ex));
            assert_non_null (strstr (text, "exited with status 3"));
        }
        seen |= 1 << ex.slot;
    }
    assert_int_equal (seen, 3);
    /*  Each exit is reported once. */
    deploy_exit_t ex;
    assert_int_equal (deploy_poll (deploy, &ex), 0);
    assert_int_equal (deploy_running (deploy), 0);
    assert_false (deploy_is_running (deploy, a));
}

static void
test_unstartable_programs_fail_the_spawn (void **state)
{
    deploy_t *deploy = *state;
    char err[TF_ERRLEN] = "";
    char *missing[] = {"/nonexistent/treefarm-node", NULL};
    char *not_on_path[] = {"no-such-program-treefarm", NULL};
    char *not_executable[] = {"/etc/passwd", NULL};
    char *directory[] = {"/tmp", NULL};
    assert_int_equal (deploy_spawn (deploy, "A", "h", missing, err, sizeof err), -1);
    assert_non_null (strstr (err, "/nonexistent/treefarm-node"));
    assert_int_equal (deploy_spawn (deploy, "A", "h", not_on_path, err, sizeof err), -1);
    assert_non_null (strstr (err, "not found on PATH"));
    assert_int_equal (deploy_spawn (deploy, "A", "h", not_executable, err, sizeof err), -1);
    assert_non_null (strstr (err, "/etc/passwd"));
    assert_int_equal (deploy_spawn (deploy, "A", "h", directory, err, sizeof err), -1);

    /*  Executable but not a program: exec itself fails, in the child. */
    char garbage[] = "/tmp/test_deploy.XXXXXX";
    int fd = mkstemp (garbage);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, "\x7f" "ELF garbage", 12), 12);
    close (fd);
    chmod (garbage, 0755);
    char *cannot_exec[] = {garbage, NULL};
    assert_int_equal (deploy_spawn (deploy, "A", "h", cannot_exec, err, sizeof err), -1);
    unlink (garbage);
    assert_non_null (strstr (err, "cannot run"));
    assert_non_null (strstr (err, strerror (ENOEXEC)));
    assert_int_equal (deploy_size (deploy), 0);

    assert_int_equal (deploy_check_program (deploy, "h", "sh", err, sizeof err), 0);
    assert_int_equal (deploy_check_program (deploy, "h", "/etc/passwd", err, sizeof err),
                      -1);
}

static void
test_stop_terminates_then_kills (void **state)
{
    deploy_t *deploy = *state;
    char *sleeper[] = {"sleep", "30", NULL};
    char *stubborn[] = {"sh", "-c", "trap '' TERM; exec sleep 30", NULL};
    int a = spawn (deploy, "A", sleeper);
    int b = spawn (deploy, "B", stubborn);
    pid_t pa = deploy_pid (deploy, a), pb = deploy_pid (deploy, b);
    usleep (100000);         /* let sh set its trap */
    assert_int_equal (deploy_running (deploy), 2);
    assert_int_equal (deploy_wait (deploy, 0.1), 2);

    double t0 = tf_now ();
    assert_int_equal (deploy_stop (deploy, 0.5), 1);
    assert_true (tf_now () - t0 < 2.0);
    assert_int_equal (deploy_running (deploy), 0);
    assert_true (gone (pa));
    assert_true (gone (pb));

    char text[256];
    for (int i = 0; i < 2; i++) {
        deploy_exit_t ex;
        next_exit (deploy, &ex);
        assert_true (ex.signalled);
        assert_true (deploy_exit_is_clean (&ex));
        deploy_describe_exit (&ex, text, sizeof text);
        assert_non_null (strstr (text, ex.slot == a ? "killed by signal 15"
                                                    : "killed by signal 9"));
    }
}

static void
test_wait_returns_when_all_exited (void **state)
{
    deploy_t *deploy = *state;
    char *brief[] = {"sleep", "0.2", NULL};
    spawn (deploy, "A", brief);
    double t0 = tf_now ();
    assert_int_equal (deploy_wait (deploy, 5), 0);
    assert_true (tf_now () - t0 < 2.0);
    assert_int_equal (deploy_stop (deploy, 1), 0);
}

static void
test_destroy_leaves_nothing_alive (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    deploy_t *deploy = deploy_new ("local", err, sizeof err);
    char *sleeper[] = {"sleep", "30", NULL};
    pid_t pid = deploy_pid (deploy, spawn (deploy, "A", sleeper));
    deploy_destroy (&deploy);
    assert_null (deploy);
    assert_true (gone (pid));
}

static void
test_child_environment (void **state)
{
    deploy_t *deploy = *state;
    /*  A descriptor the controller holds, not close-on-exec. */
    int fd = open ("/dev/null", O_RDONLY);
    assert_true (fd > 2);
    char *script = xasprintf ("[ ! -e /proc/self/fd/%d ] || exit 1; "
                              "[ \"$(readlink /proc/self/fd/0)\" = /dev/null ] || exit 2",
                              fd);
    char *argv[] = {"sh", "-c", script, NULL};
    /*  Our own stdin is something else than /dev/null meanwhile. */
    int pipefd[2], saved = dup (STDIN_FILENO);
    assert_int_equal (pipe (pipefd), 0);
    dup2 (pipefd[0], STDIN_FILENO);
    spawn (deploy, "A", argv);
    dup2 (saved, STDIN_FILENO);
    close (saved);
    close (pipefd[0]);
    close (pipefd[1]);
    deploy_exit_t ex;
    next_exit (deploy, &ex);
    char text[256];
    if (!deploy_exit_is_clean (&ex))
        fail_msg ("%s (1: fd inherited, 2: stdin not /dev/null)",
                  deploy_describe_exit (&ex, text, sizeof text));
    free (script);
    close (fd);
}

/*  A controller SIGKILLed mid-run takes its nodes with it. */
static void
test_nodes_die_with_the_controller (void **state)
{
    (void) state;
    int pipefd[2];
    assert_int_equal (pipe (pipefd), 0);
    /*  Orphans come to us, so we can see the node's end. */
    assert_int_equal (prctl (PR_SET_CHILD_SUBREAPER, 1), 0);
    pid_t controller = fork ();
    assert_true (controller >= 0);
    if (controller == 0) {
        char err[TF_ERRLEN];
        deploy_t *deploy = deploy_new ("local", err, sizeof err);
        char *sleeper[] = {"sleep", "30", NULL};
        int slot = deploy_spawn (deploy, "A", "h", sleeper, err, sizeof err);
        pid_t pid = slot < 0 ? -1 : deploy_pid (deploy, slot);
        if (write (pipefd[1], &pid, sizeof pid) != sizeof pid)
            _exit (1);
        pause ();
        _exit (0);
    }
    close (pipefd[1]);
    pid_t node = -1;
    assert_int_equal (read (pipefd[0], &node, sizeof node), sizeof node);
    close (pipefd[0]);
    assert_true (node > 0);
    kill (controller, SIGKILL);
    assert_int_equal (waitpid (controller, NULL, 0), controller);

    int status = 0;
    pid_t rc = 0;
    for (int i = 0; i < 300 && rc == 0; i++) {
        rc = waitpid (node, &status, WNOHANG);
        if (rc == 0)
            usleep (10000);
    }
    prctl (PR_SET_CHILD_SUBREAPER, 0);
    if (rc != node) {
        kill (node, SIGKILL);
        fail_msg ("node pid %d outlived its controller", (int) node);
    }
    assert_true (WIFSIGNALED (status));
    assert_int_equal (WTERMSIG (status), SIGKILL);
}

static void
test_backends (void **state)
{
    deploy_t *deploy = *state;
    char err[TF_ERRLEN] = "";
    assert_string_equal (deploy_backend_name (deploy), "local");
    assert_string_equal (deploy_control_bind (deploy), "tcp://127.0.0.1:*");
    assert_null (deploy_new ("carrier-pigeon", err, sizeof err));
    assert_non_null (strstr (err, "carrier-pigeon"));
    assert_null (deploy_name (deploy, 0));
    assert_int_equal (deploy_pid (deploy, -1), -1);
}

/*  The local backend runs every node here: it accepts the addresses of
 *  this machine and refuses the rest before anything starts. */
static void
test_check_host (void **state)
{
    deploy_t *deploy = *state;
    char err[TF_ERRLEN] = "";
    const char *local[] = {"127.0.0.1", "127.0.0.2", "localhost"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (deploy_check_host (deploy, local[i], err, sizeof err) != 0)
            fail_msg ("%s refused: %s", local[i], err);
    assert_int_equal (deploy_check_host (deploy, "no such host!", err, sizeof err), -1);
    assert_non_null (strstr (err, "\"no such host!\" cannot be resolved"));
    /*  The benchmarking range (RFC 2544): well-formed, configured nowhere. */
    assert_int_equal (deploy_check_host (deploy, "198.18.0.1", err, sizeof err), -1);
    assert_non_null (strstr (err, "\"198.18.0.1\" is not an address of this machine"));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_exit_statuses_are_reported, setup, teardown),
        cmocka_unit_test_setup_teardown (test_unstartable_programs_fail_the_spawn, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_stop_terminates_then_kills, setup, teardown),
        cmocka_unit_test_setup_teardown (test_wait_returns_when_all_exited, setup,
                                         teardown),
        cmocka_unit_test (test_destroy_leaves_nothing_alive),
        cmocka_unit_test_setup_teardown (test_child_environment, setup, teardown),
        cmocka_unit_test (test_nodes_die_with_the_controller),
        cmocka_unit_test_setup_teardown (test_backends, setup, teardown),
        cmocka_unit_test_setup_teardown (test_check_host, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
