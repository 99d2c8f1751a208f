/*  ssh_resolve — what ssh makes of an ssh host's name (docs/deploy.md,
 *  "Host aliases: what ssh -G decides").
 *
 *  Users name machines by the Host entries of their ssh configuration
 *  (`Host lo` / `HostName 127.0.0.1` / `Port 2222`). Only ssh knows what
 *  such a name stands for (Host patterns, Match blocks, %-tokens,
 *  Include, the defaults), so rather than reading its files ourselves we
 *  ask it: `ssh -G` prints the configuration a connection would use,
 *  without connecting. Its hostname is the machine the node runs on (the
 *  controller routes to it, the node binds it); its port and user are
 *  what the connections will use, which the run shows.
 */
#ifndef TF_SSH_RESOLVE_H
#define TF_SSH_RESOLVE_H

#include <stddef.h>

#include "controller/ssh.h"
#include "overlay/host.h"

/*  Seconds `ssh -G` may take: it reads files and connects nowhere, but a
 *  `Match exec` in the configuration runs a command. */
#define SSH_RESOLVE_TIMEOUT 10.0
/*  Lines of its output read at most (it prints about 90, the three we
 *  need first); its bytes are bounded by SPAWN_CAPTURE_MAX (spawn.h). */
#define SSH_RESOLVE_MAX_LINES 256

/*  Where the connection to a host goes, as ssh -G says. */
typedef struct {
    char hostname[HOST_NAME_MAX_LEN + 1];   /* an IPv6 one without brackets */
    char user[HOST_USER_MAX_LEN + 1];
    int port;
} ssh_target_t;

/*  ssh -G -T [-F FILE] [-p PORT] [-l USER] HOST: the port and user of the
 *  host's URL are given, so they win over the configuration's, as they
 *  do on the connections (ssh_argv). A new NULL-terminated array
 *  (spawn_argv_free). */
char **ssh_resolve_argv (const ssh_opts_t *opts, const host_t *host);

/*  Read ssh -G's output (text, NUL-terminated): its first
 *  SSH_RESOLVE_MAX_LINES complete lines, "KEY VALUE" each, for hostname
 *  (1..HOST_NAME_MAX_LEN characters from [A-Za-z0-9_.-], not starting
 *  with - or ., or an IPv6 address), port (1..65535) and user (1..
 *  HOST_USER_MAX_LEN printable characters, no blank, not starting with
 *  -). Returns 0, or -1 with a message in err naming the key. */
int ssh_resolve_parse (const char *text, ssh_target_t *out, char *err, size_t errlen);

/*  Run ssh -G for host (text: how the config writes it, for messages)
 *  and read what it says into *out. Returns 0, or -1 with a message in
 *  err naming text and the name ssh was asked about: ssh cannot run,
 *  exits non-zero (its stderr quoted on one line), takes longer than
 *  SSH_RESOLVE_TIMEOUT, or prints what ssh_resolve_parse refuses. */
int ssh_resolve (const ssh_opts_t *opts, const host_t *host, const char *text,
                 ssh_target_t *out, char *err, size_t errlen);

/*  "USER@HOSTNAME:PORT", an IPv6 hostname in brackets. A new string. */
char *ssh_target_str (const ssh_target_t *target);

#endif
