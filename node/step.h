/*  step — the nodes started by one task of the controller's srun step
 *  (`treefarm-node --slurm`; docs/deploy.md, "Slurm").
 *
 *  The step has one task for each host it uses. A task learns its nodes
 *  from the step's stdin (overlay/stepin.h): its task number is
 *  SLURM_PROCID, and each block of that task there gives a node's rank,
 *  name, the address to bind and, with CURVE, its certificate, which the
 *  node keeps in memory only, wiped once it has read it
 *  (node_opts_t.cert_text).
 *
 *  One node: the task's process is the node. Several (more nodes than
 *  hosts): the process, having loaded the program once, forks one child
 *  per node before it starts anything else (no thread, no socket yet),
 *  each child dying with it (PR_SET_PDEATHSIG) and its stdin /dev/null;
 *  the process itself stays to reap them, passing on SIGTERM, SIGINT and
 *  SIGHUP (Slurm's, when the step is cancelled) and exiting only after
 *  the last, 0 when every one exited 0, else 1. Either way a thread
 *  watches the rest of stdin: a
 *  signal line for a rank is sent to that node, and end of file (the
 *  controller is done, or gone) sends every node SIGTERM, as an ssh
 *  node's watcher does.
 */
#ifndef TF_STEP_H
#define TF_STEP_H

#include <stddef.h>

#include "node/node.h"
#include "overlay/stepin.h"

/*  What the step told this process's node; opts points into it. */
typedef struct {
    stepin_node_t me;
} step_node_t;

/*  Read this task's blocks from stdin (task: $SLURM_PROCID), start its
 *  nodes, and fill opts->name, opts->bind and opts->cert_text
 *  for the one this process runs. Returns 0 in a process that is to run
 *  its node (node_run); 1 in the process that forked and reaped several,
 *  which exits with *status; or -1 with err filled. */
int step_node_setup (step_node_t *self, node_opts_t *opts, int *status, char *err,
                     size_t errlen);

/*  Remove the certificate file if it is still there, and wipe *self. */
void step_node_clear (step_node_t *self);

#endif
