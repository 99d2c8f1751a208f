/*  node — the ZeroMQ runtime of one tree node (treefarm-node).
 *
 *  It joins the controller, receives the experiment, binds its children's
 *  endpoint, connects to its parent, and then drives the pure decision core
 *  (node/core.h) with what arrives on its sockets and from its compute
 *  engine, carrying out the actions the core returns. The sequence is in
 *  docs/protocol.md.
 */
#ifndef TF_NODE_H
#define TF_NODE_H

#include <stddef.h>

typedef struct {
    const char *name;        /* this node's name in the experiment */
    const char *controller;  /* the controller's endpoint: tcp://host:port,
                                or ipc://path for a node in a network
                                namespace */
    const char *bind;        /* address to bind for the children; NULL:
                                what the config's host says
                                (host_bind_name, overlay/host.h) */
    const char *cert;        /* this node's CURVE certificate file
                                (overlay/curve.h), or NULL: CURVE off
                                (unless cert_text) */
    char *cert_text;         /* or the certificate's text (node/step.h),
                                wiped once read */
    int verbose;             /* log the steps of the run on stderr */
} node_opts_t;

/*  The exit status of a node that lost its parent (docs/reliability.md):
 *  it told the controller (LOST) and stopped. */
#define NODE_EXIT_ORPHANED 3

/*  Run a node until the controller stops it. Returns the process exit
 *  status: 0 after a clean STOP, NODE_EXIT_ORPHANED when it lost its
 *  parent, 1 on a failure (reported to the controller with FAIL when it
 *  can be, and printed to stderr). */
int node_run (const node_opts_t *opts);

#endif
