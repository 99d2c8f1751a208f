/*  engine_int — what the engine's front (engine.c) and its actor
 *  (engine_actor.c) share: the pipe's frames and the actor's entry.
 *  Private to the two.
 */
#ifndef TF_ENGINE_INT_H
#define TF_ENGINE_INT_H

#include <czmq.h>
#include <stdint.h>

#include "node/engine.h"

#define ENGINE_MIN_N 2
#define ENGINE_MAX_N 16384
#define ENGINE_SEED 0x7472ee           /* every node: the same matrix */
#define ENGINE_BLOCK_MACS 65536        /* real: work between pipe checks */
/* A report is due once this much of the period has passed, so that a
 * slice waking a hair early does not skip a beat. */
#define ENGINE_PROGRESS_DUE 0.9
/* A nap shorter than this is not slept: the actor reads the clock again
 * (a task of a few microseconds or less spins that long), since a sleep
 * costs a system call and a wake-up of about this much anyway. */
#define ENGINE_MIN_NAP 2e-6

/*  The pipe's 8-byte frames, in host byte order (both ends are threads of
 *  one process). frame_pop_8 returns 0, or -1 if the frame is missing or
 *  has the wrong size. */
void frame_put_u64 (zmsg_t *msg, uint64_t value);
void frame_put_f64 (zmsg_t *msg, double value);
int frame_pop_8 (zmsg_t *msg, void *out);

/*  The actor: args is the engine_cfg_t (copied at start). */
void engine_actor (zsock_t *pipe, void *args);

#endif
