/*  trace — a node's timeline, bounded. See trace.h. */
#include "overlay/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

/*  Times are clamped to this many seconds (over 30,000 years), so a line
 *  always fits TRACE_MAX_LINE. */
#define TRACE_MAX_TIME 1e12

/*  Spans the recorder makes room for at first; it doubles from there. */
#define TRACE_FIRST_ROOM 1024

static const char *const kind_names[TRACE_KIND_COUNT] = {"compute", "receive", "send"};
static const char kind_letters[TRACE_KIND_COUNT] = {'c', 'r', 's'};

/*  A span begun and not yet ended. */
typedef struct {
    int open;
    uint64_t task;
    double start;
} trace_open_t;

struct trace {
    trace_span_t *spans;
    size_t n, room, cap;
    uint64_t dropped, abandoned;
    double first_dropped;    /* start of the first dropped span */
    uint32_t lanes[TRACE_KIND_COUNT];
    trace_open_t *open[TRACE_KIND_COUNT];
};

const char *
trace_kind_str (trace_kind_t kind)
{
    return kind >= 0 && kind < TRACE_KIND_COUNT ? kind_names[kind] : "?";
}

trace_t *
trace_new (size_t cap, uint32_t slots, uint32_t children)
{
    trace_t *self = xcalloc (1, sizeof *self);
    self->cap = cap < 1 ? 1 : cap > TRACE_MAX_SPANS ? TRACE_MAX_SPANS : cap;
    self->lanes[TRACE_COMPUTE] = slots < 1 ? 1 : slots;
    self->lanes[TRACE_RECEIVE] = 1;
    self->lanes[TRACE_SEND] = children;
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        self->open[k] = xcalloc (self->lanes[k] + 1, sizeof *self->open[k]);
    self->first_dropped = -1;
    return self;
}

void
trace_destroy (trace_t **self_p)
{
    trace_t *self = *self_p;
    if (!self)
        return;
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        free (self->open[k]);
    free (self->spans);
    free (self);
    *self_p = NULL;
}

static double
clamp_time (double t)
{
    return !(t > 0) ? 0 : t > TRACE_MAX_TIME ? TRACE_MAX_TIME : t;
}

void
trace_begin (trace_t *self, trace_kind_t kind, uint32_t lane, uint64_t task, double t)
{
    if ((int) kind < 0 || kind >= TRACE_KIND_COUNT || lane >= self->lanes[kind])
        return;
    trace_open_t *o = &self->open[kind][lane];
    if (o->open)
        self->abandoned++;
    *o = (trace_open_t){1, task, clamp_time (t)};
}

/*  Keep span s, or count it dropped when full. */
static void
keep (trace_t *self, const trace_span_t *s)
{
    if (self->n == self->cap) {
        if (self->dropped++ == 0)
            self->first_dropped = s->start;
        return;
    }
    if (self->n == self->room) {
        size_t room = self->room ? 2 * self->room : TRACE_FIRST_ROOM;
        self->room = room > self->cap ? self->cap : room;
        self->spans = xrealloc (self->spans, self->room * sizeof *self->spans);
    }
    self->spans[self->n++] = *s;
}

void
trace_end (trace_t *self, trace_kind_t kind, uint32_t lane, uint64_t task, double t)
{
    if ((int) kind < 0 || kind >= TRACE_KIND_COUNT || lane >= self->lanes[kind])
        return;
    trace_open_t *o = &self->open[kind][lane];
    if (!o->open || o->task != task)
        return;
    o->open = 0;
    double end = clamp_time (t);
    trace_span_t s = {.task = task, .start = o->start, .end = end < o->start ? o->start
                                                                              : end,
                      .lane = lane, .kind = kind};
    keep (self, &s);
}

const trace_span_t *
trace_spans (const trace_t *self, size_t *n)
{
    *n = self->n;
    return self->spans;
}

uint64_t
trace_dropped (const trace_t *self, double *first_start)
{
    if (first_start)
        *first_start = self->first_dropped;
    return self->dropped;
}

uint64_t
trace_abandoned (const trace_t *self)
{
    return self->abandoned;
}

/*  Span i's line into line (TRACE_MAX_LINE + 1 bytes); its length, or 0
 *  if it did not fit (cannot happen: times are clamped). */
static size_t
span_line (const trace_t *self, size_t i, char *line)
{
    const trace_span_t *s = &self->spans[i];
    int len = snprintf (line, TRACE_MAX_LINE + 1, "%c,%u,%llu,%.6f,%.6f\n",
                        kind_letters[s->kind], s->lane, (unsigned long long) s->task,
                        s->start, s->end);
    return len > 0 && len <= TRACE_MAX_LINE ? (size_t) len : 0;
}

int
trace_write (const trace_t *self, FILE *out)
{
    char line[TRACE_MAX_LINE + 1];
    if (fputs (TRACE_HEADER, out) < 0)
        return -1;
    for (size_t i = 0; i < self->n; i++) {
        size_t len = span_line (self, i, line);
        if (len && fwrite (line, 1, len, out) != len)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 *  Decoding.
 */

/*  An unsigned decimal at *p, up to the separator sep; advances past it. */
static int
take_uint (const char **p, char sep, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull (s, &end, 10);
    if (errno || *end != sep || v > max)
        return -1;
    *out = v;
    *p = end + 1;
    return 0;
}

/*  A finite number >= 0 at *p, up to sep; advances past it. */
static int
take_time (const char **p, char sep, double *out)
{
    const char *s = *p;
    char *end;
    if ((*s < '0' || *s > '9'))
        return -1;
    errno = 0;
    double v = strtod (s, &end);
    if (errno || *end != sep || !isfinite (v) || v < 0)
        return -1;
    *out = v;
    *p = end + 1;
    return 0;
}

/*  One line (ending in '\n') into *s; the lanes per kind bound the lane. */
static int
take_line (const char *line, const uint32_t lanes[TRACE_KIND_COUNT], trace_span_t *s,
           char *err, size_t errlen)
{
    const char *p = line;
    const char *letter = memchr (kind_letters, *p, TRACE_KIND_COUNT);
    uint64_t lane, task;
    if (!*p || !letter || p[1] != ',')
        return tf_error (err, errlen, "unknown kind");
    s->kind = (trace_kind_t) (letter - kind_letters);
    p += 2;
    if (take_uint (&p, ',', UINT32_MAX, &lane) || lane >= lanes[s->kind])
        return tf_error (err, errlen, "a %s lane must be an integer below %u",
                         kind_names[s->kind], lanes[s->kind]);
    if (take_uint (&p, ',', UINT64_MAX, &task))
        return tf_error (err, errlen, "a task must be a non-negative integer");
    if (take_time (&p, ',', &s->start) || take_time (&p, '\n', &s->end))
        return tf_error (err, errlen, "times must be finite numbers >= 0");
    if (s->end < s->start)
        return tf_error (err, errlen, "a span must not end before it starts");
    s->lane = (uint32_t) lane;
    s->task = task;
    return 0;
}

int
trace_decode (const char *text, uint32_t slots, uint32_t children,
              trace_span_t **spans, size_t *n, char *err, size_t errlen)
{
    const uint32_t lanes[TRACE_KIND_COUNT] = {slots < 1 ? 1 : slots, 1, children};
    size_t len = strnlen (text, TRACE_MAX_TEXT + 1), lines = 0;
    *spans = NULL;
    *n = 0;
    if (len > TRACE_MAX_TEXT)
        return tf_error (err, errlen, "trace: longer than %zu bytes", TRACE_MAX_TEXT);
    if (strncmp (text, TRACE_HEADER, strlen (TRACE_HEADER)) != 0)
        return tf_error (err, errlen, "trace: line 1: the header must be %.*s",
                         (int) strlen (TRACE_HEADER) - 1, TRACE_HEADER);
    const char *p = text + strlen (TRACE_HEADER);
    for (const char *q = p; *q; q++)
        lines += *q == '\n';
    if (lines > TRACE_MAX_SPANS)
        return tf_error (err, errlen, "trace: more than %d spans", TRACE_MAX_SPANS);
    trace_span_t *out = xcalloc (lines + 1, sizeof *out);
    char why[TF_ERRLEN];
    while (*p) {
        const char *nl = strchr (p, '\n');
        if (!nl || nl - p + 1 > TRACE_MAX_LINE
            || take_line (p, lanes, &out[*n], why, sizeof why) != 0) {
            tf_error (err, errlen, "trace: line %zu: %s", *n + 2,
                      !nl ? "no newline at the end" : nl - p + 1 > TRACE_MAX_LINE
                                                          ? "too long" : why);
            free (out);
            *n = 0;
            return -1;
        }
        (*n)++;
        p = nl + 1;
    }
    *spans = out;
    return 0;
}
