/*  config — load, validate and print an experiment (see config.h and
 *  docs/config.md).
 *
 *  The loader walks the JSON document itself rather than unpacking it with
 *  a format string, so that every message names the exact place
 *  ("tree[2] (node "Lab4"): compute"), an unknown key comes with a
 *  suggestion, and the first error found is the one reported.
 */
#include "overlay/config.h"
#include "overlay/host.h"
#include "overlay/jsonw.h"
#include "overlay/load.h"
#include "overlay/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 63
#define NAME_CHARS   "[A-Za-z0-9_.-]"

static inline int
streq (const char *a, const char *b)
{
    return strcmp (a, b) == 0;
}

static const char *const top_keys[] = {
    "name", "tasks", "policy", "platform", "tree", NULL
};
static const char *const task_keys[] = {
    "count", "input_mb", "units", NULL
};
static const char *const platform_keys[] = {
    "mode", "time_scale", "payload_scale", "chunk_kib", "window", "buffer",
    "matrix_n", "sample_ms", "ir", "heartbeat_ms", "heartbeat_misses", "adapt", "reclaim", NULL
};
static const char *const node_keys[] = {
    "name", "parent", "host", "compute", "link_mbps", "link_idle_mbps",
    "send_limit_mbps", "ir_send", "ir_recv", "delay_ms", "slots", "load", NULL
};
/*  Keys that describe the link from the parent: an error on the root. */
static const char *const link_keys[] = {
    "link_mbps", "link_idle_mbps", "ir_send", "ir_recv", "delay_ms", NULL
};

static const char *const reclaim_names[RECLAIM_MODE_COUNT] = {
    [RECLAIM_GATED] = "gated", [RECLAIM_ALWAYS] = "always", [RECLAIM_NEVER] = "never",
};

const char *
reclaim_mode_str (reclaim_mode_t mode)
{
    return mode >= 0 && mode < RECLAIM_MODE_COUNT ? reclaim_names[mode] : "?";
}

int
reclaim_mode_parse (const char *name)
{
    for (int m = 0; name && m < RECLAIM_MODE_COUNT; m++)
        if (streq (name, reclaim_names[m]))
            return m;
    return -1;
}

const char *
platform_mode_str (platform_mode_t mode)
{
    switch (mode) {
    case PLATFORM_EMULATED:
        return "emulated";
    case PLATFORM_REAL:
        return "real";
    }
    return "unknown";
}

/*  Return 1 if name is 1..63 characters from [A-Za-z0-9_.-], else 0. */
static int
valid_name (const char *name)
{
    size_t len = strlen (name);
    if (len < 1 || len > NAME_MAX_LEN)
        return 0;
    return strspn (name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                         "0123456789_.-") == len;
}

static int
parse_tasks (config_t *self, jsonw_t *top)
{
    jsonw_t s;
    long long count = 0;
    int rc = jsonw_get_section (top, "tasks", 0, &s);
    if (rc == 0)
        return 0;   /* no synthetic tasks: a run brings command tasks */
    if (rc < 0
        || jsonw_check_keys (&s, task_keys) < 0
        || jsonw_get_integer (&s, "count", 1, 1, LLONG_MAX, &count) < 0
        || jsonw_get_number (&s, "input_mb", 1, JSONW_NONNEGATIVE,
                             &self->tasks.input_mb) < 0
        || jsonw_get_number (&s, "units", 1, JSONW_POSITIVE, &self->tasks.units) < 0)
        return -1;
    if (count > CONFIG_MAX_TASKS)
        return jsonw_fail (s.doc, "tasks.count", "must be at most %lld, got %lld",
                           CONFIG_MAX_TASKS, count);
    if (self->tasks.input_mb > CONFIG_MAX_INPUT_MB)
        return jsonw_fail (s.doc, "tasks.input_mb", "must be at most %g, got %g",
                           CONFIG_MAX_INPUT_MB, self->tasks.input_mb);
    if (self->tasks.units > CONFIG_MAX_UNITS)
        return jsonw_fail (s.doc, "tasks.units", "must be at most %g, got %g",
                           CONFIG_MAX_UNITS, self->tasks.units);
    self->tasks.count = (uint64_t) count;
    return 0;
}

/*  Read a bounded integer platform key into a uint32_t field. */
static int
get_u32 (jsonw_t *s, const char *key, long long min, long long max, uint32_t *out)
{
    long long v = *out;
    int rc = jsonw_get_integer (s, key, 0, min, max, &v);
    *out = (uint32_t) v;
    return rc;
}

/*  The platform's numbers, each within its stated range. */
static int
get_platform_numbers (config_t *self, jsonw_t *s)
{
    return jsonw_get_number (s, "time_scale", 0, JSONW_POSITIVE,
                             &self->platform.time_scale) < 0
        || jsonw_get_number (s, "payload_scale", 0, JSONW_FRACTION,
                             &self->platform.payload_scale) < 0
        || get_u32 (s, "chunk_kib", 1, CONFIG_MAX_CHUNK_KIB,
                    &self->platform.chunk_kib) < 0
        || get_u32 (s, "window", 1, CONFIG_MAX_WINDOW, &self->platform.window) < 0
        || get_u32 (s, "buffer", 1, CONFIG_MAX_BUFFER, &self->platform.buffer) < 0
        || get_u32 (s, "matrix_n", CONFIG_MIN_MATRIX_N, CONFIG_MAX_MATRIX_N,
                    &self->platform.matrix_n) < 0
        || get_u32 (s, "sample_ms", 1, CONFIG_MAX_SAMPLE_MS,
                    &self->platform.sample_ms) < 0
        || get_u32 (s, "heartbeat_ms", CONFIG_MIN_HEARTBEAT_MS, CONFIG_MAX_HEARTBEAT_MS,
                    &self->platform.heartbeat_ms) < 0
        || get_u32 (s, "heartbeat_misses", CONFIG_MIN_MISSES, CONFIG_MAX_MISSES,
                    &self->platform.misses) < 0
               ? -1
               : 0;
}

/*  The platform a config without a "platform" block runs on. */
static void
set_platform_defaults (config_t *self)
{
    self->platform.mode = PLATFORM_EMULATED;
    self->platform.time_scale = 1;
    self->platform.payload_scale = 1;
    self->platform.chunk_kib = 512;
    self->platform.window = 4;
    self->platform.buffer = 3;
    self->platform.matrix_n = 1024;
    self->platform.sample_ms = 100;
    self->platform.ir_measured = 0;
    self->platform.adapt = 0;
    self->platform.reclaim = RECLAIM_GATED;
    self->platform.heartbeat_ms = 0;
    self->platform.misses = CONFIG_DEFAULT_MISSES;
}

/*  The platform's words: mode, ir, adapt and reclaim. */
static int
get_platform_words (config_t *self, jsonw_t *s)
{
    const char *mode = NULL, *ir = NULL, *reclaim = NULL;
    char q[JSONW_QUOTE_LEN];
    if (jsonw_get_string (s, "mode", 0, 1, SIZE_MAX, &mode) < 0
        || jsonw_get_string (s, "ir", 0, 1, SIZE_MAX, &ir) < 0
        || jsonw_get_bool (s, "adapt", 0, &self->platform.adapt) < 0
        || jsonw_get_string (s, "reclaim", 0, 1, SIZE_MAX, &reclaim) < 0)
        return -1;
    if (reclaim && reclaim_mode_parse (reclaim) < 0)
        return jsonw_fail (s->doc, "platform.reclaim",
                           "unknown value %s (expected \"gated\", \"always\" or "
                           "\"never\")", tf_quote (q, sizeof q, reclaim));
    if (reclaim)
        self->platform.reclaim = reclaim_mode_parse (reclaim);
    if (ir && streq (ir, "measured"))
        self->platform.ir_measured = 1;
    else if (ir && !streq (ir, "configured"))
        return jsonw_fail (s->doc, "platform.ir",
                           "unknown value %s (expected \"configured\" or \"measured\")",
                           tf_quote (q, sizeof q, ir));
    if (mode && streq (mode, "real"))
        self->platform.mode = PLATFORM_REAL;
    else if (mode && !streq (mode, "emulated"))
        return jsonw_fail (s->doc, "platform.mode",
                           "unknown mode %s (expected \"emulated\" or \"real\")",
                           tf_quote (q, sizeof q, mode));
    return 0;
}

static int
parse_platform (config_t *self, jsonw_t *top)
{
    set_platform_defaults (self);
    jsonw_t s;
    int rc = jsonw_get_section (top, "platform", 0, &s);
    if (rc <= 0)
        return rc;
    if (jsonw_check_keys (&s, platform_keys) < 0 || get_platform_words (self, &s) < 0
        || get_platform_numbers (self, &s) < 0)
        return -1;
    if (self->platform.time_scale > CONFIG_MAX_TIME_SCALE)
        return jsonw_fail (s.doc, "platform.time_scale", "must be at most %g, got %g",
                           CONFIG_MAX_TIME_SCALE, self->platform.time_scale);
    /*  Real compute on real links runs at the machines' own speed: scaling
     *  its time or its bytes would report figures nobody measured. */
    if (self->platform.mode == PLATFORM_REAL && self->platform.time_scale != 1)
        return jsonw_fail (s.doc, "platform.time_scale", "must be 1 in real mode (only "
                           "emulated runs scale time), got %g",
                           self->platform.time_scale);
    if (self->platform.mode == PLATFORM_REAL && self->platform.payload_scale != 1)
        return jsonw_fail (s.doc, "platform.payload_scale", "must be 1 in real mode "
                           "(real links move whole payloads), got %g",
                           self->platform.payload_scale);
    return 0;
}

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

/*  The link from a node's parent: on the root, none of its keys. */
static int
parse_link (jsonw_t *s, config_node_t *node)
{
    if (!node->parent_name) {
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
        || jsonw_get_number (s, "ir_recv", 0, JSONW_NONNEGATIVE, &node->ir_recv) < 0
        || jsonw_get_number (s, "delay_ms", 0, JSONW_NONNEGATIVE, &node->delay_ms) < 0)
        return -1;
    char where[JSONW_LABEL_LEN + 32];
    if (node->delay_ms > CONFIG_MAX_DELAY_MS)
        return jsonw_fail (s->doc, jsonw_field (s, "delay_ms", where, sizeof where),
                           "must be at most %g, got %g", CONFIG_MAX_DELAY_MS,
                           node->delay_ms);
    return 0;
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

/*  Read tree[i] into node. Its own keys only: parents, roots and cycles
 *  are checked once every node is known. */
static int
parse_node (jsonw_doc_t *ld, json_t *entry, int i, config_node_t *node)
{
    jsonw_t s = {.doc = ld, .obj = entry, .sep = ": "};
    snprintf (s.label, sizeof s.label, "tree[%d]", i);
    if (!json_is_object (entry))
        return jsonw_fail (ld, s.label, "expected an object, got %s",
                           jsonw_type_name (ld, entry));
    /* Label with the name as soon as we know it is one. */
    const char *name = json_string_value (json_object_get (entry, "name"));
    if (name && valid_name (name))
        snprintf (s.label, sizeof s.label, "tree[%d] (node \"%s\")", i, name);
    if (jsonw_check_keys (&s, node_keys) < 0
        || jsonw_get_string (&s, "name", 1, 1, SIZE_MAX, &name) < 0)
        return -1;
    char q[JSONW_QUOTE_LEN];
    if (!valid_name (name))
        return jsonw_fail (ld, s.label, "name: must be 1..%d characters from %s, got %s",
                           NAME_MAX_LEN, NAME_CHARS, tf_quote (q, sizeof q, name));
    node->name = xstrdup (name);
    node->index = i;
    node->parent = -1;
    const char *parent = NULL, *host = CONFIG_DEFAULT_HOST;
    if (jsonw_get_string (&s, "parent", 0, 1, SIZE_MAX, &parent) < 0
        || jsonw_get_string (&s, "host", 0, 1, SIZE_MAX, &host) < 0
        || check_host (&s, host) < 0
        || jsonw_get_number (&s, "compute", 1, JSONW_POSITIVE, &node->compute_rate) < 0)
        return -1;
    node->parent_name = parent ? xstrdup (parent) : NULL;
    node->host = xstrdup (host);
    long long slots = 0;
    if (parse_link (&s, node) < 0
        || jsonw_get_number (&s, "send_limit_mbps", 0, JSONW_POSITIVE,
                             &node->send_limit_mbps) < 0
        || jsonw_get_integer (&s, "slots", 0, 1, CONFIG_MAX_SLOTS, &slots) < 0)
        return -1;
    node->slots = (uint32_t) slots;
    return parse_load (&s, node);
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

static int
parse_tree (config_t *self, jsonw_t *top)
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
    rc = find_parents (self, ld, names);
out_free_names:
    json_decref (names);
    if (rc < 0 || set_depths (self, ld) < 0)
        return -1;
    set_children (self);
    return 0;
}

/*  The file name without its directory and a ".json" suffix. */
static char *
default_name (const char *origin)
{
    const char *base = strrchr (origin, '/');
    base = base ? base + 1 : origin;
    size_t len = strlen (base);
    if (len >= 5 && streq (base + len - 5, ".json"))
        len -= 5;
    if (len == 0)
        return xstrdup ("experiment");
    return xasprintf ("%.*s", (int) len, base);
}

static int
parse_top (config_t *self, jsonw_doc_t *ld, json_t *json)
{
    if (!json_is_object (json))
        return jsonw_fail (ld, NULL, "expected an object at the top level, got %s",
                           jsonw_type_name (ld, json));
    jsonw_t top = {.doc = ld, .obj = json, .label = "", .sep = ""};
    const char *name = NULL, *policy = "fcfs";
    if (jsonw_check_keys (&top, top_keys) < 0
        || jsonw_get_string (&top, "name", 0, 1, SIZE_MAX, &name) < 0
        || parse_tasks (self, &top) < 0
        || jsonw_get_string (&top, "policy", 0, 1, SIZE_MAX, &policy) < 0)
        return -1;
    /*  The name becomes part of a results directory's name. */
    if (name && !valid_name (name)) {
        char q[JSONW_QUOTE_LEN];
        return jsonw_fail (ld, "name", "must be 1..%d characters from %s, got %s",
                           NAME_MAX_LEN, NAME_CHARS, tf_quote (q, sizeof q, name));
    }
    self->name = name ? xstrdup (name) : default_name (ld->origin);
    self->policy = xstrdup (policy);
    if (parse_platform (self, &top) < 0)
        return -1;
    /*  Nodes refuse a larger payload from any peer (docs/protocol.md). */
    if (config_task_bytes (self) > CONFIG_MAX_TASK_BYTES)
        return jsonw_fail (ld, "tasks.input_mb", "a task of %g MB at payload scale %g is "
                     "more than the %llu bytes a node accepts", self->tasks.input_mb,
                           self->platform.payload_scale,
                           (unsigned long long) CONFIG_MAX_TASK_BYTES);
    return parse_tree (self, &top);
}

/*  Build a config from a parsed document, or report why json is NULL.
 *  Takes ownership of json. */
static config_t *
load_json (json_t *json, const json_error_t *jerr, const char *origin, char *err,
           size_t errlen)
{
    if (!json) {
        tf_error (err, errlen, "%s:%d:%d: %s", origin, jerr->line, jerr->column,
                  jerr->text);
        return NULL;
    }
    jsonw_doc_t ld = {.style = JSONW_CONFIG, .origin = origin, .err = err,
                      .errlen = errlen};
    config_t *self = xcalloc (1, sizeof *self);
    self->path = xstrdup (origin);
    if (parse_top (self, &ld, json) < 0)
        config_destroy (&self);
    json_decref (json);
    return self;
}

config_t *
config_load_file (const char *path, char *err, size_t errlen)
{
    FILE *file = fopen (path, "r");
    if (!file) {
        tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
        return NULL;
    }
    json_error_t jerr;
    errno = 0;
    json_t *json = json_loadf (file, JSON_REJECT_DUPLICATES, &jerr);
    int read_errno = ferror (file) ? (errno ? errno : EIO) : 0;
    fclose (file);
    if (read_errno) {
        json_decref (json);
        tf_error (err, errlen, "%s: cannot read: %s", path, strerror (read_errno));
        return NULL;
    }
    return load_json (json, &jerr, path, err, errlen);
}

config_t *
config_load_string (const char *text, const char *origin, char *err, size_t errlen)
{
    if (!origin)
        origin = "<config>";
    json_error_t jerr;
    json_t *json = json_loads (text, JSON_REJECT_DUPLICATES, &jerr);
    return load_json (json, &jerr, origin, err, errlen);
}

void
config_destroy (config_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    config_t *self = *self_p;
    for (int i = 0; i < self->nnodes; i++) {
        free (self->nodes[i].name);
        free (self->nodes[i].parent_name);
        free (self->nodes[i].host);
        free (self->nodes[i].children);
        load_destroy (&self->nodes[i].load);
    }
    free (self->nodes);
    free (self->policy);
    free (self->name);
    free (self->path);
    free (self);
    *self_p = NULL;
}

int
config_find_node (const config_t *self, const char *name)
{
    if (!self || !name)
        return -1;
    for (int i = 0; i < self->nnodes; i++)
        if (streq (self->nodes[i].name, name))
            return i;
    return -1;
}

void
config_set_policy (config_t *self, const char *policy)
{
    char *copy = xstrdup (policy);
    free (self->policy);
    self->policy = copy;
}

/*  Raise digits (at most 17 significant digits) until every real in json
 *  printed with that many reads back to the same double, so canonical
 *  output says 9.06 rather than 9.0600000000000005 and still round-trips
 *  exactly. Returns digits unchanged iff every real already fits. */
static int
real_digits (const json_t *json, int digits)
{
    if (json_is_real (json)) {
        double v = json_real_value (json);
        char buf[40];
        for (; digits < 17; digits++) {
            snprintf (buf, sizeof buf, "%.*g", digits, v);
            if (strtod (buf, NULL) == v)
                break;
        }
    }
    else if (json_is_object (json)) {
        const char *key;
        json_t *value;
        json_object_foreach ((json_t *) json, key, value)
            digits = real_digits (value, digits);
    }
    else if (json_is_array (json)) {
        size_t i;
        json_t *value;
        json_array_foreach (json, i, value)
            digits = real_digits (value, digits);
    }
    return digits;
}

/*  tree[i] of the canonical config: what the loader reads back. */
static json_t *
node_to_json (const config_node_t *node)
{
    json_t *entry = json_pack ("{s:s}", "name", node->name);
    if (node->parent_name)
        json_object_set_new (entry, "parent", json_string (node->parent_name));
    json_object_set_new (entry, "host", json_string (node->host));
    json_object_set_new (entry, "compute", json_real (node->compute_rate));
    if (node->slots)
        json_object_set_new (entry, "slots", json_integer (node->slots));
    /* 0 (unlimited) is the absence of the key: the loader wants > 0. */
    if (node->send_limit_mbps > 0)
        json_object_set_new (entry, "send_limit_mbps", json_real (node->send_limit_mbps));
    if (node->parent_name) {
        json_object_set_new (entry, "link_mbps", json_real (node->link_mbps));
        json_object_set_new (entry, "link_idle_mbps", json_real (node->link_idle_mbps));
        json_object_set_new (entry, "ir_send", json_real (node->ir_send));
        json_object_set_new (entry, "ir_recv", json_real (node->ir_recv));
        json_object_set_new (entry, "delay_ms", json_real (node->delay_ms));
    }
    if (node->load)
        json_object_set_new (entry, "load", load_to_json (node->load));
    return entry;
}

char *
config_to_json (const config_t *self)
{
    json_t *tree = json_array ();
    for (int i = 0; i < self->nnodes; i++)
        json_array_append_new (tree, node_to_json (&self->nodes[i]));
    json_t *json = json_pack (
        "{s:s, s:s, s:{s:s, s:f, s:f, s:i, s:i, s:i, s:i, s:i, s:s, s:i}, s:o}",
        "name", self->name,
        "policy", self->policy,
        "platform", "mode", platform_mode_str (self->platform.mode),
        "time_scale", self->platform.time_scale,
        "payload_scale", self->platform.payload_scale,
        "chunk_kib", (int) self->platform.chunk_kib,
        "window", (int) self->platform.window,
        "buffer", (int) self->platform.buffer,
        "matrix_n", (int) self->platform.matrix_n,
        "sample_ms", (int) self->platform.sample_ms,
        "ir", self->platform.ir_measured ? "measured" : "configured",
        "heartbeat_misses", (int) self->platform.misses,
        "tree", tree);
    if (json && self->platform.adapt)
        json_object_set_new (json_object_get (json, "platform"), "adapt", json_true ());
    if (json && self->platform.reclaim != RECLAIM_GATED)
        json_object_set_new (json_object_get (json, "platform"), "reclaim",
                             json_string (reclaim_mode_str (self->platform.reclaim)));
    if (json && self->platform.heartbeat_ms > 0)
        json_object_set_new (json_object_get (json, "platform"), "heartbeat_ms",
                             json_integer (self->platform.heartbeat_ms));
    if (json && self->tasks.count > 0)
        json_object_set_new (json, "tasks",
                             json_pack ("{s:I, s:f, s:f}", "count",
                                        (json_int_t) self->tasks.count, "input_mb",
                                        self->tasks.input_mb, "units", self->tasks.units));
    int digits = 1, more;
    while (json && (more = real_digits (json, digits)) != digits)
        digits = more;
    char *text = json_dumps (json, JSON_INDENT (2) | JSON_REAL_PRECISION (digits));
    json_decref (json);
    /* Only exhausted memory, or a policy name that is not UTF-8 (the caller
     * checks it against the policy table), can get here: programmer
     * errors, so abort like xmalloc does. */
    if (!text) {
        fprintf (stderr, "treefarm: config_to_json: cannot encode the config\n");
        abort ();
    }
    return text;
}

uint64_t
config_bag_size (const config_t *self)
{
    return self->tasks.count + self->commands.count;
}

uint64_t
config_task_bytes (const config_t *self)
{
    double bytes = self->tasks.input_mb * CONFIG_MB * self->platform.payload_scale;
    if (bytes >= 0x1p63)
        return UINT64_MAX;
    return (uint64_t) llround (bytes);
}

uint32_t
config_chunk_bytes (const config_t *self)
{
    double chunk = self->platform.chunk_kib * 1024.0 * self->platform.payload_scale;
    return chunk < 1 ? 1 : (uint32_t) (chunk + 0.5);
}

double
config_heartbeat_s (const config_t *self)
{
    if (self->platform.heartbeat_ms > 0)
        return self->platform.heartbeat_ms / 1000.0;
    double ms = CONFIG_HEARTBEAT_MS_MAX_DEFAULT / self->platform.time_scale;
    if (ms < CONFIG_HEARTBEAT_MS_MIN_DEFAULT)
        ms = CONFIG_HEARTBEAT_MS_MIN_DEFAULT;
    if (ms > CONFIG_HEARTBEAT_MS_MAX_DEFAULT)
        ms = CONFIG_HEARTBEAT_MS_MAX_DEFAULT;
    return ms / 1000.0;
}

double
config_lost_after_s (const config_t *self)
{
    return config_heartbeat_s (self) * self->platform.misses;
}

int
config_kernel_shaped (const config_t *self)
{
    for (int i = 0; i < self->nnodes; i++) {
        host_t host;
        char err[TF_ERRLEN];
        if (host_parse (self->nodes[i].host, &host, err, sizeof err) != 0
            || host.kind != HOST_NETNS)
            return 0;
    }
    return self->nnodes > 0;
}
