/*  netns — nodes in network namespaces. See netns.h. */
#include "controller/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "controller/spawn.h"
#include "overlay/util.h"

/*  Words netns_argv puts before the node's command line. */
#define NETNS_PREFIX_WORDS 4

char **
netns_argv (const char *name, char *const argv[])
{
    int n = 0;
    while (argv[n])
        n++;
    char **out = xcalloc ((size_t) n + NETNS_PREFIX_WORDS + 1, sizeof *out);
    out[0] = xstrdup ("ip");
    out[1] = xstrdup ("netns");
    out[2] = xstrdup ("exec");
    out[3] = xstrdup (name);
    for (int i = 0; i < n; i++)
        out[NETNS_PREFIX_WORDS + i] = xstrdup (argv[i]);
    return out;
}

int
netns_parse_address (const char *ip_output, char *addr, size_t len)
{
    const char *p = ip_output;
    while ((p = strstr (p, " inet ")) != NULL) {
        p += strlen (" inet ");
        size_t n = strcspn (p, "/ \n");
        char candidate[INET_ADDRSTRLEN];
        struct in_addr in;
        if (n > 0 && n < sizeof candidate && n < len) {
            memcpy (candidate, p, n);
            candidate[n] = '\0';
            if (inet_pton (AF_INET, candidate, &in) == 1) {
                memcpy (addr, candidate, n + 1);
                return 0;
            }
        }
    }
    return -1;
}

/*  Run an ip command line; say what failed, quoting ip's stderr. */
static int
run_ip (char *const argv[], const char *what, spawn_result_t *res, char *err,
        size_t errlen)
{
    char why[TF_ERRLEN], line[TF_ERRLEN / 2];
    if (spawn_capture (argv, -1, NETNS_CHECK_TIMEOUT, res, why, sizeof why) != 0)
        return tf_error (err, errlen, "%s: %s", what, why);
    if (res->timed_out)
        return tf_error (err, errlen, "%s: ip did not finish within %g s", what,
                         NETNS_CHECK_TIMEOUT);
    if (!WIFEXITED (res->status) || WEXITSTATUS (res->status) != 0) {
        spawn_one_line (res->err, line, sizeof line);
        return tf_error (err, errlen, "%s (ip exited with status %d)%s%s", what,
                         WIFEXITED (res->status) ? WEXITSTATUS (res->status) : -1,
                         *line ? ": " : "", line);
    }
    return 0;
}

int
netns_check (const char *name, char *addr, size_t len, char *err, size_t errlen)
{
    struct stat st;
    char *path = xasprintf ("%s/%s", NETNS_RUN_DIR, name);
    int missing = stat (path, &st) != 0;
    int e = errno;
    free (path);
    if (missing)
        return tf_error (err, errlen, "network namespace \"%s\" does not exist (%s/%s: "
                         "%s; `ip netns list` shows the namespaces)", name, NETNS_RUN_DIR,
                         name, strerror (e));
    spawn_result_t res;
    char *enter[] = {"ip", "netns", "exec", (char *) name, "true", NULL};
    char *what = xasprintf ("cannot enter network namespace \"%s\"", name);
    int rc = run_ip (enter, what, &res, err, errlen);
    free (what);
    if (rc != 0)
        return -1;
    char *show[] = {"ip", "-n", (char *) name, "-o", "-4", "addr", "show", "scope",
                    "global", NULL};
    what = xasprintf ("cannot read the addresses of network namespace \"%s\"", name);
    rc = run_ip (show, what, &res, err, errlen);
    free (what);
    if (rc == 0 && netns_parse_address (res.out, addr, len) != 0)
        rc = tf_error (err, errlen, "network namespace \"%s\" has no global IPv4 address "
                       "for the node to bind (ip -n %s -o -4 addr show scope global "
                       "shows none)", name, name);
    return rc;
}
