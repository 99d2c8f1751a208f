/*  trace — a node's timeline: a bounded recorder of spans (what the node
 *  did, from when to when) and the CSV text its REPORT carries them in.
 *
 *  A span is one task on one track of a node: its engine or one command
 *  slot computing it (TRACE_COMPUTE, lane = the slot), the node receiving
 *  it from its parent, from first chunk to last (TRACE_RECEIVE, lane 0),
 *  or the node sending it to a child, from first chunk to last
 *  (TRACE_SEND, lane = the child's slot). The driver (node/report.c) says
 *  when each begins and ends, with times in seconds of its choosing
 *  (the runtime: wall seconds since START); nothing here reads a clock or
 *  touches a socket, so tests drive it directly.
 *
 *  Memory is bounded: a recorder keeps at most the spans it was made for
 *  (TRACE_MAX_SPANS at most), and counts the spans that ended after it
 *  was full as dropped (the newest go: the trace stays complete from the
 *  start up to the first dropped span). docs/trace.md has the tracks and
 *  the format; the controller turns the text into a Chrome trace
 *  (controller/timeline.h).
 */
#ifndef TF_TRACE_H
#define TF_TRACE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/*  The most spans one node keeps: 100,000 spans are about 3 MB in memory
 *  and at most 9.6 MB of text in the REPORT (TRACE_MAX_LINE each), well
 *  under a control frame's 64 MiB (PROTO_MAX_BODY); a node records at
 *  most two spans per task through it (received, then computed or sent),
 *  so 50,000 tasks through one node fit. */
#define TRACE_MAX_SPANS 100000

/*  The longest line of the text, newline included: a kind, a lane, a task
 *  id of up to 20 digits and two times of up to 24 characters each. */
#define TRACE_MAX_LINE 96

/*  The most text a REPORT's trace may have: the header and every span at
 *  its longest. A REPORT with more is refused. */
#define TRACE_MAX_TEXT ((size_t) TRACE_MAX_SPANS * TRACE_MAX_LINE + 64)

/*  The first line of the text. */
#define TRACE_HEADER "kind,lane,task,start,end\n"

typedef enum {
    TRACE_COMPUTE = 0,       /* the engine or command slot `lane` computing */
    TRACE_RECEIVE,           /* receiving from the parent (lane 0) */
    TRACE_SEND,              /* sending to child slot `lane` */
    TRACE_KIND_COUNT
} trace_kind_t;

/*  The kind's name ("compute", "receive", "send"). */
const char *trace_kind_str (trace_kind_t kind);

/*  One span: [start, end] seconds, start <= end. */
typedef struct {
    uint64_t task;
    double start, end;
    uint32_t lane;
    trace_kind_t kind;
} trace_span_t;

typedef struct trace trace_t;

/*  A recorder for a node with `slots` compute lanes (at least 1) and
 *  `children` send lanes, keeping at most `cap` spans (clamped to
 *  1 .. TRACE_MAX_SPANS). Its storage grows with the spans, up to cap. */
trace_t *trace_new (size_t cap, uint32_t slots, uint32_t children);

/*  Destroy a recorder and null the pointer. Safe on NULL. */
void trace_destroy (trace_t **self_p);

/*  Task begins on kind's track `lane` at time t. A span still open on
 *  that lane is abandoned (it never ended: e.g. a transfer to a child
 *  that was lost) and counted (trace_abandoned). A lane out of range is
 *  ignored. */
void trace_begin (trace_t *self, trace_kind_t kind, uint32_t lane, uint64_t task,
                  double t);

/*  Task ends on kind's track `lane` at time t: the span is recorded,
 *  or, when the recorder is full, counted as dropped. An end with no open
 *  span of that task on that lane is ignored; a time before the span's
 *  start is taken as its start. */
void trace_end (trace_t *self, trace_kind_t kind, uint32_t lane, uint64_t task, double t);

/*  The spans recorded, in the order they ended; n of them. Borrowed. */
const trace_span_t *trace_spans (const trace_t *self, size_t *n);

/*  Spans dropped because the recorder was full, and the start of the
 *  first of them (the trace is whole before it), or -1 when none was. */
uint64_t trace_dropped (const trace_t *self, double *first_start);

/*  Spans begun and never ended (replaced by a later begin). */
uint64_t trace_abandoned (const trace_t *self);

/*  The spans as text, written to out: TRACE_HEADER, then one line per
 *  span in order, "KIND,LANE,TASK,START,END" with KIND c, r or s and
 *  times in seconds with 6 decimals; at most TRACE_MAX_TEXT bytes.
 *  Returns 0, or -1 on a write error. */
int trace_write (const trace_t *self, FILE *out);

/*  Decode text as trace_write writes it, strictly: the header, then at
 *  most TRACE_MAX_SPANS lines of at most TRACE_MAX_LINE bytes, each a
 *  known kind, a lane below `slots` (compute), 1 (receive) or `children`
 *  (send), a task id, and finite times with 0 <= start <= end; at most
 *  TRACE_MAX_TEXT bytes in all. On success *spans (the caller's to free)
 *  holds *n spans and 0 is returned; otherwise -1 with a message naming
 *  the line, and *spans NULL. */
int trace_decode (const char *text, uint32_t slots, uint32_t children,
                  trace_span_t **spans, size_t *n, char *err, size_t errlen);

#endif
