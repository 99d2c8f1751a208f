/*  ledger — the tasks a node holds, and on the root the bag's record.
 *
 *  Every node holds a queue of tasks it may compute or send on, in
 *  arrival order. The root also hands out the bag's fresh tasks (after
 *  the queued ones: tasks to try again or taken back from a lost child),
 *  keeps one bit per task once it is complete, counts each command's
 *  attempts, and remembers the nodes a command failed on while it is out
 *  again (docs/tasks.md).
 *
 *  Pure and passive: which held task may go where is the core's
 *  decision; the ledger keeps the tasks and the record.
 */
#ifndef TF_LEDGER_H
#define TF_LEDGER_H

#include <stdint.h>

#include "node/coretask.h"

typedef struct ledger ledger_t;

typedef struct {
    int is_root;             /* keep the bag's record */
    uint64_t task_count;     /* tasks in the bag */
    uint64_t command_tasks;  /* tasks 0 .. command_tasks-1 are commands */
    double task_units;       /* a synthetic task's units and bytes */
    uint64_t task_bytes;
    /*  A command's units and bytes (root, required when command_tasks > 0). */
    core_task_info_t (*task_info) (void *arg, uint64_t task);
    void *task_arg;
    uint32_t max_attempts;   /* tries of a failing command, 0 means 1 */
    uint32_t nnodes;         /* nodes in the tree */
    int root_only;           /* the policy computes on the root alone: a
                                failed command avoids no node */
} ledger_cfg_t;

/*  Create an empty ledger; cfg is copied. */
ledger_t *ledger_new (const ledger_cfg_t *cfg);

/*  Destroy a ledger and null the caller's pointer. Safe on NULL. */
void ledger_destroy (ledger_t **self_p);

/*  Hold task, behind every task held. */
void ledger_push_task (ledger_t *self, const task_t *task);

/*  Number of tasks held. */
uint32_t ledger_held (const ledger_t *self);

/*  Root: the bag's tasks not yet handed out the first time (some may be
 *  complete already, from a journal); 0 elsewhere. */
uint64_t ledger_fresh_left (const ledger_t *self);

/*  The task at position pos of the queue (0 the oldest, pos < held),
 *  borrowed until the ledger next changes. */
const task_t *ledger_peek_task (const ledger_t *self, uint32_t pos);

/*  The position of the first held task for which eligible (arg, task)
 *  is true; else, on the root, ledger_held when the bag has a task
 *  neither handed out nor complete and, if that task is synthetic,
 *  fresh_synthetic is true; else -1. */
int ledger_find_task (const ledger_t *self,
                      int (*eligible) (const void *arg, const task_t *task),
                      const void *arg, int fresh_synthetic);

/*  Remove and return the task at pos: a held one (pos < held) or, on the
 *  root at pos == held, the bag's next fresh task. On the root, a
 *  command counts one more attempt, and one that failed before is
 *  remembered until ledger_recall_task. pos must be valid. */
task_t ledger_take_task (ledger_t *self, uint32_t pos);

/*  Root: forget the command task handed out again (ledger_take_task)
 *  and copy it to *out, with the nodes it failed on. Returns 1, or 0 when
 *  it is not remembered. */
int ledger_recall_task (ledger_t *self, uint64_t task, task_t *out);

/*  Root: 1 if task is recorded complete, else 0 (0 on other nodes and
 *  out of range). */
int ledger_is_done (const ledger_t *self, uint64_t task);

/*  Root: record task complete (once; again changes nothing). Returns 0,
 *  or -1 on another node or for a task out of range. */
int ledger_mark_done (ledger_t *self, uint64_t task);

/*  Root: number of tasks recorded complete. */
uint64_t ledger_completed (const ledger_t *self);

/*  Root: 1 when every task of the bag is recorded complete, else 0. */
int ledger_all_done (const ledger_t *self);

/*  Root: the attempts command task has had (0 for a synthetic one). */
uint32_t ledger_attempts (const ledger_t *self, uint64_t task);

/*  Root: command task failed at node; had is the task as handed out (the
 *  nodes it failed on before), or NULL. With attempts left, queue it
 *  again, to avoid those nodes and node (all but node forgotten when they
 *  would cover the tree, none kept in a one-node tree or a root-only
 *  run), and return 1; else return 0 and change nothing. */
int ledger_retry_task (ledger_t *self, uint64_t task, uint32_t node, const task_t *had);

#endif
