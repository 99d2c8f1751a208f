/*  test_session — why a node that gives up is lost, whatever the order in
 *  which the controller sees its FAIL, its process's exit and its
 *  parent's LOST (docs/reliability.md): the FAIL's reason, in results.json
 *  and on the terminal, unless the node was lost with its parent.
 *
 *  Each test drives a real session (session_new on a three-node chain,
 *  n0 -> n1 -> n2) through its own handlers: the messages come from
 *  DEALER sockets named after the nodes into the session's control
 *  ROUTER, the exits are real processes' exits reaped by the deployment,
 *  and the shutdown is the session's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller/session_int.h"
#include "overlay/proto.h"
#include "overlay/util.h"
#include "tests/helpers.h"

static const char *const chain_json =
    "{\"name\": \"chain\","
    " \"tasks\": {\"count\": 5, \"input_mb\": 1, \"units\": 1},"
    " \"policy\": \"fcfs\","
    " \"tree\": ["
    "  {\"name\": \"n0\", \"compute\": 1},"
    "  {\"name\": \"n1\", \"parent\": \"n0\", \"compute\": 1, \"link_mbps\": 5},"
    "  {\"name\": \"n2\", \"parent\": \"n1\", \"compute\": 1, \"link_mbps\": 5}"
    " ]}";

#define FAIL_TEXT "cannot write spool/1: File too large"
#define FAIL_WHY "it failed: " FAIL_TEXT

typedef struct {
    char dir[64];
    session_t *session;
    zsock_t *node[3];        /* DEALERs speaking as n0, n1, n2 */
} fixture_t;

static const session_driver_t no_driver = {0};

/*  A session of the chain in its run: START sent, every node started,
 *  its control ROUTER on an inproc endpoint the DEALERs connect to. */
static int
setup (void **state)
{
    static int serial;
    fixture_t *f = xcalloc (1, sizeof *f);
    char err[TF_ERRLEN], endpoint[64];
    test_temp_dir (f->dir, sizeof f->dir, "test_session");
    config_t *cfg = config_load_string (chain_json, "<test>", err, sizeof err);
    if (!cfg)
        fail_msg ("config: %s", err);
    session_opts_t opt = {.command = "run", .config_path = "<test>", .out_dir = f->dir,
                          .node_bin = "/bin/sh", .curve = SESSION_CURVE_OFF};
    session_t *s = f->session = session_new (&opt, &cfg);
    assert_non_null (s);
    snprintf (endpoint, sizeof endpoint, "inproc://test-session-%d", serial++);
    s->link.control = zsock_new_router (endpoint);
    assert_non_null (s->link.control);
    s->link.poller = zpoller_new (s->link.control, NULL);
    s->driver = &no_driver;
    s->phase = PHASE_RUNNING;
    s->t.start = tf_now ();
    for (int i = 0; i < 3; i++) {
        s->peers[i].state = PEER_STARTED;
        s->peers[i].heard = s->t.start;
        f->node[i] = zsock_new (ZMQ_DEALER);
        zsock_set_identity (f->node[i], s->cfg->nodes[i].name);
        assert_int_equal (zsock_connect (f->node[i], "%s", endpoint), 0);
    }
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    for (int i = 0; i < 3; i++)
        zsock_destroy (&f->node[i]);
    session_destroy (&f->session);
    test_remove_dir (f->dir);
    free (f);
    return 0;
}

/*  Start node's process as sh -c script. */
static void
start_node (fixture_t *f, int node, const char *script)
{
    char err[TF_ERRLEN];
    char *argv[] = {"/bin/sh", "-c", (char *) script, NULL};
    if (deploy_start (f->session->setup.deploy, node, argv, err, sizeof err) != 0)
        fail_msg ("start n%d: %s", node, err);
    f->session->peers[node].slot = node;
}

/*  Node's process exited with status 1 and can be reaped, but is not
 *  yet: the session has not looked. */
static void
node_exits (fixture_t *f, int node)
{
    start_node (f, node, "exit 1");
    siginfo_t info;
    pid_t pid = deploy_pid (f->session->setup.deploy, node);
    assert_int_equal (waitid (P_PID, (id_t) pid, &info, WEXITED | WNOWAIT), 0);
}

/*  Node sends msg (taken) to the controller, which reads it. */
static void
node_says (fixture_t *f, int node, zmsg_t *msg)
{
    assert_int_equal (zmsg_send (&msg, f->node[node]), 0);
    session_handle_message (f->session);
}

/*  Node's FAIL is sent and waits in the socket, unread. */
static void
node_fails_unread (fixture_t *f, int node)
{
    zmsg_t *msg = proto_fail (FAIL_TEXT);
    assert_int_equal (zmsg_send (&msg, f->node[node]), 0);
}

/*  Why node is lost, as results.json says; "" when it is not. */
static char *
lost_why (fixture_t *f, const char *name)
{
    json_t *r = results_to_json (session_results (f->session));
    json_t *entry;
    size_t i;
    char *why = xstrdup ("");
    json_array_foreach (json_object_get (r, "lost"), i, entry)
        if (strcmp (json_string_value (json_object_get (entry, "name")), name) == 0) {
            free (why);
            why = xstrdup (json_string_value (json_object_get (entry, "why")));
        }
    json_decref (r);
    return why;
}

static void
assert_lost_for (fixture_t *f, const char *name, const char *want)
{
    char *why = lost_why (f, name);
    if (strcmp (why, want) != 0)
        fail_msg ("%s lost for \"%s\", expected \"%s\"", name, why, want);
    free (why);
    assert_true (session_ok (f->session));
}

/*  The FAIL is read while the node's exit is ready to be reaped: the
 *  session reaps it first (the FAIL may be a consequence of another
 *  death), and still the FAIL says why. */
static void
test_fail_with_exit_unreaped (void **state)
{
    fixture_t *f = *state;
    node_exits (f, 1);
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The exit is reaped first (the node is lost for it), then the FAIL
 *  comes. */
static void
test_exit_then_fail (void **state)
{
    fixture_t *f = *state;
    node_exits (f, 1);
    session_handle_exits (f->session);
    char *why = lost_why (f, "n1");
    assert_non_null (strstr (why, "exited with status 1"));
    free (why);
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The parent's LOST first, then the FAIL. */
static void
test_parent_lost_then_fail (void **state)
{
    fixture_t *f = *state;
    start_node (f, 1, "sleep 30");
    node_says (f, 0, proto_lost ("n1", "connection closed"));
    assert_lost_for (f, "n1", "n0: connection closed");
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The parent's LOST, then the exit, then the FAIL. */
static void
test_parent_lost_exit_then_fail (void **state)
{
    fixture_t *f = *state;
    node_exits (f, 1);
    node_says (f, 0, proto_lost ("n1", "connection closed"));
    session_handle_exits (f->session);
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The FAIL first: the exit and the parent's LOST after it change
 *  nothing. */
static void
test_fail_then_exit_and_lost (void **state)
{
    fixture_t *f = *state;
    start_node (f, 1, "sleep 30");
    node_says (f, 1, proto_fail (FAIL_TEXT));
    session_handle_exits (f->session);
    node_says (f, 0, proto_lost ("n1", "connection closed"));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The exit is reaped, then the run ends with the FAIL still unread and
 *  no REPORT awaited (the root reported already): the shutdown still
 *  reads the FAIL. */
static void
test_exit_then_end_before_fail (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN];
    proto_stats_t report = {0};
    node_exits (f, 1);
    session_handle_exits (f->session);
    node_fails_unread (f, 1);
    assert_int_equal (results_update_report (session_results (f->session), 0, &report, err,
                                             sizeof err), 0);
    f->session->phase = PHASE_STOPPING;
    session_shutdown (f->session);
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The exit, then the parent's LOST, then the FAIL. */
static void
test_exit_parent_lost_then_fail (void **state)
{
    fixture_t *f = *state;
    node_exits (f, 1);
    session_handle_exits (f->session);
    node_says (f, 0, proto_lost ("n1", "connection closed"));
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The parent's LOST, then the run ends with the FAIL still unread: the
 *  shutdown reads it. */
static void
test_parent_lost_then_end_before_fail (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN];
    proto_stats_t report = {0};
    start_node (f, 1, "sleep 30");
    node_says (f, 0, proto_lost ("n1", "connection closed"));
    node_fails_unread (f, 1);
    assert_int_equal (results_update_report (session_results (f->session), 0, &report, err,
                                             sizeof err), 0);
    f->session->phase = PHASE_STOPPING;
    session_shutdown (f->session);
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The root's last word is read first (the driver finishes the run), in
 *  the same turn as the FAIL sent during the run, with the exit
 *  reapable: the node is lost for the FAIL's reason and the run stays
 *  complete. */
static void
test_finished_then_fail (void **state)
{
    fixture_t *f = *state;
    session_finish (f->session, tf_now ());
    node_exits (f, 1);
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  The same with the exit reaped before the FAIL is read, and the
 *  parent's LOST after it. */
static void
test_finished_then_exit_fail_lost (void **state)
{
    fixture_t *f = *state;
    session_finish (f->session, tf_now ());
    node_exits (f, 1);
    session_handle_exits (f->session);
    node_says (f, 1, proto_fail (FAIL_TEXT));
    node_says (f, 0, proto_lost ("n1", "connection closed"));
    assert_lost_for (f, "n1", FAIL_WHY);
}

/*  A node lost with its parent keeps that reason, its FAIL (a
 *  consequence) notwithstanding; its parent's own FAIL still wins. */
static void
test_lost_with_parent_keeps_it (void **state)
{
    fixture_t *f = *state;
    node_exits (f, 1);
    session_handle_exits (f->session);
    node_says (f, 2, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n2", "its parent n1 was lost");
    node_says (f, 1, proto_fail (FAIL_TEXT));
    assert_lost_for (f, "n1", FAIL_WHY);
    assert_int_equal (results_lost_count (session_results (f->session)), 2);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_fail_with_exit_unreaped, setup, teardown),
        cmocka_unit_test_setup_teardown (test_exit_then_fail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_parent_lost_then_fail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_parent_lost_exit_then_fail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_fail_then_exit_and_lost, setup, teardown),
        cmocka_unit_test_setup_teardown (test_exit_then_end_before_fail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_exit_parent_lost_then_fail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_parent_lost_then_end_before_fail, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_finished_then_fail, setup, teardown),
        cmocka_unit_test_setup_teardown (test_finished_then_exit_fail_lost, setup, teardown),
        cmocka_unit_test_setup_teardown (test_lost_with_parent_keeps_it, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
