/*  inbound — the core events that travel between nodes, as wire
 *  messages and back.
 *
 *  inbound_encode makes the message that stands for an event
 *  node/route.h routes to a peer (the sender, node/act.c); inbound_from_*
 *  is its inverse at the receiver: a decoded message (overlay/proto.h)
 *  in, the core event it stands for out, or the reason it is refused: a
 *  command a peer of that side never sends. Pure: no socket, no clock
 *  (the time is the caller's), no state. Whether the core accepts the
 *  event is the core's to say.
 */
#ifndef TF_INBOUND_H
#define TF_INBOUND_H

#include <stddef.h>

#include "node/core.h"
#include "overlay/proto.h"

/*  What inbound_from_child found. */
typedef enum {
    INBOUND_REFUSED = -1,    /* not a message a child sends: why says */
    INBOUND_EVENT = 0,       /* a core event, in *ev */
    INBOUND_SUBTREE = 1,     /* SUBTREE: the child's subtree bounds, for
                                the runtime (node/subtree.h), no event */
} inbound_kind_t;

/*  The wire message for ev, an event route_action made for the parent
 *  (REQUEST, ACK, DONE, RESULT) or a child (CHUNK, RESULT_ACK). CHUNK and
 *  RESULT take *payload_p, the chunk's bytes (NULL: sent apart, as a
 *  frame the caller shares; *payload_p is set NULL either way). A DONE
 *  carries each completion's task, node, and for commands failed and
 *  attempts. Returns a new message, or NULL for any other event type. */
zmsg_t *inbound_encode (const core_event_t *ev, zframe_t **payload_p);

/*  DONE (child -> parent) or RECORDED (root -> controller) of n
 *  completions d, as the wire has them (overlay/proto.h, proto_done:
 *  info_p, may be NULL, is taken). The one conversion of core completions
 *  to the wire's; inbound_encode uses it for DONE. */
zmsg_t *inbound_encode_done (proto_command_t command, const core_done_t *d, uint32_t n,
                             json_t **info_p);

/*  A message from the parent at now: CHUNK (its length the payload's
 *  size) or RESULT_ACK. Returns 0 and fills *ev (its avoid list borrowed
 *  from m), or -1 with the command's name in why for anything else. */
int inbound_from_parent (const proto_msg_t *m, double now, core_event_t *ev, char *why,
                         size_t whylen);

/*  A message from child `slot` at now: REQUEST, ACK, DONE, RESULT (its
 *  length the payload's size) as an event; SUBTREE; anything else
 *  refused with the command's name in why. A DONE's completions (task
 *  and node of each) go in a new array in *done, which ev->done points
 *  to and the caller frees; *done is NULL for every other message. */
inbound_kind_t inbound_from_child (const proto_msg_t *m, int slot, double now,
                                   core_event_t *ev, core_done_t **done, char *why,
                                   size_t whylen);

#endif
