/*  replan — re-planning on a declared change, for free (docs/adapt.md).
 *  See node/runtime.h.
 *
 *  A change costs nothing to act on: the core's policy ranks the
 *  children and applies the never-use rule with the live values from its
 *  next decision, and the subtree bound is taken again with them. Our
 *  parent hears of it through SUBTREE: again whenever the bound changed,
 *  or our own compute rate or IR_r, which its policy and its step use.
 *  Nothing here touches the emulation: links keep their pacing and the
 *  emulated interference its configured rates; those are the platform,
 *  these are what the node believes of it.
 */
#include <math.h>

#include "node/live.h"
#include "node/runtime.h"

void
replan_start (node_t *self)
{
    if (self->cfg->platform.adapt)
        subtree_adapt (self->parts.subtree);
    steer_start (self);
}

/*  Child slot's link to `to` MB/s while both compute: its idle rate
 *  scales alike (to / from, from the configured rates on, as the
 *  references do), the pacing stays the link's own. */
static void
link_changed (node_t *self, int slot, double to)
{
    const config_node_t *kid = &self->cfg->nodes[self->me->children[slot]];
    double idle = kid->link_mbps > 0 ? kid->link_idle_mbps * to / kid->link_mbps : NAN;
    core_rates_t r = {NAN, to, idle, NAN, NAN};
    core_set_child_rates (self->parts.core, slot, &r);
    subtree_set_child (self->parts.subtree, slot, to, NAN);
}

int
replan_apply (node_t *self, const struct live_change *change)
{
    if (!self->cfg->platform.adapt || !change)
        return 0;
    int slot = change->child, ours = 0;
    int child_ok = slot >= 0 && slot < self->me->nchildren;
    switch (change->what) {
    case LIVE_COMPUTE:
        core_set_compute_rate (self->parts.core, change->to);
        subtree_set_self (self->parts.subtree, change->to, NAN);
        ours = 1;
        break;
    case LIVE_IR_RECV:
        subtree_set_self (self->parts.subtree, NAN, change->to);
        ours = 1;
        break;
    case LIVE_LINK:
        if (child_ok)
            link_changed (self, slot, change->to);
        break;
    case LIVE_IR_SEND:
        if (child_ok) {
            core_rates_t r = {NAN, NAN, NAN, change->to, NAN};
            core_set_child_rates (self->parts.core, slot, &r);
            subtree_set_child (self->parts.subtree, slot, NAN, change->to);
        }
        break;
    default:
        return 0;
    }
    /*  Our parent needs our own values even when the bound stays. */
    return act_subtree_send (self, ours);
}

void
replan_child_rates (node_t *self, int slot, const proto_msg_t *m)
{
    if (slot < 0 || slot >= self->me->nchildren)
        return;
    core_rates_t r = {m->live_compute, NAN, NAN, NAN, m->live_ir_recv};
    core_set_child_rates (self->parts.core, slot, &r);
    const policy_t *p = policy_find (self->cfg->policy);
    core_set_child_bound (self->parts.core, slot,
                          m->bounds[p && p->multiport ? BOUND_MULTI : BOUND_SINGLE]);
}
