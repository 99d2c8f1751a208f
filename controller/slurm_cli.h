/*  slurm_cli — `treefarm run`'s Slurm parts beyond placing the nodes
 *  (docs/deploy.md, "Slurm"): the options --slurm-args (run again under
 *  salloc) and --tree auto --fanout K (a tree of the allocation's hosts,
 *  controller/slurm_tree.h), and the watch on the job's end (warn when
 *  the bag would outlast the job's time limit).
 */
#ifndef TF_SLURM_CLI_H
#define TF_SLURM_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "controller/session.h"
#include "overlay/config.h"

/*  How often a run in a Slurm job with a time limit compares the bag's
 *  expected end with the job's (seconds), from this long after START and
 *  its first task done. */
#define SLURM_WATCH_EVERY_S 5.0
#define SLURM_WATCH_FIRST_S 1.0

/*  What the command line says about Slurm beyond --slurm. */
typedef struct {
    const char *args;        /* --slurm-args */
    const char *tree;        /* --tree */
    double fanout;           /* --fanout, 0 when not given */
    const char *load;        /* --load: names nodes */
} slurm_cli_t;

/*  The options' lines of `treefarm run --help`. */
void slurm_cli_usage (FILE *out);

/*  Apply the options to *cfg_p (the config at path, checked), slurm being
 *  --slurm: with --slurm-args, exec salloc (slurm.h: refused inside an
 *  allocation); with --tree auto --fanout K, replace *cfg_p by the tree of
 *  the allocation's hosts (refused without --slurm or with --load).
 *  Returns 0, or -1 after saying why (*cfg_p then the caller's still). */
int slurm_cli_apply (config_t **cfg_p, const slurm_cli_t *so, int slurm, const char *path,
                     int argc, char **argv);

/*  A run in a Slurm job with an end: when it ends, what was done at
 *  START, whether it was said already. */
typedef struct {
    time_t end;              /* 0: no slurm node, or no time limit */
    uint64_t done_at_start;
    double t_check;
    int warned;
} slurm_watch_t;

/*  At START: the job's end (squeue) when the run has slurm nodes, and
 *  what is done already. Says when the end cannot be told. */
void slurm_watch_start (slurm_watch_t *self, session_t *s);

/*  Every turn once started: say once when the bag, at its rate since
 *  START, would end after the job (what is left stays in the journal). */
void slurm_watch_tick (slurm_watch_t *self, session_t *s, double now);

#endif
