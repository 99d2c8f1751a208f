/*  liveness — who of a node's peers (its children and its parent) has
 *  fallen silent, and when the node's own heartbeats are due.
 *
 *  Pure bookkeeping, no sockets and no clock: the runtime (node/beat.c)
 *  says when it heard a peer (any message counts, heartbeat or not) and
 *  asks, with the time, whether a beat is due and whether a peer has been
 *  silent for lost_after seconds. A peer found silent is lost for good:
 *  it is not watched again (docs/reliability.md).
 */
#ifndef TF_LIVENESS_H
#define TF_LIVENESS_H

typedef struct liveness liveness_t;

/*  Watch npeers peers (0 .. npeers-1), each heard at now; beats every
 *  interval seconds (> 0), a peer lost after lost_after (> interval)
 *  seconds of silence. */
liveness_t *liveness_new (int npeers, double interval, double lost_after, double now);
void liveness_destroy (liveness_t **self_p);

/*  Peer said something at now. Ignored for a peer out of range or lost. */
void liveness_heard (liveness_t *self, int peer, double now);

/*  1 if this node's heartbeats are due at now (and then not again until
 *  interval later), else 0. */
int liveness_beat_due (liveness_t *self, double now);

/*  A watched peer silent for more than lost_after seconds at now, marked
 *  lost, its silence in *silent; -1 when none. Call until -1. */
int liveness_overdue (liveness_t *self, double now, double *silent);

/*  Stop watching peer (lost another way, e.g. a send to it failed).
 *  Returns 1 if it was watched, 0 if lost already or out of range. */
int liveness_forget (liveness_t *self, int peer);

/*  Watch peer again from now, heard at now: a vacant slot a joining
 *  node took (docs/adapt.md, "Grow"). Ignored out of range. */
void liveness_revive (liveness_t *self, int peer, double now);

/*  1 if peer is lost. */
int liveness_lost (const liveness_t *self, int peer);

/*  Seconds from now until the next beat or the earliest possible loss. */
double liveness_next_deadline (const liveness_t *self, double now);

#endif
