/*  cargo — the files of command tasks on one node.
 *
 *  A command task's inputs travel down the tree as one bundle
 *  (node/bundle.h) and its outputs, stdout and stderr come back up as
 *  another, its result stream. The core decides what moves when; cargo
 *  keeps the bytes, always on disk, in chunks, never a whole file in
 *  memory:
 *
 *  - the root reads each input bundle straight from the user's files (the
 *    tasks of the run, overlay/tasks.h), by offset, as chunks are sent
 *    (the root's side, with its journal, is node/rootbag.h);
 *  - every other node spools a task's bundle to SCRATCH/in/TASK as its
 *    chunks arrive, and serves them again by offset when it forwards it;
 *  - a node that computes a task hands a job (cargo_job) to the command
 *    worker (node/cmdrun.h), which stages the inputs, runs the command and
 *    writes the result stream to SCRATCH/res/TASK;
 *  - a result stream from a child is spooled to SCRATCH/res/TASK too, and
 *    served up by offset;
 *  - the root unpacks each result stream as it arrives into OUT/tasks/ID
 *    (created by the stream's first file: a task that leaves nothing has
 *    no directory), and once the core records the task appends it to the
 *    run's journal (overlay/journal.h); a failed attempt that will be
 *    tried again is removed instead, and so is whatever a crashed run
 *    left for a task it had not journaled.
 *
 *  Limits: a stream is at most BUNDLE_MAX_BYTES; a node holds at most one
 *  input spool per task held or in transit (the core's buffer and
 *  windows bound them) and one result spool per result in its queue up.
 *  Everything under SCRATCH is the node's own and removed by
 *  cargo_destroy.
 *
 *  One thread uses a cargo: the node's event loop.
 */
#ifndef TF_CARGO_H
#define TF_CARGO_H

#include <czmq.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "node/core.h"

typedef struct cargo cargo_t;

/*  Create the cargo of node `name` under a new private directory
 *  (mode 0700) in scratch_parent (NULL: $TMPDIR or /tmp), named
 *  treefarm-NAME-PID.XXXXXX. A node killed outright cannot remove its
 *  own: each new one first removes those of ours whose PID is gone.
 *  Returns NULL with a message in err. */
cargo_t *cargo_new (const char *scratch_parent, const char *name, char *err,
                    size_t errlen);

/*  Remove every spool and work file, the scratch directory, and free.
 *  The root flushes and closes its journal. Safe on NULL. */
void cargo_destroy (cargo_t **self_p);

/*  Root: the run's command tasks, from the normalized tasks file the
 *  controller wrote (one task a line, inputs by absolute path; NULL for
 *  a run without commands), outputs under out_dir/tasks, the journal at
 *  journal_path (node/rootbag.h). Returns the number of commands, or -1
 *  with a message. */
int64_t cargo_root (cargo_t *self, const char *tasks_path, const char *out_dir,
                    const char *journal_path, char *err, size_t errlen);

/*  The scratch directory (the command workers' work directories go in
 *  SCRATCH/work). Borrowed. */
const char *cargo_scratch (const cargo_t *self);

/*  Root: the index of the command with this id, or -1. */
int64_t cargo_find (const cargo_t *self, const char *id);

/*  Root: core_cfg_t.task_info (arg is the cargo): rootbag_task_info. */
core_task_info_t cargo_task_info (void *arg, uint64_t task);

/*  The len bytes at offset of task's input bundle, as a new frame (the
 *  root reads the user's files, others their spool). NULL with a
 *  message if it cannot be read. */
zframe_t *cargo_input_chunk (cargo_t *self, uint64_t task, uint64_t offset, size_t len,
                             char *err, size_t errlen);

/*  Not root: append a chunk of task's input bundle (bytes in all) to its
 *  spool, chunk `index` (0 opens the spool). The core has checked the
 *  order and sizes. Returns 0 or -1 with a message. */
int cargo_input_store (cargo_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                       const void *data, size_t len, char *err, size_t errlen);

/*  This node needs task's input no more (core RELEASE). */
void cargo_input_release (cargo_t *self, uint64_t task);

/*  The job for the command worker to compute task: its spec, where its
 *  inputs are (the spool, or on the root the user's files), its work
 *  directory and result spool, and on the root the directory to deliver
 *  its outputs to. A new object, or NULL with a message. */
json_t *cargo_job (cargo_t *self, uint64_t task, uint32_t node, char *err,
                   size_t errlen);

/*  The worker finished task: its result stream (bytes, spooled by the
 *  worker) is to be sent up; on the root, info (taken) is what the
 *  worker learned of the run, kept for the journal and RECORDED. */
void cargo_computed (cargo_t *self, uint64_t task, uint64_t bytes, json_t **info_p);

/*  A chunk of a child's result stream for task. Not root: appended to
 *  the spool (index 0 opens it). Root: unpacked into the task's
 *  output directory; the last chunk completes it and keeps its meta as
 *  the task's info. Returns 0, or -1 with a message (the stream is then
 *  dropped: the task will be recorded as failed with that message). */
int cargo_result_store (cargo_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                        uint32_t count, const void *data, size_t len, char *err,
                        size_t errlen);

/*  The len bytes at offset of task's result spool, as a new frame. */
zframe_t *cargo_result_chunk (cargo_t *self, uint64_t task, uint64_t offset, size_t len,
                              char *err, size_t errlen);

/*  Not root: task's result stream is delivered; remove its spool. */
void cargo_result_release (cargo_t *self, uint64_t task);

/*  Task's result stream will not be finished (the child sending it was
 *  lost): drop what came of it, the spool, or on the root what was
 *  delivered into OUT/tasks/ID. */
void cargo_result_discard (cargo_t *self, uint64_t task);

/*  Root: the core recorded task d (computed at node `node_name`, failed
 *  or not, after d->attempts): its outputs move to OUT/tasks/ID, its
 *  record goes to the journal, and the record is returned (a new
 *  reference) for RECORDED's info. A synthetic task (of a mixed run) is
 *  not journaled. NULL only when the journal cannot be written (in err). */
json_t *cargo_recorded (cargo_t *self, const core_done_t *d, const char *node_name,
                        double now, char *err, size_t errlen);

/*  Root: task failed at node and will be tried again: drop its
 *  outputs and its info. */
void cargo_retried (cargo_t *self, uint64_t task);

/*  Root: write the journal if due (batches) or, with force, now. Returns
 *  0 or -1 with a message. */
int cargo_journal_tick (cargo_t *self, double now, int force, char *err, size_t errlen);

/*  Root: records appended to the journal and not yet durable (0 on
 *  other nodes). */
size_t cargo_journal_pending (const cargo_t *self);

/*  Seconds until cargo_journal_tick is due, or negative. */
double cargo_next_deadline (const cargo_t *self, double now);

#endif
