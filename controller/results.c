/*  results — the store of a run's figures, and its directory. See
 *  results.h; results_int.h has how the module is divided.
 */
#include "controller/results_int.h"

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

static const char *const status_names[] = {
    [RESULTS_RUNNING] = "running",
    [RESULTS_COMPLETE] = "complete",
    [RESULTS_FAILED] = "failed",
    [RESULTS_INTERRUPTED] = "interrupted",
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
    /*  Room for the nodes that may join the run (config_attach). */
    int room = cfg->capacity > cfg->nnodes ? cfg->capacity : cfg->nnodes;
    self->nodes = xcalloc ((size_t) room, sizeof *self->nodes);
    for (int i = 0; i < room; i++) {   /* unknown until a STATS says */
        self->nodes[i].stats.rate = (proto_rate_stats_t){NAN, NAN, NAN, NAN, ""};
        self->nodes[i].left_at = self->nodes[i].joined_at = -1;
    }
    self->cmds.failures = json_array ();
    self->joins = json_array ();
    self->moves = json_array ();
    self->cmds.node_seconds = xcalloc ((size_t) room, sizeof *self->cmds.node_seconds);
    self->cmds.node_commands = xcalloc ((size_t) room, sizeof *self->cmds.node_commands);
    /*  A run is judged against the platform as it is: a node with
     *  background load at its predicted rate (docs/load.md). */
    bound_app_t app = bound_app_of (cfg);
    for (int loaded = 1; loaded >= 0; loaded--) {
        app.loaded = loaded;
        for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
            bound_tree_t *tree = bound_tree_new (cfg, m, &app, NULL, 0);
            double that = tree ? tree->bound : NAN;
            bound_tree_destroy (&tree);
            if (loaded)
                self->offline[m] = self->planned[m] = that;
            else if (cfg->platform.adapt)
                self->planned[m] = that;
        }
    }
    self->window = results_window_make (config_bag_size (cfg), results_window_k (cfg));
    return self;
}

/*  Tasks completed by this run: the root's count, less those a resumed
 *  run found done (its throughput and efficiency are this run's). */
uint64_t
results_ran (const results_t *self)
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
bound_model_t
results_policy_model (const config_t *cfg)
{
    const policy_t *policy = policy_find (cfg->policy);
    return policy && policy->multiport ? BOUND_MULTI : BOUND_SINGLE;
}

double
results_live_bound (const results_t *self)
{
    const results_stats_t *root = &self->nodes[self->cfg->root].stats;
    if (!self->cfg->platform.adapt || !root->has_live_bound)
        return NAN;
    return root->live_bound[results_policy_model (self->cfg)];
}

/*  Do the tree's own bound and the offline one agree? Both come from the
 *  same step on the same parameters, so they must, to rounding. */
int
results_bounds_agree (double a, double b)
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
        free (self->nodes[i].stats.changes.items);
        free (self->nodes[i].stats.actions.items);
        free (self->nodes[i].samples_csv);
        free (self->nodes[i].trace_csv);
        free (self->nodes[i].lost_why);
    }
    free (self->nodes);
    if (self->tasks.file)
        fclose (self->tasks.file);
    free (self->tasks.path);
    free (self->tasks.bits);
    free (self->error);
    json_decref (self->cmds.failures);
    json_decref (self->joins);
    json_decref (self->moves);
    json_decref (self->simulation);
    free (self->cmds.node_seconds);
    free (self->cmds.node_commands);
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

/*  A copy of n items of size bytes each (NULL for none). */
static void *
copy_items (const void *items, int n, size_t size)
{
    if (n <= 0)
        return NULL;
    void *copy = xcalloc ((size_t) n, size);
    memcpy (copy, items, (size_t) n * size);
    return copy;
}

/*  Keep the scalars of stats, a reference to its fit and a copy of its
 *  changes and actions; nothing that the message owns. */
static void
keep_stats (node_results_t *n, const proto_stats_t *stats)
{
    json_t *fit = stats->fit ? json_incref (stats->fit) : NULL;
    json_decref (n->stats.fit);
    free (n->stats.changes.items);
    free (n->stats.actions.items);
    proto_changes_t changes = {copy_items (stats->changes.items, stats->changes.n,
                                           sizeof *stats->changes.items),
                               stats->changes.n, stats->changes.dropped};
    proto_actions_t actions = {copy_items (stats->actions.items, stats->actions.n,
                                           sizeof *stats->actions.items),
                               stats->actions.n, stats->actions.dropped};
    n->stats = *stats;
    n->stats.fit = fit;
    n->stats.changes = changes;
    n->stats.actions = actions;
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

/*  Of `have` entries, those after *announced: their count (0 when none),
 *  the first's index in *from; all are announced from then on. */
static int
fresh (int have, int *announced, int *from)
{
    int n = have - *announced;
    *from = *announced;
    if (n <= 0)
        return 0;
    *announced = have;
    return n;
}

int
results_new_changes (results_t *self, int node, const proto_change_t **first)
{
    node_results_t *n = &self->nodes[node];
    int from, k = fresh (n->stats.changes.n, &n->announced, &from);
    if (k > 0)
        *first = n->stats.changes.items + from;
    return k;
}

int
results_new_actions (results_t *self, int node, const proto_action_t **first)
{
    node_results_t *n = &self->nodes[node];
    int from, k = fresh (n->stats.actions.n, &n->announced_actions, &from);
    if (k > 0)
        *first = n->stats.actions.items + from;
    return k;
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

const char *
results_node_samples (const results_t *self, int node)
{
    return self->nodes[node].samples_csv;
}

results_rate_t
results_node_rate (const results_t *self, int node)
{
    const config_node_t *me = &self->cfg->nodes[node];
    const proto_rate_stats_t *r = &self->nodes[node].stats.rate;
    results_rate_t out = {
        .configured = me->compute_rate, .predicted = r->predicted,
        .measured = r->measured, .measured_se = r->measured_se,
        .utilization = r->load_utilization, .kind = r->load_kind[0] ? r->load_kind : NULL,
    };
    if (!me->load) {
        /*  Dedicated: what it predicts and carries is known without it. */
        if (isnan (out.predicted))
            out.predicted = me->compute_rate;
        if (isnan (out.utilization))
            out.utilization = 0;
        if (!out.kind)
            out.kind = "none";
    }
    return out;
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
results_set_startup (results_t *self, double startup_s)
{
    self->startup_s = startup_s > 0 ? startup_s : 0;
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

void
results_set_simulated (results_t *self, json_t *figures)
{
    self->simulated = 1;
    json_decref (self->simulation);
    self->simulation = figures;
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

/*  Can the run's timings be trusted? Only an emulation can fall behind
 *  the clock it emulates: a real run's timings are what they are. */
int
results_reliable (const results_t *self)
{
    return self->cfg->platform.mode != PLATFORM_EMULATED
        || results_fidelity (self, NULL) >= RESULTS_FIDELITY_MIN;
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
    uint64_t tail = (uint64_t) ceil ((double) n * RESULTS_TAIL_FRACTION);
    return (results_window_t){.n = n, .k = k ? k : 1, .tail_n = tail ? tail : 1,
                              .tail_from_s = NAN, .last_s = NAN};
}

int
results_window_tail (const results_window_t *w, double *seconds)
{
    if (!isfinite (w->last_s) || !isfinite (w->tail_from_s))
        return -1;
    *seconds = w->last_s - w->tail_from_s;
    return 0;
}

void
results_window_note (results_window_t *w, uint64_t recorded, double t)
{
    /*  The tail starts when the tasks before it are in. */
    if (!isfinite (w->tail_from_s) && recorded + w->tail_n >= w->n)
        w->tail_from_s = t;
    if (recorded >= w->n && !isfinite (w->last_s))
        w->last_s = t;
    if (w->n < 3 * w->k)
        return;   /* no steady state: a window of fewer than k tasks is a
                     few batches' noise, not a rate */
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
    uint64_t mine = self->tasks.recorded > self->resumed ? self->tasks.recorded - self->resumed : 0;
    results_window_note (&self->window, mine, t);
}

/*  The steady state's throughput in platform tasks/s and its efficiency
 *  against bound (NAN when unknown); -1 when the run has no window. */
int
results_steady (const results_t *self, double bound, double *throughput, double *efficiency)
{
    uint64_t tasks;
    double seconds;
    if (results_window_get (&self->window, &tasks, &seconds) != 0)
        return -1;
    *throughput = (double) tasks / (seconds * self->cfg->platform.time_scale);
    *efficiency = bound > 0 ? *throughput / bound : NAN;
    return 0;
}

/*  Platform seconds from START to FINISHED, or -1 when the run did not
 *  finish. */
double
results_makespan (const results_t *self)
{
    return self->finished ? self->wall_s * self->cfg->platform.time_scale : -1;
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
