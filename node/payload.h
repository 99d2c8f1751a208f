/*  payload — the bytes of synthetic tasks a node holds to forward them.
 *
 *  A relay keeps each arriving task's chunks until the task is computed
 *  here or forwarded (the core's RELEASE), and serves chunk i of a task
 *  from them, possibly while later chunks are still arriving (the core's
 *  cut-through relaying, docs/architecture.md). A task not held (on the
 *  root, which makes the bag's payloads, or on a node sending a task again
 *  after the child it went to was lost) is made: its id's low byte,
 *  repeated, the root's pattern.
 *
 *  How the bytes are kept depends on the chunk size:
 *  - chunks of at least PAYLOAD_FRAME_MIN bytes are kept as the frames
 *    they arrived in, never copied; a chunk is sent on from the same
 *    libzmq message (zframe_send with ZFRAME_REUSE shares it, reference
 *    counted), so a relay copies no payload byte in user space;
 *  - smaller chunks are copied into one buffer of the task's size: a frame
 *    per small chunk costs more in headers than it carries, and libzmq
 *    may receive a message of up to its 8 KiB batch into a shared buffer,
 *    which keeping the frame would pin whole.
 *  The root's pattern frames are made once per byte value and sent the
 *  same way, shared, so the root neither allocates nor fills a chunk per
 *  send.
 *
 *  Every frame payload_chunk returns is borrowed (valid until the next
 *  call on the store) and is meant to be sent with ZFRAME_REUSE. No
 *  sockets, no clock: tests/test_payload.c drives it directly.
 */
#ifndef TF_PAYLOAD_H
#define TF_PAYLOAD_H

#include <czmq.h>
#include <stdint.h>

/*  Chunks this large or larger are kept as frames, not copied. Well above
 *  libzmq's receive batch (ZMQ_IN_BATCH_SIZE, 8 KiB), so every frame kept
 *  owns its own allocation; a task of the largest size (2^30 bytes) has
 *  at most 16384 of them. */
#define PAYLOAD_FRAME_MIN (64u << 10)

typedef struct payload_store payload_store_t;

/*  A store for tasks moved in chunks of chunk_bytes (> 0). */
payload_store_t *payload_store_new (uint32_t chunk_bytes);
void payload_store_destroy (payload_store_t **self_p);

/*  Keep chunk index of task, whose payload is bytes long, taking the frame
 *  (*frame_p is NULLed, and destroyed when refused). The caller's core has
 *  accepted the chunk: it is the task's next, of the right length, and
 *  bytes is at most 2^30 (CONFIG_MAX_TASK_BYTES). Returns 0, or -1 if the
 *  chunk does not follow what is held of the task (the caller's bug). */
int payload_put (payload_store_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                 zframe_t **frame_p);

/*  The bytes [offset, offset + len) of task, its chunk index, as a frame
 *  borrowed until the next call on the store: the held bytes, or the
 *  pattern when nothing of task is held. NULL if task is held but not that
 *  chunk yet (the caller asked for a chunk before it arrived). */
zframe_t *payload_chunk (payload_store_t *self, uint64_t task, uint32_t index,
                         uint64_t offset, uint64_t len);

/*  Drop what is held of task. */
void payload_release (payload_store_t *self, uint64_t task);

/*  The node keeps the memory its payload arrives in for the next tasks.
 *  With chunks of PAYLOAD_FRAME_MIN or more, libzmq mallocs every
 *  arriving message larger than its batch, in its I/O thread, and the
 *  node frees it once the chunk is acknowledged (a leaf) or forwarded (a
 *  relay); glibc's defaults give such memory back to the kernel as soon
 *  as a heap's top holds twice the largest block freed, so the next
 *  chunk's pages fault in again, zeroed by the kernel (a 1.5 GiB edge of
 *  64 MiB tasks: about 60,000 page faults and a sixth of the nodes' CPU
 *  time). With smaller chunks a relay holds each task in one buffer of
 *  the task's size; glibc's threshold for mmap is fixed at 128 KiB once
 *  any trim threshold is set (tf_heap_reserve sets one), so every task
 *  over that was a fresh mmap, faulted in and unmapped (seen: 174 of 200
 *  tasks of 1 MiB through a relay with 16 KiB chunks). So, for any chunk
 *  size: allocations up to PAYLOAD_MMAP_MAX come from the heap, and up to
 *  PAYLOAD_TRIM bytes free at a heap's top stay the process's (never more
 *  than the node once used: the heap only keeps what it grew to). */
#define PAYLOAD_MMAP_MAX (32u << 20)   /* glibc's largest mmap threshold */
#define PAYLOAD_TRIM (16u << 20)
void payload_tune_allocator (void);

/*  Tasks held, and payload bytes held over all of them. */
size_t payload_tasks (const payload_store_t *self);
uint64_t payload_bytes (const payload_store_t *self);

#endif
