/*  step — a node started as one task of the controller's srun step
 *  (`treefarm-node --slurm`; docs/deploy.md, "Slurm").
 *
 *  Such a node learns who it is from the step's stdin (overlay/stepin.h):
 *  its rank is SLURM_PROCID, and its block there gives its name, the
 *  address to bind and, with CURVE, its certificate, which is written to
 *  a file of its own (mkstemp under $TMPDIR or /tmp, mode 0600) that the
 *  node removes as soon as it has read it (node_opts_t.cert_once). Then a
 *  thread watches the rest of stdin: a signal line for its rank is sent
 *  to the node, and end of file (the controller is done, or gone) sends
 *  it SIGTERM, as an ssh node's watcher does.
 */
#ifndef TF_STEP_H
#define TF_STEP_H

#include <stddef.h>

#include "node/node.h"
#include "overlay/stepin.h"

/*  What the step told this node; opts points into it. */
typedef struct {
    stepin_node_t me;
    char cert_path[4096];    /* "" when no certificate came */
} step_node_t;

/*  Read this task's block from stdin (rank: $SLURM_PROCID) into *self and
 *  fill opts->name, opts->bind, opts->cert and opts->cert_once from it;
 *  then start the stdin watcher. Returns 0, or -1 with err filled. */
int step_node_setup (step_node_t *self, node_opts_t *opts, char *err, size_t errlen);

/*  Remove the certificate file if it is still there, and wipe *self. */
void step_node_clear (step_node_t *self);

#endif
