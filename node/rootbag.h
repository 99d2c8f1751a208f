/*  rootbag — the root's side of command tasks (node/cargo.h keeps the
 *  files every node has): the run's commands, each input bundle read
 *  straight from the user's files as its chunks are sent, each result
 *  unpacked into OUT/tasks/ID as it arrives, and the journal a task's
 *  record goes to when the core records it.
 *
 *  An input that cannot be read when its task is handed out (deleted or
 *  unreadable since the controller checked it) makes that attempt fail
 *  at the root, with the reason kept for the task's record; the rest of
 *  the run goes on (rootbag_task_info).
 *
 *  One thread uses a rootbag: the root's event loop.
 */
#ifndef TF_ROOTBAG_H
#define TF_ROOTBAG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "node/core.h"

typedef struct rootbag rootbag_t;

/*  The run's commands from the normalized tasks file the controller wrote
 *  (one task a line, inputs by absolute path; NULL for a run without
 *  commands), outputs under out_dir/tasks, the journal at journal_path.
 *  *count: the number of commands. NULL with a message in err. */
rootbag_t *rootbag_new (const char *tasks_path, const char *out_dir,
                        const char *journal_path, int64_t *count, char *err,
                        size_t errlen);

/*  Flush and close the journal, and free. Safe on NULL. */
void rootbag_destroy (rootbag_t **self_p);

/*  The index of the command with this id, or -1. */
int64_t rootbag_find (const rootbag_t *self, const char *id);

/*  core_cfg_t.task_info: the size of task's input bundle, taken from its
 *  files now, each time the core takes the task to hand it out. Files
 *  gone or unreadable: .unreadable set, and why is kept for the task's
 *  record (rootbag_recorded) until a later look finds them again. */
core_task_info_t rootbag_task_info (rootbag_t *self, uint64_t task);

/*  The len bytes at offset of task's input bundle into buf. 0, or -1
 *  with a message. */
int rootbag_input_read (rootbag_t *self, uint64_t task, uint64_t offset, void *buf,
                        size_t len, char *err, size_t errlen);

/*  The task's input is sent whole: forget its bundle. */
void rootbag_input_release (rootbag_t *self, uint64_t task);

/*  The root computes task itself: the job's inputs are the user's files,
 *  its spec the task's, its outputs delivered to OUT/tasks/ID (emptied
 *  now). */
void rootbag_job (rootbag_t *self, uint64_t task, json_t *job);

/*  The root's own worker finished task: info (taken) is what it learned
 *  of the run, kept for the record. */
void rootbag_computed (rootbag_t *self, uint64_t task, json_t **info_p);

/*  A chunk of a child's result stream for task, unpacked into its output
 *  directory; the last chunk completes it and keeps its meta as the
 *  task's info. 0, or -1 with a message (the task's info then says it). */
int rootbag_deliver (rootbag_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                     uint32_t count, const void *data, size_t len, char *err,
                     size_t errlen);

/*  Task's result stream will not be finished: drop what was delivered. */
void rootbag_discard (rootbag_t *self, uint64_t task);

/*  The core recorded task d (computed at node_name, failed or not, after
 *  d->attempts): its record goes to the journal and is returned (a new
 *  reference) for RECORDED's info. A synthetic task (of a mixed run) is
 *  not journaled. NULL only when the journal cannot be written. */
json_t *rootbag_recorded (rootbag_t *self, const core_done_t *d, const char *node_name,
                          double now, char *err, size_t errlen);

/*  Task failed and will be tried again: drop its outputs and info. */
void rootbag_retried (rootbag_t *self, uint64_t task);

/*  Write the journal if due or, with force, now. 0, or -1 with a
 *  message. */
int rootbag_journal_tick (rootbag_t *self, double now, int force, char *err,
                          size_t errlen);

/*  Records appended and not yet written and fsync'd. */
size_t rootbag_journal_pending (const rootbag_t *self);

/*  Seconds until rootbag_journal_tick is due, or negative. */
double rootbag_next_deadline (const rootbag_t *self, double now);

#endif
