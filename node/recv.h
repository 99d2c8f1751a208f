/*  recv — the transfer a node receives from its parent: the tasks asked
 *  for and not arrived, the task arriving now and how far, the bytes
 *  received by time, and whether a chunk fits.
 *
 *  A chunk is checked before anything is used: a task of the bag (or a
 *  calibration probe), chunk 0 of a task asked for or the next chunk of
 *  the one arriving, and sizes (the task's total, its chunk count, this
 *  chunk's length, its units) exactly those of the task this node
 *  expects: the experiment's task_bytes in chunks of chunk_bytes and
 *  task_units for a synthetic task or a probe, a declared size of 1 to
 *  CONFIG_MAX_STREAM_BYTES for a command. So the runtime may size a
 *  buffer from an accepted chunk.
 *
 *  Pure: time is passed in.
 */
#ifndef TF_RECV_H
#define TF_RECV_H

#include <stddef.h>
#include <stdint.h>

#include "node/coretask.h"

typedef struct recv recv_t;

typedef struct {
    uint64_t task_count;     /* tasks in the bag */
    uint64_t command_tasks;  /* tasks 0 .. command_tasks-1 are commands */
    double task_units;       /* a synthetic task's units and bytes */
    uint64_t task_bytes;
    uint32_t chunk_bytes;    /* > 0 */
    uint32_t nnodes;         /* bounds the nodes a command avoids */
    double meter_window;     /* seconds, > 0 */
} recv_cfg_t;

/*  What taking a chunk did (recv_take_chunk), as bits. */
#define RECV_HELD 1          /* the task is held from this chunk on: a
                                synthetic task from its first (cut-through),
                                a command from its last; never a probe */
#define RECV_LAST 2          /* the task's last chunk: it is whole */

/*  Create with nothing asked nor arriving; cfg is copied. */
recv_t *recv_new (const recv_cfg_t *cfg);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void recv_destroy (recv_t **self_p);

/*  Does chunk ev (a CHUNK event) fit the transfer: the task arriving, or
 *  a new one asked for (a probe needs no asking) from chunk 0, in order,
 *  of the sizes expected? Returns 0, or -1 with a message in err.
 *  Changes nothing. */
int recv_check_chunk (const recv_t *self, const core_event_t *ev, char *err,
                      size_t errlen);

/*  Take a chunk recv_check_chunk accepted: the task it belongs to in
 *  *task (with the nodes it avoids). Returns RECV_HELD and RECV_LAST bits;
 *  a task held stops counting as asked for. */
int recv_take_chunk (recv_t *self, const core_event_t *ev, task_t *task);

/*  Tasks asked of the parent and not arrived (held). */
uint32_t recv_pending (const recv_t *self);

/*  n more tasks are asked of the parent. */
void recv_add_pending (recv_t *self, uint32_t n);

/*  The parent dropped n of our unserved asks (a RECLAIM): no longer
 *  pending. Returns 0, or -1 (nothing changed) when fewer than n are
 *  pending. */
int recv_drop_pending (recv_t *self, uint32_t n);

/*  The parent is lost (core ORPHANED): the task arriving, if any, will
 *  not be finished; forget it. The asks pending are left to
 *  recv_drop_pending. */
void recv_abandon (recv_t *self);

/*  1 if task is arriving now (held in part), else 0. */
int recv_arriving (const recv_t *self, uint64_t task);

/*  The task arriving now and its chunks here, for cut-through: returns 1
 *  with them in *task and *held, or 0 when none is arriving. */
int recv_progress (const recv_t *self, uint64_t *task, uint32_t *held);

/*  Start the meter at now (0 bytes). */
void recv_mark_meter (recv_t *self, double now);

/*  Bytes received since the meter started (every chunk's payload). */
double recv_bytes (const recv_t *self);

/*  Bytes per second received over the last meter window before now. */
double recv_rate (recv_t *self, double now);

#endif
