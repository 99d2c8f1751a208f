/*  inbound — a peer's message as a core event. See inbound.h. */
#include "node/inbound.h"

#include <stdio.h>

#include "overlay/util.h"

/*  The length of a chunk's bytes: its payload frame's size. */
static uint64_t
payload_len (const proto_msg_t *m)
{
    return m->payload ? zframe_size (m->payload) : 0;
}

zmsg_t *
inbound_encode_done (proto_command_t command, const core_done_t *d, uint32_t n,
                     json_t **info_p)
{
    proto_done_t *done = xcalloc (n + 1, sizeof *done);
    for (uint32_t i = 0; i < n; i++)
        done[i] = (proto_done_t){.task = d[i].task, .node = d[i].node,
                                 .failed = d[i].failed, .attempts = d[i].attempts};
    zmsg_t *msg = proto_done (command, done, n, info_p);
    free (done);
    return msg;
}

zmsg_t *
inbound_encode (const core_event_t *ev, zframe_t **payload_p)
{
    switch (ev->type) {
    case CORE_EV_REQUEST:
        return proto_request (ev->n);
    case CORE_EV_ACK:
        return proto_ack (ev->task, ev->index);
    case CORE_EV_DONE:
        return inbound_encode_done (PROTO_DONE, ev->done, ev->ndone, NULL);
    case CORE_EV_RESULT:
        return proto_result (ev->task, ev->node, ev->failed, ev->bytes, ev->index,
                             ev->count, payload_p);
    case CORE_EV_CHUNK:
        return proto_chunk (ev->task, ev->units, ev->bytes, ev->index, ev->count,
                            ev->kind, ev->avoid, ev->navoid, payload_p);
    case CORE_EV_RESULT_ACK:
        return proto_result_ack (ev->task, ev->index);
    case CORE_EV_RECLAIM:
        return proto_reclaim (ev->n, ev->count);
    case CORE_EV_CANCEL:
        return proto_cancel (ev->task);
    case CORE_EV_EMPTY:
        return proto_empty (PROTO_BAG_EMPTY);
    case CORE_EV_RETURNED:
        return inbound_encode_done (PROTO_RETURN, ev->done, ev->ndone, NULL);
    default:
        return NULL;
    }
}

static int
refuse (const proto_msg_t *m, char *why, size_t whylen)
{
    snprintf (why, whylen, "%s", proto_command_str (m->command));
    return -1;
}

int
inbound_from_parent (const proto_msg_t *m, double now, core_event_t *ev, char *why,
                     size_t whylen)
{
    if (m->command == PROTO_RESULT_ACK) {
        *ev = (core_event_t){.type = CORE_EV_RESULT_ACK, .now = now, .task = m->task,
                             .index = m->index};
        return 0;
    }
    if (m->command == PROTO_RECLAIM) {
        *ev = (core_event_t){.type = CORE_EV_RECLAIM, .now = now, .n = m->n,
                             .count = m->count};
        return 0;
    }
    if (m->command == PROTO_CANCEL || m->command == PROTO_BAG_EMPTY) {
        *ev = (core_event_t){.type = m->command == PROTO_CANCEL ? CORE_EV_CANCEL
                                                                : CORE_EV_EMPTY,
                             .now = now, .task = m->task};
        return 0;
    }
    if (m->command != PROTO_CHUNK)
        return refuse (m, why, whylen);
    *ev = (core_event_t){.type = CORE_EV_CHUNK, .now = now, .task = m->task,
                         .units = m->units, .bytes = m->bytes, .index = m->index,
                         .count = m->count, .len = payload_len (m),
                         .kind = (core_kind_t) m->kind, .avoid = m->avoid,
                         .navoid = m->navoid};
    return 0;
}

/*  DONE, RETURN: each entry's task and node. */
static core_done_t *
done_list (const proto_msg_t *m)
{
    core_done_t *done = xcalloc (m->ndone + 1, sizeof *done);
    for (uint32_t i = 0; i < m->ndone; i++)
        done[i] = (core_done_t){.task = m->done[i].task, .node = m->done[i].node};
    return done;
}

inbound_kind_t
inbound_from_child (const proto_msg_t *m, int slot, double now, core_event_t *ev,
                    core_done_t **done, char *why, size_t whylen)
{
    *done = NULL;
    *ev = (core_event_t){.now = now, .child = slot};
    switch (m->command) {
    case PROTO_REQUEST:
        ev->type = CORE_EV_REQUEST;
        ev->n = m->n;
        return INBOUND_EVENT;
    case PROTO_ACK:
        ev->type = CORE_EV_ACK;
        ev->task = m->task;
        ev->index = m->index;
        return INBOUND_EVENT;
    case PROTO_DONE:
    case PROTO_RETURN:
        ev->type = m->command == PROTO_DONE ? CORE_EV_DONE : CORE_EV_RETURNED;
        ev->ndone = m->ndone;
        ev->done = *done = done_list (m);
        return INBOUND_EVENT;
    case PROTO_RESULT:
        *ev = (core_event_t){.type = CORE_EV_RESULT, .now = now, .child = slot,
                             .task = m->task, .node = m->node, .failed = m->failed,
                             .bytes = m->bytes, .index = m->index, .count = m->count,
                             .len = payload_len (m)};
        return INBOUND_EVENT;
    case PROTO_SUBTREE:
        return INBOUND_SUBTREE;
    default:
        refuse (m, why, whylen);
        return INBOUND_REFUSED;
    }
}
