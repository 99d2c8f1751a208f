/*  slurm — the Slurm allocation a run is in. See slurm.h and
 *  docs/deploy.md, "Slurm".
 */
#include "controller/slurm.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "controller/spawn.h"
#include "overlay/util.h"

/*  The characters of a host name Slurm may give (overlay/host.h's). */
#define SLURM_HOST_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
/*  Room for a quoted piece of text in a message. */
#define SLURM_QUOTE 80

struct slurm_alloc {
    char *job;
    int nhosts;
    char **hosts;
    int *cpus;
    int *used;               /* CPUs taken on each host */
    int next;                /* where slurm_alloc_place looks first */
    int per_node;            /* CPUs a node takes: SLURM_CPUS_PER_TASK */
};

/* ------------------------------------------------------------------------
 *  Parsing what Slurm says.
 */

/*  A decimal count in 1..max at *p, which moves past it. */
static int
parse_count (const char **p, long max, long *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol (s, &end, 10);
    if (errno || v < 1 || v > max)
        return -1;
    *p = end;
    *out = v;
    return 0;
}

/*  One item of SLURM_JOB_CPUS_PER_NODE, "C" or "C(xR)", at *p. */
static int
parse_cpus_item (const char **p, long *count, long *repeat)
{
    *repeat = 1;
    if (parse_count (p, SLURM_CPUS_MAX, count) != 0)
        return -1;
    if (strncmp (*p, "(x", 2) != 0)
        return 0;
    *p += 2;
    if (parse_count (p, SLURM_HOSTS_MAX, repeat) != 0 || **p != ')')
        return -1;
    (*p)++;
    return 0;
}

int
slurm_cpus_parse (const char *text, int *cpus, int nhosts, char *err, size_t errlen)
{
    char q[SLURM_QUOTE];
    const char *p = text;
    int n = 0;
    while (*p) {
        long count, repeat;
        if (parse_cpus_item (&p, &count, &repeat) != 0 || (*p && *p != ','))
            return tf_error (err, errlen, "SLURM_JOB_CPUS_PER_NODE=%s: expected "
                             "COUNT[(xREPEAT)],... with counts in 1..%d",
                             tf_quote (q, sizeof q, text), SLURM_CPUS_MAX);
        if (repeat > nhosts - n)
            return tf_error (err, errlen, "SLURM_JOB_CPUS_PER_NODE=%s names more hosts "
                             "than the %d of SLURM_JOB_NODELIST",
                             tf_quote (q, sizeof q, text), nhosts);
        for (long r = 0; r < repeat; r++)
            cpus[n++] = (int) count;
        if (*p == ',')
            p++;
    }
    if (n != nhosts)
        return tf_error (err, errlen, "SLURM_JOB_CPUS_PER_NODE=%s names %d hosts, "
                         "SLURM_JOB_NODELIST %d", tf_quote (q, sizeof q, text), n, nhosts);
    return 0;
}

int
slurm_hosts_parse (const char *text, char **hosts, int max, char *err, size_t errlen)
{
    char q[SLURM_QUOTE];
    int n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn (p, "\n");
        if (len > 0) {
            if (len > SLURM_HOSTNAME_MAX || strspn (p, SLURM_HOST_CHARS) != len
                || p[0] == '-' || p[0] == '.') {
                char *bad = xasprintf ("%.*s", (int) (len < 60 ? len : 60), p);
                tf_error (err, errlen, "scontrol gave %s, which is not a host name",
                          tf_quote (q, sizeof q, bad));
                free (bad);
                goto out_fail;
            }
            if (n == max) {
                tf_error (err, errlen, "the allocation has more than %d hosts", max);
                goto out_fail;
            }
            hosts[n++] = xasprintf ("%.*s", (int) len, p);
        }
        p += len + (p[len] == '\n');
    }
    if (n == 0)
        return tf_error (err, errlen, "scontrol gave no host");
    return n;
out_fail:
    while (n > 0)
        free (hosts[--n]);
    return -1;
}

/* ------------------------------------------------------------------------
 *  The allocation.
 */

slurm_alloc_t *
slurm_alloc_new (const char *job, char *const hosts[], const int cpus[], int nhosts,
                 char *err, size_t errlen)
{
    if (nhosts < 1 || nhosts > SLURM_HOSTS_MAX) {
        tf_error (err, errlen, "an allocation of %d hosts (expected 1..%d)", nhosts,
                  SLURM_HOSTS_MAX);
        return NULL;
    }
    for (int i = 0; i < nhosts; i++)
        if (cpus[i] < 1 || cpus[i] > SLURM_CPUS_MAX) {
            tf_error (err, errlen, "host %s has %d CPUs (expected 1..%d)", hosts[i],
                      cpus[i], SLURM_CPUS_MAX);
            return NULL;
        }
    slurm_alloc_t *self = xcalloc (1, sizeof *self);
    self->job = xstrdup (job);
    self->nhosts = nhosts;
    self->hosts = xcalloc ((size_t) nhosts, sizeof *self->hosts);
    self->cpus = xcalloc ((size_t) nhosts, sizeof *self->cpus);
    self->used = xcalloc ((size_t) nhosts, sizeof *self->used);
    self->per_node = 1;
    for (int i = 0; i < nhosts; i++) {
        self->hosts[i] = xstrdup (hosts[i]);
        self->cpus[i] = cpus[i];
    }
    return self;
}

void
slurm_alloc_destroy (slurm_alloc_t **self_p)
{
    slurm_alloc_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->nhosts; i++)
        free (self->hosts[i]);
    free (self->hosts);
    free (self->cpus);
    free (self->used);
    free (self->job);
    free (self);
    *self_p = NULL;
}

/*  The environment variable name, at most max bytes, or NULL with err
 *  filled. */
static const char *
env_text (const char *name, size_t max, char *err, size_t errlen)
{
    const char *v = getenv (name);
    if (!v || !*v)
        tf_error (err, errlen, "%s is not set", name);
    else if (strlen (v) > max)
        tf_error (err, errlen, "%s is longer than %zu bytes", name, max);
    else
        return v;
    return NULL;
}

/*  `scontrol show hostnames LIST` into hosts; how many, or -1. */
static int
expand_hosts (const char *list, char **hosts, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    char *argv[] = {"scontrol", "show", "hostnames", (char *) list, NULL};
    spawn_result_t *res = xcalloc (1, sizeof *res);
    int n = -1;
    if (spawn_capture (argv, -1, SLURM_QUERY_TIMEOUT, res, why, sizeof why) != 0)
        tf_error (err, errlen, "cannot run scontrol: %s", why);
    else if (!WIFEXITED (res->status) || WEXITSTATUS (res->status) != 0)
        tf_error (err, errlen, "scontrol show hostnames %s failed: %s", list,
                  spawn_one_line (res->err, why, sizeof why));
    else if (strlen (res->out) >= SPAWN_CAPTURE_MAX)
        tf_error (err, errlen, "the allocation's host list is longer than the %d bytes "
                  "treefarm reads", SPAWN_CAPTURE_MAX);
    else
        n = slurm_hosts_parse (res->out, hosts, SLURM_HOSTS_MAX, err, errlen);
    free (res);
    return n;
}

/*  The CPUs each task of a step takes: SLURM_CPUS_PER_TASK (srun
 *  inherits it), 1 when unset. */
static int
per_node_cpus (long *out, char *err, size_t errlen)
{
    const char *cpt = getenv ("SLURM_CPUS_PER_TASK"), *p = cpt;
    *out = 1;
    if (cpt && *cpt && (parse_count (&p, SLURM_CPUS_MAX, out) != 0 || *p))
        return tf_error (err, errlen, "SLURM_CPUS_PER_TASK=%.20s is not a count in 1..%d",
                         cpt, SLURM_CPUS_MAX);
    return 0;
}

slurm_alloc_t *
slurm_alloc_read (char *err, size_t errlen)
{
    const char *job = getenv ("SLURM_JOB_ID");
    if (!job || !*job) {
        tf_error (err, errlen, "not inside a Slurm allocation (SLURM_JOB_ID is not set): "
                  "run it under salloc or sbatch, or give --slurm-args to ask for one");
        return NULL;
    }
    const char *list, *cpus_text;
    if (strlen (job) > SLURM_JOB_ID_MAX || strspn (job, "0123456789_") != strlen (job)) {
        tf_error (err, errlen, "SLURM_JOB_ID is not a job id");
        return NULL;
    }
    if (!(list = env_text ("SLURM_JOB_NODELIST", SLURM_CPUS_TEXT_MAX, err, errlen))
        || !(cpus_text = env_text ("SLURM_JOB_CPUS_PER_NODE", SLURM_CPUS_TEXT_MAX, err,
                                   errlen)))
        return NULL;
    char **hosts = xcalloc (SLURM_HOSTS_MAX, sizeof *hosts);
    int *cpus = xcalloc (SLURM_HOSTS_MAX, sizeof *cpus);
    slurm_alloc_t *self = NULL;
    long per_node = 1;
    int n = per_node_cpus (&per_node, err, errlen) == 0
            ? expand_hosts (list, hosts, err, errlen) : -1;
    if (n > 0 && slurm_cpus_parse (cpus_text, cpus, n, err, errlen) == 0
        && (self = slurm_alloc_new (job, hosts, cpus, n, err, errlen)))
        self->per_node = (int) per_node;
    for (int i = 0; i < n; i++)
        free (hosts[i]);
    free (hosts);
    free (cpus);
    return self;
}

const char *
slurm_alloc_job (const slurm_alloc_t *self)
{
    return self->job;
}

int
slurm_alloc_hosts (const slurm_alloc_t *self)
{
    return self->nhosts;
}

const char *
slurm_alloc_host (const slurm_alloc_t *self, int i)
{
    return i >= 0 && i < self->nhosts ? self->hosts[i] : NULL;
}

int
slurm_alloc_cpus (const slurm_alloc_t *self, int i)
{
    return i >= 0 && i < self->nhosts ? self->cpus[i] : 0;
}

long
slurm_alloc_total_cpus (const slurm_alloc_t *self)
{
    long total = 0;
    for (int i = 0; i < self->nhosts; i++)
        total += self->cpus[i];
    return total;
}

int
slurm_alloc_place (slurm_alloc_t *self, char *err, size_t errlen)
{
    for (int k = 0; k < self->nhosts; k++) {
        int i = (self->next + k) % self->nhosts;
        if (self->used[i] + self->per_node <= self->cpus[i]) {
            self->used[i] += self->per_node;
            self->next = (i + 1) % self->nhosts;
            return i;
        }
    }
    long total = slurm_alloc_total_cpus (self), most = 0;
    for (int i = 0; i < self->nhosts; i++)
        most += self->cpus[i] / self->per_node;
    char each[64] = "one a node";
    if (self->per_node > 1)
        snprintf (each, sizeof each, "%d a node (SLURM_CPUS_PER_TASK)", self->per_node);
    return tf_error (err, errlen, "more tree nodes than the allocation holds: job %s has "
                     "%d host%s and %ld CPU%s, %s, so %ld nodes at most", self->job,
                     self->nhosts, self->nhosts == 1 ? "" : "s", total, total == 1 ? "" : "s",
                     each, most);
}

/* ------------------------------------------------------------------------
 *  The job's end.
 */

int
slurm_job_end (const char *job, time_t *end, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    char *argv[] = {"squeue", "-h", "-j", (char *) job, "-o", "%e", NULL};
    spawn_result_t *res = xcalloc (1, sizeof *res);
    int rc = -1;
    struct tm tm = {0};
    *end = 0;
    if (spawn_capture (argv, -1, SLURM_QUERY_TIMEOUT, res, why, sizeof why) != 0)
        tf_error (err, errlen, "cannot run squeue: %s", why);
    else if (!WIFEXITED (res->status) || WEXITSTATUS (res->status) != 0)
        tf_error (err, errlen, "squeue -j %s failed: %s", job,
                  spawn_one_line (res->err, why, sizeof why));
    else if (strncmp (res->out, "NONE", 4) == 0 || strncmp (res->out, "N/A", 3) == 0)
        rc = 0;
    else if (!strptime (res->out, "%Y-%m-%dT%H:%M:%S", &tm))
        tf_error (err, errlen, "squeue -j %s gave the end %s, not a time", job,
                  spawn_one_line (res->out, why, sizeof why));
    else {
        tm.tm_isdst = -1;
        *end = mktime (&tm);
        rc = 0;
    }
    free (res);
    return rc;
}

/* ------------------------------------------------------------------------
 *  Asking for an allocation.
 */

/*  argv without "--slurm-args X" / "--slurm-args=X", with --slurm. */
static int
rerun_words (int argc, char **argv, char **out)
{
    int k = 0, slurm = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv[i], "--slurm-args") == 0) {
            i++;
            continue;
        }
        if (strncmp (argv[i], "--slurm-args=", 13) == 0)
            continue;
        slurm |= strcmp (argv[i], "--slurm") == 0;
        out[k++] = argv[i];
    }
    if (!slurm)
        out[k++] = "--slurm";
    return k;
}

int
slurm_salloc_exec (const char *args, const char *command, int argc, char **argv,
                   char *err, size_t errlen)
{
    char exe[4096];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return tf_error (err, errlen, "cannot find this program: %s", strerror (errno));
    exe[n] = '\0';
    char *words = xstrdup (args);
    char **out = xcalloc ((size_t) argc + SLURM_SALLOC_WORDS_MAX + 4, sizeof *out);
    int k = 0;
    out[k++] = "salloc";
    char *save = NULL;
    for (char *w = strtok_r (words, " \t\n", &save); w; w = strtok_r (NULL, " \t\n", &save)) {
        if (k > SLURM_SALLOC_WORDS_MAX) {
            free (out);
            free (words);
            return tf_error (err, errlen, "--slurm-args has more than %d words",
                             SLURM_SALLOC_WORDS_MAX);
        }
        out[k++] = w;
    }
    out[k++] = exe;
    out[k++] = (char *) command;
    k += rerun_words (argc, argv, out + k);
    out[k] = NULL;
    fflush (NULL);
    execvp ("salloc", out);
    int e = errno;
    free (out);
    free (words);
    return tf_error (err, errlen, "cannot run salloc: %s", strerror (e));
}
