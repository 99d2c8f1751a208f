/*  deploy_local — the local backend (deploy_int.h): the node runs here,
 *  a child of the controller. Its check: a given host is an address of
 *  this machine, and the node's programs are found here; its command
 *  line is the node's own; a signal goes to the node.
 */
#include "controller/deploy_int.h"

#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "overlay/util.h"

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
    return deploy_programs_here (program, nprogram, err, errlen);
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

const backend_t deploy_backend_local = {
    .kind = HOST_LOCAL,
    .check = local_check,
    .command = local_command,
    .holds_stdin = 0,
    .signal = deploy_signal_pid,
};
