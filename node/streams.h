/*  streams — commands' result streams: those a node sends up to its
 *  parent, one at a time in the order their commands finished, and those
 *  arriving from each child, one per child at a time.
 *
 *  A result stream is a command's completion and its outputs, in chunks
 *  of chunk_bytes acked one by one, at most window unacknowledged
 *  (docs/tasks.md). Pure: actions (SEND_RESULT, RELEASE_RESULT,
 *  ACK_RESULT, DROP_RESULT) are appended to the caller's list.
 */
#ifndef TF_STREAMS_H
#define TF_STREAMS_H

#include <stddef.h>
#include <stdint.h>

#include "node/coretask.h"

typedef struct streams streams_t;

/*  Create with nothing queued nor arriving, for nchildren children. */
streams_t *streams_new (uint32_t chunk_bytes, uint32_t window, int nchildren);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void streams_destroy (streams_t **self_p);

/*  Queue the result stream of completion d, of bytes (> 0), to go up. */
void streams_push_up (streams_t *self, core_done_t d, uint64_t bytes);

/*  Send the oldest queued stream's chunks while the window allows. */
void streams_pump_up (streams_t *self, core_acts_t *acts);

/*  The parent acknowledged chunk index of task's stream. At its last
 *  ack, the stream is done: RELEASE_RESULT, and the next may go. Returns
 *  0, or -1 with a message in err (nothing changed) for an ack not
 *  awaited. */
int streams_ack_up (streams_t *self, uint64_t task, uint32_t index, core_acts_t *acts,
                    char *err, size_t errlen);

/*  The parent is lost (core ORPHANED): every stream queued or half sent
 *  up is dropped, unsent, with RELEASE_RESULT each (its spool is freed). */
void streams_drop_up (streams_t *self, core_acts_t *acts);

/*  1 if a result stream is arriving from child c, else 0. */
int streams_receiving (const streams_t *self, int c);

/*  Does result chunk ev (a RESULT event from child ev->child, checked)
 *  fit: sizes within limits and consistent, and in order within the
 *  child's stream (a new stream, whose task given says was given to the
 *  child, from chunk 0)? Returns 0, or -1 with a message in err. */
int streams_check_result (const streams_t *self, const core_event_t *ev, int given,
                          char *err, size_t errlen);

/*  Take a result chunk streams_check_result accepted, and ACK_RESULT it.
 *  Returns 1 when it completes the stream, with the completion in *d;
 *  else 0. */
int streams_take_result (streams_t *self, const core_event_t *ev, core_acts_t *acts,
                         core_done_t *d);

/*  Child c is lost: a stream half arrived from it is dropped
 *  (DROP_RESULT). */
void streams_drop_child (streams_t *self, int c, core_acts_t *acts);

/*  Add the streams' counters (results_up, result_bytes_in,
 *  result_bytes_out) to *stats. */
void streams_add_stats (const streams_t *self, core_stats_t *stats);

#endif
