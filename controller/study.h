/*  study — `treefarm bench`: a grid of runs on one platform.
 *
 *  A study runs every cell (send size Z, compute size w, policy) of the
 *  grid on the experiment's tree, each repeated R times, one run after
 *  another in this process (controller/run.h, run_synthetic), or with
 *  --simulate each by the simulator in a child (docs/simulate.md), each
 *  into its own results directory DIR/runs/Z-W-POLICY-R/. It reads every
 *  run's figures back from that run's results.json, so a study
 *  interrupted and started again into the same DIR runs only what is not
 *  complete yet.
 *  Makespans are normalized per (Z, w) to the reference policy's
 *  (RootComputes, as the published study does; docs/study/README.md).
 *
 *  This header is the pure part, tested without processes: the lists of
 *  the command line and their limits, the grid's order and names, reading
 *  a run back, the cells' means and normalization, and whether an
 *  existing study is the same one. controller/study_out.h writes the
 *  files; study_main is the command (study_int.h says which file does
 *  what).
 */
#ifndef TF_STUDY_H
#define TF_STUDY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "overlay/util.h"

/*  Limits of the command line, so nothing from outside drives unbounded
 *  time or memory. 64 values per list is far more than a published grid
 *  (3 sizes x 6 sizes); 100 repeats is more than any confidence interval
 *  needs; 10,000 runs is about a week of the reference study's runs. */
#define STUDY_MAX_VALUES 64
#define STUDY_MAX_REPEAT 100
#define STUDY_MAX_RUNS 10000

/*  The largest --time-scale: the shipped configs use 20 and fidelity
 *  falls off beyond a few tens on two cores (docs/architecture.md,
 *  "Fidelity"); 1000 leaves room for fast machines and tiny trees. */
#define STUDY_MAX_TIME_SCALE 1000.0

/*  The policy the published study normalizes every makespan to. */
#define STUDY_REFERENCE_POLICY "root-computes"

/*  The lists and numbers that define a study. Policies are registered
 *  names (policies/policy.h), borrowed from the registry. */
typedef struct {
    double send[STUDY_MAX_VALUES];      /* Z, MB: config tasks.input_mb */
    int nsend;
    double compute[STUDY_MAX_VALUES];   /* w, units: config tasks.units */
    int ncompute;
    const char *policy[STUDY_MAX_VALUES];
    int npolicy;
    int repeat;                         /* runs per cell, >= 1 */
    uint64_t tasks;                     /* tasks per run */
    double time_scale;                  /* the runs' platform.time_scale */
    int simulated;                      /* --simulate: every run on SimGrid,
                                           by treefarm-sim in a child */
} study_params_t;

typedef enum {
    STUDY_RUN_PENDING = 0,   /* not run (yet) */
    STUDY_RUN_COMPLETE,      /* results.json says complete */
    STUDY_RUN_FAILED,        /* it ran and did not complete; error says why */
} study_status_t;

/*  "pending", "complete", "failed". */
const char *study_status_str (study_status_t status);

/*  One run of the grid. Figures are NAN when unknown. */
typedef struct {
    int send, compute, policy;          /* indices into the params' lists */
    int repeat;                         /* 1 .. repeat */
    study_status_t status;
    char error[TF_ERRLEN];              /* why it failed */
    double makespan_s;                  /* platform seconds */
    double throughput;                  /* tasks per platform second */
    double bound;                       /* of the policy's port model, tasks/s */
    double efficiency;                  /* throughput / bound */
    int reliable;                       /* results.json efficiency_reliable */
    double fidelity;                    /* results.json fidelity.min */
    double wall_s;                      /* results.json wall_s */
    double steady_efficiency;           /* results.json steady.efficiency */
    double tail_s;                      /* results.json tail.seconds: the
                                           last 5% of the tasks, platform s */
} study_run_t;

/*  One cell (Z, w, policy) over its repeats. */
typedef struct {
    int runs, complete;                 /* repeats, and complete ones */
    double makespan_s;                  /* mean over complete runs, or NAN */
    double normalized;                  /* makespan_s / the reference's, or NAN */
    double efficiency, eff_min, eff_max;/* over complete runs, or NAN */
    int reliable;                       /* every complete run was */
} study_cell_t;

/*  Parse text, a comma-separated list of numbers such as "2,5,10", for
 *  option (its name, for messages) into values (STUDY_MAX_VALUES of
 *  them) and *n. Every value must be a finite number > 0 and <= max, and
 *  appear once. Returns 0, or -1 with "--OPTION: \"VALUE\" is ..." in
 *  err naming the first bad value (an empty item is one). */
int study_parse_numbers (const char *option, const char *text, double max,
                         double *values, int *n, char *err, size_t errlen);

/*  Parse text, a comma-separated list of policy names in any spelling
 *  policy_find accepts ("IA:Multi", "ia_multi"), into the registered
 *  names (borrowed) in names (STUDY_MAX_VALUES) and *n. Returns 0, or -1
 *  with "--policies: \"NAME\" is ..." naming the first unknown or
 *  repeated one and listing the known ones. */
int study_parse_policies (const char *text, const char **names, int *n, char *err,
                          size_t errlen);

/*  Runs in the study: nsend x ncompute x npolicy x repeat. */
int study_run_count (const study_params_t *p);

/*  Check that the study has at most STUDY_MAX_RUNS runs. Returns 0, or
 *  -1 with a message giving the product. */
int study_check_size (const study_params_t *p, char *err, size_t errlen);

/*  Index of the run (send s, compute c, policy k, repeat r 1-based) in
 *  the grid's order: send sizes outermost, then compute sizes, policies,
 *  repeats. The cell of a run is its index divided by repeat. */
int study_run_index (const study_params_t *p, int s, int c, int k, int r);

/*  Fill runs (study_run_count entries) with the grid, every run pending. */
void study_runs_init (const study_params_t *p, study_run_t *runs);

/*  The directory name of run i under DIR/runs: "Z-W-POLICY-R", numbers
 *  in %g ("2-5-ia-multi-1", "0.5-11-fcfs-3"). The caller frees. */
char *study_run_name (const study_params_t *p, int i);

/*  The policy every cell is normalized to: STUDY_REFERENCE_POLICY when
 *  the study has it, else the first policy of the list. Its index. */
int study_reference (const study_params_t *p);

/*  Fill run from results (a run's results.json), if results is the run
 *  of that cell: its config's tasks.input_mb, tasks.units and
 *  tasks.count, its policy and time_scale must be the study's, and its
 *  "mode" "simulated" exactly when the study is (params simulated). A
 *  complete run gets its figures; any other status leaves it pending (it
 *  runs again). Returns 0, or -1 with a message when results is not
 *  that cell's run or lacks a figure (run left pending). */
int study_run_from_json (const study_params_t *p, study_run_t *run, const json_t *results,
                         char *err, size_t errlen);

/*  Summarize runs into cells (study_run_count / repeat entries, in the
 *  grid's order): each cell's means over its complete runs, and its mean
 *  makespan over the mean makespan of the reference policy (study_
 *  reference) in the same (Z, w); NAN where either is unknown. */
void study_summarize (const study_params_t *p, const study_run_t *runs,
                      study_cell_t *cells);

/*  The study as JSON for DIR/study.json: config (the experiment's
 *  canonical JSON object, borrowed and copied), the lists, repeat, tasks,
 *  time_scale and simulated (true or false). A new reference. */
json_t *study_params_to_json (const study_params_t *p, const json_t *config);

/*  Compare an existing DIR/study.json (have) with the study asked for
 *  (want, from study_params_to_json). Returns 0 when they describe the
 *  same study, else -1 with a message naming the first key that differs
 *  and both values; simulated first, as "made with --simulate" or
 *  "without" (a study.json without it, from before --simulate, is one
 *  without). */
int study_params_match (const json_t *have, const json_t *want, char *err,
                        size_t errlen);

/*  A study as the writers see it (controller/study_out.h); all borrowed. */
typedef struct {
    const study_params_t *params;
    const char *name;                   /* the experiment's */
    const char *dir;                    /* DIR */
    const study_run_t *runs;            /* study_run_count */
    const study_cell_t *cells;          /* study_run_count / repeat */
} study_t;

/*  `treefarm bench` with argv[0] = "bench". Returns the exit status: 0
 *  every run complete, 1 a run failed, 2 bad usage or input (the message
 *  names the value), 130 interrupted (completed runs stay in DIR). */
int study_main (int argc, char **argv);

#endif
