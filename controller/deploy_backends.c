/*  deploy_backends — the deployment's backends by host kind, and what
 *  more than one of them needs (deploy_int.h).
 *
 *  Each slot's host kind selects a backend from one table: its up-front
 *  check, the command line that starts it here, and how a signal reaches
 *  it. The backends themselves are deploy_local.c, deploy_ssh.c,
 *  deploy_netns.c and deploy_slurm.c; a new kind of host is a file like them and one line
 *  in the table below. Here too: the route from this machine to an
 *  address (ssh checks it, deploy_route uses it for a local parent), the
 *  programs found here (local, netns), and a signal to the pid.
 */
#include "controller/deploy_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "controller/spawn.h"
#include "overlay/util.h"

/*  Any port will do to ask the kernel for a route (UDP connect sends
 *  nothing). */
#define ROUTE_PROBE_PORT "9"

/* ------------------------------------------------------------------------
 *  The backends, by host kind.
 */

static const backend_t *const backends[HOST_KIND_COUNT] = {
    [HOST_LOCAL] = &deploy_backend_local,
    [HOST_SSH] = &deploy_backend_ssh,
    [HOST_NETNS] = &deploy_backend_netns,
    [HOST_SLURM] = &deploy_backend_slurm,
};

const backend_t *
deploy_backend_of (const proc_t *proc)
{
    return backends[proc->host.kind];
}

/* ------------------------------------------------------------------------
 *  Addresses.
 */

/*  A UDP socket connected to addr, asked for its own name. */
int
deploy_route_source (const char *addr, char *src, size_t len, char *err, size_t errlen)
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

int
deploy_resolve_numeric (const char *name, char *buf, size_t len, char *err,
                        size_t errlen)
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

char *
deploy_control_from (const char *src)
{
    if (deploy_is_loopback (src) && !strchr (src, ':'))
        return xstrdup (DEPLOY_LOCAL_CONTROL);
    return xasprintf (strchr (src, ':') ? "tcp://[%s]:*" : "tcp://%s:*", src);
}

int
deploy_is_loopback (const char *addr)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton (AF_INET, addr, &v4) == 1)
        return (ntohl (v4.s_addr) >> 24) == IN_LOOPBACKNET;
    return inet_pton (AF_INET6, addr, &v6) == 1 && IN6_IS_ADDR_LOOPBACK (&v6);
}

/* ------------------------------------------------------------------------
 *  Processes here.
 */

/*  The programs of a command line's start are found here: its first word
 *  (the wrapper's, or the node binary) and its last (the node binary);
 *  the words between are the wrapper's arguments. */
int
deploy_programs_here (char *const program[], int nprogram, char *err, size_t errlen)
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

void
deploy_signal_pid (deploy_t *self, proc_t *proc, int sig)
{
    (void) self;
    kill (proc->pid, sig);
}

int
deploy_write_pipe (int fd, const char *text, size_t len)
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
