/*  cargo — the files of command tasks on one node. See cargo.h. */
#include "node/cargo.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/bundle.h"
#include "overlay/journal.h"
#include "overlay/tasks.h"
#include "overlay/util.h"

/*  The journal is written and fsync'd every CARGO_JOURNAL_BATCH records
 *  or CARGO_JOURNAL_DELAY seconds after the oldest unwritten one: at
 *  thousands of tasks a second one fsync per batch, and a crash loses
 *  at most the last second of records (those tasks run again). */
#define CARGO_JOURNAL_BATCH 256
#define CARGO_JOURNAL_DELAY 1.0

/*  Spool files are recycled rather than deleted: creating and deleting
 *  files by the thousand is what costs most on a busy ext4 (its search
 *  for a new inode skips recently deleted ones: a quarter of a node's CPU
 *  at a few hundred tasks a second). Up to CARGO_POOL emptied files wait
 *  for reuse; more are deleted. */
#define CARGO_POOL 64
/*  A recycled spool file keeps its blocks, up to this size, and is
 *  overwritten from its start (a spool's length is kept beside it, what
 *  lies beyond is never read): rewriting allocated blocks costs less than
 *  truncating and allocating again. Larger ones are emptied, so the pool
 *  holds at most CARGO_POOL x 4 MiB of disk. */
#define CARGO_POOL_KEEP (4u << 20)

/*  One stream spooled to a file: appended in order, read by offset. */
typedef struct {
    char *path;
    int fd;
    uint64_t bytes, got;
} spool_t;

/*  Root: a result stream being unpacked into the task's
 *  directory, and what is known of the task's last attempt. */
typedef struct {
    bundle_sink_t *sink;
    json_t *info;
} delivery_t;

struct cargo {
    char *scratch;           /* our private directory */
    char *pool[CARGO_POOL];  /* emptied spool files, ready for reuse */
    uint32_t npool;
    uint64_t nspools;        /* spool files named so far */
    zhashx_t *jobs;          /* task -> its result spool's path, while the
                                worker computes it */
    int is_root;
    tasks_t *tasks;          /* root: the run's commands */
    uint64_t *sizes;         /* root: each command's input bundle bytes */
    char *out_tasks;         /* root: OUT/tasks */
    journal_t *journal;      /* root */
    zhashx_t *srcs;          /* root: task -> bundle_src_t, from its first
                                hand-out until sent (or run here) */
    zhashx_t *ins;           /* task -> spool_t, input bundles */
    zhashx_t *results;       /* task -> spool_t, result streams */
    zhashx_t *deliveries;    /* root: task -> delivery_t */
};

/*  Tasks are keyed by their decimal id. */
typedef struct {
    char text[24];
} taskkey_t;

static taskkey_t
key (uint64_t task)
{
    taskkey_t k;
    snprintf (k.text, sizeof k.text, "%" PRIu64, task);
    return k;
}

static void
spool_free (void **item)
{
    spool_t *s = *item;
    if (s) {
        if (s->fd >= 0)
            close (s->fd);
        unlink (s->path);
        free (s->path);
        free (s);
    }
    *item = NULL;
}

/*  A path for a new spool: a recycled file, or a new name. The caller's. */
static char *
spool_path (cargo_t *self)
{
    if (self->npool > 0)
        return self->pool[--self->npool];
    return xasprintf ("%s/spool/%" PRIu64, self->scratch, ++self->nspools);
}

/*  Done with path: empty it into the pool, or delete it. Takes path. */
static void
path_recycle (cargo_t *self, char *path, int fd)
{
    struct stat st;
    int keep = fd >= 0 && fstat (fd, &st) == 0
            && (st.st_size <= CARGO_POOL_KEEP || ftruncate (fd, 0) == 0);
    if (path && self->npool < CARGO_POOL && keep)
        self->pool[self->npool++] = path;
    else if (path) {
        unlink (path);
        free (path);
    }
    if (fd >= 0)
        close (fd);
}

/*  Remove task's spool from h, recycling its file. */
static void
spool_drop (cargo_t *self, zhashx_t *h, uint64_t task)
{
    taskkey_t k = key (task);
    spool_t *s = zhashx_lookup (h, k.text);
    if (!s)
        return;
    zhashx_delete (h, k.text);
    path_recycle (self, s->path, s->fd);
    free (s);
}

/*  Free every spool of h and h (cargo_destroy). */
static void
spools_destroy (zhashx_t **h_p)
{
    for (void *s = zhashx_first (*h_p); s; s = zhashx_next (*h_p))
        spool_free (&s);
    zhashx_destroy (h_p);
}

/*  Take the result spool path of task's job, NULL if none. */
static char *
job_path (cargo_t *self, uint64_t task)
{
    taskkey_t k = key (task);
    char *path = zhashx_lookup (self->jobs, k.text);
    zhashx_delete (self->jobs, k.text);
    return path;
}

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

static zhashx_t *
table (zhashx_destructor_fn *destructor)
{
    zhashx_t *h = zhashx_new ();
    zhashx_set_destructor (h, destructor);
    return h;
}

/*  Is pid gone: no such process, or a zombie nobody reaps? */
static int
pid_gone (long pid)
{
    if (kill ((pid_t) pid, 0) != 0)
        return errno == ESRCH;
    char path[64], text[512];
    snprintf (path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen (path, "re");
    size_t n = f ? fread (text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose (f);
    text[n] = '\0';
    const char *paren = strrchr (text, ')');
    return paren && (paren[1] == ' ') && (paren[2] == 'Z' || paren[2] == 'X');
}

/*  Remove the scratch directories under parent that nodes killed outright
 *  (SIGKILL: no cleanup) left: "treefarm-NAME-PID.XXXXXX", ours (same
 *  owner), whose PID no longer runs. */
static void
sweep_stale (const char *parent)
{
    char *pattern = xasprintf ("%s/treefarm-*-*.??????", parent);
    glob_t g;
    if (glob (pattern, GLOB_NOSORT | GLOB_ONLYDIR, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            const char *dot = strrchr (g.gl_pathv[i], '.');
            const char *dash = strrchr (g.gl_pathv[i], '-');
            struct stat st;
            long pid = dash && dot > dash ? strtol (dash + 1, NULL, 10) : 0;
            if (pid > 0 && stat (g.gl_pathv[i], &st) == 0 && st.st_uid == getuid ()
                && pid_gone (pid))
                tf_remove_tree (g.gl_pathv[i], 0);
        }
        globfree (&g);
    }
    free (pattern);
}

cargo_t *
cargo_new (const char *scratch_parent, const char *name, char *err, size_t errlen)
{
    const char *parent = scratch_parent ? scratch_parent : getenv ("TMPDIR");
    parent = parent && *parent ? parent : "/tmp";
    sweep_stale (parent);
    char *dir = xasprintf ("%s/treefarm-%s-%d.XXXXXX", parent, name, (int) getpid ());
    if (!mkdtemp (dir)) {
        tf_error (err, errlen, "cannot create a scratch directory %s: %s", dir,
                  strerror (errno));
        free (dir);
        return NULL;
    }
    cargo_t *self = xcalloc (1, sizeof *self);
    self->scratch = dir;
    const char *subs[] = {"spool", "work"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char *sub = xasprintf ("%s/%s", dir, subs[i]);
        mkdir (sub, 0700);
        free (sub);
    }
    self->srcs = table (src_free);
    self->ins = table (NULL);       /* spools are freed by hand: recycled */
    self->results = table (NULL);
    self->deliveries = table (delivery_free);
    self->jobs = zhashx_new ();
    return self;
}

void
cargo_destroy (cargo_t **self_p)
{
    cargo_t *self = *self_p;
    if (!self)
        return;
    char err[TF_ERRLEN];
    if (self->journal && journal_close (&self->journal, err, sizeof err) != 0)
        fprintf (stderr, "treefarm-node: journal: %s\n", err);
    zhashx_destroy (&self->srcs);
    spools_destroy (&self->ins);
    spools_destroy (&self->results);
    for (char *p = zhashx_first (self->jobs); p; p = zhashx_next (self->jobs))
        free (p);
    zhashx_destroy (&self->deliveries);
    zhashx_destroy (&self->jobs);
    while (self->npool > 0)
        free (self->pool[--self->npool]);
    tf_remove_tree (self->scratch, 0);
    tasks_destroy (&self->tasks);
    free (self->sizes);
    free (self->out_tasks);
    free (self->scratch);
    free (self);
    *self_p = NULL;
}

/*  Root: command i's input bundle, its spec as meta. */
static bundle_src_t *
make_src (cargo_t *self, uint64_t i, char *err, size_t errlen)
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

/*  Root: load the commands. Their input bundles are sized when each is
 *  first handed out (cargo_task_info), not here: sizing builds the
 *  bundle's header, and doing it for a whole bag up front held a bag of
 *  100,000 commands a second at the start. */
static int64_t
load_tasks (cargo_t *self, const char *tasks_path, char *err, size_t errlen)
{
    self->tasks = tasks_load_file (tasks_path, err, errlen);
    if (!self->tasks)
        return -1;
    size_t n = tasks_count (self->tasks);
    self->sizes = xcalloc (n + 1, sizeof *self->sizes);   /* 0: not sized yet */
    return (int64_t) n;
}

int64_t
cargo_root (cargo_t *self, const char *tasks_path, const char *out_dir,
            const char *journal_path, char *err, size_t errlen)
{
    self->is_root = 1;
    int64_t n = tasks_path ? load_tasks (self, tasks_path, err, errlen) : 0;
    if (n < 0)
        return -1;
    self->out_tasks = xasprintf ("%s/tasks", out_dir);
    if (mkdir (self->out_tasks, 0755) != 0 && errno != EEXIST)
        return tf_error (err, errlen, "cannot create %s: %s", self->out_tasks,
                         strerror (errno));
    self->journal = journal_open (journal_path, CARGO_JOURNAL_BATCH, CARGO_JOURNAL_DELAY,
                                  err, errlen);
    return self->journal ? n : -1;
}

int64_t
cargo_find (const cargo_t *self, const char *id)
{
    return self->tasks ? (int64_t) tasks_find (self->tasks, id) : -1;
}

const char *
cargo_scratch (const cargo_t *self)
{
    return self->scratch;
}

core_task_info_t
cargo_task_info (void *arg, uint64_t task)
{
    cargo_t *self = arg;
    if (self->sizes[task] == 0) {   /* a bundle is never empty: its prefix */
        /*  Kept for the task's first chunk (cargo_input_chunk), or
         *  dropped when the root runs it itself (cargo_job). */
        char err[TF_ERRLEN];
        taskkey_t k = key (task);
        bundle_src_t *src = zhashx_lookup (self->srcs, k.text);
        if (!src && (src = make_src (self, task, err, sizeof err)))
            zhashx_insert (self->srcs, k.text, src);
        if (src)
            self->sizes[task] = bundle_src_size (src);
        else   /* an input gone since the controller checked it: the
                  transfer, or the root's own staging, fails and says so */
            fprintf (stderr, "treefarm-node: task %" PRIu64 ": %s\n", task, err);
    }
    return (core_task_info_t){.bytes = self->sizes[task], .units = 1};
}

/*  A new frame of len bytes read by fill. */
static zframe_t *
frame_of (size_t len)
{
    return zframe_new (NULL, len);
}

zframe_t *
cargo_input_chunk (cargo_t *self, uint64_t task, uint64_t offset, size_t len, char *err,
                   size_t errlen)
{
    taskkey_t k = key (task);
    zframe_t *f = frame_of (len);
    int rc;
    if (self->is_root) {
        bundle_src_t *src = zhashx_lookup (self->srcs, k.text);
        if (!src && (src = make_src (self, task, err, errlen)))
            zhashx_insert (self->srcs, k.text, src);
        rc = src ? bundle_src_read (src, offset, zframe_data (f), len, err, errlen) : -1;
    }
    else {
        spool_t *s = zhashx_lookup (self->ins, k.text);
        rc = s ? bundle_file_read (s->fd, offset, zframe_data (f), len, err, errlen)
               : tf_error (err, errlen, "no input spooled for task %" PRIu64, task);
    }
    if (rc != 0)
        zframe_destroy (&f);
    return f;
}

/*  Append a chunk to the spool of task in h, under SCRATCH/dir; chunk 0
 *  (re)creates it. */
static int
spool_append (cargo_t *self, zhashx_t *h, uint64_t task, uint64_t bytes, uint32_t index,
              const void *data, size_t len, char *err, size_t errlen)
{
    taskkey_t k = key (task);
    spool_t *s = zhashx_lookup (h, k.text);
    if (index == 0) {
        spool_drop (self, h, task);
        s = xcalloc (1, sizeof *s);
        s->path = spool_path (self);
        s->bytes = bytes;
        s->fd = open (s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);   /* overwritten */
        zhashx_insert (h, k.text, s);
        if (s->fd < 0)
            return tf_error (err, errlen, "cannot create %s: %s", s->path,
                             strerror (errno));
    }
    if (!s || s->fd < 0 || s->got + len > s->bytes)
        return tf_error (err, errlen, "no spool open for task %" PRIu64, task);
    /*  Opened at chunk 0 and only ever appended to here: the file's
     *  offset is s->got (reads use pread, which does not move it). */
    if (tf_write_all (s->fd, data, len) != 0)
        return tf_error (err, errlen, "cannot write %s: %s", s->path, strerror (errno));
    s->got += len;
    return 0;
}

int
cargo_input_store (cargo_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                   const void *data, size_t len, char *err, size_t errlen)
{
    return spool_append (self, self->ins, task, bytes, index, data, len, err, errlen);
}

void
cargo_input_release (cargo_t *self, uint64_t task)
{
    taskkey_t k = key (task);
    zhashx_delete (self->srcs, k.text);
    spool_drop (self, self->ins, task);
}

/*  Root: where command i's outputs land, OUT/tasks/ID, created by its
 *  first file (a task that leaves nothing has none). What an earlier
 *  attempt, or a crashed run, left there is removed first: a directory
 *  only counts once its task is in the journal. */
static char *
task_dir (const cargo_t *self, uint64_t i)
{
    return xasprintf ("%s/%s", self->out_tasks, tasks_get (self->tasks, i)->id);
}

/*  Root: the job's inputs are the user's files, its spec the task's. */
static void
root_job (cargo_t *self, uint64_t task, json_t *job)
{
    const tasks_task_t *t = tasks_get (self->tasks, task);
    json_t *inputs = json_array ();
    for (size_t k = 0; k < t->ninputs; k++)
        json_array_append_new (inputs, json_pack ("{s:s, s:s}", "path", t->inputs[k].path,
                                                  "name", t->inputs[k].name));
    json_object_set_new (job, "inputs", inputs);
    json_object_set_new (job, "spec", tasks_spec_json (self->tasks, task));
    char *dir = task_dir (self, task);
    tf_remove_tree (dir, 0);
    json_object_set_new (job, "deliver", json_string (dir));
    free (dir);
}

json_t *
cargo_job (cargo_t *self, uint64_t task, uint32_t node, char *err, size_t errlen)
{
    taskkey_t k = key (task);
    char *result = spool_path (self);
    json_t *job = json_pack ("{s:I, s:I, s:s}", "task", (json_int_t) task, "node",
                             (json_int_t) node, "result", result);
    zhashx_update (self->jobs, k.text, result);
    if (self->is_root) {
        zhashx_delete (self->srcs, k.text);   /* its files are staged from where they are */
        root_job (self, task, job);
        return job;
    }
    spool_t *s = zhashx_lookup (self->ins, k.text);
    if (!s || s->got != s->bytes) {
        json_decref (job);
        return tf_error (err, errlen, "task %" PRIu64 " has no complete input", task),
               NULL;
    }
    json_object_set_new (job, "spool", json_string (s->path));
    json_object_set_new (job, "spool_bytes", json_integer ((json_int_t) s->bytes));
    return job;
}

void
cargo_computed (cargo_t *self, uint64_t task, uint64_t bytes, json_t **info_p)
{
    taskkey_t k = key (task);
    if (self->is_root) {
        path_recycle (self, job_path (self, task), -1);   /* delivered, not spooled */
        delivery_t *d = xcalloc (1, sizeof *d);
        d->info = *info_p;
        *info_p = NULL;
        zhashx_update (self->deliveries, k.text, d);
        return;
    }
    json_decref (*info_p);
    *info_p = NULL;
    spool_t *s = xcalloc (1, sizeof *s);
    s->path = job_path (self, task);
    if (!s->path)
        s->path = xasprintf ("%s/spool/none", self->scratch);
    s->fd = open (s->path, O_RDWR | O_CLOEXEC);
    s->bytes = s->got = bytes;
    zhashx_update (self->results, k.text, s);
}

/*  Root: a chunk of a child's result stream into the task's
 *  directory. */
static int
deliver (cargo_t *self, uint64_t task, uint64_t bytes, uint32_t index, uint32_t count,
         const void *data, size_t len, char *err, size_t errlen)
{
    taskkey_t k = key (task);
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

int
cargo_result_store (cargo_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                    uint32_t count, const void *data, size_t len, char *err, size_t errlen)
{
    if (self->is_root)
        return deliver (self, task, bytes, index, count, data, len, err, errlen);
    return spool_append (self, self->results, task, bytes, index, data, len, err, errlen);
}

zframe_t *
cargo_result_chunk (cargo_t *self, uint64_t task, uint64_t offset, size_t len, char *err,
                    size_t errlen)
{
    taskkey_t k = key (task);
    spool_t *s = zhashx_lookup (self->results, k.text);
    if (!s || s->fd < 0)
        return tf_error (err, errlen, "no result spooled for task %" PRIu64, task), NULL;
    zframe_t *f = frame_of (len);
    if (bundle_file_read (s->fd, offset, zframe_data (f), len, err, errlen) != 0)
        zframe_destroy (&f);
    return f;
}

void
cargo_result_release (cargo_t *self, uint64_t task)
{
    spool_drop (self, self->results, task);
}

void
cargo_result_discard (cargo_t *self, uint64_t task)
{
    if (!self->is_root) {
        spool_drop (self, self->results, task);
        return;
    }
    taskkey_t k = key (task);
    if (!zhashx_lookup (self->deliveries, k.text))
        return;
    zhashx_delete (self->deliveries, k.text);
    char *dir = task_dir (self, task);
    tf_remove_tree (dir, 0);
    free (dir);
}

/*  The journal's record of a recorded task. */
static json_t *
record_of (cargo_t *self, const core_done_t *d, const char *node_name)
{
    json_t *rec = json_pack ("{s:I, s:s}", "task", (json_int_t) d->task, "node", node_name);
    if (!self->tasks || d->task >= tasks_count (self->tasks))
        return rec;
    taskkey_t k = key (d->task);
    delivery_t *del = zhashx_lookup (self->deliveries, k.text);
    if (del && json_is_object (del->info))
        json_object_update_missing (rec, del->info);
    int failed = d->failed || json_object_get (rec, "error") != NULL;
    json_object_set_new (rec, "id", json_string (tasks_get (self->tasks, d->task)->id));
    json_object_set_new (rec, "failed", json_boolean (failed));
    json_object_set_new (rec, "attempts", json_integer (d->attempts));
    json_object_set_new (rec, "bytes_in", json_integer ((json_int_t) self->sizes[d->task]));
    zhashx_delete (self->deliveries, k.text);
    return rec;
}

json_t *
cargo_recorded (cargo_t *self, const core_done_t *d, const char *node_name, double now,
                char *err, size_t errlen)
{
    json_t *rec = record_of (self, d, node_name);
    if (!self->tasks || d->task >= tasks_count (self->tasks))
        return rec;   /* synthetic: measurements, not work to keep */
    if (self->journal && journal_append (self->journal, rec, now, err, errlen) != 0) {
        json_decref (rec);
        return NULL;
    }
    return rec;
}

void
cargo_retried (cargo_t *self, uint64_t task)
{
    taskkey_t k = key (task);
    zhashx_delete (self->deliveries, k.text);
    char *dir = task_dir (self, task);
    tf_remove_tree (dir, 0);
    free (dir);
}

int
cargo_journal_tick (cargo_t *self, double now, int force, char *err, size_t errlen)
{
    if (!self->journal)
        return 0;
    return force ? journal_flush (self->journal, err, errlen)
                 : journal_tick (self->journal, now, err, errlen);
}

double
cargo_next_deadline (const cargo_t *self, double now)
{
    return self->journal ? journal_next_deadline (self->journal, now) : -1;
}
