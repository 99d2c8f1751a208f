/*  test_deploy — node processes as the controller places and manages
 *  them: a program that cannot be started is an error of the spawn, not a
 *  strange exit; exits are reported with their status; deploy_stop and
 *  deploy_destroy leave nothing alive, escalating to SIGKILL for a process
 *  that ignores SIGTERM; a node dies with its controller even when the
 *  controller is SIGKILLed; a node inherits no descriptor but stdio, and
 *  reads /dev/null. Hosts: the syntax of every form (overlay/host.h), the
 *  command lines of ssh and netns nodes, the up-front checks and their
 *  messages, and the ssh node's life tied to its stdin (a stop, a
 *  controller's death) through a stand-in `ssh` that runs the remote
 *  command here. Real processes (sh, sleep, ssh to a closed port), no
 *  sshd.
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
#include "controller/shell.h"
#include "controller/netns.h"
#include "controller/spawn.h"
#include "controller/ssh.h"
#include "overlay/host.h"
#include "overlay/util.h"
#include "tests/helpers.h"

static int
setup (void **state)
{
    *state = deploy_new (NULL);
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

    /*  The first word and the last are programs; the words between are
     *  the wrapper's arguments. */
    char *sh[] = {"sh"}, *passwd[] = {"sh", "/etc/passwd"};
    char *wrapped[] = {"env", "-u", "X", "sh"};
    char *no_wrapper[] = {"no-such-wrapper-tf", "sh"};
    int slot = deploy_add (deploy, "A", "local", err, sizeof err);
    assert_int_equal (deploy_check (deploy, slot, sh, 1, err, sizeof err), 0);
    slot = deploy_add (deploy, "B", "local", err, sizeof err);
    assert_int_equal (deploy_check (deploy, slot, passwd, 2, err, sizeof err), -1);
    assert_non_null (strstr (err, "cannot run the node: /etc/passwd"));
    slot = deploy_add (deploy, "C", "local", err, sizeof err);
    if (deploy_check (deploy, slot, wrapped, 4, err, sizeof err) != 0)
        fail_msg ("%s", err);
    slot = deploy_add (deploy, "D", "local", err, sizeof err);
    assert_int_equal (deploy_check (deploy, slot, no_wrapper, 2, err, sizeof err), -1);
    assert_non_null (strstr (err, "no-such-wrapper-tf: not found on PATH"));
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
    assert_true (tf_now () - t0 < 15.0);   /* not the 30 s the stubborn one asks:
                                              a bound, not a timing goal */
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
    assert_true (tf_now () - t0 < 4.5);    /* before its 5 s timeout */
    assert_int_equal (deploy_stop (deploy, 1), 0);
}

static void
test_destroy_leaves_nothing_alive (void **state)
{
    (void) state;
    deploy_t *deploy = deploy_new (NULL);
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
        deploy_t *deploy = deploy_new (NULL);
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

/*  Each node's host picks its backend; a host the syntax refuses is not
 *  added. */
static void
test_backends (void **state)
{
    deploy_t *deploy = *state;
    char err[TF_ERRLEN] = "";
    assert_int_equal (deploy_add (deploy, "A", "local", err, sizeof err), 0);
    assert_int_equal (deploy_add (deploy, "B", "ssh://u@h:22", err, sizeof err), 1);
    assert_int_equal (deploy_add (deploy, "C", "netns:tb", err, sizeof err), 2);
    assert_int_equal (deploy_kind (deploy, 0), HOST_LOCAL);
    assert_int_equal (deploy_kind (deploy, 1), HOST_SSH);
    assert_int_equal (deploy_kind (deploy, 2), HOST_NETNS);
    assert_string_equal (deploy_host (deploy, 1), "ssh://u@h:22");
    assert_string_equal (deploy_control_bind (deploy, 0), DEPLOY_LOCAL_CONTROL);
    assert_null (deploy_bind_address (deploy, 0));
    assert_string_equal (deploy_program (deploy, 1, "treefarm-node"), "treefarm-node");
    assert_int_equal (deploy_add (deploy, "D", "carrier-pigeon://x", err, sizeof err),
                      -1);
    assert_non_null (strstr (err, "host: unknown scheme \"carrier-pigeon\""));
    assert_int_equal (deploy_size (deploy), 3);
    assert_int_equal (deploy_pid (deploy, 0), -1);    /* not started */
    assert_false (deploy_is_running (deploy, 0));
    deploy_exit_t ex;
    assert_int_equal (deploy_poll (deploy, &ex), 0);  /* nothing started, nothing ended */
    assert_null (deploy_name (deploy, 3));
    assert_int_equal (deploy_pid (deploy, -1), -1);
}

/*  Add host and run its check with program sh; returns the check's
 *  result, its message in err. */
static int
check_host (deploy_t *deploy, const char *host, char *err, size_t errlen)
{
    char *sh[] = {"sh"};
    int slot = deploy_add (deploy, "N", host, err, errlen);
    if (slot < 0)
        fail_msg ("%s: %s", host, err);
    return deploy_check (deploy, slot, sh, 1, err, errlen);
}

/*  A local node runs here: its host must be an address of this machine,
 *  refused before anything starts. */
static void
test_check_host (void **state)
{
    deploy_t *deploy = *state;
    char err[TF_ERRLEN] = "";
    const char *local[] = {"local", "127.0.0.1", "127.0.0.2", "localhost"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (check_host (deploy, local[i], err, sizeof err) != 0)
            fail_msg ("%s refused: %s", local[i], err);
    /*  TEST-NET-3 (RFC 5737): well-formed, configured nowhere. */
    assert_int_equal (check_host (deploy, "203.0.113.77", err, sizeof err), -1);
    assert_non_null (strstr (err, "\"203.0.113.77\" is not an address of this machine"));
    assert_int_equal (check_host (deploy, "no-such-host.invalid", err, sizeof err), -1);
    assert_non_null (strstr (err, "\"no-such-host.invalid\" cannot be resolved"));
}

/* ------------------------------------------------------------------------
 *  Hosts: the syntax.
 */

typedef struct {
    const char *text;
    host_kind_t kind;
    const char *name, *user;
    int port;
    const char *bind;        /* host_bind_name, NULL for none */
} host_case_t;

static void
test_host_forms (void **state)
{
    (void) state;
    const host_case_t cases[] = {
        {"local", HOST_LOCAL, "", "", 0, "127.0.0.1"},
        {"127.0.0.2", HOST_LOCAL, "127.0.0.2", "", 0, "127.0.0.2"},
        {"::1", HOST_LOCAL, "::1", "", 0, "::1"},
        {"localhost", HOST_LOCAL, "localhost", "", 0, "localhost"},
        {"ssh://h", HOST_SSH, "h", "", 0, "h"},
        {"ssh://alice@node-3.example.org:2222", HOST_SSH, "node-3.example.org", "alice",
         2222, "node-3.example.org"},
        {"ssh://root@127.0.0.1:22", HOST_SSH, "127.0.0.1", "root", 22, "127.0.0.1"},
        {"ssh://[::1]", HOST_SSH, "::1", "", 0, "::1"},
        {"ssh://bob@[fe80::1:2]:65535", HOST_SSH, "fe80::1:2", "bob", 65535, "fe80::1:2"},
        {"ssh://a_b.c@h:1", HOST_SSH, "h", "a_b.c", 1, "h"},
        {"netns:tb-a.1", HOST_NETNS, "tb-a.1", "", 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const host_case_t *c = &cases[i];
        host_t h;
        char err[TF_ERRLEN] = "";
        if (host_parse (c->text, &h, err, sizeof err) != 0)
            fail_msg ("%s: %s", c->text, err);
        assert_int_equal (h.kind, c->kind);
        assert_string_equal (h.name, c->name);
        assert_string_equal (h.user, c->user);
        assert_int_equal (h.port, c->port);
        if (c->bind)
            assert_string_equal (host_bind_name (&h), c->bind);
        else
            assert_null (host_bind_name (&h));
    }
    assert_string_equal (host_kind_str (HOST_SSH), "ssh");
}

static void
test_host_errors (void **state)
{
    (void) state;
    char *long_host = xasprintf ("ssh://%0300d", 0);
    const char *cases[][2] = {
        {"", "must not be empty"},
        {"tcp://1.2.3.4", "unknown scheme \"tcp\" in \"tcp://1.2.3.4\""},
        {"ssh:h", "ssh hosts are written ssh://[user@]host[:port], got \"ssh:h\""},
        {"ssh://", "empty host in \"ssh://\""},
        {"ssh://root@", "empty host"},
        {"ssh://root@:22", "empty host"},
        {"ssh://h:0", "bad port \"0\" in \"ssh://h:0\" (expected 1..65535)"},
        {"ssh://h:65536", "bad port \"65536\""},
        {"ssh://h:22x", "bad port \"22x\""},
        {"ssh://h:", "bad port \"\""},
        {"ssh://h:0000022", "bad port"},
        {"ssh://-oProxyCommand=x", "bad host name \"-oProxyCommand=x\""},
        {"ssh://-l@h", "bad user \"-l\""},
        {"ssh://a b@h", "bad user \"a b\""},
        {"ssh://a@b@h", "bad host name \"b@h\""},
        {"ssh://::1", "an IPv6 address goes in brackets"},
        {"ssh://[::1", "bad IPv6 address \"[::1\""},
        {"ssh://[zz::1]:22", "bad IPv6 address \"[zz::1]\""},
        {"ssh://[]", "bad IPv6 address"},
        {"ssh://h/path", "unexpected \"/path\" after the host"},
        {long_host, "bad host name"},
        {"netns:", "empty namespace name in \"netns:\""},
        {"netns:a/b", "bad namespace name in \"netns:a/b\""},
        {"netns:..", "bad namespace name"},
        {"netns:-x", "bad namespace name"},
        {"no such host!", "\"no such host!\" is not one of local, an address"},
        {"ssh://h:\n", "bad port \"\\x0a\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        host_t h;
        char err[TF_ERRLEN] = "";
        if (host_parse (cases[i][0], &h, err, sizeof err) == 0)
            fail_msg ("\"%s\" accepted", cases[i][0]);
        if (!strstr (err, cases[i][1]))
            fail_msg ("\"%s\": expected '%s' in: %s", cases[i][0], cases[i][1], err);
        assert_null (strchr (err, '\n'));
    }
    free (long_host);
}

/* ------------------------------------------------------------------------
 *  Command lines.
 */

/*  argv equals the space-separated words of expect. */
static void
assert_argv (char **argv, const char *expect)
{
    char joined[2048] = "";
    for (int i = 0; argv[i]; i++)
        snprintf (joined + strlen (joined), sizeof joined - strlen (joined), "%s%s",
                  i ? " " : "", argv[i]);
    assert_string_equal (joined, expect);
}

static void
test_ssh_argv (void **state)
{
    (void) state;
    host_t h;
    assert_int_equal (host_parse ("ssh://alice@h:2222", &h, NULL, 0), 0);
    ssh_opts_t with = {.config = "/tmp/cfg"}, plain = {0};
    char **argv = ssh_argv (&with, &h, 0, "true");
    assert_argv (argv, "ssh -o BatchMode=yes -o ConnectTimeout=5 -T -F /tmp/cfg -p 2222 "
                       "-l alice h true");
    spawn_argv_free (argv);
    argv = ssh_argv (&plain, &h, 1, NULL);
    assert_argv (argv, "ssh -o BatchMode=yes -o ConnectTimeout=5 "
                       "-o ServerAliveInterval=5 -o ServerAliveCountMax=3 -T -p 2222 "
                       "-l alice h");
    spawn_argv_free (argv);
    assert_int_equal (host_parse ("ssh://[::1]", &h, NULL, 0), 0);
    argv = ssh_argv (&plain, &h, 0, NULL);
    assert_argv (argv, "ssh -o BatchMode=yes -o ConnectTimeout=5 -T ::1");
    spawn_argv_free (argv);

    char *quoted = shell_quote ("it's");
    assert_string_equal (quoted, "'it'\\''s'");
    free (quoted);
    char *word = ssh_cache_word ("abc");
    assert_string_equal (word, "\"$HOME\"/.cache/treefarm/treefarm-node-abc");
    free (word);
}

/*  The remote command runs the node's words as given, whatever they
 *  hold, and exits with the node's status while its stdin stays open. */
static void
test_ssh_node_command (void **state)
{
    (void) state;
    char *node[] = {"sh", "-c", "printf '%s|%s\\n' \"$1\" \"$2\"; exit 3", "x", "it's",
                    "two  words $HOME", NULL};
    char *command = ssh_node_command (node, 0);
    assert_int_equal (strncmp (command, "sh -c '", 7), 0);
    int pipefd[2];
    assert_int_equal (pipe2 (pipefd, O_CLOEXEC), 0);
    char *argv[] = {"sh", "-c", command, NULL};
    spawn_result_t res;
    char err[TF_ERRLEN];
    assert_int_equal (spawn_capture (argv, pipefd[0], 10, &res, err, sizeof err), 0);
    close (pipefd[0]);
    close (pipefd[1]);
    assert_string_equal (res.out, "it's|two  words $HOME\n");
    assert_true (WIFEXITED (res.status));
    assert_int_equal (WEXITSTATUS (res.status), 3);
    free (command);
}

/*  A node starts with no signal blocked or ignored (they survive exec),
 *  whatever the controller's thread has; and the controller's own mask
 *  is as it was, though spawn blocks every signal across vfork. */
static void
test_spawn_resets_signals_and_keeps_the_mask (void **state)
{
    (void) state;
    test_signals_t saved;
    test_signals_disturb (&saved);
    char *argv[] = TEST_SIGNALS_ARGV;
    spawn_result_t res;
    char err[TF_ERRLEN];
    int rc = spawn_capture (argv, -1, 10, &res, err, sizeof err);
    assert_true (test_signals_restore (&saved));
    assert_int_equal (rc, 0);
    if (!test_signals_clean (res.out))
        fail_msg ("the node's signals: %s", res.out);
}

static void
test_netns_argv_and_address (void **state)
{
    (void) state;
    char *node[] = {"treefarm-node", "--name", "A", NULL};
    char **argv = netns_argv ("tb-a", node);
    assert_argv (argv, "ip netns exec tb-a treefarm-node --name A");
    spawn_argv_free (argv);

    char addr[64];
    const char *out = "5: veth1    inet 198.18.0.2/30 brd 198.18.0.3 scope global veth1\\"
                      "       valid_lft forever preferred_lft forever\n"
                      "6: dummy0    inet 10.1.2.3/24 scope global dummy0\n";
    assert_int_equal (netns_parse_address (out, addr, sizeof addr), 0);
    assert_string_equal (addr, "198.18.0.2");
    assert_int_equal (netns_parse_address ("", addr, sizeof addr), -1);
    assert_int_equal (netns_parse_address ("1: x inet nonsense/8 scope global x", addr,
                                           sizeof addr), -1);
}

/* ------------------------------------------------------------------------
 *  Checks, and an ssh node's life, through a stand-in ssh.
 */

/*  A stand-in for ssh, first on PATH: it logs its arguments; asked -G,
 *  it says what ssh would of a configuration with two aliases, lo
 *  (HostName 127.0.0.1, Port 2222) and gone (a HostName that does not
 *  resolve), and of any other name itself, port 22, user tf, -p and -l
 *  winning; it fails for host down.invalid as ssh does, and otherwise
 *  runs the remote command here with HOME set to the fixture's, as sshd
 *  would on the host. */
static const char fake_ssh[] =
    "#!/bin/sh\n"
    "printf '%s\\n' \"$*\" >>\"$FAKE_DIR/ssh.log\"\n"
    "g=; p=; l=tf\n"
    "while [ $# -gt 0 ]; do\n"
    "  case $1 in -G) g=1; shift;; -p) p=$2; shift 2;; -l) l=$2; shift 2;;\n"
    "    -o|-F) shift 2;; -T) shift;; *) break;; esac\n"
    "done\n"
    "host=$1; shift\n"
    "if [ -n \"$g\" ]; then\n"
    "  case $host in lo) h=127.0.0.1; : \"${p:=2222}\";; gone) h=nowhere.invalid;;\n"
    "    *) h=$host;; esac\n"
    "  printf 'host %s\\nuser %s\\nhostname %s\\nport %s\\n' \"$host\" \"$l\" \"$h\" \"${p:-22}\"\n"
    "  exit 0\n"
    "fi\n"
    "if [ \"$host\" = down.invalid ]; then\n"
    "  echo \"ssh: connect to host down.invalid port 22: Connection refused\" >&2\n"
    "  exit 255\n"
    "fi\n"
    "[ $# -gt 0 ] || exit 0\n"
    "HOME=$FAKE_DIR/home exec sh -c \"$*\"\n";

typedef struct {
    char dir[64];
    char *old_path;
} fake_t;

/*  Write text into path, then give it mode. */
static void
write_file (const char *path, const char *text, mode_t mode)
{
    test_write_file (path, text);
    assert_int_equal (chmod (path, mode), 0);
}

static int
fake_setup (void **state)
{
    fake_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_deploy");
    char *path = xasprintf ("%s/ssh", f->dir);
    write_file (path, fake_ssh, 0755);
    free (path);
    path = xasprintf ("%s/home", f->dir);
    mkdir (path, 0700);
    free (path);
    const char *old = getenv ("PATH");
    f->old_path = xstrdup (old ? old : "");
    char *fake_path = xasprintf ("%s:/usr/bin:/bin", f->dir);
    setenv ("PATH", fake_path, 1);
    setenv ("FAKE_DIR", f->dir, 1);
    free (fake_path);
    *state = f;
    return 0;
}

static int
fake_teardown (void **state)
{
    fake_t *f = *state;
    setenv ("PATH", f->old_path, 1);
    test_remove_dir (f->dir);
    free (f->old_path);
    free (f);
    return 0;
}

/*  Lines of the stand-in's log that contain text. */
static int
log_count (const fake_t *f, const char *text)
{
    char *path = xasprintf ("%s/ssh.log", f->dir), line[8192];
    FILE *log = fopen (path, "r");
    int n = 0;
    while (log && fgets (line, sizeof line, log))
        n += strstr (line, text) != NULL;
    if (log)
        fclose (log);
    free (path);
    return n;
}

/*  ssh's own message when nothing listens: the real client, port 1. */
static void
test_ssh_unreachable (void **state)
{
    (void) state;
    host_t h;
    assert_int_equal (host_parse ("ssh://root@127.0.0.1:1", &h, NULL, 0), 0);
    ssh_opts_t opts = {0};
    char *program[] = {"treefarm-node"}, *remote = NULL, err[TF_ERRLEN] = "";
    assert_int_equal (ssh_check (&opts, &h, "ssh://root@127.0.0.1:1", program, 1, &remote,
                                 err, sizeof err), -1);
    assert_null (remote);
    const char *expect = "cannot reach ssh://root@127.0.0.1:1 (ssh exited with status "
                         "255): ";
    if (!strstr (err, expect) || !strstr (err, "port 1"))
        fail_msg ("unexpected: %s", err);
}

/*  ssh_check on host ssh://h with program[0..n). */
static int
check_h (const ssh_opts_t *opts, char *program[], int n, char **remote, char *err,
         size_t errlen)
{
    host_t h;
    assert_int_equal (host_parse ("ssh://h", &h, NULL, 0), 0);
    return ssh_check (opts, &h, "ssh://h", program, n, remote, err, errlen);
}

static void
test_ssh_check_messages (void **state)
{
    fake_t *f = *state;
    ssh_opts_t opts = {.config = "/dev/null"};
    host_t down;
    assert_int_equal (host_parse ("ssh://down.invalid", &down, NULL, 0), 0);
    char *remote = NULL, err[TF_ERRLEN] = "";
    char *node[] = {"/nonexistent/treefarm-node"};
    assert_int_equal (ssh_check (&opts, &down, "ssh://down.invalid", node, 1, &remote,
                                 err, sizeof err), -1);
    assert_string_equal (err, "cannot reach ssh://down.invalid (ssh exited with status "
                              "255): ssh: connect to host down.invalid port 22: "
                              "Connection refused");
    assert_int_equal (log_count (f, "-o BatchMode=yes -o ConnectTimeout=5 -T "
                                    "-F /dev/null down.invalid true"), 1);

    assert_int_equal (check_h (&opts, node, 1, &remote, err, sizeof err), -1);
    assert_string_equal (err, "the node program is not on ssh://h: neither "
                              "/nonexistent/treefarm-node nor its name on the remote "
                              "PATH (install it there, or use --push-binary)");
    char *wrapped[] = {"no-such-wrapper-tf", "/bin/true"};
    assert_int_equal (check_h (&opts, wrapped, 2, &remote, err, sizeof err), -1);
    assert_non_null (strstr (err, "no-such-wrapper-tf (the first word of "
                                  "TREEFARM_NODE_WRAPPER) is not on the PATH of "
                                  "ssh://h"));
    char *broken = xasprintf ("%s/broken-node", f->dir);
    write_file (broken, "#!/bin/sh\necho 'boom: libfoo.so: cannot open' >&2\nexit 1\n",
                0755);
    char *program[] = {broken};
    assert_int_equal (check_h (&opts, program, 1, &remote, err, sizeof err), -1);
    assert_string_equal (err, "the node program does not run on ssh://h (--help failed): "
                              "boom: libfoo.so: cannot open");
    assert_null (remote);
    free (broken);
}

/*  --push-binary: the binary lands in the host's cache under its content
 *  hash, executable, and is not copied again when there. */
static void
test_ssh_push_binary (void **state)
{
    fake_t *f = *state;
    char *node = xasprintf ("%s/node", f->dir);
    write_file (node, "abc", 0755);
    char hash[64], err[TF_ERRLEN] = "";
    assert_int_equal (ssh_file_hash (node, hash, sizeof hash, err, sizeof err), 0);
    assert_string_equal (hash, "a9993e364706816aba3e25717850c26c9cd0d89d");   /* SHA-1 */
    write_file (node, "#!/bin/sh\nexit 0\n", 0755);
    assert_int_equal (ssh_file_hash (node, hash, sizeof hash, err, sizeof err), 0);

    ssh_opts_t opts = {.push_binary = 1};
    char *program[] = {node}, *remote = NULL;
    if (check_h (&opts, program, 1, &remote, err, sizeof err) != 0)
        fail_msg ("%s", err);
    char *cached = xasprintf ("%s/home/.cache/treefarm/treefarm-node-%s", f->dir, hash);
    assert_string_equal (remote, cached);
    struct stat first, again;
    assert_int_equal (stat (cached, &first), 0);
    assert_int_equal (first.st_mode & 0777, 0755);
    assert_int_equal (log_count (f, "cat >"), 1);
    free (remote);
    assert_int_equal (check_h (&opts, program, 1, &remote, err, sizeof err), 0);
    assert_int_equal (stat (cached, &again), 0);
    assert_int_equal (log_count (f, "cat >"), 1);
    assert_true (first.st_ino == again.st_ino);
    free (remote);
    free (cached);
    free (node);
}

/*  Two nodes on one host: checked once; the node program is the one the
 *  host reported; the controller is reached on loopback. */
static void
test_ssh_deploy_check (void **state)
{
    fake_t *f = *state;
    char *node = xasprintf ("%s/node", f->dir), err[TF_ERRLEN] = "";
    write_file (node, "#!/bin/sh\nexit 0\n", 0755);
    char *program[] = {node};
    deploy_t *deploy = deploy_new (&(deploy_opts_t){.ssh_config = "/dev/null"});
    for (int i = 0; i < 2; i++) {
        int slot = deploy_add (deploy, i ? "B" : "A", "ssh://root@127.0.0.1:2222", err,
                               sizeof err);
        if (deploy_check (deploy, slot, program, 1, err, sizeof err) != 0)
            fail_msg ("%s", err);
        assert_string_equal (deploy_program (deploy, slot, "x"), node);
        assert_string_equal (deploy_control_bind (deploy, slot), DEPLOY_LOCAL_CONTROL);
        assert_null (deploy_bind_address (deploy, slot));
    }
    assert_int_equal (log_count (f, " true"), 1);
    assert_int_equal (log_count (f, "-G"), 1);
    assert_string_equal (deploy_target (deploy, 1), "root@127.0.0.1:2222");
    char *argv[] = {node, "--name", "A", NULL};
    char **command = deploy_command (deploy, 0, argv);
    int n = 0;
    while (command[n])
        n++;
    assert_string_equal (command[0], "ssh");
    assert_string_equal (command[n - 2], "127.0.0.1");
    assert_int_equal (strncmp (command[n - 1], "sh -c '", 7), 0);
    assert_non_null (strstr (command[n - 1], "'\\''--name'\\'' '\\''A'\\''"));
    spawn_argv_free (command);
    deploy_destroy (&deploy);
    free (node);
}

/*  A Host alias: ssh -G says where it goes, the node binds that
 *  HostName, the alias stays what ssh connects to; one whose HostName
 *  does not resolve here is refused before ssh connects, naming both. */
static void
test_ssh_alias (void **state)
{
    fake_t *f = *state;
    char *node = xasprintf ("%s/node", f->dir), err[TF_ERRLEN] = "";
    write_file (node, "#!/bin/sh\nexit 0\n", 0755);
    char *program[] = {node};
    deploy_t *deploy = deploy_new (&(deploy_opts_t){.ssh_config = "/dev/null"});
    int slot = deploy_add (deploy, "A", "ssh://lo", err, sizeof err);
    if (deploy_check (deploy, slot, program, 1, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (deploy_target (deploy, slot), "tf@127.0.0.1:2222");
    assert_string_equal (deploy_bind_address (deploy, slot), "127.0.0.1");
    assert_string_equal (deploy_control_bind (deploy, slot), DEPLOY_LOCAL_CONTROL);
    assert_int_equal (log_count (f, "-G -T -F /dev/null lo"), 1);
    assert_int_equal (log_count (f, "-F /dev/null lo true"), 1);
    slot = deploy_add (deploy, "B", "ssh://u@localhost", err, sizeof err);
    if (deploy_check (deploy, slot, program, 1, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (deploy_target (deploy, slot), "u@localhost:22 (127.0.0.1)");
    assert_null (deploy_bind_address (deploy, slot));
    slot = deploy_add (deploy, "C", "ssh://gone", err, sizeof err);
    assert_int_equal (deploy_check (deploy, slot, program, 1, err, sizeof err), -1);
    if (!strstr (err, "ssh://gone: cannot resolve \"nowhere.invalid\" here: ")
        || !strstr (err, "gives \"gone\" the HostName nowhere.invalid (ssh -G)"))
        fail_msg ("unexpected: %s", err);
    assert_int_equal (log_count (f, "gone true"), 0);
    assert_null (deploy_target (deploy, slot));
    deploy_destroy (&deploy);
    free (node);
}

/*  The pid the node wrote into path, once it has (up to 5 s). */
static pid_t
read_pid_file (const char *path)
{
    for (int i = 0; i < 500; i++) {
        FILE *file = fopen (path, "r");
        long pid = 0;
        int got = file && fscanf (file, "%ld", &pid) == 1;
        if (file)
            fclose (file);
        if (got && pid > 0)
            return (pid_t) pid;
        usleep (10000);
    }
    fail_msg ("no pid in %s within 5 s", path);
    return -1;
}

/*  Start an ssh node that writes its pid to pidfile and sleeps. */
static int
start_ssh_sleeper (deploy_t *deploy, const char *pidfile, char *err, size_t errlen)
{
    char *script = xasprintf ("echo $$ >'%s'; exec sleep 30", pidfile);
    char *argv[] = {"sh", "-c", script, NULL};
    int slot = deploy_add (deploy, "A", "ssh://root@h", err, errlen);
    int rc = slot < 0 ? -1 : deploy_start (deploy, slot, argv, err, errlen);
    free (script);
    return rc;
}

/*  A stop closes the ssh client's stdin: the remote shell ends the node
 *  with SIGTERM and the client exits with it, no SIGKILL needed. */
static void
test_ssh_stop_ends_the_remote_node (void **state)
{
    fake_t *f = *state;
    char *pidfile = xasprintf ("%s/node.pid", f->dir), err[TF_ERRLEN] = "";
    deploy_t *deploy = deploy_new (NULL);
    if (start_ssh_sleeper (deploy, pidfile, err, sizeof err) != 0)
        fail_msg ("%s", err);
    pid_t node = read_pid_file (pidfile);
    assert_int_equal (deploy_wait (deploy, 0.2), 1);
    assert_int_equal (deploy_stop (deploy, 5.0), 0);
    assert_true (gone (node));
    deploy_exit_t ex;
    next_exit (deploy, &ex);
    assert_true (WIFEXITED (ex.status));
    assert_int_equal (WEXITSTATUS (ex.status), 128 + SIGTERM);
    deploy_destroy (&deploy);
    free (pidfile);
}

/*  A controller SIGKILLed mid-run takes its remote nodes with it: its end
 *  of the client's stdin closes with it. */
static void
test_ssh_node_dies_with_the_controller (void **state)
{
    fake_t *f = *state;
    char *pidfile = xasprintf ("%s/node.pid", f->dir);
    assert_int_equal (prctl (PR_SET_CHILD_SUBREAPER, 1), 0);
    pid_t controller = fork ();
    assert_true (controller >= 0);
    if (controller == 0) {
        char err[TF_ERRLEN];
        deploy_t *deploy = deploy_new (NULL);
        if (start_ssh_sleeper (deploy, pidfile, err, sizeof err) != 0)
            _exit (1);
        pause ();
        _exit (0);
    }
    pid_t node = read_pid_file (pidfile);
    kill (controller, SIGKILL);
    assert_int_equal (waitpid (controller, NULL, 0), controller);
    /*  The node's shell reaps it, or, if it died first, we do (orphans
     *  come to us). */
    int ended = 0;
    for (int i = 0; i < 300 && !ended; i++) {
        while (waitpid (-1, NULL, WNOHANG) > 0)
            ;
        ended = gone (node);
        if (!ended)
            usleep (10000);
    }
    prctl (PR_SET_CHILD_SUBREAPER, 0);
    if (!ended) {
        kill (node, SIGKILL);
        fail_msg ("remote node pid %d outlived its controller", (int) node);
    }
    free (pidfile);
}

/*  A namespace that does not exist is refused up front, named. */
static void
test_netns_missing (void **state)
{
    deploy_t *deploy = *state;
    char err[TF_ERRLEN] = "";
    assert_int_equal (check_host (deploy, "netns:tf-no-such-namespace", err, sizeof err),
                      -1);
    assert_non_null (strstr (err, "network namespace \"tf-no-such-namespace\" does not "
                                  "exist"));
    char *argv[] = {"treefarm-node", NULL};
    char **command = deploy_command (deploy, 0, argv);
    assert_argv (command, "ip netns exec tf-no-such-namespace treefarm-node");
    spawn_argv_free (command);
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
        cmocka_unit_test (test_host_forms),
        cmocka_unit_test (test_host_errors),
        cmocka_unit_test (test_ssh_argv),
        cmocka_unit_test (test_ssh_node_command),
        cmocka_unit_test (test_spawn_resets_signals_and_keeps_the_mask),
        cmocka_unit_test (test_netns_argv_and_address),
        cmocka_unit_test (test_ssh_unreachable),
        cmocka_unit_test_setup_teardown (test_ssh_check_messages, fake_setup,
                                         fake_teardown),
        cmocka_unit_test_setup_teardown (test_ssh_push_binary, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown (test_ssh_deploy_check, fake_setup,
                                         fake_teardown),
        cmocka_unit_test_setup_teardown (test_ssh_alias, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown (test_ssh_stop_ends_the_remote_node, fake_setup,
                                         fake_teardown),
        cmocka_unit_test_setup_teardown (test_ssh_node_dies_with_the_controller,
                                         fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown (test_netns_missing, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
