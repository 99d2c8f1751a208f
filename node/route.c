/*  route — a core's action to its destination's event. See route.h. */
#include "node/route.h"

static const char *const route_names[ROUTE_COUNT] = {
    [ROUTE_SELF] = "self",
    [ROUTE_PARENT] = "parent",
    [ROUTE_CHILD] = "child",
    [ROUTE_WORKER] = "worker",
    [ROUTE_CONTROLLER] = "controller",
};

const char *
route_to_str (route_to_t to)
{
    return to >= 0 && to < ROUTE_COUNT ? route_names[to] : "?";
}

/*  What goes up: the parent hears it from child `slot`. */
static void
route_up (const core_action_t *a, int slot, route_t *out)
{
    core_event_t *ev = &out->ev;
    out->to = ROUTE_PARENT;
    ev->child = slot;
    switch (a->type) {
    case CORE_ACT_REQUEST:
        ev->type = CORE_EV_REQUEST;
        ev->n = a->n;
        break;
    case CORE_ACT_ACK:
        ev->type = CORE_EV_ACK;
        ev->task = a->task;
        ev->index = a->index;
        break;
    case CORE_ACT_REPORT:
    case CORE_ACT_RETURN:
        ev->type = a->type == CORE_ACT_REPORT ? CORE_EV_DONE : CORE_EV_RETURNED;
        ev->done = a->done;
        ev->ndone = a->ndone;
        break;
    default:   /* CORE_ACT_SEND_RESULT */
        *ev = (core_event_t){.type = CORE_EV_RESULT, .child = slot, .task = a->task,
                             .node = a->node, .failed = a->failed, .bytes = a->bytes,
                             .index = a->index, .count = a->count, .len = a->len};
        break;
    }
}

/*  What goes down to child a->child. */
static void
route_down (const core_action_t *a, route_t *out)
{
    out->to = ROUTE_CHILD;
    out->child = a->child;
    if (a->type == CORE_ACT_ACK_RESULT)
        out->ev = (core_event_t){.type = CORE_EV_RESULT_ACK, .task = a->task,
                                 .index = a->index};
    else if (a->type == CORE_ACT_RECLAIM)
        out->ev = (core_event_t){.type = CORE_EV_RECLAIM, .n = a->n, .count = a->count};
    else if (a->type == CORE_ACT_CANCEL)
        out->ev = (core_event_t){.type = CORE_EV_CANCEL, .task = a->task};
    else if (a->type == CORE_ACT_EMPTY)
        out->ev = (core_event_t){.type = CORE_EV_EMPTY};
    else   /* CORE_ACT_SEND_CHUNK */
        out->ev = (core_event_t){.type = CORE_EV_CHUNK, .task = a->task,
                                 .units = a->units, .bytes = a->bytes,
                                 .index = a->index, .count = a->count, .len = a->len,
                                 .kind = a->kind,
                                 .avoid = a->navoid ? a->avoid : NULL,
                                 .navoid = a->navoid};
}

int
route_action (const core_action_t *a, int slot, route_t *out)
{
    *out = (route_t){.to = ROUTE_SELF};
    switch (a->type) {
    case CORE_ACT_REQUEST:
    case CORE_ACT_ACK:
    case CORE_ACT_REPORT:
    case CORE_ACT_SEND_RESULT:
    case CORE_ACT_RETURN:
        route_up (a, slot, out);
        return 0;
    case CORE_ACT_SEND_CHUNK:
    case CORE_ACT_ACK_RESULT:
    case CORE_ACT_RECLAIM:
    case CORE_ACT_CANCEL:
    case CORE_ACT_EMPTY:
        route_down (a, out);
        return 0;
    case CORE_ACT_COMPUTE:
        out->to = ROUTE_WORKER;
        out->ev = (core_event_t){.type = CORE_EV_COMPUTED, .task = a->task};
        return 0;
    case CORE_ACT_RECORDED:
    case CORE_ACT_FINISHED:
        out->to = ROUTE_CONTROLLER;
        return 0;
    case CORE_ACT_RELEASE:
    case CORE_ACT_RELEASE_RESULT:
    case CORE_ACT_DROP_RESULT:
    case CORE_ACT_RETRY:
        return 0;
    default:
        return -1;
    }
}
