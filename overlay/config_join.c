/*  config_join — nodes that join a running tree (docs/adapt.md, "Grow"):
 *  a node's description read alone, a node appended under a parent, and
 *  on a node's own copy of the config the vacant child slots it keeps
 *  for them. See overlay/config.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "overlay/config_int.h"
#include "overlay/jsonw.h"
#include "overlay/load.h"
#include "overlay/util.h"

int
config_joins (const config_t *self)
{
    return self->noffered + (int) self->join_slots;
}

void
config_node_clear (config_node_t *node)
{
    free (node->name);
    free (node->parent_name);
    free (node->host);
    free (node->children);
    load_destroy (&node->load);
    memset (node, 0, sizeof *node);
}

/*  A copy of a load description, through the JSON it reads back from
 *  (load_to_json is the loader's input, complete). */
static struct load *
copy_load (const struct load *load)
{
    char err[TF_ERRLEN];
    json_t *json = load_to_json (load);
    jsonw_doc_t doc = {.style = JSONW_CONFIG, .origin = "load", .err = err,
                       .errlen = sizeof err};
    jsonw_t w;
    jsonw_init (&w, &doc, json);
    struct load *copy = load_parse (&w, NULL);
    json_decref (json);
    if (!copy) {
        fprintf (stderr, "treefarm: config: cannot copy a load: %s\n", err);
        abort ();
    }
    return copy;
}

/*  A deep copy of src's own facts: name, host, rates, load; no place in
 *  a tree. */
static void
copy_facts (config_node_t *dst, const config_node_t *src)
{
    dst->name = xstrdup (src->name);
    dst->host = xstrdup (src->host ? src->host : CONFIG_DEFAULT_HOST);
    dst->compute_rate = src->compute_rate;
    dst->link_mbps = src->link_mbps;
    dst->link_idle_mbps = src->link_idle_mbps;
    dst->send_limit_mbps = src->send_limit_mbps;
    dst->ir_send = src->ir_send;
    dst->ir_send_alone = src->ir_send_alone;
    dst->ir_recv = src->ir_recv;
    dst->delay_ms = src->delay_ms;
    dst->slots = src->slots;
    dst->joins_at_s = src->joins_at_s;
    dst->load = src->load ? copy_load (src->load) : NULL;
}

/*  Put index i under parent p: its depth, the parent's children. */
static void
link_child (config_t *self, int i, int p)
{
    config_node_t *node = &self->nodes[i], *parent = &self->nodes[p];
    node->index = i;
    node->parent = p;
    node->depth = parent->depth + 1;
    free (node->parent_name);
    node->parent_name = xstrdup (parent->name);
    parent->children = xrealloc (parent->children,
                                 (size_t) (parent->nchildren + 1) * sizeof (int));
    parent->children[parent->nchildren++] = i;
}

int
config_attach (config_t *self, const config_node_t *node, int parent, char *err,
               size_t errlen)
{
    if (self->nnodes >= self->capacity)
        return tf_error (err, errlen, "the run has room for no more nodes (%d joined of %d)",
                         self->nnodes - (self->capacity - config_joins (self)),
                         config_joins (self));
    if (parent < 0 || parent >= self->nnodes)
        return tf_error (err, errlen, "parent %d is not a node", parent);
    if (config_find_node (self, node->name) >= 0)
        return tf_error (err, errlen, "a node called \"%s\" is in the run already",
                         node->name);
    int i = self->nnodes;
    memset (&self->nodes[i], 0, sizeof self->nodes[i]);
    copy_facts (&self->nodes[i], node);
    self->nnodes++;
    link_child (self, i, parent);
    return i;
}

/*  Set the depth of node's subtree from its parent's. */
static void
redepth (config_t *self, int node)
{
    config_node_t *n = &self->nodes[node];
    n->depth = self->nodes[n->parent].depth + 1;
    for (int c = 0; c < n->nchildren; c++)
        redepth (self, n->children[c]);
}

int
config_move (config_t *self, int node, int parent, char *err, size_t errlen)
{
    if (node <= 0 || node >= self->nnodes || parent < 0 || parent >= self->nnodes)
        return tf_error (err, errlen, "move node %d under %d: no such node", node, parent);
    for (int p = parent; p >= 0; p = self->nodes[p].parent)
        if (p == node)
            return tf_error (err, errlen, "move %s under %s: that is in its own subtree",
                             self->nodes[node].name, self->nodes[parent].name);
    config_node_t *old = &self->nodes[self->nodes[node].parent];
    int k = 0;
    while (k < old->nchildren && old->children[k] != node)
        k++;
    if (k == old->nchildren)
        return tf_error (err, errlen, "move %s: not a child of its parent %s",
                         self->nodes[node].name, old->name);
    memmove (&old->children[k], &old->children[k + 1],
             (size_t) (old->nchildren - k - 1) * sizeof (int));
    old->nchildren--;
    link_child (self, node, parent);
    redepth (self, node);
    return 0;
}

int
config_reparent_slots (const config_t *self, int node)
{
    int most = 0;
    const config_node_t *n = &self->nodes[node];
    for (int c = 0; c < n->nchildren; c++) {
        const config_node_t *kid = &self->nodes[n->children[c]];
        int grandchildren = 0;
        for (int g = 0; g < kid->nchildren; g++)
            grandchildren += !self->nodes[kid->children[g]].vacant;
        if (grandchildren > most)
            most = grandchildren;
    }
    return most;
}

void
config_add_vacant (config_t *self, int node, int n)
{
    if (n <= 0)
        return;
    if (self->nnodes + n > self->capacity) {
        self->capacity = self->nnodes + n;
        self->nodes = xrealloc (self->nodes, (size_t) self->capacity * sizeof *self->nodes);
    }
    for (int k = 1; k <= n; k++) {
        int i = self->nnodes++;
        config_node_t *slot = &self->nodes[i];
        memset (slot, 0, sizeof *slot);
        slot->name = xasprintf ("+vacant%d", k);
        slot->host = xstrdup (CONFIG_DEFAULT_HOST);
        slot->joins_at_s = -1;
        slot->ir_send_alone = NAN;
        slot->vacant = 1;
        link_child (self, i, node);
    }
}

int
config_fill_vacant (config_t *self, int index, const config_node_t *desc, char *err,
                    size_t errlen)
{
    if (index < 0 || index >= self->nnodes || !self->nodes[index].vacant)
        return tf_error (err, errlen, "node %d is not a vacant slot", index);
    config_node_t *slot = &self->nodes[index];
    free (slot->name);
    free (slot->host);
    load_destroy (&slot->load);
    copy_facts (slot, desc);
    slot->vacant = 0;
    return 0;
}

int
config_detach_last (config_t *self)
{
    int i = self->nnodes - 1;
    if (i <= 0 || self->nodes[i].nchildren > 0 || self->nodes[i].vacant)
        return -1;
    config_node_t *parent = &self->nodes[self->nodes[i].parent];
    if (parent->nchildren == 0 || parent->children[parent->nchildren - 1] != i)
        return -1;
    parent->nchildren--;
    config_node_clear (&self->nodes[i]);
    self->nnodes--;
    return 0;
}
