/*  hostile — a peer that breaks the protocol on purpose, for
 *  tests/it_hostile.sh and tests/it_curve.sh. Four modes:
 *
 *    hostile router ENDPOINT CHILD
 *        Connect to a node's children ROUTER twice, once as a stranger
 *        and once under the identity CHILD of a real child, and send from
 *        each: CHUNK claims of INT64_MAX bytes and of lying sizes, a
 *        truncated header, a header without its body, garbage, a wrong
 *        protocol version, REQUEST and DONE out of range, and last a frame
 *        larger than the socket's ZMQ_MAXMSGSIZE. Exit 0 once sent.
 *
 *    hostile flood ENDPOINT COUNT
 *        Connect to a node's children ROUTER as "hostile-flood" and send
 *        COUNT (at most HOSTILE_MAX_FLOOD) garbage messages as fast as it
 *        can: each must be counted, but the node's log must not grow with
 *        them (overlay/ratelog.h). Exit 0 once sent.
 *
 *    hostile parent NODE_BIN CONFIG NAME
 *        Play the controller and the parent of one node NAME of CONFIG:
 *        start `NODE_BIN --name NAME`, hand it CONFIG, START it with
 *        ourselves as its parent, then send it hostile CHUNKs (INT64_MAX
 *        bytes, lying totals, counts, lengths and units) and broken
 *        frames, then one true task, which it must compute and report,
 *        then a frame over its ZMQ_MAXMSGSIZE (libzmq drops our link).
 *        STOP it and answer its REPORT with BYE; print the REPORT's
 *        "malformed" and exit 0 if it exited 0, 1 otherwise (e.g. it
 *        aborted).
 *
 *    hostile curve ENDPOINT SERVER_KEY NAME
 *        Knock on a CURVE server of a run (a node's children ROUTER or
 *        the controller's, whose public key is SERVER_KEY) three ways: as
 *        "hostile-plain" without CURVE, as "hostile-curve" with CURVE and
 *        a key of its own, and under the identity NAME of a node of the
 *        run with a key of its own; each sends HELLO, REQUEST, DONE, STATS,
 *        FAIL and garbage. None may be delivered: libzmq refuses the
 *        handshake. Exit 0 once sent.
 */
#include <czmq.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "overlay/config.h"
#include "overlay/curve.h"
#include "overlay/proto.h"
#include "overlay/util.h"

#define HOSTILE_WAIT_MS 10000    /* longest wait for one expected message */
#define HOSTILE_SETTLE_MS 200    /* let a connection's handshake finish */
#define HOSTILE_MAX_FLOOD 1000000 /* messages one flood may send */
#define HOSTILE_KNOCK_MS 1000    /* a refused CURVE client retries its
                                    handshake every 100 ms: ten tries */


static zmsg_t *
chunk (uint64_t task, double units, uint64_t bytes, uint32_t index, uint32_t count,
       size_t len)
{
    char body[200];
    snprintf (body, sizeof body, "{\"task\":%llu,\"units\":%.17g,\"bytes\":%llu,"
              "\"index\":%u,\"count\":%u}", (unsigned long long) task, units,
              (unsigned long long) bytes, index, count);
    byte *payload = xcalloc (len + 1, 1);
    zmsg_t *msg = proto_raw (PROTO_VERSION, PROTO_CHUNK, body, payload, len);
    free (payload);
    return msg;
}

/*  Send msg, through a ROUTER to peer when peer is not NULL. */
static void
send_to (zsock_t *sock, const char *peer, zmsg_t *msg)
{
    if (peer)
        zmsg_pushstr (msg, peer);
    if (zmsg_send (&msg, sock) < 0)
        zmsg_destroy (&msg);
}

/*  The attacks both modes share: broken frames, a wrong version, an
 *  unknown command, garbage. Returns how many were sent. */
static int
send_broken (zsock_t *sock, const char *peer)
{
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, "\x01", 1);                            /* truncated header */
    send_to (sock, peer, msg);
    send_to (sock, peer, proto_raw (PROTO_VERSION, PROTO_REQUEST, NULL, NULL, 0));
    send_to (sock, peer, proto_raw (PROTO_VERSION, PROTO_CHUNK, "{\"task\":1}", NULL, 0));
    msg = zmsg_new ();
    zmsg_addmem (msg, "\xde\xad\xbe\xef garbage \x00\xff", 15);   /* garbage */
    zmsg_addmem (msg, "\x7f{{{", 4);
    send_to (sock, peer, msg);
    send_to (sock, peer, proto_raw (PROTO_VERSION + 1, PROTO_REQUEST, "{\"n\":1}", NULL, 0));
    send_to (sock, peer, proto_raw (PROTO_VERSION, 250, "{}", NULL, 0));
    return 6;
}

/*  A frame over max_frame bytes, the receiver's ZMQ_MAXMSGSIZE: libzmq
 *  drops the connection before the node sees the message, so it is not
 *  counted, and does not reconnect it (a protocol error). */
static void
send_oversized (zsock_t *sock, const char *peer, size_t max_frame)
{
    zclock_sleep (HOSTILE_SETTLE_MS);
    byte *big = xcalloc (max_frame + 1, 1);
    send_to (sock, peer, proto_raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":1}", big,
                              max_frame + 1));
    free (big);
}

/*  --- router mode -------------------------------------------------------- */

static int
attack_router (const char *endpoint, const char *identity)
{
    zsock_t *d = zsock_new (ZMQ_DEALER);
    zsock_set_identity (d, identity);
    zsock_set_linger (d, 1000);
    if (zsock_connect (d, "%s", endpoint) < 0) {
        fprintf (stderr, "hostile: cannot connect to %s\n", endpoint);
        zsock_destroy (&d);
        return -1;
    }
    zclock_sleep (HOSTILE_SETTLE_MS);
    send_to (d, NULL, chunk (1, 3, (uint64_t) INT64_MAX - 7, 0, 2, 16));
    send_to (d, NULL, chunk (1, 3, 1000, 0, 1, 10));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":4294967295}", NULL, 0));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_DONE,
                           "{\"done\":[[9223372036854775807,4294967295]]}", NULL, 0));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_ACK, "{\"task\":5,\"index\":7}", NULL, 0));
    send_broken (d, NULL);
    send_oversized (d, NULL, PROTO_MAX_FRAME_CHILDREN);
    zclock_sleep (HOSTILE_SETTLE_MS);
    zsock_destroy (&d);
    printf ("hostile: sent 11 messages to %s as \"%s\"\n", endpoint, identity);
    return 0;
}

/*  count garbage messages as "hostile-flood". */
static int
flood_router (const char *endpoint, long count)
{
    zsock_t *d = zsock_new (ZMQ_DEALER);
    zsock_set_identity (d, "hostile-flood");
    zsock_set_linger (d, 5000);
    zsock_set_sndhwm (d, 0);   /* queue them all; the node reads at its pace */
    if (zsock_connect (d, "%s", endpoint) < 0) {
        fprintf (stderr, "hostile: cannot connect to %s\n", endpoint);
        zsock_destroy (&d);
        return -1;
    }
    zclock_sleep (HOSTILE_SETTLE_MS);
    for (long i = 0; i < count; i++) {
        zmsg_t *msg = zmsg_new ();
        zmsg_addmem (msg, "\xde\xad", 2);   /* a header of no version */
        send_to (d, NULL, msg);
    }
    zclock_sleep (HOSTILE_SETTLE_MS);
    zsock_destroy (&d);
    printf ("hostile: flooded %s with %ld messages\n", endpoint, count);
    return 0;
}

/*  --- curve mode --------------------------------------------------------- */

/*  Connect to endpoint as identity (with cert and server_key: a CURVE
 *  client) and send what a node says; a FAIL that got through would end
 *  the run. */
static int
knock (const char *endpoint, const char *identity, zcert_t *cert, const char *server_key)
{
    zsock_t *d = zsock_new (ZMQ_DEALER);
    zsock_set_identity (d, identity);
    zsock_set_linger (d, 0);
    zsock_set_sndtimeo (d, HOSTILE_SETTLE_MS);
    if (cert)
        curve_client (d, cert, server_key);
    if (zsock_connect (d, "%s", endpoint) < 0) {
        fprintf (stderr, "hostile: cannot connect to %s\n", endpoint);
        zsock_destroy (&d);
        return -1;
    }
    char hello[128];
    snprintf (hello, sizeof hello, "{\"name\":\"%s\",\"pid\":1,\"version\":%d}", identity,
              PROTO_VERSION);
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_HELLO, hello, NULL, 0));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":1}", NULL, 0));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_DONE, "{\"done\":[[0,0]]}", NULL,
                                 0));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_STATS, "{\"stats\":{}}", NULL, 0));
    send_to (d, NULL, proto_raw (PROTO_VERSION, PROTO_FAIL,
                                 "{\"error\":\"hostile: this FAIL must never arrive\"}",
                                 NULL, 0));
    send_broken (d, NULL);
    zclock_sleep (HOSTILE_KNOCK_MS);   /* handshakes tried, and refused */
    zsock_destroy (&d);
    return 0;
}

static int
probe_curve (const char *endpoint, const char *server_key, const char *name)
{
    if (!curve_key_valid (server_key)) {
        fprintf (stderr, "hostile: %s is not a key\n", server_key);
        return -1;
    }
    zcert_t *own = zcert_new ();
    int rc = knock (endpoint, "hostile-plain", NULL, NULL);
    if (rc == 0)
        rc = knock (endpoint, "hostile-curve", own, server_key);
    if (rc == 0)
        rc = knock (endpoint, name, own, server_key);
    zcert_destroy (&own);
    if (rc == 0)
        printf ("hostile: knocked on %s three ways (plain, unknown key, as %s)\n",
                endpoint, name);
    return rc;
}

/*  --- parent mode -------------------------------------------------------- */

typedef struct {
    zsock_t *ctl, *par;      /* we are the controller and the parent */
    char *par_endpoint;
    config_t *cfg;
    const char *name;
    pid_t pid;
} fake_t;

/*  Decode msg (taken) into out if it is, or its BATCH holds, a message
 *  of command want (the first such part). Returns 0, or -1 (out clear). */
static int
take_wanted (zmsg_t **msg_p, proto_command_t want, proto_msg_t *out)
{
    zmsg_t *parts[PROTO_MAX_BATCH];
    char err[TF_ERRLEN];
    int n = proto_unbatch (msg_p, parts, err, sizeof err), rc = -1;
    if (n == 0) {
        parts[0] = *msg_p;
        *msg_p = NULL;
        n = 1;
    }
    for (int i = 0; i < n; i++) {
        if (rc < 0 && proto_decode (&parts[i], out, err, sizeof err) == 0) {
            if (out->command == want)
                rc = 0;
            else
                proto_msg_clear (out);
        }
        zmsg_destroy (&parts[i]);
    }
    return rc;
}

/*  Wait for a message of command want on sock (a ROUTER), decoded into
 *  out (a child's BATCH is split); others are dropped. Returns 0, or -1
 *  on timeout. */
static int
expect_msg (zsock_t *sock, proto_command_t want, proto_msg_t *out)
{
    int64_t deadline = zclock_mono () + HOSTILE_WAIT_MS;
    zpoller_t *poller = zpoller_new (sock, NULL);
    int rc = -1;
    while (rc < 0 && zclock_mono () < deadline) {
        if (!zpoller_wait (poller, (int) (deadline - zclock_mono ())))
            continue;
        zmsg_t *msg = zmsg_recv (sock);
        if (!msg)
            break;
        free (zmsg_popstr (msg));
        rc = take_wanted (&msg, want, out);
    }
    zpoller_destroy (&poller);
    if (rc < 0)
        fprintf (stderr, "hostile: no %s within %d ms\n", proto_command_str (want),
                 HOSTILE_WAIT_MS);
    return rc;
}

static int
spawn_node (fake_t *f, const char *node_bin, const char *ctl_endpoint)
{
    f->pid = fork ();
    if (f->pid < 0)
        return -1;
    if (f->pid == 0) {
        execl (node_bin, node_bin, "--name", f->name, "--controller", ctl_endpoint,
               (char *) NULL);
        _exit (127);
    }
    return 0;
}

/*  HELLO, CONFIG, BOUND, START with ourselves as the parent. */
static int
handshake (fake_t *f, const char *node_bin, const char *config_path)
{
    char err[TF_ERRLEN];
    proto_msg_t m;
    f->cfg = config_load_file (config_path, err, sizeof err);
    if (!f->cfg || config_find_node (f->cfg, f->name) < 0) {
        fprintf (stderr, "hostile: %s\n", f->cfg ? "no such node" : err);
        return -1;
    }
    f->ctl = zsock_new (ZMQ_ROUTER);
    f->par = zsock_new (ZMQ_ROUTER);
    int cport = zsock_bind (f->ctl, "tcp://127.0.0.1:*");
    int pport = zsock_bind (f->par, "tcp://127.0.0.1:*");
    char ctl_endpoint[64];
    snprintf (ctl_endpoint, sizeof ctl_endpoint, "tcp://127.0.0.1:%d", cport);
    f->par_endpoint = xasprintf ("tcp://127.0.0.1:%d", pport);
    if (cport < 0 || pport < 0 || spawn_node (f, node_bin, ctl_endpoint) < 0
        || expect_msg (f->ctl, PROTO_HELLO, &m) < 0)
        return -1;
    proto_msg_clear (&m);
    char *text = config_to_json (f->cfg);
    json_t *config = json_loads (text, 0, NULL);
    free (text);
    send_to (f->ctl, f->name, proto_config (config, NULL, NULL));
    json_decref (config);
    if (expect_msg (f->ctl, PROTO_BOUND, &m) < 0)
        return -1;
    proto_msg_clear (&m);
    send_to (f->ctl, f->name, proto_start (f->par_endpoint, 0));
    if (expect_msg (f->par, PROTO_REQUEST, &m) < 0)
        return -1;
    proto_msg_clear (&m);
    return 0;
}

/*  A true task's payload bytes, chunk size and chunk count. */
static void
task_shape (const fake_t *f, uint64_t *bytes, uint32_t *cb, uint32_t *count)
{
    *bytes = config_task_bytes (f->cfg);
    *cb = config_chunk_bytes (f->cfg);
    *count = *bytes == 0 ? 1 : (uint32_t) ((*bytes + *cb - 1) / *cb);
}

/*  CHUNKs whose sizes lie, each one refused by a correct node. Returns how
 *  many were sent. */
static int
send_lying_chunks (fake_t *f)
{
    uint64_t bytes;
    uint32_t cb, count;
    task_shape (f, &bytes, &cb, &count);
    double units = f->cfg->tasks.units;
    size_t len0 = bytes < cb ? bytes : cb;
    send_to (f->par, f->name, chunk (0, units, (uint64_t) INT64_MAX - 7, 0, 2, len0));
    send_to (f->par, f->name, chunk (0, units, (uint64_t) 1 << 39, 0, 1u << 20, len0));
    send_to (f->par, f->name, chunk (0, units, bytes + cb, 0, count + 1, len0));
    send_to (f->par, f->name, chunk (0, units, bytes, 0, count + 5, len0));
    send_to (f->par, f->name, chunk (0, units, bytes, 0, count, len0 > 0 ? len0 - 1 : 1));
    send_to (f->par, f->name, chunk (0, 1e300, bytes, 0, count, len0));
    send_to (f->par, f->name, chunk (0, units * 2, bytes, 0, count, len0));
    send_to (f->par, f->name, chunk (0, units, bytes, count, count, len0));
    return 8;
}

/*  One true task 0, chunk by chunk, each acknowledged; then its DONE. */
static int
send_true_task (fake_t *f)
{
    uint64_t bytes;
    uint32_t cb, count;
    task_shape (f, &bytes, &cb, &count);
    proto_msg_t m;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t off = (uint64_t) i * cb, len = bytes - off < cb ? bytes - off : cb;
        send_to (f->par, f->name, chunk (0, f->cfg->tasks.units, bytes, i, count, len));
        if (expect_msg (f->par, PROTO_ACK, &m) < 0)
            return -1;
        int ok = m.task == 0 && m.index == i;
        proto_msg_clear (&m);
        if (!ok)
            return -1;
    }
    if (expect_msg (f->par, PROTO_DONE, &m) < 0)
        return -1;
    int ok = m.ndone == 1 && m.done[0].task == 0;
    proto_msg_clear (&m);
    return ok ? 0 : -1;
}

/*  STOP, its REPORT's malformed counter, the node's exit status. */
static int
stop_node (fake_t *f, long long *malformed)
{
    proto_msg_t m;
    send_to (f->ctl, f->name, proto_empty (PROTO_STOP));
    int rc = expect_msg (f->ctl, PROTO_REPORT, &m);
    if (rc == 0) {
        *malformed = json_integer_value (json_object_get (m.object, "malformed"));
        proto_msg_clear (&m);
        send_to (f->ctl, f->name, proto_empty (PROTO_BYE));   /* REPORT filed */
    }
    int status = 0;
    if (waitpid (f->pid, &status, 0) != f->pid)
        return -1;
    f->pid = 0;
    if (WIFSIGNALED (status))
        fprintf (stderr, "hostile: node %s died of signal %d\n", f->name,
                 WTERMSIG (status));
    return rc == 0 && WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : -1;
}

static int
play_parent (const char *node_bin, const char *config_path, const char *name)
{
    fake_t f = {.name = name};
    long long malformed = -1;
    int rc = -1, sent = 0;
    if (handshake (&f, node_bin, config_path) == 0) {
        sent = send_lying_chunks (&f);
        sent += send_broken (f.par, f.name);
        if (send_true_task (&f) < 0)
            fprintf (stderr, "hostile: the node did not take a true task after\n");
        else {
            /*  Last: it costs the node its link to us for good. */
            send_oversized (f.par, f.name,
                            PROTO_MAX_FRAME_PARENT (config_chunk_bytes (f.cfg)));
            zclock_sleep (HOSTILE_SETTLE_MS);
            rc = stop_node (&f, &malformed);
        }
    }
    if (f.pid > 0) {
        kill (f.pid, SIGKILL);
        int status;
        waitpid (f.pid, &status, 0);
        if (WIFSIGNALED (status) && WTERMSIG (status) != SIGKILL)
            fprintf (stderr, "hostile: node %s died of signal %d\n", name,
                     WTERMSIG (status));
    }
    printf ("hostile: sent %d hostile messages as %s's parent; node %s, "
            "malformed %lld\n", sent, name, rc == 0 ? "survived" : "FAILED", malformed);
    zsock_destroy (&f.ctl);
    zsock_destroy (&f.par);
    free (f.par_endpoint);
    config_destroy (&f.cfg);
    return rc;
}

int
main (int argc, char **argv)
{
    zsys_init ();
    zsys_set_linger (1000);
    if (argc == 4 && strcmp (argv[1], "router") == 0) {
        if (attack_router (argv[2], "hostile-stranger") < 0
            || attack_router (argv[2], argv[3]) < 0)
            return 1;
        return 0;
    }
    if (argc == 4 && strcmp (argv[1], "flood") == 0) {
        long count = strtol (argv[3], NULL, 10);
        if (count < 1 || count > HOSTILE_MAX_FLOOD)
            return 2;
        return flood_router (argv[2], count) == 0 ? 0 : 1;
    }
    if (argc == 5 && strcmp (argv[1], "parent") == 0)
        return play_parent (argv[2], argv[3], argv[4]) == 0 ? 0 : 1;
    if (argc == 5 && strcmp (argv[1], "curve") == 0)
        return probe_curve (argv[2], argv[3], argv[4]) == 0 ? 0 : 1;
    fprintf (stderr, "usage: hostile router ENDPOINT CHILD\n"
                     "       hostile flood ENDPOINT COUNT\n"
                     "       hostile parent NODE_BIN CONFIG NAME\n"
                     "       hostile curve ENDPOINT SERVER_KEY NAME\n");
    return 2;
}
