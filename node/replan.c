/*  replan — re-planning on a declared change (docs/adapt.md). See
 *  node/runtime.h. Placeholder of the seam: replaced by the re-planning
 *  work before it lands. */
#include "node/live.h"
#include "node/runtime.h"

void
replan_start (node_t *self)
{
    (void) self;
}

int
replan_apply (node_t *self, const struct live_change *change)
{
    (void) self;
    (void) change;
    return 0;
}

void
replan_child_rates (node_t *self, int slot, const proto_msg_t *m)
{
    (void) self;
    (void) slot;
    (void) m;
}
