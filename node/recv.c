/*  recv — the transfer from the parent, and chunk validation (recv.h). */
#include "node/recv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/meter.h"
#include "overlay/config.h"
#include "overlay/util.h"

struct recv {
    recv_cfg_t cfg;
    int active;              /* a task is arriving */
    task_t task;             /* the task arriving */
    uint32_t count, next;    /* its chunks: total, arrived */
    uint64_t got;            /* its bytes arrived */
    uint32_t pending;        /* asked of the parent, not yet held */
    meter_t *meter;          /* bytes received, by time */
};

recv_t *
recv_new (const recv_cfg_t *cfg)
{
    recv_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    self->meter = meter_new (cfg->meter_window);
    return self;
}

void
recv_destroy (recv_t **self_p)
{
    recv_t *self = *self_p;
    if (!self)
        return;
    meter_destroy (&self->meter);
    free (self);
    *self_p = NULL;
}

/*  The payload bytes and compute units this node expects of task: every
 *  synthetic task of the bag, and every probe, is the experiment's; a
 *  command task declares its own size, of 1 to CONFIG_MAX_STREAM_BYTES,
 *  and must be a command of the bag, its kind as the task's id says. */
static task_t
expected_task (const recv_t *self, const core_event_t *ev)
{
    task_t t = {.id = ev->task, .units = self->cfg.task_units,
                .bytes = self->cfg.task_bytes, .kind = CORE_KIND_SYNTHETIC};
    if (ev->task < self->cfg.command_tasks) {
        t.kind = CORE_KIND_COMMAND;
        t.bytes = ev->bytes > 0 && ev->bytes <= CONFIG_MAX_STREAM_BYTES ? ev->bytes : 1;
        t.units = ev->units;
    }
    return t;
}

/*  A chunk's kind and the nodes it avoids. */
static int
check_kind (const recv_t *self, const core_event_t *ev, task_t want, char *err,
            size_t errlen)
{
    if (ev->kind != want.kind)
        return tf_error (err, errlen, "chunk of task %llu claims kind %d, the task is "
                         "kind %d", (unsigned long long) ev->task, (int) ev->kind,
                         (int) want.kind);
    if (ev->navoid > CORE_MAX_AVOID || (ev->navoid > 0 && !ev->avoid)
        || (ev->navoid > 0 && want.kind != CORE_KIND_COMMAND))
        return tf_error (err, errlen, "chunk of task %llu avoids %u nodes",
                         (unsigned long long) ev->task, ev->navoid);
    for (uint32_t i = 0; i < ev->navoid; i++)
        if (ev->avoid[i] >= self->cfg.nnodes)
            return tf_error (err, errlen, "chunk of task %llu avoids node %u of %u",
                             (unsigned long long) ev->task, ev->avoid[i],
                             self->cfg.nnodes);
    return 0;
}

/*  A chunk's sizes against what the task must be: its total, its chunk
 *  count, this chunk's length and the task's units, before any of them
 *  is used. */
static int
check_sizes (const recv_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    task_t want = expected_task (self, ev);
    uint32_t cb = self->cfg.chunk_bytes;
    if (check_kind (self, ev, want, err, errlen))
        return -1;
    if (ev->bytes != want.bytes)
        return tf_error (err, errlen, "chunk of task %llu claims %llu bytes, the task "
                         "has %llu", (unsigned long long) ev->task,
                         (unsigned long long) ev->bytes, (unsigned long long) want.bytes);
    if (ev->count != task_chunk_count (cb, want.bytes) || ev->index >= ev->count)
        return tf_error (err, errlen, "chunk %u of %u of task %llu: the task has %llu "
                         "chunks", ev->index, ev->count, (unsigned long long) ev->task,
                         (unsigned long long) task_chunk_count (cb, want.bytes));
    if (ev->len != task_chunk_len (cb, want.bytes, ev->index))
        return tf_error (err, errlen, "chunk %u of task %llu has %llu bytes, expected "
                         "%llu", ev->index, (unsigned long long) ev->task,
                         (unsigned long long) ev->len,
                         (unsigned long long) task_chunk_len (cb, want.bytes, ev->index));
    if (!isfinite (ev->units) || ev->units != want.units)
        return tf_error (err, errlen, "chunk of task %llu claims %g units, the task "
                         "has %g", (unsigned long long) ev->task, ev->units, want.units);
    return 0;
}

/*  Does the chunk continue the transfer: chunk 0 of a task asked for (a
 *  probe needs no asking), or the next of the task arriving? */
static int
check_order (const recv_t *self, const core_event_t *ev, int probe, char *err,
             size_t errlen)
{
    if (!self->active) {
        if (ev->index != 0)
            return tf_error (err, errlen, "task %llu starts at chunk %u, not 0",
                             (unsigned long long) ev->task, ev->index);
        if (self->pending == 0 && !probe)
            return tf_error (err, errlen, "task %llu arrived unasked",
                             (unsigned long long) ev->task);
    }
    else if (ev->task != self->task.id || ev->index != self->next
             || ev->count != self->count || ev->bytes != self->task.bytes)
        return tf_error (err, errlen, "chunk %u/%u of task %llu while expecting "
                         "chunk %u/%u of task %llu", ev->index, ev->count,
                         (unsigned long long) ev->task, self->next, self->count,
                         (unsigned long long) self->task.id);
    return 0;
}

int
recv_check_chunk (const recv_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    int probe = ev->task == CORE_PROBE_TASK;
    if (ev->task >= self->cfg.task_count && !probe)
        return tf_error (err, errlen, "chunk of task %llu, the bag has %llu",
                         (unsigned long long) ev->task,
                         (unsigned long long) self->cfg.task_count);
    if (ev->count == 0 || ev->index >= ev->count || !(ev->units > 0))
        return tf_error (err, errlen, "chunk %u of %u of task %llu is malformed",
                         ev->index, ev->count, (unsigned long long) ev->task);
    if (check_sizes (self, ev, err, errlen) || check_order (self, ev, probe, err, errlen))
        return -1;
    uint64_t got = self->active ? self->got : 0;
    int last = ev->index + 1 == ev->count;
    if (ev->len > ev->bytes - got || (last && got + ev->len != ev->bytes))
        return tf_error (err, errlen, "chunk %u/%u of task %llu has %llu bytes, "
                         "inconsistent with the task's %llu", ev->index, ev->count,
                         (unsigned long long) ev->task, (unsigned long long) ev->len,
                         (unsigned long long) ev->bytes);
    return 0;
}

int
recv_take_chunk (recv_t *self, const core_event_t *ev, task_t *task)
{
    int probe = ev->task == CORE_PROBE_TASK;
    int last = ev->index + 1 == ev->count;
    if (!self->active) {
        self->active = 1;
        self->task = (task_t){.id = ev->task, .units = ev->units, .bytes = ev->bytes,
                              .kind = ev->kind, .navoid = ev->navoid};
        if (ev->navoid > 0)
            memcpy (self->task.avoid, ev->avoid, ev->navoid * sizeof *ev->avoid);
        self->count = ev->count;
        self->next = 0;
        self->got = 0;
    }
    self->next++;
    self->got += ev->len;
    meter_add (self->meter, ev->now, (double) ev->len);
    *task = self->task;
    int held = ev->kind == CORE_KIND_SYNTHETIC ? ev->index == 0 : last;
    held = held && !probe;
    if (held)
        self->pending--;
    if (last)
        self->active = 0;
    return (held ? RECV_HELD : 0) | (last ? RECV_LAST : 0);
}

int
recv_drop_pending (recv_t *self, uint32_t n)
{
    if (n > self->pending)
        return -1;
    self->pending -= n;
    return 0;
}

void
recv_abandon (recv_t *self)
{
    self->active = 0;
}

uint32_t
recv_pending (const recv_t *self)
{
    return self->pending;
}

void
recv_add_pending (recv_t *self, uint32_t n)
{
    self->pending += n;
}

int
recv_arriving (const recv_t *self, uint64_t task)
{
    return self->active && task == self->task.id;
}

int
recv_progress (const recv_t *self, uint64_t *task, uint32_t *held)
{
    *task = self->task.id;
    *held = self->next;
    return self->active;
}

void
recv_mark_meter (recv_t *self, double now)
{
    meter_add (self->meter, now, 0);
}

double
recv_bytes (const recv_t *self)
{
    return meter_total (self->meter);
}

double
recv_rate (recv_t *self, double now)
{
    return meter_rate (self->meter, now);
}
