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
#include "node/rootbag.h"
#include "node/taskkey.h"
#include "overlay/util.h"

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

struct cargo {
    char *scratch;           /* our private directory */
    char *pool[CARGO_POOL];  /* emptied spool files, ready for reuse */
    uint32_t npool;
    uint64_t nspools;        /* spool files named so far */
    zhashx_t *jobs;          /* task -> its result spool's path, while the
                                worker computes it */
    rootbag_t *bag;          /* root: the run's commands (node/rootbag.h) */
    zhashx_t *ins;           /* task -> spool_t, input bundles */
    zhashx_t *results;       /* task -> spool_t, result streams */
};


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
    taskkey_t k = taskkey (task);
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
    taskkey_t k = taskkey (task);
    char *path = zhashx_lookup (self->jobs, k.text);
    zhashx_delete (self->jobs, k.text);
    return path;
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
    self->ins = zhashx_new ();       /* spools are freed by hand: recycled */
    self->results = zhashx_new ();
    self->jobs = zhashx_new ();
    return self;
}

void
cargo_destroy (cargo_t **self_p)
{
    cargo_t *self = *self_p;
    if (!self)
        return;
    rootbag_destroy (&self->bag);
    spools_destroy (&self->ins);
    spools_destroy (&self->results);
    for (char *p = zhashx_first (self->jobs); p; p = zhashx_next (self->jobs))
        free (p);
    zhashx_destroy (&self->jobs);
    while (self->npool > 0)
        free (self->pool[--self->npool]);
    tf_remove_tree (self->scratch, 0);
    free (self->scratch);
    free (self);
    *self_p = NULL;
}

int64_t
cargo_root (cargo_t *self, const char *tasks_path, const char *out_dir,
            const char *journal_path, char *err, size_t errlen)
{
    int64_t n;
    self->bag = rootbag_new (tasks_path, out_dir, journal_path, &n, err, errlen);
    return self->bag ? n : -1;
}

int64_t
cargo_find (const cargo_t *self, const char *id)
{
    return self->bag ? rootbag_find (self->bag, id) : -1;
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
    return rootbag_task_info (self->bag, task);
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
    taskkey_t k = taskkey (task);
    zframe_t *f = frame_of (len);
    int rc;
    if (self->bag)
        rc = rootbag_input_read (self->bag, task, offset, zframe_data (f), len, err, errlen);
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
    taskkey_t k = taskkey (task);
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
    if (self->bag)
        rootbag_input_release (self->bag, task);
    spool_drop (self, self->ins, task);
}

json_t *
cargo_job (cargo_t *self, uint64_t task, uint32_t node, char *err, size_t errlen)
{
    taskkey_t k = taskkey (task);
    char *result = spool_path (self);
    json_t *job = json_pack ("{s:I, s:I, s:s}", "task", (json_int_t) task, "node",
                             (json_int_t) node, "result", result);
    zhashx_update (self->jobs, k.text, result);
    if (self->bag) {
        rootbag_job (self->bag, task, job);
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
    if (self->bag) {
        path_recycle (self, job_path (self, task), -1);   /* delivered, not spooled */
        rootbag_computed (self->bag, task, info_p);
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
    taskkey_t k = taskkey (task);
    zhashx_update (self->results, k.text, s);
}

int
cargo_result_store (cargo_t *self, uint64_t task, uint64_t bytes, uint32_t index,
                    uint32_t count, const void *data, size_t len, char *err, size_t errlen)
{
    if (self->bag)
        return rootbag_deliver (self->bag, task, bytes, index, count, data, len, err,
                                errlen);
    return spool_append (self, self->results, task, bytes, index, data, len, err, errlen);
}

zframe_t *
cargo_result_chunk (cargo_t *self, uint64_t task, uint64_t offset, size_t len, char *err,
                    size_t errlen)
{
    taskkey_t k = taskkey (task);
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
    if (self->bag)
        rootbag_discard (self->bag, task);
    else
        spool_drop (self, self->results, task);
}

json_t *
cargo_recorded (cargo_t *self, const core_done_t *d, const char *node_name, double now,
                char *err, size_t errlen)
{
    return rootbag_recorded (self->bag, d, node_name, now, err, errlen);
}

void
cargo_retried (cargo_t *self, uint64_t task)
{
    rootbag_retried (self->bag, task);
}

int
cargo_journal_tick (cargo_t *self, double now, int force, char *err, size_t errlen)
{
    return self->bag ? rootbag_journal_tick (self->bag, now, force, err, errlen) : 0;
}

size_t
cargo_journal_pending (const cargo_t *self)
{
    return self->bag ? rootbag_journal_pending (self->bag) : 0;
}

double
cargo_next_deadline (const cargo_t *self, double now)
{
    return self->bag ? rootbag_next_deadline (self->bag, now) : -1;
}
