/*  report — what a node tells the controller of itself: samples of its
 *  engine and links and the online fit over them (node/observe.h), the
 *  timeline when the run asks for one (overlay/trace.h), STATS and the
 *  final REPORT (overlay/proto_stats.h), with what the sampler and the
 *  fit cost (node_report_t). See node/runtime.h.
 */
#include <math.h>
#include <sys/resource.h>
#include <time.h>

#include "node/core_report.h"
#include "node/ratewin.h"
#include "node/runtime.h"
#include "overlay/bound.h"
#include "overlay/load.h"
#include "overlay/proto_stats.h"
#include "overlay/util.h"

#define NODE_BYE_MS 30000         /* wait for BYE after REPORT: as long as
                                     the handshake, since a controller
                                     filing 255 REPORTs on a starved
                                     machine may take seconds */
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
#define NODE_RATE_WINDOW 256      /* computing intervals the effective rate
                                     is measured over (node/ratewin.h):
                                     25.6 s of wall time at the default
                                     sample_ms, 512 platform s at time
                                     scale 20 */

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
    double d = thread_cpu () - t0 - self->rep.clock_cost;
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

double
report_busy_seconds (const node_t *self, double now)
{
    const node_rate_t *r = &self->rep.rate;
    return r->busy + (r->since >= 0 ? now - r->since : 0);
}

/*  The effective rate's window takes the sample at now (platform units
 *  and seconds); returns its rate so far (NaN: none yet). */
static double
rate_sample (node_t *self, double now)
{
    double ts = self->cfg->platform.time_scale;
    ratewin_feed (self->rep.rate.win, now * ts, self->rep.units,
                  report_busy_seconds (self, now) * ts);
    return ratewin_rate (self->rep.rate.win, NULL);
}

/*  Record a sample now: the engine's units and the bytes observed, the
 *  integral of the metered rates its speed followed (node/observe.h),
 *  the background's CPU so far and the effective rate. Called right
 *  after an engine message, so units and bytes are of one instant, or on
 *  the clock while the engine is idle. Its time is seconds since START. */
static void
take_sample (node_t *self, double now)
{
    /*  Timed on the monotonic clock (vDSO, ~25 ns a reading): the thread
     *  CPU clock's reading costs more than the sample. */
    double t0 = tf_now ();
    emul_observed (self->parts.emul, now, self->rep.observed);
    observe_set_load (self->rep.observe, loadgen_busy_integral (self, now),
                      rate_sample (self, now));
    /*  A held engine (a calibration's idle phase) has a task but computes
     *  nothing: its intervals are no observation of its compute rate. */
    observe_sample (self->rep.observe, now - self->rep.trace_t0, self->rep.units,
                    engine_busy (self->parts.engine) && !engine_held (self->parts.engine),
                    self->rep.observed);
    self->rep.observe_cpu += fmin (tf_now () - t0, NODE_SAMPLE_MAX);
    adapt_sample (self, now);
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
            core_set_child_ir (self->parts.core, i, e->ir_send[i]);
}

/*  The online estimates as STATS carries them (borrowed), solved again
 *  and applied only when a busy interval joined the fit since the last
 *  time, and for STATS at most every NODE_FIT_EVERY: an idle node's fit
 *  costs nothing, a busy one's little. */
static json_t *
current_fit (node_t *self, int final)
{
    double now = tf_now ();
    if (self->rep.fit && (observe_count (self->rep.observe) == self->rep.fit_n
                      || (!final && now - self->rep.fit_at < NODE_FIT_EVERY)))
        return self->rep.fit;
    self->rep.fit_at = now;
    double t0 = thread_cpu ();
    const observe_estimates_t *est = observe_estimates (self->rep.observe);
    apply_estimates (self, est);
    adapt_fit (self, est);
    json_decref (self->rep.fit);
    self->rep.fit = fit_json (self, est);
    self->rep.fit_n = est->n;
    self->rep.observe_cpu += cpu_since (self, t0);
    return self->rep.fit;
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
    int rc = observe_write_csv (self->rep.observe, out, t->names,
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
    return trace_write (t->node->rep.trace, out);
}

/*  How far this node fell behind the clock it emulates, wall seconds:
 *  its event loop (timers that fired late), its engine (task ends noticed
 *  late), and its links (transfers waiting for their last ack after the
 *  paced delivery, summed over children), with the worst single loop or
 *  engine delay. */
static void
fill_lag (node_t *self, proto_stats_t *s)
{
    double engine_max, loop_max;
    s->lag_loop = clock_lag (self, &loop_max);
    s->lag_engine = engine_lag (self->parts.engine, &engine_max);
    for (int i = 0; i < self->me->nchildren; i++)
        s->lag_link += core_child_stats (self->parts.core, i).ack_wait_seconds;
    s->lag_max = fmax (loop_max, engine_max);
}

/*  The effective rate over the window beside the one the load predicts,
 *  and the background's share of the CPU since START (realized). */
static void
fill_rate (node_t *self, proto_rate_stats_t *r)
{
    double now = tf_now ();
    double elapsed = now - self->load.t0;
    r->measured = ratewin_rate (self->rep.rate.win, &r->measured_se);
    r->predicted = loadgen_predicted (self, now);
    r->load_utilization = self->load.load && elapsed > 0
                              ? loadgen_busy_integral (self, now) / elapsed : 0;
    snprintf (r->load_kind, sizeof r->load_kind, "%s",
              self->load.load ? load_kind_str (self->load.load) : "none");
}

/*  REPORT: what this node sent each child, and the writers of its samples
 *  and its trace, which texts (tens of KB: the node's peak of memory is
 *  its REPORT) are written straight into the message (proto_stats.h). */
static void
fill_report (node_t *self, proto_stats_t *s, report_texts_t *texts)
{
    int n = self->me->nchildren, k = 0;
    s->children = xcalloc (n + 1, sizeof *s->children);
    for (int i = 0; i < n; i++) {
        const config_node_t *kid = &self->cfg->nodes[self->me->children[i]];
        if (kid->vacant)   /* no child: nothing to say */
            continue;
        core_child_stats_t c = core_child_stats (self->parts.core, i);
        s->children[k++] = (proto_child_stats_t){
            .name = xstrdup (kid->name), .tasks = c.tasks_sent, .bytes = c.bytes_sent,
            .requested = c.requested, .send_seconds = c.send_seconds};
    }
    s->nchildren = k;
    texts->node = self;
    texts->stats = s;
    texts->names = xcalloc (n + 1, sizeof *texts->names);
    for (int i = 0; i < n; i++)
        texts->names[i] = self->cfg->nodes[self->me->children[i]].name;
    s->write_samples = write_samples;
    s->write_arg = texts;
    if (self->rep.trace) {
        double first_dropped;
        s->write_trace = write_trace;
        s->trace_dropped = trace_dropped (self->rep.trace, &first_dropped);
        s->trace_end = s->trace_dropped ? first_dropped : tf_now () - self->rep.trace_t0;
    }
}

int
report_stats (node_t *self, proto_command_t command)
{
    core_stats_t c = core_stats (self->parts.core);
    proto_stats_t s = core_report_counters (&c);
    s.malformed += receive_refused (self);
    s.compute_seconds = self->rep.compute_seconds;
    s.speed_mean = emul_speed_mean (self->parts.emul);
    s.slots = config_node_is_relay (self->me) ? 0   /* a relay runs nothing */
            : self->cfg->commands.count && self->me->slots ? self->me->slots : 1;
    /*  The root's: the first bound the tree computed (the controller
     *  checks it against its own) and, adapting, the bound now. */
    const double *that = subtree_first_bounds (self->parts.subtree);
    const double *now = subtree_bounds (self->parts.subtree);
    if (that && self->me->parent < 0) {
        s.has_bound = 1;
        s.has_live_bound = self->cfg->platform.adapt;
        for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
            s.bound[m] = that[m];
            s.live_bound[m] = now[m];
        }
    }
    s.fit = json_incref (current_fit (self, command == PROTO_REPORT));
    fill_lag (self, &s);
    fill_rate (self, &s.rate);
    adapt_fill (self, &s.changes, &s.actions);
    report_texts_t texts = {0};
    if (command == PROTO_REPORT)
        fill_report (self, &s, &texts);
    /*  A REPORT's samples are written while it is encoded, and add their
     *  CPU time to these (write_samples). */
    s.observe_cpu_us = (uint64_t) (self->rep.observe_cpu * 1e6);
    s.cpu_us = process_cpu_us ();
    zmsg_t *msg = proto_stats_encode (command, &s);
    proto_stats_clear (&s);
    free (texts.names);
    if (zmsg_send (&msg, self->link.ctl) == 0)
        return 0;
    zmsg_destroy (&msg);
    return -1;
}

int
report_final (node_t *self)
{
    if (report_stats (self, PROTO_REPORT) != 0)
        return node_fail (self, "cannot send the REPORT to the controller"), -1;
    proto_msg_t bye = {0};
    char err[TF_ERRLEN];
    if (handshake_wait_control (self, PROTO_BYE, NODE_BYE_MS, &bye, err, sizeof err) < 0) {
        node_log (self, "after REPORT: %s", err);
        return -1;
    }
    proto_msg_clear (&bye);
    return 0;
}

void
report_span (node_t *self, int begins, trace_kind_t kind, uint32_t lane, uint64_t task)
{
    report_span_at (self, begins, kind, lane, task, tf_now ());
}

void
report_span_at (node_t *self, int begins, trace_kind_t kind, uint32_t lane, uint64_t task,
                double when)
{
    if (!self->rep.trace)
        return;
    double t = when - self->rep.trace_t0;
    if (begins)
        trace_begin (self->rep.trace, kind, lane, task, t);
    else
        trace_end (self->rep.trace, kind, lane, task, t);
}

void
report_chunk_span (node_t *self, trace_kind_t kind, uint32_t lane, uint64_t task,
                   uint32_t index, uint32_t count)
{
    if (index == 0)
        report_span (self, 1, kind, lane, task);
    if (index + 1 == count)
        report_span (self, 0, kind, lane, task);
}

void
report_start (node_t *self)
{
    const config_t *cfg = self->cfg;
    int n = self->me->nchildren;
    self->rep.observe = observe_new (n, NODE_SAMPLES, cfg->platform.sample_ms / 1000.0,
                                     cfg->platform.time_scale, self->parts.bps_per_mbps);
    self->rep.observed = xcalloc (n + 2, sizeof *self->rep.observed);
    self->rep.clock_cost = clock_cost ();
    self->rep.rate.win = ratewin_new (NODE_RATE_WINDOW);
    self->rep.rate.since = -1;
}

void
report_begin_trace (node_t *self)
{
    self->rep.trace_t0 = tf_now () - self->link.since;   /* the run's START */
    if (!self->link.run.trace)
        return;
    uint32_t lanes = self->parts.nworkers ? self->parts.nworkers : 1;
    self->rep.trace = trace_new (TRACE_MAX_SPANS, lanes, (uint32_t) self->me->nchildren);
}

void
report_engine_started (node_t *self, double now)
{
    if (self->rep.rate.since < 0)
        self->rep.rate.since = now;
}

void
report_units (node_t *self, double now, double units)
{
    /*  A task's end: the engine's message said so, and its busy time
     *  stops here, as its units do. */
    if (self->rep.rate.since >= 0 && !engine_busy (self->parts.engine)) {
        self->rep.rate.busy += now - self->rep.rate.since;
        self->rep.rate.since = -1;
    }
    self->rep.units = units;
    self->rep.units_at = now;
    if (observe_due (self->rep.observe, now - self->rep.trace_t0))
        take_sample (self, now);
}

double
report_platform_time (const node_t *self, double now)
{
    return (now - self->rep.trace_t0) * self->cfg->platform.time_scale;
}

double
report_engine_units (const node_t *self, double *at)
{
    *at = self->rep.units_at;
    return self->rep.units;
}

void
report_computed (node_t *self, double seconds, uint32_t lane, uint64_t task, double ended)
{
    self->rep.compute_seconds += seconds;
    report_span_at (self, 0, TRACE_COMPUTE, lane, task, ended);
}

void
report_engine_idle (node_t *self)
{
    observe_idle (self->rep.observe);
}

void
report_idle_sample (node_t *self, double now)
{
    if (!engine_busy (self->parts.engine) && observe_due (self->rep.observe, now - self->rep.trace_t0))
        take_sample (self, now);
}

void
report_close (node_t *self)
{
    observe_destroy (&self->rep.observe);
    ratewin_destroy (&self->rep.rate.win);
    json_decref (self->rep.fit);
    free (self->rep.observed);
    trace_destroy (&self->rep.trace);
}
