/*  ssh — running a node on another machine over OpenSSH (docs/deploy.md).
 *
 *  Each node on an `ssh://[user@]host[:port]` host is stood for by one
 *  local `ssh` client process. Its remote command runs the node in the
 *  background and watches the channel's stdin, which the controller holds
 *  open through a pipe: when the controller closes it (a stop) or dies
 *  (any death: the kernel closes the pipe), or the ssh client or its
 *  connection dies (sshd closes the channel), the remote shell reads end
 *  of file and sends the node SIGTERM. The ssh client exits with the
 *  node's status, so a reaped client means a finished remote node when
 *  the connection is up. ServerAliveInterval ends a client whose server
 *  went silent.
 *
 *  This module builds the command lines (pure, so the tests read them)
 *  and runs the up-front checks: reach the host, copy the node binary
 *  when asked, find the node program there.
 */
#ifndef TF_SSH_H
#define TF_SSH_H

#include <stddef.h>

#include "overlay/host.h"

/*  Seconds ssh may take to connect (ConnectTimeout); seconds between
 *  keep-alives on a node's connection and how many may go unanswered
 *  before the client gives up (ServerAliveInterval, ServerAliveCountMax);
 *  seconds one up-front command may take in all. */
#define SSH_CONNECT_TIMEOUT 5
#define SSH_ALIVE_INTERVAL 5
#define SSH_ALIVE_COUNT 3
#define SSH_CHECK_TIMEOUT 60.0
/*  ssh's exit status for its own errors (connection, authentication). */
#define SSH_EXIT_ERROR 255
/*  Where --push-binary puts the node binary on a host, under $HOME. */
#define SSH_CACHE_DIR ".cache/treefarm"
/*  The line that ends a certificate on an ssh node's stdin: a comment
 *  line no certificate has (overlay/curve.h). */
#define SSH_CERT_END "#treefarm-cert-end"
/*  The longest path to the node program a host may report. */
#define SSH_PROGRAM_MAX 4096

typedef struct {
    const char *config;      /* -F FILE for every ssh, or NULL: ssh reads
                                ~/.ssh/config */
    int push_binary;         /* copy the node binary to each host */
} ssh_opts_t;

/*  The ssh command line for host with the remote command (NULL for none
 *  yet): ssh -o BatchMode=yes -o ConnectTimeout=5 [keep-alives -T] [-F
 *  FILE] [-p PORT] [-l USER] HOST COMMAND. keepalive adds the options of a
 *  node's long-lived connection. A new NULL-terminated array
 *  (spawn_argv_free). */
char **ssh_argv (const ssh_opts_t *opts, const host_t *host, int keepalive,
                 const char *command);

/*  Append to argv at n the words that name host to ssh as the user wrote
 *  it: [-F FILE] [-p PORT] [-l USER] HOST (at most 7). Returns the new n.
 *  Every ssh command the controller runs, ssh -G included, ends so. */
int ssh_target_words (char **argv, int n, const ssh_opts_t *opts, const host_t *host);

/*  The remote command that runs argv (its words quoted) with its life
 *  tied to the channel's stdin, as the header says, and exits with its
 *  status: "sh -c '...'". With cert, the script first reads the node's
 *  certificate from the channel's stdin, up to a line SSH_CERT_END, into
 *  a file of its own (mktemp under $TMPDIR or /tmp, umask 077: mode
 *  0600), adds `--cert FILE` to the node's words, and removes the file
 *  when the node has exited, however it ends. A new string. */
char *ssh_node_command (char *const argv[], int cert);

/*  The remote path of the pushed binary whose content hash is hash:
 *  "$HOME/.cache/treefarm/treefarm-node-HASH", as a shell word that
 *  expands $HOME. A new string. */
char *ssh_cache_word (const char *hash);

/*  The content hash of the file at path (SHA-1, 40 hex digits) into
 *  hash (at least 41 bytes). Returns 0, or -1 with a message in err. */
int ssh_file_hash (const char *path, char *hash, size_t len, char *err, size_t errlen);

/*  The up-front checks for one host, whose text (ssh://...) names it in
 *  messages. program[0..nprogram) is the start of a node's command line
 *  here: wrapper words ($TREEFARM_NODE_WRAPPER), then the node binary.
 *  ssh must reach the host and log in (ssh HOST true); with
 *  opts->push_binary, the node binary is found in the host's cache by
 *  its content hash or copied there; then the wrapper's first word must
 *  be on the remote PATH and the node program must answer --help there:
 *  the pushed one, or else the node binary's path or, failing that, its
 *  name on the remote PATH. Stores in *remote (a new string) the node
 *  program's absolute path on the host. Returns 0, or -1 with a message
 *  in err that quotes ssh's or the host's stderr. */
int ssh_check (const ssh_opts_t *opts, const host_t *host, const char *text,
               char *const program[], int nprogram, char **remote, char *err,
               size_t errlen);

#endif
