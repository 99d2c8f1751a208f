/*  stepin — what the controller writes on the stdin of the srun step that
 *  starts a run's slurm nodes, and what each node reads there
 *  (docs/deploy.md, "Slurm"; docs/security.md).
 *
 *  srun copies its stdin to every task of the step. The controller writes,
 *  for each task (rank) in order, one block:
 *
 *      #treefarm-rank RANK NAME BIND
 *      ...the node's certificate, when the run is CURVE...
 *      #treefarm-cert-end
 *
 *  then the line "#treefarm-ranks-end", and keeps the pipe open. Each
 *  node (`treefarm-node --slurm`) keeps the block of its own rank
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
/*  The most tasks one step may have (a tree's most nodes,
 *  CONFIG_MAX_NODES), the longest line read, the longest name and bind
 *  address taken. */
#define STEPIN_RANKS_MAX 65536
#define STEPIN_LINE_MAX 4096
#define STEPIN_NAME_MAX 255
#define STEPIN_BIND_MAX 1025
/*  The bind word of a node told no address to bind. */
#define STEPIN_NO_BIND "-"

/*  What one node reads for itself. */
typedef struct {
    char name[STEPIN_NAME_MAX + 1];
    char bind[STEPIN_BIND_MAX + 1];      /* "" for none */
    char *cert;              /* its certificate's text, or NULL */
} stepin_node_t;

/*  The block of rank's node: the lines above with cert (NULL: none) in
 *  between. A new string. */
char *stepin_block (int rank, const char *name, const char *bind, const char *cert);

/*  Read in up to and including the end line, keeping rank's block into
 *  *out (out->cert the caller's to free, then wiped: stepin_node_clear).
 *  Every other block's lines are wiped from memory as they are read.
 *  Returns 0, or -1 with err filled: end of file or a read error first,
 *  a line longer than STEPIN_LINE_MAX, a malformed rank line, a
 *  certificate over CURVE_FILE_MAX bytes, or no block for rank. */
int stepin_read (FILE *in, int rank, stepin_node_t *out, char *err, size_t errlen);

/*  Wipe and free out->cert. */
void stepin_node_clear (stepin_node_t *out);

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
