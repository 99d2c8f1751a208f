/*  burner — a node's background load as real processes; see burner.h.
 *
 *  The node forks its load processes from its main thread (a parent-death
 *  signal fires when the thread that forked exits, and the main thread
 *  lives as long as the node). Between fork and exit a child runs in a
 *  copy of a multi-threaded process (ZeroMQ's I/O threads are not
 *  copied): it allocates nothing, never touches a socket of the node's
 *  (it closes them all), and leaves by _exit, so no atexit handler of
 *  the node's runs in it. Whatever it needs is prepared before the fork.
 *
 *  CPU accounting: every load process adds what its own CPU clock
 *  (CLOCK_PROCESS_CPUTIME_ID, user and system) advanced by to one counter
 *  in memory shared by all of them, at least every BURNER_FLUSH_NS of CPU
 *  while it burns and before each sleep; the node reads it in one load.
 */
#include "node/burner.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "overlay/util.h"

/*  CPU a process uses before it reports it to the shared counter. */
#define BURNER_FLUSH_NS 10000000ull
/*  The longest a generator sleeps before it reaps its finished jobs. */
#define BURNER_REAP_S 0.05
/*  The draw sequences of contenders come after the streams'. */
#define BURNER_SEED_CONTENDER (BURNER_MAX_CPUS * BURNER_MAX_STREAMS)
/*  A stream and its classes. */
#define BURNER_MAX_STREAMS (LOAD_MAX_CLASSES + 1)

/*  What every load process writes: shared, anonymous, one page. */
typedef struct {
    _Atomic uint64_t cpu_ns;     /* CPU used by the load's processes */
    _Atomic uint64_t dropped;    /* arrivals dropped at BURNER_MAX_JOBS */
} burner_shared_t;

struct burner {
    pid_t *pids;             /* the node's children, in start order */
    int npids, cap;
    burner_shared_t *shared;
    int ncpus;
};

/*  One process's report to the shared counter. */
typedef struct {
    burner_shared_t *shared;
    uint64_t last_ns;        /* our CPU clock when last reported */
} meter_t;

/*  The job generator's state, prepared before its fork. */
typedef struct {
    int nstreams;
    dist_t demand[BURNER_MAX_STREAMS], arrival[BURNER_MAX_STREAMS];
    dist_rng_t rng[BURNER_MAX_STREAMS];
    double next[BURNER_MAX_STREAMS];   /* the next arrival, load time */
} generator_t;

/*  A contender's state, prepared before its fork. */
typedef struct {
    load_contender_t c;
    dist_t period;
    dist_rng_t rng;
    struct sockaddr_storage dest;
    socklen_t destlen;
    const unsigned char *buf;   /* BURNER_MAX_DATAGRAM bytes */
} contender_t;

/*  --- the schedule (pure) ------------------------------------------------ */

int
burner_slots (const load_t *load)
{
    /*  The level only changes at a point: its highest is at one of them. */
    double top = 1;
    for (int i = 0; i < load->nsteps; i++)
        top = fmax (top, load_level_at (load, load->steps[i].at_s));
    for (int i = 0; i < load->ntrace; i++)
        top = fmax (top, load_level_at (load, load->trace[i].at_s));
    double n = ceil (top - 1);
    return n >= BURNER_MAX_SLOTS ? BURNER_MAX_SLOTS : (int) n;
}

int
burner_slot_step (const load_t *load, int slot, double t, double period,
                  double *until)
{
    double duty = fmin (fmax (load_level_at (load, t) - 1 - slot, 0), 1);
    double k = floor (t / period);
    if ((k + 1) * period <= t)   /* t / period rounded down across a boundary */
        k++;
    double start = k * period, end = (k + 1) * period;
    double change = load_next_point (load, t);
    double on_end = start + duty * period;
    if (duty >= 1 || t < on_end) {
        *until = fmin (duty >= 1 ? end : on_end, change);
        return 1;
    }
    *until = fmin (end, change);
    return 0;
}

uint64_t
burner_seed (uint64_t seed, const char *node, int index)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a of the name */
    for (const unsigned char *p = (const unsigned char *) node; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    /*  splitmix64's finalizer over the three, so near inputs part. */
    uint64_t z = seed ^ h ^ ((uint64_t) (index + 1) * 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*  --- in the load processes ---------------------------------------------- */

static uint64_t
cpu_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void
meter_init (meter_t *m, burner_shared_t *shared)
{
    m->shared = shared;
    m->last_ns = cpu_ns ();
}

/*  Report the CPU used since the last report; returns our CPU clock. */
static uint64_t
meter_flush (meter_t *m)
{
    uint64_t now = cpu_ns ();
    atomic_fetch_add (&m->shared->cpu_ns, now - m->last_ns);
    m->last_ns = now;
    return now;
}

/*  A slice of pure computation, a few tens of microseconds. */
static void
spin (void)
{
    volatile double x = 1;
    for (int i = 0; i < 20000; i++)
        x = x * 1.0000001 + 1e-9;
}

/*  Burn the CPU until tf_now () reaches deadline. */
static void
burn_until (meter_t *m, double deadline)
{
    while (tf_now () < deadline) {
        spin ();
        if (cpu_ns () - m->last_ns >= BURNER_FLUSH_NS)
            meter_flush (m);
    }
    meter_flush (m);
}

/*  Report, then sleep until tf_now () reaches deadline. */
static void
sleep_until (meter_t *m, double deadline)
{
    meter_flush (m);
    if (!(deadline < 1e15))   /* never: sleep until killed */
        for (;;)
            pause ();
    struct timespec ts = {.tv_sec = (time_t) deadline};
    ts.tv_nsec = (long) ((deadline - (double) ts.tv_sec) * 1e9);
    if (ts.tv_nsec > 999999999)
        ts.tv_nsec = 999999999;
    while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/*  In a new child of parent: die with it, default signals, no descriptor
 *  of the node's but the standard three. */
static void
child_begin (pid_t parent)
{
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (0);   /* the parent died before we asked: nothing to do */
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGINT, SIG_DFL);
    signal (SIGTERM, SIG_DFL);
    signal (SIGPIPE, SIG_IGN);
    close_range (STDERR_FILENO + 1, ~0U, 0);
}

/*  Duty-cycled burner `slot`, from load time 0 at t0, for ever. */
static void
run_slot (const load_t *load, int slot, double t0, burner_shared_t *shared)
{
    meter_t m;
    meter_init (&m, shared);
    for (;;) {
        double until;
        if (burner_slot_step (load, slot, tf_now () - t0, BURNER_PERIOD_S, &until))
            burn_until (&m, t0 + until);
        else
            sleep_until (&m, t0 + until);
    }
}

/*  One job: burn demand seconds of CPU time, however long that takes on
 *  a shared CPU, then exit. */
static void
run_job (double demand, burner_shared_t *shared)
{
    meter_t m;
    meter_init (&m, shared);
    uint64_t target = m.last_ns + (uint64_t) (demand * 1e9);
    uint64_t now = m.last_ns;
    while (now < target) {
        spin ();
        now = cpu_ns ();
        if (now - m.last_ns >= BURNER_FLUSH_NS)
            meter_flush (&m);
    }
    meter_flush (&m);
}

/*  Reap the finished jobs; returns how many are still alive. */
static int
reap_jobs (int alive)
{
    while (alive > 0 && waitpid (-1, NULL, WNOHANG) > 0)
        alive--;
    return alive;
}

/*  The stream with the earliest next arrival. */
static int
earliest (const generator_t *g)
{
    int s = 0;
    for (int i = 1; i < g->nstreams; i++)
        if (g->next[i] < g->next[s])
            s = i;
    return s;
}

/*  The job generator, from load time 0 at t0, for ever: each arrival
 *  due forks a job; arrivals that came while the generator waited for
 *  the CPU are started at once, in order. */
static void
run_generator (generator_t *g, double t0, burner_shared_t *shared)
{
    meter_t m;
    meter_init (&m, shared);
    pid_t self = getpid ();
    int alive = 0;
    for (;;) {
        alive = reap_jobs (alive);
        int s = earliest (g);
        double t = tf_now () - t0;
        if (g->next[s] > t) {
            sleep_until (&m, t0 + fmin (g->next[s], t + BURNER_REAP_S));
            continue;
        }
        double demand = dist_draw (&g->demand[s], &g->rng[s]);
        g->next[s] += dist_draw (&g->arrival[s], &g->rng[s]);
        pid_t pid = alive < BURNER_MAX_JOBS ? fork () : -1;
        if (pid == 0) {
            child_begin (self);
            run_job (demand, shared);
            _exit (0);
        }
        if (pid > 0)
            alive++;
        else
            atomic_fetch_add (&shared->dropped, 1);
    }
}

/*  Send msg_bytes messages back to back, each in datagrams of at most
 *  BURNER_MAX_DATAGRAM bytes, until deadline. A send that fails (no
 *  buffer space, no route) is load all the same: it is not retried. */
static void
send_until (meter_t *m, const contender_t *c, int fd, double deadline)
{
    uint32_t left = c->c.msg_bytes;
    while (tf_now () < deadline) {
        size_t n = left < BURNER_MAX_DATAGRAM ? left : BURNER_MAX_DATAGRAM;
        (void) sendto (fd, c->buf, n, 0, (const struct sockaddr *) &c->dest,
                       c->destlen);
        left -= (uint32_t) n;
        if (left == 0)
            left = c->c.msg_bytes;
        if (cpu_ns () - m->last_ns >= BURNER_FLUSH_NS)
            meter_flush (m);
    }
    meter_flush (m);
}

/*  A contender, for ever: periods of computing, communicating or idling. */
static void
run_contender (contender_t *c, burner_shared_t *shared)
{
    meter_t m;
    meter_init (&m, shared);
    int fd = socket (c->dest.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (;;) {
        double end = tf_now () + dist_draw (&c->period, &c->rng);
        double u = dist_rng_uniform (&c->rng);
        if (u < c->c.compute)
            burn_until (&m, end);
        else if (u < c->c.compute + c->c.comm && fd >= 0 && c->c.msg_bytes > 0)
            send_until (&m, c, fd, end);
        else
            sleep_until (&m, end);
    }
}

/*  --- in the node ----------------------------------------------------------- */

/*  What contenders send: its bytes do not matter. */
static const unsigned char burner_zeros[BURNER_MAX_DATAGRAM];

/*  Fork a load process of the node's. Returns its PID in the parent
 *  (recorded), 0 in the child (ready to run), -1 with a message in err. */
static pid_t
spawn (burner_t *self, char *err, size_t errlen)
{
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0)
        return tf_error (err, errlen, "background load: fork: %s", strerror (errno));
    if (pid == 0) {
        child_begin (parent);
        return 0;
    }
    self->pids[self->npids++] = pid;
    return pid;
}

/*  The duty-cycled burners of the steps and the trace. */
static int
start_slots (burner_t *self, const load_t *load, double t0, char *err, size_t errlen)
{
    int n = burner_slots (load) * self->ncpus;   /* each CPU its own */
    for (int i = 0; i < n; i++) {
        pid_t pid = spawn (self, err, errlen);
        if (pid < 0)
            return -1;
        if (pid == 0) {
            run_slot (load, i / self->ncpus, t0, self->shared);
            _exit (0);
        }
    }
    return 0;
}

/*  The generator's distributions and first arrivals; 0 streams when no
 *  stream has a utilization above 0. Returns 0, or -1 with a message. */
static int
generator_prepare (generator_t *g, const load_t *load, const char *node, int copy,
                   char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    g->nstreams = 0;
    for (int i = 0; i < load->nstreams; i++) {
        const load_stream_t *s = &load->streams[i];
        if (!(s->utilization > 0))
            continue;
        int k = g->nstreams;
        if (dist_init (&g->demand[k], s->demand_kind, s->demand_mean_s, s->demand_cv,
                       why, sizeof why) != 0
            || dist_init (&g->arrival[k], s->arrival_kind,
                          s->demand_mean_s / s->utilization, s->arrival_cv, why,
                          sizeof why) != 0)
            return tf_error (err, errlen, "background load: job stream %d: %s", i, why);
        dist_rng_seed (&g->rng[k], burner_seed (load->seed, node,
                                                 copy * BURNER_MAX_STREAMS + i));
        g->next[k] = dist_draw (&g->arrival[k], &g->rng[k]);
        g->nstreams++;
    }
    return 0;
}

static int
start_generator (burner_t *self, const load_t *load, const burner_opts_t *opts,
                 char *err, size_t errlen)
{
    generator_t *g = xcalloc (1, sizeof *g);
    int rc = 0;
    for (int copy = 0; rc == 0 && copy < self->ncpus; copy++) {   /* one a CPU */
        rc = generator_prepare (g, load, opts->node, copy, err, errlen);
        if (rc != 0 || g->nstreams == 0)
            break;
        pid_t pid = spawn (self, err, errlen);
        if (pid == 0) {
            run_generator (g, opts->t0, self->shared);
            _exit (0);
        }
        rc = pid < 0 ? -1 : 0;
    }
    free (g);
    return rc;
}

/*  The contenders' destination: host's discard port. */
static int
parse_dest (contender_t *c, const char *host, char *err, size_t errlen)
{
    if (!host || !*host)
        host = "127.0.0.1";
    struct sockaddr_in *v4 = (struct sockaddr_in *) &c->dest;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &c->dest;
    memset (&c->dest, 0, sizeof c->dest);
    if (inet_pton (AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons (BURNER_DISCARD_PORT);
        c->destlen = sizeof *v4;
    }
    else if (inet_pton (AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons (BURNER_DISCARD_PORT);
        c->destlen = sizeof *v6;
    }
    else
        return tf_error (err, errlen,
                         "background load: contenders' destination \"%s\" is not a "
                         "numeric address", host);
    return 0;
}

static int
start_contenders (burner_t *self, const load_t *load, const burner_opts_t *opts,
                  char *err, size_t errlen)
{
    contender_t c = {.buf = burner_zeros};
    char why[TF_ERRLEN];
    if (load->ncontenders > 0 && parse_dest (&c, opts->dest_host, err, errlen) != 0)
        return -1;
    for (int i = 0; i < load->ncontenders; i++) {
        c.c = load->contenders[i];
        if (dist_init (&c.period, DIST_EXP, c.c.period_s, 1, why, sizeof why) != 0)
            return tf_error (err, errlen, "background load: contender %d: period_s: %s",
                             i, why);
        dist_rng_seed (&c.rng, burner_seed (load->seed, opts->node,
                                            BURNER_SEED_CONTENDER + i));
        pid_t pid = spawn (self, err, errlen);
        if (pid < 0)
            return -1;
        if (pid == 0) {
            run_contender (&c, self->shared);
            _exit (0);
        }
    }
    return 0;
}

/*  The counts a load may have here, checked before anything is sized
 *  from them. */
static int
check_counts (const load_t *load, char *err, size_t errlen)
{
    if (load->nstreams < 0 || load->nstreams > BURNER_MAX_STREAMS)
        return tf_error (err, errlen, "background load: %d job streams (at most %d)",
                         load->nstreams, BURNER_MAX_STREAMS);
    if (load->ncontenders < 0 || load->ncontenders > LOAD_MAX_CONTENDERS)
        return tf_error (err, errlen, "background load: %d contenders (at most %d)",
                         load->ncontenders, LOAD_MAX_CONTENDERS);
    for (int i = 0; i < load->ncontenders; i++)
        if (load->contenders[i].msg_bytes > LOAD_MAX_MSG_BYTES)
            return tf_error (err, errlen, "background load: contender %d: msg_bytes %u "
                             "(at most %u)", i, load->contenders[i].msg_bytes,
                             LOAD_MAX_MSG_BYTES);
    if (load->nsteps < 0 || load->nsteps > LOAD_MAX_STEPS || load->ntrace < 0
        || load->ntrace > LOAD_MAX_TRACE_ROWS)
        return tf_error (err, errlen, "background load: %d steps, %d trace rows "
                         "(at most %d, %d)", load->nsteps, load->ntrace, LOAD_MAX_STEPS,
                         LOAD_MAX_TRACE_ROWS);
    return 0;
}

burner_t *
burner_start (const load_t *load, const burner_opts_t *opts, char *err, size_t errlen)
{
    if (check_counts (load, err, errlen) != 0)
        return NULL;
    burner_shared_t *shared = mmap (NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        tf_error (err, errlen, "background load: mmap: %s", strerror (errno));
        return NULL;
    }
    burner_t *self = xcalloc (1, sizeof *self);
    self->shared = shared;   /* zeroed by mmap */
    self->cap = BURNER_MAX_SLOTS + 1 + load->ncontenders;
    self->pids = xcalloc ((size_t) self->cap, sizeof *self->pids);
    cpu_set_t mask;
    self->ncpus = sched_getaffinity (0, sizeof mask, &mask) == 0 ? CPU_COUNT (&mask) : 1;
    if (self->ncpus < 1)
        self->ncpus = 1;
    if (self->ncpus > BURNER_MAX_CPUS)
        self->ncpus = BURNER_MAX_CPUS;
    if (start_slots (self, load, opts->t0, err, errlen) != 0
        || start_generator (self, load, opts, err, errlen) != 0
        || start_contenders (self, load, opts, err, errlen) != 0)
        burner_stop (&self);
    return self;
}

double
burner_cpu_seconds (const burner_t *self)
{
    return (double) atomic_load (&self->shared->cpu_ns) / 1e9;
}

uint64_t
burner_dropped (const burner_t *self)
{
    return atomic_load (&self->shared->dropped);
}

int
burner_ncpus (const burner_t *self)
{
    return self->ncpus;
}

int
burner_pids (const burner_t *self, pid_t *out, int max)
{
    for (int i = 0; i < self->npids && i < max; i++)
        out[i] = self->pids[i];
    return self->npids;
}

void
burner_stop (burner_t **self_p)
{
    burner_t *self = *self_p;
    if (!self)
        return;
    /*  Each PID stays ours until we reap it: no other process can have it. */
    for (int i = 0; i < self->npids; i++)
        kill (self->pids[i], SIGKILL);
    for (int i = 0; i < self->npids; i++)
        while (waitpid (self->pids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    munmap (self->shared, sizeof *self->shared);
    free (self->pids);
    free (self);
    *self_p = NULL;
}
