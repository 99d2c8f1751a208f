/*  results_int — the results' state, shared by the files of the results
 *  and by nothing else.
 *
 *  The results are five jobs, one file each:
 *    results.c          the store: each node's figures, the outcome,
 *                       fidelity, the steady-state window, the results
 *                       directory;
 *    results_members.c  who was in the run: the losses, the nodes that
 *                       joined and those let go, and the bound a run
 *                       that grew is judged against;
 *    results_tasks.c    tasks.csv, written as the root's records arrive,
 *                       and the commands' tallies (failures, measured
 *                       times, the measured bound);
 *    results_json.c     results.json, nodes.csv and the samples;
 *    results_summary.c  the summary printed at the end of a run.
 *  results_tasks.c alone writes struct results' tasks and cmds.
 */
#ifndef TF_RESULTS_INT_H
#define TF_RESULTS_INT_H

#include "controller/results.h"

typedef struct {
    results_stats_t stats;
    int reported;
    int64_t pid;             /* 0: unknown */
    results_child_t *children;
    int nchildren;
    char *samples_csv;       /* its samples, from its REPORT */
    char *trace_csv;         /* its timeline, from its REPORT (--trace) */
    char *lost_why;          /* why it was lost, NULL while it was not */
    double lost_at;          /* wall seconds after START */
    double joined_at;        /* joined the run (docs/adapt.md, "Grow"):
                                its START, wall seconds after the run's;
                                < 0 for a node of the tree from the start */
    double left_at;          /* drained and let go (docs/adapt.md,
                                "Shrink"): wall seconds after START; < 0
                                while it was not */
    int announced;           /* of its changes (stats.changes, its own
                                copy), those results_new_changes gave */
    int announced_actions;   /* of its actions, those results_new_actions
                                gave */
} node_results_t;

/*  tasks.csv and the records behind it. */
typedef struct {
    uint8_t *bits;           /* 1 bit per task recorded in tasks.csv */
    uint64_t recorded;       /* rows written to tasks.csv */
    uint64_t refused;        /* records out of range or already recorded */
    FILE *file;              /* tasks.csv, open while the run goes */
    char *path;
    int error;               /* the first write's errno, 0 if none */
} results_tasks_t;

/*  Command tasks, from the records. */
typedef struct {
    uint64_t failed;         /* recorded failed after their last attempt */
    json_t *failures;        /* the first RESULTS_MAX_FAILURES of them */
    double *node_seconds;    /* per node: seconds its commands ran */
    uint64_t *node_commands; /* per node: commands it ran (last attempts) */
    uint64_t bytes;          /* input bundle bytes of the commands recorded */
    uint64_t count;          /* commands recorded */
    int measured_bound;      /* offline[] is from measured task times */
} results_cmds_t;

struct results {
    const config_t *cfg;
    node_results_t *nodes;   /* cfg->nnodes, tree order */
    results_status_t status;
    char *error;
    double wall_s;
    double startup_s;        /* from the session's start to START */
    int finished;
    uint64_t malformed;
    int curve;               /* the run's sockets were CURVE */
    int simulated;           /* a simulated run (results_set_simulated), */
    json_t *simulation;      /* and what it cost, or NULL */
    double offline[BOUND_MODEL_COUNT];   /* the bound computed here */
    double planned[BOUND_MODEL_COUNT];   /* the offline bound the tree's
                                first one is checked against: offline[],
                                or adapting, the dedicated platform's (the
                                tree starts from the configured rates) */
    uint64_t resumed;        /* tasks done by an earlier run (--resume) */
    int nlost;               /* nodes lost during the run */
    results_window_t window; /* the steady state, this run's records */
    results_tasks_t tasks;
    results_cmds_t cmds;
    json_t *joins;           /* the offers of nodes to the running run and
                                what became of each (results_note_join) */
    json_t *moves;           /* nodes re-parented (results_note_move) */
};

/*  Tasks completed by this run: the root's count, less those a resumed
 *  run found done (its throughput and efficiency are this run's). */
uint64_t results_ran (const results_t *self);


/*  Do the tree's own bound and the offline one agree (to rounding)? */
int results_bounds_agree (double a, double b);

/*  Platform seconds from START to FINISHED, or -1 when the run did not
 *  finish. */
double results_makespan (const results_t *self);

/*  The steady state's throughput in platform tasks/s and its efficiency
 *  against bound (NAN when unknown); -1 when the run has no window. */
int results_steady (const results_t *self, double bound, double *throughput,
                    double *efficiency);

/*  Can the run's timings be trusted? */
int results_reliable (const results_t *self);

/*  What a command's record says of how it ended: ok, failed, killed,
 *  timeout, error. */
const char *results_command_status (const json_t *info);

/*  One link as its parent saw it, in platform terms (results.json's
 *  "children" entries); a new object. */
json_t *results_child_to_json (const results_t *self, const results_child_t *c);

#endif
