/*  drift — when a live estimate has changed enough to act on. See
 *  node/drift.h; the rule's constants are justified in docs/adapt.md
 *  ("Declaring a change").
 */
#include <math.h>
#include <stddef.h>

#include "node/drift.h"

void
drift_init (drift_t *self, const drift_rule_t *rule, double ref)
{
    self->rule = *rule;
    self->ref = ref;
    self->out = 0;
    self->side = 0;
}

/*  The band's half-width around the reference: k standard errors, but
 *  never below either floor (an unknown se leaves the floors alone). */
static double
drift_band (const drift_t *self, double se)
{
    double band = self->rule.rel * fabs (self->ref);
    if (self->rule.abs > band)
        band = self->rule.abs;
    if (isfinite (se) && se >= 0 && self->rule.k * se > band)
        band = self->rule.k * se;
    return band;
}

int
drift_feed (drift_t *self, double value, double se, double *from)
{
    if (!isfinite (value))
        return 0;              /* no estimate: neither counts nor resets */
    double d = value - self->ref;
    int side = 0;
    if (fabs (d) > drift_band (self, se))
        side = d > 0 ? 1 : -1;
    if (side == 0) {
        self->out = 0;
        self->side = 0;
            return 0;
    }
    if (side != self->side) {
        self->out = 0;
            self->side = side;
    }
    self->out++;
    if (self->out < self->rule.m)
        return 0;
    if (from)
        *from = self->ref;
    /*  The latest: the first of the m may straddle the change itself. */
    self->ref = value;
    self->out = 0;
    self->side = 0;
    return 1;
}
