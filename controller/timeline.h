/*  timeline — `treefarm run --trace FILE`: the nodes' spans as one Chrome
 *  trace-event file, which Perfetto (ui.perfetto.dev) and chrome://tracing
 *  open.
 *
 *  The file is the JSON Object Format: {"traceEvents": [...],
 *  "displayTimeUnit": "ms", "otherData": {...}}. Every node is a process
 *  (pid: its index in the config + 1, named by a "process_name" metadata
 *  event), every track of it a thread named by "thread_name": "compute"
 *  (or "compute slot K" per command slot), "receive" (not on the root)
 *  and "send → CHILD" per child. Each span is a complete event ("X",
 *  named "task ID", args {task}); the gaps on a compute track, from START
 *  to the end of the node's trace, are "idle" X events on the same
 *  track. A node with background load has a counter track, "background"
 *  ("C" events, args {share}): the background's share of its CPU over
 *  each sample interval, from its samples (node/sampler.h). Times (ts,
 *  dur) are microseconds of platform time since the
 *  node's START: wall seconds × time_scale, as results.json's makespan;
 *  otherData says so. An adapting run's declared changes are instant
 *  events ("i", cat "change") on the process of the node whose rate
 *  changed. docs/trace.md has the details.
 *
 *  Events are written one at a time (each built and dumped by jansson),
 *  so a big trace is never held in memory as JSON; the file goes to a
 *  temporary name beside FILE and is renamed into place when complete.
 */
#ifndef TF_TIMELINE_H
#define TF_TIMELINE_H

#include <jansson.h>
#include <stdint.h>

#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/trace.h"

/*  The track ids (tid) within a node's process: compute slot K is
 *  TIMELINE_TID_COMPUTE + K, receiving TIMELINE_TID_RECEIVE, sending to
 *  child slot I TIMELINE_TID_SEND + I; spaced so no two kinds meet for
 *  any config (slots and children are at most CONFIG_MAX_SLOTS and
 *  CONFIG_MAX_NODES). */
#define TIMELINE_TID_COMPUTE 1
#define TIMELINE_TID_RECEIVE 100000
#define TIMELINE_TID_SEND 200000

/*  The most rows of a node's samples the background track takes: the
 *  node keeps 1024 (node/report.c), so this is only a bound on what a
 *  REPORT may make the controller hold. */
#define TIMELINE_MAX_SAMPLES 65536

/*  One point of the background track: its share of the CPU from t0 to
 *  t1, platform seconds since the node's START. */
typedef struct {
    double t0, t1, share;
} timeline_point_t;

/*  The background's points from a node's samples CSV (node/sampler.h:
 *  the header names the columns; t0, t1 and load_share are read),
 *  strictly: at most TIMELINE_MAX_SAMPLES rows, each with those columns
 *  finite, 0 <= t0 < t1 and share >= 0. A header without load_share (an
 *  older node) gives no points. On success *points (the caller's to
 *  free, NULL when none) holds *n points and 0 is returned; otherwise -1
 *  with a message naming the line, and *points NULL. */
int timeline_background_decode (const char *csv, timeline_point_t **points, size_t *n,
                                char *err, size_t errlen);

/*  One node's part of the timeline. spans (the caller's) are sorted in
 *  place by timeline_add_node. */
typedef struct {
    const char *name;
    int index;               /* in the config: pid index + 1 */
    int root;                /* no receive track */
    uint32_t slots;          /* compute tracks, at least 1 */
    int nchildren;
    const char *const *children;   /* their names: one send track each */
    trace_span_t *spans;
    size_t nspans;
    double begin;            /* seconds it started at: 0, or for a node that
                                joined the run, when it did (idle from there) */
    double end;              /* seconds its trace is whole to: idle ends there */
    const timeline_point_t *background;   /* its background track's points
                                             (platform time), or NULL: none */
    size_t nbackground;
} timeline_node_t;

typedef struct timeline timeline_t;

/*  Start the file at path: a temporary file beside it, renamed into place
 *  by timeline_close. scale converts span seconds to platform seconds
 *  (the time scale). Returns the writer, or NULL with a message. */
timeline_t *timeline_open (const char *path, double scale, char *err, size_t errlen);

/*  Write node's process and tracks, its spans, its idle gaps and its
 *  background track. */
void timeline_add_node (timeline_t *self, timeline_node_t *node);

/*  A change a node declared (by: its name) as an instant event ("i",
 *  process-wide) on the process of config index `index`, at the
 *  change's platform time, named as the log line says it ("compute 23.9
 *  -> 6.0 units/s"), args {node, what, from, to, by}. */
void timeline_add_change (timeline_t *self, int index, const proto_change_t *c,
                          const char *by);

/*  Finish the file with otherData (a reference is taken; NULL: none),
 *  close it and rename it into place; destroy the writer and null the
 *  pointer. Returns 0, or -1 with a message saying "cannot write PATH:
 *  reason" (the temporary file removed). */
/*  One instant event for a costly action node `index` weighed
 *  (docs/adapt.md), named as the log says it. */
void timeline_add_action (timeline_t *self, int index, const proto_action_t *a);

int timeline_close (timeline_t **self_p, json_t *other, char *err, size_t errlen);

/*  Before a run: can path be written at its end? It must not be a
 *  directory, and its directory must exist and be writable, unless that
 *  directory is out_dir (the run's --out, or NULL), which the run makes
 *  before anything starts. Returns 0, or -1 with a message. */
int timeline_check_path (const char *path, const char *out_dir, char *err, size_t errlen);

/*  The whole run's timeline from what its nodes reported (every node of
 *  cfg has a process, traced or not), written to path; status is the
 *  run's ("complete", "failed", ...). A node whose trace is malformed is
 *  left without spans, and a loaded node whose samples are malformed
 *  without a background track, and the message copied to warn (the
 *  first; warn is "" when none). Returns 0, or -1 with "cannot write PATH: reason". */
int timeline_write_run (const char *path, const config_t *cfg, const results_t *results,
                        char *warn, size_t warnlen, char *err, size_t errlen);

#endif
