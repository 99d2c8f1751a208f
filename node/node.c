/*  node — the ZeroMQ runtime of one tree node. See node.h.
 *
 *  All decisions are the core's; this file only translates: socket
 *  messages and engine completions into core events, core actions into
 *  socket messages and engine starts. It also keeps the payloads of tasks
 *  in transit (node/payload.h), so a node forwards the very bytes it
 *  received, without copying them.
 */
#include "node/node.h"

#include <czmq.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <netdb.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "node/bundle.h"
#include "node/calphase.h"
#include "node/cargo.h"
#include "node/cmdrun.h"
#include "node/core.h"
#include "node/emulate.h"
#include "node/engine.h"
#include "node/liveness.h"
#include "node/meter.h"
#include "node/observe.h"
#include "node/payload.h"
#include "node/setup.h"
#include "node/subtree.h"
#include "node/waitset.h"
#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/curve.h"
#include "overlay/journal.h"
#include "overlay/host.h"
#include "overlay/proto.h"
#include "overlay/proto_stats.h"
#include "overlay/ratelog.h"
#include "overlay/trace.h"
#include "overlay/util.h"


#define NODE_HANDSHAKE_MS 30000   /* wait for CONFIG, then START */
#define NODE_STATS_EVERY 0.25     /* seconds between STATS */
#define NODE_TICK_MAX 0.1         /* longest poll, seconds */
#define NODE_SPEED_EVERY 0.01     /* emulated interference update, seconds */
#define NODE_LINGER_MS 2000       /* let a FAIL leave */
#define NODE_BYE_MS 30000         /* wait for BYE after REPORT: as long as
                                     the handshake, since a controller
                                     filing 255 REPORTs on a starved
                                     machine may take seconds */
/*  Heap committed at start (tf_heap_reserve), what a node's heap grows by
 *  in a run, reached at once: libzmq's pipes each take a second 16 KiB
 *  queue chunk after their 256th message and keep it (two pipes a
 *  connection: the parent, each child, the controller), and the heap's
 *  churn under load (docs/performance.md, "Scale and memory"). */
#define NODE_HEAP_BASE (64 * 1024)
#define NODE_HEAP_PER_PEER (32 * 1024)
#define NODE_SAMPLES 1024         /* samples a node keeps: the whole run, thinned
                                     as it fills (node/sampler.h): 1024 x 100 ms
                                     at full resolution */
#define NODE_FIT_MIN 20           /* busy samples before "ir": "measured"
                                     trusts an estimate */
#define NODE_SAMPLE_MAX 50e-6     /* a sample costs about 1 us: one whose
                                     span on the monotonic clock is longer
                                     was preempted or interrupted, and
                                     counts as this */
#define NODE_FIT_EVERY 1.0        /* seconds between solving the fit again
                                     for STATS (a REPORT always does) */
/*  Messages the loop reads from one socket in a turn before it looks at
 *  the clock and the other sockets again. */
#define NODE_DRAIN 64
/*  Sockets one wait may report readable. */
#define NODE_MAX_READY WAITSET_MAX
/*  serve's loop ends well: STOP came and the final REPORT was heard. Not
 *  0 (go on), not 1 or -1 (what fail and failed actions return). */
#define NODE_STOPPED 2
/*  serve's loop ends because the parent is lost. */
#define NODE_ORPHANED 3
/*  The identity suffix of a child's heartbeat connection to its parent:
 *  "NAME/beat" ('/' is not allowed in a node's name). */
#define NODE_BEAT_SUFFIX "/beat"

typedef struct {
    const node_opts_t *opts;
    config_t *cfg;
    const config_node_t *me;
    zsock_t *ctl, *parent, *router;
    char *endpoint;          /* our children's endpoint, "" for leaves */
    core_t *core;
    engine_t *engine;
    payload_store_t *payloads;   /* synthetic tasks' bytes, to forward */
    zhashx_t *slots;         /* child name -> slot + 1 (as a pointer) */
    double compute_seconds;
    double bps_per_mbps;     /* physical bytes/s per platform MB/s */
    emul_t *emul;            /* observed transfers, emulated interference */
    double *send_bps;        /* per child: scratch for metered rates */
    subtree_t *subtree;      /* our subtree's bound, bottom-up */
    int measure;             /* calibration mode (START mode "measure") */
    observe_t *observe;      /* the sampler and the online fit */
    double observe_cpu;      /* thread CPU seconds spent in them */
    double clock_cost;       /* what reading the thread CPU clock adds to
                                a timed span, seconds */
    json_t *fit;             /* the estimates as STATS carries them, */
    long fit_n;              /* solved at this many busy intervals, */
    double fit_at;           /* at this time */
    double *observed;        /* scratch: bytes observed, in and per child */
    double units, units_at;  /* the engine's cumulative units, and when we
                                read them */
    calphase_t *cal;         /* the calibration phase in progress */
    uint64_t *probe_out;     /* scratch: probe bytes acked per child */
    int *streams;            /* scratch: children a MEASURE names */
    double loop_lag, loop_lag_max;   /* seconds the event loop woke after
                                        it meant to: total, worst */
    uint64_t refused;        /* messages that failed to decode */
    ratelog_t refusals;      /* how often refusals are said */
    json_t *run;             /* CONFIG's run object: commands, and on the
                                root the tasks file, OUT and the journal */
    cargo_t *cargo;          /* command tasks' files (node/cargo.h) */
    double ctl_heard;        /* when the controller last said anything */
    cmdrun_t **cmdrun;       /* their workers, one a slot */
    uint32_t nworkers;
    zsock_t *beat;           /* the heartbeat connection to the parent:
                                heartbeats never wait behind chunks */
    liveness_t *live;        /* peers: children 0 .. n-1, the parent n */
    unsigned char *beat_warmed;   /* per child: its warm-up BEATs sent */
    unsigned char *unreachable;   /* per child: a send to it failed, to be
                                     declared lost once the actions in
                                     hand are done */
    zcert_t *cert;           /* our CURVE keys (--cert), or NULL: off */
    char controller_key[CURVE_KEY_LEN + 1];   /* the controller's public key */
    char parent_key[CURVE_KEY_LEN + 1];       /* our parent's, from CONFIG */
    zactor_t *auth;          /* the children ROUTER's ZAP handler */
    int trace_wanted;        /* CONFIG's run asks for a timeline */
    trace_t *trace;          /* its spans, from START; NULL: not traced */
    zmsg_t *outbox[PROTO_MAX_BATCH];   /* this turn's REQUESTs, ACKs and
                                          DONEs for the parent */
    uint32_t nout;
    double trace_t0;         /* when START came (tf_now) */
} node_t;

static void
logmsg (const node_t *self, const char *fmt, ...)
{
    char prefix[96];
    snprintf (prefix, sizeof prefix, "treefarm-node %s: ", self->opts->name);
    va_list ap;
    va_start (ap, fmt);
    tf_log_line (prefix, fmt, ap);
    va_end (ap);
}

/*  Say why a message was refused, unless refusals come faster than
 *  RATELOG_BURST a second: then count them and say how many later. */
static void
log_refusal (node_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
log_refusal (node_t *self, const char *fmt, ...)
{
    uint64_t held;
    int say = ratelog_allow (&self->refusals, tf_now (), &held);
    if (held)
        logmsg (self, "%llu more refusals not shown", (unsigned long long) held);
    if (!say)
        return;
    char text[TF_ERRLEN];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    logmsg (self, "%s", text);
}

/*  Lifecycle messages, only with --verbose. */
#define verbose(self, ...) \
    do { \
        if ((self)->opts->verbose) \
            logmsg ((self), __VA_ARGS__); \
    } while (0)

/*  Tell the controller why we give up, and say it on stderr too. */
static int
fail (node_t *self, const char *error)
{
    logmsg (self, "%s", error);
    if (self->ctl) {
        zmsg_t *msg = proto_fail (error);
        zmsg_send (&msg, self->ctl);
    }
    return 1;
}

/*  Wait up to timeout_ms for a message of the wanted command from the
 *  controller; anything else is logged and dropped. */
static int
wait_control (node_t *self, proto_command_t want, int timeout_ms, proto_msg_t *out,
              char *err, size_t errlen)
{
    double deadline = tf_now () + timeout_ms / 1000.0;
    waitset_t *ws = waitset_new (err, errlen);
    if (!ws)
        return -1;
    waitset_add (ws, self->ctl);
    int rc = -1;
    while (!zsys_interrupted) {
        if (tf_now () >= deadline) {
            tf_error (err, errlen, "no %s from the controller within %d s",
                      proto_command_str (want), timeout_ms / 1000);
            break;
        }
        zsock_t *ready;
        if (waitset_wait (ws, deadline, &ready, 1) <= 0)
            continue;
        zmsg_t *msg = zmsg_recv (self->ctl);
        char why[TF_ERRLEN];
        if (!msg || proto_decode (&msg, out, why, sizeof why) < 0) {
            log_refusal (self, "refused a message from the controller: %s", why);
            continue;
        }
        if (out->command == want) {
            rc = 0;
            break;
        }
        if (out->command == PROTO_STOP) {
            proto_msg_clear (out);
            tf_error (err, errlen, "stopped by the controller before the run");
            break;
        }
        if (out->command == PROTO_PING) {
            proto_msg_clear (out);
            continue;
        }
        logmsg (self, "ignored %s while waiting for %s",
                proto_command_str (out->command), proto_command_str (want));
        proto_msg_clear (out);
    }
    if (rc < 0 && zsys_interrupted)
        tf_error (err, errlen, "interrupted");
    waitset_destroy (&ws);
    return rc;
}

/*  CONFIG's run object: how many of the bag's tasks are commands, and
 *  how often a failing one is tried. */
static int
take_run (node_t *self, json_t *run, char *err, size_t errlen)
{
    json_t *n = json_object_get (run, "commands");
    json_t *attempts = json_object_get (run, "attempts");
    json_t *mb = json_object_get (run, "input_mb");
    json_t *trace = json_object_get (run, "trace");
    if (!run)
        return 0;
    if (trace && !json_is_boolean (trace))
        return tf_error (err, errlen, "CONFIG: run: \"trace\" must be true or false");
    self->trace_wanted = json_is_true (trace);
    if (!json_is_integer (n) || json_integer_value (n) < 0
        || json_integer_value (n) > CONFIG_MAX_TASKS || !json_is_integer (attempts)
        || json_integer_value (attempts) < 1
        || json_integer_value (attempts) > CORE_MAX_ATTEMPTS || !json_is_number (mb))
        return tf_error (err, errlen, "CONFIG: a malformed run object");
    self->run = json_incref (run);
    self->cfg->commands.count = (uint64_t) json_integer_value (n);
    self->cfg->commands.attempts = (uint32_t) json_integer_value (attempts);
    self->cfg->commands.input_mb = json_number_value (mb);
    return 0;
}

/*  Load the shipped experiment and find ourselves in it. */
static int
take_config (node_t *self, json_t *object, json_t *run, char *err, size_t errlen)
{
    char *text = json_dumps (object, JSON_COMPACT);
    self->cfg = config_load_string (text ? text : "", "<controller>", err, errlen);
    free (text);
    if (!self->cfg || take_run (self, run, err, errlen) != 0)
        return -1;
    int me = config_find_node (self->cfg, self->opts->name);
    if (me < 0)
        return tf_error (err, errlen, "the experiment has no node named \"%s\"",
                         self->opts->name);
    self->me = &self->cfg->nodes[me];
    if (!policy_find (self->cfg->policy))
        return tf_error (err, errlen, "unknown policy \"%s\"", self->cfg->policy);
    return 0;
}

/*  ZeroMQ binds numeric addresses only, IPv6 ones in brackets: turn host
 *  (an address or a name such as "localhost") into "1.2.3.4" or "[::1]". */
static int
numeric_host (const char *host, char *buf, size_t len, int *ipv6, char *err,
              size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char addr[NI_MAXHOST];
    int rc = getaddrinfo (host, NULL, &hints, &res);
    if (rc == 0)
        rc = getnameinfo (res->ai_addr, res->ai_addrlen, addr, sizeof addr, NULL, 0,
                          NI_NUMERICHOST);
    if (rc != 0) {
        if (res)
            freeaddrinfo (res);
        return tf_error (err, errlen, "cannot resolve host %s: %s", host,
                         gai_strerror (rc));
    }
    *ipv6 = res->ai_family == AF_INET6;
    snprintf (buf, len, *ipv6 ? "[%s]" : "%s", addr);
    freeaddrinfo (res);
    return 0;
}

/*  What to bind for the children: --bind, else what the config's host
 *  says (a local address, an ssh host's name resolved here), borrowed
 *  from *spec. */
static const char *
bind_name (node_t *self, host_t *spec, char *err, size_t errlen)
{
    if (self->opts->bind)
        return self->opts->bind;
    const char *name = host_parse (self->me->host, spec, err, errlen) == 0
                     ? host_bind_name (spec) : NULL;
    if (!name && !*err)
        tf_error (err, errlen, "host %s: the controller must say what to bind (--bind)",
                  self->me->host);
    return name;
}

/*  CONFIG's keys, which come exactly when we have a certificate: note
 *  our parent's, and start the ZAP handler that admits exactly our
 *  children's keys to the ROUTER we are about to bind. */
static int
take_keys (node_t *self, json_t *keys, char *err, size_t errlen)
{
    if (!keys != !self->cert)
        return tf_error (err, errlen, "CONFIG %s CURVE keys, but this node was %s",
                         keys ? "carries" : "carries no",
                         keys ? "given no certificate (--cert)" : "given one");
    if (!keys)
        return 0;
    int n = self->me->nchildren, parent = self->me->parent;
    const char *key = parent >= 0 ? json_string_value (json_object_get (
                          keys, self->cfg->nodes[parent].name)) : "";
    const char **names = xcalloc ((size_t) n + 1, sizeof *names);
    const char **children = xcalloc ((size_t) n + 1, sizeof *children);
    for (int i = 0; i < n && key; i++) {
        names[i] = self->cfg->nodes[self->me->children[i]].name;
        children[i] = json_string_value (json_object_get (keys, names[i]));
        if (!children[i])
            key = NULL;
    }
    int rc = key ? 0 : tf_error (err, errlen, "CONFIG: no CURVE key for our parent or "
                                 "one of our children");
    if (rc == 0 && n > 0) {
        self->auth = curve_auth_new (names, children, n, err, errlen);
        rc = self->auth ? 0 : -1;
    }
    if (rc == 0)
        snprintf (self->parent_key, sizeof self->parent_key, "%s", key);
    free (children);
    free (names);
    return rc;
}

static int
bind_children (node_t *self, char *err, size_t errlen)
{
    if (self->me->nchildren == 0) {
        self->endpoint = xstrdup ("");
        return 0;
    }
    char host[NI_MAXHOST + 2];
    int ipv6 = 0;
    host_t spec;
    err[0] = '\0';
    const char *name = bind_name (self, &spec, err, errlen);
    if (!name || numeric_host (name, host, sizeof host, &ipv6, err, errlen) != 0)
        return -1;
    self->router = zsock_new (ZMQ_ROUTER);
    zsock_set_router_mandatory (self->router, 1);
    zsock_set_ipv6 (self->router, ipv6);
    zsock_set_maxmsgsize (self->router, PROTO_MAX_FRAME_CHILDREN);
    if (self->cert)
        curve_server (self->router, self->cert);
    int port = zsock_bind (self->router, "tcp://%s:*", host);
    if (port < 0)
        return tf_error (err, errlen, "cannot bind tcp://%s:*: %s", host,
                         zmq_strerror (zmq_errno ()));
    self->endpoint = xasprintf ("tcp://%s:%d", host, port);
    self->slots = zhashx_new ();
    for (int i = 0; i < self->me->nchildren; i++) {
        const config_node_t *c = &self->cfg->nodes[self->me->children[i]];
        zhashx_insert (self->slots, c->name, (void *) (intptr_t) (i + 1));
    }
    return 0;
}

static const char *
run_str (const node_t *self, const char *key)
{
    return json_string_value (json_object_get (self->run, key));
}

/*  A resumed run: a journaled task is complete already. */
static int
mark_journaled (json_t *record, unsigned line, void *arg)
{
    node_t *self = arg;
    (void) line;
    json_t *id = json_object_get (record, "id"), *task = json_object_get (record, "task");
    int64_t at = json_is_string (id) ? cargo_find (self->cargo, json_string_value (id))
               : json_is_integer (task) && json_integer_value (task) >= (json_int_t)
                     self->cfg->commands.count ? (int64_t) json_integer_value (task)
                                               : -1;
    if (at >= 0)
        core_mark_done (self->core, (uint64_t) at);
    return 0;
}

/*  Root: the commands' files and the journal. */
static int
root_cargo (node_t *self, char *err, size_t errlen)
{
    int64_t n = cargo_root (self->cargo, run_str (self, "tasks"), run_str (self, "out"),
                            run_str (self, "journal"), err, errlen);
    if (n < 0)
        return -1;
    if ((uint64_t) n != self->cfg->commands.count)
        return tf_error (err, errlen, "the tasks file holds %lld commands, the run %llu",
                         (long long) n, (unsigned long long) self->cfg->commands.count);
    return 0;
}

/*  Root of a resumed run: every task in the journal is done already. */
static int
resume (node_t *self, char *err, size_t errlen)
{
    unsigned torn = 0;
    if (!json_is_true (json_object_get (self->run, "resume")))
        return 0;
    if (journal_load (run_str (self, "journal"), mark_journaled, self, &torn, err,
                      errlen) != 0)
        return -1;
    if (torn)
        logmsg (self, "the journal's last line was torn (a crash): ignored");
    return 0;
}

/*  The decision core (node/setup.h) and, for a run with command tasks,
 *  their files and worker (a run of synthetic tasks alone has neither:
 *  no journal, no thread). */
static int
make_cargo_and_core (node_t *self, char *err, size_t errlen)
{
    int root = self->me->parent < 0;
    if (self->cfg->commands.count > 0) {
        self->cargo = cargo_new (run_str (self, "scratch"), self->opts->name, err, errlen);
        if (!self->cargo)
            return -1;
        config_node_t *me = &self->cfg->nodes[self->me->index];
        if (me->slots == 0) {   /* as many as this machine has CPUs */
            long cpus = sysconf (_SC_NPROCESSORS_ONLN);
            me->slots = cpus < 1 ? 1 : cpus > CONFIG_MAX_SLOTS ? CONFIG_MAX_SLOTS
                                                               : (uint32_t) cpus;
        }
        self->nworkers = me->slots;
        self->cmdrun = xcalloc (self->nworkers, sizeof *self->cmdrun);
        for (uint32_t i = 0; i < self->nworkers; i++) {
            char *work = xasprintf ("%s/work/%u", cargo_scratch (self->cargo), i);
            self->cmdrun[i] = cmdrun_new (work);
            free (work);
        }
    }
    if (root && self->cargo && root_cargo (self, err, errlen) != 0)
        return -1;
    setup_bag_t bag = {cargo_task_info, self->cargo};
    setup_opts_t opts = setup_opts_default ();
    opts.bag = self->cargo ? &bag : NULL;
    self->core = setup_core (self->cfg, self->me->index, &opts, err, errlen);
    if (!self->core)
        return -1;
    return root && self->cargo ? resume (self, err, errlen) : 0;
}

/*  --- what the sampler and the fit cost --------------------------------- */

/*  This thread's CPU time, seconds: what the fit and the samples' CSV
 *  cost is the difference around their calls (about 1 us a reading on
 *  a VM: a system call). */
static double
thread_cpu (void)
{
    struct timespec ts;
    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/*  The CPU seconds spent since t0 (a thread_cpu reading), less what the
 *  readings themselves add. */
static double
cpu_since (const node_t *self, double t0)
{
    double d = thread_cpu () - t0 - self->clock_cost;
    return d > 0 ? d : 0;
}

/*  What two readings of the thread CPU clock add to the span between
 *  them: the least of a few back-to-back pairs (about 1 us on a VM,
 *  more than a sample costs). */
static double
clock_cost (void)
{
    double least = INFINITY;
    for (int i = 0; i < 8; i++) {
        double t0 = thread_cpu ();
        double d = thread_cpu () - t0;
        least = d < least ? d : least;
    }
    return isfinite (least) ? least : 0;
}

/*  The whole process's CPU time so far (every thread, user + system), us. */
static uint64_t
process_cpu_us (void)
{
    struct rusage ru;
    if (getrusage (RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u
         + (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/*  How often the busy engine reports progress. Where its speed varies
 *  (real compute, emulated interference) a sample or a calibration
 *  phase's snapshot takes the units of the last report, so every 10 ms
 *  keeps them exact enough to measure IR (a 50-ms period made it_measure's
 *  IRs 20% high). Where the speed is constant, twice per sample interval
 *  (a sample is taken at the first report after it is due, every 1 to
 *  1.5 intervals), within the engine's limits: each report wakes the
 *  loop, and at every 10 ms hundreds of emulated nodes spent most of a
 *  machine's CPU on them (docs/performance.md, "Scale and memory"). */
static double
engine_progress_period (const config_t *cfg, const emul_t *emul)
{
    if (cfg->platform.mode != PLATFORM_EMULATED || emul_interferes (emul))
        return ENGINE_PROGRESS_EVERY;
    double p = cfg->platform.sample_ms / 1000.0 / 2;
    return p < ENGINE_PROGRESS_EVERY ? ENGINE_PROGRESS_EVERY
         : p > ENGINE_PROGRESS_MAX  ? ENGINE_PROGRESS_MAX : p;
}

/*  The core (node/setup.h) and the models around it: emulated
 *  interference, the subtree bound, calibration, sampling; the engine. */
static int
make_core (node_t *self, char *err, size_t errlen)
{
    const config_t *cfg = self->cfg;
    const config_node_t *me = self->me;
    self->bps_per_mbps = setup_bps_per_mbps (cfg);
    tf_heap_reserve (NODE_HEAP_BASE + (size_t) (me->nchildren + 2) * NODE_HEAP_PER_PEER);
    self->payloads = payload_store_new (config_chunk_bytes (cfg));
    payload_tune_allocator ();
    if (make_cargo_and_core (self, err, errlen) != 0)
        return -1;
    double *ir_send = xcalloc (me->nchildren + 1, sizeof *ir_send);
    for (int i = 0; i < me->nchildren; i++)
        ir_send[i] = cfg->nodes[me->children[i]].ir_send;
    self->emul = emul_new (me->nchildren, me->ir_recv, ir_send, self->bps_per_mbps,
                           cfg->platform.mode == PLATFORM_EMULATED);
    free (ir_send);
    self->send_bps = xcalloc (me->nchildren + 1, sizeof *self->send_bps);
    self->subtree = subtree_new (cfg, me->index);
    self->cal = calphase_new (me->nchildren);
    self->probe_out = xcalloc (me->nchildren + 1, sizeof *self->probe_out);
    self->streams = xcalloc (me->nchildren + 1, sizeof *self->streams);
    self->observe = observe_new (me->nchildren, NODE_SAMPLES, cfg->platform.sample_ms / 1000.0,
                                 cfg->platform.time_scale, self->bps_per_mbps);
    self->observed = xcalloc (me->nchildren + 2, sizeof *self->observed);
    self->clock_cost = clock_cost ();
    engine_cfg_t ec = {cfg->platform.mode, me->compute_rate, cfg->platform.time_scale,
                       cfg->platform.matrix_n, engine_progress_period (cfg, self->emul),
                       .in_loop = 1};
    self->engine = engine_new (&ec, err, errlen);
    return self->engine ? 0 : -1;
}

/*  --- to the parent ------------------------------------------------------ */

/*  Send what the outbox holds, as one BATCH when it holds several: a
 *  loop turn's small messages travel together (docs/protocol.md).
 *  Returns 0, or -1 if the parent's socket refused it. */
static int
flush_parent (node_t *self)
{
    if (self->nout == 0)
        return 0;
    zmsg_t *msg = self->nout == 1 ? self->outbox[0] : proto_batch (self->outbox, self->nout);
    self->outbox[0] = NULL;
    self->nout = 0;
    if (zmsg_send (&msg, self->parent) == 0)
        return 0;
    zmsg_destroy (&msg);
    return -1;
}

/*  A REQUEST, ACK or DONE for the parent, sent when the loop turn ends
 *  (flush_parent), so those of one turn go as one message. */
static int
to_parent (node_t *self, zmsg_t **msg_p)
{
    if (self->nout == PROTO_MAX_BATCH && flush_parent (self) != 0) {
        zmsg_destroy (msg_p);
        return -1;
    }
    self->outbox[self->nout++] = *msg_p;
    *msg_p = NULL;
    return 0;
}

/*  --- the subtree's throughput bound ------------------------------------ */

/*  Once every child has reported its subtree's bound, our own is known:
 *  pass it up, so the root knows the tree's bound without the controller. */
static int
subtree_bound (node_t *self)
{
    if (!subtree_step (self->subtree) || !self->parent)
        return 0;
    if (flush_parent (self) != 0)   /* in order after what is waiting */
        return -1;
    zmsg_t *msg = proto_subtree (subtree_bounds (self->subtree));
    return zmsg_send (&msg, self->parent);
}

/*  A child's SUBTREE: keep its bounds, once, every model present. */
static int
on_subtree (node_t *self, int slot, const proto_msg_t *m, const char *peer)
{
    char err[TF_ERRLEN];
    if (subtree_child (self->subtree, slot, m->bounds, err, sizeof err) != 0) {
        log_refusal (self, "refused SUBTREE from %s: %s", peer, err);
        self->refused++;
        return 0;
    }
    return subtree_bound (self);
}

/*  --- sampling and the online fit ------------------------------------------ */

/*  Record a sample now: the engine's units and the bytes observed, the
 *  integral of the metered rates its speed followed (node/observe.h).
 *  Called right after an engine message, so units and bytes are of one
 *  instant, or on the clock while the engine is idle. */
static void
take_sample (node_t *self, double now)
{
    /*  Timed on the monotonic clock (vDSO, ~25 ns a reading): the thread
     *  CPU clock's reading costs more than the sample. */
    double t0 = tf_now ();
    emul_observed (self->emul, now, self->observed);
    observe_sample (self->observe, now, self->units, engine_busy (self->engine),
                    self->observed);
    self->observe_cpu += fmin (tf_now () - t0, NODE_SAMPLE_MAX);
}

static json_t *
number_or_null (double x)
{
    return isfinite (x) ? json_real (x) : json_null ();
}

/*  The online estimates as STATS carries them. */
static json_t *
fit_json (node_t *self, const observe_estimates_t *e)
{
    json_t *ir_s = json_object (), *ir_s_se = json_object ();
    for (int i = 0; i < self->me->nchildren; i++) {
        const char *name = self->cfg->nodes[self->me->children[i]].name;
        json_object_set_new (ir_s, name, number_or_null (e->ir_send[i]));
        json_object_set_new (ir_s_se, name, number_or_null (e->ir_send_se[i]));
    }
    return json_pack ("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "n", (json_int_t) e->n,
                      "c", number_or_null (e->c), "c_se", number_or_null (e->c_se),
                      "ir_recv", number_or_null (e->ir_recv), "ir_recv_se",
                      number_or_null (e->ir_recv_se), "ir_send", ir_s, "ir_send_se",
                      ir_s_se);
}

/*  "ir": "measured": IA policies order children by the online estimates
 *  once there are NODE_FIT_MIN busy samples; until then, by the
 *  configured ones. */
static void
apply_estimates (node_t *self, const observe_estimates_t *e)
{
    if (!self->cfg->platform.ir_measured || e->n < NODE_FIT_MIN || !e->ok || !(e->c > 0))
        return;
    for (int i = 0; i < self->me->nchildren; i++)
        if (isfinite (e->ir_send[i]))
            core_set_child_ir (self->core, i, e->ir_send[i]);
}

/*  The online estimates as STATS carries them (borrowed), solved again
 *  and applied only when a busy interval joined the fit since the last
 *  time, and for STATS at most every NODE_FIT_EVERY: an idle node's fit
 *  costs nothing, a busy one's little. */
static json_t *
current_fit (node_t *self, int final)
{
    double now = tf_now ();
    if (self->fit && (observe_count (self->observe) == self->fit_n
                      || (!final && now - self->fit_at < NODE_FIT_EVERY)))
        return self->fit;
    self->fit_at = now;
    double t0 = thread_cpu ();
    const observe_estimates_t *est = observe_estimates (self->observe);
    apply_estimates (self, est);
    json_decref (self->fit);
    self->fit = fit_json (self, est);
    self->fit_n = est->n;
    self->observe_cpu += cpu_since (self, t0);
    return self->fit;
}

/*  What writes a REPORT's texts (proto_stats_t's writers): the node, its
 *  children's names for the samples' columns, and the REPORT's figures,
 *  which count the writing's CPU time. */
typedef struct {
    node_t *node;
    const char **names;
    proto_stats_t *stats;
} report_texts_t;

/*  The samples as CSV (platform units), for the controller to file. Its
 *  CPU time (twice: the encoder measures, then fills) is the sampler's,
 *  in the REPORT that carries them. */
static int
write_samples (FILE *out, void *arg)
{
    report_texts_t *t = arg;
    node_t *self = t->node;
    double t0 = thread_cpu ();
    int rc = observe_write_csv (self->observe, out, t->names,
                                CONFIG_MB * self->cfg->platform.payload_scale);
    uint64_t us = (uint64_t) (cpu_since (self, t0) * 1e6);
    t->stats->observe_cpu_us += us;
    t->stats->cpu_us += us;
    return rc;
}

static int
write_trace (FILE *out, void *arg)
{
    report_texts_t *t = arg;
    return trace_write (t->node->trace, out);
}

/*  --- statistics --------------------------------------------------------- */

/*  How far this node fell behind the clock it emulates, wall seconds:
 *  its event loop (timers that fired late), its engine (task ends noticed
 *  late), and its links (transfers waiting for their last ack after the
 *  paced delivery, summed over children), with the worst single loop or
 *  engine delay. */
static void
fill_lag (node_t *self, proto_stats_t *s)
{
    double engine_max;
    s->lag_loop = self->loop_lag;
    s->lag_engine = engine_lag (self->engine, &engine_max);
    for (int i = 0; i < self->me->nchildren; i++)
        s->lag_link += core_child_stats (self->core, i).ack_wait_seconds;
    s->lag_max = fmax (self->loop_lag_max, engine_max);
}

/*  REPORT: what this node sent each child, and the writers of its samples
 *  and its trace, which texts (tens of KB: the node's peak of memory is
 *  its REPORT) are written straight into the message (proto_stats.h). */
static void
fill_report (node_t *self, proto_stats_t *s, report_texts_t *texts)
{
    int n = self->me->nchildren;
    s->children = xcalloc (n + 1, sizeof *s->children);
    for (int i = 0; i < n; i++) {
        core_child_stats_t c = core_child_stats (self->core, i);
        s->children[i] = (proto_child_stats_t){
            .name = xstrdup (self->cfg->nodes[self->me->children[i]].name),
            .tasks = c.tasks_sent, .bytes = c.bytes_sent, .requested = c.requested,
            .send_seconds = c.send_seconds};
    }
    s->nchildren = n;
    texts->node = self;
    texts->stats = s;
    texts->names = xcalloc (n + 1, sizeof *texts->names);
    for (int i = 0; i < n; i++)
        texts->names[i] = self->cfg->nodes[self->me->children[i]].name;
    s->write_samples = write_samples;
    s->write_arg = texts;
    if (self->trace) {
        double first_dropped;
        s->write_trace = write_trace;
        s->trace_dropped = trace_dropped (self->trace, &first_dropped);
        s->trace_end = s->trace_dropped ? first_dropped : tf_now () - self->trace_t0;
    }
}

/*  STATS (or, final, REPORT): this node's figures (overlay/proto_stats.h).
 *  Returns 0, or -1 if it could not be sent. */
static int
send_stats (node_t *self, proto_command_t command)
{
    core_stats_t c = core_stats (self->core);
    proto_stats_t s = {
        .computed = c.computed, .forwarded = c.forwarded, .received = c.received,
        .requested = c.requested, .bytes_in = c.bytes_in, .bytes_out = c.bytes_out,
        .malformed = c.malformed + self->refused, .completed = c.completed,
        .duplicates = c.duplicates, .requeued = c.requeued,
        .compute_seconds = self->compute_seconds,
        .speed_mean = emul_speed_mean (self->emul), .held = c.held,
        .computing = c.computing,
        .slots = self->cfg->commands.count && self->me->slots ? self->me->slots : 1,
    };
    const double *that = subtree_bounds (self->subtree);
    if (that && self->me->parent < 0) {
        s.has_bound = 1;
        for (int m = 0; m < BOUND_MODEL_COUNT; m++)
            s.bound[m] = that[m];
    }
    s.fit = json_incref (current_fit (self, command == PROTO_REPORT));
    fill_lag (self, &s);
    report_texts_t texts = {0};
    if (command == PROTO_REPORT)
        fill_report (self, &s, &texts);
    /*  A REPORT's samples are written while it is encoded, and add their
     *  CPU time to these (write_samples). */
    s.observe_cpu_us = (uint64_t) (self->observe_cpu * 1e6);
    s.cpu_us = process_cpu_us ();
    zmsg_t *msg = proto_stats_encode (command, &s);
    proto_stats_clear (&s);
    free (texts.names);
    if (zmsg_send (&msg, self->ctl) == 0)
        return 0;
    zmsg_destroy (&msg);
    return -1;
}

/*  After STOP: send the final REPORT and wait for the controller's BYE,
 *  which says it has it, so exiting cannot lose it. Returns 0, or -1 (after
 *  saying why) if it could not be sent or was not acknowledged in time. */
static int
report (node_t *self)
{
    if (send_stats (self, PROTO_REPORT) != 0)
        return fail (self, "cannot send the REPORT to the controller"), -1;
    proto_msg_t bye = {0};
    char err[TF_ERRLEN];
    if (wait_control (self, PROTO_BYE, NODE_BYE_MS, &bye, err, sizeof err) < 0) {
        logmsg (self, "after REPORT: %s", err);
        return -1;
    }
    proto_msg_clear (&bye);
    return 0;
}

/*  --- actions ------------------------------------------------------------- */

/*  The timeline (overlay/trace.h), when the run asks for one: task
 *  begins (or ends) on kind's track `lane` now, in seconds since START. */
static void
span (node_t *self, int begins, trace_kind_t kind, uint32_t lane, uint64_t task)
{
    if (!self->trace)
        return;
    double t = tf_now () - self->trace_t0;
    if (begins)
        trace_begin (self->trace, kind, lane, task, t);
    else
        trace_end (self->trace, kind, lane, task, t);
}

/*  A chunk of `count` sent or received: the first begins the task's span,
 *  the last ends it (both, for a task of one chunk). */
static void
chunk_span (node_t *self, trace_kind_t kind, uint32_t lane, uint64_t task,
            uint32_t index, uint32_t count)
{
    if (index == 0)
        span (self, 1, kind, lane, task);
    if (index + 1 == count)
        span (self, 0, kind, lane, task);
}

/*  The bytes of one chunk: the root makes them, others forward what they
 *  received (node/payload.h: a frame the store keeps, *shared set, to be
 *  sent without giving it up); a command's come from its files
 *  (node/cargo.h), a frame of the caller's. */
static zframe_t *
chunk_frame (node_t *self, const core_action_t *a, int *shared)
{
    *shared = a->kind != CORE_KIND_COMMAND;
    if (*shared)
        return payload_chunk (self->payloads, a->task, a->index, a->offset, a->len);
    char err[TF_ERRLEN];
    zframe_t *f = cargo_input_chunk (self->cargo, a->task, a->offset, a->len, err,
                                     sizeof err);
    if (!f)
        logmsg (self, "task %" PRIu64 ": %s", a->task, err);
    return f;
}

/*  Send to a child, and then, when not NULL, `shared` as the message's
 *  last frame without giving it up: ZFRAME_REUSE makes libzmq share its
 *  bytes (reference counted), not copy them. A child whose connection is
 *  gone (the ROUTER is mandatory: EHOSTUNREACH) is noted, to be declared
 *  lost once the actions in hand are carried out (settle_losses);
 *  whatever else was for it is dropped meanwhile. */
static int
send_shared (node_t *self, int slot, zmsg_t **msg_p, zframe_t *shared)
{
    const char *name = self->cfg->nodes[self->me->children[slot]].name;
    if (self->unreachable[slot]) {
        zmsg_destroy (msg_p);
        return 0;
    }
    zmsg_pushstr (*msg_p, name);
    int rc = shared ? zmsg_sendm (msg_p, self->router) : zmsg_send (msg_p, self->router);
    if (rc == 0 && shared)
        rc = zframe_send (&shared, self->router, ZFRAME_REUSE);
    if (rc == 0)
        return 0;
    int error = zmq_errno ();
    zmsg_destroy (msg_p);
    if (error == EHOSTUNREACH) {
        self->unreachable[slot] = 1;
        return 0;
    }
    logmsg (self, "cannot send to child %s: %s", name, zmq_strerror (error));
    return -1;
}

static int
send_to_child (node_t *self, int slot, zmsg_t **msg_p)
{
    return send_shared (self, slot, msg_p, NULL);
}

/*  Hand a command task to the worker. */
static int
compute_command (node_t *self, uint64_t task)
{
    char err[TF_ERRLEN];
    json_t *job = cargo_job (self->cargo, task, (uint32_t) self->me->index, err,
                             sizeof err);
    if (!job) {
        logmsg (self, "%s", err);
        return -1;
    }
    json_object_set_new (job, "node_name", json_string (self->opts->name));
    int rc = -1;   /* the core never runs more than slots at once */
    for (uint32_t i = 0; i < self->nworkers && rc != 0; i++)
        if (!cmdrun_busy (self->cmdrun[i])) {
            rc = cmdrun_start (self->cmdrun[i], job);
            if (rc == 0)
                span (self, 1, TRACE_COMPUTE, i, task);
        }
    json_decref (job);
    return rc;
}

/*  Root: flush the journal now (before FINISHED: every record is on disk
 *  before the controller hears the bag is done). */
static int
journal_now (node_t *self)
{
    char err[TF_ERRLEN];
    if (!self->cargo || cargo_journal_tick (self->cargo, tf_now (), 1, err, sizeof err) == 0)
        return 0;
    logmsg (self, "journal: %s", err);
    return -1;
}

/*  RECORDED's details of each command: its journal record. */
static json_t *
recorded_info (node_t *self, const core_action_t *a, int *ok)
{
    json_t *info = json_array ();
    char err[TF_ERRLEN];
    *ok = 1;
    for (uint32_t i = 0; i < a->ndone && self->cargo; i++) {
        const char *where = self->cfg->nodes[a->done[i].node].name;
        json_t *rec = cargo_recorded (self->cargo, &a->done[i], where, tf_now (), err,
                                      sizeof err);
        if (!rec) {
            logmsg (self, "journal: %s", err);
            *ok = 0;
            rec = json_null ();
        }
        json_array_append_new (info, rec);
    }
    if (!self->cargo || self->cfg->commands.count == 0) {
        json_decref (info);
        return NULL;
    }
    return info;
}

/*  DONE to the parent, or RECORDED (root) to the controller, with each
 *  command's record. */
static int
send_done (node_t *self, const core_action_t *a)
{
    proto_done_t *done = xcalloc (a->ndone + 1, sizeof *done);
    for (uint32_t i = 0; i < a->ndone; i++)
        done[i] = (proto_done_t){.task = a->done[i].task, .node = a->done[i].node,
                                 .failed = a->done[i].failed,
                                 .attempts = a->done[i].attempts};
    int recorded = a->type == CORE_ACT_RECORDED, ok = 1;
    json_t *info = recorded ? recorded_info (self, a, &ok) : NULL;
    zmsg_t *msg = proto_done (recorded ? PROTO_RECORDED : PROTO_DONE, done, a->ndone,
                              &info);
    free (done);
    if (!ok) {
        zmsg_destroy (&msg);
        return -1;
    }
    return recorded ? zmsg_send (&msg, self->ctl) : to_parent (self, &msg);
}

/*  The actions of result streams, and a retry. */
static int
act_result (node_t *self, const core_action_t *a)
{
    char err[TF_ERRLEN];
    zmsg_t *msg = NULL;
    switch (a->type) {
    case CORE_ACT_SEND_RESULT: {
        zframe_t *f = cargo_result_chunk (self->cargo, a->task, a->offset, a->len, err,
                                          sizeof err);
        if (!f) {
            logmsg (self, "task %" PRIu64 ": %s", a->task, err);
            return -1;
        }
        msg = proto_result (a->task, a->node, a->failed, a->bytes, a->index, a->count, &f);
        if (flush_parent (self) != 0) {   /* in order after what is waiting */
            zmsg_destroy (&msg);
            return -1;
        }
        return zmsg_send (&msg, self->parent);
    }
    case CORE_ACT_ACK_RESULT:
        msg = proto_result_ack (a->task, a->index);
        return send_to_child (self, a->child, &msg);
    case CORE_ACT_RELEASE_RESULT:
        if (self->me->parent >= 0)
            cargo_result_release (self->cargo, a->task);
        return 0;
    case CORE_ACT_DROP_RESULT:
        cargo_result_discard (self->cargo, a->task);
        return 0;
    case CORE_ACT_RETRY:
        logmsg (self, "task %" PRIu64 " failed on %s (attempt %u): trying it again",
                a->task, self->cfg->nodes[a->node].name, a->n);
        cargo_retried (self->cargo, a->task);
        return 0;
    default:
        return -1;
    }
}

static int
act (node_t *self, const core_action_t *a)
{
    zmsg_t *msg = NULL;
    switch (a->type) {
    case CORE_ACT_REQUEST:
        msg = proto_request (a->n);
        return to_parent (self, &msg);
    case CORE_ACT_SEND_CHUNK: {
        int shared;
        zframe_t *frame = chunk_frame (self, a, &shared);
        if (!frame) {
            logmsg (self, "no payload for task %" PRIu64 " chunk %u", a->task, a->index);
            return -1;
        }
        zframe_t *own = shared ? NULL : frame;
        msg = proto_chunk (a->task, a->units, a->bytes, a->index, a->count, a->kind,
                           a->avoid, a->navoid, &own);
        chunk_span (self, TRACE_SEND, (uint32_t) a->child, a->task, a->index, a->count);
        return send_shared (self, a->child, &msg, shared ? frame : NULL);
    }
    case CORE_ACT_ACK:
        msg = proto_ack (a->task, a->index);
        return to_parent (self, &msg);
    case CORE_ACT_COMPUTE:
        if (a->kind == CORE_KIND_COMMAND)
            return compute_command (self, a->task);
        span (self, 1, TRACE_COMPUTE, 0, a->task);
        return engine_start (self->engine, a->task, a->units);
    case CORE_ACT_REPORT:
    case CORE_ACT_RECORDED:
        return send_done (self, a);
    case CORE_ACT_RELEASE:
        payload_release (self->payloads, a->task);
        if (self->cargo)
            cargo_input_release (self->cargo, a->task);
        return 0;
    case CORE_ACT_FINISHED:
        if (journal_now (self) != 0)
            return -1;
        msg = proto_empty (PROTO_FINISHED);
        return zmsg_send (&msg, self->ctl);
    default:
        return act_result (self, a);
    }
}

/*  Carry out the actions of the last accepted event; a failed action is
 *  fatal, reported to the controller. */
static int
perform (node_t *self)
{
    int n;
    const core_action_t *acts = core_actions (self->core, &n);
    for (int i = 0; i < n; i++)
        if (act (self, &acts[i]) < 0) {
            char why[TF_ERRLEN];
            snprintf (why, sizeof why, "cannot carry out %s",
                      core_action_str (acts[i].type));
            fail (self, why);
            return -1;
        }
    return 0;
}

/*  Offer one event to the core. Returns 1 if accepted, 0 if refused (logged
 *  with the peer and dropped). */
static int
offer (node_t *self, core_event_t *ev, const char *peer)
{
    char err[TF_ERRLEN];
    if (core_handle (self->core, ev, err, sizeof err) < 0) {
        log_refusal (self, "refused %s from %s: %s", core_event_str (ev->type), peer, err);
        return 0;
    }
    return 1;
}

static int settle_losses (node_t *self);

/*  Offer an event and carry out what it asks for. */
static int
feed (node_t *self, core_event_t *ev, const char *peer)
{
    int rc = offer (self, ev, peer) ? perform (self) : 0;
    return rc == 0 ? settle_losses (self) : rc;
}

/*  Child slot is lost (why): tell the controller, and the core, which
 *  queues again every task its subtree had. In a calibration a lost
 *  child is fatal: the phases need every link. */
static int
lose_child (node_t *self, int slot, const char *why)
{
    const char *name = self->cfg->nodes[self->me->children[slot]].name;
    liveness_forget (self->live, slot);
    self->unreachable[slot] = 1;
    uint64_t before = core_stats (self->core).requeued;
    core_event_t ev = {.type = CORE_EV_LOST, .now = tf_now (), .child = slot};
    char err[TF_ERRLEN];
    if (core_handle (self->core, &ev, err, sizeof err) < 0)
        return 0;   /* lost already */
    logmsg (self, "lost child %s (%s): %" PRIu64 " of its tasks queued again", name,
            why, core_stats (self->core).requeued - before);
    zmsg_t *msg = proto_lost (name, why);
    zmsg_send (&msg, self->ctl);
    if (self->measure)
        return fail (self, "a child was lost during the calibration");
    int rc = perform (self);
    return rc == 0 ? settle_losses (self) : rc;
}

/*  Declare lost every child a send failed to. */
static int
settle_losses (node_t *self)
{
    for (int i = 0; i < self->me->nchildren; i++)
        if (self->unreachable[i] && !liveness_lost (self->live, i)) {
            int rc = lose_child (self, i, "its connection is gone");
            if (rc != 0)
                return rc;
        }
    return 0;
}

/*  --- incoming ----------------------------------------------------------- */

static void
refused (node_t *self, const char *peer, const char *why)
{
    self->refused++;
    log_refusal (self, "refused a message from %s: %s", peer, why);
}

/*  Keep the bytes of a chunk the core accepted, so we can forward them:
 *  a command's in its spool, a synthetic task's in memory (the frame
 *  itself, node/payload.h), except on a leaf, which forwards nothing. The
 *  core checked its sizes against the task's; they size memory only
 *  within PROTO_MAX_TASK_BYTES all the same. Returns 0, or -1 after
 *  saying why (a spool that cannot be written is fatal). */
static int
store_chunk (node_t *self, proto_msg_t *m)
{
    if (m->kind == CORE_KIND_COMMAND) {
        char err[TF_ERRLEN];
        if (self->cargo && cargo_input_store (self->cargo, m->task, m->bytes, m->index,
                                              zframe_data (m->payload),
                                              zframe_size (m->payload), err,
                                              sizeof err) == 0)
            return 0;
        return fail (self, self->cargo ? err : "a command task in a run without any"), -1;
    }
    if (self->me->nchildren == 0 || m->task == CORE_PROBE_TASK)
        return 0;
    if (m->bytes > PROTO_MAX_TASK_BYTES) {
        logmsg (self, "dropped a payload of %" PRIu64 " bytes", m->bytes);
        return 0;
    }
    if (payload_put (self->payloads, m->task, m->bytes, m->index, &m->payload) != 0)
        return fail (self, "a chunk out of order reached the payload store"), -1;
    return 0;
}

static int
on_parent (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->parent);
    proto_msg_t m;
    char why[TF_ERRLEN];
    if (!msg)
        return 0;
    liveness_heard (self->live, self->me->nchildren, tf_now ());   /* any traffic */
    if (proto_decode (&msg, &m, why, sizeof why) < 0) {
        refused (self, "the parent", why);
        return 0;
    }
    int rc = 0;
    core_event_t ev = {.now = tf_now (), .task = m.task, .index = m.index};
    if (m.command == PROTO_RESULT_ACK) {
        ev.type = CORE_EV_RESULT_ACK;
        rc = feed (self, &ev, "the parent");
    }
    else if (m.command != PROTO_CHUNK)
        refused (self, "the parent", proto_command_str (m.command));
    else {
        ev = (core_event_t){.type = CORE_EV_CHUNK, .now = tf_now (), .task = m.task,
                            .units = m.units, .bytes = m.bytes, .index = m.index,
                            .count = m.count, .len = zframe_size (m.payload),
                            .kind = (core_kind_t) m.kind, .avoid = m.avoid,
                            .navoid = m.navoid};
        if (offer (self, &ev, "the parent")) {
            chunk_span (self, TRACE_RECEIVE, 0, m.task, m.index, m.count);
            rc = store_chunk (self, &m) == 0 ? perform (self) : -1;
        }
    }
    proto_msg_clear (&m);
    return rc;
}

/*  A chunk of a child's result stream: the core checks it, cargo keeps
 *  its bytes (a spool, or on the root the task's outputs). A stream cargo
 *  cannot keep is logged; the task then counts as failed on the root. */
static int
on_result (node_t *self, int slot, const proto_msg_t *m, const char *name)
{
    core_event_t ev = {.type = CORE_EV_RESULT, .now = tf_now (), .child = slot,
                       .task = m->task, .node = m->node, .failed = m->failed,
                       .bytes = m->bytes, .index = m->index, .count = m->count,
                       .len = zframe_size (m->payload)};
    char err[TF_ERRLEN];
    if (!self->cargo) {
        refused (self, name, "a result stream in a run without commands");
        return 0;
    }
    /*  A result of a task not out with that child (a late duplicate, say)
     *  is refused here, before its bytes touch any file. */
    if (!offer (self, &ev, name))
        return 0;
    if (cargo_result_store (self->cargo, m->task, m->bytes, m->index, m->count,
                            zframe_data (m->payload), zframe_size (m->payload), err,
                            sizeof err) != 0) {
        logmsg (self, "result of task %" PRIu64 " from %s: %s", m->task, name, err);
        if (self->me->parent >= 0)
            return fail (self, err), -1;
    }
    return perform (self);
}

/*  The child slot an identity speaks for, and whether it is the child's
 *  heartbeat connection ("NAME/beat"); -1 for a stranger. */
static intptr_t
child_slot (node_t *self, char *identity, int *beat)
{
    if (!identity)
        return -1;
    size_t len = strlen (identity), suffix = strlen (NODE_BEAT_SUFFIX);
    *beat = len > suffix && strcmp (identity + len - suffix, NODE_BEAT_SUFFIX) == 0;
    if (*beat)
        identity[len - suffix] = '\0';
    intptr_t slot = (intptr_t) zhashx_lookup (self->slots, identity) - 1;
    if (*beat)
        identity[len - suffix] = '/';
    return slot;
}

/*  A message on a heartbeat connection: a BEAT, nothing else. */
static void
on_beat_message (node_t *self, zmsg_t **msg_p, const char *name)
{
    proto_msg_t m;
    char why[TF_ERRLEN];
    if (proto_decode (msg_p, &m, why, sizeof why) < 0)
        refused (self, name, why);
    else if (m.command != PROTO_BEAT)
        refused (self, name, proto_command_str (m.command));
    proto_msg_clear (&m);
}

/*  A message on a child's connection: the core's events, results and
 *  subtree bounds. */
static int
on_child_message (node_t *self, int slot, zmsg_t **msg_p, const char *name)
{
    proto_msg_t m;
    char why[TF_ERRLEN];
    int rc = 0;
    if (proto_decode (msg_p, &m, why, sizeof why) < 0) {
        refused (self, name, why);
        return 0;
    }
    core_event_t ev = {.now = tf_now (), .child = slot};
    core_done_t *done = NULL;
    switch (m.command) {
    case PROTO_REQUEST:
        ev.type = CORE_EV_REQUEST;
        ev.n = m.n;
        break;
    case PROTO_ACK:
        ev.type = CORE_EV_ACK;
        ev.task = m.task;
        ev.index = m.index;
        break;
    case PROTO_DONE: {
        ev.type = CORE_EV_DONE;
        ev.ndone = m.ndone;
        done = xcalloc (ev.ndone + 1, sizeof *done);
        for (uint32_t i = 0; i < ev.ndone; i++)
            done[i] = (core_done_t){.task = m.done[i].task, .node = m.done[i].node};
        ev.done = done;
        break;
    }
    case PROTO_RESULT:
        rc = on_result (self, slot, &m, name);
        proto_msg_clear (&m);
        goto out;
    case PROTO_SUBTREE:
        if (on_subtree (self, slot, &m, name) < 0)
            rc = fail (self, "cannot send SUBTREE to the parent");
        proto_msg_clear (&m);
        goto out;
    default:
        refused (self, name, proto_command_str (m.command));
        proto_msg_clear (&m);
        goto out;
    }
    rc = feed (self, &ev, name);
    free (done);
    proto_msg_clear (&m);
out:
    return rc;
}

/*  A message on a child's connection, or each part of its BATCH in
 *  order (none after one that got the child declared lost). */
static int
on_child_messages (node_t *self, int slot, zmsg_t **msg_p, const char *name)
{
    zmsg_t *parts[PROTO_MAX_BATCH];
    char why[TF_ERRLEN];
    int n = proto_unbatch (msg_p, parts, why, sizeof why);
    if (n < 0) {
        refused (self, name, why);
        return 0;
    }
    if (n == 0)
        return on_child_message (self, slot, msg_p, name);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (rc == 0 && !liveness_lost (self->live, slot))
            rc = on_child_message (self, slot, &parts[i], name);
        zmsg_destroy (&parts[i]);
    }
    return rc;
}

static void send_beat_to (node_t *self, int child);

static int
on_child (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->router);
    if (!msg)
        return 0;
    char *name = zmsg_popstr (msg);
    int beat = 0;
    intptr_t slot = child_slot (self, name, &beat);
    int rc = 0;
    if (slot < 0 || liveness_lost (self->live, (int) slot)) {
        refused (self, name ? name : "?",
                 slot < 0 ? "not one of our children" : "a child lost already");
        zmsg_destroy (&msg);
    }
    else if (self->cert && !curve_peer_is (zmsg_last (msg), self->cfg->nodes[
                               self->me->children[slot]].name)) {
        /*  A key of the run, but another child's: it cannot speak for
         *  this one. */
        refused (self, name, "not authenticated as this child");
        zmsg_destroy (&msg);
    }
    else {
        liveness_heard (self->live, (int) slot, tf_now ());   /* any traffic */
        if (beat && !self->beat_warmed[slot]) {
            /*  Its heartbeat connection is up: the warm-up back. */
            self->beat_warmed[slot] = 1;
            for (int k = 0; k < PROTO_WARM_MESSAGES; k++)
                send_beat_to (self, (int) slot);
        }
        if (beat)
            on_beat_message (self, &msg, name);
        else
            rc = on_child_messages (self, (int) slot, &msg, name);
    }
    free (name);
    return rc;
}

/*  --- calibration (treefarm measure) -------------------------------------- */

/*  Stream probes to a child, or stop. */
static int
stream (node_t *self, int slot, int on)
{
    core_event_t ev = {.type = CORE_EV_STREAM, .now = tf_now (), .child = slot, .n = on};
    return feed (self, &ev, "the controller");
}

/*  MEASURE: stream to the children named, and measure from warm-up to end. */
static int
on_measure (node_t *self, const proto_msg_t *m)
{
    int n = self->me->nchildren;
    if (!self->measure || calphase_active (self->cal)) {
        refused (self, "the controller", self->measure ? "MEASURE during a phase"
                                                       : "MEASURE outside measure mode");
        return 0;
    }
    memset (self->streams, 0, (n + 1) * sizeof *self->streams);
    for (uint32_t i = 0; i < m->nstreams; i++) {
        intptr_t slot = self->slots ? (intptr_t) zhashx_lookup (self->slots, m->streams[i]) - 1
                                    : -1;
        if (slot < 0) {
            refused (self, "the controller", "MEASURE streams to a non-child");
            return 0;
        }
        self->streams[slot] = 1;
    }
    if (calphase_begin (self->cal, m->phase, tf_now (), m->warmup, m->seconds,
                        self->streams) != 0) {
        refused (self, "the controller", "MEASURE with a warm-up not below its length");
        return 0;
    }
    for (int c = 0; c < n; c++)
        if (self->streams[c] && stream (self, c, 1) < 0)
            return -1;
    return 0;
}

/*  MEASURED: what the phase measured, in platform terms (units per
 *  platform second, MB/s). */
static int
send_measured (node_t *self, const calphase_result_t *r)
{
    double scale = self->cfg->platform.time_scale;
    json_t *send = json_object ();
    for (int c = 0; c < self->me->nchildren; c++)
        json_object_set_new (send, self->cfg->nodes[self->me->children[c]].name,
                             json_real (r->send_bps[c] / self->bps_per_mbps));
    zmsg_t *msg = proto_measured (r->phase, r->seconds * scale, r->units_per_s / scale,
                                  r->recv_bps / self->bps_per_mbps, &send);
    return zmsg_send (&msg, self->ctl);
}

/*  Take the warm-up snapshot, or end the phase, stop the streams and
 *  report, when due. */
static int
measure_tick (node_t *self, double now)
{
    int n = self->me->nchildren;
    if (!calphase_active (self->cal))
        return 0;
    for (int c = 0; c < n; c++)
        self->probe_out[c] = core_child_stats (self->core, c).probe_bytes;
    calphase_counters_t counters = {self->units, self->units_at,
                                    core_stats (self->core).probe_bytes_in,
                                    self->probe_out};
    calphase_result_t r;
    if (!calphase_tick (self->cal, now, &counters, &r))
        return 0;
    for (int c = 0; c < n; c++)
        if (calphase_streams (self->cal, c) && stream (self, c, 0) < 0)
            return -1;
    return send_measured (self, &r);
}

/*  Returns 1 when the controller says STOP, -1 on a fatal error. */
static int
on_control (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->ctl);
    proto_msg_t m;
    char why[TF_ERRLEN];
    if (!msg)
        return 0;
    if (proto_decode (&msg, &m, why, sizeof why) < 0) {
        refused (self, "the controller", why);
        return 0;
    }
    self->ctl_heard = tf_now ();
    int rc = 0;
    if (m.command == PROTO_STOP)
        rc = 1;
    else if (m.command == PROTO_PING)
        rc = 0;
    else if (m.command == PROTO_MEASURE)
        rc = on_measure (self, &m);
    else
        refused (self, "the controller", proto_command_str (m.command));
    proto_msg_clear (&m);
    return rc;
}

static int
on_engine (node_t *self)
{
    uint64_t task;
    double seconds;
    int rc = engine_recv (self->engine, &task, &seconds);
    if (rc < 0)
        return fail (self, "the compute engine sent something unexpected"), -1;
    double now = tf_now ();
    self->units = engine_units (self->engine);
    self->units_at = now;
    if (observe_due (self->observe, now))
        take_sample (self, now);
    if (rc == 1)
        return 0;   /* progress only */
    self->compute_seconds += seconds;
    span (self, 0, TRACE_COMPUTE, 0, task);
    core_event_t ev = {.type = CORE_EV_COMPUTED, .now = now, .task = task};
    int r = feed (self, &ev, "the engine");
    if (!engine_busy (self->engine))
        observe_idle (self->observe);
    return r;
}

/*  Command worker `slot` finished a task. */
static int
on_cmdrun (node_t *self, uint32_t slot)
{
    cmdrun_t *worker = self->cmdrun[slot];
    uint64_t task, bytes;
    int failed;
    json_t *info;
    if (cmdrun_recv (worker, &task, &bytes, &failed, &info) != 0)
        return fail (self, "the command worker sent something unexpected"), -1;
    double seconds = json_number_value (json_object_get (info, "seconds"));
    self->compute_seconds += seconds;
    span (self, 0, TRACE_COMPUTE, slot, task);
    cargo_computed (self->cargo, task, bytes, &info);
    core_event_t ev = {.type = CORE_EV_COMPUTED, .now = tf_now (), .task = task,
                       .bytes = bytes, .failed = failed};
    return feed (self, &ev, "the command worker");
}

/*  Emulated interference: hand the rates this node meters now to the
 *  model (node/emulate.h) and run the engine at the speed it says. */
static void
update_speed (node_t *self, double now)
{
    for (int i = 0; i < self->me->nchildren; i++)
        self->send_bps[i] = core_send_rate (self->core, i, now);
    double f = emul_update (self->emul, now, engine_busy (self->engine),
                            core_recv_rate (self->core, now), self->send_bps);
    engine_set_speed (self->engine, f);
}

/*  The loop woke `late` seconds after the time it slept until, whether a
 *  message or the timer woke it (a message that came in time wakes it
 *  early: no lag). Since it never sleeps longer than NODE_TICK_MAX
 *  (emulated: NODE_SPEED_EVERY), a node starved of CPU shows here however
 *  busy its sockets. */
static void
note_lag (node_t *self, double late)
{
    if (late <= 0)
        return;
    self->loop_lag += late;
    if (late > self->loop_lag_max)
        self->loop_lag_max = late;
}

/*  Begin: a run's START, or, in calibration, one endless engine task with
 *  the bag closed, as every node does in every phase; a leaf's subtree
 *  bound goes up at once. Returns 0, or non-zero after fail. */
static int
begin (node_t *self)
{
    int rc;
    if (self->measure) {
        core_event_t tick = {.type = CORE_EV_TICK, .now = tf_now ()};
        rc = feed (self, &tick, "the clock");
        engine_start (self->engine, CORE_PROBE_TASK, 1e12);
    }
    else {
        if (self->trace_wanted) {
            self->trace = trace_new (TRACE_MAX_SPANS, self->nworkers ? self->nworkers : 1,
                                     (uint32_t) self->me->nchildren);
            self->trace_t0 = tf_now ();
        }
        core_event_t start = {.type = CORE_EV_START, .now = tf_now ()};
        rc = feed (self, &start, "the controller");
    }
    if (rc == 0 && subtree_bound (self) < 0)
        rc = fail (self, "cannot send SUBTREE to the parent");
    return rc;
}

/*  --- liveness (docs/reliability.md) ------------------------------------ */

/*  One BEAT to a child's heartbeat identity, or to the parent. Never
 *  blocking (send timeouts of 0), and a beat that cannot go is not an
 *  error: silence is what counts. */
static void
send_beat_to (node_t *self, int child)
{
    zmsg_t *msg = proto_empty (PROTO_BEAT);
    zmsg_pushstrf (msg, "%s%s", self->cfg->nodes[self->me->children[child]].name,
                   NODE_BEAT_SUFFIX);
    if (zmsg_send (&msg, self->router) != 0)
        zmsg_destroy (&msg);
}

static void
send_beat_to_parent (node_t *self)
{
    zmsg_t *msg = proto_empty (PROTO_BEAT);
    if (zmsg_send (&msg, self->beat) != 0)
        zmsg_destroy (&msg);
}

/*  Our heartbeats: to the parent on the heartbeat connection, to each
 *  child not lost on its own. */
static void
send_beats (node_t *self)
{
    if (self->beat)
        send_beat_to_parent (self);
    for (int i = 0; i < self->me->nchildren; i++)
        if (!liveness_lost (self->live, i))
            send_beat_to (self, i);
}

/*  The start of the run: PROTO_WARM_MESSAGES PINGs to the controller and
 *  BEATs to the parent, so the queues of these quiet connections take
 *  all their memory now (overlay/proto.h). The parent answers in kind
 *  when the first of them comes (on_child), the controller on START. */
static void
warm_pipes (node_t *self)
{
    for (int k = 0; k < PROTO_WARM_MESSAGES; k++) {
        zmsg_t *msg = proto_empty (PROTO_PING);
        if (zmsg_send (&msg, self->ctl) != 0)
            zmsg_destroy (&msg);
        if (self->beat)
            send_beat_to_parent (self);
    }
}

/*  The parent is lost: tell the controller, then stop. */
static int
orphaned (node_t *self, const char *why)
{
    const char *parent = self->cfg->nodes[self->me->parent].name;
    logmsg (self, "lost the parent %s (%s): stopping", parent, why);
    zmsg_t *msg = proto_lost (parent, why);
    zmsg_send (&msg, self->ctl);
    return NODE_ORPHANED;
}

/*  Send our heartbeats when due, and find who fell silent; lower *wait
 *  to the next deadline. Returns 0, NODE_ORPHANED when the parent is
 *  lost, or another non-zero status after a fatal error. */
static int
keep_alive (node_t *self, double now, double *wait)
{
    if (liveness_beat_due (self->live, now))
        send_beats (self);
    double silent;
    int peer;
    while ((peer = liveness_overdue (self->live, now, &silent)) >= 0) {
        char why[64];
        snprintf (why, sizeof why, "silent for %.2f s", silent);
        int rc = peer == self->me->nchildren ? orphaned (self, why)
                                              : lose_child (self, peer, why);
        if (rc != 0)
            return rc;
    }
    double due = liveness_next_deadline (self->live, now);
    if (due < *wait)
        *wait = due;
    return 0;
}

/*  A message on our heartbeat connection: the parent is alive. */
static void
on_parent_beat (node_t *self)
{
    zmsg_t *msg = zmsg_recv (self->beat);
    if (!msg)
        return;
    liveness_heard (self->live, self->me->nchildren, tf_now ());
    on_beat_message (self, &msg, "the parent");
}

/*  Root: write the journal's batch when due; lower *wait to its next
 *  deadline. */
static int
journal_due (node_t *self, double now, double *wait)
{
    char err[TF_ERRLEN];
    if (cargo_journal_tick (self->cargo, now, 0, err, sizeof err) != 0) {
        fail (self, err);
        return -1;
    }
    double due = cargo_next_deadline (self->cargo, now);
    if (due >= 0 && due < *wait)
        *wait = due;
    return 0;
}

/*  What is due on the clock: the emulated speed, STATS, a sample while
 *  the engine is idle (it sends nothing then), a calibration snapshot.
 *  Returns how long the loop may sleep, or a negative number after a
 *  fatal error. */
static double
clock_work (node_t *self, double now, double *next_stats)
{
    /*  The controller may be busy for seconds (filing hundreds of
     *  REPORTs): never less patience with it than PROTO_CONTROL_SILENCE,
     *  and more when the run allows its peers more. */
    if (now - self->ctl_heard > fmax (PROTO_CONTROL_SILENCE, config_lost_after_s (self->cfg))) {
        fail (self, "the controller fell silent: exiting");
        return -1;
    }
    if (now - emul_updated_at (self->emul) >= NODE_SPEED_EVERY)
        update_speed (self, now);
    uint64_t held = ratelog_overdue (&self->refusals, now);
    if (held)
        logmsg (self, "%llu more refusals not shown", (unsigned long long) held);
    if (now >= *next_stats) {
        send_stats (self, PROTO_STATS);
        *next_stats = now + NODE_STATS_EVERY;
    }
    if (!engine_busy (self->engine) && observe_due (self->observe, now))
        take_sample (self, now);
    if (measure_tick (self, now) < 0) {
        fail (self, "cannot report a calibration phase");
        return -1;
    }
    double wait = *next_stats - now;
    double cal = calphase_next (self->cal, now);
    if (cal >= 0 && cal < wait)
        wait = cal;
    double due = core_next_deadline (self->core, now);
    if (due >= 0 && due < wait)
        wait = due;
    due = engine_deadline (self->engine, now);   /* emulated, in the loop */
    if (due >= 0 && due < wait)
        wait = due;
    if (self->cargo && journal_due (self, now, &wait) != 0)
        return -1;
    if (wait > NODE_TICK_MAX)
        wait = NODE_TICK_MAX;
    /*  Only traffic that slows the engine needs the loop this awake: on a
     *  node without interference, 100 wake-ups a second are pure cost,
     *  and hundreds of emulated nodes on one machine starve each other
     *  of CPU with them (docs/performance.md, "Scale and memory"). */
    if (emul_interferes (self->emul) && wait > NODE_SPEED_EVERY)
        wait = NODE_SPEED_EVERY;
    return wait;
}

/*  Wait up to `wait` seconds for the sockets (node/waitset.h: to the
 *  microsecond, never deaf: with time scaled by s, a millisecond late is
 *  s milliseconds of platform time on every paced chunk). Notes how late
 *  the loop woke. Returns how many sockets are readable, in ready[] in
 *  priority order, or -1 when interrupted. */
static int
wait_for (node_t *self, waitset_t *ws, double now, double wait, zsock_t **ready)
{
    double until = now + wait;
    int n = waitset_wait (ws, until, ready, NODE_MAX_READY);
    note_lag (self, tf_now () - until);
    return n;
}

/*  Handle one message from sock. Returns 0 to go on, NODE_STOPPED after
 *  STOP and the final REPORT, anything else after a fatal error (said). */
static int
handle (node_t *self, zsock_t *sock)
{
    if (sock == self->ctl) {
        int c = on_control (self);
        if (c < 0) {
            fail (self, "calibration failed");
            return -1;
        }
        if (c == 0)
            return 0;
        verbose (self, "stopped by the controller");
        return report (self) == 0 ? NODE_STOPPED : -1;
    }
    if (sock == engine_sock (self->engine))
        return on_engine (self);
    for (uint32_t i = 0; i < self->nworkers; i++)
        if (sock == cmdrun_sock (self->cmdrun[i]))
            return on_cmdrun (self, i);
    if (self->parent && sock == self->parent)
        return on_parent (self);
    if (self->beat && sock == self->beat) {
        on_parent_beat (self);
        return 0;
    }
    if (self->router && sock == self->router)
        return on_child (self);
    return 0;
}

/*  Serve what woke the loop: every readable socket in priority order,
 *  each drained of up to NODE_DRAIN messages, so one wake-up and one
 *  turn of clock work serve a burst; then an emulated engine whose task
 *  (or progress report) is due; nothing readable: the clock. */
static int
serve_ready (node_t *self, zsock_t **ready, int n)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int k = 0;
        do
            rc = handle (self, ready[i]);
        while (rc == 0 && ++k < NODE_DRAIN && waitset_readable (ready[i]));
    }
    if (rc == 0 && engine_deadline (self->engine, tf_now ()) == 0)
        rc = on_engine (self);   /* emulated, in the loop: after the sockets */
    if (rc == 0 && n == 0) {
        core_event_t tick = {.type = CORE_EV_TICK, .now = tf_now ()};
        return feed (self, &tick, "the clock");
    }
    return rc;
}

/*  The sockets the loop waits on, most urgent first: a child's REQUEST or
 *  ACK starts the next transfer, so children come before the parent's
 *  chunks, and both before the engine's completions, so that a node's
 *  own computing never keeps its children waiting (docs/architecture.md,
 *  "Serving before computing"). The controller comes last. */
static waitset_t *
loop_sockets (node_t *self)
{
    char err[TF_ERRLEN];
    waitset_t *ws = waitset_new (err, sizeof err);
    if (!ws) {
        fail (self, err);
        return NULL;
    }
    if (self->router)
        waitset_add (ws, self->router);
    if (self->parent)
        waitset_add (ws, self->parent);
    if (engine_sock (self->engine))   /* NULL: emulated, in the loop */
        waitset_add (ws, engine_sock (self->engine));
    for (uint32_t i = 0; i < self->nworkers; i++)
        waitset_add (ws, cmdrun_sock (self->cmdrun[i]));
    if (self->beat)
        waitset_add (ws, self->beat);
    waitset_add (ws, self->ctl);
    return ws;
}

/*  The run proper: until STOP, or a fatal error. Returns the exit status. */
static int
serve (node_t *self)
{
    waitset_t *ws = loop_sockets (self);
    if (!ws)
        return 1;
    zsock_t *ready[NODE_MAX_READY];
    double next_stats = tf_now ();
    self->ctl_heard = next_stats;
    self->live = liveness_new (self->me->nchildren + (self->parent != NULL),
                               config_heartbeat_s (self->cfg),
                               config_lost_after_s (self->cfg), next_stats);
    self->unreachable = xcalloc ((size_t) self->me->nchildren + 1, 1);
    self->beat_warmed = xcalloc ((size_t) self->me->nchildren + 1, 1);
    warm_pipes (self);
    int rc = begin (self);
    while (rc == 0) {
        double now = tf_now ();
        double wait = clock_work (self, now, &next_stats);
        if (wait < 0) {
            rc = -1;
            break;
        }
        if ((rc = keep_alive (self, now, &wait)) != 0)
            break;
        if (self->parent && flush_parent (self) != 0) {
            rc = fail (self, "cannot send to the parent");
            break;
        }
        int n = wait_for (self, ws, now, wait, ready);
        if (n < 0) {
            rc = fail (self, "interrupted");
            break;
        }
        rc = serve_ready (self, ready, n);
    }
    waitset_destroy (&ws);
    return rc == NODE_STOPPED ? 0 : rc == NODE_ORPHANED ? NODE_EXIT_ORPHANED : 1;
}

/*  START: connect to the parent it names (none for the root), and note the
 *  mode. Returns 0, or -1 with a message in err. */
static int
take_start (node_t *self, const proto_msg_t *m, char *err, size_t errlen)
{
    if ((self->me->parent >= 0) != (m->text[0] != '\0'))
        return tf_error (err, errlen, "%s", self->me->parent >= 0
                                                ? "START names no parent endpoint"
                                                : "START names a parent for the root");
    self->measure = m->measure;
    if (self->me->parent < 0)
        return 0;
    self->parent = zsock_new (ZMQ_DEALER);
    zsock_set_identity (self->parent, self->opts->name);
    if (self->cert)
        curve_client (self->parent, self->cert, self->parent_key);
    zsock_set_ipv6 (self->parent, 1);   /* the parent may be on [::1] */
    zsock_set_maxmsgsize (self->parent,
                          PROTO_MAX_FRAME_PARENT (config_chunk_bytes (self->cfg)));
    if (zsock_connect (self->parent, "%s", m->text) < 0)
        return tf_error (err, errlen, "cannot connect to the parent at %s", m->text);
    self->beat = zsock_new (ZMQ_DEALER);
    char identity[256];   /* a name is at most 63 characters */
    snprintf (identity, sizeof identity, "%s%s", self->opts->name, NODE_BEAT_SUFFIX);
    zsock_set_identity (self->beat, identity);
    if (self->cert)
        curve_client (self->beat, self->cert, self->parent_key);
    zsock_set_ipv6 (self->beat, 1);
    zsock_set_maxmsgsize (self->beat, PROTO_MAX_FRAME_CHILDREN);
    zsock_set_sndtimeo (self->beat, 0);
    zsock_set_linger (self->beat, 0);
    if (zsock_connect (self->beat, "%s", m->text) < 0)
        return tf_error (err, errlen, "cannot connect to the parent at %s", m->text);
    verbose (self, "connected to the parent at %s", m->text);
    return 0;
}

/*  The handshake: HELLO, CONFIG, bind, BOUND, START. Returns 0, or -1
 *  with a message in err. */
static int
handshake (node_t *self, char *err, size_t errlen)
{
    proto_msg_t m = {0};
    self->ctl = zsock_new (ZMQ_DEALER);
    zsock_set_identity (self->ctl, self->opts->name);
    zsock_set_ipv6 (self->ctl, 1);   /* the controller may be on [::1] (ssh) */
    zsock_set_maxmsgsize (self->ctl, PROTO_MAX_FRAME_CONTROL);
    zsock_set_linger (self->ctl, NODE_LINGER_MS);
    if (self->cert)
        curve_client (self->ctl, self->cert, self->controller_key);
    if (zsock_connect (self->ctl, "%s", self->opts->controller) < 0) {
        zsock_destroy (&self->ctl);   /* nobody to tell */
        return tf_error (err, errlen, "cannot connect to the controller at %s",
                         self->opts->controller);
    }
    zmsg_t *hello = proto_hello (self->opts->name, getpid ());
    zmsg_send (&hello, self->ctl);
    int rc = wait_control (self, PROTO_CONFIG, NODE_HANDSHAKE_MS, &m, err, errlen);
    if (rc == 0)
        rc = take_config (self, m.object, m.run, err, errlen);
    if (rc == 0)
        rc = take_keys (self, m.keys, err, errlen);
    proto_msg_clear (&m);
    if (rc == 0)
        rc = bind_children (self, err, errlen);
    if (rc < 0)
        return -1;
    verbose (self, "experiment %s, %d children, endpoint \"%s\"", self->cfg->name,
             self->me->nchildren, self->endpoint);
    zmsg_t *bound = proto_bound (self->endpoint);
    zmsg_send (&bound, self->ctl);
    rc = wait_control (self, PROTO_START, NODE_HANDSHAKE_MS, &m, err, errlen);
    if (rc == 0)
        rc = take_start (self, &m, err, errlen);
    proto_msg_clear (&m);
    return rc;
}

int
node_run (const node_opts_t *opts)
{
    node_t node = {.opts = opts, .refusals = ratelog_init (RATELOG_BURST, RATELOG_WINDOW)},
           *self = &node;
    char err[TF_ERRLEN];
    int status = 1;
    zsys_init ();
    if (waitset_catch_interrupts (err, sizeof err) < 0)
        status = fail (self, err);
    else if (opts->cert && !(self->cert = curve_load (opts->cert, opts->name,
                                                 self->controller_key, err, sizeof err)))
        status = fail (self, err);
    else if (handshake (self, err, sizeof err) < 0
             || make_core (self, err, sizeof err) < 0)
        status = fail (self, err);
    else
        status = serve (self);
    engine_destroy (&self->engine);
    for (uint32_t i = 0; i < self->nworkers; i++)
        cmdrun_destroy (&self->cmdrun[i]);
    free (self->cmdrun);
    cargo_destroy (&self->cargo);
    json_decref (self->run);
    core_destroy (&self->core);
    payload_store_destroy (&self->payloads);
    zhashx_destroy (&self->slots);
    zsock_destroy (&self->router);
    zactor_destroy (&self->auth);   /* after the socket it guards */
    zcert_destroy (&self->cert);
    for (uint32_t i = 0; i < self->nout; i++)
        zmsg_destroy (&self->outbox[i]);
    zsock_destroy (&self->parent);
    zsock_destroy (&self->beat);
    zsock_destroy (&self->ctl);
    liveness_destroy (&self->live);
    free (self->unreachable);
    free (self->beat_warmed);
    emul_destroy (&self->emul);
    subtree_destroy (&self->subtree);
    calphase_destroy (&self->cal);
    config_destroy (&self->cfg);
    free (self->endpoint);
    free (self->send_bps);
    free (self->probe_out);
    free (self->streams);
    observe_destroy (&self->observe);
    json_decref (self->fit);
    free (self->observed);
    trace_destroy (&self->trace);
    return status;
}
