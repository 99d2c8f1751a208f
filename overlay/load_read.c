/*  load_read — a node's background load: the reader of a description
 *  and of its trace file. See load.h and docs/load.md.
 *
 *  The reader walks the description with the caller's jsonw walker, so
 *  that every message names the node and the key the way the config's
 *  do; a trace file's own errors name the file and the line. The checks
 *  of the distributions and the formulas of the prediction are dist.c's
 *  and slowdown.c's, called here, not written again.
 */
#include "overlay/load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/util.h"

/*  Room for a label and a key in a message's place. */
#define FIELD_LEN (JSONW_LABEL_LEN + 32)
/*  How far a sum of utilizations may pass the limit: room for fractions
 *  written in decimal (0.5 + 0.45), no more. */
#define UTILIZATION_SLACK 1e-12

static const char *const load_keys[] = {
    "jobs", "contenders", "steps", "trace", "trace_rows", "delay_comm", "seed", NULL
};
static const char *const jobs_keys[] = {
    "utilization", "demand", "arrivals", "classes", NULL
};
static const char *const class_keys[] = {"utilization", "demand", "arrivals", NULL};
static const char *const demand_keys[] = {"dist", "mean_s", "cv", NULL};
static const char *const arrival_keys[] = {"dist", "cv", NULL};
static const char *const contender_keys[] = {
    "compute", "comm", "msg_bytes", "period_s", NULL
};
static const char *const step_keys[] = {"at_s", "load", NULL};

/* ------------------------------------------------------------------------
 *  Numbers and their limits.
 */

/*  A number at key obeying rule and at most hi: 1 read, 0 absent and
 *  optional, -1 with a message. */
static int
get_upto (jsonw_t *w, const char *key, int required, jsonw_rule_t rule, double hi,
          double *out)
{
    char f[FIELD_LEN];
    int rc = jsonw_get_number (w, key, required, rule, out);
    if (rc == 1 && *out > hi)
        return jsonw_fail (w->doc, jsonw_field (w, key, f, sizeof f),
                           "must be at most %g, got %g", hi, *out);
    return rc;
}

/*  A mean or a period, seconds: in [LOAD_MIN_TIME_S, LOAD_MAX_TIME_S]. */
static int
get_duration (jsonw_t *w, const char *key, int required, double *out)
{
    char f[FIELD_LEN];
    int rc = get_upto (w, key, required, JSONW_POSITIVE, LOAD_MAX_TIME_S, out);
    if (rc == 1 && *out < LOAD_MIN_TIME_S)
        return jsonw_fail (w->doc, jsonw_field (w, key, f, sizeof f),
                           "must be at least %g s, got %g", LOAD_MIN_TIME_S, *out);
    return rc;
}

/*  The message of a utilization u above the limit, at where. */
static int
fail_utilization (const jsonw_doc_t *doc, const char *where, const char *what, double u)
{
    return jsonw_fail (doc, where, "%smust be at most %g, got %g%s", what,
                       LOAD_MAX_UTILIZATION, u,
                       u >= 1 ? " (a saturated node: background jobs alone would "
                                "take its whole CPU, its own tasks never finish)"
                              : "");
}

/*  Why point p (a step or a trace row) cannot follow prev (NULL for the
 *  first): a message into why, -1; or 0. time names the time ("at_s",
 *  "time_s"), noun the point ("step", "row"). */
static int
point_check (const load_point_t *p, const load_point_t *prev, const char *time,
             const char *noun, char *why, size_t len)
{
    double factor;
    char ignored[TF_ERRLEN];
    if (!(p->at_s >= 0 && p->at_s <= LOAD_MAX_TIME_S))
        return tf_error (why, len, "%s %g is not a time in [0, %g] s", time, p->at_s,
                         LOAD_MAX_TIME_S);
    if (prev && p->at_s < prev->at_s)
        return tf_error (why, len, "%s %g is before the previous %s's %g", time,
                         p->at_s, noun, prev->at_s);
    if (prev && p->at_s == prev->at_s)
        return tf_error (why, len, "%s %g repeats the previous %s's (times must "
                         "increase)", time, p->at_s, noun);
    if (slowdown_steps_factor (p->load, &factor, ignored, sizeof ignored) != 0)
        return tf_error (why, len, "load %g is not a finite L >= 1 (1.0 is a "
                         "dedicated machine)", p->load);
    if (p->load > LOAD_MAX_L)
        return tf_error (why, len, "load %g is more than %g", p->load, LOAD_MAX_L);
    return 0;
}

/*  The place of element k of the array at key: "load.steps[2]". */
static const char *
indexed (const jsonw_t *w, const char *key, size_t k, char *buf, size_t size)
{
    jsonw_field (w, key, buf, size);
    size_t len = strlen (buf);
    snprintf (buf + len, size - len, "[%zu]", k);
    return buf;
}

/*  The array at key (absent: 0, *n 0), of 1 to max elements. */
static int
get_array (jsonw_t *w, const char *key, size_t max, json_t **value, size_t *n)
{
    char f[FIELD_LEN];
    int rc;
    *n = 0;
    *value = jsonw_lookup (w, key, 0, &rc);
    if (!*value)
        return 0;
    if (jsonw_array_of (w->doc, jsonw_field (w, key, f, sizeof f), *value, 1, max, n))
        return -1;
    return 1;
}

/*  Element k of the array at key as an object walker with keys allowed. */
static int
get_element (jsonw_t *w, const char *key, json_t *array, size_t k,
             const char *const *allowed, jsonw_t *e)
{
    json_t *value = json_array_get (array, k);
    *e = (jsonw_t) {.doc = w->doc, .obj = value, .sep = "."};
    indexed (w, key, k, e->label, sizeof e->label);
    if (!json_is_object (value))
        return jsonw_fail (w->doc, e->label, "expected an object, got %s",
                           jsonw_type_name (w->doc, value));
    return jsonw_check_keys (e, allowed);
}

/* ------------------------------------------------------------------------
 *  jobs.
 */

/*  A distribution's "dist" and "cv" at w, the cv checked by dist_init
 *  for the kind (an exp's defaults to 1; other kinds must give one). */
static int
get_dist (jsonw_t *w, dist_kind_t *kind, double *cv)
{
    const char *name;
    char f[FIELD_LEN], q[JSONW_QUOTE_LEN], why[TF_ERRLEN / 2];
    if (jsonw_get_string (w, "dist", 1, 1, SIZE_MAX, &name) < 0)
        return -1;
    if (dist_kind_parse (name, kind) != 0)
        return jsonw_fail (w->doc, jsonw_field (w, "dist", f, sizeof f),
                           "unknown distribution %s (expected exp, erlang, h2, gamma "
                           "or pareto)", jsonw_show (w->doc, q, sizeof q, name));
    *cv = 1;
    if (*kind != DIST_EXP && !json_object_get (w->obj, "cv"))
        return jsonw_fail (w->doc, w->label, "missing required key \"cv\" (a%s %s "
                           "needs its coefficient of variation)",
                           *kind == DIST_ERLANG || *kind == DIST_H2 ? "n" : "", name);
    if (jsonw_get_number (w, "cv", 0, JSONW_POSITIVE, cv) < 0)
        return -1;
    dist_t d;
    if (dist_init (&d, *kind, 1, *cv, why, sizeof why) != 0)
        return jsonw_fail (w->doc, jsonw_field (w, "cv", f, sizeof f), "%s", why);
    return 0;
}

/*  One stream's utilization, demand and arrivals at w. */
static int
parse_stream (jsonw_t *w, load_stream_t *st)
{
    jsonw_t d, a;
    char f[FIELD_LEN];
    if (jsonw_get_number (w, "utilization", 1, JSONW_NONNEGATIVE, &st->utilization) < 0)
        return -1;
    if (st->utilization > LOAD_MAX_UTILIZATION)
        return fail_utilization (w->doc, jsonw_field (w, "utilization", f, sizeof f), "",
                                 st->utilization);
    if (jsonw_get_section (w, "demand", 1, &d) < 0 || jsonw_check_keys (&d, demand_keys)
        || get_duration (&d, "mean_s", 1, &st->demand_mean_s) < 0
        || get_dist (&d, &st->demand_kind, &st->demand_cv) < 0)
        return -1;
    st->arrival_kind = DIST_EXP;
    st->arrival_cv = 1;
    int rc = jsonw_get_section (w, "arrivals", 0, &a);
    if (rc <= 0)
        return rc;
    if (jsonw_check_keys (&a, arrival_keys) < 0
        || get_dist (&a, &st->arrival_kind, &st->arrival_cv) < 0)
        return -1;
    return 0;
}

/*  The total utilization of the streams: at most the limit. */
static int
check_total (load_t *self, jsonw_t *j)
{
    double u = load_utilization (self);
    char what[64];
    if (u <= LOAD_MAX_UTILIZATION + UTILIZATION_SLACK)
        return 0;
    snprintf (what, sizeof what, "the total utilization of its %d streams ",
              self->nstreams);
    return fail_utilization (j->doc, j->label, what, u);
}

static int
parse_jobs (load_t *self, jsonw_t *w)
{
    jsonw_t j, c;
    json_t *classes;
    size_t n;
    int rc = jsonw_get_section (w, "jobs", 0, &j);
    if (rc <= 0)
        return rc;
    if (jsonw_check_keys (&j, jobs_keys) < 0
        || get_array (&j, "classes", LOAD_MAX_CLASSES, &classes, &n) < 0)
        return -1;
    /*  A stream at the top unless only classes are given. */
    int top = !classes || json_object_get (j.obj, "utilization");
    for (int k = 1; !top && class_keys[k]; k++)
        if (json_object_get (j.obj, class_keys[k]))
            return jsonw_fail (j.doc, j.label, "%s without utilization (give both, or "
                               "describe the stream in classes)", class_keys[k]);
    self->streams = xcalloc (n + (size_t) top, sizeof *self->streams);
    if (top && parse_stream (&j, &self->streams[self->nstreams++]) < 0)
        return -1;
    for (size_t k = 0; k < n; k++)
        if (get_element (&j, "classes", classes, k, class_keys, &c) < 0
            || parse_stream (&c, &self->streams[self->nstreams++]) < 0)
            return -1;
    return check_total (self, &j);
}

/* ------------------------------------------------------------------------
 *  contenders and delay_comm.
 */

static int
parse_contender (jsonw_t *c, load_contender_t *ct)
{
    long long bytes = 0;
    ct->period_s = 1;
    if (get_upto (c, "compute", 0, JSONW_NONNEGATIVE, 1, &ct->compute) < 0
        || get_upto (c, "comm", 0, JSONW_NONNEGATIVE, 1, &ct->comm) < 0
        || get_duration (c, "period_s", 0, &ct->period_s) < 0)
        return -1;
    if (ct->comm > 0 && !json_object_get (c->obj, "msg_bytes"))
        return jsonw_fail (c->doc, c->label, "missing required key \"msg_bytes\" (a "
                           "contender that communicates needs its message size)");
    if (jsonw_get_integer (c, "msg_bytes", 0, 1, LOAD_MAX_MSG_BYTES, &bytes) < 0)
        return -1;
    ct->msg_bytes = (uint32_t) bytes;
    if (ct->compute + ct->comm > 1 + SLOWDOWN_FRACTION_SLACK)
        return jsonw_fail (c->doc, c->label, "compute %g + comm %g is more than 1 (both "
                           "are fractions of the contender's time)", ct->compute,
                           ct->comm);
    return 0;
}

static int
parse_contenders (load_t *self, jsonw_t *w)
{
    json_t *array;
    size_t n;
    jsonw_t c;
    if (get_array (w, "contenders", LOAD_MAX_CONTENDERS, &array, &n) < 0)
        return -1;
    self->contenders = n ? xcalloc (n, sizeof *self->contenders) : NULL;
    for (size_t k = 0; k < n; k++) {
        if (get_element (w, "contenders", array, k, contender_keys, &c) < 0
            || parse_contender (&c, &self->contenders[k]) < 0)
            return -1;
        self->ncontenders++;
    }
    return 0;
}

/*  delay_comm: one finite delay >= 0 per number of communicating
 *  contenders, 1 .. ncontenders. */
static int
parse_delay_comm (load_t *self, jsonw_t *w)
{
    json_t *array;
    size_t n;
    char f[FIELD_LEN], e[FIELD_LEN];
    int rc = get_array (w, "delay_comm", LOAD_MAX_CONTENDERS, &array, &n);
    if (rc <= 0)
        return rc;
    jsonw_field (w, "delay_comm", f, sizeof f);
    if ((int) n != self->ncontenders)
        return jsonw_fail (w->doc, f, "has %zu entries, expected %d (one per number of "
                           "communicating contenders, 1 .. %d)", n, self->ncontenders,
                           self->ncontenders);
    self->delay_comm = xcalloc (n, sizeof *self->delay_comm);
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get (array, k);
        double d = json_number_value (v);
        indexed (w, "delay_comm", k, e, sizeof e);
        if (!json_is_number (v))
            return jsonw_fail (w->doc, e, "expected a number, got %s",
                               jsonw_type_name (w->doc, v));
        if (!(d >= 0 && d <= LOAD_MAX_DELAY_COMM))
            return jsonw_fail (w->doc, e, "must be in [0, %g], got %g",
                               LOAD_MAX_DELAY_COMM, d);
        self->delay_comm[k] = d;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 *  steps, trace_rows and trace.
 */

static int
parse_steps (load_t *self, jsonw_t *w)
{
    json_t *array;
    size_t n;
    jsonw_t s;
    char why[TF_ERRLEN / 2];
    if (get_array (w, "steps", LOAD_MAX_STEPS, &array, &n) < 0)
        return -1;
    self->steps = n ? xcalloc (n, sizeof *self->steps) : NULL;
    for (size_t k = 0; k < n; k++) {
        load_point_t *p = &self->steps[k];
        if (get_element (w, "steps", array, k, step_keys, &s) < 0
            || jsonw_get_number (&s, "at_s", 1, JSONW_ANY, &p->at_s) < 0
            || jsonw_get_number (&s, "load", 1, JSONW_ANY, &p->load) < 0)
            return -1;
        if (point_check (p, k ? p - 1 : NULL, "at_s", "step", why, sizeof why) != 0)
            return jsonw_fail (w->doc, s.label, "%s", why);
        self->nsteps++;
    }
    return 0;
}

/*  "trace_rows": [[time_s, load], ...], what load_to_json wrote. */
static int
parse_trace_rows (load_t *self, jsonw_t *w, json_t *array, size_t n)
{
    char e[FIELD_LEN], why[TF_ERRLEN / 2];
    size_t two;
    self->trace = xcalloc (n, sizeof *self->trace);
    for (size_t k = 0; k < n; k++) {
        json_t *row = json_array_get (array, k);
        indexed (w, "trace_rows", k, e, sizeof e);
        if (jsonw_array_of (w->doc, e, row, 2, 2, &two) < 0)
            return -1;
        if (two != 2 || !json_is_number (json_array_get (row, 0))
            || !json_is_number (json_array_get (row, 1)))
            return jsonw_fail (w->doc, e, "expected [time_s, load], two numbers");
        load_point_t *p = &self->trace[k];
        p->at_s = json_number_value (json_array_get (row, 0));
        p->load = json_number_value (json_array_get (row, 1));
        if (point_check (p, k ? p - 1 : NULL, "time_s", "row", why, sizeof why) != 0)
            return jsonw_fail (w->doc, e, "%s", why);
        self->ntrace++;
    }
    return 0;
}

static int
parse_trace (load_t *self, jsonw_t *w, const char *base_dir)
{
    const char *path = NULL;
    json_t *rows;
    size_t n;
    char f[FIELD_LEN], why[TF_ERRLEN];
    if (jsonw_get_string (w, "trace", 0, 1, PATH_MAX, &path) < 0
        || get_array (w, "trace_rows", LOAD_MAX_TRACE_ROWS, &rows, &n) < 0)
        return -1;
    if (rows && !path)
        return jsonw_fail (w->doc, jsonw_field (w, "trace_rows", f, sizeof f),
                           "given without \"trace\" (the file the rows came from)");
    if (!path)
        return 0;
    self->trace_path = xstrdup (path);
    if (rows)
        return parse_trace_rows (self, w, rows, n);
    if (load_read_trace (self, path, base_dir, why, sizeof why) != 0)
        return jsonw_fail (w->doc, jsonw_field (w, "trace", f, sizeof f), "%s", why);
    return 0;
}

/*  line without its leading and trailing blanks (and a CR). */
static char *
trim (char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    size_t len = strlen (line);
    while (len > 0 && strchr (" \t\r", line[len - 1]))
        line[--len] = '\0';
    return line;
}

/*  A trimmed line of a trace: 1 a row into *p, 0 nothing (blank, a
 *  comment), -1 not a row. */
static int
trace_line (const char *line, load_point_t *p)
{
    if (!*line || line[0] == '#')
        return 0;
    char *end;
    p->at_s = strtod (line, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == line || *end != ',')
        return -1;
    const char *field = end + 1;
    p->load = strtod (field, &end);
    return end == field || *trim (end) ? -1 : 1;
}

/*  The rows of text (len bytes, NUL-terminated), read into self. */
static int
trace_rows_of (load_t *self, char *text, size_t len, const char *name, char *err,
               size_t errlen)
{
    char why[TF_ERRLEN / 2], q[JSONW_QUOTE_LEN];
    size_t cap = 0;
    unsigned lineno = 0;
    int first = 1;   /* no row or header yet */
    if (memchr (text, '\0', len))
        return tf_error (err, errlen, "%s: holds a NUL byte (not a CSV text)", name);
    for (char *line = text, *next; line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        load_point_t p;
        line = trim (line);
        int rc = trace_line (line, &p);
        if (rc == 0)
            continue;
        int header = first && rc < 0 && !strcmp (line, "time_s,load");
        first = 0;
        if (header)
            continue;
        if (rc < 0)
            return tf_error (err, errlen, "%s:%u: expected \"time_s,load\", two numbers, "
                             "got %s", name, lineno, tf_quote (q, sizeof q, line));
        if (self->ntrace == LOAD_MAX_TRACE_ROWS)
            return tf_error (err, errlen, "%s:%u: more than %d rows", name, lineno,
                             LOAD_MAX_TRACE_ROWS);
        if (point_check (&p, self->ntrace ? &self->trace[self->ntrace - 1] : NULL,
                         "time_s", "row", why, sizeof why) != 0)
            return tf_error (err, errlen, "%s:%u: %s", name, lineno, why);
        if ((size_t) self->ntrace == cap) {
            cap = cap ? 2 * cap : 64;
            self->trace = xrealloc (self->trace, cap * sizeof *self->trace);
        }
        self->trace[self->ntrace++] = p;
    }
    if (self->ntrace == 0)
        return tf_error (err, errlen, "%s: no rows (expected lines of time_s,load)",
                         name);
    return 0;
}

/*  The trace file at path (relative to base_dir), open for reading; NULL
 *  with a message. */
static FILE *
open_trace (const char *path, const char *base_dir, char *err, size_t errlen)
{
    char *full = path[0] == '/' || !base_dir || !*base_dir
                     ? xstrdup (path)
                     : xasprintf ("%s/%s", base_dir, path);
    /*  Non-blocking, so that a FIFO or a device named by mistake is
     *  refused, not waited on. */
    int fd = open (full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    free (full);
    struct stat st;
    FILE *file = NULL;
    if (fd < 0)
        tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
    else if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
        tf_error (err, errlen, "%s: not a regular file", path);
    else if (!(file = fdopen (fd, "r")))
        tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
    if (fd >= 0 && !file)
        close (fd);
    return file;
}

int
load_read_trace (load_t *self, const char *path, const char *base_dir, char *err,
                 size_t errlen)
{
    FILE *file = open_trace (path, base_dir, err, errlen);
    if (!file)
        return -1;
    char *text = xmalloc (LOAD_MAX_TRACE_BYTES + 2);
    size_t len = fread (text, 1, LOAD_MAX_TRACE_BYTES + 1, file);
    int rc = -1;
    if (ferror (file))
        tf_error (err, errlen, "%s: cannot read: %s", path, strerror (errno ? errno : EIO));
    else if (len > LOAD_MAX_TRACE_BYTES)
        tf_error (err, errlen, "%s: more than %u bytes", path, LOAD_MAX_TRACE_BYTES);
    else {
        text[len] = '\0';
        free (self->trace);
        self->trace = NULL;
        self->ntrace = 0;
        rc = trace_rows_of (self, text, len, path, err, errlen);
    }
    fclose (file);
    free (text);
    return rc;
}

/* ------------------------------------------------------------------------
 *  The description.
 */

load_t *
load_parse (jsonw_t *w, const char *base_dir)
{
    load_t *self = xcalloc (1, sizeof *self);
    long long seed = 1;
    if (jsonw_check_keys (w, load_keys) < 0 || parse_jobs (self, w) < 0
        || parse_contenders (self, w) < 0 || parse_delay_comm (self, w) < 0
        || parse_steps (self, w) < 0 || parse_trace (self, w, base_dir) < 0
        || jsonw_get_integer (w, "seed", 0, 0, LLONG_MAX, &seed) < 0) {
        load_destroy (&self);
        return NULL;
    }
    self->seed = (uint64_t) seed;
    return self;
}
