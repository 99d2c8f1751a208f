/*  deploy_ssh — the ssh backend (deploy_int.h): the node runs on another
 *  machine, and here an `ssh` client stands for it (controller/ssh.h).
 *  Its check, once per user, host and port: what ssh's configuration
 *  makes of the host's name (ssh -G: an alias's HostName, Port, User),
 *  where that machine is reached from here (the node's control
 *  endpoint), then the host answers and runs the node. The client's
 *  stdin is a pipe we hold: the node's certificate goes through it, and
 *  closing it stops the node.
 */
#include "controller/deploy_int.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "controller/ssh_resolve.h"
#include "overlay/curve.h"
#include "overlay/stepin.h"
#include "overlay/util.h"

/* ------------------------------------------------------------------------
 *  Where the host is.
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

/*  Where the machine called name (the hostname ssh -G gives) is, seen
 *  from here, and where we reach it from: the node's control endpoint. */
static int
ssh_route (proc_t *proc, const char *name, char *err, size_t errlen)
{
    char addr[NI_MAXHOST], src[NI_MAXHOST], why[TF_ERRLEN], q[TF_ERRLEN / 4];
    if (deploy_resolve_numeric (name, addr, sizeof addr, why, sizeof why) == 0
        && deploy_route_source (addr, src, sizeof src, why, sizeof why) == 0) {
        free (proc->reach);
        free (proc->control);
        proc->reach = xstrdup (addr);
        proc->control = deploy_control_from (src);
        return 0;
    }
    if (strcmp (name, proc->host.name) == 0)
        return tf_error (err, errlen, "%s: %s (the host part must be an address or a "
                         "name that resolves both here and on the host)", proc->text,
                         why);
    return tf_error (err, errlen, "%s: %s (ssh's configuration gives %s the HostName %s "
                     "(ssh -G); it must resolve both here and on the host)", proc->text,
                     why, tf_quote (q, sizeof q, proc->host.name), name);
}

/*  What the host's name stands for in ssh's configuration (ssh -G), and
 *  where that machine is: the node binds its hostname when it is not the
 *  name in the URL (an alias), and the run shows where it goes. */
static int
ssh_locate (deploy_t *self, proc_t *proc, char *err, size_t errlen)
{
    ssh_target_t target;
    if (ssh_resolve (&self->ssh, &proc->host, proc->text, &target, err, errlen) != 0
        || ssh_route (proc, target.hostname, err, errlen) != 0)
        return -1;
    free (proc->bind);
    free (proc->target);
    proc->bind = strcmp (target.hostname, proc->host.name) != 0
                 ? xstrdup (target.hostname) : NULL;
    char *where = ssh_target_str (&target);
    proc->target = strcmp (target.hostname, proc->reach) == 0
                   ? where : xasprintf ("%s (%s)", where, proc->reach);
    if (proc->target != where)
        free (where);
    return 0;
}

/* ------------------------------------------------------------------------
 *  The backend.
 */

static int
ssh_check_slot (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
                char *err, size_t errlen)
{
    const proc_t *twin = ssh_checked_twin (self, proc);
    if (twin) {
        proc->remote = xstrdup (twin->remote);
        proc->reach = xstrdup (twin->reach);
        proc->control = xstrdup (twin->control);
        proc->target = xstrdup (twin->target);
        proc->bind = twin->bind ? xstrdup (twin->bind) : NULL;
        return 0;
    }
    if (ssh_locate (self, proc, err, errlen) != 0)
        return -1;
    return ssh_check (&self->ssh, &proc->host, proc->text, program, nprogram,
                      &proc->remote, err, errlen);
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
ssh_signal (deploy_t *self, proc_t *proc, int sig)
{
    if (sig == SIGTERM && proc->stdin_fd >= 0) {
        close (proc->stdin_fd);
        proc->stdin_fd = -1;
        return;
    }
    deploy_signal_pid (self, proc, sig);
}

const backend_t deploy_backend_ssh = {
    .kind = HOST_SSH,
    .check = ssh_check_slot,
    .command = ssh_command,
    .holds_stdin = 1,
    .signal = ssh_signal,
};

/* ------------------------------------------------------------------------
 *  The node's certificate, on the client's stdin.
 */

int
deploy_ssh_cert_ok (const char *text, char *err, size_t errlen)
{
    size_t n = text ? strlen (text) : 0;
    if (n == 0 || n > CURVE_FILE_MAX || text[n - 1] != '\n' || strstr (text, SSH_CERT_END)
        || strstr (text, STEPIN_CERT_END)) {
        tf_error (err, errlen, "not a certificate to send on a node's stdin");
        return 0;
    }
    return 1;
}

int
deploy_ssh_cert_send (proc_t *proc, char *err, size_t errlen)
{
    char *text = xasprintf ("%s%s\n", proc->cert_text, SSH_CERT_END);
    int rc = deploy_write_pipe (proc->stdin_fd, text, strlen (text));
    explicit_bzero (text, strlen (text));
    free (text);
    if (rc != 0)
        return tf_error (err, errlen, "cannot send its certificate to ssh: %s",
                         strerror (errno));
    return 0;
}
