/*  study_int — the state of `treefarm bench`, shared by the files of the
 *  command and by nothing else.
 *
 *  The study is four jobs, one file each:
 *    study.c      the pure part (study.h): lists, the grid, reading a run
 *                 back, the cells' means, study.json's identity;
 *    study_cli.c  the command line, each cell's config, DIR and its
 *                 study.json, checked before anything runs;
 *    study_run.c  running the cells one after another, the progress line,
 *                 the files after every run (through study_out.c);
 *    study_sim.c  a cell of a simulated study (--simulate): treefarm-sim
 *                 on the cell's config.json, in a child.
 */
#ifndef TF_STUDY_INT_H
#define TF_STUDY_INT_H

#include <jansson.h>
#include <stddef.h>

#include "controller/session.h"
#include "controller/study.h"
#include "overlay/config.h"

typedef struct {
    study_params_t params;
    const char *config_path;
    const char *load_path;   /* --load FILE, or NULL */
    int adapt;               /* --adapt */
    int no_endgame;          /* --no-endgame, for every policy with one */
    const char *ia_order;    /* --ia-order ORDER, or NULL */
    const char *reclaim;     /* --reclaim MODE, or NULL */
    json_t *config;          /* the experiment, canonical JSON */
    char *name;              /* the experiment's name */
    char *dir;               /* DIR */
    study_run_t *runs;
    study_cell_t *cells;
    session_opts_t opt;      /* every run's, but for out_dir */
    char *sim;               /* --simulate: the simulator's path (NULL:
                                every run in process) */
    int live;                /* stderr is a terminal: one line in place */
    int ran;                 /* runs this invocation ran to an end */
    double ran_wall;         /* their wall seconds, spawn to reap */
} bench_t;

/*  The config of run i: the experiment with the cell's Z, w and policy,
 *  the study's task count and time scale, through the strict loader and
 *  the emulation check. NULL with a message naming the cell. */
config_t *study_cell_config (const bench_t *b, int i, char *err, size_t errlen);

/*  The simulator's program (controller/simulate.h), found as exec would
 *  find it. Returns a new string, or NULL with a message naming it. */
char *study_sim_program (char *err, size_t errlen);

/*  Run the cell of *cfg_p (which it takes, nulling the caller's pointer)
 *  by the simulator b->sim into dir, which gets config.json too. Returns
 *  the exit status as run_synthetic's would be: OK complete, FAILED (the
 *  simulator's results.json says why, or err when it cannot: a signal,
 *  --timeout), USAGE after saying why (the simulator refused the cell,
 *  cannot start, dir unusable: every cell would fail), INTERRUPTED (a
 *  Ctrl-C stopped the simulator; nothing is left running). */
int study_sim_cell (const bench_t *b, config_t **cfg_p, const char *dir, char *err,
                    size_t errlen);

/*  Run every pending run of b (prepared by study_cli.c: DIR open, its
 *  study.json this study's) in the grid's order; write the files after
 *  each and, at the end, the plots and index.html. Returns the exit
 *  status of the command. */
int study_execute (bench_t *b);

#endif
