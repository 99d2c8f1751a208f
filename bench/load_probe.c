/*  load_probe — the measurements behind real mode's background load
 *  validation (scripts/load-real.sh): a synthetic task and a burst of
 *  messages, timed under load that node/burner.h generates, and the
 *  Figueira & Berman prediction (overlay/slowdown.h). Each mode prints one
 *  JSON line.
 *
 *    load-probe task [--load L] [--units U] [--n N]
 *        U units of the synthetic kernel (node/kernel.h) on an N x N
 *        matrix, timed, under a load L (L - 1 duty-cycled burners; 1: none).
 *    load-probe burst [--comm C1,C2,...] [--msgs M] [--bytes B]
 *                     [--bursts R] [--period P]
 *        R bursts of M messages of B bytes over a loopback TCP connection
 *        (each burst ends when the receiver acknowledges its last byte),
 *        under contenders communicating C1, C2, ... of the time (idle the
 *        rest, in periods of mean P seconds): the mean time of a burst.
 *    load-probe predict --delay D1,D2,... --comm C1,C2,...
 *        the slowdown 1 + sum_i pcomm_i * delay_comm(i).
 *
 *  Pin it with taskset to put the load on the CPU the task runs on. make
 *  bench builds it (build/bin/load-probe).
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "node/burner.h"
#include "node/kernel.h"
#include "overlay/slowdown.h"
#include "overlay/util.h"

#define PROBE_MAX_UNITS 1e6
#define PROBE_MAX_MSGS 1000000
#define PROBE_MAX_BYTES 65536
#define PROBE_MAX_BURSTS 100000
/*  Time the load is given to start before the measurement. */
#define PROBE_WARMUP_S 0.2

typedef struct {
    double load, units, period;
    long n, msgs, bytes, bursts;
    double comm[LOAD_MAX_CONTENDERS], delay[LOAD_MAX_CONTENDERS];
    int ncomm, ndelay;
} probe_opts_t;

static void
die (const char *fmt, const char *arg)
{
    fprintf (stderr, "load-probe: ");
    fprintf (stderr, fmt, arg);
    fprintf (stderr, "\n");
    exit (2);
}

/*  A comma-separated list of numbers in [lo, hi] into out (at most
 *  LOAD_MAX_CONTENDERS). Returns how many. */
static int
parse_list (const char *text, double lo, double hi, double *out)
{
    int n = 0;
    char *copy = xstrdup (text), *save = NULL;
    for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
        char *end;
        double v = strtod (tok, &end);
        if (*end || !(v >= lo && v <= hi) || n == LOAD_MAX_CONTENDERS)
            die ("bad list \"%s\"", text);
        out[n++] = v;
    }
    free (copy);
    return n;
}

static double
parse_num (const char *text, double lo, double hi)
{
    char *end;
    double v = strtod (text, &end);
    if (*end || !(v >= lo && v <= hi))
        die ("bad number \"%s\"", text);
    return v;
}

static void
parse_opts (int argc, char **argv, probe_opts_t *o)
{
    static const struct option longs[] = {
        {"load", 1, 0, 'l'}, {"units", 1, 0, 'u'}, {"n", 1, 0, 'n'},
        {"comm", 1, 0, 'c'}, {"msgs", 1, 0, 'm'}, {"bytes", 1, 0, 'b'},
        {"bursts", 1, 0, 'r'}, {"period", 1, 0, 'p'}, {"delay", 1, 0, 'd'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", longs, NULL)) != -1)
        switch (c) {
        case 'l': o->load = parse_num (optarg, 1, LOAD_MAX_L); break;
        case 'u': o->units = parse_num (optarg, 1e-3, PROBE_MAX_UNITS); break;
        case 'n': o->n = (long) parse_num (optarg, 2, 16384); break;
        case 'c': o->ncomm = parse_list (optarg, 0, 1, o->comm); break;
        case 'm': o->msgs = (long) parse_num (optarg, 1, PROBE_MAX_MSGS); break;
        case 'b': o->bytes = (long) parse_num (optarg, 1, PROBE_MAX_BYTES); break;
        case 'r': o->bursts = (long) parse_num (optarg, 1, PROBE_MAX_BURSTS); break;
        case 'p': o->period = parse_num (optarg, LOAD_MIN_TIME_S, 60); break;
        case 'd': o->ndelay = parse_list (optarg, 0, 1e6, o->delay); break;
        default: exit (2);
        }
}

/*  Start the load of o (steps of L, contenders of the comm fractions),
 *  and give it PROBE_WARMUP_S to start. NULL when there is none. */
static burner_t *
start_load (const probe_opts_t *o)
{
    load_point_t step = {0, o->load};
    load_contender_t cs[LOAD_MAX_CONTENDERS];
    for (int i = 0; i < o->ncomm; i++)
        cs[i] = (load_contender_t) {.compute = 0, .comm = o->comm[i], .msg_bytes = 800,
                                    .period_s = o->period};
    load_t load = {.contenders = cs, .ncontenders = o->ncomm, .steps = &step,
                   .nsteps = o->load > 1, .seed = 7};
    if (!load.nsteps && !load.ncontenders)
        return NULL;
    burner_opts_t bo = {.node = "probe", .dest_host = "127.0.0.1", .t0 = tf_now ()};
    char err[TF_ERRLEN];
    burner_t *b = burner_start (&load, &bo, err, sizeof err);
    if (!b)
        die ("%s", err);
    usleep ((useconds_t) (PROBE_WARMUP_S * 1e6));
    return b;
}

static int
run_task (const probe_opts_t *o)
{
    kernel_t *k = kernel_new ((uint32_t) o->n, 1);
    kernel_units (k, 0, 1);   /* the matrix in the cache, as a node's is */
    burner_t *b = start_load (o);
    double t = tf_now ();
    int64_t sum = kernel_units (k, 1, o->units);
    t = tf_now () - t;
    burner_stop (&b);
    kernel_destroy (&k);
    printf ("{\"mode\": \"task\", \"load\": %g, \"units\": %g, \"n\": %ld, "
            "\"seconds\": %.6f, \"checksum\": %lld}\n",
            o->load, o->units, o->n, t, (long long) sum);
    return 0;
}

static int
write_all (int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

/*  The receiving end, a child: each burst's bytes, then one byte back. */
static void
receive_bursts (int lfd, long total)
{
    static char buf[1 << 16];
    int fd = accept (lfd, NULL, NULL);
    int one = 1;
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (;;) {
        long got = 0;
        while (got < total) {
            ssize_t n = read (fd, buf, sizeof buf);
            if (n <= 0)
                _exit (0);
            got += n;
        }
        if (write_all (fd, "k", 1) != 0)
            _exit (0);
    }
}

/*  A connected pair over loopback: the receiver in a child (dies with
 *  us), the sender's socket returned; *child its PID. */
static int
connect_pair (long total, pid_t *child)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int lfd = socket (AF_INET, SOCK_STREAM, 0);
    if (lfd < 0 || bind (lfd, (struct sockaddr *) &a, sizeof a) != 0 || listen (lfd, 1) != 0
        || getsockname (lfd, (struct sockaddr *) &a, &alen) != 0)
        die ("cannot listen on loopback: %s", strerror (errno));
    pid_t parent = getpid ();
    *child = fork ();
    if (*child == 0) {
        if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
            _exit (0);
        receive_bursts (lfd, total);
    }
    close (lfd);
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    if (*child < 0 || fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) != 0)
        die ("cannot connect on loopback: %s", strerror (errno));
    int one = 1;
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/*  One burst: msgs messages, then the receiver's byte. Seconds. */
static double
burst (int fd, const probe_opts_t *o, const char *msg)
{
    char ack;
    double t = tf_now ();
    for (long i = 0; i < o->msgs; i++)
        if (write_all (fd, msg, (size_t) o->bytes) != 0)
            die ("%s", "the receiver is gone");
    if (read (fd, &ack, 1) != 1)
        die ("%s", "no acknowledgement");
    return tf_now () - t;
}

/*  Bursts at random moments (a gap of up to 5 ms before each), so they
 *  meet the contenders in every phase. */
static int
run_bursts (const probe_opts_t *o)
{
    static char msg[PROBE_MAX_BYTES];
    pid_t child;
    int fd = connect_pair (o->msgs * o->bytes, &child);
    burst (fd, o, msg);   /* the connection warmed up */
    burner_t *b = start_load (o);
    dist_rng_t rng;
    dist_rng_seed (&rng, 11);
    double total = 0;
    for (long r = 0; r < o->bursts; r++) {
        usleep ((useconds_t) (dist_rng_uniform (&rng) * 5000));
        total += burst (fd, o, msg);
    }
    burner_stop (&b);
    close (fd);
    waitpid (child, NULL, 0);
    printf ("{\"mode\": \"burst\", \"comm\": [");
    for (int i = 0; i < o->ncomm; i++)
        printf ("%s%g", i ? ", " : "", o->comm[i]);
    printf ("], \"msgs\": %ld, \"bytes\": %ld, \"bursts\": %ld, \"period_s\": %g, "
            "\"seconds\": %.6f}\n", o->msgs, o->bytes, o->bursts, o->period,
            total / (double) o->bursts);
    return 0;
}

static int
run_predict (const probe_opts_t *o)
{
    double compute[LOAD_MAX_CONTENDERS] = {0}, s;
    char err[TF_ERRLEN];
    if (o->ndelay != o->ncomm)
        die ("%s", "--delay and --comm need as many entries");
    if (slowdown_contenders (compute, o->comm, o->ncomm, o->delay, &s, err,
                             sizeof err) != 0)
        die ("%s", err);
    printf ("{\"mode\": \"predict\", \"slowdown\": %.6f}\n", s);
    return 0;
}

int
main (int argc, char **argv)
{
    probe_opts_t o = {.load = 1, .units = 20, .n = 1024, .msgs = 1000, .bytes = 800,
                      .bursts = 100, .period = 0.05};
    const char *mode = argc > 1 ? argv[1] : "";
    parse_opts (argc - 1, argv + 1, &o);
    setvbuf (stdout, NULL, _IOLBF, 0);
    if (strcmp (mode, "task") == 0)
        return run_task (&o);
    if (strcmp (mode, "burst") == 0)
        return run_bursts (&o);
    if (strcmp (mode, "predict") == 0)
        return run_predict (&o);
    die ("usage: load-probe task|burst|predict [options]%s", "");
    return 2;
}
