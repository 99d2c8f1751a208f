/*  deploy — node processes: spawn, watch, stop. See deploy.h.
 *
 *  The local backend forks and execs. Between fork and exec the child runs
 *  in a copy of a multi-threaded process (ZeroMQ's I/O threads), so it
 *  only makes async-signal-safe calls: everything that allocates (the
 *  PATH search, argv) is done in the parent before fork. A failed exec is
 *  reported to the parent through a close-on-exec pipe, so "not found"
 *  is an error of deploy_spawn and not a mysterious exit status 127.
 */
#include "controller/deploy.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "overlay/util.h"

/*  How often deploy_wait looks for exits. */
#define DEPLOY_WAIT_STEP 0.01

typedef struct {
    char *name;
    char *host;
    pid_t pid;
    int running;             /* not yet reaped */
    int status;              /* waitpid status once reaped */
    int reported;            /* the exit was returned by deploy_poll */
    int signalled;           /* we sent it a signal */
} proc_t;

struct deploy {
    const deploy_backend_t *backend;
    void *state;
    proc_t *procs;
    int nprocs;
    int nalloc;
};

/* ------------------------------------------------------------------------
 *  Local backend.
 */

/*  Find program on PATH the way execvp would; return a new string with the
 *  path to execute, or NULL with a message in err. */
static char *
local_resolve (const char *program, char *err, size_t errlen)
{
    if (strchr (program, '/')) {
        struct stat st;
        if (stat (program, &st) != 0 || access (program, X_OK) != 0) {
            tf_error (err, errlen, "%s: %s", program, strerror (errno));
            return NULL;
        }
        if (!S_ISREG (st.st_mode)) {
            tf_error (err, errlen, "%s: not a regular file", program);
            return NULL;
        }
        return xstrdup (program);
    }
    const char *path = getenv ("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchrnul (path, ':');
        int dirlen = (int) (end - path);
        char *candidate = dirlen ? xasprintf ("%.*s/%s", dirlen, path, program)
                                 : xasprintf ("./%s", program);
        struct stat st;
        if (stat (candidate, &st) == 0 && S_ISREG (st.st_mode)
            && access (candidate, X_OK) == 0)
            return candidate;
        free (candidate);
        path = *end ? end + 1 : end;
    }
    tf_error (err, errlen, "%s: not found on PATH", program);
    return NULL;
}

/*  In the child, between fork and exec: async-signal-safe calls only. On
 *  failure the errno goes back through errfd and the child exits 127. */
static void
local_child (const char *path, char *const argv[], pid_t parent, int errfd)
{
    int e;
    /*  Die with the controller, even on SIGKILL. Check the parent after
     *  setting it: if the controller died in between, nobody will. */
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0)
        goto fail;
    if (getppid () != parent)
        _exit (127);

    /*  Undo what the controller changed: blocked and ignored signals
     *  survive exec. Handlers do not, but say it anyway. */
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    struct sigaction dfl;
    memset (&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction (sigs[i], &dfl, NULL);

    int devnull = open ("/dev/null", O_RDONLY);
    if (devnull < 0)
        goto fail;
    if (devnull != STDIN_FILENO) {
        if (dup2 (devnull, STDIN_FILENO) < 0)
            goto fail;
        close (devnull);
    }
    /*  No descriptor but stdio crosses exec (errfd is close-on-exec too). */
    if (close_range (3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        long max = sysconf (_SC_OPEN_MAX);
        if (max < 0 || max > 65536)
            max = 65536;
        for (int fd = 3; fd < max; fd++)
            if (fd != errfd)
                close (fd);
    }
    execv (path, argv);
fail:
    e = errno;
    if (write (errfd, &e, sizeof e) < 0) {
        /* nothing more to say */
    }
    _exit (127);
}

static int
local_spawn (void *state, const char *host, char *const argv[], pid_t *pid, char *err,
             size_t errlen)
{
    (void) state;
    (void) host;             /* local: every host is this machine */
    char *path = local_resolve (argv[0], err, errlen);
    if (!path)
        return -1;
    int rc = -1;
    int pipefd[2];
    if (pipe2 (pipefd, O_CLOEXEC) != 0) {
        tf_error (err, errlen, "pipe: %s", strerror (errno));
        goto out_free_path;
    }
    pid_t parent = getpid ();
    pid_t child = fork ();
    if (child < 0) {
        tf_error (err, errlen, "fork: %s", strerror (errno));
        goto out_close_pipe;
    }
    if (child == 0) {
        close (pipefd[0]);
        local_child (path, argv, parent, pipefd[1]);
    }
    close (pipefd[1]);
    pipefd[1] = -1;

    /*  End of file: exec succeeded. An int: it failed with that errno. */
    int child_errno = 0;
    ssize_t n;
    do
        n = read (pipefd[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t) sizeof child_errno) {
        while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
            ;
        tf_error (err, errlen, "cannot run %s: %s", path, strerror (child_errno));
        goto out_close_pipe;
    }
    *pid = child;
    rc = 0;
out_close_pipe:
    close (pipefd[0]);
    if (pipefd[1] >= 0)
        close (pipefd[1]);
out_free_path:
    free (path);
    return rc;
}

static int
local_check (void *state, const char *host, const char *program, char *err,
             size_t errlen)
{
    (void) state;
    (void) host;
    char *path = local_resolve (program, err, errlen);
    free (path);
    return path ? 0 : -1;
}

/*  Return 1 if a TCP socket can bind addr (port 0) here, else 0 with the
 *  reason in *why. */
static int
local_can_bind (const struct addrinfo *ai, int *why)
{
    int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        *why = errno;
        return 0;
    }
    int ok = bind (fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok)
        *why = errno;
    close (fd);
    return ok;
}

/*  Every node runs here: its host must be an address of this machine
 *  (127.0.0.1, ::1, localhost, an interface's address). Resolve it and
 *  try to bind each result to port 0. */
static int
local_check_host (void *state, const char *host, char *err, size_t errlen)
{
    (void) state;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo (host, "0", &hints, &res);
    if (rc != 0)
        return tf_error (err, errlen, "host \"%s\" cannot be resolved: %s", host,
                         rc == EAI_SYSTEM ? strerror (errno) : gai_strerror (rc));
    int ok = 0, why = EADDRNOTAVAIL;
    for (const struct addrinfo *ai = res; ai && !ok; ai = ai->ai_next)
        ok = local_can_bind (ai, &why);
    freeaddrinfo (res);
    if (!ok)
        return tf_error (err, errlen, "host \"%s\" is not an address of this machine "
                         "(%s), and the local deployment runs every node here", host,
                         strerror (why));
    return 0;
}

static int
local_signal (void *state, const char *host, pid_t pid, int sig)
{
    (void) state;
    (void) host;
    return kill (pid, sig);
}

static const deploy_backend_t local_backend = {
    .name = "local",
    .control_bind = "tcp://127.0.0.1:*",
    .spawn = local_spawn,
    .check = local_check,
    .check_host = local_check_host,
    .signal = local_signal,
};

/*  Every backend, by name. ssh and netns plug in here. */
static const deploy_backend_t *const backends[] = {
    &local_backend,
};

/* ------------------------------------------------------------------------
 *  Deployment.
 */

deploy_t *
deploy_new (const char *backend, char *err, size_t errlen)
{
    const deploy_backend_t *found = NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp (backends[i]->name, backend) == 0)
            found = backends[i];
    if (!found) {
        tf_error (err, errlen, "unknown deployment backend \"%s\"", backend);
        return NULL;
    }
    deploy_t *self = xcalloc (1, sizeof *self);
    self->backend = found;
    if (found->state_new)
        self->state = found->state_new ();
    return self;
}

void
deploy_destroy (deploy_t **self_p)
{
    deploy_t *self = *self_p;
    if (!self)
        return;
    deploy_stop (self, 0);
    for (int i = 0; i < self->nprocs; i++) {
        free (self->procs[i].name);
        free (self->procs[i].host);
    }
    free (self->procs);
    if (self->backend->state_destroy)
        self->backend->state_destroy (&self->state);
    free (self);
    *self_p = NULL;
}

const char *
deploy_backend_name (const deploy_t *self)
{
    return self->backend->name;
}

const char *
deploy_control_bind (const deploy_t *self)
{
    return self->backend->control_bind;
}

int
deploy_check_program (deploy_t *self, const char *host, const char *program,
                      char *err, size_t errlen)
{
    return self->backend->check (self->state, host, program, err, errlen);
}

int
deploy_check_host (deploy_t *self, const char *host, char *err, size_t errlen)
{
    return self->backend->check_host (self->state, host, err, errlen);
}

int
deploy_spawn (deploy_t *self, const char *name, const char *host, char *const argv[],
              char *err, size_t errlen)
{
    pid_t pid;
    if (self->backend->spawn (self->state, host, argv, &pid, err, errlen) != 0)
        return -1;
    if (self->nprocs == self->nalloc) {
        self->nalloc = self->nalloc ? 2 * self->nalloc : 8;
        self->procs = xrealloc (self->procs, self->nalloc * sizeof *self->procs);
    }
    proc_t *proc = &self->procs[self->nprocs];
    memset (proc, 0, sizeof *proc);
    proc->name = xstrdup (name);
    proc->host = xstrdup (host);
    proc->pid = pid;
    proc->running = 1;
    return self->nprocs++;
}

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
reap (proc_t *proc, int block)
{
    if (!proc->running)
        return;
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
}

static void
reap_all (deploy_t *self)
{
    for (int i = 0; i < self->nprocs; i++)
        reap (&self->procs[i], 0);
}

int
deploy_poll (deploy_t *self, deploy_exit_t *out)
{
    reap_all (self);
    for (int i = 0; i < self->nprocs; i++) {
        proc_t *proc = &self->procs[i];
        if (!proc->running && !proc->reported) {
            proc->reported = 1;
            out->slot = i;
            out->name = proc->name;
            out->pid = proc->pid;
            out->status = proc->status;
            out->signalled = proc->signalled;
            return 1;
        }
    }
    return 0;
}

const char *
deploy_describe_exit (const deploy_exit_t *exit_info, char *buf, size_t len)
{
    int status = exit_info->status;
    if (WIFSIGNALED (status))
        snprintf (buf, len, "node %s (pid %ld) killed by signal %d (%s)",
                  exit_info->name, (long) exit_info->pid, WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "node %s (pid %ld) exited with status %d", exit_info->name,
                  (long) exit_info->pid, WIFEXITED (status) ? WEXITSTATUS (status) : -1);
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
    double deadline = tf_now () + timeout;
    while (1) {
        reap_all (self);
        int running = deploy_running (self);
        double left = deadline - tf_now ();
        if (running == 0 || left <= 0)
            return running;
        sleep_seconds (left < DEPLOY_WAIT_STEP ? left : DEPLOY_WAIT_STEP);
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
        self->backend->signal (self->state, proc->host, proc->pid, sig);
    }
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
        reap (&self->procs[i], 1);
    return killed;
}
