/*  deploy — node processes: place, check, start, watch, stop. See
 *  deploy.h and docs/deploy.md.
 *
 *  Here are the slots (add, check, route, the command line, the
 *  certificate, start) and the processes (reap, poll, wait, kill, stop).
 *  What differs by host kind is a backend's (deploy_int.h: the table in
 *  deploy_backends.c, a file per kind). Processes are started through
 *  controller/spawn.c.
 */
#include "controller/deploy_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/spawn.h"
#include "overlay/util.h"

/*  How often deploy_wait looks for exits: first after DEPLOY_WAIT_FIRST,
 *  then twice as long each time up to DEPLOY_WAIT_STEP. Nodes that were
 *  told to stop exit within a few milliseconds; a run's end waits on that. */
#define DEPLOY_WAIT_FIRST 0.0005
#define DEPLOY_WAIT_STEP 0.01

/* ------------------------------------------------------------------------
 *  Deployment.
 */

deploy_t *
deploy_new (const deploy_opts_t *opts)
{
    deploy_t *self = xcalloc (1, sizeof *self);
    if (opts && opts->ssh_config)
        self->ssh_config = xstrdup (opts->ssh_config);
    self->ssh.config = self->ssh_config;
    self->ssh.push_binary = opts ? opts->push_binary : 0;
    self->slurm = opts ? opts->slurm : 0;
    return self;
}

static void
proc_clear (proc_t *proc)
{
    if (proc->stdin_fd >= 0)
        close (proc->stdin_fd);
    free (proc->name);
    free (proc->text);
    free (proc->control);
    free (proc->bind);
    free (proc->reach);
    free (proc->remote);
    free (proc->target);
    free (proc->cert);
    if (proc->cert_text)
        explicit_bzero (proc->cert_text, strlen (proc->cert_text));
    free (proc->cert_text);
}

void
deploy_destroy (deploy_t **self_p)
{
    deploy_t *self = *self_p;
    if (!self)
        return;
    deploy_stop (self, 0);
    for (int i = 0; i < self->nprocs; i++)
        proc_clear (&self->procs[i]);
    free (self->procs);
    deploy_slurm_destroy (self);
    deploy_ipc_remove (self);
    free (self->ssh_config);
    free (self);
    *self_p = NULL;
}

int
deploy_add (deploy_t *self, const char *name, const char *host, char *err, size_t errlen)
{
    host_t parsed;
    char why[TF_ERRLEN];
    if (host_parse (host, &parsed, why, sizeof why) != 0)
        return tf_error (err, errlen, "host: %s", why);
    if (self->nprocs == self->nalloc) {
        self->nalloc = self->nalloc ? 2 * self->nalloc : 8;
        self->procs = xrealloc (self->procs, self->nalloc * sizeof *self->procs);
    }
    proc_t *proc = &self->procs[self->nprocs];
    memset (proc, 0, sizeof *proc);
    proc->name = xstrdup (name);
    proc->text = xstrdup (host);
    proc->host = parsed;
    proc->pid = -1;
    proc->stdin_fd = -1;
    proc->rank = -1;
    return self->nprocs++;
}

static proc_t *
slot_proc (const deploy_t *self, int slot)
{
    return slot >= 0 && slot < self->nprocs ? &self->procs[slot] : NULL;
}

int
deploy_check (deploy_t *self, int slot, char *const program[], int nprogram, char *err,
              size_t errlen)
{
    proc_t *proc = slot_proc (self, slot);
    if (!proc)
        return tf_error (err, errlen, "no slot %d", slot);
    if (proc->checked)
        return 0;
    if (deploy_backend_of (proc)->check (self, proc, program, nprogram, err, errlen) != 0)
        return -1;
    proc->checked = 1;
    return 0;
}

/*  The local address a `local` parent binds for child, into src ("" when
 *  loopback serves). */
static int
route_child (const proc_t *parent, const proc_t *child, char *src, size_t len,
             char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    src[0] = '\0';
    if (child->host.kind == HOST_LOCAL || !child->reach)
        return 0;
    if (deploy_route_source (child->reach, src, len, why, sizeof why) != 0)
        return tf_error (err, errlen, "its child %s (%s) cannot reach it: %s",
                         child->name, child->text, why);
    const char *given = parent->host.name;
    if (*given && (strcmp (given, "localhost") == 0 || deploy_is_loopback (given))
        && !deploy_is_loopback (src))
        return tf_error (err, errlen, "binds \"%s\", which its child %s (%s) cannot "
                         "reach; give it host local or an address %s reaches", given,
                         child->name, child->text, child->name);
    if (deploy_is_loopback (src) || *given)
        src[0] = '\0';
    return 0;
}

int
deploy_route (deploy_t *self, int slot, const int *children, int nchildren, char *err,
              size_t errlen)
{
    proc_t *proc = slot_proc (self, slot);
    if (!proc || proc->host.kind != HOST_LOCAL)
        return 0;
    char chosen[NI_MAXHOST] = "", src[NI_MAXHOST];
    const proc_t *by = NULL;
    for (int i = 0; i < nchildren; i++) {
        const proc_t *child = slot_proc (self, children[i]);
        if (!child || route_child (proc, child, src, sizeof src, err, errlen) != 0) {
            if (!child)
                tf_error (err, errlen, "no slot %d", children[i]);
            return -1;
        }
        if (!*src)
            continue;
        if (by && strcmp (src, chosen) != 0)
            return tf_error (err, errlen, "its children are reached from different local "
                             "addresses (%s for %s, %s for %s); give it a host address "
                             "they all reach", chosen, by->name, src, child->name);
        snprintf (chosen, sizeof chosen, "%s", src);
        by = child;
    }
    free (proc->bind);
    proc->bind = *chosen ? xstrdup (chosen) : NULL;
    return 0;
}

const char *
deploy_control_bind (const deploy_t *self, int slot)
{
    const proc_t *proc = slot_proc (self, slot);
    return proc && proc->control ? proc->control : DEPLOY_LOCAL_CONTROL;
}

const char *
deploy_bind_address (const deploy_t *self, int slot)
{
    const proc_t *proc = slot_proc (self, slot);
    return proc ? proc->bind : NULL;
}

const char *
deploy_target (const deploy_t *self, int slot)
{
    const proc_t *proc = slot_proc (self, slot);
    return proc ? proc->target : NULL;
}

const char *
deploy_program (const deploy_t *self, int slot, const char *local_program)
{
    const proc_t *proc = slot_proc (self, slot);
    return proc && proc->remote ? proc->remote : local_program;
}

host_kind_t
deploy_kind (const deploy_t *self, int slot)
{
    const proc_t *proc = slot_proc (self, slot);
    return proc ? proc->host.kind : HOST_LOCAL;
}

const char *
deploy_host (const deploy_t *self, int slot)
{
    const proc_t *proc = slot_proc (self, slot);
    return proc ? proc->text : NULL;
}

/*  The command line of proc's node: its backend's, with `--cert PATH`
 *  added to argv for a node that reads its certificate here (an ssh
 *  node's remote script adds its own). */
static char **
command_of (const deploy_t *self, const proc_t *proc, char *const argv[])
{
    if (!proc->cert || proc->cert_text)
        return deploy_backend_of (proc)->command (self, proc, argv);
    int n = 0;
    while (argv[n])
        n++;
    char **with = xcalloc ((size_t) n + 3, sizeof *with);
    memcpy (with, argv, (size_t) n * sizeof *with);
    with[n] = "--cert";
    with[n + 1] = proc->cert;
    char **out = deploy_backend_of (proc)->command (self, proc, with);
    free (with);
    return out;
}

char **
deploy_command (const deploy_t *self, int slot, char *const argv[])
{
    const proc_t *proc = slot_proc (self, slot);
    return proc ? command_of (self, proc, argv) : NULL;
}

int
deploy_set_cert (deploy_t *self, int slot, curve_run_t *certs, int i, char *err,
                 size_t errlen)
{
    proc_t *proc = slot_proc (self, slot);
    if (!proc || proc->started)
        return tf_error (err, errlen, "slot %d: %s", slot, proc ? "started already"
                                                               : "no such slot");
    /*  An ssh or slurm node takes the text on its stdin: no file here. */
    const char *path = NULL, *text = curve_run_text (certs, i);
    int on_stdin = proc->host.kind == HOST_SSH || proc->host.kind == HOST_SLURM;
    if (on_stdin ? !deploy_ssh_cert_ok (text, err, errlen)
                 : !(path = curve_run_file (certs, i, err, errlen)))
        return -1;
    free (proc->cert);
    if (proc->cert_text)
        explicit_bzero (proc->cert_text, strlen (proc->cert_text));
    free (proc->cert_text);
    proc->cert = path ? xstrdup (path) : NULL;
    proc->cert_text = on_stdin ? xstrdup (text) : NULL;
    return 0;
}

int
deploy_start (deploy_t *self, int slot, char *const argv[], char *err, size_t errlen)
{
    proc_t *proc = slot_proc (self, slot);
    if (!proc || proc->started)
        return tf_error (err, errlen, "slot %d: %s", slot, proc ? "started already"
                                                               : "no such slot");
    const backend_t *backend = deploy_backend_of (proc);
    if (backend->start)
        return backend->start (self, proc, argv, err, errlen);
    int pipefd[2] = {-1, -1};
    if (backend->holds_stdin && pipe2 (pipefd, O_CLOEXEC) != 0)
        return tf_error (err, errlen, "pipe: %s", strerror (errno));
    const int fds[3] = {pipefd[0], -1, -1};
    char **command = command_of (self, proc, argv);
    pid_t pid;
    int rc = spawn_start (command, fds, &pid, err, errlen);
    spawn_argv_free (command);
    if (pipefd[0] >= 0)
        close (pipefd[0]);
    if (rc != 0) {
        if (pipefd[1] >= 0)
            close (pipefd[1]);
        return -1;
    }
    proc->stdin_fd = pipefd[1];
    proc->pid = pid;
    proc->started = proc->running = 1;
    if (proc->cert_text && proc->stdin_fd >= 0)
        return deploy_ssh_cert_send (proc, err, errlen);
    return 0;
}

int
deploy_launch (deploy_t *self, char *err, size_t errlen)
{
    return deploy_slurm_launch (self, err, errlen);
}

int
deploy_spawn (deploy_t *self, const char *name, const char *host, char *const argv[],
              char *err, size_t errlen)
{
    int slot = deploy_add (self, name, host, err, errlen);
    if (slot < 0)
        return -1;
    if (deploy_start (self, slot, argv, err, errlen) != 0) {
        proc_clear (&self->procs[--self->nprocs]);
        return -1;
    }
    return slot;
}

/* ------------------------------------------------------------------------
 *  Processes.
 */

int
deploy_size (const deploy_t *self)
{
    return self->nprocs;
}

const char *
deploy_name (const deploy_t *self, int slot)
{
    return slot >= 0 && slot < self->nprocs ? self->procs[slot].name : NULL;
}

pid_t
deploy_pid (const deploy_t *self, int slot)
{
    return slot >= 0 && slot < self->nprocs ? self->procs[slot].pid : -1;
}

int
deploy_is_running (const deploy_t *self, int slot)
{
    return slot >= 0 && slot < self->nprocs && self->procs[slot].running;
}

int
deploy_running (const deploy_t *self)
{
    int n = 0;
    for (int i = 0; i < self->nprocs; i++)
        n += self->procs[i].running;
    return n;
}

/*  Reap one process if it has exited; block when asked. */
static void
reap (deploy_t *self, proc_t *proc, int block)
{
    if (!proc->running)
        return;
    if (deploy_backend_of (proc)->reap) {
        deploy_backend_of (proc)->reap (self, proc, block);
        return;
    }
    int status;
    pid_t rc;
    do
        rc = waitpid (proc->pid, &status, block ? 0 : WNOHANG);
    while (rc < 0 && errno == EINTR);
    if (rc == proc->pid) {
        proc->running = 0;
        proc->status = status;
    }
    else if (rc < 0 && errno == ECHILD) {
        /*  Someone else reaped it (a handler we do not own): it is gone,
         *  with an unknown status. */
        proc->running = 0;
        proc->status = 0;
    }
    if (!proc->running && proc->stdin_fd >= 0) {
        close (proc->stdin_fd);
        proc->stdin_fd = -1;
    }
}

static void
reap_all (deploy_t *self)
{
    for (int i = 0; i < self->nprocs; i++)
        reap (self, &self->procs[i], 0);
}

int
deploy_poll (deploy_t *self, deploy_exit_t *out)
{
    reap_all (self);
    for (int i = 0; i < self->nprocs; i++) {
        proc_t *proc = &self->procs[i];
        if (proc->started && !proc->running && !proc->reported) {
            proc->reported = 1;
            out->slot = i;
            out->name = proc->name;
            out->pid = proc->pid;
            out->status = proc->status;
            out->signalled = proc->signalled;
            out->step = proc->host.kind == HOST_SLURM;
            return 1;
        }
    }
    return 0;
}

const char *
deploy_describe_exit (const deploy_exit_t *exit_info, char *buf, size_t len)
{
    int status = exit_info->status;
    const char *by = exit_info->step ? "srun step, " : "";
    if (WIFSIGNALED (status))
        snprintf (buf, len, "node %s (%spid %ld) killed by signal %d (%s)",
                  exit_info->name, by, (long) exit_info->pid, WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "node %s (%spid %ld) exited with status %d", exit_info->name,
                  by, (long) exit_info->pid, WIFEXITED (status) ? WEXITSTATUS (status) : -1);
    return buf;
}

int
deploy_exit_is_clean (const deploy_exit_t *exit_info)
{
    /*  However a process ends after we signalled it, we asked for it. */
    if (exit_info->signalled)
        return 1;
    return WIFEXITED (exit_info->status) && WEXITSTATUS (exit_info->status) == 0;
}

static void
sleep_seconds (double seconds)
{
    struct timespec ts = {.tv_sec = (time_t) seconds,
                          .tv_nsec = (long) ((seconds - (time_t) seconds) * 1e9)};
    nanosleep (&ts, NULL);
}

int
deploy_wait (deploy_t *self, double timeout)
{
    double deadline = tf_now () + timeout, step = DEPLOY_WAIT_FIRST;
    while (1) {
        reap_all (self);
        int running = deploy_running (self);
        double left = deadline - tf_now ();
        if (running == 0 || left <= 0)
            return running;
        sleep_seconds (left < step ? left : step);
        step = step * 2 < DEPLOY_WAIT_STEP ? step * 2 : DEPLOY_WAIT_STEP;
    }
}

/*  Send sig to every process still running. */
static void
signal_all (deploy_t *self, int sig)
{
    for (int i = 0; i < self->nprocs; i++) {
        proc_t *proc = &self->procs[i];
        if (!proc->running)
            continue;
        proc->signalled = 1;
        deploy_backend_of (proc)->signal (self, proc, sig);
    }
}

void
deploy_kill (deploy_t *self, int slot)
{
    if (!deploy_is_running (self, slot))
        return;
    proc_t *proc = &self->procs[slot];
    proc->signalled = 1;
    deploy_backend_of (proc)->signal (self, proc, SIGTERM);
    deploy_backend_of (proc)->signal (self, proc, SIGKILL);
}

int
deploy_stop (deploy_t *self, double grace)
{
    reap_all (self);
    if (deploy_running (self) == 0)
        return 0;
    if (grace > 0) {
        signal_all (self, SIGTERM);
        if (deploy_wait (self, grace) == 0)
            return 0;
    }
    int killed = deploy_running (self);
    signal_all (self, SIGKILL);
    for (int i = 0; i < self->nprocs; i++)
        reap (self, &self->procs[i], 1);
    return killed;
}
