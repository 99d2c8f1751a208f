/*  results_json — results.json, nodes.csv and the nodes' samples, written
 *  at the end of a run (results.h, results_write).
 */
#include "controller/results_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

/*  Real numbers in results.json: enough digits to give back what a human
 *  typed in the config, without 9.0600000000000005. */
#define RESULTS_JSON_FLAGS (JSON_INDENT (2) | JSON_REAL_PRECISION (15))

/*  "steady": {k, from_s, to_s (platform seconds after START), tasks,
 *  throughput, efficiency}, or null. */
static json_t *
steady_to_json (const results_t *self, double bound)
{
    double throughput, efficiency;
    if (results_steady (self, bound, &throughput, &efficiency) != 0)
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

/*  "tail": {fraction, tasks, seconds (platform)}: how long the last
 *  tasks took, from the moment the ones before them were in; null until
 *  the last is. */
static json_t *
tail_to_json (const results_t *self)
{
    double seconds;
    if (results_window_tail (&self->window, &seconds) != 0)
        return json_null ();
    return json_pack ("{s:f, s:I, s:f}", "fraction", RESULTS_TAIL_FRACTION, "tasks",
                      (json_int_t) self->window.tail_n, "seconds",
                      seconds * self->cfg->platform.time_scale);
}

/*  One link as its parent saw it, in platform terms: MB sent, seconds
 *  spent sending (from each transfer's start to its last ack), and the
 *  mean rate achieved while sending, beside the configured rate. */
json_t *
results_child_to_json (const results_t *self, const results_child_t *c)
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
number_or_null (double x)
{
    return isfinite (x) ? json_real (x) : json_null ();
}

/*  The compute rates and the load (results_node_rate) into object:
 *  compute_configured, compute_predicted, compute_measured,
 *  compute_stderr, load {utilization, kind}; always every key, null where
 *  unknown. */
static void
rate_to_json (const results_t *self, int i, json_t *object)
{
    results_rate_t r = results_node_rate (self, i);
    json_object_set_new (object, "compute_configured", json_real (r.configured));
    json_object_set_new (object, "compute_predicted", number_or_null (r.predicted));
    json_object_set_new (object, "compute_measured", number_or_null (r.measured));
    json_object_set_new (object, "compute_stderr", number_or_null (r.measured_se));
    json_t *load = json_object ();
    json_object_set_new (load, "utilization", number_or_null (r.utilization));
    json_object_set_new (load, "kind", r.kind ? json_string (r.kind) : json_null ());
    json_object_set_new (object, "load", load);
}

static json_t *
node_to_json (const results_t *self, int i)
{
    const node_results_t *n = &self->nodes[i];
    const config_node_t *node = &self->cfg->nodes[i];
    json_t *children = json_array ();
    for (int c = 0; c < n->nchildren; c++)
        json_array_append_new (children, results_child_to_json (self, &n->children[c]));
    json_t *object = json_pack ("{s:s, s:s?}", "name", node->name,
                                "parent", node->parent_name);
    json_object_set_new (object, "pid", n->pid > 0 ? json_integer (n->pid) : json_null ());
    json_object_set_new (object, "lost", json_boolean (n->lost_why != NULL));
    json_object_set_new (object, "relay", json_boolean (config_node_is_relay (node)));
    if (n->joined_at >= 0)
        json_object_set_new (object, "joined_s",
                             json_real (n->joined_at * self->cfg->platform.time_scale));
    if (n->left_at >= 0)   /* platform seconds, as the run's other times */
        json_object_set_new (object, "left_s",
                             json_real (n->left_at * self->cfg->platform.time_scale));
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
    rate_to_json (self, i, object);
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
    bound_model_t model = results_policy_model (cfg);
    json_t *all = json_object ();
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        json_object_set_new (all, bound_model_str (m), json_real (self->offline[m]));
    json_t *o = json_pack ("{s:s, s:f, s:o}", "model", bound_model_str (model),
                           "tasks_per_s", self->offline[model], "all", all);
    json_object_set_new (o, "measured", json_boolean (self->cmds.measured_bound));
    json_object_set_new (o, "tree", root->has_bound ? json_real (root->bound[model])
                                                    : json_null ());
    json_object_set_new (o, "agree", root->has_bound && !self->cmds.measured_bound
                                         ? json_boolean (results_bounds_agree (root->bound[model],
                                                                       self->planned[model]))
                                         : json_null ());
    /*  Adapting: the bound of the platform as the tree saw it last. */
    if (cfg->platform.adapt)
        json_object_set_new (o, "live", root->has_live_bound
                                            ? json_real (root->live_bound[model])
                                            : json_null ());
    return o;
}

/*  {"min": f, "node": worst or null, "threshold": t, "reliable": bool}:
 *  whether the run's timings, its efficiency above all, can be trusted. */
static json_t *
fidelity_to_json (const results_t *self)
{
    int worst;
    double min = results_fidelity (self, &worst);
    json_t *o = json_pack ("{s:f, s:f, s:b}", "min", min, "threshold",
                           RESULTS_FIDELITY_MIN, "reliable", results_reliable (self));
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

/*  The outcome and the run's figures: status and error, the tasks, the
 *  commands that failed, makespan, throughput, efficiency against the
 *  bound, the steady state, fidelity. */
static void
outcome_to_json (const results_t *self, json_t *object)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    double span = results_makespan (self);
    double grown, bound = results_judged_bound (self, &grown);
    int grew = bound != self->offline[results_policy_model (cfg)];
    uint64_t ran = results_ran (self);
    json_object_set_new (object, "status",
                         json_string (results_status_str (self->status)));
    json_object_set_new (object, "error",
                         self->error ? json_string (self->error) : json_null ());
    json_object_set_new (object, "tasks", json_integer ((json_int_t) config_bag_size (cfg)));
    json_object_set_new (object, "commands", json_integer ((json_int_t) cfg->commands.count));
    json_object_set_new (object, "failed", json_integer ((json_int_t) self->cmds.failed));
    json_object_set_new (object, "failures", json_incref (self->cmds.failures));
    json_object_set_new (object, "completed", json_integer ((json_int_t) root->completed));
    json_object_set_new (object, "resumed", json_integer ((json_int_t) self->resumed));
    json_object_set_new (object, "duplicates",
                         json_integer ((json_int_t) root->duplicates));
    json_object_set_new (object, "makespan_s", span >= 0 ? json_real (span) : json_null ());
    json_object_set_new (object, "wall_s", json_real (self->wall_s));
    json_object_set_new (object, "throughput", span > 0 && ran > 0
                                                   ? json_real ((double) ran / span)
                                                   : json_null ());
    json_object_set_new (object, "bound", bound_to_json (self));
    json_object_set_new (object, "efficiency", span > 0 && bound > 0 && ran > 0
                                                   ? json_real ((double) ran / span / bound)
                                                   : json_null ());
    json_object_set_new (object, "steady", steady_to_json (self, grew ? grown : bound));
    json_object_set_new (object, "tail", tail_to_json (self));
    if (grew)
        json_object_set_new (json_object_get (object, "bound"), "grown",
                             json_pack ("{s:f, s:f}", "judged", bound, "final", grown));
    json_object_set_new (object, "efficiency_reliable",
                         json_boolean (results_reliable (self)));
    json_object_set_new (object, "fidelity", fidelity_to_json (self));
}

/*  One change of node by's, and when. */
typedef struct {
    const proto_change_t *c;
    int by;
} change_ref_t;

/*  By time, then by the declaring node's place in the tree: the same
 *  order every time. */
static int
by_time (const void *a, const void *b)
{
    const change_ref_t *x = a, *y = b;
    if (x->c->at_s != y->c->at_s)
        return x->c->at_s < y->c->at_s ? -1 : 1;
    return (x->by > y->by) - (x->by < y->by);
}

/*  Every node's declared changes, by time: "changes": [{node, what,
 *  from, to, at_s, by}] (node: whose rate; by: who declared it), with
 *  "changes_dropped" when a node kept fewer than it declared. Present
 *  (maybe []) when the run adapts, absent when it does not. */
static void
changes_to_json (const results_t *self, json_t *object)
{
    const config_t *cfg = self->cfg;
    if (!cfg->platform.adapt)
        return;
    size_t total = 0;
    uint64_t dropped = 0;
    for (int i = 0; i < cfg->nnodes; i++) {
        total += (size_t) self->nodes[i].stats.changes.n;
        dropped += self->nodes[i].stats.changes.dropped;
    }
    change_ref_t *refs = xcalloc (total + 1, sizeof *refs);
    size_t k = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        for (int j = 0; j < self->nodes[i].stats.changes.n; j++)
            refs[k++] = (change_ref_t){&self->nodes[i].stats.changes.items[j], i};
    if (total > 1)
        qsort (refs, total, sizeof *refs, by_time);
    json_t *a = json_array ();
    for (size_t i = 0; i < total; i++) {
        const proto_change_t *c = refs[i].c;
        json_array_append_new (a, json_pack ("{s:s, s:s, s:f, s:f, s:f, s:s}", "node", c->node,
                                             "what", c->what, "from", c->from, "to", c->to,
                                             "at_s", c->at_s, "by",
                                             cfg->nodes[refs[i].by].name));
    }
    free (refs);
    json_object_set_new (object, "changes", a);
    if (dropped)
        json_object_set_new (object, "changes_dropped", json_integer ((json_int_t) dropped));
}

/*  One action, and its place in node order. */
typedef struct {
    const proto_action_t *a;
    int seq;
} action_ref_t;

static int
action_by_time (const void *a, const void *b)
{
    const action_ref_t *x = a, *y = b;
    if (x->a->at_s != y->a->at_s)
        return x->a->at_s < y->a->at_s ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/*  Every node's weighed actions, by time: "actions": [{node, what, child,
 *  hold, tasks, saved_s, cost_s, taken, at_s}] and "actions_dropped"
 *  when a node kept fewer; present (maybe []) when the run adapts. */
static void
actions_to_json (const results_t *self, json_t *object)
{
    const config_t *cfg = self->cfg;
    if (!cfg->platform.adapt)
        return;
    int total = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        total += self->nodes[i].stats.actions.n;
    /*  Gathered in node order, then sorted by time with that order as the
     *  tie-break: up to 256 a node, so no quadratic sort. */
    action_ref_t *refs = xcalloc ((size_t) total + 1, sizeof *refs);
    proto_actions_t all = {xcalloc ((size_t) total + 1, sizeof *all.items), 0, 0};
    for (int i = 0; i < cfg->nnodes; i++) {
        const proto_actions_t *a = &self->nodes[i].stats.actions;
        for (int j = 0; j < a->n; j++, all.n++)
            refs[all.n] = (action_ref_t){&a->items[j], all.n};
        all.dropped += a->dropped;
    }
    if (total > 1)
        qsort (refs, (size_t) total, sizeof *refs, action_by_time);
    for (int k = 0; k < total; k++)
        all.items[k] = *refs[k].a;
    free (refs);
    json_t *holder = json_object ();
    proto_actions_to_json (holder, &all);
    json_t *arr = json_object_get (holder, "actions");
    json_object_set_new (object, "actions", arr ? json_incref (arr) : json_array ());
    if (all.dropped)
        json_object_set (object, "actions_dropped", json_object_get (holder, "actions_dropped"));
    json_decref (holder);
    free (all.items);
}

json_t *
results_to_json (const results_t *self)
{
    const config_t *cfg = self->cfg;
    char *text = config_to_json (cfg);
    json_t *config = text ? json_loads (text, 0, NULL) : NULL;
    free (text);

    json_t *object = json_object ();
    json_object_set_new (object, "experiment", json_string (cfg->name));
    json_object_set_new (object, "config", config ? config : json_null ());
    json_object_set_new (object, "policy", json_string (cfg->policy));
    json_object_set_new (object, "mode",
                         json_string (self->simulated ? "simulated"
                                                      : platform_mode_str (cfg->platform.mode)));
    json_object_set_new (object, "time_scale", json_real (cfg->platform.time_scale));
    if (self->simulation)
        json_object_set (object, "simulation", self->simulation);
    outcome_to_json (self, object);
    json_object_set_new (object, "malformed", json_integer ((json_int_t) self->malformed));
    json_object_set_new (object, "curve", json_boolean (self->curve));
    json_object_set_new (object, "startup_s", json_real (self->startup_s));
    json_object_set_new (object, "recorded", json_integer ((json_int_t) self->tasks.recorded));
    json_object_set_new (object, "records_refused",
                         json_integer ((json_int_t) self->tasks.refused));
    json_object_set_new (object, "lost", lost_to_json (self));
    changes_to_json (self, object);
    actions_to_json (self, object);
    if (json_array_size (self->joins) > 0)
        json_object_set (object, "joins", self->joins);
    if (json_array_size (self->moves) > 0)
        json_object_set (object, "moves", self->moves);
    json_t *nodes = json_array ();
    for (int i = 0; i < cfg->nnodes; i++)
        json_array_append_new (nodes, node_to_json (self, i));
    json_object_set_new (object, "nodes", nodes);
    return object;
}

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

/*  ",%g" of x, or "," when it is unknown. */
static void
put_number (FILE *file, double x)
{
    if (isfinite (x))
        fprintf (file, ",%.9g", x);
    else
        fputc (',', file);
}

/*  nodes.csv's rate columns, as rate_to_json, and the line's end. */
static void
rate_to_csv (const results_t *self, int i, FILE *file)
{
    results_rate_t r = results_node_rate (self, i);
    put_number (file, r.configured);
    put_number (file, r.predicted);
    put_number (file, r.measured);
    put_number (file, r.measured_se);
    put_number (file, r.utilization);
    fprintf (file, ",%s\n", r.kind ? r.kind : "");
}

static int
write_nodes_csv (FILE *file, const void *arg)
{
    const results_t *self = arg;
    fputs ("name,parent,pid", file);
    for (int c = 0; c < PROTO_NCOUNTERS; c++)
        if (proto_counters[c].per_node)
            fprintf (file, ",%s", proto_counters[c].key);
    fputs (",compute_seconds,compute_configured,compute_predicted,compute_measured,"
           "compute_stderr,load_utilization,load_kind\n", file);
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
        fprintf (file, ",%.6f", n->stats.compute_seconds);
        rate_to_csv (self, i, file);
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
