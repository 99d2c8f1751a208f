/*  netns — running a node inside a network namespace of this machine
 *  (docs/deploy.md).
 *
 *  A node on `netns:NAME` is started as `ip netns exec NAME NODE...`. ip
 *  enters the namespace and execs the node in its own process, so the
 *  process the controller watches is the node itself: it keeps the
 *  parent-death signal and takes signals directly. The node binds the
 *  namespace's first global IPv4 address and reaches the controller over
 *  an ipc:// endpoint (a Unix socket in the file system, which every
 *  network namespace sees).
 */
#ifndef TF_NETNS_H
#define TF_NETNS_H

#include <stddef.h>

/*  Where `ip netns add` mounts the namespaces. */
#define NETNS_RUN_DIR "/run/netns"
/*  Seconds one up-front `ip` command may take. */
#define NETNS_CHECK_TIMEOUT 10.0

/*  The command line that runs argv (NULL-terminated) in namespace name:
 *  ip netns exec NAME ARGV... A new NULL-terminated array
 *  (spawn_argv_free). */
char **netns_argv (const char *name, char *const argv[]);

/*  The first address in the output of `ip -o -4 addr show scope global`
 *  ("2: veth0    inet 198.18.0.2/30 brd ... scope global veth0 ..."), into
 *  addr (len bytes). Returns 0, or -1 when there is none. */
int netns_parse_address (const char *ip_output, char *addr, size_t len);

/*  The up-front checks for namespace name: it exists (NETNS_RUN_DIR/NAME),
 *  this process may enter it (ip netns exec NAME true), and it has a
 *  global IPv4 address, stored in addr (len bytes) for the node to bind.
 *  Returns 0, or -1 with a message in err naming the namespace and
 *  quoting ip's stderr. */
int netns_check (const char *name, char *addr, size_t len, char *err, size_t errlen);

#endif
