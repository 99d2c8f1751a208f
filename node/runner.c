/*  runner — one command task, run and watched; see runner.h.
 *
 *  Everything that allocates is done before vfork: the environment, the
 *  PATH candidates for argv[0], the descriptors. Between vfork and exec
 *  the child runs in the memory of a multi-threaded process (ZeroMQ's I/O
 *  threads), so it makes async-signal-safe calls only, and reports an
 *  exec failure by writing to its stderr file and exiting 127 or 126.
 *
 *  The parent waits with poll on a pidfd (readable when the child has
 *  exited), the cancel descriptor and the next deadline (the timeout,
 *  then the SIGKILL after the grace). The leader's pid stays reserved
 *  until it is reaped, so signalling its group by that number before
 *  waitpid can never hit an unrelated process.
 */
#include "node/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "overlay/util.h"

/*  PATH for argv[0] when the command's environment has none (execvp's). */
#define RUNNER_DEFAULT_PATH "/bin:/usr/bin"

extern char **environ;

/*  What the child needs, prepared by the parent. */
typedef struct {
    char *const *argv;       /* borrowed, or sh_argv */
    const char *sh_argv[4];
    char **envp;             /* the array is owned, the strings borrowed */
    char **paths;            /* candidates for argv[0], owned */
    size_t npaths;
    int wfd, nullfd, outfd, errfd;
} launch_t;

/* ------------------------------------------------------------------------
 *  The spec.
 */

/*  Count a NULL-terminated array up to max + 1. */
static size_t
count_upto (const char *const *v, size_t max)
{
    size_t n = 0;
    while (v && v[n] && n <= max)
        n++;
    return n;
}

static int
spec_check (const runner_spec_t *spec, int cancel_fd, char *err, size_t errlen)
{
    if (!spec->argv == !spec->sh)
        return tf_error (err, errlen, "runner: give exactly one of argv and sh");
    if (spec->argv && (!spec->argv[0] || !spec->argv[0][0]))
        return tf_error (err, errlen, "runner: empty argv");
    if (count_upto (spec->argv, RUNNER_MAX_ARGS) > RUNNER_MAX_ARGS)
        return tf_error (err, errlen, "runner: more than %d arguments", RUNNER_MAX_ARGS);
    if (count_upto (spec->env, RUNNER_MAX_ENV) > RUNNER_MAX_ENV)
        return tf_error (err, errlen, "runner: more than %d environment additions",
                         RUNNER_MAX_ENV);
    for (size_t i = 0; spec->env && spec->env[i]; i++) {
        const char *eq = strchr (spec->env[i], '=');
        if (!eq || eq == spec->env[i])
            return tf_error (err, errlen, "runner: environment addition \"%.100s\" is not"
                             " KEY=VALUE", spec->env[i]);
    }
    if (!(spec->timeout_s >= 0 && spec->timeout_s <= RUNNER_MAX_TIMEOUT))
        return tf_error (err, errlen, "runner: timeout %g s: must be 0 to %g",
                         spec->timeout_s, RUNNER_MAX_TIMEOUT);
    if (!spec->workdir || !spec->stdout_path || !spec->stderr_path)
        return tf_error (err, errlen, "runner: workdir, stdout_path and stderr_path"
                         " are required");
    if (cancel_fd >= 0 && fcntl (cancel_fd, F_GETFD) < 0)
        return tf_error (err, errlen, "runner: cancel descriptor %d: %s", cancel_fd,
                         strerror (errno));
    return 0;
}

/* ------------------------------------------------------------------------
 *  Preparing the launch, in the parent.
 */

/*  Does entry "KEY=..." have the key of addition "KEY=VALUE"? */
static int
same_key (const char *entry, const char *addition)
{
    size_t klen = (size_t) (strchr (addition, '=') - addition);
    return strncmp (entry, addition, klen) == 0 && entry[klen] == '=';
}

/*  The node's environment with the additions: an addition replaces the
 *  node's variable of its key and any earlier addition of it. */
static char **
env_build (const char *const *add)
{
    size_t nenv = 0, nadd = count_upto (add, RUNNER_MAX_ENV), n = 0;
    while (environ && environ[nenv])
        nenv++;
    char **envp = xcalloc (nenv + nadd + 1, sizeof *envp);
    for (size_t i = 0; i < nenv; i++) {
        int replaced = 0;
        for (size_t j = 0; j < nadd && !replaced; j++)
            replaced = same_key (environ[i], add[j]);
        if (!replaced)
            envp[n++] = environ[i];
    }
    for (size_t j = 0; j < nadd; j++) {
        int later = 0;
        for (size_t k = j + 1; k < nadd && !later; k++)
            later = same_key (add[j], add[k]);
        if (!later)
            envp[n++] = (char *) add[j];
    }
    return envp;
}

/*  The files execve tries for name, in order, as execvp would: name
 *  itself if it has a '/', else each directory of the command's PATH
 *  (an empty one is the work directory). */
static void
paths_build (launch_t *l, const char *name)
{
    if (strchr (name, '/')) {
        l->paths = xcalloc (1, sizeof *l->paths);
        l->paths[l->npaths++] = xstrdup (name);
        return;
    }
    const char *path = RUNNER_DEFAULT_PATH;
    for (size_t i = 0; l->envp[i]; i++)
        if (strncmp (l->envp[i], "PATH=", 5) == 0)
            path = l->envp[i] + 5;
    size_t cap = 1;
    for (const char *p = path; *p; p++)
        cap += *p == ':';
    l->paths = xcalloc (cap, sizeof *l->paths);
    for (const char *p = path;; p++) {
        const char *end = strchrnul (p, ':');
        int len = (int) (end - p);
        l->paths[l->npaths++] = len ? xasprintf ("%.*s/%s", len, p, name) : xstrdup (name);
        p = end;
        if (!*p)
            break;
    }
}

/*  Move fd above stdio (a node started with 0, 1 or 2 closed would
 *  otherwise get one of them), close-on-exec. */
static int
fd_high (int fd)
{
    if (fd < 0 || fd > STDERR_FILENO)
        return fd;
    int high = fcntl (fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    close (fd);
    return high;
}

/*  The process's /dev/null, every command's stdin: opened once, kept
 *  (close-on-exec), -1 with errno if it cannot be. */
static int null_fd_value = -1, null_fd_errno;
static pthread_once_t null_fd_once = PTHREAD_ONCE_INIT;

static void
null_fd_open (void)
{
    null_fd_value = fd_high (open ("/dev/null", O_RDONLY | O_CLOEXEC));
    null_fd_errno = errno;
}

static int
null_fd (void)
{
    pthread_once (&null_fd_once, null_fd_open);
    errno = null_fd_errno;
    return null_fd_value;
}

/*  Open an output file for a command, empty. A command worker reuses
 *  its stdout and stderr files, and most commands leave them empty:
 *  O_TRUNC would update the empty file's times, an inode write to the
 *  file system's journal per file per command, so only a file with
 *  something in it is truncated. */
static int
open_empty (const char *path, int flags)
{
    int fd = fd_high (open (path, flags | O_CREAT | O_CLOEXEC, 0644));
    struct stat st;
    if (fd >= 0 && (fstat (fd, &st) != 0 || (st.st_size > 0 && ftruncate (fd, 0) != 0))) {
        int saved = errno;
        close (fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/*  Open what the child gets: its cwd, stdin, stdout and stderr. */
static int
launch_open (launch_t *l, const runner_spec_t *spec, char *err, size_t errlen)
{
    l->wfd = fd_high (open (spec->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (l->wfd < 0)
        return tf_error (err, errlen, "workdir %s: %s", spec->workdir, strerror (errno));
    l->nullfd = null_fd ();
    if (l->nullfd < 0)
        return tf_error (err, errlen, "/dev/null: %s", strerror (errno));
    /*  Read-write: the tail is read back from it after the exit. */
    l->errfd = open_empty (spec->stderr_path, O_RDWR);
    if (l->errfd < 0)
        return tf_error (err, errlen, "%s: %s", spec->stderr_path, strerror (errno));
    if (strcmp (spec->stdout_path, spec->stderr_path) == 0)
        l->outfd = fcntl (l->errfd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    else
        l->outfd = open_empty (spec->stdout_path, O_WRONLY);
    if (l->outfd < 0)
        return tf_error (err, errlen, "%s: %s", spec->stdout_path, strerror (errno));
    return 0;
}

static void
launch_free (launch_t *l)
{
    const int fds[] = {l->wfd, l->outfd, l->errfd};   /* nullfd is kept */
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close (fds[i]);
    for (size_t i = 0; i < l->npaths; i++)
        free (l->paths[i]);
    free (l->paths);
    free (l->envp);
}

static int
launch_prepare (launch_t *l, const runner_spec_t *spec, char *err, size_t errlen)
{
    memset (l, 0, sizeof *l);
    l->wfd = l->nullfd = l->outfd = l->errfd = -1;
    if (launch_open (l, spec, err, errlen) != 0)
        return -1;
    if (spec->sh) {
        l->sh_argv[0] = "sh";
        l->sh_argv[1] = "-c";
        l->sh_argv[2] = spec->sh;
        l->argv = (char *const *) l->sh_argv;
    } else {
        l->argv = (char *const *) spec->argv;
    }
    l->envp = env_build (spec->env);
    if (spec->sh) {
        l->paths = xcalloc (1, sizeof *l->paths);
        l->paths[l->npaths++] = xstrdup ("/bin/sh");
    } else {
        paths_build (l, spec->argv[0]);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 *  The child, between vfork and exec: async-signal-safe calls only.
 */

static void
child_say (const char *a, const char *b, const char *c)
{
    const char *parts[] = {"treefarm: ", a, ": ", b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i] && write (STDERR_FILENO, parts[i], strlen (parts[i])) < 0)
            return;
}

/*  Set up the process and exec; on failure say why on stderr and exit
 *  like a shell: 127 not found, 126 found but not executable. */
static void
child_exec (const launch_t *l, pid_t parent)
{
    setpgid (0, 0);
    /*  Die with the node (even on SIGKILL), and check the node did not
     *  die before that was set. */
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (127);
    tf_child_reset_signals ();
    if (fchdir (l->wfd) != 0 || dup2 (l->nullfd, STDIN_FILENO) < 0
        || dup2 (l->outfd, STDOUT_FILENO) < 0 || dup2 (l->errfd, STDERR_FILENO) < 0)
        _exit (127);
    if (close_range (STDERR_FILENO + 1, ~0U, 0) != 0)
        for (int fd = STDERR_FILENO + 1; fd < 65536; fd++)
            close (fd);
    int best = ENOENT;
    for (size_t i = 0; i < l->npaths; i++) {
        execve (l->paths[i], l->argv, l->envp);
        if (errno != ENOENT && errno != ENOTDIR)
            best = errno;
        if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
            break;                       /* as execvp: only these go on searching */
    }
    int missing = best == ENOENT;
    if (missing && !strchr (l->argv[0], '/'))
        child_say (l->argv[0], "command not found", NULL);
    else
        child_say (l->argv[0], strerrordesc_np (best), NULL);
    _exit (missing ? 127 : 126);
}

/* ------------------------------------------------------------------------
 *  Waiting, in the parent.
 */

/*  The longest single poll, ms: an int, and RUNNER_MAX_TIMEOUT in ms is
 *  not one. A longer wait polls again. */
#define RUNNER_MAX_POLL_MS 1000000000

/*  Milliseconds to poll until deadline (-1: none), rounded up. */
static int
poll_ms (double deadline, double now)
{
    if (isinf (deadline))
        return -1;
    double ms = ceil ((deadline - now) * 1000);
    return ms < 0 ? 0 : ms > RUNNER_MAX_POLL_MS ? RUNNER_MAX_POLL_MS : (int) ms;
}

/*  Wait for the child to exit, stopping it on a timeout or cancel, then
 *  kill the rest of its group. Returns 0, or -1 if poll failed (then the
 *  group has been SIGKILLed). */
static int
wait_exit (pid_t pid, int pidfd, const runner_spec_t *spec, int cancel_fd, double t0,
           runner_result_t *out, char *err, size_t errlen)
{
    double deadline = spec->timeout_s > 0 ? t0 + spec->timeout_s : INFINITY;
    int stopping = 0, rc = 0;
    for (;;) {
        double now = tf_now ();
        if (now >= deadline && !stopping) {
            out->timed_out = 1;
        } else if (now >= deadline) {
            kill (-pid, SIGKILL);
            deadline = INFINITY;
        }
        if ((out->timed_out || out->cancelled) && !stopping) {
            kill (-pid, SIGTERM);
            stopping = 1;
            deadline = now + RUNNER_KILL_GRACE;
        }
        struct pollfd p[2] = {{pidfd, POLLIN, 0}, {stopping ? -1 : cancel_fd, POLLIN, 0}};
        int r = poll (p, 2, poll_ms (deadline, now));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = tf_error (err, errlen, "runner: poll: %s", strerror (errno));
            break;
        }
        if (p[0].revents)
            break;
        if (p[1].revents)
            out->cancelled = 1;
    }
    kill (-pid, SIGKILL);                /* what is left of the group */
    return rc;
}

/*  Watch the child until it exits, reap it and record how it ended. The
 *  child is reaped on every path. */
static int
watch (pid_t pid, const runner_spec_t *spec, int cancel_fd, double t0,
       runner_result_t *out, char *err, size_t errlen)
{
    int rc = -1;
    int pidfd = pidfd_open (pid, 0);
    if (pidfd < 0) {
        tf_error (err, errlen, "runner: pidfd_open: %s", strerror (errno));
        kill (-pid, SIGKILL);
    } else {
        rc = wait_exit (pid, pidfd, spec, cancel_fd, t0, out, err, errlen);
        close (pidfd);
    }
    int status;
    pid_t r;
    while ((r = waitpid (pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (r < 0)
        return tf_error (err, errlen, "runner: waitpid: %s", strerror (errno));
    if (WIFEXITED (status)) {
        out->exited = 1;
        out->exit_code = WEXITSTATUS (status);
    } else if (WIFSIGNALED (status)) {
        out->signal = WTERMSIG (status);
    }
    return rc;
}

/*  Copy the last RUNNER_TAIL_BYTES of the stderr file into out. */
static void
read_tail (int fd, runner_result_t *out)
{
    struct stat st;
    if (fstat (fd, &st) != 0 || st.st_size <= 0)
        return;
    off_t start = st.st_size > RUNNER_TAIL_BYTES ? st.st_size - RUNNER_TAIL_BYTES : 0;
    ssize_t got;
    while ((got = pread (fd, out->stderr_tail, (size_t) (st.st_size - start), start)) < 0
           && errno == EINTR)
        ;
    out->stderr_len = got > 0 ? (size_t) got : 0;
    out->stderr_tail[out->stderr_len] = '\0';
    out->stderr_truncated = start > 0;
}

/*  A started command: what runner_finish needs. */
struct runner_proc {
    launch_t l;
    pid_t pid;
    double t0, timeout_s;
    int cancel_fd;
};

int
runner_start (const runner_spec_t *spec, int cancel_fd, runner_proc_t **proc_p, char *err,
              size_t errlen)
{
    *proc_p = NULL;
    if (spec_check (spec, cancel_fd, err, errlen) != 0)
        return -1;
    runner_proc_t *p = xcalloc (1, sizeof *p);
    if (launch_prepare (&p->l, spec, err, errlen) != 0) {
        launch_free (&p->l);
        free (p);
        return -1;
    }
    pid_t parent = getpid ();
    p->t0 = tf_now ();
    p->timeout_s = spec->timeout_s;
    p->cancel_fd = cancel_fd;
    /*  vfork, not fork: the child borrows our memory until it execs, so
     *  nothing of the node's address space is copied (fork's page tables
     *  were a fifth of a no-op task's cost). child_exec is safe for it: it
     *  allocates nothing, touches nothing of ours but its own stack
     *  frame, and leaves by execve or _exit. Once vfork returns here the
     *  child has exec'd or exited: the spec's strings are no longer used. */
    sigset_t mask;
    tf_block_signals (&mask);            /* until the child reset its handlers */
    p->pid = vfork ();
    if (p->pid != 0)
        tf_restore_signals (&mask);
    if (p->pid < 0) {
        tf_error (err, errlen, "runner: vfork: %s", strerror (errno));
        launch_free (&p->l);
        free (p);
        return -1;
    }
    if (p->pid == 0)
        child_exec (&p->l, parent);
    setpgid (p->pid, p->pid);            /* the child does too: whichever is first */
    *proc_p = p;
    return 0;
}

int
runner_finish (runner_proc_t **proc_p, runner_result_t *out, char *err, size_t errlen)
{
    runner_proc_t *p = *proc_p;
    memset (out, 0, sizeof *out);
    runner_spec_t timing = {.timeout_s = p->timeout_s};
    int rc = watch (p->pid, &timing, p->cancel_fd, p->t0, out, err, errlen);
    out->wall_s = tf_now () - p->t0;
    if (rc == 0)
        read_tail (p->l.errfd, out);
    launch_free (&p->l);
    free (p);
    *proc_p = NULL;
    return rc;
}

int
runner_run (const runner_spec_t *spec, int cancel_fd, runner_result_t *out, char *err,
            size_t errlen)
{
    runner_proc_t *p;
    if (runner_start (spec, cancel_fd, &p, err, errlen) != 0) {
        memset (out, 0, sizeof *out);
        return -1;
    }
    return runner_finish (&p, out, err, errlen);
}
