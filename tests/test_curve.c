/*  test_curve — a run's CURVE certificates: the files and their modes
 *  (the directory 0700, each node's file 0600, whatever the umask), the
 *  controller's public key in each node's file, a file refused with a
 *  message naming it (corrupted, truncated, another node's, too large,
 *  not a file), the files removed at the end; and the ZAP handler: a
 *  client with a key of the run gets through, tagged with its name, one
 *  without CURVE or with an unknown key gets nothing through. Each test
 *  has its own temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "overlay/curve.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  How long a client is given to get a message through; a refused
 *  handshake delivers nothing however long we wait. */
#define DELIVERY_MS 1500

static const char *const names[] = {"root", "S1", "S1a"};
#define NNODES 3

typedef struct {
    char dir[64];
    char *certs;             /* dir/.curve */
    char err[TF_ERRLEN];
    curve_run_t *run;
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_curve");
    f->certs = xasprintf ("%s/%s", f->dir, CURVE_DIR_NAME);
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    curve_run_destroy (&f->run);
    test_remove_dir (f->dir);
    free (f->certs);
    free (f);
    return 0;
}

static curve_run_t *
make_run (fixture_t *f)
{
    f->run = curve_run_new (f->certs, names, NNODES, f->err, sizeof f->err);
    if (!f->run)
        fail_msg ("curve_run_new: %s", f->err);
    return f->run;
}

static mode_t
mode_of (const char *path)
{
    struct stat st;
    assert_int_equal (lstat (path, &st), 0);
    return st.st_mode & 07777;
}

/*  Even with umask 0, the directory is 0700 and every file 0600, at an
 *  absolute path named after its node; the keys are keys and distinct. */
static void
test_files_and_modes (void **state)
{
    fixture_t *f = *state;
    mode_t old = umask (0);
    make_run (f);
    assert_int_equal (mode_of (f->certs), 0700);
    /*  No file until a node is to read one. */
    char *first = xasprintf ("%s/%s.cert", f->certs, names[0]);
    assert_int_equal (access (first, F_OK), -1);
    free (first);
    for (int i = 0; i < NNODES; i++) {
        const char *path = curve_run_file (f->run, i, f->err, sizeof f->err);
        assert_non_null (path);
        assert_ptr_equal (curve_run_file (f->run, i, f->err, sizeof f->err), path);
        assert_int_equal (path[0], '/');
        char *tail = xasprintf ("/%s/%s.cert", CURVE_DIR_NAME, names[i]);
        assert_non_null (strstr (path, tail));
        free (tail);
        assert_int_equal (mode_of (path), 0600);
        assert_true (curve_key_valid (curve_run_public (f->run, i)));
        for (int j = 0; j < i; j++)
            assert_string_not_equal (curve_run_public (f->run, i),
                                     curve_run_public (f->run, j));
    }
    umask (old);
    json_t *keys = curve_run_keys (f->run);
    assert_int_equal (json_object_size (keys), NNODES);
    assert_string_equal (json_string_value (json_object_get (keys, "S1")),
                         curve_run_public (f->run, 1));
    json_decref (keys);
}

/*  A directory that is there with a wider mode is narrowed; a stale file
 *  is replaced; a symlink in the directory's place is refused. */
static void
test_existing_dir (void **state)
{
    fixture_t *f = *state;
    assert_int_equal (mkdir (f->certs, 0755), 0);
    char *stale = xasprintf ("%s/S1.cert", f->certs);
    test_write_file (stale, "stale");
    chmod (stale, 0644);
    make_run (f);
    assert_int_equal (mode_of (f->certs), 0700);
    assert_non_null (curve_run_file (f->run, 1, f->err, sizeof f->err));
    assert_int_equal (mode_of (stale), 0600);
    char *text = test_read_file (stale);
    assert_null (strstr (text, "stale"));
    free (text);
    free (stale);
    curve_run_destroy (&f->run);

    char *link = xasprintf ("%s/link", f->dir);
    assert_int_equal (symlink (f->dir, link), 0);
    assert_null (curve_run_new (link, names, NNODES, f->err, sizeof f->err));
    assert_non_null (strstr (f->err, "not a directory of ours"));
    free (link);
}

/*  A node loads its own file: its keys, and the controller's public key
 *  from the file's metadata. */
static void
test_load (void **state)
{
    fixture_t *f = *state;
    make_run (f);
    char controller[CURVE_KEY_LEN + 1] = "";
    const char *path = curve_run_file (f->run, 1, f->err, sizeof f->err);
    zcert_t *cert = curve_load (path, "S1", controller, f->err, sizeof f->err);
    if (!cert)
        fail_msg ("curve_load: %s", f->err);
    assert_string_equal (zcert_public_txt (cert), curve_run_public (f->run, 1));
    assert_string_equal (controller, zcert_public_txt (curve_run_cert (f->run)));
    char *text = test_read_file (path);
    assert_non_null (strstr (text, zcert_secret_txt (cert)));
    assert_null (strstr (text, zcert_secret_txt (curve_run_cert (f->run))));
    /*  The text a node takes on its stdin is the file's, and loads alike;
     *  under another name it is refused. */
    assert_string_equal (curve_run_text (f->run, 1), text);
    free (text);
    zcert_t *same = curve_load_text ("stdin", curve_run_text (f->run, 1), "S1", controller,
                                     f->err, sizeof f->err);
    assert_non_null (same);
    assert_string_equal (zcert_secret_txt (same), zcert_secret_txt (cert));
    zcert_destroy (&same);
    assert_null (curve_load_text ("stdin", curve_run_text (f->run, 1), "S2", controller,
                                  f->err, sizeof f->err));
    assert_non_null (strstr (f->err, "stdin"));
    zcert_destroy (&cert);
}

/*  curve_load refuses path as node name and says expect, naming the file. */
static void
refused (fixture_t *f, const char *path, const char *name, const char *expect)
{
    char controller[CURVE_KEY_LEN + 1];
    zcert_t *cert = curve_load (path, name, controller, f->err, sizeof f->err);
    if (cert)
        fail_msg ("%s was accepted", path);
    if (!strstr (f->err, path) || !strstr (f->err, expect))
        fail_msg ("expected \"%s\" naming %s, got: %s", expect, path, f->err);
}

/*  Replace the first occurrence of from in path's text with to. */
static void
edit (const char *path, const char *from, const char *to)
{
    char *text = test_read_file (path);
    char *at = strstr (text, from);
    assert_non_null (at);
    char *out = xasprintf ("%.*s%s%s", (int) (at - text), text, to, at + strlen (from));
    test_write_file (path, out);
    free (out);
    free (text);
}

static void
test_load_refusals (void **state)
{
    fixture_t *f = *state;
    make_run (f);
    const char *path = curve_run_file (f->run, 2, f->err, sizeof f->err);
    char *good = test_read_file (path);
    refused (f, path, "S1", "the certificate of node \"S1a\", not of \"S1\"");

    char *at = strstr (good, "secret-key = \"") + strlen ("secret-key = \"");
    char from[32], to[32];
    snprintf (from, sizeof from, "secret-key = \"%c", *at);
    snprintf (to, sizeof to, "secret-key = \"%c", *at == 'a' ? 'b' : 'a');
    edit (path, from, to);
    refused (f, path, "S1a", "the public key is not the secret key's");
    /*  One edit of the good file each: what it breaks, and the message. */
    static const char *const edits[][3] = {
        {"    secret-key", "#   secret-key", "no curve/secret-key"},
        {"curve\n", "curve\n    colour = \"blue\"\n", ":7: unexpected \"colour\" in curve"},
        {"public-key = \"", "public-key = \"~", "curve/public-key is not a key"},
        {"metadata\n", "metadata\n    node = \"S1a\"\n", "metadata/node given twice"},
        {"controller = \"", "controller = ", "expected = \"VALUE\""},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        test_write_file (path, good);
        edit (path, edits[i][0], edits[i][1]);
        refused (f, path, "S1a", edits[i][2]);
    }

    char *big = xcalloc (1, CURVE_FILE_MAX + 2);
    memset (big, '#', CURVE_FILE_MAX + 1);
    test_write_file (path, big);
    refused (f, path, "S1a", "larger than 4096 bytes");
    free (big);
    test_write_file (path, "");
    refused (f, path, "S1a", "no metadata/node");
    refused (f, f->dir, "S1a", "not a regular file");
    char *missing = xasprintf ("%s/missing", f->dir);
    refused (f, missing, "S1a", "No such file or directory");
    free (missing);
    free (good);
}

/*  curve_run_destroy removes the files and the directory. */
static void
test_destroy_removes (void **state)
{
    fixture_t *f = *state;
    make_run (f);
    char *path = xstrdup (curve_run_file (f->run, 0, f->err, sizeof f->err));
    curve_run_destroy (&f->run);
    assert_null (f->run);
    assert_int_equal (access (path, F_OK), -1);
    assert_int_equal (access (f->certs, F_OK), -1);
    free (path);
}

/*  Send one message from client to server's endpoint; what server got
 *  (the last frame, for its metadata), or NULL. */
static zmsg_t *
deliver (zsock_t *server, zsock_t *client, const char *endpoint)
{
    zsock_set_sndtimeo (client, 200);
    zsock_set_linger (client, 0);
    assert_int_equal (zsock_connect (client, "%s", endpoint), 0);
    zstr_send (client, "REQUEST");
    zpoller_t *poller = zpoller_new (server, NULL);
    zmsg_t *msg = zpoller_wait (poller, DELIVERY_MS) ? zmsg_recv (server) : NULL;
    zpoller_destroy (&poller);
    return msg;
}

/*  The ZAP handler admits the run's keys only, and tags each with its
 *  node's name. */
static void
test_auth (void **state)
{
    fixture_t *f = *state;
    make_run (f);
    const char *keys[NNODES];
    char controller[CURVE_KEY_LEN + 1];
    for (int i = 0; i < NNODES; i++)
        keys[i] = curve_run_public (f->run, i);
    zactor_t *auth = curve_auth_new (names, keys, NNODES, f->err, sizeof f->err);
    assert_non_null (auth);
    zsock_t *server = zsock_new (ZMQ_ROUTER);
    curve_server (server, curve_run_cert (f->run));
    int port = zsock_bind (server, "tcp://127.0.0.1:*");
    assert_true (port > 0);
    char *endpoint = xasprintf ("tcp://127.0.0.1:%d", port);
    const char *server_key = zcert_public_txt (curve_run_cert (f->run));

    zcert_t *mine = curve_load (curve_run_file (f->run, 1, f->err, sizeof f->err), "S1",
                                controller, f->err,
                                sizeof f->err);
    zsock_t *good = zsock_new (ZMQ_DEALER);
    curve_client (good, mine, controller);
    zmsg_t *msg = deliver (server, good, endpoint);
    assert_non_null (msg);
    assert_true (curve_peer_is (zmsg_last (msg), "S1"));
    assert_false (curve_peer_is (zmsg_last (msg), "S1a"));
    zmsg_destroy (&msg);

    zsock_t *plain = zsock_new (ZMQ_DEALER);
    assert_null (deliver (server, plain, endpoint));
    zcert_t *stranger_cert = zcert_new ();
    zsock_t *stranger = zsock_new (ZMQ_DEALER);
    curve_client (stranger, stranger_cert, server_key);
    assert_null (deliver (server, stranger, endpoint));

    zsock_destroy (&stranger);
    zsock_destroy (&plain);
    zsock_destroy (&good);
    zsock_destroy (&server);
    zactor_destroy (&auth);
    zcert_destroy (&stranger_cert);
    zcert_destroy (&mine);
    free (endpoint);
}

/*  Two nodes with one key, or a key that is not one, are refused. */
static void
test_auth_refusals (void **state)
{
    fixture_t *f = *state;
    make_run (f);
    const char *twice[2] = {curve_run_public (f->run, 0), curve_run_public (f->run, 0)};
    assert_null (curve_auth_new (names, twice, 2, f->err, sizeof f->err));
    assert_non_null (strstr (f->err, "S1 has the key of another node"));
    const char *bad[1] = {"short"};
    assert_null (curve_auth_new (names, bad, 1, f->err, sizeof f->err));
    assert_non_null (strstr (f->err, "the key of root is not a key"));
    assert_false (curve_key_valid ("0123456789012345678901234567890123456789\""));
    assert_false (curve_key_valid ("012345678901234567890123456789012345678\""));
    assert_true (curve_key_valid ("0123456789012345678901234567890123456789"));
}

#define WITH_DIR(test) cmocka_unit_test_setup_teardown (test, setup, teardown)

int
main (void)
{
    const struct CMUnitTest tests[] = {
        WITH_DIR (test_files_and_modes), WITH_DIR (test_existing_dir),
        WITH_DIR (test_load),            WITH_DIR (test_load_refusals),
        WITH_DIR (test_destroy_removes), WITH_DIR (test_auth),
        WITH_DIR (test_auth_refusals),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
