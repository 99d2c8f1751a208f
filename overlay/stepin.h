/*  stepin — what the controller writes on the stdin of the srun step that
 *  starts a run's slurm nodes, and what each node reads there
 *  (docs/deploy.md, "Slurm"; docs/security.md).
 *
 *  The step has one task per host it uses; a task starts the nodes placed
 *  on its host (node/step.h). Nodes are numbered by rank, 0 .. N-1, in
 *  the order they were placed. srun copies its stdin to every task of the
 *  step. The controller writes, for each node in rank order, one block:
 *
 *      #treefarm-rank RANK TASK NAME BIND
 *      ...the node's certificate, when the run is CURVE...
 *      #treefarm-cert-end
 *
 *  then the line "#treefarm-ranks-end", and keeps the pipe open. Each
 *  task (`treefarm-node --slurm`) keeps the blocks of its own task number
 *  (SLURM_PROCID) and wipes the others' as it reads them. Afterwards the
 *  controller writes only "#treefarm-signal RANK SIG" lines (SIGTERM or
 *  SIGKILL for that rank's node), and end of file on the pipe (the
 *  controller closed it or is gone) means every node stops.
 *
 *  Pure: no socket, no process (tests/test_stepin.c).
 */
#ifndef TF_STEPIN_H
#define TF_STEPIN_H

#include <stddef.h>
#include <stdio.h>

#define STEPIN_RANK "#treefarm-rank"
#define STEPIN_CERT_END "#treefarm-cert-end"
#define STEPIN_END "#treefarm-ranks-end"
#define STEPIN_SIGNAL "#treefarm-signal"
/*  The most nodes (ranks) and tasks one step may have (a tree's most
 *  nodes, CONFIG_MAX_NODES), the most nodes one task starts (the nodes
 *  placed on one host: at most its CPUs), the longest line read, the
 *  longest name and bind address taken. */
#define STEPIN_RANKS_MAX 65536
#define STEPIN_TASK_NODES_MAX 4096
#define STEPIN_LINE_MAX 4096
#define STEPIN_NAME_MAX 255
#define STEPIN_BIND_MAX 1025
/*  The bind word of a node told no address to bind. */
#define STEPIN_NO_BIND "-"

/*  What one node's block says. */
typedef struct {
    int rank;
    char name[STEPIN_NAME_MAX + 1];
    char bind[STEPIN_BIND_MAX + 1];      /* "" for none */
    char *cert;              /* its certificate's text, or NULL */
} stepin_node_t;

/*  The block of rank's node, started by task: the lines above with cert
 *  (NULL: none) in between. A new string. */
char *stepin_block (int rank, int task, const char *name, const char *bind,
                    const char *cert);

/*  Read in up to and including the end line, keeping task's blocks, in
 *  their order, into *out (*nout of them, at least one; the caller's:
 *  stepin_nodes_free wipes the certificates). Every other block's lines
 *  are wiped from memory as they are read. Returns 0, or -1 with err
 *  filled: end of file or a read error first, a line longer than
 *  STEPIN_LINE_MAX, a malformed rank line, a certificate over
 *  CURVE_FILE_MAX bytes, a rank twice, more than STEPIN_TASK_NODES_MAX
 *  blocks for task, or none. */
int stepin_read (FILE *in, int task, stepin_node_t **out, int *nout, char *err,
                 size_t errlen);

/*  Wipe and free out->cert. */
void stepin_node_clear (stepin_node_t *out);

/*  Clear each of the n nodes and free the list; *nodes becomes NULL. */
void stepin_nodes_free (stepin_node_t **nodes, int n);

/*  The line a signal goes in. A new string. */
char *stepin_signal_line (int rank, int sig);

/*  Parse a signal line (with or without its newline) into *rank and
 *  *sig. Returns 0, or -1 when it is not one or names a signal other
 *  than SIGTERM and SIGKILL. */
int stepin_signal_parse (const char *line, int *rank, int *sig);

/*  The task's rank from text (SLURM_PROCID's value): 0..STEPIN_RANKS_MAX
 *  - 1. Returns it, or -1 with err filled. */
int stepin_rank_parse (const char *text, char *err, size_t errlen);

#endif
