/*  progress — the controller's live view of a run.
 *
 *  On a terminal one line is rewritten in place about five times a second:
 *
 *    [fork7/fcfs] 412/1000 tasks  41.2%  38.1 tasks/s  ETA 15s
 *
 *  When the output is not a terminal (a log, a pipe) the same line is
 *  printed as a plain line every few seconds instead. The rate is measured
 *  over the last few seconds; it is reported in platform time (wall rate
 *  divided by the time scale, so it matches the run's throughput in the
 *  results) and labelled "platform tasks/s" when the time scale is not 1.
 *  The ETA is in wall seconds: what the user waits. When the run adapts,
 *  the line also gives the live efficiency, the rate against the bound of
 *  the platform as the tree now sees it (docs/adapt.md):
 *
 *    [fork7/fcfs] 412/1000 tasks  41.2%  38.1 tasks/s  92% of bound 41.3  ETA 15s
 *
 *  The caller passes the clock in (tf_now), so the module is tested
 *  without waiting.
 */
#ifndef TF_PROGRESS_H
#define TF_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*  Seconds between redraws of the live line, and between plain lines. */
#define PROGRESS_LIVE_INTERVAL 0.2
#define PROGRESS_PLAIN_INTERVAL 5.0

typedef enum {
    PROGRESS_AUTO = 0,       /* LIVE on a terminal, PLAIN otherwise */
    PROGRESS_LIVE,           /* one line rewritten with \r */
    PROGRESS_PLAIN,          /* a line every PROGRESS_PLAIN_INTERVAL */
    PROGRESS_QUIET,          /* nothing */
} progress_mode_t;

const char *progress_mode_str (progress_mode_t mode);

typedef struct progress progress_t;

/*  Create a progress display writing to out (borrowed; it must outlive the
 *  display) for a bag of total tasks labelled label (copied), e.g.
 *  "fork7/fcfs". time_scale (> 0) converts wall rates to platform rates.
 *  PROGRESS_AUTO resolves to LIVE or PLAIN by isatty on out. */
progress_t *progress_new (FILE *out, progress_mode_t mode, const char *label,
                          uint64_t total, double time_scale);

/*  Destroy a display and null the caller's pointer; a live line still
 *  shown is ended with a newline. Safe on NULL. */
void progress_destroy (progress_t **self_p);

/*  Return the mode in effect (never PROGRESS_AUTO). */
progress_mode_t progress_mode (const progress_t *self);

/*  The run started at now: the rate and the ETA are measured from here. */
void progress_start (progress_t *self, double now);

/*  The live bound, platform tasks/s, the rate is shown against from now
 *  on; NaN, infinite or <= 0 shows none. */
void progress_set_bound (progress_t *self, double tasks_per_s);

/*  done tasks are complete at now. Redraws when the mode's interval has
 *  passed since the last draw; cheap to call more often. */
void progress_update (progress_t *self, uint64_t done, double now);

/*  Erase the live line, if one is shown, so that a message can be printed
 *  on a clean line; the next update draws it again. No-op otherwise. */
void progress_clear (progress_t *self);

/*  Draw the final state and end the line (LIVE), or print it (PLAIN). */
void progress_finish (progress_t *self, uint64_t done, double now);

/*  Format the progress line for done tasks at now into buf (len bytes,
 *  truncated if short), without a newline, whatever the mode. Returns buf. */
const char *progress_format (const progress_t *self, uint64_t done, double now,
                             char *buf, size_t len);

#endif
