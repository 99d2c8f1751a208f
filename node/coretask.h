/*  coretask — what the core's parts share: a task as the core holds it,
 *  the chunk arithmetic of a stream, and the action list they append to.
 *
 *  Private to the core (node/core.c, ledger, xfer, recv, streams); the
 *  runtime sees only node/core.h.
 */
#ifndef TF_CORETASK_H
#define TF_CORETASK_H

#include <stdint.h>
#include <string.h>

#include "node/core.h"
#include "overlay/util.h"

/*  A deadline core_next_deadline announced counts as reached within this
 *  many seconds: a driver that adds the announced delay to its clock may
 *  land an ulp short (a + (b - a) < b in floating point), and must not be
 *  told to wait an ulp more, forever. A nanosecond is far below any
 *  chunk time or batch delay. */
#define CORE_TIME_EPS 1e-9

/*  One task: its id, compute units, payload bytes, kind, whether its
 *  input could be read when the root last took it (core_task_info_t),
 *  and the nodes a command failed on. */
typedef struct {
    uint64_t id;
    double units;
    uint64_t bytes;
    core_kind_t kind;
    int unreadable;
    uint32_t navoid;
    uint32_t avoid[CORE_MAX_AVOID];   /* nodes a command failed on */
} task_t;

/*  Chunks of chunk_bytes in a stream of bytes (an empty one is one empty
 *  chunk). */
static inline uint64_t
task_chunk_count (uint32_t chunk_bytes, uint64_t bytes)
{
    return bytes == 0 ? 1 : (bytes + chunk_bytes - 1) / chunk_bytes;
}

/*  The length of chunk index of a stream of bytes. */
static inline uint64_t
task_chunk_len (uint32_t chunk_bytes, uint64_t bytes, uint32_t index)
{
    uint64_t left = bytes - (uint64_t) index * chunk_bytes;
    return left < chunk_bytes ? left : chunk_bytes;
}

/*  1 if t failed on node before, else 0. */
static inline int
task_avoids (const task_t *t, uint32_t node)
{
    for (uint32_t i = 0; i < t->navoid; i++)
        if (t->avoid[i] == node)
            return 1;
    return 0;
}

/*  The actions one event produced, in order; reused from event to event. */
typedef struct {
    core_action_t *items;
    int n, cap;
} core_acts_t;

/*  Append a zeroed action of type and return it (valid until the next
 *  append). */
static inline core_action_t *
core_acts_emit (core_acts_t *acts, core_action_type_t type)
{
    if (acts->n == acts->cap) {
        acts->cap = acts->cap ? 2 * acts->cap : 16;
        acts->items = xrealloc (acts->items, (size_t) acts->cap * sizeof *acts->items);
    }
    core_action_t *a = &acts->items[acts->n++];
    memset (a, 0, sizeof *a);
    a->type = type;
    return a;
}

#endif
