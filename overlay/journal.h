/*  journal — an append-only file of completed tasks, so that a run can
 *  resume (docs/commands.md, "The journal").
 *
 *  The root appends one record per completed task; the controller reads
 *  the records back on `--resume` and skips those tasks. A record is a
 *  JSON object, opaque to this module, written compact on one line ending
 *  in '\n'. Records are buffered and written with one write(2), then
 *  fsync(2)'d, in batches: when `batch` records are pending, when the
 *  oldest pending record is older than max_delay_s (journal_tick), on
 *  journal_flush and on journal_close. So a crash loses at most the
 *  records of one batch or of max_delay_s, which a resumed run computes
 *  again.
 *
 *  Crash safety: a record counts only when its line is complete. A write
 *  cut short (kill -9, a full disk, a power cut) leaves a final line with
 *  no '\n': journal_load ignores it and says so, and journal_open cuts it
 *  off before appending, so the next record starts a line of its own. A
 *  write that fails is cut off at once and its records stay pending.
 *  The file is locked (flock) while open, so two runs cannot interleave.
 */
#ifndef TF_JOURNAL_H
#define TF_JOURNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/*  The longest record line, bytes without its '\n'. A record names one
 *  task's completion (its id, the node, the exit status, its outputs):
 *  1 MiB holds hundreds of output paths at full length. journal_append
 *  refuses a longer record, so the loader never meets one it wrote, and
 *  a longer line is not a journal's; the loader holds one line at a time. */
#define JOURNAL_MAX_LINE (1 << 20)

/*  The largest batch: records pending in memory before a write. Past a
 *  few thousand the fsync is already amortised; a larger batch only
 *  loses more on a crash. */
#define JOURNAL_MAX_BATCH 100000

/*  The longest max_delay_s, seconds: a crash loses at most this much of
 *  completed work to recompute, so an hour is already generous. */
#define JOURNAL_MAX_DELAY_S 3600.0

/*  Pending bytes that force a write before the batch is full, so that a
 *  batch of large records cannot hold more than this in memory. */
#define JOURNAL_MAX_PENDING_BYTES (4 << 20)

typedef struct journal_t journal_t;

/*  Open the journal at path for appending, creating it (mode 0644, less
 *  the umask) if absent. batch is 1..JOURNAL_MAX_BATCH records, max_delay_s
 *  0..JOURNAL_MAX_DELAY_S seconds. A final line without '\n' (a torn write)
 *  is cut off; a file whose last line is longer than JOURNAL_MAX_LINE is
 *  refused as not a journal. Return the journal, the caller's to close,
 *  or NULL with "path: reason" in err (bad arguments, cannot open, locked
 *  by another process, not a regular file). */
journal_t *journal_open (const char *path, size_t batch, double max_delay_s,
                         char *err, size_t errlen);

/*  Add record (a JSON object, borrowed) at time now (any monotonic clock,
 *  seconds). It is encoded at once; the batch is written and synced when
 *  it is full (or holds JOURNAL_MAX_PENDING_BYTES). Return 0, or -1 with
 *  the reason in err: not an object, a record longer than
 *  JOURNAL_MAX_LINE (not added), or the batch's write or fsync failed. */
int journal_append (journal_t *self, const json_t *record, double now, char *err,
                    size_t errlen);

/*  Write and sync the pending records if the oldest is max_delay_s old at
 *  now (within 1 ns). Return 0 (also when nothing was due), or -1 with
 *  the reason in err. */
int journal_tick (journal_t *self, double now, char *err, size_t errlen);

/*  Seconds from now until journal_tick has something to do (0 if overdue),
 *  or a negative number when nothing is pending. */
double journal_next_deadline (const journal_t *self, double now);

/*  Write and sync the pending records now. Return 0, or -1 with
 *  "path: cannot write: ..." or "path: cannot sync: ..." in err. After a
 *  failed write the file is cut back to its last complete record and the
 *  records stay pending, so a later flush may retry; after a failed sync
 *  their fate on disk is unknown and the journal should be closed. */
int journal_flush (journal_t *self, char *err, size_t errlen);

/*  Flush, close the file, free the journal and null the pointer (NULL is
 *  fine). The journal is freed even when the flush fails: return 0, or -1
 *  with the reason in err. */
int journal_close (journal_t **self_p, char *err, size_t errlen);

/*  Records appended but not yet written. */
size_t journal_pending (const journal_t *self);

/*  How many batches were written and fsync'd since journal_open. */
uint64_t journal_syncs (const journal_t *self);

/*  Called by journal_load for each record, with its line number (1-based).
 *  The record is borrowed: json_incref it to keep it. Return 0 to go on or
 *  -1 to stop the load. */
typedef int (journal_fn) (json_t *record, unsigned line, void *arg);

/*  Read the journal at path, calling callback for each complete record in
 *  file order. A missing file is an empty journal. A final line without
 *  '\n' is a write torn by a crash: it is not a record, it is ignored and
 *  *torn (if not NULL) is set to the number of such lines (0 or 1).
 *  Return 0, or -1 with the first error in err: "path:line:col: ..." for
 *  a complete line that is not JSON, "path:line: ..." for a record that
 *  is not an object, a line longer than JOURNAL_MAX_LINE, or a record the
 *  callback refused ("path:line: record refused"); "path: ..." when the
 *  file cannot be read. */
int journal_load (const char *path, journal_fn *callback, void *arg, unsigned *torn,
                  char *err, size_t errlen);

#endif
