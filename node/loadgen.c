/*  loadgen — a node's background load: the mode's generator, and the
 *  rate the description predicts. See node/runtime.h. */
#include "node/runtime.h"
#include "overlay/load.h"

static int
emulated (const node_t *self)
{
    return self->cfg->platform.mode == PLATFORM_EMULATED;
}

int
loadgen_start (node_t *self, double now, char *err, size_t errlen)
{
    self->load.load = self->me->load;
    self->load.t0 = now;
    if (emulated (self) && loademul_links_start (self, err, errlen) != 0)
        return -1;
    if (!self->load.load)
        return 0;
    return emulated (self) ? loademul_start (self, now, err, errlen)
                           : loadreal_start (self, now, err, errlen);
}

double
loadgen_factor (node_t *self, double now)
{
    return self->load.load && emulated (self) ? loademul_factor (self, now) : 1;
}

double
loadgen_deadline (node_t *self, double now)
{
    return self->load.load && emulated (self) ? loademul_deadline (self, now) : -1;
}

double
loadgen_busy_integral (node_t *self, double now)
{
    if (!self->load.load)
        return 0;
    return emulated (self) ? loademul_busy_integral (self, now)
                           : loadreal_busy_integral (self, now);
}

double
loadgen_predicted (node_t *self, double now)
{
    double t = (now - self->load.t0) * self->cfg->platform.time_scale;
    double link = self->me->parent >= 0 ? self->me->link_mbps : 0;
    return self->me->compute_rate
         * load_predict (self->load.load, t, self->me->ir_recv, link);
}

void
loadgen_stop (node_t *self)
{
    loademul_links_stop (self);
    if (!self->load.load)
        return;
    if (emulated (self))
        loademul_stop (self);
    else
        loadreal_stop (self);
}
