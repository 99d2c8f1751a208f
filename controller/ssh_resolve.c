/*  ssh_resolve — an ssh host's name through ssh -G. See ssh_resolve.h.
 *
 *  ssh -G's output is text from another program, shaped by a file the
 *  user wrote: it is read as untrusted (complete lines only, a bounded
 *  number of them, each value checked against the limits the config's
 *  own hosts have), since its hostname goes to the node as --bind and
 *  to the resolver here.
 */
#include "controller/ssh_resolve.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "controller/spawn.h"
#include "overlay/util.h"

/*  The most words of ssh_resolve_argv. */
#define RESOLVE_ARGV_MAX 12
/*  Characters of a host name (as overlay/host.c allows them). */
#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
/*  The longest value kept from a line (more than any field allows, so an
 *  over-long one is seen as such and refused). */
#define VALUE_MAX 512
/*  Room for a quoted value in a message. */
#define QUOTE_LEN 80

char **
ssh_resolve_argv (const ssh_opts_t *opts, const host_t *host)
{
    char **argv = xcalloc (RESOLVE_ARGV_MAX, sizeof *argv);
    int n = 0;
    argv[n++] = xstrdup ("ssh");
    argv[n++] = xstrdup ("-G");
    argv[n++] = xstrdup ("-T");   /* no "Pseudo-terminal" note on stderr */
    n = ssh_target_words (argv, n, opts, host);
    argv[n] = NULL;
    return argv;
}

/*  A host name or an IPv6 address, within HOST_NAME_MAX_LEN. */
static int
valid_hostname (const char *v)
{
    unsigned char addr[sizeof (struct in6_addr)];
    size_t len = strlen (v);
    if (inet_pton (AF_INET6, v, addr) == 1)
        return 1;
    return len >= 1 && len <= HOST_NAME_MAX_LEN && v[0] != '-' && v[0] != '.'
           && strspn (v, NAME_CHARS) == len;
}

/*  Printable, no blank, not an option; only shown, so what ssh accepts
 *  as a user beyond the config's [A-Za-z0-9_.-] (an "@" of a directory's
 *  user names) is kept. */
static int
valid_user (const char *v)
{
    size_t len = strlen (v);
    if (len < 1 || len > HOST_USER_MAX_LEN || v[0] == '-')
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char) v[i] <= 0x20 || (unsigned char) v[i] >= 0x7f)
            return 0;
    return 1;
}

/*  1..HOST_PORT_MAX, digits only. */
static int
parse_port (const char *v)
{
    size_t len = strlen (v);
    if (len < 1 || len > 5 || strspn (v, "0123456789") != len)
        return 0;
    int port = atoi (v);
    return port >= 1 && port <= HOST_PORT_MAX ? port : 0;
}

/*  Check one "KEY VALUE" of the three we read and store it; other keys
 *  are ignored, a key seen before keeps its first value (ssh prints each
 *  once). *seen has bit 0 hostname, 1 port, 2 user. */
static int
take_value (const char *key, const char *value, ssh_target_t *out, int *seen, char *err,
            size_t errlen)
{
    char q[QUOTE_LEN];
    if (strcmp (key, "hostname") == 0 && !(*seen & 1)) {
        if (!valid_hostname (value))
            return tf_error (err, errlen, "bad hostname %s (expected 1..%d characters "
                             "from [A-Za-z0-9_.-], not starting with - or ., or an IPv6 "
                             "address)", tf_quote (q, sizeof q, value), HOST_NAME_MAX_LEN);
        snprintf (out->hostname, sizeof out->hostname, "%s", value);
        *seen |= 1;
    } else if (strcmp (key, "port") == 0 && !(*seen & 2)) {
        if (!(out->port = parse_port (value)))
            return tf_error (err, errlen, "bad port %s (expected 1..%d)",
                             tf_quote (q, sizeof q, value), HOST_PORT_MAX);
        *seen |= 2;
    } else if (strcmp (key, "user") == 0 && !(*seen & 4)) {
        if (!valid_user (value))
            return tf_error (err, errlen, "bad user %s (expected 1..%d printable "
                             "characters, no blank, not starting with -)",
                             tf_quote (q, sizeof q, value), HOST_USER_MAX_LEN);
        snprintf (out->user, sizeof out->user, "%s", value);
        *seen |= 4;
    }
    return 0;
}

int
ssh_resolve_parse (const char *text, ssh_target_t *out, char *err, size_t errlen)
{
    memset (out, 0, sizeof *out);
    int seen = 0, lines = 0;
    const char *p = text, *nl;
    while (seen != 7 && lines < SSH_RESOLVE_MAX_LINES && (nl = strchr (p, '\n'))) {
        size_t len = (size_t) (nl - p), klen = strcspn (p, " \n");
        lines++;
        if (klen < len && klen < 32) {   /* "KEY VALUE"; keys are short words */
            char key[32], value[VALUE_MAX + 1];
            size_t vlen = len - klen - 1;
            snprintf (key, sizeof key, "%.*s", (int) klen, p);
            snprintf (value, sizeof value, "%.*s", (int) (vlen > VALUE_MAX ? VALUE_MAX : vlen),
                      p + klen + 1);
            if (take_value (key, value, out, &seen, err, errlen) != 0)
                return -1;
        }
        p = nl + 1;
    }
    static const char *const names[] = {"hostname", "port", "user"};
    for (int i = 0; i < 3; i++)
        if (!(seen & (1 << i)))
            return tf_error (err, errlen, "no %s line in its first %d lines", names[i],
                             lines);
    return 0;
}

/*  Say how ssh -G failed: its exit status and stderr, a signal or the
 *  timeout. Returns -1. */
static int
resolve_failed (const spawn_result_t *res, const char *text, const char *name, char *err,
                size_t errlen)
{
    char line[TF_ERRLEN / 2];
    if (res->timed_out)
        return tf_error (err, errlen, "%s: ssh -G %s did not finish within %g s", text,
                         name, SSH_RESOLVE_TIMEOUT);
    if (WIFSIGNALED (res->status))
        return tf_error (err, errlen, "%s: ssh -G %s was killed by signal %d", text, name,
                         WTERMSIG (res->status));
    spawn_one_line (res->err, line, sizeof line);
    return tf_error (err, errlen, "%s: ssh -G %s failed (ssh exited with status %d)%s%s",
                     text, name, WEXITSTATUS (res->status), *line ? ": " : "", line);
}

int
ssh_resolve (const ssh_opts_t *opts, const host_t *host, const char *text,
             ssh_target_t *out, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    char **argv = ssh_resolve_argv (opts, host);
    spawn_result_t *res = xcalloc (1, sizeof *res);
    int rc = spawn_capture (argv, -1, SSH_RESOLVE_TIMEOUT, res, why, sizeof why);
    spawn_argv_free (argv);
    if (rc != 0)
        rc = tf_error (err, errlen, "%s: cannot run ssh -G %s: %s", text, host->name, why);
    else if (res->timed_out || !WIFEXITED (res->status) || WEXITSTATUS (res->status) != 0)
        rc = resolve_failed (res, text, host->name, err, errlen);
    else if (ssh_resolve_parse (res->out, out, why, sizeof why) != 0)
        rc = tf_error (err, errlen, "%s: ssh -G %s printed %s", text, host->name, why);
    free (res);
    return rc;
}

char *
ssh_target_str (const ssh_target_t *target)
{
    return xasprintf (strchr (target->hostname, ':') ? "%s@[%s]:%d" : "%s@%s:%d",
                      target->user, target->hostname, target->port);
}
