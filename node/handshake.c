/*  handshake — a node joins its run: HELLO to the controller, CONFIG (the
 *  experiment, the run, the CURVE keys), bind the children's endpoint,
 *  BOUND, START (connect to the parent). It owns the connections it
 *  opens (node_link_t), until handshake_close. See node/runtime.h and
 *  docs/protocol.md.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/runtime.h"
#include "node/waitset.h"
#include "overlay/host.h"
#include "overlay/util.h"
#include "policies/policy.h"

#define NODE_HANDSHAKE_MS 30000   /* wait for CONFIG, then START */
#define NODE_LINGER_MS 2000       /* let a FAIL leave */

int
handshake_wait_control (node_t *self, proto_command_t want, int timeout_ms,
                        proto_msg_t *out, char *err, size_t errlen)
{
    double deadline = tf_now () + timeout_ms / 1000.0;
    waitset_t *ws = waitset_new (err, errlen);
    if (!ws)
        return -1;
    waitset_add (ws, self->link.ctl);
    int rc = -1;
    while (!zsys_interrupted) {
        if (tf_now () >= deadline) {
            tf_error (err, errlen, "no %s from the controller within %d s",
                      proto_command_str (want), timeout_ms / 1000);
            break;
        }
        zsock_t *ready;
        if (waitset_wait (ws, deadline, &ready, 1) <= 0)
            continue;
        zmsg_t *msg = zmsg_recv (self->link.ctl);
        char why[TF_ERRLEN];
        if (!msg || proto_decode (&msg, out, why, sizeof why) < 0) {
            receive_log_refusal (self, "refused a message from the controller: %s", why);
            continue;
        }
        if (out->command == want) {
            rc = 0;
            break;
        }
        if (out->command == PROTO_STOP) {
            proto_msg_clear (out);
            tf_error (err, errlen, "stopped by the controller before the run");
            break;
        }
        if (out->command == PROTO_PING) {
            proto_msg_clear (out);
            continue;
        }
        node_log (self, "ignored %s while waiting for %s",
                proto_command_str (out->command), proto_command_str (want));
        proto_msg_clear (out);
    }
    if (rc < 0 && zsys_interrupted)
        tf_error (err, errlen, "interrupted");
    waitset_destroy (&ws);
    return rc;
}

/*  CONFIG's run object, decoded and checked by the wire (overlay/
 *  proto_run.h): how many of the bag's tasks are commands, how often a
 *  failing one is tried, the root's paths. Takes run's strings (run is
 *  left clear); NULL: no run object, nothing to take. */
static void
take_run (node_t *self, proto_run_t *run)
{
    if (!run)
        return;
    self->link.run = *run;
    memset (run, 0, sizeof *run);
    self->cfg->commands.count = self->link.run.commands;
    self->cfg->commands.attempts = self->link.run.attempts;
    self->cfg->commands.input_mb = self->link.run.input_mb;
}

/*  Load the shipped experiment and find ourselves in it. */
static int
take_config (node_t *self, json_t *object, proto_run_t *run, char *err, size_t errlen)
{
    self->cfg = config_load_json (object, "<controller>", err, errlen);
    if (!self->cfg)
        return -1;
    take_run (self, run);
    int me = config_find_node (self->cfg, self->opts->name);
    if (me < 0)
        return tf_error (err, errlen, "the experiment has no node named \"%s\"",
                         self->opts->name);
    /*  Slots kept for nodes that may join (docs/adapt.md, "Grow"): they
     *  grow the nodes array, so before any pointer into it is taken. */
    if (self->cfg->platform.adapt && run)   /* a run: room for a lost child's children */
        self->link.run.vacant += (uint32_t) config_reparent_slots (self->cfg, me);
    config_add_vacant (self->cfg, me, (int) self->link.run.vacant);
    self->me = &self->cfg->nodes[me];
    if (!policy_find (self->cfg->policy))
        return tf_error (err, errlen, "unknown policy \"%s\"", self->cfg->policy);
    return 0;
}

/*  ZeroMQ binds numeric addresses only, IPv6 ones in brackets: turn host
 *  (an address or a name such as "localhost") into "1.2.3.4" or "[::1]". */
static int
numeric_host (const char *host, char *buf, size_t len, int *ipv6, char *err,
              size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char addr[NI_MAXHOST];
    int rc = getaddrinfo (host, NULL, &hints, &res);
    if (rc == 0)
        rc = getnameinfo (res->ai_addr, res->ai_addrlen, addr, sizeof addr, NULL, 0,
                          NI_NUMERICHOST);
    if (rc != 0) {
        if (res)
            freeaddrinfo (res);
        return tf_error (err, errlen, "cannot resolve host %s: %s", host,
                         gai_strerror (rc));
    }
    *ipv6 = res->ai_family == AF_INET6;
    snprintf (buf, len, *ipv6 ? "[%s]" : "%s", addr);
    freeaddrinfo (res);
    return 0;
}

/*  What to bind for the children: --bind, else what the config's host
 *  says (a local address, an ssh host's name resolved here), borrowed
 *  from *spec. */
static const char *
bind_name (node_t *self, host_t *spec, char *err, size_t errlen)
{
    if (self->opts->bind)
        return self->opts->bind;
    const char *name = host_parse (self->me->host, spec, err, errlen) == 0
                     ? host_bind_name (spec) : NULL;
    if (!name && !*err)
        tf_error (err, errlen, "host %s: the controller must say what to bind (--bind)",
                  self->me->host);
    return name;
}

/*  With vacant slots, the keys of the nodes offered to the run (in keys,
 *  not in the tree): any of them may join as our child. Which name may
 *  speak for which slot is the slots table's (ATTACH), not the key's. */
static int
admit_offered (node_t *self, json_t *keys, const char **names, const char **out)
{
    if (self->link.run.vacant == 0)
        return 0;
    int n = 0;
    const char *name;
    json_t *value;
    json_object_foreach (keys, name, value)
        if (config_find_node (self->cfg, name) < 0 && json_is_string (value)) {
            names[n] = name;
            out[n++] = json_string_value (value);
        }
    return n;
}

/*  CONFIG's keys, which come exactly when we have a certificate: note
 *  our parent's, and start the ZAP handler that admits exactly our
 *  children's keys to the ROUTER we are about to bind. */
/*  With vacant slots the children's ZAP handler must admit a node that
 *  joins with keys made for it then (ATTACH carries its public key): a
 *  store in a private directory of its own, which the handler rereads. */
static int
start_growing_auth (node_t *self, const char **names, const char **keys, int n,
                    char *err, size_t errlen)
{
    const char *tmp = getenv ("TMPDIR");
    char *dir = xasprintf ("%s/treefarm-zap.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (dir)) {
        tf_error (err, errlen, "cannot make a directory for the children's keys in %s: %s",
                  tmp && *tmp ? tmp : "/tmp", strerror (errno));
        free (dir);
        return -1;
    }
    self->link.zap_dir = dir;
    self->link.auth = curve_auth_dir_new (dir, names, keys, n, err, errlen);
    return self->link.auth ? 0 : -1;
}

static int
take_keys (node_t *self, json_t *keys, char *err, size_t errlen)
{
    if (!keys != !self->link.cert)
        return tf_error (err, errlen, "CONFIG %s CURVE keys, but this node was %s",
                         keys ? "carries" : "carries no",
                         keys ? "given no certificate (--cert)" : "given one");
    if (!keys)
        return 0;
    int parent = self->me->parent, n = 0;
    const char *key = parent >= 0 ? json_string_value (json_object_get (
                          keys, self->cfg->nodes[parent].name)) : "";
    size_t most = (size_t) self->me->nchildren + json_object_size (keys) + 1;
    const char **names = xcalloc (most, sizeof *names);
    const char **children = xcalloc (most, sizeof *children);
    for (int i = 0; i < self->me->nchildren && key; i++) {
        const config_node_t *c = &self->cfg->nodes[self->me->children[i]];
        if (c->vacant)
            continue;
        names[n] = c->name;
        children[n] = json_string_value (json_object_get (keys, names[n]));
        if (!children[n++])
            key = NULL;
    }
    n += admit_offered (self, keys, names + n, children + n);
    int rc = key ? 0 : tf_error (err, errlen, "CONFIG: no CURVE key for our parent or "
                                 "one of our children");
    if (rc == 0 && self->link.run.vacant > 0)
        rc = start_growing_auth (self, names, children, n, err, errlen);
    else if (rc == 0 && n > 0) {
        self->link.auth = curve_auth_new (names, children, n, err, errlen);
        rc = self->link.auth ? 0 : -1;
    }
    if (rc == 0)
        snprintf (self->link.parent_key, sizeof self->link.parent_key, "%s", key);
    free (children);
    free (names);
    return rc;
}

static int
bind_children (node_t *self, char *err, size_t errlen)
{
    if (self->me->nchildren == 0) {
        self->link.endpoint = xstrdup ("");
        return 0;
    }
    char host[NI_MAXHOST + 2];
    int ipv6 = 0;
    host_t spec;
    err[0] = '\0';
    const char *name = bind_name (self, &spec, err, errlen);
    if (!name || numeric_host (name, host, sizeof host, &ipv6, err, errlen) != 0)
        return -1;
    self->link.router = zsock_new (ZMQ_ROUTER);
    zsock_set_router_mandatory (self->link.router, 1);
    zsock_set_ipv6 (self->link.router, ipv6);
    zsock_set_maxmsgsize (self->link.router, PROTO_MAX_FRAME_CHILDREN);
    if (self->link.cert)
        curve_server (self->link.router, self->link.cert);
    int port = zsock_bind (self->link.router, "tcp://%s:*", host);
    if (port < 0)
        return tf_error (err, errlen, "cannot bind tcp://%s:*: %s", host,
                         zmq_strerror (zmq_errno ()));
    self->link.endpoint = xasprintf ("tcp://%s:%d", host, port);
    self->link.slots = zhashx_new ();
    for (int i = 0; i < self->me->nchildren; i++) {
        const config_node_t *c = &self->cfg->nodes[self->me->children[i]];
        if (!c->vacant)
            zhashx_insert (self->link.slots, c->name, (void *) (intptr_t) (i + 1));
    }
    return 0;
}

/*  START: connect to the parent it names (none for the root), and note the
 *  mode. Returns 0, or -1 with a message in err. */
static int
take_start (node_t *self, const proto_msg_t *m, char *err, size_t errlen)
{
    if ((self->me->parent >= 0) != (m->text[0] != '\0'))
        return tf_error (err, errlen, "%s", self->me->parent >= 0
                                                ? "START names no parent endpoint"
                                                : "START names a parent for the root");
    self->link.measure = m->measure;
    self->link.since = m->seconds;
    if (self->me->parent < 0)
        return 0;
    return handshake_connect_parent (self, m->text, err, errlen);
}

int
handshake_connect_parent (node_t *self, const char *endpoint, char *err, size_t errlen)
{
    self->link.parent = zsock_new (ZMQ_DEALER);
    zsock_set_identity (self->link.parent, self->opts->name);
    if (self->link.cert)
        curve_client (self->link.parent, self->link.cert, self->link.parent_key);
    zsock_set_ipv6 (self->link.parent, 1);   /* the parent may be on [::1] */
    zsock_set_maxmsgsize (self->link.parent,
                          PROTO_MAX_FRAME_PARENT (config_chunk_bytes (self->cfg)));
    if (zsock_connect (self->link.parent, "%s", endpoint) < 0)
        return tf_error (err, errlen, "cannot connect to the parent at %s", endpoint);
    self->link.beat = zsock_new (ZMQ_DEALER);
    char identity[256];   /* a name is at most 63 characters */
    snprintf (identity, sizeof identity, "%s%s", self->opts->name, NODE_BEAT_SUFFIX);
    zsock_set_identity (self->link.beat, identity);
    if (self->link.cert)
        curve_client (self->link.beat, self->link.cert, self->link.parent_key);
    zsock_set_ipv6 (self->link.beat, 1);
    zsock_set_maxmsgsize (self->link.beat, PROTO_MAX_FRAME_CHILDREN);
    zsock_set_sndtimeo (self->link.beat, 0);
    zsock_set_linger (self->link.beat, 0);
    if (zsock_connect (self->link.beat, "%s", endpoint) < 0)
        return tf_error (err, errlen, "cannot connect to the parent at %s", endpoint);
    node_verbose (self, "connected to the parent at %s", endpoint);
    return 0;
}

/*  HELLO, and CONFIG: the experiment, the run, the keys. */
static int
handshake_config (node_t *self, char *err, size_t errlen)
{
    proto_msg_t m = {0};
    self->link.ctl = zsock_new (ZMQ_DEALER);
    zsock_set_identity (self->link.ctl, self->opts->name);
    zsock_set_ipv6 (self->link.ctl, 1);   /* the controller may be on [::1] (ssh) */
    zsock_set_maxmsgsize (self->link.ctl, PROTO_MAX_FRAME_CONTROL);
    zsock_set_linger (self->link.ctl, NODE_LINGER_MS);
    if (self->link.cert)
        curve_client (self->link.ctl, self->link.cert, self->link.controller_key);
    if (zsock_connect (self->link.ctl, "%s", self->opts->controller) < 0) {
        zsock_destroy (&self->link.ctl);   /* nobody to tell */
        return tf_error (err, errlen, "cannot connect to the controller at %s",
                         self->opts->controller);
    }
    zmsg_t *hello = proto_hello (self->opts->name, getpid ());
    zmsg_send (&hello, self->link.ctl);
    int rc = handshake_wait_control (self, PROTO_CONFIG, NODE_HANDSHAKE_MS, &m, err,
                                     errlen);
    if (rc == 0)
        rc = take_config (self, m.object, m.run ? &m.run_fields : NULL, err, errlen);
    if (rc == 0)
        rc = take_keys (self, m.keys, err, errlen);
    proto_msg_clear (&m);
    return rc;
}

int
handshake_run (node_t *self, char *err, size_t errlen)
{
    const node_opts_t *opts = self->opts;
    proto_msg_t m = {0};
    if (opts->cert_text) {
        self->link.cert = curve_load_text ("the certificate on stdin", opts->cert_text,
                                           opts->name, self->link.controller_key, err,
                                           errlen);
        explicit_bzero (opts->cert_text, strlen (opts->cert_text));
        if (!self->link.cert)
            return -1;
    }
    else if (opts->cert) {
        self->link.cert = curve_load (opts->cert, opts->name, self->link.controller_key,
                                      err, errlen);
        if (!self->link.cert)
            return -1;
    }
    if (handshake_config (self, err, errlen) != 0
        || bind_children (self, err, errlen) != 0)
        return -1;
    node_verbose (self, "experiment %s, %d children, endpoint \"%s\"", self->cfg->name,
                  self->me->nchildren, self->link.endpoint);
    zmsg_t *bound = proto_bound (self->link.endpoint);
    zmsg_send (&bound, self->link.ctl);
    int rc = handshake_wait_control (self, PROTO_START, NODE_HANDSHAKE_MS, &m, err, errlen);
    if (rc == 0)
        rc = take_start (self, &m, err, errlen);
    proto_msg_clear (&m);
    return rc;
}

void
handshake_close (node_t *self)
{
    node_link_t *link = &self->link;
    proto_run_clear (&link->run);
    zhashx_destroy (&link->slots);
    zsock_destroy (&link->router);
    zactor_destroy (&link->auth);   /* after the socket it guards */
    curve_auth_dir_remove (link->zap_dir);
    free (link->zap_dir);
    link->zap_dir = NULL;
    zcert_destroy (&link->cert);
    zsock_destroy (&link->parent);
    zsock_destroy (&link->beat);
    zsock_destroy (&link->ctl);
    free (link->endpoint);
}
