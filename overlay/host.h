/*  host — where and how one tree node runs: a node's `host` in the
 *  experiment (docs/config.md, docs/deploy.md).
 *
 *  Four forms:
 *    local                       this machine; the node binds 127.0.0.1
 *                                (also any numeric address or name of this
 *                                machine, "127.0.0.2", "::1", "localhost":
 *                                the node binds that address)
 *    ssh://[user@]host[:port]    started over OpenSSH on host; the node
 *                                binds host's address, resolved on host
 *                                (for a Host alias of the ssh
 *                                configuration, the controller passes
 *                                the HostName ssh -G gives with --bind)
 *    netns:NAME                  started in the network namespace NAME on
 *                                this machine; the controller tells the
 *                                node which address to bind
 *    slurm                       a host of the Slurm allocation the run
 *                                is in (treefarm run --slurm), chosen
 *                                by the controller, which tells the node
 *                                which address to bind
 *
 *  The controller's config loader, the deployment and the node all read
 *  the text with host_parse, so they agree on what it means. Pure: no
 *  socket, no name resolution.
 */
#ifndef TF_HOST_H
#define TF_HOST_H

#include <stddef.h>

/*  The longest host name (a DNS name; an IPv6 literal is shorter), user
 *  name (Linux's useradd limit) and namespace name (a file name in
 *  /run/netns). */
#define HOST_NAME_MAX_LEN 253
#define HOST_USER_MAX_LEN 32
#define HOST_NETNS_MAX_LEN 255
#define HOST_PORT_MAX 65535

/*  What `local` binds. */
#define HOST_LOCAL_ADDRESS "127.0.0.1"
/*  The host text of a node the Slurm allocation places. */
#define HOST_SLURM_TEXT "slurm"

typedef enum {
    HOST_LOCAL = 0,          /* this machine */
    HOST_SSH,                /* another machine, over ssh */
    HOST_NETNS,              /* a network namespace of this machine */
    HOST_SLURM,              /* a host of the run's Slurm allocation */
    HOST_KIND_COUNT
} host_kind_t;

typedef struct {
    host_kind_t kind;
    /*  LOCAL: the address given ("" for `local`); SSH: the host part,
     *  without the brackets of an IPv6 literal; NETNS: the namespace. */
    char name[HOST_NETNS_MAX_LEN + 1];
    char user[HOST_USER_MAX_LEN + 1];   /* SSH: "" when not given */
    int port;                /* SSH: 0 when not given (ssh decides) */
} host_t;

/*  Parse text, a node's `host`, into *out. The syntax is checked
 *  strictly: a known scheme; a user of 1..32 characters from
 *  [A-Za-z0-9_.-]; a host name from [A-Za-z0-9_.-] (at most 253) or an
 *  IPv6 literal in brackets; a port in 1..65535; a namespace name of
 *  1..255 characters from [A-Za-z0-9_.-], not "." or ".."; none may start
 *  with '-', so nothing reads as an option to ssh or ip. A bare IPv4 or
 *  IPv6 address or a host name is the local form; "slurm" is the Slurm
 *  form (a machine called slurm is named by its address). Returns 0, or
 *  -1 with a one-line message in err that quotes the text (e.g. `bad port "0" in
 *  "ssh://h:0" (expected 1..65535)`). */
int host_parse (const char *text, host_t *out, char *err, size_t errlen);

/*  "local", "ssh", "netns", "slurm". */
const char *host_kind_str (host_kind_t kind);

/*  The address or name the node binds for its children, to be resolved
 *  on the node's machine: LOCAL: the address given, or
 *  HOST_LOCAL_ADDRESS for `local`; SSH: the host part; NETNS and SLURM:
 *  NULL (only the controller can find it: it passes it to the node). Borrowed from
 *  host. */
const char *host_bind_name (const host_t *host);

#endif
