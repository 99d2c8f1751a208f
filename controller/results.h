/*  results — what a run measured, and the files it leaves behind.
 *
 *  The controller feeds in each node's STATS and REPORT as they arrive and
 *  the run's outcome at the end; the module keeps the latest counters per
 *  node and writes a results directory:
 *
 *    results.json  the experiment (canonical config), the outcome
 *                  ("complete", "failed", "interrupted" and the error),
 *                  makespan and throughput in platform time, the
 *                  steady-state window's (results_window_t), and every
 *                  node's counters with its per-child breakdown;
 *    nodes.csv     one row per node with the scalar counters;
 *    tasks.csv     "task,node": which node computed each task, one row
 *                  per task the root recorded, appended as its RECORDED
 *                  messages arrive (completion order, not sorted; a task
 *                  not recorded when a run ends has no row).
 *
 *  results.json is written whatever the outcome, with what arrived, so a
 *  script can always tell what happened. The memory kept for tasks.csv is
 *  one bit per task, whatever the count. Platform time is wall time from
 *  START to FINISHED multiplied by the time scale (docs/architecture.md, "Time").
 */
#ifndef TF_RESULTS_H
#define TF_RESULTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/proto_stats.h"

typedef enum {
    RESULTS_RUNNING = 0,     /* no outcome yet */
    RESULTS_COMPLETE,        /* every task done, every node reported */
    RESULTS_FAILED,          /* a node failed, died, or the run timed out */
    RESULTS_INTERRUPTED,     /* Ctrl-C or SIGTERM */
} results_status_t;

/*  "running", "complete", "failed", "interrupted". */
const char *results_status_str (results_status_t status);

/*  A node's figures as its last STATS or REPORT gave them
 *  (overlay/proto_stats.h); results keep the scalars and the fit. */
typedef proto_stats_t results_stats_t;

/*  What a node sent to one child, from its REPORT. */
typedef proto_child_stats_t results_child_t;

typedef struct results results_t;

/*  Create the results of a run of cfg, which is borrowed and must outlive
 *  them. Status starts as RESULTS_RUNNING with every counter zero. */
results_t *results_new (const config_t *cfg);

/*  Destroy results and null the caller's pointer. Safe on NULL. */
void results_destroy (results_t **self_p);

/*  Record a STATS from node (index in the config): its figures replace
 *  the previous ones (the fit's reference is taken). Returns 0, or -1
 *  with a message (a bad node index) and nothing changed. */
int results_update_stats (results_t *self, int node, const proto_stats_t *stats,
                          char *err, size_t errlen);

/*  Record the final REPORT from node: the figures as results_update_stats,
 *  plus what it sent each child, its samples and its timeline, taken from
 *  *stats (its children, samples_csv and trace_csv are nulled). Returns 0, or -1 with a
 *  message and nothing changed. */
int results_update_report (results_t *self, int node, proto_stats_t *stats, char *err,
                           size_t errlen);

/*  Node's changes (every STATS carries all it declared) that no call
 *  gave before: returns how many, *first pointing at them (borrowed
 *  until the node's next STATS or REPORT); they are then announced. The
 *  controller prints each once this way. */
int results_new_changes (results_t *self, int node, const proto_change_t **first);

/*  The same for the costly actions node weighed (stats.actions). */
int results_new_actions (results_t *self, int node, const proto_action_t **first);

/*  The latest counters of node, and whether a REPORT arrived from it. */
const results_stats_t *results_node_stats (const results_t *self, int node);
int results_node_reported (const results_t *self, int node);

/*  An adapting run's live bound (tasks/s, the policy's port model): the
 *  bound of the platform as the tree sees it now, from the root's latest
 *  STATS; NaN when the run does not adapt or no STATS carried it yet. */
double results_live_bound (const results_t *self);

/*  The bound a run is judged against: the policy's port model. */
bound_model_t results_policy_model (const config_t *cfg);

/*  The bound the run's efficiency is against: the offline bound, or
 *  when nodes joined the run, the rate that would have done the tasks
 *  this run ran in the ideal makespan of the bound as it grew (the
 *  offline bound until the first node joined, then each one's
 *  bound_after from when it was admitted). *final, if not NULL, gets the
 *  bound after the last node that joined in time to matter. */
double results_judged_bound (const results_t *self, double *final);

/*  A node offered to the running run, and what was decided (entry, taken:
 *  {node, at_s, admitted, parent, bound_now, bound_after, gain_s, cost_s,
 *  why}); results.json's "joins", in the order offered. */
void results_note_join (results_t *self, json_t *entry);

/*  A node moved under a new parent because its own was lost (entry,
 *  taken: {node, from, to, at_s}: its REPARENT sent); results.json's
 *  "moves", in order (docs/adapt.md, "Re-parent"). */
void results_note_move (results_t *self, json_t *entry);

/*  The timeline text node's REPORT carried (overlay/trace.h; its end and
 *  dropped count are in its stats), or NULL. Borrowed. */
const char *results_node_trace (const results_t *self, int node);

/*  The samples' CSV text node's REPORT carried (node/sampler.h), or NULL.
 *  Borrowed. */
const char *results_node_samples (const results_t *self, int node);

/*  Node's compute rates and load, as results.json gives them (the
 *  configured rate; the predicted, measured and its error as the node
 *  last reported them, NaN when unknown; the load's realized utilization
 *  and kind). A node without load that said nothing predicts its
 *  configured rate, with utilization 0 and kind "none". */
typedef struct {
    double configured, predicted, measured, measured_se;
    double utilization;      /* NaN: unknown */
    const char *kind;        /* borrowed; NULL: unknown */
} results_rate_t;
results_rate_t results_node_rate (const results_t *self, int node);

/*  Record the pid of node's process. */
void results_set_pid (results_t *self, int node, int64_t pid);

/*  Node was lost at at_s wall seconds after START, for the reason why
 *  (copied): results.json lists it under "lost" and marks its entry, the
 *  summary names it, and its figures no longer count towards the run's
 *  fidelity (a node frozen before it was lost is not the emulation
 *  falling behind). A second call for the same node changes nothing. */
void results_set_lost (results_t *self, int node, const char *why, double at_s);

/*  Node, lost already, said why after it was lost (its FAIL came late):
 *  why (copied) replaces the reason; the time it was lost stays. Nothing
 *  if node was not lost. */
/*  Node joined the run: its START came at_s wall seconds after the run's
 *  (results.json nodes[].joined_s, platform seconds). results_node_joined
 *  gives it back, < 0 for a node of the tree from the start. */
void results_set_joined (results_t *self, int node, double at_s);
double results_node_joined (const results_t *self, int node);

/*  Node was drained by its parent and let go at at_s (wall seconds after
 *  START): results.json's nodes[].left_s (docs/adapt.md, "Shrink"). */
void results_set_left (results_t *self, int node, double at_s);

void results_explain_lost (results_t *self, int node, const char *why);

/*  Whether node was lost (results_set_lost); how many nodes were. */
int results_node_lost (const results_t *self, int node);
int results_lost_count (const results_t *self);

/*  Record how the run ended. error (copied, may be NULL) explains a status
 *  other than complete. Only the first call with an error keeps its text:
 *  the first failure is the cause, the rest are consequences. */
void results_set_status (results_t *self, results_status_t status, const char *error);
results_status_t results_status (const results_t *self);
const char *results_error (const results_t *self);

/*  Record the wall seconds from the session's start (before its checks)
 *  to START, when every node had bound: "startup_s" in results.json. */
void results_set_startup (results_t *self, double startup_s);

/*  Record the wall seconds from START to FINISHED (finished = 1), or from
 *  START to the end of a run that did not finish (finished = 0). */
void results_set_wall (results_t *self, double wall_s, int finished);

/*  Record how many messages the controller refused as malformed. */
void results_set_malformed (results_t *self, uint64_t count);

/*  Record whether the run's sockets were CURVE: authenticated and
 *  encrypted (results.json "curve"). */
void results_set_curve (results_t *self, int curve);

/*  The run was simulated (docs/simulate.md): results.json's "mode" is
 *  "simulated", its wall seconds are simulated seconds, and its
 *  "simulation" is figures (taken; NULL: none yet), what the simulation
 *  itself cost. A second call replaces the figures. */
void results_set_simulated (results_t *self, json_t *figures);

/*  A node keeps up with the emulated clock when it spent at most
 *  1 - RESULTS_FIDELITY_MIN of the run behind it. Fidelity of a node is
 *  1 - max(loop lag, engine lag) / wall seconds of the run: the share of
 *  the run during which neither its event loop nor its engine was overdue
 *  (docs/architecture.md, "Fidelity"). The run's fidelity is its worst
 *  node's; below the threshold its efficiency is marked unreliable. On an
 *  idle machine the reference fork's nodes reach 0.96 and more at time
 *  scale 20; a node below 0.90 spent a tenth of the run overdue, and the
 *  efficiency it reports is measurably low for the emulation's sake (on
 *  a 63-node tree: 0.906 at time scale 2, efficiency 0.86; 0.66 at scale
 *  20, efficiency 0.50). */
#define RESULTS_FIDELITY_MIN 0.90

/*  The fidelity of node (1 when the run has no wall time yet). */
double results_node_fidelity (const results_t *self, int node);

/*  The run's fidelity, its worst node's, whose index goes to *worst
 *  (unless NULL; -1 if no node has lagged at all). */
double results_fidelity (const results_t *self, int *worst);

/*  The steady-state window of a run: from the moment the k-th of its n
 *  tasks is recorded to the moment the (n - k)-th is, so that it leaves
 *  out the start-up (the tree filling its buffers) and the wind-down (the
 *  last tasks, when children run dry). k is the tree's in-flight
 *  capacity (results_window_k): once the root has handed out its last
 *  task, at most k tasks are not yet complete, so the (n - k)-th
 *  completion comes before any node can run dry for want of work; the
 *  start-up is cut by the same count. The window's throughput is the
 *  tasks recorded after its start up to its end over its length
 *  (docs/bounds.md, "Efficiency"). Memory: these few fields, whatever n. */
typedef struct {
    uint64_t n, k;           /* the run's tasks; tasks left out at each end */
    uint64_t at_from, at_to; /* records counted when each end was reached;
                                0 until then */
    double from_s, to_s;     /* when: seconds, the caller's clock */
    /*  The tail: the last RESULTS_TAIL_FRACTION of the tasks, from the
     *  moment the ones before them were recorded to the last record. */
    uint64_t tail_n;         /* tasks in it (at least 1) */
    double tail_from_s, last_s;   /* its ends; NAN until reached */
} results_window_t;

/*  The tail the results measure: the last 5% of a run's tasks. */
#define RESULTS_TAIL_FRACTION 0.05

/*  The in-flight capacity of cfg's tree: what every non-root node holds
 *  at most (buffer + 2 slots - 1: queued or on their way, and running)
 *  plus the root's running slots. */
uint64_t results_window_k (const config_t *cfg);

/*  A window over a run of n tasks leaving k (at least 1) out at each
 *  end. */
results_window_t results_window_make (uint64_t n, uint64_t k);

/*  By time t, recorded of the run's tasks were recorded (a batch just
 *  arrived; counts and times never go backwards). Pure. */
void results_window_note (results_window_t *w, uint64_t recorded, double t);

/*  The window's tasks and length, once both ends were reached and it
 *  holds a task and some time: returns 0. Else -1 (a run of fewer than
 *  3k tasks has no steady state: its window would hold fewer than k; one
 *  not finished has no end yet). */
int results_window_get (const results_window_t *w, uint64_t *tasks, double *seconds);

/*  The tail's length, seconds of the caller's clock, once the run's last
 *  task was recorded: 0; else -1. */
int results_window_tail (const results_window_t *w, double *seconds);

/*  The root's RECORDED batch was filed at wall seconds t after START:
 *  the steady-state window notes it (results.json "steady"). */
void results_note_recorded_at (results_t *self, double t);

/*  Tasks the root reports complete (its latest "completed" counter). */
uint64_t results_completed (const results_t *self);

/*  Open DIR/tasks.csv (dir must exist) and write its header, for
 *  results_record to append to. Returns 0, or -1 with "cannot write
 *  DIR/tasks.csv: REASON". */
int results_open_tasks (results_t *self, const char *dir, char *err, size_t errlen);

/*  tasks.csv's columns: the task's index in the bag, the node that
 *  computed it, and for a command its id, how it ended (ok, failed,
 *  killed, timeout, error: something besides the command went wrong), its
 *  exit code, the attempts it took, its input bundle and output bytes and
 *  its last attempt's wall seconds. A synthetic task's row is "T,NODE,,ok"
 *  and empty columns. */
#define RESULTS_TASKS_HEADER "task,node,id,status,exit,attempts,bytes_in,bytes_out,seconds"

/*  results.json lists at most this many failed commands (all are in
 *  tasks.csv). */
#define RESULTS_MAX_FAILURES 100

/*  Record that node (index in the config) computed task, from the root's
 *  RECORDED, and append its row to tasks.csv (buffered). A command's
 *  record (info, the root's journal record: id, failed, exit, ...) is
 *  required for the bag's commands and ignored for synthetic tasks. A
 *  task or node out of range, a command without its record, or a task
 *  already recorded, is refused: counted ("records_refused" in
 *  results.json), never written, and -1 returned with a message. A failed
 *  write is not this call's error: it is kept for results_check_tasks,
 *  and later rows are dropped. Returns 0 when the record is accepted. */
int results_record (results_t *self, uint64_t task, uint64_t node, const json_t *info,
                    char *err, size_t errlen);

/*  A resumed run found this many tasks done already: its throughput and
 *  efficiency count only the tasks it completed itself. */
void results_set_resumed (results_t *self, uint64_t tasks);

/*  Commands recorded as failed after their last attempt. */
uint64_t results_failed (const results_t *self);

/*  The summary names at most this many failed commands. */
#define RESULTS_FAILURES_SHOWN 10

/*  A command's measured time counts as at least this (seconds), so a
 *  node's rate stays finite. */
#define RESULTS_MIN_TASK_SECONDS 1e-6

/*  A run of command tasks alone: replace the bound by the one of the
 *  measured platform (docs/bounds.md, "Command runs"): each node computes
 *  one task per its mean wall time of the commands it ran successfully
 *  (the mean over all nodes for a node that ran none), a task's input is
 *  the commands' mean input bundle, links as configured. Efficiency is
 *  then judged against it. Does nothing for synthetic or mixed runs. */
void results_measure_bound (results_t *self);

/*  Tasks recorded so far. */
uint64_t results_recorded (const results_t *self);

/*  Return 0 while every write to tasks.csv has succeeded, else -1 with
 *  "cannot write DIR/tasks.csv: REASON" (the first failure). */
int results_check_tasks (const results_t *self, char *err, size_t errlen);

/*  Push buffered rows to tasks.csv; results_close_tasks also closes it.
 *  Each returns 0, or -1 with the message of results_check_tasks. Safe
 *  when tasks.csv was never opened. */
int results_flush_tasks (results_t *self, char *err, size_t errlen);
int results_close_tasks (results_t *self, char *err, size_t errlen);

/*  Return the whole of results.json as a new JSON object; the caller
 *  decrefs. */
json_t *results_to_json (const results_t *self);

/*  Write results.json and nodes.csv into dir, which must exist (tasks.csv
 *  is written as the run goes, see results_open_tasks).
 *  Each file is written to a temporary name and renamed, so a reader never
 *  sees half a file. Returns 0, or -1 with a message naming the file. */
int results_write (const results_t *self, const char *dir, char *err, size_t errlen);

/*  Print the outcome header and the per-node table to out. */
void results_print_summary (const results_t *self, FILE *out);

/*  Return the default results directory of an experiment started at when:
 *  "results/NAME-YYYYmmdd-HHMMSS" (local time). The caller frees. */
char *results_default_dir (const char *name, time_t when);

/*  Create path and its missing parents (mkdir -p, mode 0777 & ~umask).
 *  An existing directory is fine; a path or parent that exists as
 *  something else is an error. Returns 0, or -1 with a message. */
int results_make_dir (const char *path, char *err, size_t errlen);

/*  Check that a file can be created in the directory dir, by creating and
 *  removing one (".treefarm-probe-PID"). Returns 0, or -1 with a message
 *  naming dir and the reason. */
int results_check_writable (const char *dir, char *err, size_t errlen);

#endif
