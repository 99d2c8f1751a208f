/*  bound — see bound.h; the model and the proofs are in docs/bounds.md.
 *
 *  One step, for a node n with compute C (tasks/s) and children i, is a
 *  small linear program. With a_i = IR_s(i) Z C and r = IR_r Z C (both 0
 *  in bwc), x_i the tasks/s n sends to child i and T = T(n):
 *
 *      maximise T  subject to
 *      T (1 + r) <= C + sum_i (1 - a_i) x_i       (compute, from S(n) =
 *                                                  C (1 - IR_r Z T - sum
 *                                                  IR_s Z x_i))
 *      T - sum_i x_i >= 0                         (S(n) >= 0)
 *      T <= min (B_r^n, target)
 *      sum_i x_i <= B_s^n  or  sum_i x_i / B_r^i <= 1    (the port)
 *      0 <= x_i <= That(i)
 *
 *  The first two give sum_i (a_i + r) x_i <= C: forwarding costs CPU.
 *  So every child is an item worth v_i = 1 - a_i (to T (1 + r)) that
 *  weighs p_i on the port (1, or 1/B_r^i) and q_i = a_i + r on the CPU.
 *  The step serves children by v_i / p_i, best first, until the port,
 *  the CPU or the cap (B_r^n or the target) runs out. In the multi-port
 *  model an earlier child is no worse on any count, so this is optimal;
 *  in the single-port model it is optimal unless the CPU runs out first,
 *  and then the CPU gets a price y and the order becomes (v_i - y q_i) /
 *  p_i, with y found by bisection where the port-greedy's CPU use crosses
 *  C; the optimum mixes the two greedy solutions on either side of it.
 */
#include "overlay/bound.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/load.h"
#include "overlay/util.h"

/*  Relative slack under which a budget counts as used up. */
#define BOUND_EPS 1e-9
/*  A child whose whole That fits in a budget but for rounding (a link
 *  exactly as fast as the child's bound, say) is given all of it. */
#define BOUND_SNAP 1e-12
/*  Bisection steps for the CPU's price (each halves the interval; the
 *  search stops earlier when the interval is two adjacent doubles). */
#define PRICE_STEPS 256

static const char *const model_names[BOUND_MODEL_COUNT] = {
    [BOUND_MULTI] = "multi",
    [BOUND_SINGLE] = "single",
    [BOUND_BWC] = "bwc",
};

static const char *const model_titles[BOUND_MODEL_COUNT] = {
    [BOUND_MULTI] = "multi-port, interference-aware",
    [BOUND_SINGLE] = "single-port, interference-aware",
    [BOUND_BWC] = "classic bandwidth-centric: single-port, no interference",
};

static const char *const role_names[BOUND_ROLE_COUNT] = {
    [BOUND_ROLE_ROOT] = "root",
    [BOUND_ROLE_SATURATED] = "saturated",
    [BOUND_ROLE_PARTIAL] = "partial",
    [BOUND_ROLE_UNUSED] = "unused",
};

static const char *const why_names[BOUND_WHY_COUNT] = {
    [BOUND_WHY_NONE] = "",
    [BOUND_WHY_INTERFERENCE] = "IR_s Z C >= 1",
    [BOUND_WHY_OUT_BW] = "outgoing bandwidth exhausted",
    [BOUND_WHY_IN_BW] = "incoming bandwidth exhausted",
    [BOUND_WHY_CPU] = "CPU exhausted by interference",
    [BOUND_WHY_OUT_BW_CPU] = "outgoing bandwidth and CPU exhausted",
    [BOUND_WHY_SHARE] = "parent gets only a partial share",
    [BOUND_WHY_IDLE] = "parent unused",
};

static const char *const cmp_names[] = {
    [BOUND_LP_EQUAL] = "equal",
    [BOUND_LP_BELOW] = "greedy below LP",
    [BOUND_LP_ABOVE] = "greedy above LP",
};

const char *
bound_model_str (bound_model_t model)
{
    return (unsigned) model < BOUND_MODEL_COUNT ? model_names[model] : "?";
}

const char *
bound_model_title (bound_model_t model)
{
    return (unsigned) model < BOUND_MODEL_COUNT ? model_titles[model] : "?";
}

int
bound_model_parse (const char *name, bound_model_t *model)
{
    for (int i = 0; name && i < BOUND_MODEL_COUNT; i++)
        if (strcmp (name, model_names[i]) == 0) {
            *model = (bound_model_t) i;
            return 0;
        }
    return -1;
}

const char *
bound_role_str (bound_role_t role)
{
    return (unsigned) role < BOUND_ROLE_COUNT ? role_names[role] : "?";
}

const char *
bound_why_str (bound_why_t why)
{
    return (unsigned) why < BOUND_WHY_COUNT ? why_names[why] : "?";
}

const char *
bound_lp_cmp_str (bound_lp_cmp_t cmp)
{
    return (unsigned) cmp <= BOUND_LP_ABOVE ? cmp_names[cmp] : "?";
}

bound_lp_cmp_t
bound_lp_compare (double greedy, double lp)
{
    double scale = fmax (fmax (fabs (greedy), fabs (lp)), 1e-300);
    if (fabs (greedy - lp) <= BOUND_LP_TOL * scale)
        return BOUND_LP_EQUAL;
    return greedy < lp ? BOUND_LP_BELOW : BOUND_LP_ABOVE;
}

/* ------------------------------------------------------------------------
 *  Parameters.
 */

/*  MB/s as tasks/s: INFINITY when tasks carry no data. */
static double
per_task (double mbps, double input_mb)
{
    return input_mb > 0 ? mbps / input_mb : INFINITY;
}

double
bound_compute_rate (const config_t *cfg, int index, const bound_app_t *app)
{
    const config_node_t *node = &cfg->nodes[index];
    if (!app->loaded || !node->load)
        return node->compute_rate;
    double link = node->parent >= 0 ? node->link_mbps : 0;
    return node->compute_rate * load_predict_long_run (node->load, node->ir_recv, link);
}

void
bound_node_init (bound_node_t *self, const config_t *cfg, int index,
                 const bound_app_t *app)
{
    const config_node_t *node = &cfg->nodes[index];
    int root = node->parent < 0;
    self->compute = bound_compute_rate (cfg, index, app) / app->units;
    self->recv_max = root ? INFINITY : per_task (node->link_mbps, app->input_mb);
    self->send_max = node->send_limit_mbps > 0
                         ? per_task (node->send_limit_mbps, app->input_mb)
                         : INFINITY;
    self->recv_loss = root ? 0 : node->ir_recv * app->input_mb;
}

void
bound_child_init (bound_child_t *self, const config_t *cfg, int index,
                  const bound_app_t *app, double that)
{
    const config_node_t *node = &cfg->nodes[index];
    self->that = that;
    self->recv_max = per_task (node->link_mbps, app->input_mb);
    self->send_loss = node->ir_send * app->input_mb;
}

/* ------------------------------------------------------------------------
 *  The step.
 */

/*  A usable child as the step's knapsack sees it. */
typedef struct {
    int child;               /* index in the children array */
    double value;            /* v = 1 - a: gain in T (1 + r) per task/s */
    double port;             /* p: port used per task/s (0: none) */
    double cpu;              /* q = a + r: compute lost per task/s, tasks/s */
    double upper;            /* That(i) */
    double key;              /* priority, larger first */
    double x;                /* the answer: tasks/s sent */
    double trial;            /* x at the price being tried */
    double x_lo, x_hi;       /* x on either side of the CPU's price */
} item_t;

/*  qsort order: key descending, then tree order. */
static int
item_cmp (const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return (a->child > b->child) - (a->child < b->child);
}

/*  Order items by (v - y q) / p, larger first, ties in tree order; a
 *  child that uses no port comes first. */
static void
sort_items (item_t *items, int n, double y)
{
    for (int k = 0; k < n; k++) {
        item_t *it = &items[k];
        double net = it->value - y * it->cpu;
        it->key = it->port > 0 ? net / it->port : (net > 0 ? INFINITY : -INFINITY);
    }
    qsort (items, (size_t) n, sizeof *items, item_cmp);
}

/*  The single-port greedy at CPU price y: the items worth more than the
 *  CPU they cost, by (v - y q) / p, each up to its bound while the port
 *  (capacity 1) lasts. Leaves the answer in each item's trial and returns
 *  the CPU it uses. */
static double
fill_priced (item_t *items, int n, double y)
{
    sort_items (items, n, y);
    double port_left = 1, cpu = 0;
    for (int k = 0; k < n; k++) {
        item_t *it = &items[k];
        double x = 0;
        if (it->value - y * it->cpu > 0 && port_left > 0) {
            x = it->upper;
            if (x * it->port > port_left) {
                x = port_left / it->port;
                port_left = 0;
            }
            else
                port_left -= x * it->port;
        }
        it->trial = x;
        cpu += x * it->cpu;
    }
    return cpu;
}

/*  Give items the first of them, in the order they are in, until their
 *  gain reaches need; the rest get nothing. */
static void
truncate_to (item_t *items, int n, double need)
{
    for (int k = 0; k < n; k++) {
        item_t *it = &items[k];
        if (it->x * it->value >= need) {
            it->x = need > 0 ? need / it->value : 0;
            need = 0;
        }
        else
            need -= it->x * it->value;
    }
}

/*  Keep every item's trial share as its share on the low (side 0) or
 *  high (side 1) side of the CPU's price. */
static void
keep_trial (item_t *items, int n, int side)
{
    for (int k = 0; k < n; k++) {
        if (side)
            items[k].x_hi = items[k].trial;
        else
            items[k].x_lo = items[k].trial;
    }
}

/*  Mix the two sides (a fraction alpha of the low one) so the CPU is
 *  used exactly; returns the gain. */
static double
mix_sides (item_t *items, int n, double alpha)
{
    double gain = 0;
    for (int k = 0; k < n; k++) {
        item_t *it = &items[k];
        if (it->x_lo == it->x_hi)
            it->x = it->x_lo;
        else
            it->x = fmin (fmax (alpha * it->x_lo + (1 - alpha) * it->x_hi, 0), it->upper);
        gain += it->x * it->value;
    }
    return gain;
}

/*  The single-port step when the CPU is the scarce resource: the optimum
 *  of max sum v x, sum p x <= 1, sum q x <= c, 0 <= x <= upper, by the
 *  CPU's price (see the file's header), then cut back to need. Returns 1
 *  if the cut was needed (T reaches its cap). */
static int
price_cpu (item_t *items, int n, double c, double need)
{
    /*  At hi, twice the largest v/q, every item that costs CPU is worth
     *  less than it costs (at v/q itself rounding may leave it in). */
    double lo = 0, hi = 0;
    for (int k = 0; k < n; k++)
        if (items[k].cpu > 0)
            hi = fmax (hi, 2 * items[k].value / items[k].cpu);
    double u_lo = fill_priced (items, n, lo);
    keep_trial (items, n, 0);
    double u_hi = fill_priced (items, n, hi);
    keep_trial (items, n, 1);
    if (u_lo <= c) {
        for (int k = 0; k < n; k++)
            items[k].x_hi = items[k].x_lo;
        u_hi = u_lo;
    }
    else
        for (int step = 0; step < PRICE_STEPS; step++) {
            double mid = lo + (hi - lo) / 2;
            if (mid <= lo || mid >= hi)
                break;
            double u = fill_priced (items, n, mid);
            keep_trial (items, n, u <= c);
            if (u > c) {
                lo = mid;
                u_lo = u;
            }
            else {
                hi = mid;
                u_hi = u;
            }
        }
    double alpha = u_lo > u_hi ? (c - u_hi) / (u_lo - u_hi) : 0;
    if (mix_sides (items, n, fmin (fmax (alpha, 0), 1)) < need)
        return 0;
    sort_items (items, n, hi);
    truncate_to (items, n, need);
    return 1;
}

/*  The children bound_step may use, as items (an excluded child, whose
 *  send costs a whole task or more, is not one); every share starts
 *  unused. r is the receive loss IR_r Z C^n of the node (0 in BWC).
 *  Returns the number of items. */
static int
make_items (const bound_node_t *self, bound_model_t model, const bound_child_t *children,
            int nchildren, double r, item_t *items, bound_share_t *shares)
{
    int ia = model != BOUND_BWC, n = 0;
    for (int i = 0; i < nchildren; i++) {
        double a = ia ? children[i].send_loss * self->compute : 0;
        shares[i] = (bound_share_t) {.x = 0, .load = a, .role = BOUND_ROLE_UNUSED,
                                     .why = BOUND_WHY_INTERFERENCE};
        if (a >= 1)
            continue;
        item_t *it = &items[n++];
        it->child = i;
        it->value = 1 - a;
        it->port = model == BOUND_MULTI ? 1 : 1 / children[i].recv_max;
        it->cpu = a + r;
        it->upper = fmax (children[i].that, 0);
    }
    return n;
}

/*  The greedy walk: items in priority order, each up to its bound, the
 *  port, the CPU left, or the gain still needed to reach the cap, which
 *  ever comes first (BOUND_SNAP absorbs rounding at each). Returns 1 if
 *  the cap was reached; sets *cpu_cut if the CPU stopped an item. */
static int
fill_greedy (item_t *items, int n, double port, double cpu, double need, int *cpu_cut)
{
    int capped = need <= 0;
    *cpu_cut = 0;
    sort_items (items, n, 0);
    for (int k = 0; k < n && !capped; k++) {
        item_t *it = &items[k];
        enum { BY_NONE, BY_PORT, BY_CPU, BY_CAP } by = BY_NONE;
        double x = it->upper;
        if (it->port > 0 && port / it->port < x * (1 - BOUND_SNAP)) {
            x = port / it->port;
            by = BY_PORT;
        }
        if (it->cpu > 0 && cpu / it->cpu < x * (1 - BOUND_SNAP)) {
            x = cpu / it->cpu;
            by = BY_CPU;
        }
        if (need / it->value <= x * (1 + BOUND_SNAP)) {
            x = fmin (need / it->value, x);
            by = BY_CAP;
        }
        it->x = x = fmax (x, 0);
        port = by == BY_PORT ? 0 : fmax (port - x * it->port, 0);
        cpu = by == BY_CPU ? 0 : fmax (cpu - x * it->cpu, 0);
        need -= x * it->value;
        capped = by == BY_CAP;
        *cpu_cut |= by == BY_CPU;
    }
    return capped;
}

/*  Why T stops where it does, once the items are filled: the cap (the
 *  receive bandwidth, the parent's share, or nothing at all), nothing
 *  (every child saturated), or the port, the CPU or both used up. */
static bound_why_t
step_limit (const bound_node_t *self, const item_t *items, int n, double port,
            double target, int capped)
{
    if (capped)
        return target >= self->recv_max ? BOUND_WHY_IN_BW
             : target > 0               ? BOUND_WHY_SHARE
                                        : BOUND_WHY_IDLE;
    double port_used = 0, cpu_used = 0;
    int all_saturated = 1;
    for (int k = 0; k < n; k++) {
        port_used += items[k].x * items[k].port;
        cpu_used += items[k].x * items[k].cpu;
        all_saturated &= items[k].x >= items[k].upper;
    }
    if (all_saturated)
        return BOUND_WHY_NONE;
    int port_full = isfinite (port) && port_used >= port * (1 - BOUND_EPS);
    /*  No CPU used is no CPU limit, also on a relay (C = 0). */
    int cpu_full = cpu_used > 0 && cpu_used >= self->compute * (1 - BOUND_EPS);
    return port_full && cpu_full ? BOUND_WHY_OUT_BW_CPU
         : cpu_full              ? BOUND_WHY_CPU
                                 : BOUND_WHY_OUT_BW;
}

void
bound_step (const bound_node_t *self, bound_model_t model, const bound_child_t *children,
            int nchildren, double target, bound_step_t *step, bound_share_t *shares)
{
    assert (self && step && (nchildren == 0 || (children && shares)));
    assert ((unsigned) model < BOUND_MODEL_COUNT);
    double c = self->compute;
    double r = model != BOUND_BWC ? self->recv_loss * c : 0;
    double cap = fmin (self->recv_max, target);
    double port = model == BOUND_MULTI ? self->send_max : 1;

    item_t *items = xcalloc ((size_t) nchildren, sizeof *items);
    int n = make_items (self, model, children, nchildren, r, items, shares);
    /*  T (1 + r) = C + gain: the gain that takes T to its cap. */
    int cpu_cut;
    int capped = fill_greedy (items, n, port, c, cap * (1 + r) - c, &cpu_cut);
    /*  Single-port with the CPU short: the port order is not optimal. */
    if (model == BOUND_SINGLE && cpu_cut && !capped)
        capped = price_cpu (items, n, c, cap * (1 + r) - c);

    double gain = 0, sent = 0;
    for (int k = 0; k < n; k++) {
        gain += items[k].x * items[k].value;
        sent += items[k].x;
    }
    step->t = capped ? cap : (c + gain) / (1 + r);
    step->sent = sent;
    step->s = fmax (step->t - sent, 0);
    step->limit = step_limit (self, items, n, port, target, capped);
    for (int k = 0; k < n; k++) {
        const item_t *it = &items[k];
        bound_share_t *share = &shares[it->child];
        share->x = it->x;
        int full = it->x >= it->upper;
        share->role = full ? BOUND_ROLE_SATURATED
                    : it->x > 0 ? BOUND_ROLE_PARTIAL : BOUND_ROLE_UNUSED;
        share->why = full ? BOUND_WHY_NONE : step->limit;
    }
    free (items);
}

/* ------------------------------------------------------------------------
 *  The tree.
 */

/*  Fill order with the node indices depth first from the root. */
static void
tree_order (const config_t *cfg, int *order)
{
    int *stack = xmalloc ((size_t) cfg->nnodes * sizeof *stack);
    int top = 0, used = 0;
    stack[top++] = cfg->root;
    while (top > 0) {
        int index = stack[--top];
        order[used++] = index;
        const config_node_t *node = &cfg->nodes[index];
        for (int k = node->nchildren - 1; k >= 0; k--)
            stack[top++] = node->children[k];
    }
    assert (used == cfg->nnodes);
    free (stack);
}

/*  Take node index's step with its children's subtree bounds. */
static void
tree_step (bound_tree_t *self, int index, double target, bound_child_t *children,
           bound_step_t *step, bound_share_t *shares)
{
    const config_node_t *node = &self->cfg->nodes[index];
    for (int k = 0; k < node->nchildren; k++) {
        const bound_entry_t *child = &self->nodes[node->children[k]];
        bound_child_init (&children[k], self->cfg, node->children[k], &self->app,
                          child->that);
    }
    bound_step (&self->nodes[index].node, self->model, children, node->nchildren, target,
                step, shares);
}

/*  Check the application type and the model. */
static int
check_app (bound_model_t model, const bound_app_t *app, char *err, size_t errlen)
{
    if (!(isfinite (app->input_mb) && app->input_mb >= 0))
        return tf_error (err, errlen, "task input must be a finite size >= 0 MB, got %g",
                         app->input_mb);
    if (!(isfinite (app->units) && app->units > 0))
        return tf_error (err, errlen, "task compute must be a finite number of units "
                         "> 0, got %g", app->units);
    if ((unsigned) model >= BOUND_MODEL_COUNT)
        return tf_error (err, errlen, "unknown model %d", (int) model);
    return 0;
}

/*  Bottom-up: every subtree's bound, That(n), and what limits it. */
static void
tree_up (bound_tree_t *self, bound_child_t *children, bound_share_t *shares)
{
    bound_step_t step;
    for (int k = self->nnodes - 1; k >= 0; k--) {
        int index = self->order[k];
        tree_step (self, index, INFINITY, children, &step, shares);
        self->nodes[index].that = step.t;
        self->nodes[index].that_limit = step.limit;
    }
    self->bound = self->nodes[self->cfg->root].that;
}

/*  Top-down: what each node does when the root reaches its bound. A node
 *  that gets its whole subtree bound takes the same step again; one that
 *  gets less takes it capped at what it gets. */
static void
tree_down (bound_tree_t *self, bound_child_t *children, bound_share_t *shares)
{
    bound_step_t step;
    bound_entry_t *root = &self->nodes[self->cfg->root];
    root->t = root->that;
    root->role = BOUND_ROLE_ROOT;
    root->why = BOUND_WHY_NONE;
    for (int k = 0; k < self->nnodes; k++) {
        int index = self->order[k];
        bound_entry_t *entry = &self->nodes[index];
        double target = entry->t >= entry->that ? INFINITY : entry->t;
        tree_step (self, index, target, children, &step, shares);
        entry->s = step.s;
        entry->limit = step.limit;
        entry->share = self->bound > 0 ? entry->s / self->bound : 0;
        for (int j = 0; j < entry->config->nchildren; j++) {
            bound_entry_t *child = &self->nodes[entry->config->children[j]];
            child->t = shares[j].x;
            child->load = shares[j].load;
            child->role = shares[j].role;
            child->why = shares[j].why;
        }
    }
}

bound_tree_t *
bound_tree_new (const config_t *cfg, bound_model_t model, const bound_app_t *app,
                char *err, size_t errlen)
{
    if (check_app (model, app, err, errlen))
        return NULL;
    bound_tree_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->model = model;
    self->app = *app;
    self->nnodes = cfg->nnodes;
    self->nodes = xcalloc ((size_t) cfg->nnodes, sizeof *self->nodes);
    self->order = xmalloc ((size_t) cfg->nnodes * sizeof *self->order);
    self->lp_bound = NAN;
    tree_order (cfg, self->order);

    int most = 0;
    for (int i = 0; i < cfg->nnodes; i++) {
        bound_entry_t *entry = &self->nodes[i];
        entry->config = &cfg->nodes[i];
        bound_node_init (&entry->node, cfg, i, app);
        if (entry->config->parent >= 0)
            entry->send_loss = entry->config->ir_send * app->input_mb;
        entry->lp_that = entry->lp_t = NAN;
        if (entry->config->nchildren > most)
            most = entry->config->nchildren;
    }
    bound_child_t *children = xcalloc ((size_t) most, sizeof *children);
    bound_share_t *shares = xcalloc ((size_t) most, sizeof *shares);
    tree_up (self, children, shares);
    tree_down (self, children, shares);
    free (children);
    free (shares);
    return self;
}

void
bound_tree_destroy (bound_tree_t **self_p)
{
    bound_tree_t *self = *self_p;
    if (!self)
        return;
    free (self->nodes);
    free (self->order);
    free (self);
    *self_p = NULL;
}

/*  Fold one comparison into the verdict so far. */
static void
verdict_add (bound_lp_cmp_t *worst, double *max_rel, double greedy, double lp)
{
    if (isnan (lp))
        return;
    bound_lp_cmp_t cmp = bound_lp_compare (greedy, lp);
    if (cmp == BOUND_LP_ABOVE || (cmp == BOUND_LP_BELOW && *worst == BOUND_LP_EQUAL))
        *worst = cmp;
    double scale = fmax (fmax (fabs (greedy), fabs (lp)), 1e-300);
    *max_rel = fmax (*max_rel, fabs (greedy - lp) / scale);
}

bound_lp_cmp_t
bound_tree_lp_verdict (const bound_tree_t *self, double *max_rel)
{
    bound_lp_cmp_t worst = BOUND_LP_EQUAL;
    double rel = 0;
    verdict_add (&worst, &rel, self->bound, self->lp_bound);
    for (int i = 0; i < self->nnodes; i++)
        verdict_add (&worst, &rel, self->nodes[i].that, self->nodes[i].lp_that);
    if (max_rel)
        *max_rel = rel;
    return worst;
}

bound_app_t
bound_app_of (const config_t *cfg)
{
    if (cfg->tasks.count > 0 || cfg->commands.count == 0)
        return (bound_app_t){cfg->tasks.input_mb, cfg->tasks.units};
    return (bound_app_t){cfg->commands.input_mb, 1};
}
