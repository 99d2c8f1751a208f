/*  commands — command tasks in a simulation (docs/simulate.md, "Command
 *  tasks"): what each one moves and how long it computes, since nothing
 *  runs it.
 *
 *  A command's input is its input files' bytes (the loader's sizes; the
 *  bundle's few hundred bytes of framing left out), its result stream
 *  its outputs' bytes. Its duration, platform seconds:
 *  - measured (--measured DIR, a finished run of the same tasks): what
 *    its last attempt took there (DIR/tasks.csv's seconds, by id), on the
 *    node that ran it, scaled to another node by the config's compute
 *    rates (C there / C here); its outputs' bytes are the run's too;
 *  - stated (--task-seconds S): S on every node, outputs of
 *    --task-output-mb (default 0);
 *  with both, a command the run did not record takes the stated figures.
 *  Every command gets its figures or the simulation is refused.
 */
#ifndef TF_SIM_COMMANDS_H
#define TF_SIM_COMMANDS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "overlay/config.h"
#include "overlay/tasks.h"

/*  The most rows of a --measured tasks.csv read (the largest bag), and
 *  the longest line (a row's id is at most 128 bytes, its numbers far
 *  less than the rest). */
#define SIM_MAX_MEASURED_ROWS 100000000
#define SIM_MAX_MEASURED_LINE 1024

typedef struct sim_commands sim_commands_t;

/*  The figures of tasks' commands for cfg (both borrowed: they must
 *  outlive the result): measured from the run in measured_dir (NULL:
 *  none), else stated_s seconds (< 0: none) and stated_out_mb. Returns
 *  NULL with a message naming the place (a bad row of DIR/tasks.csv, a
 *  command with no figures). */
sim_commands_t *sim_commands_new (const config_t *cfg, const tasks_t *tasks,
                                  const char *measured_dir, double stated_s,
                                  double stated_out_mb, char *err, size_t errlen);

void sim_commands_destroy (sim_commands_t **self_p);

/*  Command task's input bytes (task < the count). */
uint64_t sim_commands_bytes_in (const sim_commands_t *self, uint64_t task);

/*  Its result stream's bytes, at least 1. */
uint64_t sim_commands_bytes_out (const sim_commands_t *self, uint64_t task);

/*  Platform seconds it takes on node. */
double sim_commands_seconds (const sim_commands_t *self, uint64_t task, int node);

/*  Its record for the results (results_record's info): id, ok, exit 0,
 *  attempts, bytes in and out, the seconds it took at node. New. */
json_t *sim_commands_info (const sim_commands_t *self, uint64_t task, int node,
                           uint32_t attempts);

#endif
