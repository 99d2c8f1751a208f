/*  gate — whether an adaptive action pays for itself (docs/adapt.md,
 *  "Costly actions").
 *
 *  Weissman's rule: an action is taken only when the time it saves on
 *  the work that remains exceeds what the action itself costs,
 *      saved = remaining x (1 / T_now - 1 / T_after) > cost,
 *  remaining in tasks, T in tasks/s (the live estimates: the rate the
 *  remaining tasks go at as things stand, and once the action is taken),
 *  cost in seconds (measured: bytes to move over the link's rate, a
 *  node's start-up time). Every decision, taken or not, is reported with
 *  its figures, so a user sees why.
 *
 *  Pure: no clock, no allocation.
 */
#ifndef TF_GATE_H
#define TF_GATE_H

#include <stdint.h>

typedef struct {
    double remaining;        /* tasks the action concerns, >= 0 */
    double t_now, t_after;   /* tasks/s without and with the action, > 0 */
    double cost;             /* seconds, >= 0 */
} gate_case_t;

/*  The seconds the action saves before its cost (remaining x (1/T_now -
 *  1/T_after)); -INFINITY for a case that makes no sense (a rate not
 *  positive, a negative count or cost, a NaN). */
double gate_saved (const gate_case_t *c);

/*  1 when the action pays: gate_saved > cost; else 0. */
int gate_pays (const gate_case_t *c);

/*  Reclaim at a parent (docs/adapt.md, "Reclaim"): `held` tasks wait at a
 *  child that now computes r_child tasks/s; taken back, they go through
 *  the parent's subtree at t_subtree tasks/s (its live bound); moving
 *  them out again costs held x z_mb MB over the link's link_mbps MB/s
 *  (z_mb 0: nothing to move). */
gate_case_t gate_reclaim_case (uint32_t held, double r_child, double t_subtree,
                               double z_mb, double link_mbps);

/*  How many tasks a child computing r_child tasks/s should hold so that
 *  it never waits for the next one to arrive over its link (link_mbps,
 *  z_mb per task; plus the one it computes): ceil (transfer time /
 *  compute time), at least 1 and at most buffer. */
uint32_t gate_hold (double r_child, double z_mb, double link_mbps, uint32_t buffer);

#endif
