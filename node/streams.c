/*  streams — result streams up and from the children (streams.h). */
#include "node/streams.h"

#include <stdlib.h>

#include "overlay/config.h"
#include "overlay/util.h"

/*  One result stream, queued or in flight to the parent, or arriving
 *  from a child. */
typedef struct {
    uint64_t task;
    uint32_t node;
    int failed;
    uint64_t bytes;
    uint32_t count, next, acked;   /* chunks: total, sent or received,
                                      acknowledged */
} stream_t;

/*  The stream arriving from one child. */
typedef struct {
    int active;
    stream_t s;
} incoming_t;

struct streams {
    uint32_t chunk_bytes, window;
    stream_t *ups;           /* streams to send up, ring; the head is in
                                flight when up_active */
    uint32_t up_head, up_len, up_cap;
    int up_active;
    incoming_t *in;          /* per child */
    uint64_t results_up, bytes_in, bytes_out;
};

streams_t *
streams_new (uint32_t chunk_bytes, uint32_t window, int nchildren)
{
    streams_t *self = xcalloc (1, sizeof *self);
    self->chunk_bytes = chunk_bytes;
    self->window = window;
    self->in = xcalloc (nchildren, sizeof *self->in);
    return self;
}

void
streams_destroy (streams_t **self_p)
{
    streams_t *self = *self_p;
    if (!self)
        return;
    free (self->ups);
    free (self->in);
    free (self);
    *self_p = NULL;
}

void
streams_push_up (streams_t *self, core_done_t d, uint64_t bytes)
{
    if (self->up_len == self->up_cap) {
        uint32_t cap = self->up_cap ? 2 * self->up_cap : 4;
        stream_t *q = xmalloc (cap * sizeof *q);
        for (uint32_t i = 0; i < self->up_len; i++)
            q[i] = self->ups[(self->up_head + i) % self->up_cap];
        free (self->ups);
        self->ups = q;
        self->up_cap = cap;
        self->up_head = 0;
    }
    self->ups[(self->up_head + self->up_len++) % self->up_cap] = (stream_t){
        .task = d.task, .node = d.node, .failed = d.failed, .bytes = bytes,
        .count = (uint32_t) task_chunk_count (self->chunk_bytes, bytes)};
}

void
streams_pump_up (streams_t *self, core_acts_t *acts)
{
    if (self->up_len == 0)
        return;
    stream_t *u = &self->ups[self->up_head];
    self->up_active = 1;
    while (u->next < u->count && u->next - u->acked < self->window) {
        core_action_t *a = core_acts_emit (acts, CORE_ACT_SEND_RESULT);
        a->task = u->task;
        a->node = u->node;
        a->failed = u->failed;
        a->bytes = u->bytes;
        a->index = u->next;
        a->count = u->count;
        a->offset = (uint64_t) u->next * self->chunk_bytes;
        a->len = task_chunk_len (self->chunk_bytes, u->bytes, u->next);
        u->next++;
    }
}

int
streams_ack_up (streams_t *self, uint64_t task, uint32_t index, core_acts_t *acts,
                char *err, size_t errlen)
{
    stream_t *u = self->up_len ? &self->ups[self->up_head] : NULL;
    if (!u || !self->up_active || task != u->task || index != u->acked
        || index >= u->next)
        return tf_error (err, errlen, "ack of result chunk %u of task %llu, none "
                         "such awaited", index, (unsigned long long) task);
    self->bytes_out += task_chunk_len (self->chunk_bytes, u->bytes, index);
    if (++u->acked < u->count)
        return 0;
    self->results_up++;
    core_acts_emit (acts, CORE_ACT_RELEASE_RESULT)->task = u->task;
    self->up_head = (self->up_head + 1) % self->up_cap;
    self->up_len--;
    self->up_active = 0;
    return 0;
}

void
streams_drop_up (streams_t *self, core_acts_t *acts)
{
    for (uint32_t i = 0; i < self->up_len; i++)
        core_acts_emit (acts, CORE_ACT_RELEASE_RESULT)->task =
            self->ups[(self->up_head + i) % self->up_cap].task;
    self->up_head = self->up_len = 0;
    self->up_active = 0;
}

int
streams_receiving (const streams_t *self, int c)
{
    return self->in[c].active;
}

int
streams_check_result (const streams_t *self, const core_event_t *ev, int given,
                      char *err, size_t errlen)
{
    const incoming_t *in = &self->in[ev->child];
    if (ev->bytes == 0 || ev->bytes > CONFIG_MAX_STREAM_BYTES
        || ev->count != task_chunk_count (self->chunk_bytes, ev->bytes)
        || ev->index >= ev->count
        || ev->len != task_chunk_len (self->chunk_bytes, ev->bytes, ev->index))
        return tf_error (err, errlen, "result chunk %u/%u of task %llu: %llu of %llu "
                         "bytes is malformed", ev->index, ev->count,
                         (unsigned long long) ev->task, (unsigned long long) ev->len,
                         (unsigned long long) ev->bytes);
    if (!in->active && !given)
        return tf_error (err, errlen, "result of task %llu, which was never given to "
                         "that child (or came back already)",
                         (unsigned long long) ev->task);
    const stream_t *r = &in->s;
    if (in->active ? (ev->task != r->task || ev->node != r->node
                      || ev->bytes != r->bytes || ev->index != r->next
                      || (ev->failed != 0) != r->failed)
                   : ev->index != 0)
        return tf_error (err, errlen, "result chunk %u of task %llu out of order",
                         ev->index, (unsigned long long) ev->task);
    return 0;
}

int
streams_take_result (streams_t *self, const core_event_t *ev, core_acts_t *acts,
                     core_done_t *d)
{
    incoming_t *in = &self->in[ev->child];
    if (!in->active) {
        in->active = 1;
        in->s = (stream_t){.task = ev->task, .node = ev->node,
                           .failed = ev->failed != 0, .bytes = ev->bytes,
                           .count = ev->count};
    }
    in->s.next++;
    self->bytes_in += ev->len;
    core_action_t *a = core_acts_emit (acts, CORE_ACT_ACK_RESULT);
    a->child = ev->child;
    a->task = ev->task;
    a->index = ev->index;
    if (in->s.next < in->s.count)
        return 0;
    in->active = 0;
    *d = (core_done_t){.task = ev->task, .node = ev->node, .failed = in->s.failed};
    return 1;
}

void
streams_drop_child (streams_t *self, int c, core_acts_t *acts)
{
    if (self->in[c].active)
        core_acts_emit (acts, CORE_ACT_DROP_RESULT)->task = self->in[c].s.task;
    self->in[c].active = 0;
}

void
streams_add_stats (const streams_t *self, core_stats_t *stats)
{
    stats->results_up += self->results_up;
    stats->result_bytes_in += self->bytes_in;
    stats->result_bytes_out += self->bytes_out;
}
