/*  bound_lp — the bound as linear programs over the whole tree, solved
 *  with GLPK, to check the greedy of bound.c (see bound.h and
 *  docs/bounds.md). The only file that includes glpk.h.
 *
 *  Per node n, with a_i = IR_s(i) Z C^n and r = IR_r^n Z C^n (0 in bwc),
 *  and x_i the tasks/s n sends to child i:
 *
 *      (1 + r) T(n) - sum_i (1 - a_i) x_i <= C^n      compute
 *      T(n) - sum_i x_i >= 0                          S(n) >= 0
 *      sum_i x_i <= B_s^n                             multi-port, if limited
 *      sum_i x_i / B_r^i <= 1                         single-port, if Z > 0
 *      0 <= T(n) <= B_r^n                             (no cap on the root)
 *
 *  The "flow" program has x_i = T(i) and maximises T(root): the model as
 *  docs/model.md writes it. The "every" program gives each edge its own x_i
 *  with x_i <= T(i), so T(i) is what i's subtree could take rather than
 *  what it gets, and maximises the sum of all T(n): a larger T(i) only
 *  loosens its parent's constraints, so the optimum has every T(n) at
 *  its own maximum, the exact That(n) of every subtree at once.
 *  Children with IR_s Z C >= 1 are left to the solver: their coefficient
 *  1 - a_i <= 0 makes them useless, which the LP confirms rather than
 *  assumes.
 */
#include "overlay/bound.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

/*  Largest relative violation of a constraint accepted in GLPK's answer:
 *  GLPK's own primal feasibility tolerance (tol_bnd). */
#define LP_FEASIBILITY_TOL 1e-7

/*  A growing list of matrix entries, 1-based as GLPK wants them. */
typedef struct {
    int *row, *col;
    double *val;
    int count;
} entries_t;

static void
entry_add (entries_t *m, int row, int col, double val)
{
    m->count++;
    m->row[m->count] = row;
    m->col[m->count] = col;
    m->val[m->count] = val;
}

/*  Column of T(n) and of x_n (what n's parent sends it). */
static int
col_t (int index)
{
    return index + 1;
}

static int
col_x (const bound_tree_t *self, int every, int index)
{
    return every ? self->nnodes + index + 1 : index + 1;
}

/*  The columns: T(n) for every node, bounded by its receive limit, in
 *  the objective (the root's alone, or every node's); with `every`, x_n
 *  as well, fixed at 0 for the root. */
static void
lp_columns (const bound_tree_t *self, int every, glp_prob *lp)
{
    int n = self->nnodes, root = self->cfg->root;
    glp_set_obj_dir (lp, GLP_MAX);
    glp_add_cols (lp, every ? 2 * n : n);
    for (int i = 0; i < n; i++) {
        double bmax = self->nodes[i].node.recv_max;
        if (isfinite (bmax))
            glp_set_col_bnds (lp, col_t (i), GLP_DB, 0, bmax);
        else
            glp_set_col_bnds (lp, col_t (i), GLP_LO, 0, 0);
        glp_set_obj_coef (lp, col_t (i), every || i == root ? 1 : 0);
        if (every)
            glp_set_col_bnds (lp, col_x (self, every, i), i == root ? GLP_FX : GLP_LO, 0,
                              0);
    }
}

/*  Node p's rows from `row` on: its compute, S(p) >= 0 and, with
 *  children, its port. Returns the last row used. */
static int
lp_node_rows (const bound_tree_t *self, int every, int p, int row, glp_prob *lp,
              entries_t *m)
{
    const config_node_t *node = &self->cfg->nodes[p];
    const bound_node_t *par = &self->nodes[p].node;
    int ia = self->model != BOUND_BWC;
    double c = par->compute, r = ia ? par->recv_loss * c : 0;

    row++;                                      /* compute */
    glp_set_row_bnds (lp, row, GLP_UP, 0, c);
    entry_add (m, row, col_t (p), 1 + r);
    for (int k = 0; k < node->nchildren; k++) {
        int i = node->children[k];
        double a = ia ? self->nodes[i].send_loss * c : 0;
        entry_add (m, row, col_x (self, every, i), -(1 - a));
    }

    row++;                                      /* S(n) >= 0 */
    glp_set_row_bnds (lp, row, GLP_LO, 0, 0);
    entry_add (m, row, col_t (p), 1);
    for (int k = 0; k < node->nchildren; k++)
        entry_add (m, row, col_x (self, every, node->children[k]), -1);

    if (node->nchildren == 0)
        return row;
    row++;                                      /* the port */
    int multi = self->model == BOUND_MULTI;
    int limited = multi ? isfinite (par->send_max) : self->app.input_mb > 0;
    if (limited)
        glp_set_row_bnds (lp, row, GLP_UP, 0, multi ? par->send_max : 1);
    else
        glp_set_row_bnds (lp, row, GLP_FR, 0, 0);
    for (int k = 0; k < node->nchildren; k++) {
        int i = node->children[k];
        double w = multi ? 1 : 1 / self->nodes[i].node.recv_max;
        if (w != 0)
            entry_add (m, row, col_x (self, every, i), w);
    }
    return row;
}

/*  Build the program (see the file's header) into lp. */
static void
lp_build (const bound_tree_t *self, int every, glp_prob *lp)
{
    const config_t *cfg = self->cfg;
    int n = self->nnodes;
    lp_columns (self, every, lp);

    int rows = every ? n - 1 : 0, most = 2 * n + 8;
    for (int i = 0; i < n; i++) {
        int k = cfg->nodes[i].nchildren;
        rows += 2 + (k > 0 ? 1 : 0);
        most += 3 * k + 2;
    }
    entries_t m = {
        .row = xmalloc ((size_t) most * sizeof (int)),
        .col = xmalloc ((size_t) most * sizeof (int)),
        .val = xmalloc ((size_t) most * sizeof (double)),
    };
    glp_add_rows (lp, rows);
    int row = 0;
    for (int p = 0; p < n; p++)
        row = lp_node_rows (self, every, p, row, lp, &m);
    if (every)
        for (int i = 0; i < n; i++) {           /* x_i <= T(i) */
            if (i == cfg->root)
                continue;
            row++;
            glp_set_row_bnds (lp, row, GLP_UP, 0, 0);
            entry_add (&m, row, col_x (self, every, i), 1);
            entry_add (&m, row, col_t (i), -1);
        }
    glp_load_matrix (lp, m.count, m.row, m.col, m.val);
    free (m.row);
    free (m.col);
    free (m.val);
}

/*  Solve one program; values gets T(n) for every node (may be NULL).
 *  Returns 0 with the optimum in *objective, or -1 with a message. */
static int
lp_solve (const bound_tree_t *self, int every, double *objective, double *values,
          char *err, size_t errlen)
{
    int rc = 0;
    glp_prob *lp = glp_create_prob ();
    lp_build (self, every, lp);

    /*  TF_LP_DEBUG set: let GLPK talk, on stdout. */
    int debug = getenv ("TF_LP_DEBUG") != NULL;
    glp_smcp parm;
    glp_init_smcp (&parm);
    parm.msg_lev = debug ? GLP_MSG_ALL : GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int term = glp_term_out (debug ? GLP_ON : GLP_OFF);
    int fail = glp_simplex (lp, &parm);
    /*  GLPK 5.0's postsolve can hand back an optimal basis with row
     *  activities off by 1e-5 (seen on random trees); simplex again from
     *  that basis, without the presolver, recomputes them. */
    if (!fail) {
        parm.presolve = GLP_OFF;
        fail = glp_simplex (lp, &parm);
    }
    glp_term_out (term);
    if (fail) {
        rc = tf_error (err, errlen, "GLPK could not solve the %s program (error %d)",
                       every ? "per-subtree" : "whole-tree", fail);
        goto out;
    }
    if (glp_get_status (lp) != GLP_OPT) {
        rc = tf_error (err, errlen, "GLPK found no optimum of the %s program (status %d)",
                       every ? "per-subtree" : "whole-tree", glp_get_status (lp));
        goto out;
    }
    double abs_err, rel_err;
    int abs_at, rel_at;
    glp_check_kkt (lp, GLP_SOL, GLP_KKT_PB, &abs_err, &abs_at, &rel_err, &rel_at);
    if (rel_err > LP_FEASIBILITY_TOL) {
        rc = tf_error (err, errlen,
                       "GLPK's optimum of the %s program breaks a constraint by %.1e "
                       "(relative)", every ? "per-subtree" : "whole-tree", rel_err);
        goto out;
    }
    *objective = glp_get_obj_val (lp);

    for (int i = 0; values && i < self->nnodes; i++)
        values[i] = glp_get_col_prim (lp, col_t (i));
out:
    glp_delete_prob (lp);
    return rc;
}

int
bound_tree_check_lp (bound_tree_t *self, char *err, size_t errlen)
{
    double objective;
    double *values = xcalloc ((size_t) self->nnodes, sizeof *values);
    int rc = lp_solve (self, 0, &objective, values, err, errlen);
    if (rc != 0)
        goto out;
    self->lp_bound = objective;
    for (int i = 0; i < self->nnodes; i++)
        self->nodes[i].lp_t = values[i];
    rc = lp_solve (self, 1, &objective, values, err, errlen);
    if (rc != 0)
        goto out;
    for (int i = 0; i < self->nnodes; i++)
        self->nodes[i].lp_that = values[i];
out:
    free (values);
    return rc;
}

const char *
bound_lp_version (void)
{
    return glp_version ();
}

void
bound_lp_cleanup (void)
{
    glp_free_env ();
}
