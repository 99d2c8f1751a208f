/*  bag — the tasks of one `treefarm run`: the config's synthetic tasks and
 *  the command tasks of --tasks FILE or --command CMD --inputs GLOB
 *  (overlay/tasks.h), and on --resume what the journal says is done.
 *
 *  The commands are checked up front (a bad tasks file is a usage error
 *  naming its line and field), then written normalized to
 *  OUT/tasks.jsonl: one task a line, inputs by absolute path, ids as
 *  given (or {#} for --command). The root node reads that file, so it runs
 *  exactly what was checked; a resumed run reads it again, so --command's
 *  numbering cannot shift under it. The root appends every recorded task
 *  to OUT/journal.jsonl (docs/commands.md, "The journal"); --resume replays it
 *  into tasks.csv and ships "resume" to the root, which skips those tasks.
 */
#ifndef TF_BAG_H
#define TF_BAG_H

#include <jansson.h>
#include <stddef.h>

#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/tasks.h"

/*  A failing command is tried this many times more by default. */
#define BAG_DEFAULT_RETRIES 2

typedef struct {
    const char *tasks_file;  /* --tasks */
    const char *command;     /* --command */
    const char *inputs;      /* --inputs, a glob */
    double retries;          /* --retries, NAN for the default */
    int resume;              /* --resume */
    const char *out_dir;     /* --out (required with --resume) */
    int trace;               /* --trace: the run object asks for timelines */
} bag_opts_t;

typedef struct bag bag_t;

/*  Load and check the run's commands, before anything starts, and set
 *  cfg->commands. With --resume and no --tasks or --command, the commands
 *  are OUT/tasks.jsonl's. A config without synthetic tasks needs
 *  commands. Returns the bag, or NULL with a message naming the place. */
bag_t *bag_new (const bag_opts_t *opts, config_t *cfg, char *err, size_t errlen);

void bag_destroy (bag_t **self_p);

/*  In the run's directory: write OUT/tasks.jsonl (on --resume, check that
 *  it holds the same tasks), replay the journal into results (tasks.csv
 *  must be open), and return the run object for CONFIG (a new
 *  reference). NULL with a message on failure. */
json_t *bag_prepare (bag_t *self, const char *out_dir, const config_t *cfg,
                     results_t *results, char *err, size_t errlen);

/*  The commands (NULL when the run has none). Borrowed. */
const tasks_t *bag_tasks (const bag_t *self);

/*  Tasks a resumed run found done in the journal. */
uint64_t bag_resumed (const bag_t *self);

#endif
