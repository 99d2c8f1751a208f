/*  join_sock — the join socket's two ends. See join_sock.h.
 *
 *  Everything here is input from another process: frames, sizes and
 *  JSON are checked before use and refused with a message, never
 *  asserted on.
 */
#include "controller/join_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "controller/join.h"
#include "overlay/jsonw.h"
#include "overlay/util.h"

/*  The origin of a request's node in messages ("JOIN: node ...: ..."). */
#define JOIN_ORIGIN "JOIN"
/*  What ZeroMQ itself drops unread: a request a little over the limit is
 *  read and refused with a message; a huge one costs the run nothing. */
#define JOIN_SOCK_MAXMSG (2 * JOIN_MAX_BYTES)
/*  The longest path an AF_UNIX address holds, its NUL aside. */
#define JOIN_PATH_MAX (sizeof ((struct sockaddr_un *) 0)->sun_path - 1)

static const char *const request_keys[] = {"node", NULL};

const char *
join_code_str (int code)
{
    static const char *const names[] = {
        [JOIN_ADMITTED] = "admitted", [JOIN_NOT_ADMITTED] = "not admitted",
        [JOIN_REFUSED] = "refused",
    };
    return code >= 0 && code <= JOIN_REFUSED ? names[code] : "?";
}

int
join_sock_path (const char *out_dir, char *path, size_t size, char *err, size_t errlen)
{
    char real[PATH_MAX];
    if (!realpath (out_dir, real))
        return tf_error (err, errlen, "%s: %s", out_dir, strerror (errno));
    size_t len = strlen (real) + 1 + strlen (JOIN_SOCKET_NAME);
    if (len > JOIN_PATH_MAX)
        return tf_error (err, errlen, "%s: its join socket %s/%s would be %zu bytes long, "
                         "more than the %zu a socket's path may have",
                         out_dir, real, JOIN_SOCKET_NAME, len, (size_t) JOIN_PATH_MAX);
    if (len >= size)
        return tf_error (err, errlen, "%s: path too long", out_dir);
    snprintf (path, size, "%s/%s", real, JOIN_SOCKET_NAME);
    return 0;
}

int
join_sock_listening (const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen (path) > JOIN_PATH_MAX) {
        errno = ENAMETOOLONG;
        return 0;
    }
    memcpy (addr.sun_path, path, strlen (path));
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    /*  Non-blocking: a listener whose backlog is full says EAGAIN, which
     *  is still a listener. */
    int rc = connect (fd, (struct sockaddr *) &addr, sizeof addr);
    int saved = errno;
    close (fd);
    errno = saved;
    return rc == 0 || saved == EAGAIN || saved == EINPROGRESS;
}

/*  Bind sock at path, the file 0600 from its creation on: umask 0177
 *  while ZeroMQ binds (libzmq binds in the calling thread), then chmod,
 *  in case the file system ignores the umask. */
static int
bind_private (zsock_t *sock, const char *path, char *err, size_t errlen)
{
    mode_t old = umask (0177);
    int rc = zsock_bind (sock, "ipc://%s", path);
    int saved = errno;
    umask (old);
    if (rc < 0)
        return tf_error (err, errlen, "cannot bind %s: %s", path, zmq_strerror (saved));
    if (chmod (path, 0600) != 0) {
        saved = errno;
        zsock_unbind (sock, "ipc://%s", path);
        unlink (path);
        return tf_error (err, errlen, "cannot make %s private: %s", path,
                         strerror (saved));
    }
    return 0;
}

zsock_t *
join_sock_bind (const char *out_dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (join_sock_path (out_dir, path, sizeof path, err, errlen) < 0)
        return NULL;
    /*  libzmq removes whatever file is at the path before it binds: a
     *  live run's socket would be taken from under it. */
    if (join_sock_listening (path)) {
        tf_error (err, errlen, "%s: another run is taking nodes here", path);
        return NULL;
    }
    zsock_t *sock = zsock_new (ZMQ_ROUTER);
    if (!sock) {
        tf_error (err, errlen, "cannot create the join socket: %s", zmq_strerror (errno));
        return NULL;
    }
    zsock_set_linger (sock, 0);
    zsock_set_rcvtimeo (sock, 0);
    zsock_set_sndtimeo (sock, 0);
    zsock_set_maxmsgsize (sock, JOIN_SOCK_MAXMSG);
    if (bind_private (sock, path, err, errlen) < 0)
        zsock_destroy (&sock);
    return sock;
}

void
join_sock_close (zsock_t **sock, const char *out_dir)
{
    if (!sock || !*sock)
        return;
    zsock_destroy (sock);
    char path[PATH_MAX], err[TF_ERRLEN];
    if (out_dir && join_sock_path (out_dir, path, sizeof path, err, sizeof err) == 0)
        unlink (path);
}

/*  The request's JSON frame from msg (the identity popped): [json] or
 *  [empty][json]. Returns it (msg's, borrowed), or NULL with a message. */
static zframe_t *
request_frame (zmsg_t *msg, char *err, size_t errlen)
{
    zframe_t *first = zmsg_first (msg);
    if (zmsg_size (msg) == 2 && zframe_size (first) == 0)
        return zmsg_next (msg);
    if (zmsg_size (msg) == 1)
        return first;
    tf_error (err, errlen, "%s: expected one JSON frame (after an empty one), got %zu "
              "frames", JOIN_ORIGIN, zmsg_size (msg));
    return NULL;
}

/*  Parse a request's bytes: {"node": {...}} into *node. */
static int
parse_request (const char *data, size_t len, config_node_t *node, char *err,
               size_t errlen)
{
    if (len > JOIN_MAX_BYTES)
        return tf_error (err, errlen, "%s: the request is %zu bytes, more than %d",
                         JOIN_ORIGIN, len, JOIN_MAX_BYTES);
    json_error_t jerr;
    json_t *json = json_loadb (data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json)
        return tf_error (err, errlen, "%s:%d:%d: %s", JOIN_ORIGIN, jerr.line, jerr.column,
                         jerr.text);
    jsonw_doc_t doc = {.style = JSONW_CONFIG, .origin = JOIN_ORIGIN, .err = err,
                       .errlen = errlen};
    jsonw_t w;
    jsonw_init (&w, &doc, json);
    int rc = -1;
    if (!json_is_object (json))
        jsonw_fail (&doc, NULL, "expected an object, got %s", jsonw_type_name (&doc, json));
    else if (jsonw_check_keys (&w, request_keys) == 0) {
        json_t *desc = jsonw_lookup (&w, "node", 1, &rc);
        if (desc)
            rc = config_node_parse (desc, JOIN_ORIGIN, node, err, errlen);
    }
    json_decref (json);
    return rc;
}

int
join_sock_read (zsock_t *sock, zframe_t **peer, config_node_t *node, char *err,
                size_t errlen)
{
    *peer = NULL;
    memset (node, 0, sizeof *node);
    zmsg_t *msg = zmsg_recv (sock);
    if (!msg)
        return tf_error (err, errlen, "%s: nothing to read: %s", JOIN_ORIGIN,
                         zmq_strerror (errno));
    *peer = zmsg_pop (msg);
    int rc = -1;
    zframe_t *body = *peer ? request_frame (msg, err, errlen) : NULL;
    if (!*peer)
        tf_error (err, errlen, "%s: a message without an identity", JOIN_ORIGIN);
    else if (body)
        rc = parse_request ((const char *) zframe_data (body), zframe_size (body), node,
                            err, errlen);
    zmsg_destroy (&msg);
    return rc;
}

int
join_sock_answer (zsock_t *sock, zframe_t **peer, int code, const char *parent,
                  const char *why)
{
    if (!peer || !*peer)
        return -1;
    json_t *json = json_pack ("{s:i, s:o, s:s}", "code", code, "parent",
                              parent ? json_string (parent) : json_null (), "why",
                              why ? why : "");
    char *text = json ? json_dumps (json, JSON_COMPACT) : NULL;
    json_decref (json);
    zmsg_t *msg = zmsg_new ();
    zmsg_append (msg, peer);     /* takes *peer, nulls it */
    zmsg_addmem (msg, NULL, 0);
    /*  json_pack fails only on text that is not UTF-8. */
    if (!text)
        text = xasprintf ("{\"code\": %d, \"parent\": null, \"why\": \"(not UTF-8)\"}",
                          code);
    zmsg_addstr (msg, text);
    free (text);
    int rc = zmsg_send (&msg, sock);
    zmsg_destroy (&msg);
    return rc < 0 ? -1 : 0;
}

char *
join_request_encode (json_t *node, char *err, size_t errlen)
{
    json_t *json = json_pack ("{s:O}", "node", node);
    char *text = json ? json_dumps (json, JSON_COMPACT) : NULL;
    json_decref (json);
    if (!text) {
        tf_error (err, errlen, "the node cannot be written as JSON");
        return NULL;
    }
    if (strlen (text) > JOIN_MAX_BYTES) {
        tf_error (err, errlen, "the request is %zu bytes, more than the %d a run reads",
                  strlen (text), JOIN_MAX_BYTES);
        free (text);
        return NULL;
    }
    return text;
}

/*  Copy a JSON string (or "" for null) into buf; -1 if of another type. */
static int
copy_string (const json_t *value, char *buf, size_t size)
{
    if (!json_is_string (value) && !json_is_null (value))
        return -1;
    snprintf (buf, size, "%s", json_is_string (value) ? json_string_value (value) : "");
    return 0;
}

int
join_answer_parse (const char *text, size_t len, int *code, char *parent,
                   size_t parent_size, char *why, size_t why_size, char *err,
                   size_t errlen)
{
    if (len > JOIN_MAX_BYTES)
        return tf_error (err, errlen, "the answer is %zu bytes, more than %d", len,
                         JOIN_MAX_BYTES);
    json_error_t jerr;
    json_t *json = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *c = json_object_get (json, "code");
    int rc = -1;
    if (!json)
        tf_error (err, errlen, "the answer is not JSON: %d:%d: %s", jerr.line, jerr.column,
                  jerr.text);
    else if (!json_is_object (json) || json_object_size (json) != 3 || !json_is_integer (c)
             || json_integer_value (c) < JOIN_ADMITTED
             || json_integer_value (c) > JOIN_REFUSED
             || copy_string (json_object_get (json, "parent"), parent, parent_size) < 0
             || !json_is_string (json_object_get (json, "why")))
        tf_error (err, errlen, "the answer is not {\"code\": 0|1|2, \"parent\": NAME|null, "
                  "\"why\": TEXT}");
    else {
        *code = (int) json_integer_value (c);
        snprintf (why, why_size, "%s", json_string_value (json_object_get (json, "why")));
        rc = 0;
    }
    json_decref (json);
    return rc;
}
