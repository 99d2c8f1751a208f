/*  spawn — child processes of the controller. See spawn.h. */
#include "controller/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "overlay/util.h"

/*  How often spawn_capture looks at its command while it runs (ms). */
#define CAPTURE_POLL_MS 50
/*  The highest descriptor closed by hand where close_range is missing. */
#define FD_SCAN_MAX 65536
/*  Bytes read from a captured pipe at a time. */
#define CAPTURE_CHUNK 1024
/*  PATH when the environment has none, as execvp assumes. */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

char *
spawn_resolve (const char *program, char *err, size_t errlen)
{
    struct stat st;
    if (strchr (program, '/')) {
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
        path = DEFAULT_PATH;
    while (*path) {
        const char *end = strchrnul (path, ':');
        int dirlen = (int) (end - path);
        char *candidate = dirlen ? xasprintf ("%.*s/%s", dirlen, path, program)
                                 : xasprintf ("./%s", program);
        if (stat (candidate, &st) == 0 && S_ISREG (st.st_mode)
            && access (candidate, X_OK) == 0)
            return candidate;
        free (candidate);
        path = *end ? end + 1 : end;
    }
    tf_error (err, errlen, "%s: not found on PATH", program);
    return NULL;
}

/*  In the child: put fd on target (0, 1, 2); -1 leaves stdout and stderr
 *  alone and gives stdin /dev/null. Async-signal-safe. */
static int
child_fd (int fd, int target)
{
    if (fd < 0 && target != STDIN_FILENO)
        return 0;
    int opened = fd < 0;
    if (opened && (fd = open ("/dev/null", O_RDONLY)) < 0)
        return -1;
    if (fd != target && dup2 (fd, target) < 0)
        return -1;
    if (opened && fd != target)
        close (fd);
    return 0;
}

/*  In the child, between fork and exec: async-signal-safe calls only. On
 *  failure the errno goes back through errfd and the child exits 127. */
static void
child_exec (const char *path, char *const argv[], const int fds[3], pid_t parent,
            int errfd)
{
    int e;
    /*  Die with the controller, even on SIGKILL. Check the parent after
     *  setting it: if the controller died in between, nobody will. */
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0)
        goto fail;
    if (getppid () != parent)
        _exit (127);

    /*  Undo what the controller changed: blocked and ignored signals
     *  survive exec. */
    tf_child_reset_signals ();

    for (int target = 0; target < 3; target++)
        if (child_fd (fds[target], target) != 0)
            goto fail;
    /*  No descriptor but stdio crosses exec (errfd is close-on-exec too). */
    if (close_range (3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
        for (int fd = 3; fd < FD_SCAN_MAX; fd++)
            if (fd != errfd)
                close (fd);
    execv (path, argv);
fail:
    e = errno;
    if (write (errfd, &e, sizeof e) < 0) {
        /* nothing more to say */
    }
    _exit (127);
}

/*  Whether the child's exec worked, from the close-on-exec pipe: end of
 *  file, it did; an int, it failed with that errno (the child is reaped
 *  and err says so). Returns 0 or -1. */
static int
exec_status (pid_t child, int fd, const char *path, char *err, size_t errlen)
{
    int child_errno = 0;
    ssize_t n;
    do
        n = read (fd, &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t) sizeof child_errno)
        return 0;
    while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
        ;
    return tf_error (err, errlen, "cannot run %s: %s", path, strerror (child_errno));
}

int
spawn_start (char *const argv[], const int fds[3], pid_t *pid, char *err, size_t errlen)
{
    char *path = spawn_resolve (argv[0], err, errlen);
    if (!path)
        return -1;
    int rc = -1;
    int pipefd[2];
    if (pipe2 (pipefd, O_CLOEXEC) != 0) {
        tf_error (err, errlen, "pipe: %s", strerror (errno));
        goto out_free_path;
    }
    pid_t parent = getpid ();
    /*  vfork, not fork: the child borrows the controller's memory until
     *  it execs, so nothing of the controller's address space (ZeroMQ's
     *  threads, a bag of a million tasks) is copied per node. child_exec
     *  is safe for it: async-signal-safe calls only, nothing allocated,
     *  and it leaves by execv or _exit (node/runner.c does the same).
     *  Signals stay blocked until the child has reset their handlers
     *  (tf_child_reset_signals), so none of ours runs in it. */
    sigset_t mask;
    tf_block_signals (&mask);
    pid_t child = vfork ();
    if (child != 0)
        tf_restore_signals (&mask);
    if (child < 0) {
        tf_error (err, errlen, "vfork: %s", strerror (errno));
        goto out_close_pipe;
    }
    if (child == 0) {
        close (pipefd[0]);
        child_exec (path, argv, fds, parent, pipefd[1]);
    }
    close (pipefd[1]);
    pipefd[1] = -1;

    if (exec_status (child, pipefd[0], path, err, errlen) != 0)
        goto out_close_pipe;
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

/*  One captured stream: its pipe, its buffer and how much is kept. */
typedef struct {
    int fd;
    char *buf;
    size_t used;
} capture_t;

/*  Read what is there; keep up to SPAWN_CAPTURE_MAX bytes. Close the
 *  pipe at end of file. */
static void
capture_read (capture_t *c)
{
    char chunk[CAPTURE_CHUNK];
    ssize_t n = read (c->fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close (c->fd);
        c->fd = -1;
        return;
    }
    size_t keep = SPAWN_CAPTURE_MAX - c->used;
    if (keep > (size_t) n)
        keep = (size_t) n;
    memcpy (c->buf + c->used, chunk, keep);
    c->used += keep;
    c->buf[c->used] = '\0';
}

/*  Read both streams until the command has exited and they are drained,
 *  or the deadline. A grandchild that keeps a pipe open (an ssh
 *  ControlPersist master) does not hold us once the command is gone. */
static void
capture_loop (pid_t pid, capture_t c[2], double timeout, spawn_result_t *res)
{
    double deadline = tf_now () + timeout;
    int exited = 0;
    while (!exited || c[0].fd >= 0 || c[1].fd >= 0) {
        struct pollfd pfd[2] = {{.fd = c[0].fd, .events = POLLIN},
                                {.fd = c[1].fd, .events = POLLIN}};
        int ready = poll (pfd, 2, exited ? 0 : CAPTURE_POLL_MS);
        for (int i = 0; i < 2 && ready > 0; i++)
            if (c[i].fd >= 0 && pfd[i].revents)
                capture_read (&c[i]);
        if (exited && ready <= 0)
            break;
        if (!exited && waitpid (pid, &res->status, WNOHANG) == pid)
            exited = 1;
        if (!exited && tf_now () > deadline) {
            res->timed_out = 1;
            kill (pid, SIGKILL);
            while (waitpid (pid, &res->status, 0) < 0 && errno == EINTR)
                ;
            exited = 1;
        }
    }
    for (int i = 0; i < 2; i++)
        if (c[i].fd >= 0)
            close (c[i].fd);
}

int
spawn_capture (char *const argv[], int in_fd, double timeout, spawn_result_t *res,
               char *err, size_t errlen)
{
    memset (res, 0, sizeof *res);
    int out[2], errp[2];
    if (pipe2 (out, O_CLOEXEC) != 0)
        return tf_error (err, errlen, "pipe: %s", strerror (errno));
    if (pipe2 (errp, O_CLOEXEC) != 0) {
        close (out[0]);
        close (out[1]);
        return tf_error (err, errlen, "pipe: %s", strerror (errno));
    }
    const int fds[3] = {in_fd, out[1], errp[1]};
    pid_t pid;
    int rc = spawn_start (argv, fds, &pid, err, errlen);
    close (out[1]);
    close (errp[1]);
    if (rc != 0) {
        close (out[0]);
        close (errp[0]);
        return -1;
    }
    capture_t c[2] = {{.fd = out[0], .buf = res->out}, {.fd = errp[0], .buf = res->err}};
    capture_loop (pid, c, timeout, res);
    return 0;
}

const char *
spawn_one_line (const char *text, char *buf, size_t len)
{
    size_t n = 0;
    const unsigned char *p = (const unsigned char *) text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    for (; *p && n + 5 < len; p++) {
        if (*p == '\n' || *p == '\r') {
            while (p[1] == '\n' || p[1] == '\r')
                p++;
            if (p[1])
                n += (size_t) snprintf (buf + n, len - n, " | ");
        }
        else if (*p < 0x20 || *p == 0x7f)
            n += (size_t) snprintf (buf + n, len - n, "\\x%02x", *p);
        else
            buf[n++] = (char) *p;
    }
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    if (len > 0)
        buf[n < len ? n : len - 1] = '\0';
    return buf;
}

void
spawn_argv_free (char **argv)
{
    if (!argv)
        return;
    for (char **w = argv; *w; w++)
        free (*w);
    free (argv);
}
