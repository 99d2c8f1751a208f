/*  cmdrun — the worker thread that computes a node's command tasks.
 *
 *  A czmq actor, beside the synthetic engine (node/engine.h): the node's
 *  runtime hands it jobs (node/cargo.h, cargo_job) and polls
 *  cmdrun_sock for the outcome. For each job the worker, off the event
 *  loop:
 *   1. stages the inputs into a fresh work directory: it unpacks the
 *      spooled input bundle (node/bundle.h), whose meta is the task's
 *      spec, or on the root copies the user's files;
 *   2. runs the command there (node/runner.h): argv or sh, the extra
 *      environment, the timeout; stdout and stderr to files beside it;
 *   3. collects the outputs (declared, or every file the command created)
 *      and writes the result stream, a bundle of stdout, stderr and the
 *      outputs under their names, whose meta says how the run went: to
 *      the result spool, or on the root unpacked straight into the
 *      task's delivery directory;
 *   4. empties the work directory.
 *  A command that exits non-zero, dies of a signal, times out, or whose
 *  inputs or outputs cannot be staged or collected is a failed task, not
 *  an error of the worker: its result stream says why (meta "error", and
 *  the tail of its stderr).
 *
 *  The meta (and the info handed back): {"id", "exit": N | null,
 *  "signal": N | null, "timed_out": bool, "seconds": wall seconds,
 *  "bytes_out": bytes of stdout, stderr and outputs, "stderr_tail":
 *  "...", "error": "..." (only when something besides the command went
 *  wrong)}.
 *
 *  Destroying the worker cancels a running command (its whole process
 *  group is killed) and joins the thread.
 */
#ifndef TF_CMDRUN_H
#define TF_CMDRUN_H

#include <czmq.h>
#include <jansson.h>
#include <stdint.h>

typedef struct cmdrun cmdrun_t;

/*  Start a worker thread whose jobs run in the directory work (created,
 *  mode 0700, and emptied after each job: reused, as are its stdout and
 *  stderr files work.stdout and work.stderr, since creating and deleting
 *  files by the thousand is what costs most on a busy file system). */
cmdrun_t *cmdrun_new (const char *work);

/*  Cancel a running job, stop the thread, null the pointer. Safe on NULL. */
void cmdrun_destroy (cmdrun_t **self_p);

/*  A worker holds up to CMDRUN_DEPTH jobs: one running, the next waiting
 *  behind it, started the moment the first ends (before that one's result
 *  is packed and reported: no round trip through the event loop between
 *  two commands). The node's core counts each of its slots as
 *  CMDRUN_DEPTH places (setup_opts_t's depth). */
#define CMDRUN_DEPTH 2

/*  Hand the worker a job (borrowed). Returns 0, or -1 if it holds
 *  CMDRUN_DEPTH jobs already. */
int cmdrun_start (cmdrun_t *self, const json_t *job);

/*  The socket to poll: readable when a job's outcome waits. */
zsock_t *cmdrun_sock (cmdrun_t *self);

/*  Read the outcome of a job, in the order they were handed over: its
 *  task, the result stream's bytes, whether the task failed, when its
 *  command started (tf_now), and the meta (a new reference, the
 *  caller's). Returns 0, or -1 if what arrived was not an outcome. */
int cmdrun_recv (cmdrun_t *self, uint64_t *task, uint64_t *bytes, int *failed,
                 double *started, json_t **info);

/*  The jobs handed over whose outcome is not yet received. */
int cmdrun_jobs (const cmdrun_t *self);

/*  Workers of this process whose thread is still in its loop: 0 once
 *  every cmdrun_destroy has returned (it waits for the worker). */
int cmdrun_live (void);

#endif
