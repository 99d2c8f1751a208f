/*  proto_stats — STATS and REPORT. See proto_stats.h. */
#include "overlay/proto_stats.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/trace.h"
#include "overlay/util.h"

const proto_counter_t proto_counters[PROTO_NCOUNTERS] = {
    {"computed", offsetof (proto_stats_t, computed), 1},
    {"forwarded", offsetof (proto_stats_t, forwarded), 1},
    {"received", offsetof (proto_stats_t, received), 1},
    {"requested", offsetof (proto_stats_t, requested), 1},
    {"bytes_in", offsetof (proto_stats_t, bytes_in), 1},
    {"bytes_out", offsetof (proto_stats_t, bytes_out), 1},
    {"malformed", offsetof (proto_stats_t, malformed), 1},
    {"completed", offsetof (proto_stats_t, completed), 0},
    {"duplicates", offsetof (proto_stats_t, duplicates), 0},
    {"slots", offsetof (proto_stats_t, slots), 1},
    {"requeued", offsetof (proto_stats_t, requeued), 1},
    {"reclaimed", offsetof (proto_stats_t, reclaimed), 1},
    {"returned", offsetof (proto_stats_t, returned), 1},
    {"stale", offsetof (proto_stats_t, stale), 1},
    {"stale_dropped", offsetof (proto_stats_t, stale_dropped), 1},
    {"copies", offsetof (proto_stats_t, copies), 1},
    {"copies_won", offsetof (proto_stats_t, copies_won), 1},
    {"cancelled", offsetof (proto_stats_t, cancelled), 1},
    {"wasted", offsetof (proto_stats_t, wasted), 1},
    {"cpu_us", offsetof (proto_stats_t, cpu_us), 1},
    {"observe_cpu_us", offsetof (proto_stats_t, observe_cpu_us), 1},
};

static uint64_t *
counter_at (proto_stats_t *s, int i)
{
    return (uint64_t *) ((char *) s + proto_counters[i].offset);
}

uint64_t
proto_counter (const proto_stats_t *s, int i)
{
    return *(const uint64_t *) ((const char *) s + proto_counters[i].offset);
}

const char *
proto_change_unit (const char *what)
{
    return strcmp (what, "compute") == 0 ? "units/s" : strcmp (what, "link") == 0 ? "MB/s" : "";
}

void
proto_change_text (const proto_change_t *c, char *buf, size_t len)
{
    const char *unit = proto_change_unit (c->what);
    if (*unit)
        snprintf (buf, len, "%s %.1f -> %.1f %s", c->what, c->from, c->to, unit);
    else
        snprintf (buf, len, "%s %.4g -> %.4g", c->what, c->from, c->to);
}

/* ------------------------------------------------------------------------
 *  Encoding.
 */

static json_t *
children_json (const proto_stats_t *s)
{
    json_t *kids = json_array ();
    for (int i = 0; i < s->nchildren; i++) {
        const proto_child_stats_t *c = &s->children[i];
        json_array_append_new (kids, json_pack ("{s:s, s:I, s:I, s:I, s:f}", "name",
                                                c->name, "tasks", (json_int_t) c->tasks,
                                                "bytes", (json_int_t) c->bytes,
                                                "requested", (json_int_t) c->requested,
                                                "send_seconds", c->send_seconds));
    }
    return kids;
}

/*  A stream's sink: into buf (cap bytes; a write past cap fails), or with
 *  buf NULL nowhere, only counting. at: the bytes written. */
typedef struct {
    char *buf;
    size_t cap, at;
} sink_t;

static ssize_t
sink_write (void *cookie, const char *data, size_t n)
{
    sink_t *sink = cookie;
    if (sink->buf) {
        if (n > sink->cap - sink->at)
            return 0;   /* fopencookie's "error" */
        memcpy (sink->buf + sink->at, data, n);
    }
    sink->at += n;
    return (ssize_t) n;
}

/*  REPORT text k (0 the samples, 1 the trace) of s, by its writer or from
 *  its string, into buf (cap bytes), or only counted when buf is NULL.
 *  Returns its length, or -1 if s has none or it could not be written. */
static long
write_text (proto_stats_t *s, int k, char *buf, size_t cap)
{
    int (*writer) (FILE *, void *) = k ? s->write_trace : s->write_samples;
    const char *text = k ? s->trace_csv : s->samples_csv;
    if (!writer && !text)
        return -1;
    sink_t sink = {buf, cap, 0};
    FILE *f = fopencookie (&sink, "w", (cookie_io_functions_t){.write = sink_write});
    if (!f)
        return -1;
    int rc = writer ? writer (f, s->write_arg) : fputs (text, f) < 0 ? -1 : 0;
    if (fclose (f) != 0)
        rc = -1;
    return rc == 0 && sink.at <= (size_t) LONG_MAX ? (long) sink.at : -1;
}

/*  The REPORT's texts in one frame, samples then trace, written straight
 *  into it: measured by a first pass, filled by a second (proto_stats.h).
 *  len[k] is each text's length, -1 where there is none. NULL if there is
 *  neither, or if a second pass did not write what the first measured
 *  (then both lengths are -1). */
static zframe_t *
texts_frame (proto_stats_t *s, long len[2])
{
    size_t total = 0;
    for (int k = 0; k < 2; k++) {
        len[k] = write_text (s, k, NULL, 0);
        total += len[k] > 0 ? (size_t) len[k] : 0;
    }
    if (len[0] < 0 && len[1] < 0)
        return NULL;
    zframe_t *frame = zframe_new (NULL, total);
    char *at = (char *) zframe_data (frame);
    for (int k = 0; k < 2; k++) {
        if (len[k] < 0)
            continue;
        if (write_text (s, k, at, (size_t) len[k]) != len[k]) {
            zframe_destroy (&frame);
            len[0] = len[1] = -1;
            return NULL;
        }
        at += len[k];
    }
    return frame;
}

/*  The effective rate's keys: each number only when known (finite). */
static void
rate_to_json (json_t *o, const proto_rate_stats_t *r)
{
    const struct {
        const char *key;
        double value;
    } numbers[] = {
        {"compute_measured", r->measured}, {"compute_stderr", r->measured_se},
        {"compute_predicted", r->predicted}, {"load_utilization", r->load_utilization},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
        if (isfinite (numbers[i].value))
            json_object_set_new (o, numbers[i].key, json_real (numbers[i].value));
    if (r->load_kind[0])
        json_object_set_new (o, "load_kind", json_string (r->load_kind));
}

/*  {model: tasks/s} of every model. */
static json_t *
bound_json (const double *bound)
{
    json_t *b = json_object ();
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        json_object_set_new (b, bound_model_str (m), json_real (bound[m]));
    return b;
}

/*  "changes": [{node, what, from, to, at_s}], and "changes_dropped",
 *  each only when there is one. */
static void
changes_to_json (json_t *o, const proto_changes_t *c)
{
    if (c->n > 0) {
        json_t *a = json_array ();
        for (int i = 0; i < c->n; i++) {
            const proto_change_t *x = &c->items[i];
            json_array_append_new (a, json_pack ("{s:s, s:s, s:f, s:f, s:f}", "node",
                                                 x->node, "what", x->what, "from", x->from,
                                                 "to", x->to, "at_s", x->at_s));
        }
        json_object_set_new (o, "changes", a);
    }
    if (c->dropped)
        json_object_set_new (o, "changes_dropped", json_integer ((json_int_t) c->dropped));
}

zmsg_t *
proto_stats_encode (proto_command_t command, proto_stats_t *s)
{
    /*  The texts first: their writers may add to s's figures (a node
     *  counts the CPU time its samples' writing takes). */
    zframe_t *texts = NULL;
    long len[2] = {-1, -1};
    if (command == PROTO_REPORT)
        texts = texts_frame (s, len);
    json_t *o = json_object ();
    for (int i = 0; i < PROTO_NCOUNTERS; i++)
        json_object_set_new (o, proto_counters[i].key,
                             json_integer ((json_int_t) proto_counter (s, i)));
    json_object_set_new (o, "compute_seconds", json_real (s->compute_seconds));
    json_object_set_new (o, "speed_mean", json_real (s->speed_mean));
    json_object_set_new (o, "held", json_integer (s->held));
    json_object_set_new (o, "computing", json_integer (s->computing));
    if (s->has_bound)
        json_object_set_new (o, "bound", bound_json (s->bound));
    if (s->has_live_bound)
        json_object_set_new (o, "live_bound", bound_json (s->live_bound));
    json_object_set_new (o, "lag", json_pack ("{s:f, s:f, s:f, s:f}", "loop_s",
                                              s->lag_loop, "engine_s", s->lag_engine,
                                              "link_s", s->lag_link, "max_s", s->lag_max));
    if (s->fit)
        json_object_set (o, "fit", s->fit);
    rate_to_json (o, &s->rate);
    changes_to_json (o, &s->changes);
    proto_actions_to_json (o, &s->actions);
    if (command == PROTO_REPORT) {
        json_object_set_new (o, "children", children_json (s));
        int traced = s->write_trace || s->trace_csv;
        if (len[0] >= 0)
            json_object_set_new (o, "samples_bytes", json_integer (len[0]));
        if (len[1] >= 0)
            json_object_set_new (o, "trace_bytes", json_integer (len[1]));
        if (traced) {
            json_object_set_new (o, "trace_end", json_real (s->trace_end));
            json_object_set_new (o, "trace_dropped",
                                 json_integer ((json_int_t) s->trace_dropped));
        }
    }
    json_t *body = json_pack ("{s:o}", "stats", o);
    return proto_encode (command, &body, &texts);
}

/* ------------------------------------------------------------------------
 *  Decoding.
 */

/*  A missing key is zero; a present one must be an integer >= 0. */
static int
get_count (const json_t *object, const char *key, uint64_t *out, const char *where,
           char *err, size_t errlen)
{
    json_t *v = json_object_get (object, key);
    *out = 0;
    if (!v)
        return 0;
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return tf_error (err, errlen, "%s\"%s\" must be a non-negative integer", where,
                         key);
    *out = (uint64_t) json_integer_value (v);
    return 0;
}

/*  A missing key leaves *out alone; a present one must be a finite number
 *  >= 0. */
static int
get_seconds (const json_t *object, const char *key, double *out, const char *where,
             char *err, size_t errlen)
{
    json_t *v = json_object_get (object, key);
    if (!v)
        return 0;
    if (!json_is_number (v) || !(json_number_value (v) >= 0)
        || !isfinite (json_number_value (v)))
        return tf_error (err, errlen, "%s\"%s\" must be a non-negative number", where,
                         key);
    *out = json_number_value (v);
    return 0;
}

/*  "lag": {loop_s, engine_s, link_s, max_s}, all optional numbers >= 0. */
static int
get_lag (const json_t *stats, proto_stats_t *out, char *err, size_t errlen)
{
    json_t *lag = json_object_get (stats, "lag");
    if (!lag)
        return 0;
    if (!json_is_object (lag))
        return tf_error (err, errlen, "stats: \"lag\" must be an object");
    return get_seconds (lag, "loop_s", &out->lag_loop, "stats: lag: ", err, errlen)
        || get_seconds (lag, "engine_s", &out->lag_engine, "stats: lag: ", err, errlen)
        || get_seconds (lag, "link_s", &out->lag_link, "stats: lag: ", err, errlen)
        || get_seconds (lag, "max_s", &out->lag_max, "stats: lag: ", err, errlen) ? -1 : 0;
}

/*  "bound" and "live_bound" (key): every model, a finite number >= 0
 *  each, into bound[]; *has set when present. */
static int
get_bound (const json_t *stats, const char *key, double *bound, int *has, char *err,
           size_t errlen)
{
    json_t *o = json_object_get (stats, key);
    if (!o)
        return 0;
    if (!json_is_object (o))
        return tf_error (err, errlen, "stats: \"%s\" must be an object", key);
    char where[64];
    snprintf (where, sizeof where, "stats: %s: ", key);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        bound[m] = -1;
        if (get_seconds (o, bound_model_str (m), &bound[m], where, err, errlen))
            return -1;
        if (bound[m] < 0)
            return tf_error (err, errlen, "%s\"%s\" missing", where, bound_model_str (m));
    }
    *has = 1;
    return 0;
}

/*  A load kind: 1 .. PROTO_LOAD_KIND_MAX - 1 characters, a-z and '+'. */
static int
valid_kind (const char *kind)
{
    size_t n = strlen (kind);
    return n > 0 && n < PROTO_LOAD_KIND_MAX
        && strspn (kind, "abcdefghijklmnopqrstuvwxyz+") == n;
}

/*  The effective rate and the load: numbers finite and >= 0, NaN when
 *  absent; the kind as valid_kind says, "" when absent. */
static int
get_rate (const json_t *stats, proto_rate_stats_t *r, char *err, size_t errlen)
{
    r->measured = r->measured_se = r->predicted = r->load_utilization = NAN;
    if (get_seconds (stats, "compute_measured", &r->measured, "stats: ", err, errlen)
        || get_seconds (stats, "compute_stderr", &r->measured_se, "stats: ", err, errlen)
        || get_seconds (stats, "compute_predicted", &r->predicted, "stats: ", err, errlen)
        || get_seconds (stats, "load_utilization", &r->load_utilization, "stats: ", err,
                        errlen))
        return -1;
    json_t *kind = json_object_get (stats, "load_kind");
    if (!kind)
        return 0;
    if (!json_is_string (kind) || !valid_kind (json_string_value (kind)))
        return tf_error (err, errlen, "stats: \"load_kind\" must be 1 to %d characters "
                         "of a-z and '+'", PROTO_LOAD_KIND_MAX - 1);
    snprintf (r->load_kind, sizeof r->load_kind, "%s", json_string_value (kind));
    return 0;
}

/*  What a change may be of (node/live.h's live_what_str). */
static int
valid_what (const char *what)
{
    static const char *const words[] = {"compute", "link", "ir_send", "ir_recv"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp (what, words[i]) == 0)
            return 1;
    return 0;
}

/*  One entry of "changes": exactly {node, what, from, to, at_s}, the
 *  name 1 .. PROTO_CHANGE_NODE_MAX - 1 characters, what one of the four
 *  words, the numbers finite, at_s >= 0. */
static int
get_change (const json_t *entry, size_t i, void *item, char *err, size_t errlen)
{
    proto_change_t *c = item;
    const char *node, *what;
    json_error_t jerr;
    if (json_unpack_ex ((json_t *) entry, &jerr, JSON_STRICT, "{s:s, s:s, s:F, s:F, s:F}",
                        "node", &node, "what", &what, "from", &c->from, "to", &c->to,
                        "at_s", &c->at_s) != 0)
        return tf_error (err, errlen, "stats: changes[%zu]: %s", i, jerr.text);
    size_t n = strlen (node);
    if (n == 0 || n >= PROTO_CHANGE_NODE_MAX)
        return tf_error (err, errlen, "stats: changes[%zu]: \"node\" must be 1 to %d "
                         "characters", i, PROTO_CHANGE_NODE_MAX - 1);
    if (!valid_what (what))
        return tf_error (err, errlen, "stats: changes[%zu]: \"what\" must be compute, "
                         "link, ir_send or ir_recv", i);
    if (!isfinite (c->from) || !isfinite (c->to) || !isfinite (c->at_s) || c->at_s < 0)
        return tf_error (err, errlen, "stats: changes[%zu]: \"from\" and \"to\" must "
                         "be finite, \"at_s\" finite and >= 0", i);
    memcpy (c->node, node, n + 1);
    snprintf (c->what, sizeof c->what, "%s", what);
    return 0;
}

int
proto_stats_get_list (const json_t *stats, const char *key, int most, size_t size,
                      proto_entry_fn get, void **items, int *n, uint64_t *dropped,
                      char *err, size_t errlen)
{
    char dropped_key[64];
    snprintf (dropped_key, sizeof dropped_key, "%s_dropped", key);
    if (get_count (stats, dropped_key, dropped, "stats: ", err, errlen))
        return -1;
    json_t *array = json_object_get (stats, key);
    if (!array)
        return 0;
    if (!json_is_array (array) || json_array_size (array) > (size_t) most)
        return tf_error (err, errlen, "stats: \"%s\" must be an array of at most %d "
                         "entries", key, most);
    *items = xcalloc (json_array_size (array) + 1, size);
    size_t i;
    json_t *entry;
    json_array_foreach (array, i, entry) {
        if (get (entry, i, (char *) *items + i * size, err, errlen))
            return -1;
        *n = (int) i + 1;
    }
    return 0;
}

/*  "changes" (at most PROTO_MAX_CHANGES) and "changes_dropped". */
static int
get_changes (const json_t *stats, proto_changes_t *out, char *err, size_t errlen)
{
    return proto_stats_get_list (stats, "changes", PROTO_MAX_CHANGES, sizeof *out->items,
                                 get_change, (void **) &out->items, &out->n,
                                 &out->dropped, err, errlen);
}

/*  The scalars: counters, times, the node's state, bound, lag, fit. */
static int
get_scalars (const json_t *stats, proto_stats_t *out, char *err, size_t errlen)
{
    for (int i = 0; i < PROTO_NCOUNTERS; i++)
        if (get_count (stats, proto_counters[i].key, counter_at (out, i), "stats: ", err,
                       errlen))
            return -1;
    uint64_t held = 0, computing = 0;
    out->speed_mean = 1;
    if (get_seconds (stats, "compute_seconds", &out->compute_seconds, "stats: ", err,
                     errlen)
        || get_seconds (stats, "speed_mean", &out->speed_mean, "stats: ", err, errlen)
        || get_count (stats, "held", &held, "stats: ", err, errlen)
        || get_count (stats, "computing", &computing, "stats: ", err, errlen)
        || get_lag (stats, out, err, errlen)
        || get_bound (stats, "bound", out->bound, &out->has_bound, err, errlen)
        || get_bound (stats, "live_bound", out->live_bound, &out->has_live_bound, err,
                      errlen)
        || get_rate (stats, &out->rate, err, errlen)
        || get_changes (stats, &out->changes, err, errlen)
        || proto_actions_get (stats, &out->actions, err, errlen))
        return -1;
    out->held = held > UINT32_MAX ? UINT32_MAX : (uint32_t) held;
    out->computing = (int) computing;
    json_t *fit = json_object_get (stats, "fit");
    if (fit && !json_is_object (fit))
        return tf_error (err, errlen, "stats: \"fit\" must be an object");
    out->fit = fit ? json_incref (fit) : NULL;
    return 0;
}

/*  REPORT's "children": at most `most` of {name, tasks, bytes, requested,
 *  send_seconds}. Checked before anything is allocated for them. */
static int
get_children (const json_t *stats, int most, proto_stats_t *out, char *err,
              size_t errlen)
{
    json_t *array = json_object_get (stats, "children");
    if (!array)
        return 0;
    if (!json_is_array (array) || json_array_size (array) > (size_t) most)
        return tf_error (err, errlen, "stats: \"children\" must be an array of at "
                         "most %d entries", most);
    out->children = xcalloc (json_array_size (array) + 1, sizeof *out->children);
    size_t i;
    json_t *entry;
    char where[64];
    json_array_foreach (array, i, entry) {
        snprintf (where, sizeof where, "stats: children[%zu]: ", i);
        json_t *name = json_object_get (entry, "name");
        if (!json_is_object (entry) || !json_is_string (name))
            return tf_error (err, errlen, "%smust be an object with a string \"name\"",
                             where);
        proto_child_stats_t *child = &out->children[i];
        if (get_count (entry, "tasks", &child->tasks, where, err, errlen)
            || get_count (entry, "bytes", &child->bytes, where, err, errlen)
            || get_count (entry, "requested", &child->requested, where, err, errlen)
            || get_seconds (entry, "send_seconds", &child->send_seconds, where, err,
                            errlen))
            return -1;
        child->name = xstrdup (json_string_value (name));
        out->nchildren = (int) i + 1;
    }
    return 0;
}

/*  REPORT's trace figures: "trace_end" and "trace_dropped", optional. */
static int
get_trace (const json_t *stats, proto_stats_t *out, char *err, size_t errlen)
{
    return get_seconds (stats, "trace_end", &out->trace_end, "stats: ", err, errlen)
        || get_count (stats, "trace_dropped", &out->trace_dropped, "stats: ", err,
                      errlen) ? -1 : 0;
}

/*  REPORT's texts: "samples_bytes" and "trace_bytes" (each optional; the
 *  trace at most TRACE_MAX_TEXT, its lines checked when it is read,
 *  overlay/trace.h) split the payload frame, samples first, and add up
 *  to its size exactly; the text holds no NUL byte. */
static int
get_texts (const json_t *stats, zframe_t *payload, proto_stats_t *out, char *err,
           size_t errlen)
{
    static const char *const keys[2] = {"samples_bytes", "trace_bytes"};
    uint64_t len[2];
    int has[2];
    for (int k = 0; k < 2; k++) {
        has[k] = json_object_get (stats, keys[k]) != NULL;
        if (get_count (stats, keys[k], &len[k], "stats: ", err, errlen))
            return -1;
    }
    if (len[1] > TRACE_MAX_TEXT)
        return tf_error (err, errlen, "stats: \"trace_bytes\" must be at most %zu",
                         TRACE_MAX_TEXT);
    size_t size = payload ? zframe_size (payload) : 0;
    if (!has[0] && !has[1] && !payload)
        return 0;
    /*  Each is below 2^63 (a JSON integer): the sum cannot wrap. */
    if (!payload || len[0] + len[1] != size)
        return tf_error (err, errlen, "stats: \"samples_bytes\" and \"trace_bytes\" "
                         "(%llu and %llu) must add up to the payload frame's %zu bytes",
                         (unsigned long long) len[0], (unsigned long long) len[1], size);
    const char *data = (const char *) zframe_data (payload);
    if (memchr (data, '\0', size))
        return tf_error (err, errlen, "stats: the samples and trace text hold a NUL byte");
    if (has[0])
        out->samples_csv = xstrndup (data, len[0]);
    if (has[1])
        out->trace_csv = xstrndup (data + len[0], len[1]);
    return 0;
}

int
proto_stats_decode (const json_t *stats, zframe_t *payload, int report, int max_children,
                    proto_stats_t *out, char *err, size_t errlen)
{
    memset (out, 0, sizeof *out);
    if (!json_is_object (stats))
        return tf_error (err, errlen, "stats must be an object");
    int rc = get_scalars (stats, out, err, errlen);
    if (rc == 0 && report)
        rc = get_children (stats, max_children, out, err, errlen)
          || get_trace (stats, out, err, errlen)
          || get_texts (stats, payload, out, err, errlen) ? -1 : 0;
    if (rc != 0)
        proto_stats_clear (out);
    return rc;
}

void
proto_stats_clear (proto_stats_t *s)
{
    json_decref (s->fit);
    for (int i = 0; i < s->nchildren; i++)
        free (s->children[i].name);
    free (s->children);
    free (s->changes.items);
    free (s->actions.items);
    free (s->samples_csv);
    free (s->trace_csv);
    memset (s, 0, sizeof *s);
}
