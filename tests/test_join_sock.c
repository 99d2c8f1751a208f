/*  test_join_sock — the run's join socket (controller/join_sock.h) bound
 *  in a temporary directory and driven by a DEALER of the test: the file
 *  is the owner's only, a good request is parsed whether or not it has
 *  the empty delimiter, and garbage, a request too big, an unknown key
 *  or a bad node is refused with a message naming the problem while the
 *  refusal still reaches the sender. Then `treefarm join` itself
 *  (join_main, in a thread) against the socket: each answer's code is
 *  its exit code, and a run that does not answer ends it with 2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <czmq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/join.h"
#include "controller/join_cli.h"
#include "controller/join_sock.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  How long the test waits for a message that must come; a wait, not a
 *  timing assertion. */
#define WAIT_MS 20000

#define GOOD_NODE "{\"name\": \"S9\", \"compute\": 12.5, \"link_mbps\": 40}"

typedef struct {
    char dir[256];
    zsock_t *run;            /* the join socket */
    zsock_t *client;         /* the test's DEALER */
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    char err[TF_ERRLEN] = "";
    test_temp_dir (f->dir, sizeof f->dir, "test_join_sock");
    f->run = join_sock_bind (f->dir, err, sizeof err);
    if (!f->run)
        fail_msg ("join_sock_bind: %s", err);
    char path[PATH_MAX];
    assert_int_equal (join_sock_path (f->dir, path, sizeof path, err, sizeof err), 0);
    f->client = zsock_new (ZMQ_DEALER);
    zsock_set_linger (f->client, 0);
    assert_int_equal (zsock_connect (f->client, "ipc://%s", path), 0);
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    zsock_destroy (&f->client);
    join_sock_close (&f->run, f->dir);
    test_remove_dir (f->dir);
    free (f);
    return 0;
}

/*  Wait until sock has a message; fail the test if none comes. */
static void
await (zsock_t *sock)
{
    zpoller_t *poller = zpoller_new (sock, NULL);
    void *which = zpoller_wait (poller, WAIT_MS);
    zpoller_destroy (&poller);
    if (which != sock)
        fail_msg ("no message within %d ms", WAIT_MS);
}

/*  Send n frames (len bytes each at data[i]) from the client, and wait
 *  for them at the run. */
static void
send_frames (fixture_t *f, int n, const char **data, const size_t *len)
{
    zmsg_t *msg = zmsg_new ();
    for (int i = 0; i < n; i++)
        zmsg_addmem (msg, data[i], len[i]);
    assert_int_equal (zmsg_send (&msg, f->client), 0);
    await (f->run);
}

/*  Send a request in REQ's envelope: [empty][text]. */
static void
send_request (fixture_t *f, const char *text)
{
    const char *data[] = {"", text};
    size_t len[] = {0, strlen (text)};
    send_frames (f, 2, data, len);
}

/*  Receive the run's answer at the client: [empty][JSON], parsed. */
static void
recv_answer (fixture_t *f, int *code, char *parent, size_t parent_size, char *why,
             size_t why_size)
{
    await (f->client);
    zmsg_t *msg = zmsg_recv (f->client);
    assert_non_null (msg);
    assert_int_equal (zmsg_size (msg), 2);
    assert_int_equal (zframe_size (zmsg_first (msg)), 0);
    zframe_t *body = zmsg_next (msg);
    char err[TF_ERRLEN] = "";
    if (join_answer_parse ((const char *) zframe_data (body), zframe_size (body), code,
                           parent, parent_size, why, why_size, err, sizeof err) != 0)
        fail_msg ("the answer does not parse: %s", err);
    zmsg_destroy (&msg);
}

static void
test_socket_is_the_owners_only (void **state)
{
    fixture_t *f = *state;
    char path[PATH_MAX], err[TF_ERRLEN] = "";
    snprintf (path, sizeof path, "%s/%s", f->dir, JOIN_SOCKET_NAME);
    struct stat st;
    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISSOCK (st.st_mode));
    assert_int_equal (st.st_mode & 0777, 0600);
    /*  A second run into the same OUT would take the socket away. */
    zsock_t *again = join_sock_bind (f->dir, err, sizeof err);
    assert_null (again);
    assert_non_null (strstr (err, "another run is taking nodes here"));
    join_sock_close (&f->run, f->dir);
    assert_null (f->run);
    assert_int_equal (lstat (path, &st), -1);
}

static void
test_long_path_is_refused (void **state)
{
    (void) state;
    char base[256], dir[512], err[TF_ERRLEN] = "";
    test_temp_dir (base, sizeof base, "test_join_sock");
    snprintf (dir, sizeof dir, "%s/%0120d", base, 0);
    assert_int_equal (mkdir (dir, 0700), 0);
    assert_null (join_sock_bind (dir, err, sizeof err));
    assert_non_null (strstr (err, "more than the 107"));
    test_remove_dir (base);
}

static void
test_good_request_is_read_and_answered (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "", parent[64], why[256];
    zframe_t *peer = NULL;
    config_node_t node;
    send_request (f, "{\"node\": " GOOD_NODE "}");
    if (join_sock_read (f->run, &peer, &node, err, sizeof err) != 0)
        fail_msg ("refused: %s", err);
    assert_non_null (peer);
    assert_string_equal (node.name, "S9");
    assert_true (node.compute_rate == 12.5);
    assert_true (node.link_mbps == 40 && node.link_idle_mbps == 40);
    assert_null (node.parent_name);
    config_node_clear (&node);
    assert_int_equal (join_sock_answer (f->run, &peer, JOIN_ADMITTED, "head",
                                        "it gains 3 s"), 0);
    assert_null (peer);
    int code = -1;
    recv_answer (f, &code, parent, sizeof parent, why, sizeof why);
    assert_int_equal (code, JOIN_ADMITTED);
    assert_string_equal (parent, "head");
    assert_string_equal (why, "it gains 3 s");
}

static void
test_request_without_delimiter_is_read (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "", parent[64], why[256];
    const char *text = "{\"node\": " GOOD_NODE "}";
    const char *data[] = {text};
    size_t len[] = {strlen (text)};
    send_frames (f, 1, data, len);
    zframe_t *peer = NULL;
    config_node_t node;
    if (join_sock_read (f->run, &peer, &node, err, sizeof err) != 0)
        fail_msg ("refused: %s", err);
    config_node_clear (&node);
    assert_int_equal (join_sock_answer (f->run, &peer, JOIN_NOT_ADMITTED, NULL, "no"), 0);
    int code = -1;
    recv_answer (f, &code, parent, sizeof parent, why, sizeof why);
    assert_int_equal (code, JOIN_NOT_ADMITTED);
    assert_string_equal (parent, "");
}

/*  frames (n of them) must be refused with a message containing what,
 *  and the refusal must reach the client. */
static void
refused (fixture_t *f, int n, const char **data, const size_t *len, const char *what)
{
    char err[TF_ERRLEN] = "", parent[64], why[TF_ERRLEN];
    send_frames (f, n, data, len);
    zframe_t *peer = NULL;
    config_node_t node;
    assert_int_equal (join_sock_read (f->run, &peer, &node, err, sizeof err), -1);
    if (!strstr (err, what))
        fail_msg ("\"%s\" does not say \"%s\"", err, what);
    assert_null (node.name);
    assert_non_null (peer);
    assert_int_equal (join_sock_answer (f->run, &peer, JOIN_REFUSED, NULL, err), 0);
    int code = -1;
    recv_answer (f, &code, parent, sizeof parent, why, sizeof why);
    assert_int_equal (code, JOIN_REFUSED);
    assert_string_equal (why, err);
}

/*  A request of one JSON text in REQ's envelope must be refused. */
static void
refused_text (fixture_t *f, const char *text, const char *what)
{
    const char *data[] = {"", text};
    size_t len[] = {0, strlen (text)};
    refused (f, 2, data, len, what);
}

static void
test_bad_requests_are_refused (void **state)
{
    fixture_t *f = *state;
    refused_text (f, "not json", "JOIN:1:");
    refused_text (f, "[1, 2]", "expected an object, got array");
    refused_text (f, "{}", "missing required key \"node\"");
    refused_text (f, "{\"node\": " GOOD_NODE ", \"extra\": 1}", "unknown key \"extra\"");
    refused_text (f, "{\"node\": {\"name\": \"S9\", \"compute\": 1}}",
                  "missing required key \"link_mbps\"");
    refused_text (f, "{\"node\": {\"name\": \"a b\", \"compute\": 1, \"link_mbps\": 1}}",
                  "name: must be");
    refused_text (f, "{\"node\": 7}", "expected an object, got integer");
    const char *three[] = {"a", "b", "c"};
    size_t three_len[] = {1, 1, 1};
    refused (f, 3, three, three_len, "got 3 frames");
    const char *empty[] = {""};
    size_t empty_len[] = {0};
    refused (f, 1, empty, empty_len, "JOIN:");
}

static void
test_too_big_request_is_refused (void **state)
{
    fixture_t *f = *state;
    size_t n = JOIN_MAX_BYTES + 100;
    char *big = xmalloc (n + 1);
    memset (big, ' ', n);
    memcpy (big, "{\"node\": " GOOD_NODE "}", strlen ("{\"node\": " GOOD_NODE "}"));
    big[n] = '\0';
    refused_text (f, big, "more than 65536");
    free (big);
}

static void
test_bad_answers_are_refused (void **state)
{
    (void) state;
    static const char *const bad[] = {
        "", "nope", "[]", "{\"code\": 3, \"parent\": null, \"why\": \"\"}",
        "{\"code\": 0, \"parent\": 5, \"why\": \"\"}",
        "{\"code\": 0, \"parent\": null}",
        "{\"code\": 0.0, \"parent\": null, \"why\": \"\"}",
        "{\"code\": 0, \"parent\": null, \"why\": \"\", \"x\": 1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[TF_ERRLEN] = "", parent[64], why[64];
        int code = -1;
        int rc = join_answer_parse (bad[i], strlen (bad[i]), &code, parent, sizeof parent,
                                    why, sizeof why, err, sizeof err);
        if (rc != -1 || !strstr (err, "answer"))
            fail_msg ("answer %s: rc %d, \"%s\"", bad[i], rc, err);
    }
}

/*  `treefarm join` run in a thread: its arguments and its exit code. */
typedef struct {
    char *argv[6];
    int argc;
    int rc;
} cli_run_t;

static void *
cli_thread (void *arg)
{
    cli_run_t *run = arg;
    run->rc = join_main (run->argc, run->argv);
    return NULL;
}

/*  Start `treefarm join DIR NODE --timeout timeout` in a thread. */
static void
cli_start (fixture_t *f, cli_run_t *run, pthread_t *thread, char *node_path,
           const char *timeout)
{
    snprintf (node_path, PATH_MAX, "%s/node.json", f->dir);
    test_write_file (node_path, GOOD_NODE "\n");
    *run = (cli_run_t){.argv = {"join", f->dir, node_path, "--timeout", (char *) timeout},
                       .argc = 5, .rc = -1};
    assert_int_equal (pthread_create (thread, NULL, cli_thread, run), 0);
}

static void
test_cli_exit_code_is_the_answers (void **state)
{
    fixture_t *f = *state;
    for (int code = JOIN_ADMITTED; code <= JOIN_REFUSED; code++) {
        cli_run_t run;
        pthread_t thread;
        char node_path[PATH_MAX], err[TF_ERRLEN] = "";
        cli_start (f, &run, &thread, node_path, "60");
        await (f->run);
        zframe_t *peer = NULL;
        config_node_t node;
        if (join_sock_read (f->run, &peer, &node, err, sizeof err) != 0)
            fail_msg ("the command's request is refused: %s", err);
        assert_string_equal (node.name, "S9");
        config_node_clear (&node);
        join_sock_answer (f->run, &peer, code, code ? NULL : "head", "because");
        pthread_join (thread, NULL);
        assert_int_equal (run.rc, code);
    }
}

static void
test_cli_without_answer_exits_2 (void **state)
{
    fixture_t *f = *state;
    cli_run_t run;
    pthread_t thread;
    char node_path[PATH_MAX];
    cli_start (f, &run, &thread, node_path, "0.2");
    pthread_join (thread, NULL);
    assert_int_equal (run.rc, 2);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_socket_is_the_owners_only, setup, teardown),
        cmocka_unit_test (test_long_path_is_refused),
        cmocka_unit_test_setup_teardown (test_good_request_is_read_and_answered, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_request_without_delimiter_is_read, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_bad_requests_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown (test_too_big_request_is_refused, setup, teardown),
        cmocka_unit_test (test_bad_answers_are_refused),
        cmocka_unit_test_setup_teardown (test_cli_exit_code_is_the_answers, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_cli_without_answer_exits_2, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
