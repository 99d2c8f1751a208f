/*  timeline — the run's Chrome trace-event file. See timeline.h. */
#include "controller/timeline.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/util.h"

/*  A gap on a compute track shorter than this (platform microseconds) is
 *  not drawn as idle: it is the loop's own turn between two tasks, too
 *  short to see at any zoom where the tasks are. */
#define TIMELINE_MIN_IDLE_US 1.0

#define US_PER_S 1e6
#define TIMELINE_NS_PER_US 1e3

/*  Significant digits of a number in the file: a nanosecond resolution
 *  of runs up to 115 days of platform time. */
#define TIMELINE_DIGITS 16
#define TIMELINE_DUMP (JSON_COMPACT | JSON_REAL_PRECISION (TIMELINE_DIGITS))

_Static_assert (TIMELINE_TID_COMPUTE + CONFIG_MAX_SLOTS <= TIMELINE_TID_RECEIVE
                    && TIMELINE_TID_SEND - TIMELINE_TID_RECEIVE > 1,
                "track ids of two kinds never meet");

struct timeline {
    FILE *file;
    char *path, *tmp;
    double us;               /* platform microseconds per span second */
    int events;              /* written so far */
    int failed;              /* a write failed */
};

timeline_t *
timeline_open (const char *path, double scale, char *err, size_t errlen)
{
    char *copy = xstrdup (path);
    timeline_t *self = xcalloc (1, sizeof *self);
    self->path = xstrdup (path);
    self->tmp = xasprintf ("%s/.%s.tmp", dirname (copy), basename (self->path));
    self->us = scale * US_PER_S;
    free (copy);
    self->file = fopen (self->tmp, "we");
    if (!self->file || fputs ("{\"traceEvents\": [\n", self->file) < 0) {
        tf_error (err, errlen, "cannot write %s: %s", path, strerror (errno));
        if (self->file)
            fclose (self->file);
        self->file = NULL;
        timeline_close (&self, NULL, NULL, 0);
        return NULL;
    }
    return self;
}

/*  Write one event (taken) to the array. */
static void
emit (timeline_t *self, json_t *event)
{
    if (self->events++ && fputs (",\n", self->file) < 0)
        self->failed = 1;
    if (json_dumpf (event, self->file, TIMELINE_DUMP) != 0)
        self->failed = 1;
    json_decref (event);
}

/*  A metadata event ("M"): name with args {key: value} (value taken). */
static void
emit_meta (timeline_t *self, int pid, int tid, const char *name, const char *key,
           json_t *value)
{
    emit (self, json_pack ("{s:s, s:i, s:i, s:i, s:s, s:{s:o}}", "ph", "M", "pid", pid,
                           "tid", tid, "ts", 0, "name", name, "args", key, value));
}

/*  A track: its name and its place among the node's tracks. */
static void
emit_track (timeline_t *self, int pid, int tid, const char *name)
{
    emit_meta (self, pid, tid, "thread_name", "name", json_string (name));
    emit_meta (self, pid, tid, "thread_sort_index", "sort_index", json_integer (tid));
}

/*  Span seconds as platform microseconds, to the nanosecond: a trace
 *  needs no more, and the file reads "1250.5", not "1250.4999999999998". */
static double
platform_us (const timeline_t *self, double seconds)
{
    return round (seconds * self->us * TIMELINE_NS_PER_US) / TIMELINE_NS_PER_US;
}

/*  Platform seconds since START as trace microseconds, to the
 *  nanosecond (the instants and counters: the spans' own clock is
 *  platform_us's). */
static double
instant_us (double platform_s)
{
    return round (platform_s * US_PER_S * TIMELINE_NS_PER_US) / TIMELINE_NS_PER_US;
}

/*  A complete event ("X") on track tid from start to end (span seconds). */
static void
emit_span (timeline_t *self, int pid, int tid, const char *cat, const trace_span_t *s,
           double start, double end)
{
    char name[32];
    json_t *args = json_object ();
    if (s) {
        snprintf (name, sizeof name, "task %llu", (unsigned long long) s->task);
        json_object_set_new (args, "task", json_integer ((json_int_t) s->task));
    }
    double ts = platform_us (self, start);
    emit (self, json_pack ("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:o}", "ph", "X", "name",
                           s ? name : "idle", "cat", cat, "pid", pid, "tid", tid,
                           "ts", ts, "dur", platform_us (self, end) - ts, "args", args));
}

/*  Spans by kind, lane, then start: each track's in time order. */
static int
by_track (const void *a, const void *b)
{
    const trace_span_t *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/*  Idle from `from` to `to` (span seconds) on track tid, if visible. */
static void
emit_idle (timeline_t *self, int pid, int tid, double from, double to)
{
    if ((to - from) * self->us >= TIMELINE_MIN_IDLE_US)
        emit_span (self, pid, tid, "idle", NULL, from, to);
}

/*  The track's spans from *i on (all of kind and lane), and on a compute
 *  track the idle gaps between them, from 0 to end. */
static void
emit_lane (timeline_t *self, const timeline_node_t *node, size_t *i, int tid)
{
    const trace_span_t *first = &node->spans[*i];
    trace_kind_t kind = first->kind;
    uint32_t lane = first->lane;
    int pid = node->index + 1;
    double busy_to = node->begin;
    for (; *i < node->nspans && node->spans[*i].kind == kind
           && node->spans[*i].lane == lane; (*i)++) {
        const trace_span_t *s = &node->spans[*i];
        if (kind == TRACE_COMPUTE)
            emit_idle (self, pid, tid, busy_to, s->start);
        emit_span (self, pid, tid, trace_kind_str (kind), s, s->start, s->end);
        if (s->end > busy_to)
            busy_to = s->end;
    }
    if (kind == TRACE_COMPUTE)
        emit_idle (self, pid, tid, busy_to, node->end);
}

static int
tid_of (trace_kind_t kind, uint32_t lane)
{
    return kind == TRACE_COMPUTE   ? TIMELINE_TID_COMPUTE + (int) lane
         : kind == TRACE_RECEIVE ? TIMELINE_TID_RECEIVE
                                 : TIMELINE_TID_SEND + (int) lane;
}

/*  The node's process and track names. */
static void
emit_tracks (timeline_t *self, const timeline_node_t *node)
{
    int pid = node->index + 1;
    char name[128];
    emit_meta (self, pid, 0, "process_name", "name", json_string (node->name));
    emit_meta (self, pid, 0, "process_sort_index", "sort_index",
               json_integer (node->index));
    for (uint32_t k = 0; k < node->slots; k++) {
        snprintf (name, sizeof name, node->slots > 1 ? "compute slot %u" : "compute", k);
        emit_track (self, pid, tid_of (TRACE_COMPUTE, k), name);
    }
    if (!node->root)
        emit_track (self, pid, TIMELINE_TID_RECEIVE, "receive");
    for (int c = 0; c < node->nchildren; c++) {
        snprintf (name, sizeof name, "send \u2192 %s", node->children[c]);
        emit_track (self, pid, tid_of (TRACE_SEND, (uint32_t) c), name);
    }
}

/*  The node's background track: a counter event at each point's start,
 *  its share until the next. */
static void
emit_background (timeline_t *self, const timeline_node_t *node)
{
    for (size_t i = 0; i < node->nbackground; i++) {
        const timeline_point_t *p = &node->background[i];
        double ts = instant_us (p->t0);
        emit (self, json_pack ("{s:s, s:s, s:i, s:f, s:{s:f}}", "ph", "C", "name",
                               "background", "pid", node->index + 1, "ts", ts, "args",
                               "share", p->share));
    }
}

/*  The index of column `name` in the header [h, end), or -1. */
static int
column_of (const char *h, const char *end, const char *name)
{
    size_t len = strlen (name);
    for (int i = 0;; i++) {
        const char *comma = memchr (h, ',', (size_t) (end - h));
        const char *stop = comma ? comma : end;
        if ((size_t) (stop - h) == len && memcmp (h, name, len) == 0)
            return i;
        if (!comma)
            return -1;
        h = comma + 1;
    }
}

/*  Field i of the row [r, end) as a finite number into *out. Returns 0,
 *  or -1 when the row has no such field or it is not one. */
static int
field_number (const char *r, const char *end, int i, double *out)
{
    for (; i > 0; i--) {
        const char *comma = memchr (r, ',', (size_t) (end - r));
        if (!comma)
            return -1;
        r = comma + 1;
    }
    const char *stop = memchr (r, ',', (size_t) (end - r));
    size_t len = (size_t) ((stop ? stop : end) - r);
    char buf[64], *rest;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy (buf, r, len);
    buf[len] = '\0';
    *out = strtod (buf, &rest);
    return *rest || !isfinite (*out) ? -1 : 0;
}

/*  One row [r, end) of the samples into *p, by the columns col (t0, t1,
 *  load_share). Returns 0, or -1 if it is not a valid point. */
static int
parse_point (const char *r, const char *end, const int col[3], timeline_point_t *p)
{
    return field_number (r, end, col[0], &p->t0) || field_number (r, end, col[1], &p->t1)
        || field_number (r, end, col[2], &p->share)
        || !(p->t0 >= 0 && p->t1 > p->t0 && p->share >= 0) ? -1 : 0;
}

int
timeline_background_decode (const char *csv, timeline_point_t **points, size_t *n,
                            char *err, size_t errlen)
{
    *points = NULL;
    *n = 0;
    const char *r = strchr (csv, '\n'), *hend = r ? r : csv + strlen (csv);
    int col[3] = {column_of (csv, hend, "t0"), column_of (csv, hend, "t1"),
                  column_of (csv, hend, "load_share")};
    if (col[2] < 0)
        return 0;
    if (col[0] < 0 || col[1] < 0)
        return tf_error (err, errlen, "samples: line 1: no t0 or t1 column");
    timeline_point_t *p = NULL;
    size_t cap = 0;
    for (unsigned line = 2; r && *++r; line++) {
        const char *end = strchr (r, '\n');
        end = end ? end : r + strlen (r);
        if (*n == TIMELINE_MAX_SAMPLES) {
            free (p);
            *n = 0;
            return tf_error (err, errlen, "samples: more than %d rows", TIMELINE_MAX_SAMPLES);
        }
        if (*n == cap)
            p = xrealloc (p, (cap = cap ? 2 * cap : 64) * sizeof *p);
        if (parse_point (r, end, col, &p[*n]) != 0) {
            free (p);
            *n = 0;
            return tf_error (err, errlen, "samples: line %u: t0, t1 and load_share must be "
                             "numbers, 0 <= t0 < t1, load_share >= 0", line);
        }
        (*n)++;
        r = *end ? end : NULL;
    }
    *points = p;
    return 0;
}

void
timeline_add_node (timeline_t *self, timeline_node_t *node)
{
    emit_tracks (self, node);
    if (node->nspans > 1)   /* qsort of NULL, even of none, is undefined */
        qsort (node->spans, node->nspans, sizeof *node->spans, by_track);
    /*  A compute track without a span is idle throughout. */
    for (uint32_t k = 0; k < node->slots; k++) {
        int used = 0;
        for (size_t i = 0; i < node->nspans && !used; i++)
            used = node->spans[i].kind == TRACE_COMPUTE && node->spans[i].lane == k;
        if (!used)
            emit_idle (self, node->index + 1, tid_of (TRACE_COMPUTE, k), node->begin,
                       node->end);
    }
    for (size_t i = 0; i < node->nspans;)
        emit_lane (self, node, &i, tid_of (node->spans[i].kind, node->spans[i].lane));
    emit_background (self, node);
}

void
timeline_add_change (timeline_t *self, int index, const proto_change_t *c, const char *by)
{
    char name[128];
    proto_change_text (c, name, sizeof name);
    double ts = instant_us (c->at_s);
    emit (self, json_pack ("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:{s:s, s:s, s:f, s:f, s:s}}",
                           "ph", "i", "s", "p", "name", name, "cat", "change", "pid",
                           index + 1, "tid", 0, "ts", ts, "args", "node", c->node, "what",
                           c->what, "from", c->from, "to", c->to, "by", by));
}

void
timeline_add_action (timeline_t *self, int index, const proto_action_t *a)
{
    char name[256];
    proto_action_text (a, name, sizeof name);
    double ts = instant_us (a->at_s);
    emit (self, json_pack ("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:{s:s, s:s, s:i, s:b}}",
                           "ph", "i", "s", "p", "name", name, "cat", "action", "pid",
                           index + 1, "tid", 0, "ts", ts, "args", "what", a->what, "child",
                           a->child, "tasks", (int) a->tasks, "taken", a->taken));
}

int
timeline_close (timeline_t **self_p, json_t *other, char *err, size_t errlen)
{
    timeline_t *self = *self_p;
    int rc = -1;
    json_t *data = other ? json_incref (other) : json_object ();
    if (self->file) {
        int failed = self->failed
                  || fputs ("\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": ",
                            self->file) < 0
                  || json_dumpf (data, self->file, JSON_COMPACT) != 0
                  || fputs ("}\n", self->file) < 0 || ferror (self->file);
        int e = errno;
        if (fclose (self->file) != 0 || failed)
            tf_error (err, errlen, "cannot write %s: %s", self->path,
                      strerror (failed ? e : errno));
        else if (rename (self->tmp, self->path) != 0)
            tf_error (err, errlen, "cannot write %s: %s", self->path, strerror (errno));
        else
            rc = 0;
        if (rc != 0)
            unlink (self->tmp);
    }
    json_decref (data);
    free (self->path);
    free (self->tmp);
    free (self);
    *self_p = NULL;
    return rc;
}

/*  Do a and b name the same directory as written: trailing slashes and a
 *  leading "./" aside. */
static int
same_dir_text (const char *a, const char *b)
{
    while (a[0] == '.' && a[1] == '/')
        a += 2;
    while (b[0] == '.' && b[1] == '/')
        b += 2;
    size_t na = strlen (a), nb = strlen (b);
    while (na > 1 && a[na - 1] == '/')
        na--;
    while (nb > 1 && b[nb - 1] == '/')
        nb--;
    return na == nb && strncmp (a, b, na) == 0;
}

int
timeline_check_path (const char *path, const char *out_dir, char *err, size_t errlen)
{
    struct stat st;
    if (!*path)
        return tf_error (err, errlen, "--trace: an empty path");
    if (stat (path, &st) == 0 && S_ISDIR (st.st_mode))
        return tf_error (err, errlen, "--trace %s: is a directory", path);
    char *copy = xstrdup (path);
    const char *dir = dirname (copy);
    int rc = 0;
    if (stat (dir, &st) != 0) {
        /*  The run's own --out is made before anything starts, or the
         *  run says why not. */
        if (!(out_dir && *out_dir && same_dir_text (dir, out_dir)))
            rc = tf_error (err, errlen, "--trace %s: %s: %s", path, dir, strerror (errno));
    }
    else if (!S_ISDIR (st.st_mode))
        rc = tf_error (err, errlen, "--trace %s: %s: not a directory", path, dir);
    else if (access (dir, W_OK | X_OK) != 0)
        rc = tf_error (err, errlen, "--trace %s: %s: %s", path, dir, strerror (errno));
    free (copy);
    return rc;
}

/*  What the file says about itself: the time base, the run, and per node
 *  the spans it could not keep and whether its trace arrived. */
static json_t *
other_data (const config_t *cfg, const results_t *results)
{
    json_t *dropped = json_object (), *missing = json_array ();
    for (int i = 0; i < cfg->nnodes; i++) {
        const results_stats_t *st = results_node_stats (results, i);
        if (!results_node_trace (results, i))
            json_array_append_new (missing, json_string (cfg->nodes[i].name));
        else if (st->trace_dropped)
            json_object_set_new (dropped, cfg->nodes[i].name,
                                 json_integer ((json_int_t) st->trace_dropped));
    }
    char *base = xasprintf ("platform time: microseconds since each node's START, "
                            "wall time x time_scale (%g)", cfg->platform.time_scale);
    json_t *o = json_pack ("{s:s, s:f, s:s, s:s, s:s, s:i, s:o, s:o}", "time_base", base,
                           "time_scale", cfg->platform.time_scale, "experiment",
                           cfg->name, "policy", cfg->policy, "status",
                           results_status_str (results_status (results)),
                           "spans_cap_per_node", TRACE_MAX_SPANS, "spans_dropped",
                           dropped, "nodes_without_trace", missing);
    free (base);
    return o;
}

/*  Node i as the writer wants it, its spans decoded from its REPORT (none
 *  when it sent no trace, or a malformed one: said in warn). */
static void
add_node (timeline_t *t, const config_t *cfg, const results_t *results, int i,
          char *warn, size_t warnlen)
{
    const config_node_t *me = &cfg->nodes[i];
    const results_stats_t *st = results_node_stats (results, i);
    const char **kids = xcalloc ((size_t) me->nchildren + 1, sizeof *kids);
    for (int c = 0; c < me->nchildren; c++)
        kids[c] = cfg->nodes[me->children[c]].name;
    timeline_node_t node = {.name = me->name, .index = i, .root = me->parent < 0,
                            .slots = st->slots > 1 ? (uint32_t) st->slots : 1,
                            .nchildren = me->nchildren, .children = kids,
                            .begin = fmax (0, results_node_joined (results, i)),
                            .end = st->trace_end};
    const char *text = results_node_trace (results, i);
    char why[TF_ERRLEN];
    if (text && trace_decode (text, node.slots, (uint32_t) me->nchildren, &node.spans,
                              &node.nspans, why, sizeof why) != 0) {
        if (!*warn)
            snprintf (warn, warnlen, "node %s: %s", me->name, why);
        node.end = 0;
    }
    if (!text)
        node.end = 0;
    timeline_point_t *bg = NULL;
    const char *samples = results_node_samples (results, i);
    if (me->load && samples
        && timeline_background_decode (samples, &bg, &node.nbackground, why,
                                       sizeof why) != 0 && !*warn)
        snprintf (warn, warnlen, "node %s: %s", me->name, why);
    node.background = bg;
    timeline_add_node (t, &node);
    free (bg);
    free (node.spans);
    free (kids);
}

int
timeline_write_run (const char *path, const config_t *cfg, const results_t *results,
                    char *warn, size_t warnlen, char *err, size_t errlen)
{
    *warn = '\0';
    timeline_t *t = timeline_open (path, cfg->platform.time_scale, err, errlen);
    if (!t)
        return -1;
    for (int i = 0; i < cfg->nnodes; i++)
        add_node (t, cfg, results, i, warn, warnlen);
    /*  Each change on the process of the node whose rate it is. */
    for (int i = 0; i < cfg->nnodes; i++) {
        const proto_changes_t *ch = &results_node_stats (results, i)->changes;
        for (int j = 0; j < ch->n; j++) {
            int of = config_find_node (cfg, ch->items[j].node);
            timeline_add_change (t, of >= 0 ? of : i, &ch->items[j], cfg->nodes[i].name);
        }
        /*  Each action weighed, on the process of the node that weighed it. */
        const proto_actions_t *ac = &results_node_stats (results, i)->actions;
        for (int j = 0; j < ac->n; j++)
            timeline_add_action (t, i, &ac->items[j]);
    }
    json_t *other = other_data (cfg, results);
    int rc = timeline_close (&t, other, err, errlen);
    json_decref (other);
    return rc;
}
