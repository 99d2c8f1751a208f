/*  bag — the tasks of one run. See bag.h. */
#include "controller/bag.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlay/journal.h"
#include "overlay/proto_run.h"
#include "overlay/util.h"

struct bag {
    tasks_t *tasks;          /* the commands, or NULL */
    int from_out;            /* loaded from OUT/tasks.jsonl (resume) */
    int resume;
    int trace;
    uint32_t attempts;
    uint64_t resumed;
    results_t *results;      /* while replaying */
    const config_t *cfg;
    char err[TF_ERRLEN + 32];   /* the first replay refusal */
};

/*  The commands the options name, or NULL (none, or an error in err). */
static tasks_t *
load_commands (const bag_opts_t *o, int *from_out, char *err, size_t errlen)
{
    *from_out = 0;
    if (o->tasks_file && o->command)
        return tf_error (err, errlen, "give --tasks or --command, not both"), NULL;
    if (!!o->command != !!o->inputs)
        return tf_error (err, errlen, "--command and --inputs go together"), NULL;
    if (o->tasks_file)
        return tasks_load_file (o->tasks_file, err, errlen);
    if (o->command) {
        const char *globs[] = {o->inputs};
        return tasks_from_command (o->command, globs, 1, err, errlen);
    }
    if (!o->resume)
        return NULL;
    char *path = xasprintf ("%s/tasks.jsonl", o->out_dir);
    tasks_t *t = NULL;
    if (access (path, F_OK) == 0) {
        t = tasks_load_file (path, err, errlen);
        *from_out = 1;
    }
    free (path);
    return t;
}

bag_t *
bag_new (const bag_opts_t *opts, config_t *cfg, char *err, size_t errlen)
{
    if (opts->resume && !opts->out_dir)
        return tf_error (err, errlen, "--resume needs --out DIR, the run to resume"), NULL;
    double retries = isnan (opts->retries) ? BAG_DEFAULT_RETRIES : opts->retries;
    if (retries != floor (retries) || retries < 0 || retries >= CONFIG_MAX_ATTEMPTS)
        return tf_error (err, errlen, "--retries must be an integer from 0 to %d",
                         CONFIG_MAX_ATTEMPTS - 1), NULL;
    err[0] = '\0';
    bag_t *self = xcalloc (1, sizeof *self);
    self->tasks = load_commands (opts, &self->from_out, err, errlen);
    self->resume = opts->resume;
    self->trace = opts->trace;
    self->attempts = (uint32_t) retries + 1;
    if (!self->tasks && err[0]) {
        bag_destroy (&self);
        return NULL;
    }
    if (!self->tasks && cfg->tasks.count == 0) {
        bag_destroy (&self);
        return tf_error (err, errlen, "%s has no \"tasks\" block: give --tasks FILE or "
                         "--command CMD --inputs GLOB", cfg->path), NULL;
    }
    size_t n = self->tasks ? tasks_count (self->tasks) : 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += tasks_input_bytes (self->tasks, i);
    cfg->commands.count = n;
    cfg->commands.attempts = self->attempts;
    cfg->commands.input_mb = n ? (double) bytes / n / CONFIG_MB : 0;
    return self;
}

const tasks_t *
bag_tasks (const bag_t *self)
{
    return self->tasks;
}

void
bag_destroy (bag_t **self_p)
{
    bag_t *self = *self_p;
    if (!self)
        return;
    tasks_destroy (&self->tasks);
    free (self);
    *self_p = NULL;
}

uint64_t
bag_resumed (const bag_t *self)
{
    return self->resumed;
}

/*  Command i as a line of OUT/tasks.jsonl. */
static json_t *
normalized (const tasks_t *tasks, size_t i)
{
    const tasks_task_t *t = tasks_get (tasks, i);
    json_t *o = json_pack ("{s:s}", "id", t->id);
    if (t->argv) {
        json_t *argv = json_array ();
        for (char *const *a = t->argv; *a; a++)
            json_array_append_new (argv, json_string (*a));
        json_object_set_new (o, "argv", argv);
    }
    else
        json_object_set_new (o, "sh", json_string (t->sh));
    json_t *inputs = json_array ();
    for (size_t k = 0; k < t->ninputs; k++)
        json_array_append_new (inputs, json_string (t->inputs[k].path));
    json_object_set_new (o, "inputs", inputs);
    if (t->outputs_given) {
        json_t *outputs = json_array ();
        for (size_t k = 0; k < t->noutputs; k++)
            json_array_append_new (outputs, json_string (t->outputs[k]));
        json_object_set_new (o, "outputs", outputs);
    }
    json_t *env = json_object ();
    for (size_t k = 0; k < t->nenv; k++) {
        const char *eq = strchr (t->env[k], '=');
        json_object_setn_new (env, t->env[k], (size_t) (eq - t->env[k]),
                              json_string (eq + 1));
    }
    json_object_set_new (o, "env", env);
    if (t->timeout_s > 0)
        json_object_set_new (o, "timeout_s", json_real (t->timeout_s));
    return o;
}

/*  The whole normalized file, as text (the caller's). */
static char *
normalized_text (const tasks_t *tasks)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    for (size_t i = 0; f && i < tasks_count (tasks); i++) {
        json_t *o = normalized (tasks, i);
        char *line = json_dumps (o, JSON_COMPACT);
        fprintf (f, "%s\n", line ? line : "{}");
        free (line);
        json_decref (o);
    }
    if (f)
        fclose (f);
    return text;
}

/*  Write OUT/tasks.jsonl, or on --resume check it holds the same tasks. */
static int
write_tasks (bag_t *self, const char *path, char *err, size_t errlen)
{
    char *text = normalized_text (self->tasks);
    char *old = NULL;
    size_t len = 0;
    FILE *f = self->resume ? fopen (path, "re") : NULL;
    if (f) {
        FILE *m = open_memstream (&old, &len);
        int c;
        while ((c = getc (f)) != EOF)
            putc (c, m);
        fclose (m);
        fclose (f);
    }
    int rc = 0;
    if (old && strcmp (old, text ? text : "") != 0)
        rc = tf_error (err, errlen, "the tasks differ from those of the run being "
                       "resumed (%s)", path);
    else if (!old) {
        f = fopen (path, "we");
        if (!f || fputs (text ? text : "", f) == EOF || fclose (f) != 0)
            rc = tf_error (err, errlen, "cannot write %s: %s", path, strerror (errno));
    }
    free (old);
    free (text);
    return rc;
}

/*  One journal record into tasks.csv: a command by id, a synthetic task
 *  by index. */
static int
replay_one (json_t *record, unsigned line, void *arg)
{
    bag_t *self = arg;
    const config_t *cfg = self->cfg;
    json_t *id = json_object_get (record, "id"), *task = json_object_get (record, "task");
    ssize_t at = -1;
    if (json_is_string (id) && self->tasks)
        at = tasks_find (self->tasks, json_string_value (id));
    else if (!id && json_is_integer (task) && json_integer_value (task) >= 0)
        at = (ssize_t) json_integer_value (task);
    int node = config_find_node (cfg, json_string_value (json_object_get (record, "node"))
                                          ?: "");
    char why[TF_ERRLEN];
    if (at < 0 || (json_is_string (id) && json_integer_value (task) != at) || node < 0
        || (at >= (ssize_t) cfg->commands.count && id))
        snprintf (why, sizeof why, "not a task of this run");
    else if (results_record (self->results, (uint64_t) at, (uint64_t) node, record, why,
                             sizeof why) == 0) {
        self->resumed++;
        return 0;
    }
    snprintf (self->err, sizeof self->err, "journal line %u: %s", line, why);
    return -1;
}

json_t *
bag_prepare (bag_t *self, const char *out_dir, const config_t *cfg, results_t *results,
             char *err, size_t errlen)
{
    char *out = realpath (out_dir, NULL);
    if (!out)
        return tf_error (err, errlen, "%s: %s", out_dir, strerror (errno)), NULL;
    char *tasks = xasprintf ("%s/tasks.jsonl", out);
    char *journal = xasprintf ("%s/journal.jsonl", out);
    json_t *run = NULL;
    unsigned torn = 0;
    self->results = results;
    self->cfg = cfg;
    if (self->tasks && !self->from_out && write_tasks (self, tasks, err, errlen) != 0)
        goto out;
    if (!self->resume)
        unlink (journal);   /* a fresh run in an old directory starts anew */
    if (self->resume && journal_load (journal, replay_one, self, &torn, err, errlen) != 0) {
        if (self->err[0])
            tf_error (err, errlen, "%s: %s", journal, self->err);
        goto out;
    }
    proto_run_t fields = {.commands = cfg->commands.count, .attempts = self->attempts,
                          .input_mb = cfg->commands.input_mb, .out = out,
                          .journal = journal, .tasks = self->tasks ? tasks : NULL,
                          .resume = self->resume, .trace = self->trace,
                          .vacant = cfg->platform.adapt ? (uint32_t) config_joins (cfg) : 0};
    run = proto_run_encode (&fields, err, errlen);
out:
    free (out);
    free (tasks);
    free (journal);
    return run;
}
