/*  proto_run — CONFIG's run object: one struct, one encoder, one strict
 *  decoder.
 *
 *  The controller ships it with the experiment to every node; the root
 *  reads the paths (the commands' file, the run's directory and journal),
 *  every node the counts. On the wire:
 *
 *    {"commands": N, "attempts": A, "input_mb": Z, "out": "/abs",
 *     "journal": "/abs", "tasks": "/abs", "scratch": "/abs",
 *     "resume": bool, "trace": bool, "vacant": V}
 *
 *  commands, attempts and input_mb are required; the rest optional. The
 *  decoder refuses an unknown key (naming it), a mistyped value and any
 *  value past its limit below; a run with commands needs out and
 *  journal, a resumed run its journal.
 */
#ifndef TF_PROTO_RUN_H
#define TF_PROTO_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "overlay/config.h"

/*  Limits of the run object. */
#define PROTO_RUN_MAX_COMMANDS CONFIG_MAX_TASKS     /* commands */
#define PROTO_RUN_MAX_ATTEMPTS CONFIG_MAX_ATTEMPTS  /* attempts, from 1 */
/*  input_mb, the commands' mean input: no task carries more than a
 *  stream (CONFIG_MAX_STREAM_BYTES, 16 GiB). */
#define PROTO_RUN_MAX_INPUT_MB ((double) CONFIG_MAX_STREAM_BYTES / CONFIG_MB)
/*  A path (out, journal, tasks, scratch): absolute, 2 to this many
 *  bytes, no NUL (PATH_MAX less its terminating NUL). */
#define PROTO_RUN_MAX_PATH 4095

typedef struct {
    uint64_t commands;       /* command tasks in the bag, 0 ..
                                PROTO_RUN_MAX_COMMANDS */
    uint32_t attempts;       /* tries of a failing command, 1 ..
                                PROTO_RUN_MAX_ATTEMPTS */
    double input_mb;         /* their mean input, MB, 0 ..
                                PROTO_RUN_MAX_INPUT_MB */
    char *out;               /* the run's directory, or NULL */
    char *journal;           /* OUT/journal.jsonl, or NULL */
    char *tasks;             /* OUT/tasks.jsonl, or NULL (no commands) */
    char *scratch;           /* where nodes make their scratch directory,
                                or NULL ($TMPDIR) */
    int resume;              /* skip the tasks the journal holds */
    int trace;               /* record a timeline (docs/trace.md) */
    uint32_t vacant;         /* child slots every node keeps for nodes
                                that join the run, 0 .. CONFIG_MAX_JOINS
                                (docs/adapt.md, "Grow") */
} proto_run_t;

/*  The run object of run (strings borrowed), a new reference; NULL with
 *  a message in err when a field breaks the limits above (the decoder
 *  would refuse it). */
json_t *proto_run_encode (const proto_run_t *run, char *err, size_t errlen);

/*  Decode object, a CONFIG's run, into *out (its strings copies, the
 *  caller's: proto_run_clear). Returns 0, or -1 with a message
 *  "CONFIG: run: ..." naming the field, *out left clear. */
int proto_run_decode (const json_t *object, proto_run_t *out, char *err,
                      size_t errlen);

/*  Free the strings of a decoded run and clear it. Safe on a cleared
 *  run. */
void proto_run_clear (proto_run_t *run);

#endif
