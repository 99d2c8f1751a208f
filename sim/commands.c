/*  commands — see commands.h. */
#include "sim/commands.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

struct sim_commands {
    const config_t *cfg;
    const tasks_t *tasks;
    size_t n;
    double *seconds;         /* platform seconds, on ran_on's node */
    int *ran_on;             /* config index; -1: every node alike */
    uint64_t *bytes_out;
};

/*  One row of a tasks.csv (controller/results.h RESULTS_TASKS_HEADER):
 *  task,node,id,status,exit,attempts,bytes_in,bytes_out,seconds. Fills
 *  the command's figures when its id is one of ours and it ran ok.
 *  Returns 0, or -1 with a message for a row that is not a tasks.csv's. */
static int
take_row (sim_commands_t *self, char *line, const char *where, char *err, size_t errlen)
{
    char *f[9];
    int k = 0;
    for (char *p = line; k < 9; k++) {
        f[k] = p;
        p = strchr (p, ',');
        if (!p)
            break;
        *p++ = '\0';
    }
    if (k != 8)
        return tf_error (err, errlen, "%s: not a row of tasks.csv (9 columns)", where);
    f[8][strcspn (f[8], "\r\n")] = '\0';
    if (!*f[2] || strcmp (f[3], "ok") != 0)
        return 0;           /* a synthetic task, or a command that failed */
    ssize_t i = tasks_find (self->tasks, f[2]);
    int node = config_find_node (self->cfg, f[1]);
    char *end;
    double s = strtod (f[8], &end);
    unsigned long long out = strtoull (f[7], NULL, 10);
    if (i < 0)
        return 0;           /* not in this bag */
    if (node < 0 || *end || !isfinite (s) || s < 0)
        return tf_error (err, errlen, "%s: command \"%s\": node \"%s\" not in the config "
                         "or seconds \"%s\" not a number >= 0", where, f[2], f[1], f[8]);
    self->seconds[i] = s;
    self->ran_on[i] = node;
    self->bytes_out[i] = out;
    return 0;
}

/*  The figures of the run in dir: its tasks.csv, row by row. */
static int
read_measured (sim_commands_t *self, const char *dir, char *err, size_t errlen)
{
    char *path = xasprintf ("%s/tasks.csv", dir);
    FILE *in = fopen (path, "r");
    int rc = 0;
    if (!in)
        rc = tf_error (err, errlen, "--measured: cannot read %s: %s", path, strerror (errno));
    char line[SIM_MAX_MEASURED_LINE + 2];
    for (long row = 1; rc == 0 && fgets (line, sizeof line, in); row++) {
        char where[TF_ERRLEN];
        snprintf (where, sizeof where, "%s:%ld", path, row);
        if (row > SIM_MAX_MEASURED_ROWS)
            rc = tf_error (err, errlen, "%s: more than %d rows", path, SIM_MAX_MEASURED_ROWS);
        else if (strlen (line) > SIM_MAX_MEASURED_LINE)
            rc = tf_error (err, errlen, "%s: a line longer than %d bytes", where,
                           SIM_MAX_MEASURED_LINE);
        else if (row > 1)
            rc = take_row (self, line, where, err, errlen);
    }
    if (in)
        fclose (in);
    free (path);
    return rc;
}

sim_commands_t *
sim_commands_new (const config_t *cfg, const tasks_t *tasks, const char *measured_dir,
                  double stated_s, double stated_out_mb, char *err, size_t errlen)
{
    sim_commands_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->tasks = tasks;
    self->n = tasks ? tasks_count (tasks) : 0;
    self->seconds = xcalloc (self->n + 1, sizeof *self->seconds);
    self->ran_on = xcalloc (self->n + 1, sizeof *self->ran_on);
    self->bytes_out = xcalloc (self->n + 1, sizeof *self->bytes_out);
    for (size_t i = 0; i < self->n; i++) {
        self->seconds[i] = NAN;
        self->ran_on[i] = -1;
    }
    if (measured_dir && read_measured (self, measured_dir, err, errlen) != 0) {
        sim_commands_destroy (&self);
        return NULL;
    }
    for (size_t i = 0; i < self->n; i++) {
        if (!isnan (self->seconds[i]))
            continue;
        if (stated_s < 0) {
            tf_error (err, errlen, "command \"%s\" has no duration: give --task-seconds S%s",
                      tasks_get (tasks, i)->id,
                      measured_dir ? " (the --measured run did not record it ok)"
                                   : " or --measured DIR");
            sim_commands_destroy (&self);
            return NULL;
        }
        self->seconds[i] = stated_s;
        self->bytes_out[i] = (uint64_t) llround (stated_out_mb * CONFIG_MB);
    }
    return self;
}

void
sim_commands_destroy (sim_commands_t **self_p)
{
    sim_commands_t *self = *self_p;
    if (!self)
        return;
    free (self->seconds);
    free (self->ran_on);
    free (self->bytes_out);
    free (self);
    *self_p = NULL;
}

uint64_t
sim_commands_bytes_in (const sim_commands_t *self, uint64_t task)
{
    return task < self->n ? tasks_input_bytes (self->tasks, task) : 0;
}

uint64_t
sim_commands_bytes_out (const sim_commands_t *self, uint64_t task)
{
    return task < self->n && self->bytes_out[task] > 0 ? self->bytes_out[task] : 1;
}

double
sim_commands_seconds (const sim_commands_t *self, uint64_t task, int node)
{
    if (task >= self->n)
        return 0;
    int ran = self->ran_on[task];
    if (ran < 0)
        return self->seconds[task];
    return self->seconds[task] * self->cfg->nodes[ran].compute_rate
         / self->cfg->nodes[node].compute_rate;
}

json_t *
sim_commands_info (const sim_commands_t *self, uint64_t task, int node, uint32_t attempts)
{
    return json_pack ("{s:s, s:b, s:i, s:i, s:I, s:I, s:f}", "id",
                      tasks_get (self->tasks, task)->id, "failed", 0, "exit", 0,
                      "attempts", (int) (attempts ? attempts : 1),
                      "bytes_in", (json_int_t) sim_commands_bytes_in (self, task),
                      "bytes_out", (json_int_t) sim_commands_bytes_out (self, task),
                      "seconds", sim_commands_seconds (self, task, node));
}
