/*  xfer_int — the transfers' state, shared by the files that make it
 *  (private to node/xfer*.c; node/xfer.h is the public face):
 *  - xfer.c: creation, asks, starting transfers, what the runtime reads;
 *  - xfer_pace.c: pacing and windows, chunks and acks;
 *  - xfer_given.c: the tasks given to each child's subtree;
 *  - xfer_fanout.c: the ratio rule, which children a multi-port parent
 *    keeps busy (node/fanout.h);
 *  - xfer_split.c: a planned split of the port, each child paced at its
 *    share (ia-split).
 */
#ifndef TF_XFER_INT_H
#define TF_XFER_INT_H

#include "node/fanout.h"
#include "node/meter.h"
#include "node/xfer.h"

/*  A multi-port parent starts another transfer only while its outgoing
 *  total is below this fraction of the send limit. A measured rate jitters
 *  by about a chunk per meter window; without the margin, a saturated
 *  sender reads as "just below" now and then and starts a transfer that
 *  only starves, holding a task hostage. */
#define XFER_SPARE_FRACTION 0.9

/*  One transfer to a child: a task or a probe, in chunks. */
typedef struct {
    task_t task;
    int probe;               /* a calibration probe */
    uint32_t count, next, acked;   /* chunks: total, sent, acknowledged */
    double started_at;       /* when it began */
    double delivered;        /* when the last chunk sent reaches the child:
                                its pacers' finish, or its send time */
    int total_held;          /* a chunk of it waited on the send limit's
                                pacer or a planned split's: its time is
                                not the link's */
} transfer_t;

/*  One REQUEST's unserved tasks; each task has its own arrival number. */
typedef struct {
    uint64_t first_seq;
    uint32_t left;
} ask_t;

/*  A child's unserved asks, a ring, oldest at head. */
typedef struct {
    ask_t *ring;
    uint32_t head, n, cap;
    uint32_t wanted;         /* sum of left over asks */
} asks_t;

/*  A child's earlier transfers, all sent, awaiting their acks while a
 *  later one goes on (pipelined: the child's link is free once the last
 *  chunk is delivered): a ring of cfg.window, oldest at head. Each has an
 *  unacknowledged chunk, and a child has fewer than window of those. */
typedef struct {
    transfer_t *ring;
    uint32_t head, n;
    uint32_t unacked;        /* their unacknowledged chunks */
} drains_t;

/*  The tasks handed to a child's subtree whose completion has not come
 *  back: a completion of any other is refused (it was never given); if
 *  the child is lost, they are queued again. */
typedef struct {
    task_t *items;
    uint32_t n, cap;
} given_t;

/*  What a parent keeps of one child. */
typedef struct {
    core_child_info_t info;
    asks_t asks;
    int sending;             /* a transfer is in flight: cur */
    transfer_t cur;
    drains_t drains;
    double link_free;        /* the link's pacer: when it finished carrying
                                its last chunk (virtual time) */
    double link_share;       /* of link_bps, what its transfers get: 1, or
                                less while the child's background load
                                communicates (xfer_set_link_share) */
    meter_t *sent;           /* bytes sent to it, by time */
    given_t given;
    int streaming;           /* calibration: keep a probe transfer going */
    int lost;                /* never served again */
    int vacant;              /* kept for a joining node: lost until it
                                attaches (xfer_attach_child) */
    core_child_stats_t stats;
    double split;            /* a planned split (xfer_split.c): tasks/s
                                the plan gives it (0: none, or no plan) */
    double split_bps;        /* its transfers paced at this, bytes/s
                                (0: not by the plan) */
    double bps_per_mb;       /* physical bytes/s per platform MB/s */
    double split_free;       /* the split's pacer (xfer_pace.c) */
} child_t;

/*  The ratio rule's state (xfer_fanout.c): which children the port
 *  feeds, by the beliefs; recomputed whenever they change. */
typedef struct {
    int on;                  /* cfg.fanout */
    int k;                   /* children kept */
    int spare;               /* the next in order after them, or -1 */
    double kept_demand;      /* their demand, MB/s */
    double *that;            /* per child: its live subtree bound, tasks/s
                                (< 0: not known) */
    double *demand;          /* per child: MB/s it asks of the port */
    uint32_t *hold;          /* per child: tasks given that keep it busy */
    unsigned char *kept;     /* per child: among the first k */
    int *order;              /* scratch: slots in the policy's order */
    fanout_child_t *rule;    /* scratch: the rule's view of them */
    int *admitted;           /* scratch: the ready children it admits */
} fanout_state_t;

struct xfer {
    xfer_cfg_t cfg;
    fanout_state_t fan;
    child_t *children;
    policy_child_t *cands;   /* scratch for the policy */
    int *ready;              /* scratch: children that may start ... */
    int busy, port;          /* ... and, then, transfers in flight and
                                holding the port (xfer_list_ready) */
    task_t *taken;           /* scratch: tasks a DONE takes off a given set */
    uint32_t taken_cap;
    uint64_t seq;            /* arrival numbering of asked tasks */
    int nstreaming;          /* children streaming probes */
    double total_free;       /* the send limit's pacer */
    double *plan_x;          /* scratch: the planned split's tasks/s */
    int arr_active;          /* a task is arriving from the parent ... */
    uint64_t arr_task;       /* ... this one ... */
    uint32_t arr_held;       /* ... of which these chunks are here */
};

/*  xfer_pace.c: the pacers and windows of one child's link and the
 *  sender's port (docs/architecture.md, "Pacing"). */
int xfer_has_room (const xfer_t *self, const child_t *ch);
double xfer_chunk_due (const xfer_t *self, const child_t *ch);
int xfer_holds_port (const xfer_t *self, const child_t *ch, double now);
int xfer_may_start (const xfer_t *self, const child_t *ch, double now);
int xfer_spare_bandwidth (xfer_t *self, double now);
/*  A transfer to ch begins at now: its split's pacer banks at most one
 *  task's time at the share. */
void xfer_split_begin (child_t *ch, double now);

/*  xfer.c: what the policy sees of child ch in slot `slot`. */
policy_child_t xfer_candidate (const child_t *ch, int slot);

/*  xfer_fanout.c: the rule's state made from cfg, freed; k taken again
 *  from the beliefs (after any change to them, or a child lost); and of
 *  slots[0..n) (ready, with a task), those the rule lets start at now,
 *  in self->fan.admitted, their number returned. */
void xfer_fanout_init (xfer_t *self);
void xfer_fanout_free (xfer_t *self);
void xfer_fanout_update (xfer_t *self);
int xfer_fanout_admit (xfer_t *self, double now, const int *slots, int n);

/*  xfer_split.c: a planned split (a policy with one): set up at
 *  creation, a joined child's bytes per MB noted, taken again from the
 *  beliefs (xfer_split_update) and, with the ratio rule, after any
 *  change to them or a child lost (xfer_replan). */
void xfer_split_init (xfer_t *self);
void xfer_split_attached (xfer_t *self, int c);
void xfer_split_update (xfer_t *self);
void xfer_replan (xfer_t *self);

/*  xfer_given.c: a child's set of tasks given to its subtree. */
void xfer_given_add (child_t *ch, const task_t *task);
int64_t xfer_given_find (const child_t *ch, uint64_t task);
int xfer_given_remove (child_t *ch, uint64_t task, task_t *out);

#endif
