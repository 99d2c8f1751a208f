/*  deploy_netns — the netns backend (deploy_int.h): the node runs here in
 *  a network namespace (controller/netns.h), started by `ip netns exec`,
 *  which becomes the node. Its check: `ip` and the node's programs are
 *  found here, the namespace has an address; its control endpoint is ipc
 *  in a private directory of the deployment's, made for the first netns
 *  node and removed with the deployment.
 */
#include "controller/deploy_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "controller/netns.h"
#include "overlay/util.h"

/*  The control socket's file in the private directory of netns nodes. */
#define IPC_SOCKET_NAME "control"
/*  The longest path of a Unix socket (sun_path, with its NUL). */
#define IPC_PATH_MAX (sizeof ((struct sockaddr_un *) 0)->sun_path)

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

void
deploy_ipc_remove (deploy_t *self)
{
    if (self->ipc_dir) {
        char *socket_path = xasprintf ("%s/%s", self->ipc_dir, IPC_SOCKET_NAME);
        unlink (socket_path);
        rmdir (self->ipc_dir);
        free (socket_path);
    }
    free (self->ipc_dir);
    free (self->ipc_control);
    self->ipc_dir = self->ipc_control = NULL;
}

static int
netns_check_slot (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
                  char *err, size_t errlen)
{
    char addr[INET_ADDRSTRLEN];
    char *ip[] = {"ip"};
    if (deploy_programs_here (ip, 1, err, errlen) != 0
        || netns_check (proc->host.name, addr, sizeof addr, err, errlen) != 0
        || deploy_programs_here (program, nprogram, err, errlen) != 0
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

const backend_t deploy_backend_netns = {
    .kind = HOST_NETNS,
    .check = netns_check_slot,
    .command = netns_command,
    .holds_stdin = 0,
    .signal = deploy_signal_pid,
};
