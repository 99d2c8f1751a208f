/*  cmdrun — the worker thread of command tasks. See cmdrun.h. */
#include "node/cmdrun.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/bundle.h"
#include "node/runner.h"
#include "node/waitset.h"
#include "overlay/util.h"

/*  Bytes moved per read when staging and packing: large enough that a
 *  2 GiB input costs a few thousand system calls, small enough to keep a
 *  node's memory flat. */
#define CMDRUN_BLOCK (1u << 20)

struct cmdrun {
    zactor_t *actor;
    char *work;              /* the jobs' work directory */
    int cancel[2];           /* a byte in cancel[1] stops a running command */
    int jobs;                /* handed over, outcome not yet received */
};

/*  What one job learned, for its result stream's meta. */
typedef struct {
    json_t *job;             /* the job (owned) */
    json_t *spec;            /* the task's spec (from the bundle or the job) */
    const char *work;
    char *out_path, *err_path;
    runner_result_t run;
    runner_proc_t *proc;     /* the command, started and not yet finished */
    double started;          /* tf_now () when it started */
    char error[TF_ERRLEN];   /* staging or collecting went wrong */
    int nstreams;            /* stdout and stderr in the result: those not
                                empty */
} job_t;

static const char *
job_str (const json_t *job, const char *key)
{
    return json_string_value (json_object_get (job, key));
}

/*  Unpack the spooled input bundle (its first spool_bytes: a recycled
 *  spool file may hold stale bytes beyond) into the work directory; its
 *  meta is the task's spec. */
static int
stage_spool (job_t *j, char *buf, char *err, size_t errlen)
{
    const char *path = job_str (j->job, "spool");
    uint64_t size = (uint64_t) json_integer_value (json_object_get (j->job, "spool_bytes"));
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tf_error (err, errlen, "cannot open %s: %s", path, strerror (errno));
    bundle_sink_t *sink = bundle_sink_new (j->work, size, err, errlen);
    int rc = sink ? 0 : -1;
    for (uint64_t at = 0; rc == 0 && at < size;) {
        size_t n = size - at < CMDRUN_BLOCK ? (size_t) (size - at) : CMDRUN_BLOCK;
        rc = bundle_file_read (fd, at, buf, n, err, errlen);
        if (rc == 0)
            rc = bundle_sink_write (sink, buf, n, err, errlen);
        at += n;
    }
    if (rc == 0)
        rc = bundle_sink_finish (sink, &j->spec, err, errlen);
    bundle_sink_destroy (&sink);
    close (fd);
    return rc;
}

/*  Root: copy the user's files into the work directory. */
static int
stage_inputs (job_t *j, char *buf, char *err, size_t errlen)
{
    size_t i;
    json_t *in;
    j->spec = json_incref (json_object_get (j->job, "spec"));
    json_array_foreach (json_object_get (j->job, "inputs"), i, in) {
        const char *from = job_str (in, "path");
        char *to = xasprintf ("%s/%s", j->work, job_str (in, "name"));
        int src = open (from, O_RDONLY | O_CLOEXEC);
        int dst = open (to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        int rc = src >= 0 && dst >= 0 ? 0 : -1;
        ssize_t n = 0;
        /*  In the kernel when it can (no copy through us), else by hand. */
        while (rc == 0 && (n = copy_file_range (src, NULL, dst, NULL, CMDRUN_BLOCK, 0)) > 0)
            ;
        if (rc == 0 && n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS))
            while (rc == 0 && (n = read (src, buf, CMDRUN_BLOCK)) > 0)
                rc = tf_write_all (dst, buf, (size_t) n);
        if (rc != 0 || n < 0)
            tf_error (err, errlen, "cannot stage %s: %s", from, strerror (errno));
        if (src >= 0)
            close (src);
        if (dst >= 0)
            close (dst);
        free (to);
        if (rc != 0 || n < 0)
            return -1;
    }
    return 0;
}

/*  A NULL-terminated array of strings from a JSON array (or object, as
 *  KEY=VALUE); the caller frees the array and each string. */
static char **
strings_of (const json_t *value)
{
    size_t n = json_is_array (value) ? json_array_size (value)
             : json_is_object (value) ? json_object_size (value) : 0;
    char **out = xcalloc (n + 1, sizeof *out), **at = out;
    size_t i;
    const char *k;
    json_t *v;
    if (json_is_array (value))
        json_array_foreach (value, i, v)
            *at++ = xstrdup (json_string_value (v) ? json_string_value (v) : "");
    else if (json_is_object (value))
        json_object_foreach ((json_t *) value, k, v)
            *at++ = xasprintf ("%s=%s", k, json_string_value (v) ? json_string_value (v) : "");
    return out;
}

static void
strings_free (char **s)
{
    for (char **p = s; p && *p; p++)
        free (*p);
    free (s);
}

static size_t
strings_count (char *const *s)
{
    size_t n = 0;
    while (s && s[n])
        n++;
    return n;
}

/*  Start the task's command in the work directory. */
static int
start_command (job_t *j, int cancel_fd, char *err, size_t errlen)
{
    json_t *argv_json = json_object_get (j->spec, "argv");
    char **argv = argv_json ? strings_of (argv_json) : NULL;
    json_t *vars = json_deep_copy (json_object_get (j->spec, "env"));
    if (!json_is_object (vars))
        vars = json_object ();
    json_object_set_new (vars, "TREEFARM_NODE", json_string (job_str (j->job, "node_name")
                                                             ?: ""));
    json_object_set_new (vars, "TREEFARM_TASK", json_string (job_str (j->spec, "id") ?: ""));
    char **env = strings_of (vars);
    json_decref (vars);
    json_t *timeout = json_object_get (j->spec, "timeout_s");
    runner_spec_t spec = {
        .argv = (const char *const *) argv,
        .sh = job_str (j->spec, "sh"),
        .env = (const char *const *) env,
        .timeout_s = json_is_number (timeout) ? json_number_value (timeout) : 0,
        .workdir = j->work,
        .stdout_path = j->out_path,
        .stderr_path = j->err_path,
    };
    j->started = tf_now ();
    int rc = runner_start (&spec, cancel_fd, &j->proc, err, errlen);
    strings_free (argv);
    strings_free (env);
    return rc;
}

/*  The result stream's files: stdout and stderr unless empty, then the
 *  outputs. Returns the count, with paths and names (the caller's), or -1
 *  (j->error; the streams are still first, j->nstreams of them). */
static int
result_files (job_t *j, char ***paths, char ***names)
{
    char **declared = strings_of (json_object_get (j->spec, "outputs"));
    char **staged = NULL;
    size_t i, n = 0;
    json_t *in;
    json_t *inputs = json_object_get (j->spec, "inputs");
    staged = xcalloc (json_array_size (inputs) + 1, sizeof *staged);
    json_array_foreach (inputs, i, in)
        staged[i] = (char *) job_str (in, "name");
    char **outs = NULL;
    int given = json_is_array (json_object_get (j->spec, "outputs"));
    int rc = 0;
    if (!given || strings_count (declared) > 0)
        rc = runner_outputs (j->work, given ? (const char *const *) declared : NULL,
                             given ? strings_count (declared) : 0,
                             (const char *const *) staged, json_array_size (inputs),
                             &outs, &n, j->error, sizeof j->error);
    strings_free (declared);
    free (staged);
    if (rc != 0)
        n = 0;
    *paths = xcalloc (n + 3, sizeof **paths);
    *names = xcalloc (n + 3, sizeof **names);
    size_t k = 0;
    struct stat st;
    if (stat (j->out_path, &st) == 0 && st.st_size > 0)
        (*paths)[k] = xstrdup (j->out_path), (*names)[k++] = xstrdup ("stdout");
    if (stat (j->err_path, &st) == 0 && st.st_size > 0)
        (*paths)[k] = xstrdup (j->err_path), (*names)[k++] = xstrdup ("stderr");
    j->nstreams = (int) k;
    for (i = 0; i < n; i++, k++) {
        (*paths)[k] = xasprintf ("%s/%s", j->work, outs[i]);
        (*names)[k] = outs[i];
        if (strcmp (outs[i], "stdout") == 0 || strcmp (outs[i], "stderr") == 0)
            snprintf (j->error, sizeof j->error, "the command created \"%s\", a name kept "
                      "for its captured output", outs[i]);
    }
    free (outs);
    return j->error[0] ? -1 : (int) k;
}

/*  The meta of the result stream: how the run went. */
static json_t *
result_meta (const job_t *j)
{
    const runner_result_t *r = &j->run;
    json_t *meta = json_pack ("{s:s?, s:o, s:o, s:b, s:f, s:s}",
                              "id", job_str (j->spec, "id"),
                              "exit", r->exited ? json_integer (r->exit_code) : json_null (),
                              "signal", r->signal ? json_integer (r->signal) : json_null (),
                              "timed_out", r->timed_out, "seconds", r->wall_s,
                              "stderr_tail", r->stderr_tail);
    if (!meta)   /* a stderr tail that is not UTF-8 */
        meta = json_pack ("{s:o, s:f, s:s}", "exit",
                          r->exited ? json_integer (r->exit_code) : json_null (),
                          "seconds", r->wall_s, "stderr_tail", "(not UTF-8)");
    if (j->error[0])
        json_object_set_new (meta, "error", json_string (j->error));
    return meta;
}

/*  Copy the bundle src to the result spool, or on the root unpack it into
 *  the delivery directory. */
static int
write_result (job_t *j, bundle_src_t *src, char *buf, char *err, size_t errlen)
{
    const char *deliver = job_str (j->job, "deliver");
    uint64_t size = bundle_src_size (src);
    bundle_sink_t *sink = NULL;
    int fd = -1;
    if (deliver)
        sink = bundle_sink_new_lazy (deliver, size, err, errlen);
    else
        /*  Overwritten, not truncated: a recycled spool (node/cargo.c,
         *  CARGO_POOL_KEEP); its length travels beside it. */
        fd = open (job_str (j->job, "result"), O_WRONLY | O_CREAT | O_CLOEXEC,
                   0600);
    int rc = sink || fd >= 0 ? 0 : tf_error (err, errlen, "cannot write the result");
    for (uint64_t at = 0; rc == 0 && at < size;) {
        size_t n = size - at < CMDRUN_BLOCK ? (size_t) (size - at) : CMDRUN_BLOCK;
        rc = bundle_src_read (src, at, buf, n, err, errlen);
        if (rc == 0)
            rc = sink ? bundle_sink_write (sink, buf, n, err, errlen)
                      : tf_write_all (fd, buf, n);
        at += n;
    }
    json_t *meta = NULL;
    if (rc == 0 && sink)
        rc = bundle_sink_finish (sink, &meta, err, errlen);
    json_decref (meta);
    bundle_sink_destroy (&sink);
    if (fd >= 0 && close (fd) != 0)
        rc = -1;
    return rc;
}

/*  Pack stdout, stderr and the outputs into the result stream. Returns
 *  its size, 0 on failure (said in err). */
static uint64_t
pack_result (job_t *j, json_t **meta_p, char *buf, char *err, size_t errlen)
{
    char **paths, **names;
    int n = result_files (j, &paths, &names);
    if (n < 0)
        n = j->nstreams;   /* the streams still go up */
    struct stat st;
    uint64_t out = 0;
    for (int i = 0; i < n; i++)
        out += stat (paths[i], &st) == 0 ? (uint64_t) st.st_size : 0;
    json_t *meta = result_meta (j);
    json_object_set_new (meta, "bytes_out", json_integer ((json_int_t) out));
    bundle_src_t *src = bundle_src_new (meta, (const char *const *) paths,
                                        (const char *const *) names, (size_t) n, err,
                                        errlen);
    uint64_t size = 0;
    if (src && write_result (j, src, buf, err, errlen) == 0)
        size = bundle_src_size (src);
    bundle_src_destroy (&src);
    strings_free (paths);
    strings_free (names);
    *meta_p = meta;
    return size;
}

/*  A result stream of its meta alone, when the files cannot be packed. */
static uint64_t
pack_error (job_t *j, json_t **meta_p, char *buf, const char *why)
{
    char err[TF_ERRLEN];
    snprintf (j->error, sizeof j->error, "%s", why);
    json_decref (*meta_p);
    *meta_p = result_meta (j);
    bundle_src_t *src = bundle_src_new (*meta_p, NULL, NULL, 0, err, sizeof err);
    uint64_t size = 0;
    if (src && write_result (j, src, buf, err, sizeof err) == 0)
        size = bundle_src_size (src);
    bundle_src_destroy (&src);
    return size;
}

/*  Begin a job in work: stage its inputs and start its command. A job
 *  that cannot be started (its error said) is ended at once by job_end. */
static job_t *
job_begin (json_t *job, const char *work, int cancel_fd, char *buf)
{
    char err[TF_ERRLEN] = "";
    job_t *j = xcalloc (1, sizeof *j);
    j->job = job;
    j->work = work;
    j->out_path = xasprintf ("%s.stdout", j->work);
    j->err_path = xasprintf ("%s.stderr", j->work);
    struct stat st;
    int rc = stat (j->work, &st) == 0 || mkdir (j->work, 0700) == 0
           ? 0 : tf_error (err, sizeof err, "cannot create %s: %s", j->work, strerror (errno));
    if (rc == 0)
        rc = json_object_get (job, "spool") ? stage_spool (j, buf, err, sizeof err)
                                            : stage_inputs (j, buf, err, sizeof err);
    if (rc == 0)
        rc = start_command (j, cancel_fd, err, sizeof err);
    if (rc != 0)
        snprintf (j->error, sizeof j->error, "%s", err);
    return j;
}

/*  Wait for the job's command to end (if it started). */
static void
job_wait (job_t *j)
{
    char err[TF_ERRLEN] = "";
    if (j->proc && runner_finish (&j->proc, &j->run, err, sizeof err) != 0)
        snprintf (j->error, sizeof j->error, "%s", err);
}

/*  End a job whose command has ended: pack its result, empty its work
 *  directory. The outcome for the pipe: {task, bytes, failed, started,
 *  info}; the job (its JSON too) is freed. */
static json_t *
job_end (job_t *j, char *buf)
{
    char err[TF_ERRLEN] = "";
    if (j->error[0]) {
        close (open (j->out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        close (open (j->err_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    }
    if (!j->spec)
        j->spec = json_object ();
    json_t *meta = NULL;
    uint64_t bytes = pack_result (j, &meta, buf, err, sizeof err);
    if (bytes == 0)
        bytes = pack_error (j, &meta, buf, err);
    int failed = j->error[0] || !j->run.exited || j->run.exit_code != 0;
    tf_remove_tree (j->work, 1);
    json_t *out = json_pack ("{s:O, s:I, s:b, s:f, s:o}", "task",
                             json_object_get (j->job, "task"), "bytes", (json_int_t) bytes,
                             "failed", failed, "started", j->started, "info", meta);
    free (j->out_path);
    free (j->err_path);
    json_decref (j->spec);
    json_decref (j->job);
    free (j);
    return out;
}

static void
send_outcome (zsock_t *pipe, json_t *outcome)
{
    char *out = json_dumps (outcome, JSON_COMPACT);
    zstr_sendx (pipe, "DONE", out, NULL);
    free (out);
    json_decref (outcome);
}

/*  The next job from the pipe (blocking for one if wait), or NULL: none
 *  waits, $TERM or a closed pipe (then *more is 0), or a job that is not
 *  JSON (answered with an error outcome). */
static json_t *
take_job (zsock_t *pipe, int wait, int *more)
{
    if (!*more || (!wait && !(zsock_events (pipe) & ZMQ_POLLIN)))
        return NULL;
    char *cmd = NULL, *text = NULL;
    json_t *job = NULL;
    if (zstr_recvx (pipe, &cmd, &text, NULL) < 0 || streq (cmd, "$TERM"))
        *more = 0;
    else if (!(job = text ? json_loads (text, 0, NULL) : NULL))
        send_outcome (pipe, json_pack ("{s:s}", "error", "a job that is not JSON"));
    zstr_free (&cmd);
    zstr_free (&text);
    return job;
}

/*  The actor, until $TERM: one command at a time, and a second job
 *  waiting behind it (CMDRUN_DEPTH). When a command ends, the next job,
 *  if one came meanwhile, is staged and started before the ended one's
 *  result is packed and reported: the CPU goes back to work without a
 *  round trip through the event loop. The two jobs alternate between two
 *  work directories. */
/*  Workers in their loop (cmdrun_live). */
static int live;

static void
worker (zsock_t *pipe, void *arg)
{
    __atomic_add_fetch (&live, 1, __ATOMIC_SEQ_CST);
    cmdrun_t *self = arg;
    int cancel_fd = self->cancel[0];
    char *buf = xmalloc (CMDRUN_BLOCK);
    char *work[2] = {self->work, xasprintf ("%s.1", self->work)};
    int which = 0, more = 1;
    job_t *cur = NULL;
    zsock_signal (pipe, 0);
    for (;;) {
        while (!cur && more) {
            json_t *job = take_job (pipe, 1, &more);
            if (job)
                cur = job_begin (job, work[which ^= 1], cancel_fd, buf);
        }
        if (!cur)
            break;
        job_wait (cur);
        json_t *job = take_job (pipe, 0, &more);
        job_t *next = job ? job_begin (job, work[which ^= 1], cancel_fd, buf) : NULL;
        send_outcome (pipe, job_end (cur, buf));
        cur = next;
    }
    free (work[1]);
    free (buf);
    __atomic_sub_fetch (&live, 1, __ATOMIC_SEQ_CST);
}

int
cmdrun_live (void)
{
    return __atomic_load_n (&live, __ATOMIC_SEQ_CST);
}

cmdrun_t *
cmdrun_new (const char *work)
{
    cmdrun_t *self = xcalloc (1, sizeof *self);
    self->work = xstrdup (work);
    if (pipe2 (self->cancel, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf (stderr, "treefarm-node: cannot create a pipe: %s\n", strerror (errno));
        abort ();
    }
    self->actor = zactor_new (worker, self);
    return self;
}

void
cmdrun_destroy (cmdrun_t **self_p)
{
    cmdrun_t *self = *self_p;
    if (!self)
        return;
    if (write (self->cancel[1], "x", 1) < 0)
        perror ("treefarm-node: cancel");
    waitset_actor_destroy (&self->actor);
    close (self->cancel[0]);
    close (self->cancel[1]);
    free (self->work);
    free (self);
    *self_p = NULL;
}

int
cmdrun_start (cmdrun_t *self, const json_t *job)
{
    if (self->jobs >= CMDRUN_DEPTH)
        return -1;
    char *text = json_dumps (job, JSON_COMPACT);
    int rc = text ? zstr_sendx (self->actor, "JOB", text, NULL) : -1;
    free (text);
    self->jobs += rc == 0;
    return rc;
}

zsock_t *
cmdrun_sock (cmdrun_t *self)
{
    return zactor_sock (self->actor);
}

int
cmdrun_recv (cmdrun_t *self, uint64_t *task, uint64_t *bytes, int *failed, double *started,
             json_t **info)
{
    char *cmd = NULL, *text = NULL;
    *info = NULL;
    if (zstr_recvx (self->actor, &cmd, &text, NULL) < 0)
        return -1;
    json_t *o = text ? json_loads (text, 0, NULL) : NULL;
    int ok = cmd && streq (cmd, "DONE") && json_is_integer (json_object_get (o, "task"));
    if (ok) {
        self->jobs--;
        *started = json_number_value (json_object_get (o, "started"));
        *task = (uint64_t) json_integer_value (json_object_get (o, "task"));
        *bytes = (uint64_t) json_integer_value (json_object_get (o, "bytes"));
        *failed = json_is_true (json_object_get (o, "failed"));
        *info = json_incref (json_object_get (o, "info"));
    }
    json_decref (o);
    zstr_free (&cmd);
    zstr_free (&text);
    return ok ? 0 : -1;
}

int
cmdrun_jobs (const cmdrun_t *self)
{
    return self->jobs;
}
