/*  subtree — the in-tree subtree bound. See subtree.h. */
#include "node/subtree.h"

#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

struct subtree {
    const config_t *cfg;
    int node, n;             /* our index; our children */
    double *child_that;      /* per child x model, -1 until reported */
    int reports;             /* children that reported */
    double that[BOUND_MODEL_COUNT];
    int known;
};

subtree_t *
subtree_new (const config_t *cfg, int node)
{
    subtree_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->node = node;
    self->n = cfg->nodes[node].nchildren;
    self->child_that = xmalloc ((self->n * BOUND_MODEL_COUNT + 1) * sizeof (double));
    for (int i = 0; i < self->n * BOUND_MODEL_COUNT; i++)
        self->child_that[i] = -1;
    return self;
}

void
subtree_destroy (subtree_t **self_p)
{
    subtree_t *self = *self_p;
    if (!self)
        return;
    free (self->child_that);
    free (self);
    *self_p = NULL;
}

int
subtree_child (subtree_t *self, int slot, const double *bounds, char *err, size_t errlen)
{
    if (slot < 0 || slot >= self->n)
        return tf_error (err, errlen, "no child in slot %d", slot);
    double *that = &self->child_that[slot * BOUND_MODEL_COUNT];
    if (that[0] >= 0)
        return tf_error (err, errlen, "a second SUBTREE");
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        if (!(bounds[m] >= 0) || !isfinite (bounds[m]))
            return tf_error (err, errlen, "\"%s\" bound %g is not a finite number >= 0",
                             bound_model_str (m), bounds[m]);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        that[m] = bounds[m];
    self->reports++;
    return 0;
}

int
subtree_step (subtree_t *self)
{
    if (self->known || self->reports < self->n)
        return 0;
    const config_t *cfg = self->cfg;
    const config_node_t *me = &cfg->nodes[self->node];
    bound_app_t app = bound_app_of (cfg);
    /*  A run's live bound is the loaded platform's: nodes with background
     *  load priced at its long-run prediction (`treefarm bound --loaded`). */
    app.loaded = 1;
    bound_node_t node;
    bound_child_t *kids = xcalloc (self->n + 1, sizeof *kids);
    bound_share_t *shares = xcalloc (self->n + 1, sizeof *shares);
    bound_node_init (&node, cfg, self->node, &app);
    for (int m = 0; m < BOUND_MODEL_COUNT; m++) {
        for (int i = 0; i < self->n; i++)
            bound_child_init (&kids[i], cfg, me->children[i], &app,
                              self->child_that[i * BOUND_MODEL_COUNT + m]);
        bound_step_t step;
        bound_step (&node, m, kids, self->n, INFINITY, &step, shares);
        self->that[m] = step.t;
    }
    free (kids);
    free (shares);
    self->known = 1;
    return 1;
}

const double *
subtree_bounds (const subtree_t *self)
{
    return self->known ? self->that : NULL;
}
