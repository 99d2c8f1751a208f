/*  join_sock — the two ends of `treefarm join`'s conversation with a
 *  running run (docs/adapt.md, "treefarm join"), and no decision.
 *
 *  The run binds a ROUTER at ipc://OUT/.join (JOIN_SOCKET_NAME, OUT made
 *  absolute), a socket file only its owner may use. `treefarm join` (a
 *  DEALER) sends one request, [empty][JSON], the JSON being
 *  {"node": {...one tree[] entry...}} of at most JOIN_MAX_BYTES; the run
 *  answers [empty][JSON] with {"code": 0|1|2, "parent": NAME|null,
 *  "why": TEXT}. The empty delimiter is REQ's envelope, so a REQ client
 *  works too; a request without it is read all the same, and its answer
 *  carries it anyway.
 */
#ifndef TF_JOIN_SOCK_H
#define TF_JOIN_SOCK_H

#include <czmq.h>
#include <stddef.h>

#include "overlay/config.h"

/*  The answer's code (and `treefarm join`'s exit code). */
typedef enum {
    JOIN_ADMITTED = 0,       /* it joins under parent */
    JOIN_NOT_ADMITTED = 1,   /* the run's decision: it does not pay */
    JOIN_REFUSED = 2,        /* invalid, or the run cannot take it (no
                                room left, joins off) */
} join_code_t;

/*  "admitted", "not admitted", "refused"; "?" for another value. */
const char *join_code_str (int code);

/*  The socket's absolute path, OUT's real path and "/.join", into path
 *  (size bytes). Returns 0, or -1 with a message naming out_dir in err
 *  when OUT cannot be resolved or the path does not fit an AF_UNIX
 *  address (sun_path: 107 bytes and a NUL). */
int join_sock_path (const char *out_dir, char *path, size_t size, char *err,
                    size_t errlen);

/*  Whether something listens on the AF_UNIX socket at path: connect(2)
 *  succeeds. Returns 1, or 0 with errno saying why not (ENOENT: no
 *  file; ECONNREFUSED: a file left by a run that ended; ENOTSOCK or
 *  ECONNREFUSED: not a socket; EACCES: another user's). Never waits: a
 *  listener's backlog accepts at once, a dead file refuses at once. */
int join_sock_listening (const char *path);

/*  Bind the run's join socket in out_dir: a ROUTER at ipc://OUT/.join,
 *  the file created under umask 0177 and then chmod 0600, so only the
 *  run's owner can connect. Refused when a live run already listens
 *  there. Reads never block (a caller reads when it is readable); a
 *  message over twice JOIN_MAX_BYTES is dropped by ZeroMQ unread.
 *  Returns the socket, or NULL with a message in err (then joins are
 *  off for the run). */
zsock_t *join_sock_bind (const char *out_dir, char *err, size_t errlen);

/*  Close the socket, null the pointer and remove its file. Safe on NULL. */
void join_sock_close (zsock_t **sock, const char *out_dir);

/*  Receive one request: [identity][empty?][JSON]. Returns 0 with *node
 *  parsed (config_node_parse, origin "JOIN"; config_node_clear frees it)
 *  and *peer the identity to answer, or -1 with a message in err: the
 *  frames, the size, the JSON, an unknown key or the node description
 *  at fault. *peer is set whenever a request came in (answer it with the
 *  refusal), NULL when there was nothing to read. */
int join_sock_read (zsock_t *sock, zframe_t **peer, config_node_t *node, char *err,
                    size_t errlen);

/*  Answer peer (taken and destroyed, nulled): code (join_code_t), parent
 *  (a node name, or NULL) and why. Returns 0, or -1 when it could not be
 *  queued (the peer has gone: nothing is waiting for it). */
int join_sock_answer (zsock_t *sock, zframe_t **peer, int code, const char *parent,
                      const char *why);

/*  The request for node, as the run reads it: {"node": node}, at most
 *  JOIN_MAX_BYTES. Returns a new string, or NULL with a message in err
 *  when it is larger. */
char *join_request_encode (json_t *node, char *err, size_t errlen);

/*  Read an answer's JSON (len bytes at text): *code, parent (a name, ""
 *  for null; parent_size bytes) and why (why_size bytes; cut if longer).
 *  Returns 0, or -1 with a message in err when it is not an answer. */
int join_answer_parse (const char *text, size_t len, int *code, char *parent,
                       size_t parent_size, char *why, size_t why_size, char *err,
                       size_t errlen);

#endif
