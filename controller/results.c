/*  results — a run's counters and its results directory. See results.h. */
#include "controller/results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/util.h"
#include "policies/policy.h"

/*  Real numbers in results.json: enough digits to give back what a human
 *  typed in the config, without 9.0600000000000005. */
#define RESULTS_JSON_FLAGS (JSON_INDENT (2) | JSON_REAL_PRECISION (15))

static const char *const status_names[] = {
    [RESULTS_RUNNING] = "running",
    [RESULTS_COMPLETE] = "complete",
    [RESULTS_FAILED] = "failed",
    [RESULTS_INTERRUPTED] = "interrupted",
};


typedef struct {
    results_stats_t stats;
    int reported;
    int64_t pid;             /* 0: unknown */
    results_child_t *children;
    int nchildren;
    char *samples_csv;       /* its samples, from its REPORT */
    char *trace_csv;         /* its timeline, from its REPORT (--trace) */
    char *lost_why;          /* why it was lost, NULL while it was not */
    double lost_at;          /* wall seconds after START */
} node_results_t;

struct results {
    const config_t *cfg;
    node_results_t *nodes;   /* cfg->nnodes, tree order */
    uint8_t *recorded_bits;  /* 1 bit per task recorded in tasks.csv */
    uint64_t recorded;       /* rows written to tasks.csv */
    uint64_t records_refused;   /* out of range or already recorded */
    FILE *tasks_file;        /* tasks.csv, open while the run goes */
    char *tasks_path;
    int tasks_errno;         /* the first write error, 0 if none */
    results_status_t status;
    char *error;
    double wall_s;
    int finished;
    uint64_t malformed;
    int curve;               /* the run's sockets were CURVE */
    double offline[BOUND_MODEL_COUNT];   /* the bound computed here */
    /*  Command tasks, from the records: */
    uint64_t failed;         /* recorded failed after their last attempt */
    json_t *failures;        /* the first RESULTS_MAX_FAILURES of them */
    double *node_seconds;    /* per node: seconds its commands ran */
    uint64_t *node_commands; /* per node: commands it ran (last attempts) */
    uint64_t command_bytes;  /* input bundle bytes of the commands recorded */
    uint64_t commands;       /* commands recorded */
    int measured_bound;      /* offline[] is from measured task times */
    uint64_t resumed;        /* tasks done by an earlier run (--resume) */
    int nlost;               /* nodes lost during the run */
    results_window_t window; /* the steady state, this run's records */
};

const char *
results_status_str (results_status_t status)
{
    return (unsigned) status <= RESULTS_INTERRUPTED ? status_names[status] : "?";
}

results_t *
results_new (const config_t *cfg)
{
    results_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->nodes = xcalloc (cfg->nnodes, sizeof *self->nodes);
    self->failures = json_array ();
    self->node_seconds = xcalloc (cfg->nnodes, sizeof *self->node_seconds);
    self->node_commands = xcalloc (cfg->nnodes, sizeof *self->node_commands);
    bound_app_t app = bound_app_of (cfg);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        bound_tree_t *tree = bound_tree_new (cfg, m, &app, NULL, 0);
        self->offline[m] = tree ? tree->bound : NAN;
        bound_tree_destroy (&tree);
    }
    self->window = results_window_make (config_bag_size (cfg), results_window_k (cfg));
    return self;
}

/*  Tasks completed by this run: the root's count, less those a resumed
 *  run found done (its throughput and efficiency are this run's). */
static uint64_t
ran (const results_t *self)
{
    uint64_t done = self->nodes[self->cfg->root].stats.completed;
    return done > self->resumed ? done - self->resumed : 0;
}

void
results_set_resumed (results_t *self, uint64_t tasks)
{
    self->resumed = tasks;
    uint64_t n = config_bag_size (self->cfg);
    self->window = results_window_make (n > tasks ? n - tasks : 0, self->window.k);
}

/*  The bound a run is judged against: the policy's port model. */
static bound_model_t
policy_model (const config_t *cfg)
{
    const policy_t *policy = policy_find (cfg->policy);
    return policy && policy->multiport ? BOUND_MULTI : BOUND_SINGLE;
}

/*  Do the tree's own bound and the offline one agree? Both come from the
 *  same step on the same parameters, so they must, to rounding. */
static int
bounds_agree (double a, double b)
{
    return fabs (a - b) <= 1e-9 * fmax (1, fmax (fabs (a), fabs (b)));
}

static void
children_free (results_child_t *children, int n)
{
    for (int i = 0; i < n; i++)
        free (children[i].name);
    free (children);
}

void
results_destroy (results_t **self_p)
{
    results_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        children_free (self->nodes[i].children, self->nodes[i].nchildren);
        json_decref (self->nodes[i].stats.fit);
        free (self->nodes[i].samples_csv);
        free (self->nodes[i].trace_csv);
        free (self->nodes[i].lost_why);
    }
    free (self->nodes);
    if (self->tasks_file)
        fclose (self->tasks_file);
    free (self->tasks_path);
    free (self->recorded_bits);
    free (self->error);
    json_decref (self->failures);
    free (self->node_seconds);
    free (self->node_commands);
    free (self);
    *self_p = NULL;
}

static int
check_node (const results_t *self, int node, char *err, size_t errlen)
{
    if (node < 0 || node >= self->cfg->nnodes)
        return tf_error (err, errlen, "no node %d", node);
    return 0;
}

/*  Keep the scalars of stats and a reference to its fit; nothing that
 *  the message owns. */
static void
keep_stats (node_results_t *n, const proto_stats_t *stats)
{
    json_t *fit = stats->fit ? json_incref (stats->fit) : NULL;
    json_decref (n->stats.fit);
    n->stats = *stats;
    n->stats.fit = fit;
    n->stats.children = NULL;
    n->stats.nchildren = 0;
    n->stats.samples_csv = NULL;
    n->stats.trace_csv = NULL;
}

int
results_update_stats (results_t *self, int node, const proto_stats_t *stats, char *err,
                      size_t errlen)
{
    if (check_node (self, node, err, errlen))
        return -1;
    keep_stats (&self->nodes[node], stats);
    return 0;
}

int
results_update_report (results_t *self, int node, proto_stats_t *stats, char *err,
                       size_t errlen)
{
    if (check_node (self, node, err, errlen))
        return -1;
    if (stats->nchildren > self->cfg->nodes[node].nchildren)
        return tf_error (err, errlen, "stats: \"children\" must be an array of at most "
                         "%d entries", self->cfg->nodes[node].nchildren);
    node_results_t *n = &self->nodes[node];
    keep_stats (n, stats);
    n->reported = 1;
    if (stats->samples_csv) {
        free (n->samples_csv);
        n->samples_csv = stats->samples_csv;
        stats->samples_csv = NULL;
    }
    if (stats->trace_csv) {
        free (n->trace_csv);
        n->trace_csv = stats->trace_csv;
        stats->trace_csv = NULL;
    }
    children_free (n->children, n->nchildren);
    n->children = stats->children;
    n->nchildren = stats->nchildren;
    stats->children = NULL;
    stats->nchildren = 0;
    return 0;
}

const results_stats_t *
results_node_stats (const results_t *self, int node)
{
    return &self->nodes[node].stats;
}

const char *
results_node_trace (const results_t *self, int node)
{
    return self->nodes[node].trace_csv;
}

int
results_node_reported (const results_t *self, int node)
{
    return self->nodes[node].reported;
}

void
results_set_pid (results_t *self, int node, int64_t pid)
{
    self->nodes[node].pid = pid;
}

void
results_set_status (results_t *self, results_status_t status, const char *error)
{
    self->status = status;
    if (error && !self->error)
        self->error = xstrdup (error);
}

results_status_t
results_status (const results_t *self)
{
    return self->status;
}

const char *
results_error (const results_t *self)
{
    return self->error;
}

void
results_set_wall (results_t *self, double wall_s, int finished)
{
    self->wall_s = wall_s > 0 ? wall_s : 0;
    self->finished = finished;
}

void
results_set_malformed (results_t *self, uint64_t count)
{
    self->malformed = count;
}

void
results_set_curve (results_t *self, int curve)
{
    self->curve = curve != 0;
}

double
results_node_fidelity (const results_t *self, int node)
{
    const results_stats_t *st = &self->nodes[node].stats;
    if (!(self->wall_s > 0))
        return 1;
    double behind = fmax (st->lag_loop, fmax (st->lag_engine, st->lag_link)) / self->wall_s;
    return behind < 1 ? 1 - behind : 0;
}

double
results_fidelity (const results_t *self, int *worst)
{
    double min = 1;
    int at = -1;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        if (results_node_lost (self, i))
            continue;
        double f = results_node_fidelity (self, i);
        if (at < 0 || f < min) {
            min = f;
            at = i;
        }
    }
    if (worst)
        *worst = min < 1 ? at : -1;
    return min;
}

void
results_set_lost (results_t *self, int node, const char *why, double at_s)
{
    node_results_t *n = &self->nodes[node];
    if (n->lost_why)
        return;
    n->lost_why = xstrdup (why);
    n->lost_at = at_s;
    self->nlost++;
}

void
results_explain_lost (results_t *self, int node, const char *why)
{
    node_results_t *n = &self->nodes[node];
    if (!n->lost_why)
        return;
    free (n->lost_why);
    n->lost_why = xstrdup (why);
}

int
results_node_lost (const results_t *self, int node)
{
    return self->nodes[node].lost_why != NULL;
}

int
results_lost_count (const results_t *self)
{
    return self->nlost;
}

uint64_t
results_completed (const results_t *self)
{
    return self->nodes[self->cfg->root].stats.completed;
}

/* ------------------------------------------------------------------------
 *  The steady-state window.
 */

/*  Tasks a node runs at once: its slots for command tasks, else one. */
static uint64_t
node_slots (const config_t *cfg, int i)
{
    return cfg->commands.count && cfg->nodes[i].slots ? cfg->nodes[i].slots : 1;
}

uint64_t
results_window_k (const config_t *cfg)
{
    uint64_t k = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        k += i == cfg->root ? node_slots (cfg, i)
                            : cfg->platform.buffer + 2 * node_slots (cfg, i) - 1;
    return k;
}

results_window_t
results_window_make (uint64_t n, uint64_t k)
{
    return (results_window_t){.n = n, .k = k ? k : 1};
}

void
results_window_note (results_window_t *w, uint64_t recorded, double t)
{
    if (w->n <= 2 * w->k)
        return;   /* no steady state */
    if (!w->at_from && recorded >= w->k) {
        w->at_from = recorded;
        w->from_s = t;
    }
    if (!w->at_to && recorded >= w->n - w->k) {
        w->at_to = recorded;
        w->to_s = t;
    }
}

int
results_window_get (const results_window_t *w, uint64_t *tasks, double *seconds)
{
    if (!w->at_from || !w->at_to || w->at_to <= w->at_from || !(w->to_s > w->from_s))
        return -1;
    *tasks = w->at_to - w->at_from;
    *seconds = w->to_s - w->from_s;
    return 0;
}

void
results_note_recorded_at (results_t *self, double t)
{
    uint64_t mine = self->recorded > self->resumed ? self->recorded - self->resumed : 0;
    results_window_note (&self->window, mine, t);
}

/*  The steady state's throughput in platform tasks/s and its efficiency
 *  against bound (NAN when unknown); -1 when the run has no window. */
static int
steady (const results_t *self, double bound, double *throughput, double *efficiency)
{
    uint64_t tasks;
    double seconds;
    if (results_window_get (&self->window, &tasks, &seconds) != 0)
        return -1;
    *throughput = (double) tasks / (seconds * self->cfg->platform.time_scale);
    *efficiency = bound > 0 ? *throughput / bound : NAN;
    return 0;
}

/*  "steady": {k, from_s, to_s (platform seconds after START), tasks,
 *  throughput, efficiency}, or null. */
static json_t *
steady_to_json (const results_t *self, double bound)
{
    double throughput, efficiency;
    if (steady (self, bound, &throughput, &efficiency) != 0)
        return json_null ();
    double s = self->cfg->platform.time_scale;
    const results_window_t *w = &self->window;
    json_t *o = json_pack ("{s:I, s:f, s:f, s:I, s:f}", "k", (json_int_t) w->k, "from_s",
                           w->from_s * s, "to_s", w->to_s * s, "tasks",
                           (json_int_t) (w->at_to - w->at_from), "throughput", throughput);
    json_object_set_new (o, "efficiency", isfinite (efficiency) ? json_real (efficiency)
                                                                : json_null ());
    return o;
}

/*  Platform seconds from START to FINISHED, or -1 when the run did not
 *  finish. */
static double
makespan (const results_t *self)
{
    return self->finished ? self->wall_s * self->cfg->platform.time_scale : -1;
}

/*  One link as its parent saw it, in platform terms: MB sent, seconds
 *  spent sending (from each transfer's start to its last ack), and the
 *  mean rate achieved while sending, beside the configured rate. */
static json_t *
child_to_json (const results_t *self, const results_child_t *c)
{
    const config_t *cfg = self->cfg;
    double mb = (double) c->bytes / (cfg->platform.payload_scale * CONFIG_MB);
    double send_s = c->send_seconds * cfg->platform.time_scale;
    int at = config_find_node (cfg, c->name);
    json_t *o = json_pack ("{s:s, s:I, s:I, s:I, s:f, s:f}", "name", c->name,
                           "tasks", (json_int_t) c->tasks, "bytes", (json_int_t) c->bytes,
                           "requested", (json_int_t) c->requested, "mb", mb,
                           "send_s", send_s);
    json_object_set_new (o, "rate_mbps", send_s > 0 ? json_real (mb / send_s) : json_null ());
    json_object_set_new (o, "link_mbps", at >= 0 ? json_real (cfg->nodes[at].link_mbps)
                                                 : json_null ());
    return o;
}

static json_t *
node_to_json (const results_t *self, int i)
{
    const node_results_t *n = &self->nodes[i];
    const config_node_t *node = &self->cfg->nodes[i];
    json_t *children = json_array ();
    for (int c = 0; c < n->nchildren; c++)
        json_array_append_new (children, child_to_json (self, &n->children[c]));
    json_t *object = json_pack ("{s:s, s:s?}", "name", node->name,
                                "parent", node->parent_name);
    json_object_set_new (object, "pid", n->pid > 0 ? json_integer (n->pid) : json_null ());
    json_object_set_new (object, "lost", json_boolean (n->lost_why != NULL));
    for (int c = 0; c < PROTO_NCOUNTERS; c++)
        if (proto_counters[c].per_node)
            json_object_set_new (object, proto_counters[c].key,
                                 json_integer ((json_int_t) proto_counter (&n->stats, c)));
    /*  Platform MB: the physical bytes scaled back by payload_scale. */
    double scale = self->cfg->platform.payload_scale * CONFIG_MB;
    json_object_set_new (object, "mb_in", json_real ((double) n->stats.bytes_in / scale));
    json_object_set_new (object, "mb_out", json_real ((double) n->stats.bytes_out / scale));
    json_object_set_new (object, "compute_seconds", json_real (n->stats.compute_seconds));
    json_object_set_new (object, "speed_mean", json_real (n->stats.speed_mean));
    json_object_set_new (object, "fit",
                         n->stats.fit ? json_incref (n->stats.fit) : json_null ());
    json_object_set_new (object, "lag", json_pack ("{s:f, s:f, s:f, s:f}", "loop_s",
                                                   n->stats.lag_loop, "engine_s",
                                                   n->stats.lag_engine, "link_s",
                                                   n->stats.lag_link, "max_s",
                                                   n->stats.lag_max));
    json_object_set_new (object, "fidelity", json_real (results_node_fidelity (self, i)));
    json_object_set_new (object, "reported", json_boolean (n->reported));
    json_object_set_new (object, "children", children);
    return object;
}

/*  The bound of the policy's port model, as the tree computed it during
 *  the run and as computed here offline, and every model's. */
static json_t *
bound_to_json (const results_t *self)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    bound_model_t model = policy_model (cfg);
    json_t *all = json_object ();
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        json_object_set_new (all, bound_model_str (m), json_real (self->offline[m]));
    json_t *o = json_pack ("{s:s, s:f, s:o}", "model", bound_model_str (model),
                           "tasks_per_s", self->offline[model], "all", all);
    json_object_set_new (o, "measured", json_boolean (self->measured_bound));
    json_object_set_new (o, "tree", root->has_bound ? json_real (root->bound[model])
                                                    : json_null ());
    json_object_set_new (o, "agree", root->has_bound && !self->measured_bound
                                         ? json_boolean (bounds_agree (root->bound[model],
                                                                       self->offline[model]))
                                         : json_null ());
    return o;
}

/*  Can the run's timings be trusted? Only an emulation can fall behind
 *  the clock it emulates: a real run's timings are what they are. */
static int
reliable (const results_t *self)
{
    return self->cfg->platform.mode != PLATFORM_EMULATED
        || results_fidelity (self, NULL) >= RESULTS_FIDELITY_MIN;
}

/*  {"min": f, "node": worst or null, "threshold": t, "reliable": bool}:
 *  whether the run's timings, its efficiency above all, can be trusted. */
static json_t *
fidelity_to_json (const results_t *self)
{
    int worst;
    double min = results_fidelity (self, &worst);
    json_t *o = json_pack ("{s:f, s:f, s:b}", "min", min, "threshold",
                           RESULTS_FIDELITY_MIN, "reliable", reliable (self));
    json_object_set_new (o, "node", worst >= 0 ? json_string (self->cfg->nodes[worst].name)
                                               : json_null ());
    return o;
}

/*  The nodes lost during the run, in tree order: [{name, why, at_s}]. */
static json_t *
lost_to_json (const results_t *self)
{
    json_t *lost = json_array ();
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const node_results_t *n = &self->nodes[i];
        if (n->lost_why)
            json_array_append_new (lost, json_pack ("{s:s, s:s, s:f}", "name",
                                                    self->cfg->nodes[i].name, "why",
                                                    n->lost_why, "at_s", n->lost_at));
    }
    return lost;
}

json_t *
results_to_json (const results_t *self)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    char *text = config_to_json (cfg);
    json_t *config = text ? json_loads (text, 0, NULL) : NULL;
    free (text);
    double span = makespan (self);

    json_t *object = json_object ();
    json_object_set_new (object, "experiment", json_string (cfg->name));
    json_object_set_new (object, "config", config ? config : json_null ());
    json_object_set_new (object, "policy", json_string (cfg->policy));
    json_object_set_new (object, "mode",
                         json_string (platform_mode_str (cfg->platform.mode)));
    json_object_set_new (object, "time_scale", json_real (cfg->platform.time_scale));
    json_object_set_new (object, "status",
                         json_string (results_status_str (self->status)));
    json_object_set_new (object, "error",
                         self->error ? json_string (self->error) : json_null ());
    json_object_set_new (object, "tasks", json_integer ((json_int_t) config_bag_size (cfg)));
    json_object_set_new (object, "commands", json_integer ((json_int_t) cfg->commands.count));
    json_object_set_new (object, "failed", json_integer ((json_int_t) self->failed));
    json_object_set_new (object, "failures", json_incref (self->failures));
    json_object_set_new (object, "completed", json_integer ((json_int_t) root->completed));
    json_object_set_new (object, "resumed", json_integer ((json_int_t) self->resumed));
    json_object_set_new (object, "duplicates",
                         json_integer ((json_int_t) root->duplicates));
    json_object_set_new (object, "makespan_s", span >= 0 ? json_real (span) : json_null ());
    json_object_set_new (object, "wall_s", json_real (self->wall_s));
    json_object_set_new (object, "throughput",
                         span > 0 && ran (self) > 0 ? json_real ((double) ran (self) / span)
                                                    : json_null ());
    json_object_set_new (object, "bound", bound_to_json (self));
    double bound = self->offline[policy_model (cfg)];
    json_object_set_new (object, "efficiency",
                         span > 0 && bound > 0 && ran (self) > 0
                             ? json_real ((double) ran (self) / span / bound)
                             : json_null ());
    json_object_set_new (object, "steady", steady_to_json (self, bound));
    json_object_set_new (object, "efficiency_reliable",
                         json_boolean (reliable (self)));
    json_object_set_new (object, "fidelity", fidelity_to_json (self));
    json_object_set_new (object, "malformed", json_integer ((json_int_t) self->malformed));
    json_object_set_new (object, "curve", json_boolean (self->curve));
    json_object_set_new (object, "recorded", json_integer ((json_int_t) self->recorded));
    json_object_set_new (object, "records_refused",
                         json_integer ((json_int_t) self->records_refused));
    json_object_set_new (object, "lost", lost_to_json (self));
    json_t *nodes = json_array ();
    for (int i = 0; i < cfg->nnodes; i++)
        json_array_append_new (nodes, node_to_json (self, i));
    json_object_set_new (object, "nodes", nodes);
    return object;
}

/* ------------------------------------------------------------------------
 *  tasks.csv, written as the root's records arrive.
 */

/*  Remember the first write error; later rows are dropped. */
static int
tasks_failed (results_t *self)
{
    if (!self->tasks_errno)
        self->tasks_errno = errno ? errno : EIO;
    return -1;
}

int
results_open_tasks (results_t *self, const char *dir, char *err, size_t errlen)
{
    free (self->tasks_path);
    self->tasks_path = xasprintf ("%s/tasks.csv", dir);
    if (!self->recorded_bits)
        self->recorded_bits = xcalloc_resident (config_bag_size (self->cfg) / 8 + 1, 1);
    errno = 0;
    self->tasks_file = fopen (self->tasks_path, "we");
    if (!self->tasks_file || fputs (RESULTS_TASKS_HEADER "\n", self->tasks_file) == EOF)
        tasks_failed (self);
    return results_check_tasks (self, err, errlen);
}

/*  What a command's record says of how it ended. */
static const char *
command_status (const json_t *info)
{
    if (json_object_get (info, "error"))
        return "error";
    if (json_is_true (json_object_get (info, "timed_out")))
        return "timeout";
    if (json_is_integer (json_object_get (info, "signal")))
        return "killed";
    json_t *exit_code = json_object_get (info, "exit");
    return json_is_integer (exit_code) && json_integer_value (exit_code) == 0 ? "ok"
                                                                              : "failed";
}

static double
info_number (const json_t *info, const char *key)
{
    json_t *v = json_object_get (info, key);
    return json_is_number (v) ? json_number_value (v) : 0;
}

/*  A command's tallies: failures, measured time, input size. */
static void
tally_command (results_t *self, uint64_t node, const json_t *info)
{
    double seconds = info_number (info, "seconds");
    if (json_is_true (json_object_get (info, "failed"))) {
        self->failed++;
        if (json_array_size (self->failures) < RESULTS_MAX_FAILURES)
            json_array_append (self->failures, (json_t *) info);
    }
    else {
        self->node_seconds[node] += seconds;
        self->node_commands[node]++;
    }
    self->commands++;
    self->command_bytes += (uint64_t) info_number (info, "bytes_in");
}

/*  A command's row, after its task and node. */
static int
command_row (results_t *self, const json_t *info)
{
    int failed = json_is_true (json_object_get (info, "failed"));
    const char *status = command_status (info);
    json_t *exit_code = json_object_get (info, "exit");
    char exit_text[24] = "";
    if (json_is_integer (exit_code))
        snprintf (exit_text, sizeof exit_text, "%lld",
                  (long long) json_integer_value (exit_code));
    return fprintf (self->tasks_file, ",%s,%s,%s,%lld,%.0f,%.0f,%.3f\n",
                    json_string_value (json_object_get (info, "id")), failed ? "failed"
                    : status, exit_text, (long long) info_number (info, "attempts"),
                    info_number (info, "bytes_in"), info_number (info, "bytes_out"),
                    info_number (info, "seconds"));
}

int
results_record (results_t *self, uint64_t task, uint64_t node, const json_t *info,
                char *err, size_t errlen)
{
    const config_t *cfg = self->cfg;
    if (!self->recorded_bits)
        self->recorded_bits = xcalloc (config_bag_size (cfg) / 8 + 1, 1);
    uint8_t bit = (uint8_t) (1u << (task % 8));
    if (task >= config_bag_size (cfg) || node >= (uint64_t) cfg->nnodes
        || (task < cfg->commands.count
            && !json_is_string (json_object_get (info, "id")))) {
        self->records_refused++;
        return tf_error (err, errlen, "record of task %llu by node %llu is out of "
                         "range", (unsigned long long) task, (unsigned long long) node);
    }
    if (self->recorded_bits[task / 8] & bit) {
        self->records_refused++;
        return tf_error (err, errlen, "task %llu is already recorded",
                         (unsigned long long) task);
    }
    self->recorded_bits[task / 8] |= bit;
    self->recorded++;
    if (task < cfg->commands.count)
        tally_command (self, node, info);
    /*  Names and ids are [A-Za-z0-9_.-]: nothing to quote. */
    if (!self->tasks_file || self->tasks_errno)
        return 0;
    int rc = fprintf (self->tasks_file, "%llu,%s", (unsigned long long) task,
                      cfg->nodes[node].name);
    if (rc >= 0)
        rc = task < cfg->commands.count ? command_row (self, info)
                                        : fprintf (self->tasks_file, ",,ok,,,,,\n");
    if (rc < 0)
        tasks_failed (self);
    return 0;
}

uint64_t
results_failed (const results_t *self)
{
    return self->failed;
}

/*  The config with each node's compute rate set to the commands it ran
 *  per second of their wall time (one unit a task); a node that ran none
 *  gets the mean over all. NULL if no command succeeded. */
static config_t *
measured_config (const results_t *self)
{
    double seconds = 0;
    uint64_t n = 0;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        seconds += self->node_seconds[i];
        n += self->node_commands[i];
    }
    char err[TF_ERRLEN], *text = config_to_json (self->cfg);
    config_t *c = n && text ? config_load_string (text, "<results>", err, sizeof err) : NULL;
    free (text);
    for (int i = 0; c && i < c->nnodes; i++) {
        double s = self->node_commands[i] ? self->node_seconds[i] : seconds / (double) n;
        uint64_t k = self->node_commands[i] ? self->node_commands[i] : 1;
        uint64_t slots = self->nodes[i].stats.slots ? self->nodes[i].stats.slots : 1;
        c->nodes[i].compute_rate = (double) (k * slots) / fmax (s, RESULTS_MIN_TASK_SECONDS);
    }
    return c;
}

void
results_measure_bound (results_t *self)
{
    const config_t *cfg = self->cfg;
    if (cfg->commands.count == 0 || cfg->tasks.count > 0)
        return;
    config_t *c = measured_config (self);
    bound_app_t app = {(double) self->command_bytes / (double) fmax (1, self->commands)
                       / CONFIG_MB, 1};
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        bound_tree_t *tree = c ? bound_tree_new (c, m, &app, NULL, 0) : NULL;
        self->offline[m] = tree ? tree->bound : NAN;
        bound_tree_destroy (&tree);
    }
    self->measured_bound = 1;
    config_destroy (&c);
}

uint64_t
results_recorded (const results_t *self)
{
    return self->recorded;
}

int
results_check_tasks (const results_t *self, char *err, size_t errlen)
{
    if (!self->tasks_errno)
        return 0;
    return tf_error (err, errlen, "cannot write %s: %s",
                     self->tasks_path ? self->tasks_path : "tasks.csv",
                     strerror (self->tasks_errno));
}

int
results_flush_tasks (results_t *self, char *err, size_t errlen)
{
    errno = 0;
    if (self->tasks_file && !self->tasks_errno && fflush (self->tasks_file) != 0)
        tasks_failed (self);
    return results_check_tasks (self, err, errlen);
}

int
results_close_tasks (results_t *self, char *err, size_t errlen)
{
    if (results_flush_tasks (self, err, errlen) != 0) {
        if (self->tasks_file)
            fclose (self->tasks_file);
        self->tasks_file = NULL;
        return -1;
    }
    errno = 0;
    if (self->tasks_file && fclose (self->tasks_file) != 0)
        tasks_failed (self);
    self->tasks_file = NULL;
    return results_check_tasks (self, err, errlen);
}

/* ------------------------------------------------------------------------
 *  Files.
 */

static int
write_json (FILE *file, const void *arg)
{
    const results_t *self = arg;
    json_t *object = results_to_json (self);
    int rc = json_dumpf (object, file, RESULTS_JSON_FLAGS);
    json_decref (object);
    if (rc == 0 && fputc ('\n', file) == EOF)
        rc = -1;
    return rc;
}

static int
write_nodes_csv (FILE *file, const void *arg)
{
    const results_t *self = arg;
    fputs ("name,parent,pid", file);
    for (int c = 0; c < PROTO_NCOUNTERS; c++)
        if (proto_counters[c].per_node)
            fprintf (file, ",%s", proto_counters[c].key);
    fputs (",compute_seconds\n", file);
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const node_results_t *n = &self->nodes[i];
        const config_node_t *node = &self->cfg->nodes[i];
        /*  Names are [A-Za-z0-9_.-]: nothing to quote. */
        fprintf (file, "%s,%s,", node->name, node->parent_name ? node->parent_name : "");
        if (n->pid > 0)
            fprintf (file, "%lld", (long long) n->pid);
        for (int c = 0; c < PROTO_NCOUNTERS; c++)
            if (proto_counters[c].per_node)
                fprintf (file, ",%llu", (unsigned long long) proto_counter (&n->stats, c));
        fprintf (file, ",%.6f\n", n->stats.compute_seconds);
    }
    return 0;
}

/*  DIR/samples/NODE.csv for every node that sent its samples. */
static int
write_samples (const results_t *self, const char *dir, char *err, size_t errlen)
{
    char *sub = xasprintf ("%s/samples", dir);
    int rc = 0;
    for (int i = 0; i < self->cfg->nnodes && rc == 0; i++) {
        if (!self->nodes[i].samples_csv)
            continue;
        if (results_make_dir (sub, err, errlen) != 0) {
            rc = -1;
            break;
        }
        char *path = xasprintf ("%s/%s.csv", sub, self->cfg->nodes[i].name);
        FILE *f = fopen (path, "w");
        int ok = f && fputs (self->nodes[i].samples_csv, f) >= 0;
        ok = (f && fclose (f) == 0) && ok;
        if (!ok)
            rc = tf_error (err, errlen, "cannot write %s", path);
        free (path);
    }
    free (sub);
    return rc;
}

int
results_write (const results_t *self, const char *dir, char *err, size_t errlen)
{
    if (tf_write_file_atomic (dir, "results.json", write_json, self, err, errlen)
        || tf_write_file_atomic (dir, "nodes.csv", write_nodes_csv, self, err, errlen))
        return -1;
    return write_samples (self, dir, err, errlen);
}

/* ------------------------------------------------------------------------
 *  Summary.
 */

#define NCOLS 8
#define CELL 32

static const char *const column_names[NCOLS] = {
    "node", "parent", "computed", "forwarded", "received", "MB in", "MB out", "share",
};

/*  Achieved against the bound of the policy's port model. */
static void
print_bound (const results_t *self, double span, FILE *out)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    bound_model_t model = policy_model (cfg);
    double bound = self->offline[model];
    fprintf (out, "\n  bound %.3f tasks/s (%s)", bound, bound_model_title (model));
    if (span > 0 && bound > 0 && ran (self) > 0)
        fprintf (out, "  efficiency %.1f%%%s", 100.0 * ran (self) / span / bound,
                 reliable (self) ? "" : " (UNRELIABLE)");
    double throughput, efficiency;
    if (span > 0 && steady (self, bound, &throughput, &efficiency) == 0
        && isfinite (efficiency))
        fprintf (out, "  steady %.1f%%", 100.0 * efficiency);
    if (self->measured_bound)
        fprintf (out, "  [from the commands' measured times and sizes]");
    else if (root->has_bound && !bounds_agree (root->bound[model], bound))
        fprintf (out, "  [the tree computed %.6f: DIFFERS]", root->bound[model]);
    else if (!root->has_bound)
        fprintf (out, "  [the tree reported no bound]");
}

/*  The commands that failed after their last attempt, a few named. */
static void
print_failures (const results_t *self, FILE *out)
{
    if (self->failed == 0)
        return;
    fprintf (out, "\n  failed: %llu of %llu commands:", (unsigned long long) self->failed,
             (unsigned long long) self->cfg->commands.count);
    size_t i;
    json_t *f;
    json_array_foreach (self->failures, i, f) {
        if (i == RESULTS_FAILURES_SHOWN) {
            fprintf (out, " ... (all in tasks.csv)");
            break;
        }
        json_t *code = json_object_get (f, "exit");
        fprintf (out, "%s %s (%s", i ? "," : "", json_string_value (json_object_get (f, "id")),
                 command_status (f));
        if (json_is_integer (code))
            fprintf (out, " %lld", (long long) json_integer_value (code));
        fprintf (out, ")");
    }
    fputc ('\n', out);
}

/*  The nodes lost during the run, each with why; and what the bound the
 *  run is judged against assumed. */
static void
print_lost (const results_t *self, FILE *out)
{
    if (self->nlost == 0)
        return;
    fprintf (out, "\n  lost: %d node%s:", self->nlost, self->nlost == 1 ? "" : "s");
    for (int i = 0, k = 0; i < self->cfg->nnodes; i++)
        if (self->nodes[i].lost_why)
            fprintf (out, "%s %s (%s, at %.1f s)", k++ ? "," : "", self->cfg->nodes[i].name,
                     self->nodes[i].lost_why, self->nodes[i].lost_at);
    fprintf (out, "\n  their tasks were queued again; the bound is the whole tree's\n");
}

/*  "fidelity F (worst: NODE)", and when it is below the threshold, why the
 *  efficiency cannot be trusted and what to do. */
static void
print_fidelity (const results_t *self, FILE *out)
{
    if (!(self->wall_s > 0))
        return;
    int worst;
    double f = results_fidelity (self, &worst);
    fprintf (out, "  fidelity %.3f", f);
    if (worst >= 0)
        fprintf (out, " (worst: %s)", self->cfg->nodes[worst].name);
    if (!reliable (self))
        fprintf (out, " < %.2f: the emulation fell behind its clock, so the "
                 "efficiency is UNRELIABLE;\n  lower time_scale (now %g) or run fewer "
                 "nodes on this machine", RESULTS_FIDELITY_MIN,
                 self->cfg->platform.time_scale);
    fputc ('\n', out);
}

/*  The header line: outcome, makespan, wall time, throughput. */
static void
print_header (const results_t *self, FILE *out)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    double span = makespan (self);
    fprintf (out, "%s/%s: %s", cfg->name, cfg->policy, results_status_str (self->status));
    if (self->error && strcmp (self->error, results_status_str (self->status)) != 0)
        fprintf (out, " (%s)", self->error);
    fprintf (out, "\n  %llu/%llu tasks", (unsigned long long) root->completed,
             (unsigned long long) config_bag_size (cfg));
    if (self->resumed)
        fprintf (out, " (%llu of them done before: resumed)",
                 (unsigned long long) self->resumed);
    if (span >= 0)
        fprintf (out, "  makespan %.2f s (platform)", span);
    fprintf (out, "  wall %.2f s", self->wall_s);
    if (span > 0 && ran (self) > 0)
        fprintf (out, "  throughput %.3f tasks/s (platform)",
                 (double) ran (self) / span);
    if (root->duplicates)
        fprintf (out, "  %llu duplicates", (unsigned long long) root->duplicates);
    print_bound (self, span, out);
    if (cfg->platform.time_scale != 1)
        fprintf (out, "  [time scale %g]", cfg->platform.time_scale);
    fputc ('\n', out);
    print_fidelity (self, out);
}

/*  Every link that carried a task: what its parent sent and how fast,
 *  beside the configured rate, in platform terms. */
static void
print_links (const results_t *self, FILE *out)
{
    int width = 4, any = 0;
    for (int i = 0; i < self->cfg->nnodes; i++)
        for (int c = 0; c < self->nodes[i].nchildren; c++) {
            int len = (int) strlen (self->nodes[i].children[c].name);
            width = len > width ? len : width;
            any |= self->nodes[i].children[c].tasks > 0;
        }
    if (!any)
        return;
    fprintf (out, "  %-*s  %6s  %9s  %9s  %12s  %11s\n", width, "link", "tasks", "MB",
             "sending s", "MB/s sending", "MB/s config");
    for (int i = 0; i < self->cfg->nnodes; i++)
        for (int c = 0; c < self->nodes[i].nchildren; c++) {
            json_t *o = child_to_json (self, &self->nodes[i].children[c]);
            json_t *rate = json_object_get (o, "rate_mbps");
            json_t *link = json_object_get (o, "link_mbps");
            fprintf (out, "  %-*s  %6lld  %9.1f  %9.2f  ", width,
                     json_string_value (json_object_get (o, "name")),
                     (long long) json_integer_value (json_object_get (o, "tasks")),
                     json_number_value (json_object_get (o, "mb")),
                     json_number_value (json_object_get (o, "send_s")));
            if (json_is_number (rate))
                fprintf (out, "%12.2f", json_number_value (rate));
            else
                fprintf (out, "%12s", "-");
            fprintf (out, "  %11.2f\n", json_is_number (link) ? json_number_value (link) : 0);
            json_decref (o);
        }
}

void
results_print_summary (const results_t *self, FILE *out)
{
    const config_t *cfg = self->cfg;
    int rows = cfg->nnodes + 1;
    char (*cells)[NCOLS][CELL] = xcalloc (rows, sizeof *cells);
    int width[NCOLS] = {0};
    uint64_t total = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        total += self->nodes[i].stats.computed;

    for (int c = 0; c < NCOLS; c++)
        snprintf (cells[0][c], CELL, "%s", column_names[c]);
    for (int i = 0; i < cfg->nnodes; i++) {
        const results_stats_t *s = &self->nodes[i].stats;
        const config_node_t *node = &cfg->nodes[i];
        char (*row)[CELL] = cells[i + 1];
        /*  Indent by depth so the tree shows. */
        int indent = node->depth < 8 ? 2 * node->depth : 16;
        snprintf (row[0], CELL, "%*s%s%s", indent, "", node->name,
                  self->nodes[i].lost_why ? " (lost)" : "");
        snprintf (row[1], CELL, "%s", node->parent_name ? node->parent_name : "-");
        snprintf (row[2], CELL, "%llu", (unsigned long long) s->computed);
        snprintf (row[3], CELL, "%llu", (unsigned long long) s->forwarded);
        snprintf (row[4], CELL, "%llu", (unsigned long long) s->received);
        double scale = cfg->platform.payload_scale * CONFIG_MB;
        snprintf (row[5], CELL, "%.1f", (double) s->bytes_in / scale);
        snprintf (row[6], CELL, "%.1f", (double) s->bytes_out / scale);
        if (total)
            snprintf (row[7], CELL, "%.1f%%", 100.0 * (double) s->computed / (double) total);
        else
            snprintf (row[7], CELL, "-");
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < NCOLS; c++) {
            int len = (int) strlen (cells[r][c]);
            if (len > width[c])
                width[c] = len;
        }

    print_header (self, out);
    for (int r = 0; r < rows; r++) {
        fputs ("  ", out);
        for (int c = 0; c < NCOLS; c++) {
            /*  Names left-aligned, numbers right-aligned. */
            if (c < 2)
                fprintf (out, "%-*s  ", width[c], cells[r][c]);
            else
                fprintf (out, "%*s%s", width[c], cells[r][c], c + 1 < NCOLS ? "  " : "");
        }
        fputc ('\n', out);
    }
    if (cfg->platform.payload_scale != 1) {
        uint64_t moved = 0;
        for (int i = 0; i < cfg->nnodes; i++)
            moved += self->nodes[i].stats.bytes_in;
        fprintf (out, "  (MB in platform terms; at payload scale %g, %.1f MB moved "
                 "physically)\n", cfg->platform.payload_scale, (double) moved / CONFIG_MB);
    }
    print_links (self, out);
    print_failures (self, out);
    print_lost (self, out);
    free (cells);
}

/* ------------------------------------------------------------------------
 *  The directory.
 */

char *
results_default_dir (const char *name, time_t when)
{
    struct tm tm;
    char stamp[32];
    localtime_r (&when, &tm);
    strftime (stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return xasprintf ("results/%s-%s", name, stamp);
}

/*  mkdir one level; an existing directory is fine. */
static int
make_one (const char *path, char *err, size_t errlen)
{
    if (mkdir (path, 0777) == 0)
        return 0;
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat (path, &st) == 0) {
        if (S_ISDIR (st.st_mode))
            return 0;
        return tf_error (err, errlen, "%s: exists and is not a directory", path);
    }
    return tf_error (err, errlen, "%s: %s", path, strerror (e));
}

int
results_make_dir (const char *path, char *err, size_t errlen)
{
    if (!*path)
        return tf_error (err, errlen, "empty results directory name");
    int rc = 0;
    char *copy = xstrdup (path);
    /*  Every parent, then the path itself; "a//b/" has empty components. */
    for (char *p = copy + 1; *p && rc == 0; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        rc = make_one (copy, err, errlen);
        *p = '/';
    }
    if (rc == 0)
        rc = make_one (copy, err, errlen);
    free (copy);
    return rc;
}

int
results_check_writable (const char *dir, char *err, size_t errlen)
{
    /*  Not access (W_OK): it says yes to root on a read-only file system or
     *  in /proc. Creating a file is the only sure test. */
    char *probe = xasprintf ("%s/.treefarm-probe-%ld", dir, (long) getpid ());
    int fd = open (probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    int e = errno;
    if (fd >= 0) {
        close (fd);
        unlink (probe);
    }
    free (probe);
    if (fd < 0)
        return tf_error (err, errlen, "%s: cannot create a file there: %s", dir,
                         strerror (e));
    return 0;
}
