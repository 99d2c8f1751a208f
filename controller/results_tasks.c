/*  results_tasks — tasks.csv, written as the root's records arrive, and
 *  what the records of command tasks add up to: failures, each node's
 *  measured time, the bound of the measured platform (results.h).
 */
#include "controller/results_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

/*  Remember the first write error; later rows are dropped. */
static int
tasks_failed (results_t *self)
{
    if (!self->tasks.error)
        self->tasks.error = errno ? errno : EIO;
    return -1;
}

int
results_open_tasks (results_t *self, const char *dir, char *err, size_t errlen)
{
    free (self->tasks.path);
    self->tasks.path = xasprintf ("%s/tasks.csv", dir);
    if (!self->tasks.bits)
        self->tasks.bits = xcalloc_resident (config_bag_size (self->cfg) / 8 + 1, 1);
    errno = 0;
    self->tasks.file = fopen (self->tasks.path, "we");
    if (!self->tasks.file || fputs (RESULTS_TASKS_HEADER "\n", self->tasks.file) == EOF)
        tasks_failed (self);
    return results_check_tasks (self, err, errlen);
}

/*  What a command's record says of how it ended. */
const char *
results_command_status (const json_t *info)
{
    if (json_object_get (info, "error"))
        return "error";
    if (json_is_true (json_object_get (info, "timed_out")))
        return "timeout";
    if (json_is_integer (json_object_get (info, "signal")))
        return "killed";
    json_t *exit_code = json_object_get (info, "exit");
    return json_is_integer (exit_code) && json_integer_value (exit_code) == 0 ? "ok"
                                                                              : "failed";
}

static double
info_number (const json_t *info, const char *key)
{
    json_t *v = json_object_get (info, key);
    return json_is_number (v) ? json_number_value (v) : 0;
}

/*  A command's tallies: failures, measured time, input size. */
static void
tally_command (results_t *self, uint64_t node, const json_t *info)
{
    double seconds = info_number (info, "seconds");
    if (json_is_true (json_object_get (info, "failed"))) {
        self->cmds.failed++;
        if (json_array_size (self->cmds.failures) < RESULTS_MAX_FAILURES)
            json_array_append (self->cmds.failures, (json_t *) info);
    }
    else {
        self->cmds.node_seconds[node] += seconds;
        self->cmds.node_commands[node]++;
    }
    self->cmds.count++;
    self->cmds.bytes += (uint64_t) info_number (info, "bytes_in");
}

/*  A command's row, after its task and node. */
static int
command_row (results_t *self, const json_t *info)
{
    int failed = json_is_true (json_object_get (info, "failed"));
    const char *status = results_command_status (info);
    json_t *exit_code = json_object_get (info, "exit");
    char exit_text[24] = "";
    if (json_is_integer (exit_code))
        snprintf (exit_text, sizeof exit_text, "%lld",
                  (long long) json_integer_value (exit_code));
    return fprintf (self->tasks.file, ",%s,%s,%s,%lld,%.0f,%.0f,%.3f\n",
                    json_string_value (json_object_get (info, "id")), failed ? "failed"
                    : status, exit_text, (long long) info_number (info, "attempts"),
                    info_number (info, "bytes_in"), info_number (info, "bytes_out"),
                    info_number (info, "seconds"));
}

int
results_record (results_t *self, uint64_t task, uint64_t node, const json_t *info,
                char *err, size_t errlen)
{
    const config_t *cfg = self->cfg;
    if (!self->tasks.bits)
        self->tasks.bits = xcalloc (config_bag_size (cfg) / 8 + 1, 1);
    uint8_t bit = (uint8_t) (1u << (task % 8));
    if (task >= config_bag_size (cfg) || node >= (uint64_t) cfg->nnodes
        || (task < cfg->commands.count
            && !json_is_string (json_object_get (info, "id")))) {
        self->tasks.refused++;
        return tf_error (err, errlen, "record of task %llu by node %llu is out of "
                         "range", (unsigned long long) task, (unsigned long long) node);
    }
    if (self->tasks.bits[task / 8] & bit) {
        self->tasks.refused++;
        return tf_error (err, errlen, "task %llu is already recorded",
                         (unsigned long long) task);
    }
    self->tasks.bits[task / 8] |= bit;
    self->tasks.recorded++;
    if (task < cfg->commands.count)
        tally_command (self, node, info);
    /*  Names and ids are [A-Za-z0-9_.-]: nothing to quote. */
    if (!self->tasks.file || self->tasks.error)
        return 0;
    int rc = fprintf (self->tasks.file, "%llu,%s", (unsigned long long) task,
                      cfg->nodes[node].name);
    if (rc >= 0)
        rc = task < cfg->commands.count ? command_row (self, info)
                                        : fprintf (self->tasks.file, ",,ok,,,,,\n");
    if (rc < 0)
        tasks_failed (self);
    return 0;
}

uint64_t
results_failed (const results_t *self)
{
    return self->cmds.failed;
}

/*  The config with each node's compute rate set to the commands it ran
 *  per second of their wall time (one unit a task); a node that ran none
 *  gets the mean over all. NULL if no command succeeded. */
static config_t *
measured_config (const results_t *self)
{
    double seconds = 0;
    uint64_t n = 0;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        seconds += self->cmds.node_seconds[i];
        n += self->cmds.node_commands[i];
    }
    char err[TF_ERRLEN], *text = config_to_json (self->cfg);
    config_t *c = n && text ? config_load_string (text, "<results>", err, sizeof err) : NULL;
    free (text);
    for (int i = 0; c && i < c->nnodes; i++) {
        if (config_node_is_relay (&c->nodes[i]))
            continue;   /* ran none: it stays a relay, C = 0 */
        double s = self->cmds.node_commands[i] ? self->cmds.node_seconds[i] : seconds / (double) n;
        uint64_t k = self->cmds.node_commands[i] ? self->cmds.node_commands[i] : 1;
        uint64_t slots = self->nodes[i].stats.slots ? self->nodes[i].stats.slots : 1;
        c->nodes[i].compute_rate = (double) (k * slots) / fmax (s, RESULTS_MIN_TASK_SECONDS);
    }
    return c;
}

void
results_measure_bound (results_t *self)
{
    const config_t *cfg = self->cfg;
    if (cfg->commands.count == 0 || cfg->tasks.count > 0)
        return;
    config_t *c = measured_config (self);
    bound_app_t app = {(double) self->cmds.bytes / (double) fmax (1, self->cmds.count)
                       / CONFIG_MB, 1, .loaded = 1};
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        bound_tree_t *tree = c ? bound_tree_new (c, m, &app, NULL, 0) : NULL;
        self->offline[m] = tree ? tree->bound : NAN;
        bound_tree_destroy (&tree);
    }
    self->cmds.measured_bound = 1;
    config_destroy (&c);
}

uint64_t
results_recorded (const results_t *self)
{
    return self->tasks.recorded;
}

int
results_check_tasks (const results_t *self, char *err, size_t errlen)
{
    if (!self->tasks.error)
        return 0;
    return tf_error (err, errlen, "cannot write %s: %s",
                     self->tasks.path ? self->tasks.path : "tasks.csv",
                     strerror (self->tasks.error));
}

int
results_flush_tasks (results_t *self, char *err, size_t errlen)
{
    errno = 0;
    if (self->tasks.file && !self->tasks.error && fflush (self->tasks.file) != 0)
        tasks_failed (self);
    return results_check_tasks (self, err, errlen);
}

int
results_close_tasks (results_t *self, char *err, size_t errlen)
{
    if (results_flush_tasks (self, err, errlen) != 0) {
        if (self->tasks.file)
            fclose (self->tasks.file);
        self->tasks.file = NULL;
        return -1;
    }
    errno = 0;
    if (self->tasks.file && fclose (self->tasks.file) != 0)
        tasks_failed (self);
    self->tasks.file = NULL;
    return results_check_tasks (self, err, errlen);
}
