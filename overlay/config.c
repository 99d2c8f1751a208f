/*  config — load, validate and print an experiment (see config.h and
 *  docs/config.md); the tree's nodes are overlay/config_tree.c's.
 *
 *  The loader walks the JSON document itself rather than unpacking it with
 *  a format string, so that every message names the exact place
 *  ("tree[2] (node "Lab4"): compute"), an unknown key comes with a
 *  suggestion, and the first error found is the one reported.
 */
#include "overlay/config.h"
#include "overlay/config_int.h"
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
    "matrix_n", "sample_ms", "ir", "heartbeat_ms", "heartbeat_misses", "adapt", "reclaim",
    "join_slots", "admit", "endgame", "ia_order", NULL
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
int
config_valid_name (const char *name)
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
        || get_u32 (s, "join_slots", 0, CONFIG_MAX_JOINS, &self->join_slots) < 0
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
    self->platform.ia_order_both = 0;
    self->platform.adapt = 0;
    self->platform.endgame = 1;
    self->platform.reclaim = RECLAIM_GATED;
    self->platform.admit = RECLAIM_GATED;
    self->platform.heartbeat_ms = 0;
    self->platform.misses = CONFIG_DEFAULT_MISSES;
}

int
config_ia_order_parse (const char *word)
{
    if (word && streq (word, "alone"))
        return 0;
    if (word && streq (word, "both"))
        return 1;
    return -1;
}

/*  A costly action's mode, key in the platform: gated, always, never. */
static int
get_mode (jsonw_t *s, const char *key, reclaim_mode_t *out)
{
    const char *word = NULL;
    char q[JSONW_QUOTE_LEN], where[64];
    if (jsonw_get_string (s, key, 0, 1, SIZE_MAX, &word) < 0)
        return -1;
    if (!word)
        return 0;
    snprintf (where, sizeof where, "platform.%s", key);
    if (reclaim_mode_parse (word) < 0)
        return jsonw_fail (s->doc, where, "unknown value %s (expected \"gated\", "
                           "\"always\" or \"never\")", tf_quote (q, sizeof q, word));
    *out = (reclaim_mode_t) reclaim_mode_parse (word);
    return 0;
}

/*  The platform's words: mode, ir, ia_order, adapt, endgame, reclaim
 *  and admit. */
static int
get_platform_words (config_t *self, jsonw_t *s)
{
    const char *mode = NULL, *ir = NULL, *order = NULL;
    char q[JSONW_QUOTE_LEN];
    if (jsonw_get_string (s, "mode", 0, 1, SIZE_MAX, &mode) < 0
        || jsonw_get_string (s, "ir", 0, 1, SIZE_MAX, &ir) < 0
        || jsonw_get_string (s, "ia_order", 0, 1, SIZE_MAX, &order) < 0
        || jsonw_get_bool (s, "adapt", 0, &self->platform.adapt) < 0
        || jsonw_get_bool (s, "endgame", 0, &self->platform.endgame) < 0
        || get_mode (s, "reclaim", &self->platform.reclaim) < 0
        || get_mode (s, "admit", &self->platform.admit) < 0)
        return -1;
    if (ir && streq (ir, "measured"))
        self->platform.ir_measured = 1;
    else if (ir && !streq (ir, "configured"))
        return jsonw_fail (s->doc, "platform.ir",
                           "unknown value %s (expected \"configured\" or \"measured\")",
                           tf_quote (q, sizeof q, ir));
    if (order && config_ia_order_parse (order) < 0)
        return jsonw_fail (s->doc, "platform.ia_order",
                           "unknown value %s (expected \"alone\" or \"both\")",
                           tf_quote (q, sizeof q, order));
    if (order)
        self->platform.ia_order_both = config_ia_order_parse (order);
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
    if (name && !config_valid_name (name)) {
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
    return config_parse_tree (self, &top);
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

config_t *
config_load_json (json_t *json, const char *origin, char *err, size_t errlen)
{
    json_error_t jerr = {.text = "no JSON document"};
    return load_json (json_incref (json), &jerr, origin ? origin : "<config>", err, errlen);
}

void
config_destroy (config_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    config_t *self = *self_p;
    for (int i = 0; i < self->nnodes; i++)
        config_node_clear (&self->nodes[i]);
    for (int i = 0; i < self->noffered; i++)
        config_node_clear (&self->offered[i]);
    free (self->nodes);
    free (self->offered);
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

json_t *
config_node_to_json (const config_node_t *node)
{
    json_t *entry = json_pack ("{s:s}", "name", node->name);
    if (node->parent_name)
        json_object_set_new (entry, "parent", json_string (node->parent_name));
    json_object_set_new (entry, "host", json_string (node->host));
    json_object_set_new (entry, "compute", json_real (node->compute_rate));
    /* A relay's "slots": 0 is what makes it one (compute 0 reads back). */
    if (node->slots || config_node_is_relay (node))
        json_object_set_new (entry, "slots", json_integer (node->slots));
    /* 0 (unlimited) is the absence of the key: the loader wants > 0. */
    if (node->send_limit_mbps > 0)
        json_object_set_new (entry, "send_limit_mbps", json_real (node->send_limit_mbps));
    if (node->joins_at_s >= 0 && node->index == -1)
        json_object_set_new (entry, "joins_at_s", json_real (node->joins_at_s));
    if (node->parent_name || node->joins_at_s >= 0) {
        json_object_set_new (entry, "link_mbps", json_real (node->link_mbps));
        json_object_set_new (entry, "link_idle_mbps", json_real (node->link_idle_mbps));
        json_object_set_new (entry, "ir_send", json_real (node->ir_send));
        if (node->ir_send_alone >= 0)
            json_object_set_new (entry, "ir_send_alone", json_real (node->ir_send_alone));
        json_object_set_new (entry, "ir_recv", json_real (node->ir_recv));
        json_object_set_new (entry, "delay_ms", json_real (node->delay_ms));
    }
    if (node->load)
        json_object_set_new (entry, "load", load_to_json (node->load));
    return entry;
}

/*  The platform's keys the canonical config has only when not default. */
static void
platform_options_to_json (const config_t *self, json_t *platform)
{
    if (self->platform.adapt)
        json_object_set_new (platform, "adapt", json_true ());
    if (!self->platform.endgame)
        json_object_set_new (platform, "endgame", json_false ());
    if (self->platform.ia_order_both)
        json_object_set_new (platform, "ia_order", json_string ("both"));
    if (self->platform.reclaim != RECLAIM_GATED)
        json_object_set_new (platform, "reclaim",
                             json_string (reclaim_mode_str (self->platform.reclaim)));
    if (self->join_slots > 0)
        json_object_set_new (platform, "join_slots", json_integer (self->join_slots));
    if (self->platform.admit != RECLAIM_GATED)
        json_object_set_new (platform, "admit",
                             json_string (reclaim_mode_str (self->platform.admit)));
    if (self->platform.heartbeat_ms > 0)
        json_object_set_new (platform, "heartbeat_ms",
                             json_integer (self->platform.heartbeat_ms));
}

char *
config_to_json (const config_t *self)
{
    json_t *tree = json_array ();
    for (int i = 0; i < self->nnodes; i++)
        json_array_append_new (tree, config_node_to_json (&self->nodes[i]));
    for (int i = 0; i < self->noffered; i++)
        if (self->offered[i].index == -1)
            json_array_append_new (tree, config_node_to_json (&self->offered[i]));
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
    if (json)
        platform_options_to_json (self, json_object_get (json, "platform"));
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
