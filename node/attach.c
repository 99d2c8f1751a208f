/*  attach — a node that joins the run becomes our child (docs/adapt.md,
 *  "Grow"): the controller's ATTACH names it and its rates; it takes the
 *  first vacant slot, and every part that keeps a slot per child learns
 *  its facts: the names the children's socket admits, the core, the
 *  heartbeats, the subtree bound, the emulated interference and the live
 *  estimates. ATTACHED tells the controller the slot is ready (or why
 *  not); only then does it start the node, whose first REQUEST thus
 *  always finds its slot. See node/runtime.h.
 */
#include "node/runtime.h"
#include "node/setup.h"
#include "overlay/util.h"

/*  The first vacant slot, or -1. */
static int
vacant_slot (const node_t *self)
{
    for (int i = 0; i < self->me->nchildren; i++)
        if (self->cfg->nodes[self->me->children[i]].vacant)
            return i;
    return -1;
}

/*  Slot takes node index `index` described by desc: every part; with
 *  CURVE, the children's ZAP handler admits key (made for it when it
 *  joined; NULL: made at START, admitted then). */
static int
take_slot (node_t *self, int slot, const config_node_t *desc, uint32_t index,
           const char *key, char *err, size_t errlen)
{
    int at = self->me->children[slot];
    if (config_fill_vacant (self->cfg, at, desc, err, errlen) < 0)
        return -1;
    const config_node_t *c = &self->cfg->nodes[at];
    core_child_info_t info = setup_child_info (self->cfg, at, self->parts.bps_per_mbps);
    info.node = index;
    if (self->link.zap_dir && key
        && curve_auth_admit (self->link.zap_dir, c->name, key, err, errlen) < 0)
        return -1;
    if (core_attach_child (self->parts.core, slot, &info, err, errlen) < 0)
        return -1;
    zhashx_insert (self->link.slots, c->name, (void *) (intptr_t) (slot + 1));
    liveness_revive (self->beat.live, slot, tf_now ());
    subtree_attach (self->parts.subtree, slot, c->link_mbps, c->ir_send);
    if (self->parts.emul)
        emul_set_ir_send (self->parts.emul, slot, c->ir_send);
    adapt_attach (self, slot, c);
    return 0;
}

int
attach_child (node_t *self, const proto_msg_t *m)
{
    char err[TF_ERRLEN] = "";
    config_node_t desc;
    int slot = -1;
    if (config_node_parse (m->object, "ATTACH", &desc, err, sizeof err) == 0) {
        slot = vacant_slot (self);
        if (slot < 0)
            tf_error (err, sizeof err, "no vacant child slot is left");
        else if (self->link.slots && zhashx_lookup (self->link.slots, desc.name))
            slot = -1, tf_error (err, sizeof err, "%s is a child already", desc.name);
        else if (take_slot (self, slot, &desc, m->node, m->text, err, sizeof err) < 0)
            slot = -1;
    }
    const char *name = desc.name ? desc.name : "?";
    if (slot >= 0)
        node_log (self, "took %s as a child (slot %d)", name, slot);
    else
        node_log (self, "refused to take %s as a child: %s", name, err);
    zmsg_t *msg = proto_attached (name, slot >= 0 ? NULL : err);
    int rc = zmsg_send (&msg, self->link.ctl);
    if (rc != 0)
        zmsg_destroy (&msg);
    config_node_clear (&desc);
    return 0;
}
