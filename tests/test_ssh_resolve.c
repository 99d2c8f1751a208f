/*  test_ssh_resolve — an ssh host's name through `ssh -G`
 *  (controller/ssh_resolve.h): the command line (the URL's port and user
 *  given, so they win), what is read from ssh -G's output and every
 *  refusal of it (a missing field, a bad hostname, port or user, lines
 *  past the limit, a last line cut short), the address shown; and the
 *  real ssh client on a generated configuration: an alias's HostName,
 *  Port and User, the URL's port and user over them, and a configuration
 *  ssh refuses, named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller/spawn.h"
#include "controller/ssh_resolve.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  argv's words joined by blanks must be expect. */
static void
assert_words (char **argv, const char *expect)
{
    char joined[1024] = "";
    for (int i = 0; argv[i]; i++)
        snprintf (joined + strlen (joined), sizeof joined - strlen (joined), "%s%s",
                  i ? " " : "", argv[i]);
    assert_string_equal (joined, expect);
}

static void
test_argv (void **state)
{
    (void) state;
    host_t h;
    ssh_opts_t with = {.config = "/tmp/cfg"}, plain = {0};
    assert_int_equal (host_parse ("ssh://alice@lo:2222", &h, NULL, 0), 0);
    char **argv = ssh_resolve_argv (&with, &h);
    assert_words (argv, "ssh -G -T -F /tmp/cfg -p 2222 -l alice lo");
    spawn_argv_free (argv);
    assert_int_equal (host_parse ("ssh://lo", &h, NULL, 0), 0);
    argv = ssh_resolve_argv (&plain, &h);
    assert_words (argv, "ssh -G -T lo");
    spawn_argv_free (argv);
}

/*  What ssh -G prints first, then a few lines of the rest. */
static const char printed[] =
    "host lo\nuser root\nhostname 127.0.0.1\nport 2222\naddressfamily any\n"
    "identityfile /tmp/k\nbatchmode no\n";

static void
test_parse (void **state)
{
    (void) state;
    ssh_target_t t;
    char err[TF_ERRLEN] = "";
    if (ssh_resolve_parse (printed, &t, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (t.hostname, "127.0.0.1");
    assert_string_equal (t.user, "root");
    assert_int_equal (t.port, 2222);
    char *shown = ssh_target_str (&t);
    assert_string_equal (shown, "root@127.0.0.1:2222");
    free (shown);

    /*  Any order; an IPv6 address shown in brackets; a user ssh takes
     *  beyond the config's characters; the first of a repeated key. */
    assert_int_equal (ssh_resolve_parse ("port 22\nhostname ::1\nuser ad\\alice@corp\n"
                                         "hostname 10.0.0.1\n", &t, err, sizeof err), 0);
    shown = ssh_target_str (&t);
    assert_string_equal (shown, "ad\\alice@corp@[::1]:22");
    free (shown);
}

static void
test_parse_refusals (void **state)
{
    (void) state;
    char *over = xasprintf ("hostname %0300d\nport 22\nuser u\n", 0);
    char *late = xcalloc (1, (SSH_RESOLVE_MAX_LINES + 4) * 8);
    for (int i = 0; i < SSH_RESOLVE_MAX_LINES; i++)
        strcat (late, "x y\n");
    strcat (late, "hostname h\nport 22\nuser u\n");
    const struct {
        const char *text, *message;
    } cases[] = {
        {"", "no hostname line in its first 0 lines"},
        {"host lo\nuser u\nport 22\n", "no hostname line in its first 3 lines"},
        {"hostname h\nuser u\n", "no port line"},
        {"hostname h\nport 22\n", "no user line"},
        {"hostname h\nport 22\nuser u", "no user line"},   /* cut short: not read */
        {"hostname\nport 22\nuser u\n", "no hostname line"},
        {"hostname \nport 22\nuser u\n", "bad hostname \"\""},
        {"hostname -oProxyCommand=x\n", "bad hostname \"-oProxyCommand=x\""},
        {"hostname a b\n", "bad hostname \"a b\""},
        {"hostname h%d\n", "bad hostname \"h%d\""},
        {"hostname .h\n", "bad hostname \".h\""},
        {"hostname [::1]\n", "bad hostname \"[::1]\""},
        {over, "bad hostname \"0000"},
        {"hostname h\nport 0\n", "bad port \"0\" (expected 1..65535)"},
        {"hostname h\nport 65536\n", "bad port \"65536\""},
        {"hostname h\nport 22x\n", "bad port \"22x\""},
        {"hostname h\nport 22\nuser -l\n", "bad user \"-l\""},
        {"hostname h\nport 22\nuser a b\n", "bad user \"a b\""},
        {"hostname h\nport 22\nuser \x7f\n", "bad user \"\\x7f\""},
        {"hostname h\nport 22\nuser 123456789012345678901234567890123\n", "bad user"},
        {late, "no hostname line in its first 256 lines"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ssh_target_t t;
        char err[TF_ERRLEN] = "";
        assert_int_equal (ssh_resolve_parse (cases[i].text, &t, err, sizeof err), -1);
        if (!strstr (err, cases[i].message))
            fail_msg ("case %zu: expected \"%s\" in \"%s\"", i, cases[i].message, err);
    }
    free (late);
    free (over);
}

/*  The real client on a generated configuration (it connects nowhere):
 *  an alias's HostName, Port and User; the URL's over them; a bad
 *  configuration refused, naming the host and quoting ssh. */
static void
test_real_ssh (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "", *found = spawn_resolve ("ssh", err, sizeof err);
    if (!found) {
        printf ("  (no ssh client: %s; skipped)\n", err);
        return;
    }
    free (found);
    char dir[64];
    test_temp_dir (dir, sizeof dir, "test_ssh_resolve");
    char *path = xasprintf ("%s/config", dir);
    test_write_file (path, "Host lo\n    HostName 127.0.0.1\n    Port 2222\n"
                           "    User tfuser\n");
    ssh_opts_t opts = {.config = path};
    host_t h;
    ssh_target_t t;
    assert_int_equal (host_parse ("ssh://lo", &h, NULL, 0), 0);
    if (ssh_resolve (&opts, &h, "ssh://lo", &t, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (t.hostname, "127.0.0.1");
    assert_string_equal (t.user, "tfuser");
    assert_int_equal (t.port, 2222);
    assert_int_equal (host_parse ("ssh://bob@lo:2200", &h, NULL, 0), 0);
    if (ssh_resolve (&opts, &h, "ssh://bob@lo:2200", &t, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (t.user, "bob");
    assert_int_equal (t.port, 2200);

    test_write_file (path, "Host lo\n    NoSuchOption yes\n");
    assert_int_equal (host_parse ("ssh://lo", &h, NULL, 0), 0);
    assert_int_equal (ssh_resolve (&opts, &h, "ssh://lo", &t, err, sizeof err), -1);
    if (!strstr (err, "ssh://lo: ssh -G lo failed (ssh exited with status 255): ")
        || !strstr (err, "Bad configuration option"))
        fail_msg ("unexpected: %s", err);
    test_remove_dir (dir);
    free (path);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_argv),
        cmocka_unit_test (test_parse),
        cmocka_unit_test (test_parse_refusals),
        cmocka_unit_test (test_real_ssh),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
