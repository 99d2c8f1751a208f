/*  payload — the bytes of synthetic tasks a node holds. See payload.h. */
#include "node/payload.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

/*  One task's bytes: its chunks as frames, or one buffer. */
typedef struct {
    uint64_t task, bytes, got;   /* got: bytes held */
    uint32_t count, next;        /* chunks in the task, held */
    zframe_t **frames;           /* count of them, when chunks are kept whole */
    byte *data;                  /* bytes long, when chunks are copied */
} held_t;

struct payload_store {
    uint32_t chunk_bytes;
    int frames;                  /* chunks are kept as frames */
    held_t *held;
    size_t nheld, cap;
    uint64_t held_bytes;
    zframe_t *pattern;           /* a full chunk of the root's pattern */
    int pattern_byte;
    zframe_t *scratch;           /* the last frame made for a caller */
};

payload_store_t *
payload_store_new (uint32_t chunk_bytes)
{
    payload_store_t *self = xcalloc (1, sizeof *self);
    self->chunk_bytes = chunk_bytes ? chunk_bytes : 1;
    self->frames = self->chunk_bytes >= PAYLOAD_FRAME_MIN;
    self->pattern_byte = -1;
    return self;
}

static void
held_clear (held_t *h)
{
    for (uint32_t i = 0; h->frames && i < h->next; i++)
        zframe_destroy (&h->frames[i]);
    free (h->frames);
    free (h->data);
}

void
payload_store_destroy (payload_store_t **self_p)
{
    payload_store_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->nheld; i++)
        held_clear (&self->held[i]);
    free (self->held);
    zframe_destroy (&self->pattern);
    zframe_destroy (&self->scratch);
    free (self);
    *self_p = NULL;
}

static held_t *
find (const payload_store_t *self, uint64_t task)
{
    for (size_t i = 0; i < self->nheld; i++)
        if (self->held[i].task == task)
            return &self->held[i];
    return NULL;
}

/*  A new entry for task, its first chunk about to be kept. */
static held_t *
add (payload_store_t *self, uint64_t task, uint64_t bytes)
{
    if (self->nheld == self->cap) {
        self->cap = self->cap ? 2 * self->cap : 8;
        self->held = xrealloc (self->held, self->cap * sizeof *self->held);
    }
    held_t *h = &self->held[self->nheld++];
    uint64_t count = bytes == 0 ? 1 : (bytes + self->chunk_bytes - 1) / self->chunk_bytes;
    *h = (held_t){.task = task, .bytes = bytes, .count = (uint32_t) count};
    if (self->frames)
        h->frames = xcalloc (count, sizeof *h->frames);
    else
        h->data = xmalloc (bytes ? bytes : 1);
    return h;
}

int
payload_put (payload_store_t *self, uint64_t task, uint64_t bytes, uint32_t index,
             zframe_t **frame_p)
{
    held_t *h = find (self, task);
    size_t len = zframe_size (*frame_p);
    uint64_t offset = (uint64_t) index * self->chunk_bytes;
    uint64_t want = offset > bytes || (offset == bytes && bytes > 0) ? UINT64_MAX
                  : bytes - offset < self->chunk_bytes ? bytes - offset : self->chunk_bytes;
    if ((h ? h->bytes != bytes || index != h->next : index != 0) || len != want) {
        zframe_destroy (frame_p);
        return -1;
    }
    if (!h)
        h = add (self, task, bytes);
    if (h->frames) {
        h->frames[index] = *frame_p;
        *frame_p = NULL;
    }
    else {
        memcpy (h->data + offset, zframe_data (*frame_p), len);
        zframe_destroy (frame_p);
    }
    h->next++;
    h->got += len;
    self->held_bytes += len;
    return 0;
}

/*  A frame made for the caller, kept until the next call. */
static zframe_t *
made (payload_store_t *self, zframe_t *frame)
{
    zframe_destroy (&self->scratch);
    self->scratch = frame;
    return frame;
}

/*  len bytes of the root's pattern for task: a full chunk from the frame
 *  kept for its byte, made once per byte value in a row; any other
 *  length made anew. */
static zframe_t *
pattern (payload_store_t *self, uint64_t task, uint64_t len)
{
    int value = (int) (task & 0xff);
    if (len != self->chunk_bytes) {
        zframe_t *f = zframe_new (NULL, len);
        memset (zframe_data (f), value, len);
        return made (self, f);
    }
    if (self->pattern_byte != value) {
        zframe_destroy (&self->pattern);
        self->pattern = zframe_new (NULL, len);
        memset (zframe_data (self->pattern), value, len);
        self->pattern_byte = value;
    }
    return self->pattern;
}

zframe_t *
payload_chunk (payload_store_t *self, uint64_t task, uint32_t index, uint64_t offset,
               uint64_t len)
{
    held_t *h = find (self, task);
    if (!h)
        return pattern (self, task, len);
    if (index >= h->next || offset + len > h->got)
        return NULL;
    if (h->frames)
        return zframe_size (h->frames[index]) == len ? h->frames[index] : NULL;
    return made (self, zframe_new (h->data + offset, len));
}

void
payload_release (payload_store_t *self, uint64_t task)
{
    held_t *h = find (self, task);
    if (!h)
        return;
    self->held_bytes -= h->got;
    held_clear (h);
    *h = self->held[--self->nheld];
}

void
payload_tune_allocator (void)
{
    mallopt (M_MMAP_THRESHOLD, (int) PAYLOAD_MMAP_MAX);
    tf_heap_keep (PAYLOAD_TRIM);
}

size_t
payload_tasks (const payload_store_t *self)
{
    return self->nheld;
}

uint64_t
payload_bytes (const payload_store_t *self)
{
    return self->held_bytes;
}
