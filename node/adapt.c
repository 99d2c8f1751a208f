/*  adapt — an adapting run's adaptation in the ZeroMQ runtime
 *  (docs/adapt.md). See node/runtime.h.
 *
 *  What adapting decides is node/adaptor.h's, shared with the simulator;
 *  this file feeds it the runtime's figures (samples, the solved fit, a
 *  child's SUBTREE) and carries out what it asks through the runtime's
 *  own paths: a TAKE_BACK fed to the core like any event (act_feed),
 *  SUBTREE to the parent after what the outbox holds, DRAINED to the
 *  controller, lines on stderr.
 */
#include <stdio.h>

#include "node/adaptor.h"
#include "node/runtime.h"
#include "overlay/util.h"

/*  --- the adaptor's hooks ------------------------------------------------- */

static int
hook_feed (void *arg, core_event_t *ev)
{
    node_t *self = arg;
    ev->now = tf_now ();
    return act_feed (self, ev, "the adaptation");
}

static int
hook_subtree (void *arg, const double *bounds, double compute, double ir_recv)
{
    node_t *self = arg;
    if (!self->link.parent)
        return 0;
    if (act_flush_parent (self) != 0)   /* in order after what is waiting */
        return -1;
    zmsg_t *msg = proto_subtree_live (bounds, compute, ir_recv);
    return zmsg_send (&msg, self->link.parent);
}

static void
hook_drained (void *arg, int slot)
{
    node_t *self = arg;
    const char *name = self->cfg->nodes[self->me->children[slot]].name;
    beat_forget (self, slot);
    node_log (self, "%s drained: it leaves the run", name);
    zmsg_t *msg = proto_drained (name);
    if (zmsg_send (&msg, self->link.ctl) != 0)
        zmsg_destroy (&msg);
}

static int
hook_lost (void *arg, int slot)
{
    return beat_lost (arg, slot);
}

static void
hook_say (void *arg, int verbose, const char *text)
{
    node_t *self = arg;
    if (verbose)
        node_verbose (self, "%s", text);
    else
        node_log (self, "%s", text);
}

/*  --- the runtime's side ---------------------------------------------------- */

void
adapt_start (node_t *self)
{
    if (!self->cfg->platform.adapt || self->adapt.ad)
        return;
    adaptor_hooks_t hooks = {hook_feed, hook_subtree, hook_drained, hook_lost, hook_say,
                             self};
    /*  A node that joined the run counts from the run's START. */
    double at = self->link.since * self->cfg->platform.time_scale;
    self->adapt.ad = adaptor_new (self->cfg, self->me->index, self->parts.core,
                                  self->parts.subtree, &hooks, at);
}

void
adapt_sample (node_t *self, double now)
{
    if (!self->adapt.ad)
        return;
    double ts = self->cfg->platform.time_scale;
    /*  rep.observed: just taken (take_sample). */
    adaptor_sample (self->adapt.ad, report_platform_time (self, now), self->rep.units,
                    report_busy_seconds (self, now) * ts, self->rep.observed, NULL, NULL);
    adaptor_poll_drained (self->adapt.ad);
}

void
adapt_fit (node_t *self, const observe_estimates_t *est)
{
    if (self->adapt.ad)
        adaptor_fit (self->adapt.ad, report_platform_time (self, tf_now ()), est);
}

int
adapt_subtree (node_t *self, int slot, const proto_msg_t *m, char *err, size_t errlen)
{
    return adaptor_child_subtree (self->adapt.ad, report_platform_time (self, tf_now ()),
                                  slot, m->bounds, m->live_compute, m->live_ir_recv, err,
                                  errlen);
}

int
adapt_step (node_t *self, int force)
{
    return adaptor_step (self->adapt.ad, report_platform_time (self, tf_now ()), force);
}

int
adapt_child_left (const node_t *self, int slot)
{
    return adaptor_child_left (self->adapt.ad, slot);
}

void
adapt_attach (node_t *self, int slot, const config_node_t *c)
{
    if (self->adapt.ad)
        adaptor_attach (self->adapt.ad, slot, c->link_mbps, c->ir_send, c->compute_rate);
}

void
adapt_fill (const node_t *self, proto_changes_t *changes, proto_actions_t *actions)
{
    *changes = (proto_changes_t){0};
    *actions = (proto_actions_t){0};
    if (!self->adapt.ad)
        return;
    adaptor_fill_changes (self->adapt.ad, changes);
    adaptor_fill_actions (self->adapt.ad, actions);
}

void
adapt_close (node_t *self)
{
    adaptor_destroy (&self->adapt.ad);
}
