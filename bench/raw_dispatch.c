/*  raw_dispatch — the reference for treefarm's dispatch rate: the same
 *  bag of zero-compute tasks farmed by a plain czmq ROUTER/DEALER program,
 *  with nothing of treefarm's (no config, no core, no pacing, no
 *  acknowledgement of chunks, no completion batches).
 *
 *  A dispatcher binds a ROUTER on tcp://127.0.0.1:* and forks W worker
 *  processes (default 8), each a DEALER that keeps K requests outstanding
 *  (default 3). A request is an empty frame; a reply to a task is the
 *  task's 8-byte id, its "result", which also asks for the next task. A
 *  task is its 8-byte id plus S payload bytes; a worker computes nothing.
 *  Once every task's result is in, the dispatcher sends each worker an
 *  empty task (stop) and reaps it.
 *
 *  The time span is from the moment the workers are told the endpoint
 *  (they then connect) to the last result, so connection set-up counts,
 *  as it does in treefarm's makespan. Prints tasks/s; with --quiet only
 *  the number. make bench builds it (build/bin/raw-dispatch) and
 *  scripts/bench-dispatch.sh runs it beside treefarm.
 */
#include <czmq.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RAW_MAX_TASKS 1000000000ull   /* a run of more is a typo */
#define RAW_MAX_SIZE (64u << 20)      /* one task's payload, bytes */
#define RAW_MAX_WORKERS 256
#define RAW_MAX_OUTSTANDING 1000
#define RAW_ENDPOINT_MAX 256

typedef struct {
    uint64_t tasks;
    uint64_t size;
    int workers, outstanding, quiet;
} raw_opts_t;

static double
now_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: raw-dispatch [--tasks N] [--size BYTES] [--workers W]\n"
             "                    [--outstanding K] [--quiet]\n"
             "  --tasks N        tasks to farm, 1..%llu (default 50000)\n"
             "  --size BYTES     payload bytes per task, 0..%u (default 0)\n"
             "  --workers W      worker processes, 1..%d (default 8)\n"
             "  --outstanding K  requests each worker keeps out, 1..%d (default 3)\n"
             "  --quiet          print only tasks/s\n",
             RAW_MAX_TASKS, RAW_MAX_SIZE, RAW_MAX_WORKERS, RAW_MAX_OUTSTANDING);
}

/*  An integer option in [lo, hi]; exits with a message otherwise. */
static uint64_t
int_arg (const char *name, const char *text, uint64_t lo, uint64_t hi)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull (text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v < lo || v > hi) {
        fprintf (stderr, "raw-dispatch: --%s must be an integer in %llu..%llu, got \"%s\"\n",
                 name, (unsigned long long) lo, (unsigned long long) hi, text);
        exit (2);
    }
    return v;
}

static raw_opts_t
parse (int argc, char **argv)
{
    raw_opts_t o = {.tasks = 50000, .size = 0, .workers = 8, .outstanding = 3};
    static const struct option longs[] = {
        {"tasks", required_argument, 0, 't'}, {"size", required_argument, 0, 's'},
        {"workers", required_argument, 0, 'w'}, {"outstanding", required_argument, 0, 'k'},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", longs, NULL)) != -1) {
        if (c == 't')
            o.tasks = int_arg ("tasks", optarg, 1, RAW_MAX_TASKS);
        else if (c == 's')
            o.size = int_arg ("size", optarg, 0, RAW_MAX_SIZE);
        else if (c == 'w')
            o.workers = (int) int_arg ("workers", optarg, 1, RAW_MAX_WORKERS);
        else if (c == 'k')
            o.outstanding = (int) int_arg ("outstanding", optarg, 1, RAW_MAX_OUTSTANDING);
        else if (c == 'q')
            o.quiet = 1;
        else if (c == 'h') {
            usage (stdout);
            exit (0);
        }
        else {
            usage (stderr);
            exit (2);
        }
    }
    if (optind < argc) {
        fprintf (stderr, "raw-dispatch: unexpected argument \"%s\"\n", argv[optind]);
        exit (2);
    }
    return o;
}

/*  A worker: connect, keep k requests out, answer every task with its id
 *  until an empty task says stop. Runs in a forked child that has not
 *  touched ZeroMQ before. */
static int
worker (const char *endpoint, int k)
{
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    if (!dealer || zsock_connect (dealer, "%s", endpoint) < 0)
        return 1;
    for (int i = 0; i < k; i++)
        zstr_send (dealer, "");
    int rc = 1;
    for (;;) {
        zmsg_t *task = zmsg_recv (dealer);
        if (!task)
            break;
        zframe_t *id = zmsg_first (task);
        if (!id || zframe_size (id) == 0) {   /* stop */
            zmsg_destroy (&task);
            rc = 0;
            break;
        }
        zframe_t *result = zframe_new (zframe_data (id), zframe_size (id));
        zmsg_destroy (&task);
        if (zframe_send (&result, dealer, 0) != 0) {
            zframe_destroy (&result);
            break;
        }
    }
    zsock_destroy (&dealer);
    return rc;
}

/*  Fork the workers; each waits on the pipe for the endpoint. */
static int
spawn (int n, int k, int pipe_fd[2], pid_t *pids)
{
    for (int i = 0; i < n; i++) {
        pids[i] = fork ();
        if (pids[i] < 0)
            return -1;
        if (pids[i] == 0) {
            char endpoint[RAW_ENDPOINT_MAX];
            close (pipe_fd[1]);
            ssize_t got = read (pipe_fd[0], endpoint, sizeof endpoint);
            if (got != (ssize_t) sizeof endpoint)
                _exit (1);
            endpoint[sizeof endpoint - 1] = '\0';
            _exit (worker (endpoint, k));
        }
    }
    close (pipe_fd[0]);
    return 0;
}

/*  Send task `id` of size bytes to the worker whose identity is `who`
 *  (taken). */
static int
send_task (zsock_t *router, zframe_t **who, uint64_t id, const byte *payload, size_t size)
{
    zmsg_t *msg = zmsg_new ();
    zmsg_append (msg, who);
    zmsg_addmem (msg, &id, sizeof id);
    zmsg_addmem (msg, payload, size);
    return zmsg_send (&msg, router);
}

/*  Farm every task, then hold every request left (each worker's last K)
 *  in held[] (W x K frames) so that each can be told to stop. Returns the
 *  seconds from the workers' go (t0) to the last result, or a negative
 *  number on an error. */
static double
dispatch (zsock_t *router, const raw_opts_t *o, const byte *payload, double t0,
          zframe_t **held)
{
    uint64_t next = 0, done = 0, received = 0, nheld = 0;
    uint64_t requests = o->tasks + (uint64_t) o->workers * (uint64_t) o->outstanding;
    double seconds = -1;
    while (received < requests) {
        zmsg_t *msg = zmsg_recv (router);
        if (!msg)
            return -1;
        received++;
        zframe_t *who = zmsg_pop (msg);
        zframe_t *body = zmsg_first (msg);
        if (body && zframe_size (body) == sizeof (uint64_t) && ++done == o->tasks)
            seconds = now_s () - t0;
        zmsg_destroy (&msg);
        if (next < o->tasks) {
            if (send_task (router, &who, next++, payload, o->size) != 0)
                return -1;
        }
        else if (nheld < requests - o->tasks) {
            held[nheld++] = who;
            who = NULL;
        }
        zframe_destroy (&who);
    }
    return done == o->tasks ? seconds : -1;
}

/*  An empty task to every held request: each worker stops at its first. */
static void
stop_all (zsock_t *router, zframe_t **held, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!held[i])
            continue;
        zmsg_t *task = zmsg_new ();
        zmsg_append (task, &held[i]);
        zmsg_addmem (task, NULL, 0);
        zmsg_send (&task, router);
    }
}

int
main (int argc, char **argv)
{
    raw_opts_t o = parse (argc, argv);
    int pipe_fd[2];
    pid_t *pids = calloc ((size_t) o.workers, sizeof *pids);
    if (!pids || pipe (pipe_fd) != 0 || spawn (o.workers, o.outstanding, pipe_fd, pids) != 0) {
        perror ("raw-dispatch: cannot start the workers");
        return 1;
    }
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    int port = router ? zsock_bind (router, "tcp://127.0.0.1:*") : -1;
    char endpoint[RAW_ENDPOINT_MAX] = {0};
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    byte *payload = calloc (1, o.size + 1);
    size_t nheld = (size_t) o.workers * (size_t) o.outstanding;
    zframe_t **held = calloc (nheld, sizeof *held);
    double t0 = now_s (), seconds = -1;
    int ok = port > 0 && payload && held;
    for (int i = 0; i < o.workers && ok; i++)
        ok = write (pipe_fd[1], endpoint, sizeof endpoint) == (ssize_t) sizeof endpoint;
    close (pipe_fd[1]);
    if (ok)
        seconds = dispatch (router, &o, payload, t0, held);
    if (seconds >= 0)
        stop_all (router, held, nheld);
    int status = seconds >= 0 ? 0 : 1;
    for (int i = 0; i < o.workers; i++) {
        int ws = 0;
        if (seconds < 0)
            kill (pids[i], SIGKILL);
        if (waitpid (pids[i], &ws, 0) < 0 || !WIFEXITED (ws) || WEXITSTATUS (ws) != 0)
            status = 1;
    }
    zsock_destroy (&router);
    for (size_t i = 0; held && i < nheld; i++)
        zframe_destroy (&held[i]);
    free (held);
    free (payload);
    free (pids);
    if (status != 0) {
        fprintf (stderr, "raw-dispatch: failed\n");
        return 1;
    }
    if (o.quiet)
        printf ("%.1f\n", (double) o.tasks / seconds);
    else
        printf ("raw-dispatch: %llu tasks of %llu B, %d workers x %d outstanding: "
                "%.3f s, %.1f tasks/s\n", (unsigned long long) o.tasks,
                (unsigned long long) o.size, o.workers, o.outstanding, seconds,
                (double) o.tasks / seconds);
    return 0;
}
