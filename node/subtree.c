/*  subtree — the in-tree subtree bound. See subtree.h.
 *
 *  Adapting, the step's inputs are the configured ones with the live
 *  values laid over them: our compute rate and IR_r, each child's link
 *  and IR_s, and each child's latest SUBTREE. The first bound computed is
 *  kept apart: it is what the controller checks against its offline
 *  bound of the same platform.
 */
#include "node/subtree.h"

#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

struct subtree {
    const config_t *cfg;
    int node, n;             /* our index; our children */
    double *child_that;      /* per child x model, -1 until reported */
    int reports;             /* children that reported */
    double that[BOUND_MODEL_COUNT];   /* the bound now */
    double first[BOUND_MODEL_COUNT];  /* the first bound computed */
    int known;
    int adapt;               /* follow the live estimates */
    int dirty;               /* adapting: an input changed since the step */
    double compute, ir_recv; /* ours, live (configured until set) */
    double *link, *ir_send;  /* per child, live (configured until set) */
    unsigned char *vacant;   /* per child: a slot kept for a joining node */
    bound_share_t *shares;   /* per child x model: its part of our step */
};

subtree_t *
subtree_new (const config_t *cfg, int node)
{
    subtree_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->node = node;
    const config_node_t *me = &cfg->nodes[node];
    self->n = me->nchildren;
    self->child_that = xmalloc ((self->n * BOUND_MODEL_COUNT + 1) * sizeof (double));
    for (int i = 0; i < self->n * BOUND_MODEL_COUNT; i++)
        self->child_that[i] = -1;
    self->compute = me->compute_rate;
    self->ir_recv = me->ir_recv;
    self->link = xmalloc ((self->n + 1) * sizeof (double));
    self->ir_send = xmalloc ((self->n + 1) * sizeof (double));
    self->vacant = xcalloc ((size_t) self->n + 1, 1);
    self->shares = xcalloc ((size_t) self->n * BOUND_MODEL_COUNT + 1, sizeof *self->shares);
    for (int i = 0; i < self->n; i++) {
        self->link[i] = cfg->nodes[me->children[i]].link_mbps;
        self->ir_send[i] = cfg->nodes[me->children[i]].ir_send;
        if (cfg->nodes[me->children[i]].vacant) {
            self->vacant[i] = 1;
            for (int m = 0; m < BOUND_MODEL_COUNT; m++)
                self->child_that[i * BOUND_MODEL_COUNT + m] = 0;
            self->reports++;
        }
    }
    return self;
}

void
subtree_destroy (subtree_t **self_p)
{
    subtree_t *self = *self_p;
    if (!self)
        return;
    free (self->child_that);
    free (self->link);
    free (self->ir_send);
    free (self->vacant);
    free (self->shares);
    free (self);
    *self_p = NULL;
}

int
subtree_child (subtree_t *self, int slot, const double *bounds, char *err, size_t errlen)
{
    if (slot < 0 || slot >= self->n)
        return tf_error (err, errlen, "no child in slot %d", slot);
    double *that = &self->child_that[slot * BOUND_MODEL_COUNT];
    int again = that[0] >= 0;
    if (again && !self->adapt)
        return tf_error (err, errlen, "a second SUBTREE");
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        if (!(bounds[m] >= 0) || !isfinite (bounds[m]))
            return tf_error (err, errlen, "\"%s\" bound %g is not a finite number >= 0",
                             bound_model_str (m), bounds[m]);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        self->dirty |= that[m] != bounds[m];
        that[m] = bounds[m];
    }
    self->reports += !again;
    return 0;
}

/*  Tasks/s a link of mbps carries for tasks of input_mb (INFINITY when
 *  tasks carry no data), as overlay/bound.c prices it. */
static double
per_task (double mbps, double input_mb)
{
    return input_mb > 0 ? mbps / input_mb : INFINITY;
}

/*  Our step's inputs: the configured platform (adapting: dedicated, with
 *  the live values over it; else the loaded prediction). */
static void
inputs (const subtree_t *self, const bound_app_t *app, bound_node_t *node,
        bound_child_t *kids, int m)
{
    const config_node_t *me = &self->cfg->nodes[self->node];
    bound_node_init (node, self->cfg, self->node, app);
    if (self->adapt) {
        node->compute = self->compute / app->units;
        node->recv_loss = me->parent < 0 ? 0 : self->ir_recv * app->input_mb;
    }
    for (int i = 0; i < self->n; i++) {
        bound_child_init (&kids[i], self->cfg, me->children[i], app,
                          self->child_that[i * BOUND_MODEL_COUNT + m]);
        if (self->adapt) {
            kids[i].recv_max = per_task (self->link[i], app->input_mb);
            kids[i].send_loss = self->ir_send[i] * app->input_mb;
        }
    }
}

int
subtree_step (subtree_t *self)
{
    if (self->reports < self->n || (self->known && !self->dirty))
        return 0;
    bound_app_t app = bound_app_of (self->cfg);
    /*  A run's bound is the loaded platform's: nodes with background load
     *  priced at its long-run prediction (`treefarm bound --loaded`). An
     *  adapting run's follows the live estimates, which start at the
     *  dedicated platform's rates and see the load as it comes. */
    app.loaded = !self->adapt;
    bound_node_t node;
    bound_child_t *kids = xcalloc (self->n + 1, sizeof *kids);
    bound_share_t *shares = xcalloc (self->n + 1, sizeof *shares);
    int changed = !self->known;
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        inputs (self, &app, &node, kids, m);
        bound_step_t step;
        bound_step (&node, m, kids, self->n, INFINITY, &step, shares);
        for (int i = 0; i < self->n; i++)
            self->shares[i * BOUND_MODEL_COUNT + m] = shares[i];
        changed |= step.t != self->that[m];
        self->that[m] = step.t;
        if (!self->known)
            self->first[m] = step.t;
    }
    free (kids);
    free (shares);
    self->known = 1;
    self->dirty = 0;
    return changed;
}

void
subtree_adapt (subtree_t *self)
{
    if (self->adapt)
        return;
    self->adapt = 1;
    self->dirty = 1;
}

/*  Replace *field with value unless it is NaN; note a change. */
static void
set_live (subtree_t *self, double *field, double value)
{
    if (isnan (value) || value == *field)
        return;
    *field = value;
    self->dirty = 1;
}

void
subtree_set_self (subtree_t *self, double compute, double ir_recv)
{
    if (compute > 0 && isfinite (compute))
        set_live (self, &self->compute, compute);
    if (ir_recv >= 0 && isfinite (ir_recv))
        set_live (self, &self->ir_recv, ir_recv);
}

void
subtree_set_child (subtree_t *self, int slot, double link_mbps, double ir_send)
{
    if (slot < 0 || slot >= self->n)
        return;
    if (link_mbps > 0 && isfinite (link_mbps))
        set_live (self, &self->link[slot], link_mbps);
    if (ir_send >= 0 && isfinite (ir_send))
        set_live (self, &self->ir_send[slot], ir_send);
}

void
subtree_attach (subtree_t *self, int slot, double link_mbps, double ir_send)
{
    if (slot < 0 || slot >= self->n || !self->vacant[slot])
        return;
    self->vacant[slot] = 0;
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        self->child_that[slot * BOUND_MODEL_COUNT + m] = -1;
    self->reports--;
    self->link[slot] = link_mbps;
    self->ir_send[slot] = ir_send;
    self->dirty = 1;
}

void
subtree_self (const subtree_t *self, double *compute, double *ir_recv)
{
    *compute = self->compute;
    *ir_recv = self->ir_recv;
}

const double *
subtree_bounds (const subtree_t *self)
{
    return self->known ? self->that : NULL;
}

const double *
subtree_first_bounds (const subtree_t *self)
{
    return self->known ? self->first : NULL;
}

int
subtree_child_unused (const subtree_t *self, int slot, int model, bound_why_t *why)
{
    if (!self->known || slot < 0 || slot >= self->n || self->vacant[slot] || model < 0
        || model >= BOUND_MODEL_COUNT)
        return 0;
    const bound_share_t *s = &self->shares[slot * BOUND_MODEL_COUNT + model];
    if (why)
        *why = s->why;
    return s->role == BOUND_ROLE_UNUSED;
}
