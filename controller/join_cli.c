/*  join_cli — `treefarm join`. See join_cli.h.
 *
 *  A run that is not there must not make the command wait: ZeroMQ's ipc
 *  connect to a socket file nobody listens on just retries, so the file
 *  is first tried with connect(2), which fails at once on a stale one;
 *  the --timeout covers whatever is left (a run too busy to answer).
 */
#include "controller/join_cli.h"

#include <czmq.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/cli.h"
#include "controller/join.h"
#include "controller/join_sock.h"
#include "overlay/load.h"
#include "overlay/util.h"

#define COMMAND "join"

/*  What the run answered. */
typedef struct {
    int code;
    char parent[256];
    char why[TF_ERRLEN];
} answer_t;

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm join OUT NODE.json [--timeout S]\n"
             "\n"
             "Offer a node to the run writing its results into OUT (started with\n"
             "--adapt and room for nodes, platform.join_slots; docs/adapt.md). NODE.json\n"
             "is one tree[] entry of a config: name, compute, link_mbps and the other\n"
             "keys of a node; \"parent\" fixes its place, else the run chooses. The\n"
             "file is checked first; then the run decides whether and where the\n"
             "node joins, and says why.\n"
             "\n"
             "options:\n"
             "  --timeout S   wait at most S seconds for the run's answer (default %g)\n"
             "  -h, --help    show this help\n"
             "\n"
             "exit status: 0 the node joins, 1 the run did not admit it, 2 refused\n"
             "(a bad NODE.json, no run taking nodes at OUT, no answer in time, or the\n"
             "run refused the node), 130 interrupted.\n",
             JOIN_ANSWER_TIMEOUT);
}

/*  NODE.json as JSON: at most JOIN_MAX_BYTES, duplicate keys refused.
 *  Returns a new reference, or NULL with a message naming path. */
static json_t *
read_node_file (const char *path, char *err, size_t errlen)
{
    FILE *file = fopen (path, "r");
    if (!file) {
        tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
        return NULL;
    }
    char *text = xmalloc (JOIN_MAX_BYTES + 1);
    size_t len = fread (text, 1, JOIN_MAX_BYTES + 1, file);
    int failed = ferror (file);
    fclose (file);
    json_t *json = NULL;
    json_error_t jerr;
    if (failed)
        tf_error (err, errlen, "%s: cannot read", path);
    else if (len > JOIN_MAX_BYTES)
        tf_error (err, errlen, "%s: more than %d bytes, the most a run reads", path,
                  JOIN_MAX_BYTES);
    else if (!(json = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr)))
        tf_error (err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    free (text);
    return json;
}

/*  The request for the node in path, checked as the run checks it; its
 *  name into name. A load trace's rows go inline, so the run, which may
 *  work elsewhere, needs no file. Returns a new string, or NULL with a
 *  message naming path. */
static char *
node_request (const char *path, char *name, size_t name_size, char *err, size_t errlen)
{
    json_t *json = read_node_file (path, err, errlen);
    if (!json)
        return NULL;
    config_node_t node;
    char *request = NULL;
    if (config_node_parse (json, path, &node, err, errlen) == 0) {
        snprintf (name, name_size, "%s", node.name);
        if (node.load)
            json_object_set_new (json, "load", load_to_json (node.load));
        char why[TF_ERRLEN];
        request = join_request_encode (json, why, sizeof why);
        if (!request)
            tf_error (err, errlen, "%s: %s", path, why);
        config_node_clear (&node);
    }
    json_decref (json);
    return request;
}

/*  The join socket of the run at out into path, checked to be listened
 *  on. Returns 0, or -1 with the message in err. */
static int
find_run (const char *out, char *path, size_t size, char *err, size_t errlen)
{
    struct stat st;
    if (stat (out, &st) != 0 || !S_ISDIR (st.st_mode))
        return tf_error (err, errlen, "%s: no run is taking nodes here (%s)", out,
                         stat (out, &st) != 0 ? strerror (errno) : "not a directory");
    if (join_sock_path (out, path, size, err, errlen) < 0)
        return -1;
    if (join_sock_listening (path))
        return 0;
    if (errno == ENOENT)
        return tf_error (err, errlen, "%s: no run is taking nodes here (no %s/%s: the "
                         "run is not running, or it does not adapt)", out, out,
                         JOIN_SOCKET_NAME);
    if (errno == EACCES)
        return tf_error (err, errlen, "%s/%s: the run there is another user's", out,
                         JOIN_SOCKET_NAME);
    if (stat (path, &st) == 0 && !S_ISSOCK (st.st_mode))
        return tf_error (err, errlen, "%s: no run is taking nodes here (%s/%s is not a "
                         "socket)", out, out, JOIN_SOCKET_NAME);
    return tf_error (err, errlen, "%s: no run is taking nodes here (%s/%s is left from "
                     "a run that ended: %s)", out, out, JOIN_SOCKET_NAME,
                     strerror (errno));
}

/*  Read the answer from the run's reply msg into *answer. */
static int
read_answer (zmsg_t *msg, answer_t *answer, char *err, size_t errlen)
{
    zframe_t *body = zmsg_first (msg);
    if (body && zframe_size (body) == 0 && zmsg_size (msg) == 2)
        body = zmsg_next (msg);
    else if (zmsg_size (msg) != 1)
        return tf_error (err, errlen, "the run answered %zu frames, not one answer",
                         zmsg_size (msg));
    return join_answer_parse ((const char *) zframe_data (body), zframe_size (body),
                              &answer->code, answer->parent, sizeof answer->parent,
                              answer->why, sizeof answer->why, err, errlen);
}

/*  Send request to the socket at path and wait up to timeout seconds for
 *  the answer. Returns 0, 1 when interrupted, or -1 with a message. */
static int
converse (const char *out, const char *path, const char *request, double timeout,
          answer_t *answer, char *err, size_t errlen)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    if (!sock)
        return tf_error (err, errlen, "cannot create a socket: %s", zmq_strerror (errno));
    zsock_set_linger (sock, 0);
    zsock_set_sndtimeo (sock, (int) (timeout * 1000 + 0.5));
    zsock_set_maxmsgsize (sock, 2 * JOIN_MAX_BYTES);
    int rc = -1;
    zpoller_t *poller = NULL;
    if (zsock_connect (sock, "ipc://%s", path) < 0) {
        tf_error (err, errlen, "cannot connect to %s: %s", path, zmq_strerror (errno));
        goto out;
    }
    if (zsock_send (sock, "ss", "", request) != 0) {
        tf_error (err, errlen, "cannot send to %s: %s", path, zmq_strerror (errno));
        goto out;
    }
    poller = zpoller_new (sock, NULL);
    void *which = zpoller_wait (poller, (int) (timeout * 1000 + 0.5));
    if (!which) {
        rc = zpoller_terminated (poller) ? 1 : -1;
        if (rc < 0)
            tf_error (err, errlen, "the run at %s did not answer within %g s", out,
                      timeout);
        goto out;
    }
    zmsg_t *msg = zmsg_recv (sock);
    rc = msg ? read_answer (msg, answer, err, errlen)
             : tf_error (err, errlen, "no answer from the run at %s", out);
    zmsg_destroy (&msg);
out:
    zpoller_destroy (&poller);
    zsock_destroy (&sock);
    return rc;
}

/*  Say what the run answered about name; return the exit code. The run's
 *  why is the sentence its log has after the name ("joins under R: bound
 *  ...", "not admitted: ..."). */
static int
print_answer (const char *name, const answer_t *answer)
{
    if (answer->code == JOIN_ADMITTED || answer->code == JOIN_NOT_ADMITTED)
        printf ("treefarm: %s %s\n", name, answer->why);
    else
        fprintf (stderr, "treefarm: %s refused: %s\n", name, answer->why);
    return answer->code;
}

int
join_main (int argc, char **argv)
{
    double timeout = JOIN_ANSWER_TIMEOUT;
    const cli_option_t options[] = {
        {"timeout", CLI_POSITIVE, &timeout, "a number of seconds > 0"},
    };
    static const char *const names[] = {"OUT", "NODE.json"};
    const char *operands[2];
    int code = cli_parse_operands (COMMAND, argc, argv, options,
                                   sizeof options / sizeof *options, usage, operands,
                                   names, 2);
    if (code >= 0)
        return code;
    if (timeout > JOIN_TIMEOUT_MAX_S)
        return cli_usage_error (COMMAND, CLI_EXIT_USAGE, "--timeout: at most %g s, got %g",
                                JOIN_TIMEOUT_MAX_S, timeout);
    char err[TF_ERRLEN], name[128], path[PATH_MAX];
    char *request = node_request (operands[1], name, sizeof name, err, sizeof err);
    if (!request || find_run (operands[0], path, sizeof path, err, sizeof err) < 0) {
        fprintf (stderr, "treefarm %s: %s\n", COMMAND, err);
        free (request);
        return CLI_EXIT_USAGE;
    }
    answer_t answer;
    int rc = converse (operands[0], path, request, timeout, &answer, err, sizeof err);
    free (request);
    if (rc == 1)
        return CLI_EXIT_INTERRUPTED;
    if (rc < 0) {
        fprintf (stderr, "treefarm %s: %s\n", COMMAND, err);
        return CLI_EXIT_USAGE;
    }
    return print_answer (name, &answer);
}
