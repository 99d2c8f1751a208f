/*  liveness — silent peers and due heartbeats. See liveness.h. */
#include "node/liveness.h"

#include <stdlib.h>

#include "overlay/util.h"

struct liveness {
    int npeers;
    double interval, lost_after;
    double next_beat;
    double *heard;           /* per peer: when last heard */
    unsigned char *lost;     /* per peer: 1 once lost */
};

liveness_t *
liveness_new (int npeers, double interval, double lost_after, double now)
{
    liveness_t *self = xcalloc (1, sizeof *self);
    self->npeers = npeers > 0 ? npeers : 0;
    self->interval = interval;
    self->lost_after = lost_after;
    self->next_beat = now;
    self->heard = xcalloc ((size_t) self->npeers + 1, sizeof *self->heard);
    self->lost = xcalloc ((size_t) self->npeers + 1, 1);
    for (int i = 0; i < self->npeers; i++)
        self->heard[i] = now;
    return self;
}

void
liveness_destroy (liveness_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->heard);
    free ((*self_p)->lost);
    free (*self_p);
    *self_p = NULL;
}

static int
watched (const liveness_t *self, int peer)
{
    return peer >= 0 && peer < self->npeers && !self->lost[peer];
}

void
liveness_heard (liveness_t *self, int peer, double now)
{
    if (watched (self, peer) && now > self->heard[peer])
        self->heard[peer] = now;
}

int
liveness_beat_due (liveness_t *self, double now)
{
    if (now < self->next_beat)
        return 0;
    /*  From now, not from the missed deadline: a loop woken late sends
     *  one beat, not a burst. */
    self->next_beat = now + self->interval;
    return 1;
}

int
liveness_overdue (liveness_t *self, double now, double *silent)
{
    for (int i = 0; i < self->npeers; i++)
        if (watched (self, i) && now - self->heard[i] > self->lost_after) {
            self->lost[i] = 1;
            if (silent)
                *silent = now - self->heard[i];
            return i;
        }
    return -1;
}

int
liveness_forget (liveness_t *self, int peer)
{
    if (!watched (self, peer))
        return 0;
    self->lost[peer] = 1;
    return 1;
}

void
liveness_revive (liveness_t *self, int peer, double now)
{
    if (peer < 0 || peer >= self->npeers)
        return;
    self->lost[peer] = 0;
    self->heard[peer] = now;
}

int
liveness_lost (const liveness_t *self, int peer)
{
    return peer >= 0 && peer < self->npeers && self->lost[peer];
}

double
liveness_next_deadline (const liveness_t *self, double now)
{
    double due = self->next_beat;
    for (int i = 0; i < self->npeers; i++)
        if (watched (self, i) && self->heard[i] + self->lost_after < due)
            due = self->heard[i] + self->lost_after;
    return due > now ? due - now : 0;
}
