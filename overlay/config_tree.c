/*  config_tree — an experiment's tree: each node's keys, its link from
 *  the parent, its host and load, the parents found, cycles refused,
 *  depths and children set, and the emulation's checks of IRs against
 *  link rates. See overlay/config_int.h.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/config_int.h"
#include "overlay/host.h"
#include "overlay/load.h"
#include "overlay/util.h"

static const char *const node_keys[] = {
    "name", "parent", "host", "compute", "link_mbps", "link_idle_mbps",
    "send_limit_mbps", "ir_send", "ir_send_alone", "ir_recv", "delay_ms", "slots", "load",
    "joins_at_s", NULL
};
/*  Keys that describe the link from the parent: an error on the root. */
static const char *const link_keys[] = {
    "link_mbps", "link_idle_mbps", "ir_send", "ir_send_alone", "ir_recv", "delay_ms", NULL
};

/*  A node's host says where and how it runs (overlay/host.h). */
static int
check_host (jsonw_t *s, const char *host)
{
    host_t parsed;
    char why[TF_ERRLEN - JSONW_LABEL_LEN];
    if (host_parse (host, &parsed, why, sizeof why) != 0)
        return jsonw_fail (s->doc, s->label, "host: %s", why);
    return 0;
}

/*  Optional number key of s, >= 0, at most max, into *out. */
static int
get_at_most (jsonw_t *s, const char *key, double max, double *out)
{
    if (jsonw_get_number (s, key, 0, JSONW_NONNEGATIVE, out) < 0)
        return -1;
    char where[JSONW_LABEL_LEN + 32];
    if (*out > max)
        return jsonw_fail (s->doc, jsonw_field (s, key, where, sizeof where),
                           "must be at most %g, got %g", max, *out);
    return 0;
}

/*  The link from a node's parent: on the root, none of its keys. A node
 *  offered to the run (offered) has its link whatever parent it gets. */
static int
parse_link (jsonw_t *s, config_node_t *node, int offered)
{
    node->ir_send_alone = NAN;
    if (!node->parent_name && !offered) {
        for (int k = 0; link_keys[k]; k++)
            if (json_object_get (s->obj, link_keys[k]))
                return jsonw_fail (s->doc, s->label, "%s: the root has no parent link",
                                   link_keys[k]);
        return 0;
    }
    if (jsonw_get_number (s, "link_mbps", 1, JSONW_POSITIVE, &node->link_mbps) < 0)
        return -1;
    node->link_idle_mbps = node->link_mbps;
    if (jsonw_get_number (s, "link_idle_mbps", 0, JSONW_POSITIVE,
                          &node->link_idle_mbps) < 0
        || jsonw_get_number (s, "ir_send", 0, JSONW_NONNEGATIVE, &node->ir_send) < 0
        || jsonw_get_number (s, "ir_send_alone", 0, JSONW_NONNEGATIVE,
                             &node->ir_send_alone) < 0
        || jsonw_get_number (s, "ir_recv", 0, JSONW_NONNEGATIVE, &node->ir_recv) < 0)
        return -1;
    return get_at_most (s, "delay_ms", CONFIG_MAX_DELAY_MS, &node->delay_ms);
}

/*  The node's background load, if any (overlay/load.h): a trace's path
 *  is relative to the config file's directory. */
static int
parse_load (jsonw_t *s, config_node_t *node)
{
    jsonw_t w;
    int rc = jsonw_get_section (s, "load", 0, &w);
    if (rc <= 0)
        return rc;
    const char *slash = strrchr (s->doc->origin, '/');
    char *dir = slash ? xasprintf ("%.*s", (int) (slash - s->doc->origin + 1),
                                   s->doc->origin)
                      : NULL;
    node->load = load_parse (&w, dir);
    free (dir);
    return node->load ? 0 : -1;
}

int
config_node_is_relay (const config_node_t *node)
{
    return node->compute_rate == 0 && !node->vacant;
}

/*  Is "slots" written as 0 (a relay, config_node_is_relay)? */
static int
slots_zero (const jsonw_t *s)
{
    json_t *slots = json_object_get (s->obj, "slots");
    return json_is_integer (slots) && json_integer_value (slots) == 0;
}

/*  compute: required and > 0, except on a relay ("slots": 0), where it is
 *  0 or absent. Either mistake is named with the key that fixes it. */
static int
parse_compute (jsonw_t *s, config_node_t *node)
{
    int relay = slots_zero (s);
    double c = 0;
    int rc = jsonw_get_number (s, "compute", !relay, relay ? JSONW_NONNEGATIVE : JSONW_ANY,
                               &c);
    if (rc <= 0)
        return rc;
    if (relay && c > 0)
        return jsonw_fail (s->doc, s->label, "compute: a relay (\"slots\": 0) computes "
                           "nothing, so compute must be 0 or absent, got %g", c);
    if (!relay && c == 0)
        return jsonw_fail (s->doc, s->label, "compute: must be > 0, got 0 (a node that "
                           "only forwards is a relay: write \"slots\": 0)");
    if (!relay && c < 0)
        return jsonw_fail (s->doc, s->label, "compute: must be > 0, got %g", c);
    node->compute_rate = c;
    return 0;
}

/*  What a relay may not be yet: a node offered to a running run (the
 *  controller places a joining node by what it computes), a node below
 *  the root (the retries of command tasks count every node of a subtree
 *  as one a command may run on), or loaded (a load slows computing, of
 *  which it does none). A relay without children is refused once the
 *  tree is known (config_parse_tree). */
static int
check_relay (jsonw_t *s, const config_node_t *node, int offered)
{
    if (!config_node_is_relay (node))
        return 0;
    if (offered)
        return jsonw_fail (s->doc, s->label, "slots: a node offered to a running run "
                           "(joins_at_s, treefarm join) cannot be a relay (\"slots\": 0)");
    if (node->parent_name)
        return jsonw_fail (s->doc, s->label, "slots: only the root may be a relay "
                           "(\"slots\": 0); relays below the root are not supported yet");
    if (json_object_get (s->obj, "load"))
        return jsonw_fail (s->doc, s->label, "load: a relay (\"slots\": 0) computes "
                           "nothing, so a background load on it would change nothing");
    return 0;
}

/*  Read tree[i] into node. Its own keys only: parents, roots and cycles
 *  are checked once every node is known. label: how messages name the
 *  entry; offered: a node offered to a running run. */
static int
parse_entry (jsonw_doc_t *ld, json_t *entry, const char *label, int i,
             config_node_t *node, int offered)
{
    jsonw_t s = {.doc = ld, .obj = entry, .sep = ": "};
    snprintf (s.label, sizeof s.label, "%s", label);
    if (!json_is_object (entry))
        return jsonw_fail (ld, s.label, "expected an object, got %s",
                           jsonw_type_name (ld, entry));
    /* Label with the name as soon as we know it is one. */
    const char *name = json_string_value (json_object_get (entry, "name"));
    if (name && config_valid_name (name))
        snprintf (s.label, sizeof s.label, "%s (node \"%s\")", label, name);
    if (jsonw_check_keys (&s, node_keys) < 0
        || jsonw_get_string (&s, "name", 1, 1, SIZE_MAX, &name) < 0)
        return -1;
    char q[JSONW_QUOTE_LEN];
    if (!config_valid_name (name))
        return jsonw_fail (ld, s.label, "name: must be 1..%d characters from %s, got %s",
                           NAME_MAX_LEN, NAME_CHARS, tf_quote (q, sizeof q, name));
    node->name = xstrdup (name);
    node->index = i;
    node->parent = -1;
    const char *parent = NULL, *host = CONFIG_DEFAULT_HOST;
    if (jsonw_get_string (&s, "parent", 0, 1, SIZE_MAX, &parent) < 0
        || jsonw_get_string (&s, "host", 0, 1, SIZE_MAX, &host) < 0
        || check_host (&s, host) < 0 || parse_compute (&s, node) < 0)
        return -1;
    /*  When the node is offered to the run: joins_at_s, or -1 (in the tree
     *  from the start, or offered by `treefarm join`). */
    node->joins_at_s = -1;
    if (get_at_most (&s, "joins_at_s", CONFIG_MAX_JOINS_AT_S, &node->joins_at_s) < 0)
        return -1;
    node->parent_name = parent ? xstrdup (parent) : NULL;
    node->host = xstrdup (host);
    long long slots = 0;
    if (parse_link (&s, node, offered || node->joins_at_s >= 0) < 0
        || jsonw_get_number (&s, "send_limit_mbps", 0, JSONW_POSITIVE,
                             &node->send_limit_mbps) < 0
        || jsonw_get_integer (&s, "slots", 0, 0, CONFIG_MAX_SLOTS, &slots) < 0)
        return -1;
    node->slots = (uint32_t) slots;
    if (check_relay (&s, node, offered || node->joins_at_s >= 0) < 0)
        return -1;
    return parse_load (&s, node);
}

static int
parse_node (jsonw_doc_t *ld, json_t *entry, int i, config_node_t *node)
{
    char label[32];
    snprintf (label, sizeof label, "tree[%d]", i);
    return parse_entry (ld, entry, label, i, node, 0);
}

int
config_node_parse (json_t *json, const char *origin, config_node_t *out, char *err,
                   size_t errlen)
{
    jsonw_doc_t ld = {.style = JSONW_CONFIG, .origin = origin, .err = err, .errlen = errlen};
    memset (out, 0, sizeof *out);
    if (parse_entry (&ld, json, "node", 0, out, 1) == 0)
        return 0;
    config_node_clear (out);
    return -1;
}

/*  Resolve parent names to indices and find the one root. names maps each
 *  node name to its index. */
static int
find_parents (config_t *self, jsonw_doc_t *ld, json_t *names)
{
    char label[JSONW_LABEL_LEN], q[JSONW_QUOTE_LEN];
    self->root = -1;
    for (int i = 0; i < self->nnodes; i++) {
        config_node_t *node = &self->nodes[i];
        if (!node->parent_name) {
            if (self->root >= 0)
                return jsonw_fail (ld, "tree",
                                   "two roots, \"%s\" (tree[%d]) and \"%s\" (tree[%d])",
                             self->nodes[self->root].name, self->root, node->name, i);
            self->root = i;
            continue;
        }
        snprintf (label, sizeof label, "tree[%d] (node \"%s\")", i, node->name);
        json_t *idx = json_object_get (names, node->parent_name);
        if (!idx)
            return jsonw_fail (ld, label, "parent %s is not a node",
                               tf_quote (q, sizeof q, node->parent_name));
        node->parent = (int) json_integer_value (idx);
        if (node->parent == i)
            return jsonw_fail (ld, label, "is its own parent");
    }
    if (self->root < 0)
        return jsonw_fail (ld, "tree", "no root (every node has a parent)");
    return 0;
}

/*  Report the cycle through node j that ends the walk walk[0..len-1]. The
 *  walk ends j, parent (j), ..., the child of j: print it backwards, each
 *  arrow from a parent to its child. */
static int
fail_cycle (const config_t *self, jsonw_doc_t *ld, int j, const int *walk, int len)
{
    char path[TF_ERRLEN];
    size_t used = snprintf (path, sizeof path, "%s", self->nodes[j].name);
    for (int k = len - 1; k >= 0 && used < sizeof path; k--) {
        used += snprintf (path + used, sizeof path - used, " -> %s",
                          self->nodes[walk[k]].name);
        if (walk[k] == j)
            break;
    }
    return jsonw_fail (ld, "tree", "cycle: %s", path);
}

/*  Set every node's depth by walking up from it to a node of known depth;
 *  meeting a node of the current walk again means a cycle. Linear time,
 *  no recursion, so a long chain is fine. */
static int
set_depths (config_t *self, jsonw_doc_t *ld)
{
    int rc = 0, n = self->nnodes;
    int *state = xcalloc ((size_t) n, sizeof *state);   /* 0 new, 1 walking, 2 done */
    int *walk = xmalloc ((size_t) n * sizeof *walk);
    state[self->root] = 2;
    for (int i = 0; i < n; i++) {
        int len = 0, j = i;
        while (state[j] == 0) {
            state[j] = 1;
            walk[len++] = j;
            j = self->nodes[j].parent;
        }
        if (state[j] == 1) {
            rc = fail_cycle (self, ld, j, walk, len);
            goto out;
        }
        while (len > 0) {
            config_node_t *node = &self->nodes[walk[--len]];
            node->depth = self->nodes[node->parent].depth + 1;
            state[node->index] = 2;
        }
    }
out:
    free (walk);
    free (state);
    return rc;
}

/*  Fill every node's children, in tree[] order. */
static void
set_children (config_t *self)
{
    int n = self->nnodes;
    for (int i = 0; i < n; i++)
        if (self->nodes[i].parent >= 0)
            self->nodes[self->nodes[i].parent].nchildren++;
    for (int i = 0; i < n; i++)
        if (self->nodes[i].nchildren > 0)
            self->nodes[i].children = xmalloc ((size_t) self->nodes[i].nchildren
                                               * sizeof (int));
    int *fill = xcalloc ((size_t) n, sizeof *fill);
    for (int i = 0; i < n; i++) {
        int p = self->nodes[i].parent;
        if (p >= 0)
            self->nodes[p].children[fill[p]++] = i;
    }
    free (fill);
}

/*  --- interference ---------------------------------------------------------
 *
 *  The emulated compute rate of node n is C (1 - IR_r TR - sum_i IR_s(i)
 *  TR(i)), clamped at 0 (node/meter.c interference_factor). An emulated
 *  run is refused when one transfer each way can make it reach 0:
 *  receiving at link_mbps (alone), sending to one child at the most it can
 *  (alone), or both at once. The loader accepts such a config: the bound
 *  model prices an exhausted CPU (docs/bounds.md). docs/config.md says why
 *  not all children at once. */

/*  The most node can send to child: its link, capped by node's limit. */
static double
send_rate (const config_node_t *node, const config_node_t *child, int *capped)
{
    *capped = node->send_limit_mbps > 0 && node->send_limit_mbps < child->link_mbps;
    return *capped ? node->send_limit_mbps : child->link_mbps;
}

/*  One link on its own: ir_recv at node, ir_send at node's parent. */
static int
check_link_ir (const config_t *self, jsonw_doc_t *ld, const config_node_t *node)
{
    char label[JSONW_LABEL_LEN];
    snprintf (label, sizeof label, "tree[%d] (node \"%s\")", node->index, node->name);
    if (!(node->ir_recv * node->link_mbps < 1))
        return jsonw_fail (ld, label, "ir_recv %g x link_mbps %g leaves no compute "
                           "(must be < 1)", node->ir_recv, node->link_mbps);
    const config_node_t *parent = &self->nodes[node->parent];
    int capped;
    double rate = send_rate (parent, node, &capped);
    if (!(node->ir_send * rate < 1))
        return jsonw_fail (ld, label, "ir_send %g x %s %g leaves its parent \"%s\" no "
                           "compute (must be < 1)", node->ir_send,
                           capped ? "the parent's send_limit_mbps" : "link_mbps", rate,
                           parent->name);
    return 0;
}

/*  Receiving at its link rate while sending to its worst child. */
static int
check_relay_ir (const config_t *self, jsonw_doc_t *ld, const config_node_t *node)
{
    double recv_loss = node->ir_recv * node->link_mbps, worst = 0;
    int worst_child = -1, capped;
    for (int k = 0; k < node->nchildren; k++) {
        const config_node_t *child = &self->nodes[node->children[k]];
        double loss = child->ir_send * send_rate (node, child, &capped);
        if (worst_child < 0 || loss > worst) {
            worst = loss;
            worst_child = child->index;
        }
    }
    if (worst_child < 0 || 1 - recv_loss - worst > 0)
        return 0;
    const config_node_t *child = &self->nodes[worst_child];
    char label[JSONW_LABEL_LEN];
    snprintf (label, sizeof label, "tree[%d] (node \"%s\")", node->index, node->name);
    return jsonw_fail (ld, label, "ir_recv %g x link_mbps %g plus ir_send %g of child "
                       "\"%s\" x %g leave no compute when it receives and sends at once "
                       "(1 - %g - %g = %g, must be > 0)", node->ir_recv, node->link_mbps,
                       child->ir_send, child->name, send_rate (node, child, &capped),
                       recv_loss, worst, 1 - recv_loss - worst);
}

int
config_check_emulation (const config_t *self, char *err, size_t errlen)
{
    jsonw_doc_t ld = {.style = JSONW_CONFIG, .origin = self->path, .err = err,
                      .errlen = errlen};
    /*  Only the emulator computes at the modelled rate; a real node
     *  computes at its machine's speed, and IR only orders children. */
    if (self->platform.mode != PLATFORM_EMULATED)
        return 0;
    for (int i = 0; i < self->nnodes; i++)
        if (self->nodes[i].parent >= 0 && check_link_ir (self, &ld, &self->nodes[i]) < 0)
            return -1;
    for (int i = 0; i < self->nnodes; i++)
        if (self->nodes[i].parent >= 0 && check_relay_ir (self, &ld, &self->nodes[i]) < 0)
            return -1;
    return 0;
}

/*  Move the offered nodes (joins_at_s) out of nodes into offered, keeping
 *  tree[] order in both, and make room for the nodes that may join. An
 *  offered node's parent, if it names one, must be a node of the tree. */
static int
split_offered (config_t *self, jsonw_doc_t *ld)
{
    int n = self->nnodes, kept = 0, offered = 0;
    for (int i = 0; i < n; i++)
        offered += self->nodes[i].joins_at_s >= 0;
    if (offered + (int) self->join_slots > CONFIG_MAX_JOINS)
        return jsonw_fail (ld, "tree", "offers %d nodes (joins_at_s) and platform.join_slots "
                           "is %u: at most %d nodes may join a run", offered,
                           self->join_slots, CONFIG_MAX_JOINS);
    self->noffered = offered;
    self->offered = xcalloc ((size_t) self->noffered + 1, sizeof *self->offered);
    for (int i = 0, o = 0; i < n; i++) {
        if (self->nodes[i].joins_at_s >= 0)
            self->offered[o++] = self->nodes[i];
        else
            self->nodes[kept++] = self->nodes[i];
    }
    self->nnodes = kept;
    self->capacity = kept + config_joins (self);
    self->nodes = xrealloc (self->nodes, (size_t) self->capacity * sizeof *self->nodes);
    memset (self->nodes + kept, 0, (size_t) (self->capacity - kept) * sizeof *self->nodes);
    for (int i = 0; i < kept; i++)
        self->nodes[i].index = i;
    if (kept == 0)
        return jsonw_fail (ld, "tree", "has only offered nodes (joins_at_s): it needs a root");
    return 0;
}

/*  An offered node's parent, when it names one, is a node of the tree. */
static int
find_offered_parents (config_t *self, jsonw_doc_t *ld)
{
    char label[JSONW_LABEL_LEN], q[JSONW_QUOTE_LEN];
    for (int o = 0; o < self->noffered; o++) {
        config_node_t *node = &self->offered[o];
        node->parent = -1;
        node->index = -1;
        if (!node->parent_name)
            continue;
        node->parent = config_find_node (self, node->parent_name);
        snprintf (label, sizeof label, "tree (offered node \"%s\")", node->name);
        if (node->parent < 0)
            return jsonw_fail (ld, label, "parent %s is not a node of the tree",
                               tf_quote (q, sizeof q, node->parent_name));
    }
    return 0;
}

/*  A relay forwards every task it gets: with no children (offered nodes
 *  are not children yet) it would hold the bag and never finish. */
static int
check_relay_children (const config_t *self, jsonw_doc_t *ld)
{
    const config_node_t *root = &self->nodes[self->root];
    if (!config_node_is_relay (root) || root->nchildren > 0)
        return 0;
    char label[JSONW_LABEL_LEN];
    snprintf (label, sizeof label, "tree[%d] (node \"%s\")", root->index, root->name);
    return jsonw_fail (ld, label, "slots: a relay (\"slots\": 0) computes nothing and "
                       "has no children to forward its tasks to");
}

int
config_parse_tree (config_t *self, jsonw_t *top)
{
    jsonw_doc_t *ld = top->doc;
    int rc;
    json_t *tree = jsonw_lookup (top, "tree", 1, &rc);
    if (!tree)
        return rc;
    if (!json_is_array (tree))
        return jsonw_fail (ld, "tree", "expected an array, got %s",
                           jsonw_type_name (ld, tree));
    size_t n = json_array_size (tree);
    if (n == 0)
        return jsonw_fail (ld, "tree", "is empty (it needs at least the root)");
    if (n > CONFIG_MAX_NODES)
        return jsonw_fail (ld, "tree", "has %zu nodes, at most %d are allowed", n,
                           CONFIG_MAX_NODES);

    self->nodes = xcalloc (n, sizeof *self->nodes);
    self->nnodes = (int) n;
    self->capacity = (int) n;
    json_t *names = json_object ();   /* node name -> index */
    for (int i = 0; i < (int) n; i++) {
        config_node_t *node = &self->nodes[i];
        rc = parse_node (ld, json_array_get (tree, (size_t) i), i, node);
        if (rc < 0)
            goto out_free_names;
        json_t *first = json_object_get (names, node->name);
        if (first) {
            char label[32];
            snprintf (label, sizeof label, "tree[%d]", i);
            rc = jsonw_fail (ld, label, "duplicate node name \"%s\" (first at tree[%d])",
                             node->name, (int) json_integer_value (first));
            goto out_free_names;
        }
        json_object_set_new (names, node->name, json_integer (i));
    }
    json_object_clear (names);
    rc = split_offered (self, ld);
    for (int i = 0; rc == 0 && i < self->nnodes; i++)
        json_object_set_new (names, self->nodes[i].name, json_integer (i));
    if (rc == 0)
        rc = find_parents (self, ld, names);
    if (rc == 0)
        rc = find_offered_parents (self, ld);
out_free_names:
    json_decref (names);
    if (rc < 0 || set_depths (self, ld) < 0)
        return -1;
    set_children (self);
    return check_relay_children (self, ld);
}
