/*  deploy — node processes: place, check, start, watch, stop. See
 *  deploy.h and docs/deploy.md.
 *
 *  Each slot's host kind selects a backend from one table: its up-front
 *  check, the command line that starts it here, and how a stop reaches
 *  it. Processes are started through controller/spawn.c.
 */
#include "controller/deploy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/netns.h"
#include "controller/spawn.h"
#include "controller/ssh.h"
#include "overlay/curve.h"
#include "overlay/util.h"

/*  How often deploy_wait looks for exits. */
#define DEPLOY_WAIT_STEP 0.01
/*  The control socket's file in the private directory of netns nodes. */
#define IPC_SOCKET_NAME "control"
/*  The longest path of a Unix socket (sun_path, with its NUL). */
#define IPC_PATH_MAX (sizeof ((struct sockaddr_un *) 0)->sun_path)
/*  Any port will do to ask the kernel for a route (UDP connect sends
 *  nothing). */
#define ROUTE_PROBE_PORT "9"

typedef struct {
    char *name;
    char *text;              /* the host as the config says it */
    host_t host;
    char *control;           /* control bind (deploy_control_bind) */
    char *bind;              /* --bind, or NULL */
    char *reach;             /* numeric address others reach the node
                                at (ssh, netns), or NULL */
    char *remote;            /* ssh: the node program on the host */
    char *cert;              /* the node's certificate file, or NULL */
    char *cert_text;         /* ssh: its content, sent on the node's
                                stdin */
    int checked;
    int started;
    pid_t pid;
    int stdin_fd;            /* ssh: our end of the client's stdin, or -1 */
    int running;             /* started, not yet reaped */
    int status;              /* waitpid status once reaped */
    int reported;            /* the exit was returned by deploy_poll */
    int signalled;           /* we sent it a signal */
} proc_t;

struct deploy {
    ssh_opts_t ssh;          /* strings owned below */
    char *ssh_config;
    char *ipc_dir;           /* created for the first netns node */
    char *ipc_control;       /* "ipc://DIR/control" */
    proc_t *procs;
    int nprocs;
    int nalloc;
};

/*  One backend: what a host kind does. */
typedef struct {
    host_kind_t kind;
    int (*check) (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
                  char *err, size_t errlen);
    char **(*command) (const deploy_t *self, const proc_t *proc, char *const argv[]);
    int holds_stdin;         /* the node reads a pipe we hold (ssh) */
    void (*signal) (proc_t *proc, int sig);
} backend_t;

static const backend_t *backend_of (const proc_t *proc);

/* ------------------------------------------------------------------------
 *  Addresses.
 */

/*  The first address name resolves to here, numeric, into buf. */
static int
resolve_numeric (const char *name, char *buf, size_t len, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo (name, NULL, &hints, &res);
    if (rc == 0)
        rc = getnameinfo (res->ai_addr, res->ai_addrlen, buf, (socklen_t) len, NULL, 0,
                          NI_NUMERICHOST);
    if (res)
        freeaddrinfo (res);
    if (rc != 0)
        return tf_error (err, errlen, "cannot resolve \"%s\" here: %s", name,
                         rc == EAI_SYSTEM ? strerror (errno) : gai_strerror (rc));
    return 0;
}

/*  The local address the kernel sends from to reach addr (numeric): a UDP
 *  socket connected there, asked for its own name. Nothing is sent. */
static int
route_source (const char *addr, char *src, size_t len, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo (addr, ROUTE_PROBE_PORT, &hints, &res);
    if (rc != 0)
        return tf_error (err, errlen, "bad address %s: %s", addr, gai_strerror (rc));
    struct sockaddr_storage me;
    socklen_t melen = sizeof me;
    int fd = socket (res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int ok = fd >= 0 && connect (fd, res->ai_addr, res->ai_addrlen) == 0
          && getsockname (fd, (struct sockaddr *) &me, &melen) == 0;
    int e = errno;
    if (fd >= 0)
        close (fd);
    freeaddrinfo (res);
    if (!ok)
        return tf_error (err, errlen, "no route from here to %s: %s", addr, strerror (e));
    rc = getnameinfo ((struct sockaddr *) &me, melen, src, (socklen_t) len, NULL, 0,
                      NI_NUMERICHOST);
    return rc == 0 ? 0 : tf_error (err, errlen, "%s", gai_strerror (rc));
}

/*  A numeric address of the loopback interface. */
static int
is_loopback (const char *addr)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton (AF_INET, addr, &v4) == 1)
        return (ntohl (v4.s_addr) >> 24) == IN_LOOPBACKNET;
    return inet_pton (AF_INET6, addr, &v6) == 1 && IN6_IS_ADDR_LOOPBACK (&v6);
}

/*  The control bind for nodes that reach us from src. */
static char *
control_from (const char *src)
{
    if (is_loopback (src) && !strchr (src, ':'))
        return xstrdup (DEPLOY_LOCAL_CONTROL);
    return xasprintf (strchr (src, ':') ? "tcp://[%s]:*" : "tcp://%s:*", src);
}

/* ------------------------------------------------------------------------
 *  Local backend: the node runs here.
 */

/*  The programs of a command line's start are found here: its first word
 *  (the wrapper's, or the node binary) and its last (the node binary);
 *  the words between are the wrapper's arguments. */
static int
programs_here (char *const program[], int nprogram, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    for (int i = 0; i < nprogram; i += nprogram > 1 ? nprogram - 1 : 1) {
        char *path = spawn_resolve (program[i], why, sizeof why);
        free (path);
        if (!path)
            return tf_error (err, errlen, "cannot run the node: %s (see --node-bin, "
                             "TREEFARM_NODE, TREEFARM_NODE_WRAPPER)", why);
    }
    return 0;
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

/*  A given address must be one of this machine (127.0.0.1, ::1,
 *  localhost, an interface's address): resolve it and try to bind each
 *  result to port 0. */
static int
local_address_here (const char *host, char *err, size_t errlen)
{
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
                         "(%s), and a local node runs here (ssh://HOST runs it on HOST)",
                         host, strerror (why));
    return 0;
}

static int
local_check (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
             char *err, size_t errlen)
{
    (void) self;
    if (*proc->host.name && local_address_here (proc->host.name, err, errlen) != 0)
        return -1;
    proc->control = xstrdup (DEPLOY_LOCAL_CONTROL);
    return programs_here (program, nprogram, err, errlen);
}

static char **
local_command (const deploy_t *self, const proc_t *proc, char *const argv[])
{
    (void) self;
    (void) proc;
    int n = 0;
    while (argv[n])
        n++;
    char **out = xcalloc ((size_t) n + 1, sizeof *out);
    for (int i = 0; i < n; i++)
        out[i] = xstrdup (argv[i]);
    return out;
}

static void
local_signal (proc_t *proc, int sig)
{
    kill (proc->pid, sig);
}

/* ------------------------------------------------------------------------
 *  ssh backend: the node runs on another machine (controller/ssh.h).
 */

/*  A slot already checked for the same user, host and port. */
static const proc_t *
ssh_checked_twin (const deploy_t *self, const proc_t *proc)
{
    for (int i = 0; i < self->nprocs; i++) {
        const proc_t *p = &self->procs[i];
        if (p != proc && p->checked && p->host.kind == HOST_SSH
            && strcmp (p->host.name, proc->host.name) == 0
            && strcmp (p->host.user, proc->host.user) == 0
            && p->host.port == proc->host.port)
            return p;
    }
    return NULL;
}

/*  Where the host is, seen from here, and where we reach the host from:
 *  the node's control endpoint. */
static int
ssh_route (proc_t *proc, char *err, size_t errlen)
{
    char addr[NI_MAXHOST], src[NI_MAXHOST], why[TF_ERRLEN];
    if (resolve_numeric (proc->host.name, addr, sizeof addr, why, sizeof why) != 0
        || route_source (addr, src, sizeof src, why, sizeof why) != 0)
        return tf_error (err, errlen, "%s: %s (the host part must be an address or a "
                         "name that resolves both here and on the host)", proc->text,
                         why);
    proc->reach = xstrdup (addr);
    proc->control = control_from (src);
    return 0;
}

static int
ssh_check_slot (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
                char *err, size_t errlen)
{
    const proc_t *twin = ssh_checked_twin (self, proc);
    if (twin) {
        proc->remote = xstrdup (twin->remote);
        proc->reach = xstrdup (twin->reach);
        proc->control = xstrdup (twin->control);
        return 0;
    }
    if (ssh_check (&self->ssh, &proc->host, proc->text, program, nprogram, &proc->remote,
                   err, errlen) != 0)
        return -1;
    return ssh_route (proc, err, errlen);
}

static char **
ssh_command (const deploy_t *self, const proc_t *proc, char *const argv[])
{
    char *command = ssh_node_command (argv, proc->cert_text != NULL);
    char **out = ssh_argv (&self->ssh, &proc->host, 1, command);
    free (command);
    return out;
}

/*  SIGTERM: close the client's stdin; the remote shell sends the node
 *  SIGTERM and the client exits with it. Anything else goes to the
 *  client. */
static void
ssh_signal (proc_t *proc, int sig)
{
    if (sig == SIGTERM && proc->stdin_fd >= 0) {
        close (proc->stdin_fd);
        proc->stdin_fd = -1;
        return;
    }
    kill (proc->pid, sig);
}

/* ------------------------------------------------------------------------
 *  netns backend: the node runs here in a namespace (controller/netns.h).
 */

/*  The private directory of the ipc control endpoint, made once. */
static int
ipc_control (deploy_t *self, char *err, size_t errlen)
{
    if (self->ipc_control)
        return 0;
    const char *tmp = getenv ("TMPDIR");
    char *dir = xasprintf ("%s/treefarm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (strlen (dir) + strlen ("/" IPC_SOCKET_NAME) >= IPC_PATH_MAX) {
        tf_error (err, errlen, "%s: too long for a Unix socket path (at most %zu "
                  "bytes); set TMPDIR shorter", dir, IPC_PATH_MAX - 1);
        free (dir);
        return -1;
    }
    if (!mkdtemp (dir)) {   /* mode 0700 */
        tf_error (err, errlen, "cannot create %s: %s", dir, strerror (errno));
        free (dir);
        return -1;
    }
    self->ipc_dir = dir;
    self->ipc_control = xasprintf ("ipc://%s/%s", dir, IPC_SOCKET_NAME);
    return 0;
}

static int
netns_check_slot (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
                  char *err, size_t errlen)
{
    char addr[INET_ADDRSTRLEN];
    char *ip[] = {"ip"};
    if (programs_here (ip, 1, err, errlen) != 0
        || netns_check (proc->host.name, addr, sizeof addr, err, errlen) != 0
        || programs_here (program, nprogram, err, errlen) != 0
        || ipc_control (self, err, errlen) != 0)
        return -1;
    proc->bind = xstrdup (addr);
    proc->reach = xstrdup (addr);
    proc->control = xstrdup (self->ipc_control);
    return 0;
}

static char **
netns_command (const deploy_t *self, const proc_t *proc, char *const argv[])
{
    (void) self;
    return netns_argv (proc->host.name, argv);
}

/* ------------------------------------------------------------------------
 *  The backends, by host kind.
 */

static const backend_t backends[HOST_KIND_COUNT] = {
    [HOST_LOCAL] = {HOST_LOCAL, local_check, local_command, 0, local_signal},
    [HOST_SSH] = {HOST_SSH, ssh_check_slot, ssh_command, 1, ssh_signal},
    [HOST_NETNS] = {HOST_NETNS, netns_check_slot, netns_command, 0, local_signal},
};

static const backend_t *
backend_of (const proc_t *proc)
{
    return &backends[proc->host.kind];
}

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
    if (self->ipc_dir) {
        char *socket_path = xasprintf ("%s/%s", self->ipc_dir, IPC_SOCKET_NAME);
        unlink (socket_path);
        rmdir (self->ipc_dir);
        free (socket_path);
    }
    free (self->ipc_dir);
    free (self->ipc_control);
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
    if (backend_of (proc)->check (self, proc, program, nprogram, err, errlen) != 0)
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
    if (route_source (child->reach, src, len, why, sizeof why) != 0)
        return tf_error (err, errlen, "its child %s (%s) cannot reach it: %s",
                         child->name, child->text, why);
    const char *given = parent->host.name;
    if (*given && (strcmp (given, "localhost") == 0 || is_loopback (given))
        && !is_loopback (src))
        return tf_error (err, errlen, "binds \"%s\", which its child %s (%s) cannot "
                         "reach; give it host local or an address %s reaches", given,
                         child->name, child->text, child->name);
    if (is_loopback (src) || *given)
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
        return backend_of (proc)->command (self, proc, argv);
    int n = 0;
    while (argv[n])
        n++;
    char **with = xcalloc ((size_t) n + 3, sizeof *with);
    memcpy (with, argv, (size_t) n * sizeof *with);
    with[n] = "--cert";
    with[n + 1] = proc->cert;
    char **out = backend_of (proc)->command (self, proc, with);
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
deploy_set_cert (deploy_t *self, int slot, const char *path, char *err, size_t errlen)
{
    proc_t *proc = slot_proc (self, slot);
    if (!proc || proc->started)
        return tf_error (err, errlen, "slot %d: %s", slot, proc ? "started already"
                                                               : "no such slot");
    char *text = NULL;
    if (proc->host.kind == HOST_SSH) {
        char why[TF_ERRLEN];
        text = xmalloc (CURVE_FILE_MAX + 1);
        FILE *fp = fopen (path, "re");
        size_t n = fp ? fread (text, 1, CURVE_FILE_MAX, fp) : 0;
        snprintf (why, sizeof why, "%s", fp ? "not a certificate" : strerror (errno));
        int bad = !fp || ferror (fp) || !feof (fp) || n == 0 || text[n - 1] != '\n'
                  || memchr (text, '\0', n) || strstr (text, SSH_CERT_END);
        if (fp)
            fclose (fp);
        if (bad) {
            free (text);
            return tf_error (err, errlen, "%s: %s", path, why);
        }
        text[n] = '\0';
    }
    free (proc->cert);
    free (proc->cert_text);
    proc->cert = xstrdup (path);
    proc->cert_text = text;
    return 0;
}

/*  Write text to fd, a pipe whose reader may be gone: EPIPE, without
 *  the SIGPIPE that would end the controller. */
static int
write_pipe (int fd, const char *text, size_t len)
{
    sigset_t pipe_set, old;
    sigemptyset (&pipe_set);
    sigaddset (&pipe_set, SIGPIPE);
    pthread_sigmask (SIG_BLOCK, &pipe_set, &old);
    int rc = tf_write_all (fd, text, len);
    int e = errno;
    if (rc != 0 && e == EPIPE) {
        const struct timespec now = {0, 0};
        sigtimedwait (&pipe_set, NULL, &now);
    }
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    errno = e;
    return rc;
}

/*  An ssh node's certificate, then the end line, on its stdin. */
static int
send_cert (proc_t *proc, char *err, size_t errlen)
{
    char *text = xasprintf ("%s%s\n", proc->cert_text, SSH_CERT_END);
    int rc = write_pipe (proc->stdin_fd, text, strlen (text));
    explicit_bzero (text, strlen (text));
    free (text);
    if (rc != 0)
        return tf_error (err, errlen, "cannot send its certificate to ssh: %s",
                         strerror (errno));
    return 0;
}

int
deploy_start (deploy_t *self, int slot, char *const argv[], char *err, size_t errlen)
{
    proc_t *proc = slot_proc (self, slot);
    if (!proc || proc->started)
        return tf_error (err, errlen, "slot %d: %s", slot, proc ? "started already"
                                                               : "no such slot");
    const backend_t *backend = backend_of (proc);
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
    return proc->cert_text && proc->stdin_fd >= 0 ? send_cert (proc, err, errlen) : 0;
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
    if (!proc->running && proc->stdin_fd >= 0) {
        close (proc->stdin_fd);
        proc->stdin_fd = -1;
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
        if (proc->started && !proc->running && !proc->reported) {
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
        backend_of (proc)->signal (proc, sig);
    }
}

void
deploy_kill (deploy_t *self, int slot)
{
    if (!deploy_is_running (self, slot))
        return;
    proc_t *proc = &self->procs[slot];
    proc->signalled = 1;
    backend_of (proc)->signal (proc, SIGTERM);
    backend_of (proc)->signal (proc, SIGKILL);
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
