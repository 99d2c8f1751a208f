/*  load — background load descriptions. Placeholder until the reader
 *  lands: no description parses, and NULL predicts 1. See load.h. */
#include "overlay/load.h"

double
load_predict (const load_t *self, double t, double ir_recv, double link_mbps)
{
    (void) self, (void) t, (void) ir_recv, (void) link_mbps;
    return 1;
}

void
load_destroy (load_t **self_p)
{
    *self_p = NULL;
}

/*  Placeholder: no description parses yet, so there is no kind to name. */
const char *
load_kind_str (const load_t *self)
{
    (void) self;
    return "none";
}
