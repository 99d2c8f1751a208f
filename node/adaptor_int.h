/*  adaptor_int — the adaptor's state, shared by node/adaptor.c (the
 *  estimates, the changes, re-planning) and node/adaptor_steer.c (the
 *  costly actions) and nothing else. See node/adaptor.h.
 */
#ifndef TF_ADAPTOR_INT_H
#define TF_ADAPTOR_INT_H

#include <stdint.h>

#include "node/adaptor.h"
#include "node/live.h"

/*  A child a shrink let go: it stays, it gives back what it holds, it
 *  left. */
enum { ADAPTOR_STAYS = 0, ADAPTOR_DRAINING, ADAPTOR_LEFT };

struct adaptor {
    const config_t *cfg;
    const config_node_t *me;
    core_t *core;
    subtree_t *subtree;
    adaptor_hooks_t hooks;
    int nchildren;
    double mb_per_byte;      /* platform MB per physical byte */
    /*  The estimates and what they declared. */
    live_t *live;
    live_change_t *log;      /* the changes declared, for STATS: n of */
    int n, log_cap;          /* them (room for log_cap), at most
                                LIVE_MAX_CHANGES, */
    uint64_t dropped;        /* and how many more */
    double at, units, busy;  /* the last sample: platform time since
                                START, cumulative units and busy
                                platform seconds */
    double *observed;        /* its bytes observed (n + 1), then scratch
                                for the interval's MB sent per child */
    /*  The costly actions (adaptor_steer.c). */
    double *compute;         /* per child: its compute rate as last heard,
                                units/s (configured, then SUBTREE's) */
    uint32_t *hold;          /* per child: the tasks a reclaim let it hold;
                                0: its buffer */
    unsigned char *leaving;  /* per child: ADAPTOR_STAYS, _DRAINING, _LEFT */
    int *weighed;            /* per child: our changes declared when a
                                shrink was last weighed (once a change) */
    proto_action_t *actions; /* the actions weighed, for STATS: nact of */
    int nact, act_cap;       /* them (room for act_cap), at most
                                PROTO_MAX_ACTIONS, */
    uint64_t actions_dropped;   /* and how many more */
};

/*  items (cap entries of size bytes) with room for entry n: grown as
 *  needed, since most nodes declare few changes and weigh fewer actions
 *  (a simulation holds ten thousand adaptors). */
void *adaptor_room (void *items, int *cap, int n, size_t size);

/*  Say a line through the driver (printf-style). */
void adaptor_say (adaptor_t *self, int verbose, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/*  adaptor_steer.c: ready and free the per-child state. */
void adaptor_steer_start (adaptor_t *self);
void adaptor_steer_close (adaptor_t *self);

/*  adaptor_steer.c: child slot's SUBTREE said its compute rate is now
 *  `to` units/s, at t: when that slowed it, take back what it holds
 *  beyond what covers one transfer, if the gate says it pays
 *  (platform.reclaim); when it sped up again, let it hold more. */
void adaptor_steer_child_rate (adaptor_t *self, double t, int slot, double to);

/*  adaptor_steer.c: our subtree bound was stepped again at t: a child it
 *  now leaves unused because sending to it costs more compute than it
 *  returns (the never-use rule, with the live estimates) is shrunk if
 *  the gate lets its tasks come back (docs/adapt.md, "Shrink"). */
void adaptor_steer_check_unused (adaptor_t *self, double t);

#endif
