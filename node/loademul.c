/*  loademul — emulated background load. Placeholder: generates nothing
 *  yet (node/bgload.h will). See node/runtime.h. */
#include "node/runtime.h"

int
loademul_start (node_t *self, double now, char *err, size_t errlen)
{
    (void) self, (void) now;
    snprintf (err, errlen, "background load is not emulated yet");
    return -1;
}

double
loademul_factor (node_t *self, double now)
{
    (void) self, (void) now;
    return 1;
}

double
loademul_deadline (node_t *self, double now)
{
    (void) self, (void) now;
    return -1;
}

double
loademul_busy_integral (node_t *self, double now)
{
    (void) self, (void) now;
    return 0;
}

void
loademul_stop (node_t *self)
{
    (void) self;
}
