/*  ssh — nodes over OpenSSH. See ssh.h and docs/deploy.md.
 *
 *  Remote commands are POSIX sh scripts run as `sh -c SCRIPT`, every word
 *  taken from the controller quoted, so the user's login shell only has
 *  to pass one quoted argument to sh.
 */
#include "controller/ssh.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/shell.h"
#include "controller/spawn.h"
#include "overlay/util.h"

/*  The most words ssh_argv puts before the remote command. */
#define SSH_ARGV_MAX 24
/*  Bytes read at a time while hashing the node binary. */
#define HASH_CHUNK 65536
/*  The length of a SHA-1 in hex. */
#define HASH_HEX_LEN 40
/*  Exit statuses of the remote check script (find_program). */
#define CHECK_NO_WRAPPER 125
#define CHECK_HELP_FAILED 126
#define CHECK_NOT_FOUND 127

/*  "sh -c 'SCRIPT'": the script run by sh whatever the login shell. */
static char *
sh_command (const char *script)
{
    char *quoted = shell_quote (script);
    char *command = xasprintf ("sh -c %s", quoted);
    free (quoted);
    return command;
}

int
ssh_target_words (char **argv, int n, const ssh_opts_t *opts, const host_t *host)
{
    if (opts->config) {
        argv[n++] = xstrdup ("-F");
        argv[n++] = xstrdup (opts->config);
    }
    if (host->port) {
        argv[n++] = xstrdup ("-p");
        argv[n++] = xasprintf ("%d", host->port);
    }
    if (*host->user) {
        argv[n++] = xstrdup ("-l");
        argv[n++] = xstrdup (host->user);
    }
    argv[n++] = xstrdup (host->name);
    return n;
}

char **
ssh_argv (const ssh_opts_t *opts, const host_t *host, int keepalive, const char *command)
{
    char **argv = xcalloc (SSH_ARGV_MAX, sizeof *argv);
    int n = 0;
    argv[n++] = xstrdup ("ssh");
    argv[n++] = xstrdup ("-o");
    argv[n++] = xstrdup ("BatchMode=yes");
    argv[n++] = xstrdup ("-o");
    argv[n++] = xasprintf ("ConnectTimeout=%d", SSH_CONNECT_TIMEOUT);
    if (keepalive) {
        argv[n++] = xstrdup ("-o");
        argv[n++] = xasprintf ("ServerAliveInterval=%d", SSH_ALIVE_INTERVAL);
        argv[n++] = xstrdup ("-o");
        argv[n++] = xasprintf ("ServerAliveCountMax=%d", SSH_ALIVE_COUNT);
    }
    argv[n++] = xstrdup ("-T");
    n = ssh_target_words (argv, n, opts, host);
    if (command)
        argv[n++] = xstrdup (command);
    argv[n] = NULL;
    return argv;
}

char *
ssh_node_command (char *const argv[], int cert)
{
    size_t len = 1;
    for (int i = 0; argv[i]; i++)
        len += 4 * strlen (argv[i]) + 3;
    char *words = xcalloc (1, len);
    for (int i = 0; argv[i]; i++) {
        char *q = shell_quote (argv[i]);
        strcat (strcat (words, i ? " " : ""), q);
        free (q);
    }
    /*  The node starts with glibc's tcache off unless the remote
     *  environment sets it (overlay/util.h, TF_MALLOC_TUNABLE): ssh does
     *  not carry the controller's environment, so the script sets it.
     *  fd 3 is the channel's stdin; the node reads /dev/null. The watcher
     *  sends the node SIGTERM at end of file; a node that ends first
     *  takes the watcher with it. wait's stderr is dropped: dash reports
     *  a job killed by a signal ("Terminated") there. */
    char *script = cert ? xasprintf ("exec 3<&0; umask 077; c=$(mktemp \"${TMPDIR:-/tmp}"
                                     "/treefarm-cert.XXXXXX\") || exit 1; "
                                     "while IFS= read -r l <&3 && [ \"$l\" != '%s' ]; "
                                     "do printf '%%s\\n' \"$l\"; done >\"$c\"; "
                                     "%s --cert \"$c\" </dev/null 3<&- & n=$!; "
                                     "(read _ <&3; kill -TERM $n 2>/dev/null) & w=$!; "
                                     "wait $n 2>/dev/null; s=$?; kill $w 2>/dev/null; "
                                     "rm -f \"$c\"; exit $s", SSH_CERT_END, words)
                        : xasprintf ("exec 3<&0; %s </dev/null 3<&- & n=$!; "
                                     "(read _ <&3; kill -TERM $n 2>/dev/null) & w=$!; "
                                     "wait $n 2>/dev/null; s=$?; kill $w 2>/dev/null; "
                                     "exit $s", words);
    char *tuned = xasprintf ("case \":${GLIBC_TUNABLES-}\" in *:glibc.malloc.tcache_count=*) "
                             ";; *) GLIBC_TUNABLES=\"${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}%s\" "
                             "%s=1; export GLIBC_TUNABLES %s;; esac; %s",
                             TF_MALLOC_TUNABLE, TF_MALLOC_TUNED_ENV, TF_MALLOC_TUNED_ENV,
                             script);
    char *command = sh_command (tuned);
    free (tuned);
    free (script);
    free (words);
    return command;
}

char *
ssh_cache_word (const char *hash)
{
    return xasprintf ("\"$HOME\"/%s/treefarm-node-%s", SSH_CACHE_DIR, hash);
}

int
ssh_file_hash (const char *path, char *hash, size_t len, char *err, size_t errlen)
{
    if (len < HASH_HEX_LEN + 1)
        return tf_error (err, errlen, "hash buffer too small");
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tf_error (err, errlen, "%s: %s", path, strerror (errno));
    zdigest_t *digest = zdigest_new ();
    byte *chunk = xmalloc (HASH_CHUNK);
    ssize_t n;
    while ((n = read (fd, chunk, HASH_CHUNK)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            zdigest_update (digest, chunk, (size_t) n);
    int rc = n < 0 ? tf_error (err, errlen, "%s: %s", path, strerror (errno)) : 0;
    if (rc == 0) {
        snprintf (hash, len, "%s", zdigest_string (digest));
        for (char *h = hash; *h; h++)
            *h = (char) (*h >= 'A' && *h <= 'F' ? *h - 'A' + 'a' : *h);
    }
    free (chunk);
    zdigest_destroy (&digest);
    close (fd);
    return rc;
}

/*  Run ssh to host with the remote command, stdin from in_fd (-1:
 *  /dev/null), capturing its output. Returns 0 once it ran (its status
 *  in res), or -1 with a message. */
static int
run_ssh (const ssh_opts_t *opts, const host_t *host, const char *command, int in_fd,
         spawn_result_t *res, char *err, size_t errlen)
{
    char **argv = ssh_argv (opts, host, 0, command);
    char why[TF_ERRLEN];
    int rc = spawn_capture (argv, in_fd, SSH_CHECK_TIMEOUT, res, why, sizeof why);
    spawn_argv_free (argv);
    if (rc != 0)
        return tf_error (err, errlen, "cannot run ssh: %s", why);
    return 0;
}

/*  A failed ssh command as a message: "WHAT TEXT (ssh exited with status
 *  N): STDERR". Returns -1. */
static int
ssh_failed (const spawn_result_t *res, const char *what, const char *text, char *err,
            size_t errlen)
{
    char line[TF_ERRLEN / 2];
    if (res->timed_out)
        return tf_error (err, errlen, "%s %s: ssh did not finish within %g s", what, text,
                         SSH_CHECK_TIMEOUT);
    int status = res->status;
    if (WIFSIGNALED (status))
        return tf_error (err, errlen, "%s %s: ssh was killed by signal %d", what, text,
                         WTERMSIG (status));
    spawn_one_line (res->err, line, sizeof line);
    return tf_error (err, errlen, "%s %s (ssh exited with status %d)%s%s", what, text,
                     WEXITSTATUS (status), *line ? ": " : "", line);
}

static int
exit_status (const spawn_result_t *res)
{
    return !res->timed_out && WIFEXITED (res->status) ? WEXITSTATUS (res->status) : -1;
}

/*  ssh HOST true: the host is reached and takes us without a password. */
static int
check_reach (const ssh_opts_t *opts, const host_t *host, const char *text, char *err,
             size_t errlen)
{
    spawn_result_t res;
    if (run_ssh (opts, host, "true", -1, &res, err, errlen) != 0)
        return -1;
    if (exit_status (&res) != 0)
        return ssh_failed (&res, "cannot reach", text, err, errlen);
    return 0;
}

/*  Copy the file at path (size bytes) to the cache word on host: to a
 *  temporary name, checked for its size, then renamed, so the cache never
 *  holds a partial binary under its hash. */
static int
copy_binary (const ssh_opts_t *opts, const host_t *host, const char *text,
             const char *path, const char *word, char *err, size_t errlen)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat (fd, &st) != 0) {
        tf_error (err, errlen, "%s: %s", path, strerror (errno));
        if (fd >= 0)
            close (fd);
        return -1;
    }
    char *script = xasprintf ("f=%s; t=\"$f.tmp.$$\"; mkdir -p \"$HOME\"/%s && "
                              "cat >\"$t\" && n=$(wc -c <\"$t\") && [ $n -eq %lld ] && "
                              "chmod 755 \"$t\" && mv -f \"$t\" \"$f\" || "
                              "{ rm -f \"$t\"; exit 1; }",
                              word, SSH_CACHE_DIR, (long long) st.st_size);
    char *command = sh_command (script);
    spawn_result_t res;
    int rc = run_ssh (opts, host, command, fd, &res, err, errlen);
    if (rc == 0 && exit_status (&res) != 0)
        rc = ssh_failed (&res, "cannot copy the node binary to", text, err, errlen);
    free (command);
    free (script);
    close (fd);
    return rc;
}

/*  --push-binary: the node binary at node_bin is in host's cache under
 *  its content hash, or copied there. Stores the cache word in *word. */
static int
push_binary (const ssh_opts_t *opts, const host_t *host, const char *text,
             const char *node_bin, char **word, char *err, size_t errlen)
{
    char hash[HASH_HEX_LEN + 1], why[TF_ERRLEN];
    char *path = spawn_resolve (node_bin, why, sizeof why);
    if (!path || ssh_file_hash (path, hash, sizeof hash, why, sizeof why) != 0) {
        free (path);
        return tf_error (err, errlen, "--push-binary: %s", why);
    }
    *word = ssh_cache_word (hash);
    char *test = xasprintf ("test -f %s -a -x %s", *word, *word);
    char *command = sh_command (test);
    spawn_result_t res;
    int rc = run_ssh (opts, host, command, -1, &res, err, errlen);
    int status = rc == 0 ? exit_status (&res) : 0;
    if (rc == 0 && (status == SSH_EXIT_ERROR || status < 0))
        rc = ssh_failed (&res, "cannot reach", text, err, errlen);
    else if (rc == 0 && status != 0)
        rc = copy_binary (opts, host, text, path, *word, err, errlen);
    free (command);
    free (test);
    free (path);
    return rc;
}

/*  The remote script that finds the node program: the wrapper's first
 *  word on PATH (exit CHECK_NO_WRAPPER), then the first candidate that is
 *  an executable file (word, a shell word; else node_bin's path, else its
 *  name on PATH: exit CHECK_NOT_FOUND), which must answer --help (exit
 *  CHECK_HELP_FAILED). Prints the program's path. */
static char *
find_script (char *const program[], int nprogram, const char *word)
{
    const char *node_bin = program[nprogram - 1];
    const char *slash = strrchr (node_bin, '/');
    char *wrapper = nprogram > 1 ? shell_quote (program[0]) : xstrdup ("");
    char *path = shell_quote (node_bin);
    char *name = shell_quote (slash ? slash + 1 : node_bin);
    char *wrapper_test = nprogram > 1
        ? xasprintf ("command -v %s >/dev/null 2>&1 || exit %d; ", wrapper,
                     CHECK_NO_WRAPPER)
        : xstrdup ("");
    const char *candidate = word ? word : slash ? path : NULL;
    char *path_test = candidate
        ? xasprintf ("[ -f %s ] && [ -x %s ] && x=%s; ", candidate, candidate, candidate)
        : xstrdup ("");
    char *name_test = word ? xstrdup ("")
        : xasprintf ("[ -n \"$x\" ] || x=$(command -v %s 2>/dev/null) || x=; ", name);
    char *script = xasprintf ("%sx=; %s%s[ -n \"$x\" ] || exit %d; \"$x\" --help "
                              ">/dev/null || exit %d; printf '%%s\\n' \"$x\"",
                              wrapper_test, path_test, name_test, CHECK_NOT_FOUND,
                              CHECK_HELP_FAILED);
    free (name_test);
    free (path_test);
    free (wrapper_test);
    free (name);
    free (path);
    free (wrapper);
    return script;
}

/*  The path find_script printed: one line, absolute, printable, at most
 *  SSH_PROGRAM_MAX bytes. Returns a new string, or NULL. */
static char *
printed_path (const char *out)
{
    size_t len = strcspn (out, "\n");
    if (len == 0 || len > SSH_PROGRAM_MAX || out[0] != '/')
        return NULL;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char) out[i] < 0x20 || out[i] == 0x7f)
            return NULL;
    return xasprintf ("%.*s", (int) len, out);
}

/*  Say why find_script failed on host. Returns -1. */
static int
find_failed (const spawn_result_t *res, char *const program[], int nprogram,
             const char *word, const char *text, char *err, size_t errlen)
{
    char line[TF_ERRLEN / 2];
    const char *node_bin = program[nprogram - 1];
    switch (exit_status (res)) {
    case CHECK_NO_WRAPPER:
        return tf_error (err, errlen, "%s (the first word of TREEFARM_NODE_WRAPPER) "
                         "is not on the PATH of %s", program[0], text);
    case CHECK_NOT_FOUND:
        if (word)
            return tf_error (err, errlen, "the pushed node binary %s is missing on %s",
                             word, text);
        return tf_error (err, errlen, "the node program is not on %s: neither %s nor "
                         "its name on the remote PATH (install it there, or use "
                         "--push-binary)", text, node_bin);
    case CHECK_HELP_FAILED:
        spawn_one_line (res->err, line, sizeof line);
        return tf_error (err, errlen, "the node program does not run on %s (--help "
                         "failed)%s%s", text, *line ? ": " : "", line);
    case 0:
        return tf_error (err, errlen, "%s printed no usable path of the node program",
                         text);
    default:
        return ssh_failed (res, "cannot check the node program on", text, err, errlen);
    }
}

/*  Find the node program on host (find_script) and store its path. */
static int
find_program (const ssh_opts_t *opts, const host_t *host, const char *text,
              char *const program[], int nprogram, const char *word, char **remote,
              char *err, size_t errlen)
{
    char *script = find_script (program, nprogram, word);
    char *command = sh_command (script);
    spawn_result_t res;
    int rc = run_ssh (opts, host, command, -1, &res, err, errlen);
    free (command);
    free (script);
    if (rc != 0)
        return -1;
    *remote = exit_status (&res) == 0 ? printed_path (res.out) : NULL;
    if (!*remote)
        return find_failed (&res, program, nprogram, word, text, err, errlen);
    return 0;
}

int
ssh_check (const ssh_opts_t *opts, const host_t *host, const char *text,
           char *const program[], int nprogram, char **remote, char *err, size_t errlen)
{
    *remote = NULL;
    if (nprogram < 1)
        return tf_error (err, errlen, "no node program to check");
    if (check_reach (opts, host, text, err, errlen) != 0)
        return -1;
    char *word = NULL;
    int rc = 0;
    if (opts->push_binary)
        rc = push_binary (opts, host, text, program[nprogram - 1], &word, err, errlen);
    if (rc == 0)
        rc = find_program (opts, host, text, program, nprogram, word, remote, err,
                           errlen);
    free (word);
    return rc;
}
