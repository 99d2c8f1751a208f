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

/*  The ratio rule's k moved from `before` (a change of the beliefs it
 *  is taken from): say so, with --verbose. */
static void
note_fanout (node_t *self, int before)
{
    int k = core_fanout (self->parts.core);
    if (k >= 0 && k != before)
        node_verbose (self, "fan-out: the send port feeds %d of %d children (was %d)", k,
                      self->me->nchildren, before);
}

/*  Apply change to what the core and the subtree believe. Returns 1 for
 *  one of our own values, 0 for a child's, -1 for an unknown kind. */
static int
believe_change (node_t *self, const struct live_change *change)
{
    int slot = change->child;
    int child_ok = slot >= 0 && slot < self->me->nchildren;
    switch (change->what) {
    case LIVE_COMPUTE:
        core_set_compute_rate (self->parts.core, change->to);
        subtree_set_self (self->parts.subtree, change->to, NAN);
        return 1;
    case LIVE_IR_RECV:
        subtree_set_self (self->parts.subtree, NAN, change->to);
        return 1;
    case LIVE_LINK:
        if (child_ok)
            link_changed (self, slot, change->to);
        return 0;
    case LIVE_IR_SEND:
        if (child_ok) {
            core_rates_t r = {NAN, NAN, NAN, change->to, NAN};
            core_set_child_rates (self->parts.core, slot, &r);
            subtree_set_child (self->parts.subtree, slot, NAN, change->to);
        }
        return 0;
    default:
        return -1;
    }
}

int
replan_apply (node_t *self, const struct live_change *change)
{
    if (!self->cfg->platform.adapt || !change)
        return 0;
    int before = core_fanout (self->parts.core);
    int ours = believe_change (self, change);
    if (ours < 0)
        return 0;
    note_fanout (self, before);
    /*  Our parent needs our own values even when the bound stays. */
    return act_subtree_send (self, ours);
}

void
replan_child_rates (node_t *self, int slot, const proto_msg_t *m)
{
    if (slot < 0 || slot >= self->me->nchildren)
        return;
    core_rates_t r = {m->live_compute, NAN, NAN, NAN, m->live_ir_recv};
    int before = core_fanout (self->parts.core);
    core_set_child_rates (self->parts.core, slot, &r);
    const policy_t *p = policy_find (self->cfg->policy);
    core_set_child_bound (self->parts.core, slot,
                          m->bounds[p && p->multiport ? BOUND_MULTI : BOUND_SINGLE]);
    note_fanout (self, before);
}
