/*  route — where a core's action goes, and the event it becomes there.
 *
 *  Every driver of the decision core (the ZeroMQ runtime, node/act.c;
 *  the in-memory drivers of tests/test_core.c and tests/test_drive.c; a
 *  simulator with its own network model) carries a core's actions out the
 *  same way: each action is for the parent's core, one child's core, the
 *  node's own compute worker, the controller, or the node itself; where
 *  it reaches another core it becomes exactly one event there. This is
 *  that rule, written once. The runtime encodes the event as the wire
 *  message and the receiving node decodes it back (node/inbound.h); an
 *  in-memory driver delivers the event as it is.
 *
 *  Pure: no socket, no clock, no allocation.
 */
#ifndef TF_ROUTE_H
#define TF_ROUTE_H

#include "node/core.h"

typedef enum {
    ROUTE_SELF = 0,          /* the node's own bookkeeping, no event:
                                RELEASE, RELEASE_RESULT, DROP_RESULT,
                                RETRY */
    ROUTE_PARENT,            /* an event for the parent's core: REQUEST,
                                ACK, DONE, RESULT, RETURNED */
    ROUTE_CHILD,             /* an event for the core of child slot
                                `child`: CHUNK, RESULT_ACK, RECLAIM */
    ROUTE_WORKER,            /* the node's own engine or command worker
                                starts the task (the action's units and
                                kind); the event is the COMPUTED it
                                answers with when done, whose bytes and
                                failed the worker fills in */
    ROUTE_CONTROLLER,        /* root: RECORDED, FINISHED; no core event */
    ROUTE_COUNT
} route_to_t;

/*  The destination's name ("parent", "child", ...), "?" out of range. */
const char *route_to_str (route_to_t to);

typedef struct {
    route_to_t to;
    int child;               /* ROUTE_CHILD: the slot it goes to */
    core_event_t ev;         /* ROUTE_PARENT, ROUTE_CHILD, ROUTE_WORKER:
                                the event at the destination, its `now`
                                0 (the driver gives it the time it
                                arrives); otherwise all zero */
} route_t;

/*  Route action `a` of a node that is child `slot` of its parent (the
 *  slot an event for the parent carries; ignored on the root). Fills
 *  *out and returns 0, or returns -1 for an action type out of range.
 *  The event borrows from `a`: its done entries (DONE) and avoid list
 *  (CHUNK, NULL when empty) stay valid as long as the action does (until
 *  the source core's next core_handle); a driver that delivers the event
 *  later copies them. */
int route_action (const core_action_t *a, int slot, route_t *out);

#endif
