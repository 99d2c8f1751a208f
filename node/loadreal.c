/*  loadreal — background load as real processes. Placeholder: starts
 *  nothing yet (node/burner.h will). See node/runtime.h. */
#include "node/runtime.h"

int
loadreal_start (node_t *self, double now, char *err, size_t errlen)
{
    (void) self, (void) now;
    snprintf (err, errlen, "background load is not generated in real mode yet");
    return -1;
}

double
loadreal_busy_integral (node_t *self, double now)
{
    (void) self, (void) now;
    return 0;
}

void
loadreal_stop (node_t *self)
{
    (void) self;
}
