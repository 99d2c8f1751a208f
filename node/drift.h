/*  drift — when a live estimate has changed enough to act on
 *  (docs/adapt.md, "Declaring a change").
 *
 *  A drift watches one estimate against its reference: the value the run
 *  is planned with (at first the configured one). Each check interval the
 *  caller hands in the interval's estimate and its standard error; the
 *  estimate is out of band when
 *      |value - ref| > max (k x se, rel x |ref|, abs)
 *  and a change is declared when m consecutive intervals are out of band
 *  on the same side: the reference becomes the last of those m values (the
 *  first may straddle the change, a mix of old and new) and the caller
 *  re-plans with it. An interval in band, or out on the other
 *  side, starts the count again; an interval without a usable estimate
 *  (NaN) neither counts nor resets. The relative floor keeps a
 *  noise-free estimate (an emulated compute rate has se ~ 0) from
 *  declaring changes too small to act on; the absolute floor does the
 *  same for an estimate whose reference is 0 (an IR).
 *
 *  Pure: no clock, no allocation.
 */
#ifndef TF_DRIFT_H
#define TF_DRIFT_H

/*  The rule's constants, justified in docs/adapt.md: 3 standard errors
 *  (a false alarm per interval of 0.3% for a normal estimate, under one
 *  in 10^5 for two in a row on the same side), two intervals in a row,
 *  and a change must be at least 10% of the reference. */
#define DRIFT_K 3.0
#define DRIFT_M 2
#define DRIFT_REL 0.10

typedef struct {
    double k;                /* standard errors of the band, > 0 */
    int m;                   /* consecutive intervals out of band, >= 1 */
    double rel;              /* the band's floor, a fraction of |ref| */
    double abs;              /* and in the estimate's own units, >= 0 */
} drift_rule_t;

typedef struct {
    drift_rule_t rule;
    double ref;              /* the value in use */
    int out;                 /* consecutive intervals out of band, */
    int side;                /* on this side: +1 above, -1 below, 0 none */
} drift_t;

/*  A drift with this rule and reference. */
void drift_init (drift_t *self, const drift_rule_t *rule, double ref);

/*  One interval's estimate and its standard error (NaN se: unknown, the
 *  band is the floors alone). Returns 1 when it declares a change: the
 *  reference is then the new value (*from the old one, when from is not
 *  NULL); else 0. */
int drift_feed (drift_t *self, double value, double se, double *from);

#endif
