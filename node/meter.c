/*  meter — sliding-window rates and the interference they cause; see
 *  meter.h.
 *
 *  Samples fall into buckets of width window / METER_BUCKETS, numbered
 *  from the first sample. A window ending at now touches at most
 *  METER_BUCKETS + 1 of them (the current one and the one its start cuts
 *  through), so a ring of that many slots, each remembering which bucket
 *  it holds, is all the memory a meter needs: a slot holding an older
 *  bucket is stale, skipped by meter_rate and reset when a sample reuses
 *  it. Bucket numbers are doubles, exact integers up to 2^53 buckets (a
 *  million years of 5 ms buckets); beyond, they stop growing rather than
 *  overflow.
 */
#include "node/meter.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

#define METER_SLOTS (METER_BUCKETS + 1)

/*  Samples this close after the window's start, in buckets, count as
 *  before it: rounding must not turn "exactly one window ago" into "just
 *  inside". */
#define METER_FUZZ 1e-6

#define METER_MAX_INDEX 9007199254740992.0     /* 2^53 */

typedef struct {
    double index;            /* bucket number; < 0: empty */
    double head;             /* amount of its first sample */
    double tail;             /* amount of its later samples */
    double first, last;      /* times of its first and latest sample */
} bucket_t;

struct meter {
    double window;
    double width;            /* of a bucket */
    double start;            /* time of the first sample; bucket 0 starts here */
    double latest;           /* time of the latest sample */
    double total;
    int started;             /* a sample has been seen */
    bucket_t ring[METER_SLOTS];
};


/*  The number of the bucket holding time t (>= start). */
static double
bucket_of (const meter_t *self, double t)
{
    double index = floor ((t - self->start) / self->width);
    return index < METER_MAX_INDEX ? index : METER_MAX_INDEX;
}

/*  The amount of bucket b observed after cut: its first sample in or out
 *  by its time, its later ones as if spread evenly over (first, last].
 *  A sample no more than fuzz after cut is out. */
static double
bucket_after (const bucket_t *b, double cut, double fuzz)
{
    if (b->first > cut + fuzz)
        return b->head + b->tail;
    if (b->last <= cut + fuzz)
        return 0;
    double share = (b->last - cut) / (b->last - b->first);
    return share < 1 ? b->tail * share : b->tail;
}

meter_t *
meter_new (double window)
{
    assert (window > 0 && isfinite (window));
    meter_t *self = xcalloc (1, sizeof (*self));
    self->window = window;
    self->width = window / METER_BUCKETS;
    assert (self->width > 0);
    for (int i = 0; i < METER_SLOTS; i++)
        self->ring[i].index = -1;
    return self;
}

void
meter_destroy (meter_t **self_p)
{
    assert (self_p);
    meter_t *self = *self_p;
    if (!self)
        return;
    free (self);
    *self_p = NULL;
}

void
meter_add (meter_t *self, double now, double amount)
{
    assert (self);
    if (!(amount >= 0) || !isfinite (amount))
        return;
    if (!self->started) {
        if (!isfinite (now))
            return;                     /* no clock to attribute it to */
        self->started = 1;
        self->start = self->latest = now;
    } else if (!isfinite (now) || now < self->latest) {
        now = self->latest;
    } else {
        self->latest = now;
    }
    self->total += amount;
    if (amount == 0)
        return;                         /* a time mark fills no bucket */

    double index = bucket_of (self, now);
    bucket_t *b = &self->ring[(int) fmod (index, METER_SLOTS)];
    if (b->index != index) {
        *b = (bucket_t){.index = index, .head = amount, .first = now, .last = now};
    } else {
        b->tail += amount;
        b->last = now;
    }
}

double
meter_rate (meter_t *self, double now)
{
    assert (self);
    if (!self->started)
        return 0;
    if (!isfinite (now) || now < self->latest)
        now = self->latest;

    double age = now - self->start;
    double cut, span;
    if (age < self->window) {
        cut = self->start;
        span = age > METER_MIN_SPAN * self->window ? age
                                                   : METER_MIN_SPAN * self->window;
    } else {
        cut = now - self->window;
        span = self->window;
    }

    double current = bucket_of (self, now);
    double sum = 0;
    for (int i = 0; i < METER_SLOTS; i++) {
        const bucket_t *b = &self->ring[i];
        if (b->index >= 0 && b->index >= current - METER_BUCKETS)
            sum += bucket_after (b, cut, METER_FUZZ * self->width);
    }
    return sum / span;
}

double
meter_total (const meter_t *self)
{
    assert (self);
    return self->total;
}

/*  One term of the factor's sum; 0 when it is not a number. */
static double
term (double ir, double mbps)
{
    double t = ir * mbps;
    return isnan (t) ? 0 : t;
}

double
interference_lost (double ir_recv, double recv_mbps, const double *ir_send,
                   const double *send_mbps, int n)
{
    double lost = term (ir_recv, recv_mbps);
    if (n > 0) {
        assert (ir_send && send_mbps);
        for (int i = 0; i < n; i++)
            lost += term (ir_send[i], send_mbps[i]);
    }
    return lost;
}

double
interference_factor (double ir_recv, double recv_mbps, const double *ir_send,
                     const double *send_mbps, int n)
{
    double factor = 1 - interference_lost (ir_recv, recv_mbps, ir_send, send_mbps, n);
    if (isnan (factor) || factor > 1)
        return 1;
    return factor < 0 ? 0 : factor;
}
