/*  rootbag — the root's side of command tasks. See rootbag.h. */
#include "node/rootbag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <czmq.h>

#include "node/bundle.h"
#include "node/taskkey.h"
#include "overlay/journal.h"
#include "overlay/tasks.h"
#include "overlay/util.h"

/*  The journal is written and fsync'd every ROOTBAG_JOURNAL_BATCH
 *  records or ROOTBAG_JOURNAL_DELAY seconds after the oldest unwritten
 *  one: at thousands of tasks a second one fsync per batch. The
 *  controller hears of a task only once its record is durable (node/act.c
 *  holds RECORDED until then), so the delay is also how late the user
 *  sees a completion at worst; a crash loses at most that much, none of
 *  it shown done (those tasks run again). */
#define ROOTBAG_JOURNAL_BATCH 256
#define ROOTBAG_JOURNAL_DELAY 0.25

/*  A result stream being unpacked into the task's directory, and what is
 *  known of the task's last attempt. */
typedef struct {
    bundle_sink_t *sink;
    json_t *info;
} delivery_t;

struct rootbag {
    tasks_t *tasks;          /* the run's commands, or NULL */
    uint64_t *sizes;         /* each command's input bundle bytes, as last
                                taken */
    char *out_tasks;         /* OUT/tasks */
    journal_t *journal;
    zhashx_t *srcs;          /* task -> bundle_src_t, from its hand-out
                                until sent (or run here) */
    zhashx_t *deliveries;    /* task -> delivery_t */
    zhashx_t *unreadable;    /* task -> why its input could not be read
                                when last handed out (a string) */
};

static void
src_free (void **item)
{
    bundle_src_destroy ((bundle_src_t **) item);
}

static void
delivery_free (void **item)
{
    delivery_t *d = *item;
    if (d) {
        bundle_sink_destroy (&d->sink);
        json_decref (d->info);
        free (d);
    }
    *item = NULL;
}

static void
text_free (void **item)
{
    free (*item);
    *item = NULL;
}

static zhashx_t *
table (zhashx_destructor_fn *destructor)
{
    zhashx_t *h = zhashx_new ();
    zhashx_set_destructor (h, destructor);
    return h;
}

rootbag_t *
rootbag_new (const char *tasks_path, const char *out_dir, const char *journal_path,
             int64_t *count, char *err, size_t errlen)
{
    rootbag_t *self = xcalloc (1, sizeof *self);
    self->srcs = table (src_free);
    self->deliveries = table (delivery_free);
    self->unreadable = table (text_free);
    *count = 0;
    if (tasks_path) {
        /*  Input bundles are sized when each task is handed out
         *  (rootbag_task_info), not here: sizing builds the bundle's
         *  header, and doing it for a whole bag up front held a bag of
         *  100,000 commands a second at the start. */
        self->tasks = tasks_load_file (tasks_path, err, errlen);
        if (!self->tasks) {
            rootbag_destroy (&self);
            return NULL;
        }
        *count = (int64_t) tasks_count (self->tasks);
        self->sizes = xcalloc ((size_t) *count + 1, sizeof *self->sizes);
    }
    self->out_tasks = xasprintf ("%s/tasks", out_dir);
    if (mkdir (self->out_tasks, 0755) != 0 && errno != EEXIST) {
        tf_error (err, errlen, "cannot create %s: %s", self->out_tasks, strerror (errno));
        rootbag_destroy (&self);
        return NULL;
    }
    self->journal = journal_open (journal_path, ROOTBAG_JOURNAL_BATCH,
                                  ROOTBAG_JOURNAL_DELAY, err, errlen);
    if (!self->journal)
        rootbag_destroy (&self);
    return self;
}

void
rootbag_destroy (rootbag_t **self_p)
{
    rootbag_t *self = *self_p;
    if (!self)
        return;
    char err[TF_ERRLEN];
    if (self->journal && journal_close (&self->journal, err, sizeof err) != 0)
        fprintf (stderr, "treefarm-node: journal: %s\n", err);
    zhashx_destroy (&self->srcs);
    zhashx_destroy (&self->deliveries);
    zhashx_destroy (&self->unreadable);
    tasks_destroy (&self->tasks);
    free (self->sizes);
    free (self->out_tasks);
    free (self);
    *self_p = NULL;
}

int64_t
rootbag_find (const rootbag_t *self, const char *id)
{
    return self->tasks ? (int64_t) tasks_find (self->tasks, id) : -1;
}

/*  Command i's input bundle, its spec as meta. */
static bundle_src_t *
make_src (rootbag_t *self, uint64_t i, char *err, size_t errlen)
{
    const tasks_task_t *t = tasks_get (self->tasks, i);
    const char **paths = xcalloc (t->ninputs + 1, sizeof *paths);
    const char **names = xcalloc (t->ninputs + 1, sizeof *names);
    for (size_t k = 0; k < t->ninputs; k++) {
        paths[k] = t->inputs[k].path;
        names[k] = t->inputs[k].name;
    }
    json_t *spec = tasks_spec_json (self->tasks, i);
    bundle_src_t *src = bundle_src_new (spec, paths, names, t->ninputs, err, errlen);
    json_decref (spec);
    free (paths);
    free (names);
    return src;
}

core_task_info_t
rootbag_task_info (rootbag_t *self, uint64_t task)
{
    /*  Taken anew at every hand-out: a file gone since the last one is
     *  found now, before a transfer or the root's own staging starts,
     *  and fails this attempt rather than the run. The bundle is kept
     *  for the task's first chunk (rootbag_input_read), or dropped when
     *  the root runs it itself (rootbag_job). */
    taskkey_t k = taskkey (task);
    char err[TF_ERRLEN];
    bundle_src_t *src = make_src (self, task, err, sizeof err);
    if (!src) {
        fprintf (stderr, "treefarm-node: task %" PRIu64 ": %s\n", task, err);
        zhashx_update (self->unreadable, k.text, xasprintf ("input: %s", err));
        zhashx_delete (self->srcs, k.text);
        self->sizes[task] = 0;   /* nothing of it goes anywhere */
        return (core_task_info_t){.bytes = 0, .units = 1, .unreadable = 1};
    }
    zhashx_delete (self->unreadable, k.text);
    self->sizes[task] = bundle_src_size (src);
    zhashx_update (self->srcs, k.text, src);
    return (core_task_info_t){.bytes = self->sizes[task], .units = 1};
}

int
rootbag_input_read (rootbag_t *self, uint64_t task, uint64_t offset, void *buf,
                    size_t len, char *err, size_t errlen)
{
    taskkey_t k = taskkey (task);
    bundle_src_t *src = zhashx_lookup (self->srcs, k.text);
    if (!src && (src = make_src (self, task, err, errlen)))
        zhashx_insert (self->srcs, k.text, src);
    return src ? bundle_src_read (src, offset, buf, len, err, errlen) : -1;
}

void
rootbag_input_release (rootbag_t *self, uint64_t task)
{
    taskkey_t k = taskkey (task);
    zhashx_delete (self->srcs, k.text);
}

/*  Where command i's outputs land, OUT/tasks/ID, created by its first
 *  file (a task that leaves nothing has none). What an earlier attempt,
 *  or a crashed run, left there is removed first: a directory only
 *  counts once its task is in the journal. */
static char *
task_dir (const rootbag_t *self, uint64_t i)
{
    return xasprintf ("%s/%s", self->out_tasks, tasks_get (self->tasks, i)->id);
}

void
rootbag_job (rootbag_t *self, uint64_t task, json_t *job)
{
    taskkey_t k = taskkey (task);
    zhashx_delete (self->srcs, k.text);   /* its files are staged from where they are */
    const tasks_task_t *t = tasks_get (self->tasks, task);
    json_t *inputs = json_array ();
    for (size_t i = 0; i < t->ninputs; i++)
        json_array_append_new (inputs, json_pack ("{s:s, s:s}", "path", t->inputs[i].path,
                                                  "name", t->inputs[i].name));
    json_object_set_new (job, "inputs", inputs);
    json_object_set_new (job, "spec", tasks_spec_json (self->tasks, task));
    char *dir = task_dir (self, task);
    tf_remove_tree (dir, 0);
    json_object_set_new (job, "deliver", json_string (dir));
    free (dir);
}

void
rootbag_computed (rootbag_t *self, uint64_t task, json_t **info_p)
{
    taskkey_t k = taskkey (task);
    delivery_t *d = xcalloc (1, sizeof *d);
    d->info = *info_p;
    *info_p = NULL;
    zhashx_update (self->deliveries, k.text, d);
}

int
rootbag_deliver (rootbag_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                 uint32_t count, const void *data, size_t len, char *err, size_t errlen)
{
    taskkey_t k = taskkey (task);
    delivery_t *d = zhashx_lookup (self->deliveries, k.text);
    if (index == 0) {
        d = xcalloc (1, sizeof *d);
        zhashx_update (self->deliveries, k.text, d);
        char *dir = task_dir (self, task);
        tf_remove_tree (dir, 0);
        d->sink = bundle_sink_new_lazy (dir, bytes, err, errlen);
        free (dir);
    }
    if (!d || !d->sink || bundle_sink_write (d->sink, data, len, err, errlen) != 0) {
        if (d && !d->info)
            d->info = json_pack ("{s:s}", "error", err);
        bundle_sink_destroy (d ? &d->sink : NULL);
        return -1;
    }
    if (index + 1 < count)
        return 0;
    int rc = bundle_sink_finish (d->sink, &d->info, err, errlen);
    if (rc != 0)
        d->info = json_pack ("{s:s}", "error", err);
    bundle_sink_destroy (&d->sink);
    return rc;
}

void
rootbag_discard (rootbag_t *self, uint64_t task)
{
    taskkey_t k = taskkey (task);
    if (!zhashx_lookup (self->deliveries, k.text))
        return;
    zhashx_delete (self->deliveries, k.text);
    char *dir = task_dir (self, task);
    tf_remove_tree (dir, 0);
    free (dir);
}

/*  The journal's record of a recorded task: what its last attempt said
 *  (the worker's or the result stream's info), or why its input could
 *  not be read. */
static json_t *
record_of (rootbag_t *self, const core_done_t *d, const char *node_name)
{
    json_t *rec = json_pack ("{s:I, s:s}", "task", (json_int_t) d->task, "node", node_name);
    if (!self->tasks || d->task >= tasks_count (self->tasks))
        return rec;
    taskkey_t k = taskkey (d->task);
    delivery_t *del = zhashx_lookup (self->deliveries, k.text);
    const char *unread = zhashx_lookup (self->unreadable, k.text);
    if (del && json_is_object (del->info))
        json_object_update_missing (rec, del->info);
    else if (unread)
        json_object_set_new (rec, "error", json_string (unread));
    int failed = d->failed || json_object_get (rec, "error") != NULL;
    json_object_set_new (rec, "id", json_string (tasks_get (self->tasks, d->task)->id));
    json_object_set_new (rec, "failed", json_boolean (failed));
    json_object_set_new (rec, "attempts", json_integer (d->attempts));
    json_object_set_new (rec, "bytes_in", json_integer ((json_int_t) self->sizes[d->task]));
    zhashx_delete (self->deliveries, k.text);
    zhashx_delete (self->unreadable, k.text);
    return rec;
}

json_t *
rootbag_recorded (rootbag_t *self, const core_done_t *d, const char *node_name, double now,
                  char *err, size_t errlen)
{
    json_t *rec = record_of (self, d, node_name);
    if (!self->tasks || d->task >= tasks_count (self->tasks))
        return rec;   /* synthetic: measurements, not work to keep */
    if (journal_append (self->journal, rec, now, err, errlen) != 0) {
        json_decref (rec);
        return NULL;
    }
    return rec;
}

void
rootbag_retried (rootbag_t *self, uint64_t task)
{
    taskkey_t k = taskkey (task);
    zhashx_delete (self->deliveries, k.text);
    char *dir = task_dir (self, task);
    tf_remove_tree (dir, 0);
    free (dir);
}

int
rootbag_journal_tick (rootbag_t *self, double now, int force, char *err, size_t errlen)
{
    return force ? journal_flush (self->journal, err, errlen)
                 : journal_tick (self->journal, now, err, errlen);
}

size_t
rootbag_journal_pending (const rootbag_t *self)
{
    return journal_pending (self->journal);
}

double
rootbag_next_deadline (const rootbag_t *self, double now)
{
    return journal_next_deadline (self->journal, now);
}
