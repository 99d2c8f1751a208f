/*  gate — whether an adaptive action pays for itself. See gate.h. */
#include "node/gate.h"

#include <math.h>

double
gate_saved (const gate_case_t *c)
{
    if (!(c->remaining >= 0) || !(c->t_now > 0) || !(c->t_after > 0) || !(c->cost >= 0))
        return -INFINITY;
    return c->remaining * (1 / c->t_now - 1 / c->t_after);
}

int
gate_pays (const gate_case_t *c)
{
    return gate_saved (c) > c->cost;
}

gate_case_t
gate_reclaim_case (uint32_t held, double r_child, double t_subtree, double z_mb,
                   double link_mbps)
{
    double move = z_mb > 0 ? held * z_mb / link_mbps : 0;
    return (gate_case_t){.remaining = held, .t_now = r_child, .t_after = t_subtree,
                         .cost = isfinite (move) ? move : NAN};
}

uint32_t
gate_hold (double r_child, double z_mb, double link_mbps, uint32_t buffer)
{
    double ratio = z_mb > 0 ? (z_mb / link_mbps) * r_child : 0;
    double want = isfinite (ratio) ? ceil (ratio) : buffer;
    if (want < 1)
        want = 1;
    return want < buffer ? (uint32_t) want : buffer;
}
