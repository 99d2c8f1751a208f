/*  bound — the steady-state throughput upper bound of a tree (docs/model.md).
 *
 *  Three models: multi-port interference-aware ("multi"), single-port
 *  interference-aware ("single") and the classic bandwidth-centric bound
 *  with no interference ("bwc"). Each is computed bottom-up: a node's
 *  subtree bound That(n) follows from its own parameters and its
 *  children's That(i) alone, by one step (bound_step). A node of a running
 *  tree can therefore compute its own bound once its children have sent
 *  theirs; bound_tree_new does the whole tree at once, then walks it
 *  top-down to say what every node computes in a schedule that reaches the
 *  root's bound. bound_tree_check_lp solves the same model as one linear
 *  program with GLPK, to check the greedy. docs/bounds.md has the model,
 *  the formulas with their units and why the step is exact.
 *
 *  Units: throughputs in tasks/s. C^n = compute rate / w, B_r^n = link
 *  MB/s / Z, B_s^n = send limit MB/s / Z, where Z is a task's input in MB
 *  (2^20 bytes) and w its compute units. With Z = 0 tasks carry no data:
 *  links limit nothing and communication causes no interference. This
 *  header does not include glpk.h; only bound_lp.c does.
 */
#ifndef TF_BOUND_H
#define TF_BOUND_H

#include <stddef.h>

#include "overlay/config.h"

/*  Relative difference above which the greedy and the LP disagree. */
#define BOUND_LP_TOL 1e-6

typedef enum {
    BOUND_MULTI = 0,         /* multi-port, interference-aware */
    BOUND_SINGLE,            /* single-port, interference-aware */
    BOUND_BWC,               /* single-port, no interference (classic) */
    BOUND_MODEL_COUNT
} bound_model_t;

/*  "multi", "single", "bwc"; "?" for a bad value. */
const char *bound_model_str (bound_model_t model);

/*  A one-line description, e.g. "multi-port, interference-aware". */
const char *bound_model_title (bound_model_t model);

/*  Set *model from its name (as bound_model_str gives it). Returns 0, or
 *  -1 if the name is unknown (*model is then unchanged). */
int bound_model_parse (const char *name, bound_model_t *model);

/*  A child's part in its parent's allocation. */
typedef enum {
    BOUND_ROLE_ROOT = 0,     /* the root: nobody's child */
    BOUND_ROLE_SATURATED,    /* gets its whole subtree bound */
    BOUND_ROLE_PARTIAL,      /* gets some of it */
    BOUND_ROLE_UNUSED,       /* gets nothing */
    BOUND_ROLE_COUNT
} bound_role_t;

/*  "root", "saturated", "partial", "unused". */
const char *bound_role_str (bound_role_t role);

/*  What stops a node from taking more from its children: the reason a
 *  child is partial or unused, and a step's limit. */
typedef enum {
    BOUND_WHY_NONE = 0,      /* nothing: every usable child is saturated */
    BOUND_WHY_INTERFERENCE,  /* IR_s(i) Z C^n >= 1: sending to the child
                                costs the parent more than it brings */
    BOUND_WHY_OUT_BW,        /* outgoing bandwidth exhausted: B_s^n
                                (multi), the one port's time (single, bwc) */
    BOUND_WHY_IN_BW,         /* incoming bandwidth exhausted: T(n) = B_r^n */
    BOUND_WHY_CPU,           /* CPU exhausted by interference: S(n) = 0 */
    BOUND_WHY_OUT_BW_CPU,    /* both of the last but one */
    BOUND_WHY_SHARE,         /* the node gets only a partial share from its
                                own parent, and needs no more */
    BOUND_WHY_IDLE,          /* the node itself is unused */
    BOUND_WHY_COUNT
} bound_why_t;

/*  A short phrase, e.g. "outgoing bandwidth exhausted"; "" for NONE. */
const char *bound_why_str (bound_why_t why);

/*  An application type: what one task is. */
typedef struct {
    double input_mb;         /* Z, MB of input per task, >= 0 */
    double units;            /* w, compute units per task, > 0 */
    int loaded;              /* 1: price each node's compute rate under its
                                background load, times its long-run
                                prediction (load_predict_long_run); 0: as
                                configured, a dedicated machine */
} bound_app_t;

/*  The application a config describes: its synthetic tasks, or for a run
 *  of command tasks alone, their mean input bundle and one unit a task
 *  (their compute time is known only once they ran: docs/bounds.md,
 *  "Command runs"). */
bound_app_t bound_app_of (const config_t *cfg);

/*  One node's own parameters, in tasks/s. */
typedef struct {
    double compute;          /* C^n: tasks/s with no communication, > 0 */
    double recv_max;         /* B_r^n: tasks/s from the parent; INFINITY on
                                the root and when Z = 0 */
    double send_max;         /* B_s^n: tasks/s to all children together
                                (multi-port only); INFINITY if unlimited */
    double recv_loss;        /* IR_r^n x Z: fraction of n's compute lost per
                                task/s received; 0 on the root */
} bound_node_t;

/*  What a node knows of one child when it takes its step. */
typedef struct {
    double that;             /* That(i): the child's subtree bound, tasks/s,
                                >= 0 (0 for a child that has none yet) */
    double recv_max;         /* B_r^i: tasks/s the link to it carries;
                                INFINITY when Z = 0 */
    double send_loss;        /* IR_s(i) x Z: fraction of the parent's
                                compute lost per task/s sent to the child */
} bound_child_t;

/*  One child's part of its parent's step. */
typedef struct {
    double x;                /* tasks/s the parent sends it, 0..that */
    double load;             /* IR_s(i) Z C^n in the model (0 in bwc) */
    bound_role_t role;       /* saturated, partial or unused */
    bound_why_t why;         /* for partial and unused: the reason */
} bound_share_t;

/*  The result of a step. */
typedef struct {
    double t;                /* T(n), tasks/s through n */
    double s;                /* S(n), tasks/s computed at n, >= 0 */
    double sent;             /* tasks/s sent to the children, = t - s */
    bound_why_t limit;       /* what stops T(n) from growing */
} bound_step_t;

/*  Node index's compute rate, units/s, as app prices it: configured, or
 *  under its background load (app->loaded). */
double bound_compute_rate (const config_t *cfg, int index, const bound_app_t *app);

/*  Fill self with node index's parameters in the config, for app. */
void bound_node_init (bound_node_t *self, const config_t *cfg, int index,
                      const bound_app_t *app);

/*  Fill self with what node index's parent knows of it, for app, with
 *  That(index) = that. */
void bound_child_init (bound_child_t *self, const config_t *cfg, int index,
                       const bound_app_t *app, double that);

/*  Take node self's step in model: the most it can do, T(n), given its
 *  children's subtree bounds, and how it splits that between its own
 *  compute and its children. target caps T(n) further (INFINITY for the
 *  subtree bound itself; a smaller value for the share a node actually
 *  gets from its parent). Children with IR_s Z C^n >= 1 are never used in
 *  the interference-aware models. The split is optimal for the model (see
 *  docs/bounds.md): the children are served in priority order (multi: IR_s
 *  ascending; single: B_r^i (1 - IR_s Z C^n) descending; bwc: B_r^i
 *  descending) until the first of B_r^n, target, the outgoing bandwidth
 *  and the CPU runs out; in the single-port model, when the CPU runs out
 *  first, the priority is re-weighted by the CPU's price. Writes the
 *  result to *step and one share per child to shares (nchildren entries;
 *  may be NULL when nchildren is 0). Cannot fail. */
void bound_step (const bound_node_t *self, bound_model_t model,
                 const bound_child_t *children, int nchildren, double target,
                 bound_step_t *step, bound_share_t *shares);

/*  A whole tree's bound. */
typedef struct {
    const config_node_t *config;  /* the node, borrowed from the config */
    bound_node_t node;       /* its parameters in tasks/s */
    double send_loss;        /* IR_s x Z of its parent sending to it */
    double load;             /* IR_s Z C^parent in the model; 0 on the root
                                and in bwc */
    double that;             /* That(n): the subtree's bound, tasks/s */
    bound_why_t that_limit;  /* what limits That(n) */
    /*  A schedule reaching That(root): */
    double t;                /* tasks/s through n (its parent sends it) */
    double s;                /* tasks/s n computes */
    double share;            /* s / That(root) */
    bound_role_t role;       /* n in its parent's allocation */
    bound_why_t why;         /* why n is partial or unused */
    bound_why_t limit;       /* what stops n from taking more */
    double lp_that;          /* the LP's That(n); NAN unless checked */
    double lp_t;             /* the LP's T(n) in its optimum of T(root):
                                what its parent sends it there; NAN
                                unless checked */
} bound_entry_t;

typedef struct {
    const config_t *cfg;     /* borrowed; must outlive the tree */
    bound_model_t model;
    bound_app_t app;
    int nnodes;
    bound_entry_t *nodes;    /* by config index */
    int *order;              /* node indices, depth first from the root,
                                children in tree[] order */
    double bound;            /* That(root), tasks/s */
    double lp_bound;         /* the LP's max T(root); NAN unless checked */
} bound_tree_t;

/*  Compute cfg's bound in model for app: every node's That bottom-up,
 *  then a schedule reaching That(root) top-down. The tree borrows cfg.
 *  Returns a new tree the caller destroys, or NULL with a message in err
 *  if app is invalid (Z < 0, w <= 0, or either not finite). */
bound_tree_t *bound_tree_new (const config_t *cfg, bound_model_t model,
                              const bound_app_t *app, char *err, size_t errlen);

/*  Destroy a tree and null the caller's pointer. Safe on NULL. */
void bound_tree_destroy (bound_tree_t **self_p);

/*  How a greedy figure compares with the LP's: equal within BOUND_LP_TOL
 *  (relative), below it (the greedy misses some throughput), or above it
 *  (the greedy claims what no schedule reaches: a bug). */
typedef enum {
    BOUND_LP_EQUAL = 0,
    BOUND_LP_BELOW,
    BOUND_LP_ABOVE,
} bound_lp_cmp_t;

/*  "equal", "greedy below LP", "greedy above LP". */
const char *bound_lp_cmp_str (bound_lp_cmp_t cmp);

/*  Compare a greedy figure with the LP's. */
bound_lp_cmp_t bound_lp_compare (double greedy, double lp);

/*  Solve self's model as linear programs over the whole tree with GLPK
 *  (quietly): one maximising T(root), as docs/model.md states it, into
 *  self->lp_bound and each entry's lp_t; one maximising every node's subtree throughput at
 *  once, into each entry's lp_that. Returns 0, or -1 with a message in
 *  err if GLPK fails or finds no optimum. */
int bound_tree_check_lp (bound_tree_t *self, char *err, size_t errlen);

/*  The worst comparison between self's greedy figures and its LP
 *  figures (ABOVE over BELOW over EQUAL), over the root's bound and
 *  every node's That; *max_rel, if not NULL, gets the largest relative
 *  difference. Call after bound_tree_check_lp. */
bound_lp_cmp_t bound_tree_lp_verdict (const bound_tree_t *self, double *max_rel);

/*  The GLPK version, e.g. "5.0". Borrowed. */
const char *bound_lp_version (void);

/*  Free what GLPK keeps for the process. Call once, at exit, when no LP
 *  is being solved; only for leak checkers. */
void bound_lp_cleanup (void);

#endif
