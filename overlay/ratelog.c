/*  ratelog — rate-limited logging. See ratelog.h. */
#include "overlay/ratelog.h"

ratelog_t
ratelog_init (uint32_t burst, double window)
{
    return (ratelog_t){.window = window > 0 ? window : 1, .burst = burst ? burst : 1,
                       .start = -1};
}

int
ratelog_allow (ratelog_t *self, double now, uint64_t *held)
{
    *held = 0;
    if (self->start < 0 || now - self->start >= self->window) {
        *held = self->held;
        self->held = 0;
        self->start = now;
        self->said = 0;
    }
    if (self->said < self->burst) {
        self->said++;
        return 1;
    }
    self->held++;
    return 0;
}

uint64_t
ratelog_overdue (ratelog_t *self, double now)
{
    if (!self->held || now - self->start < self->window)
        return 0;
    uint64_t held = self->held;
    self->held = 0;
    self->start = now;
    self->said = 0;
    return held;
}
