/*  policy — how a parent chooses which requesting child to serve next.
 *
 *  A policy is pure code: it sees plain structs describing the parent and
 *  its children and returns a decision; it opens no socket and reads no
 *  clock. Every policy is a policy_t registered in the one table in
 *  policy.c, so adding a policy is one file and one line there.
 *
 *  Units follow docs/config.md: MB, MB/s, compute units/s; the model's
 *  rates in tasks/s are derived here (C^n = compute_rate / task_units,
 *  B_r^i = link_mbps / Z). docs/policies.md gives each policy's rule,
 *  formula, tie-breaks and its service order on the reference fork.
 */
#ifndef TF_POLICY_H
#define TF_POLICY_H

#include <stdint.h>

/*  What the parent knows of one child when it decides. */
typedef struct {
    int slot;                /* the child's position among the parent's
                                children, 0..n-1 */
    double compute_rate;     /* C of the child, units/s */
    double link_mbps;        /* MB/s from the parent while both compute */
    double link_idle_mbps;   /* MB/s from the parent when idle */
    double ir_send;          /* IR_s at the parent of sending to it */
    double ir_recv;          /* IR_r at the child of receiving */
    uint32_t wanted;         /* tasks it asked for and has not been sent */
    uint64_t oldest_request; /* arrival order of its oldest unserved ask;
                                smaller is older */
    int sending;             /* a transfer to it is in flight */
    double that;             /* its subtree's bound, tasks/s, multi-port
                                (its SUBTREE, or the config's); <= 0 or
                                NaN: unknown, the split takes it as a leaf */
    double split;            /* tasks/s the parent's planned split gives
                                it (policy_t.split; 0 without one) */
    double ir_send_alone;    /* ir_send while only the parent computes
                                (Table 4 line 7 of docs/model.md); NaN:
                                unknown. Only the IA order reads it, and
                                only under policy_parent_t.order_alone */
} policy_child_t;

/*  What the parent knows of itself. */
typedef struct {
    double compute_rate;     /* C of the parent, units/s */
    double task_mb;          /* Z: one task's input, MB */
    double task_units;       /* w: one task's compute units */
    double send_limit_mbps;  /* total outgoing MB/s, 0 = none */
    int is_root;
    double ir_recv;          /* IR_r of the parent receiving from its own
                                parent (0 on the root) */
    double target;           /* tasks/s the parent itself gets in the
                                tree's plan (the bound's schedule):
                                INFINITY on the root and when unknown */
    int order_alone;         /* the IA order ranks by ir_send_alone where
                                a child has it (platform "ia_order":
                                "alone"); 0: by ir_send */
} policy_parent_t;

/*  A policy's order: return > 0 if child a should be served before child
 *  b, < 0 if after, 0 if the policy sees them as equal. */
typedef int (*policy_order_fn) (const policy_parent_t *parent,
                                const policy_child_t *a, const policy_child_t *b);

typedef struct {
    const char *name;        /* as written in configs and on the command
                                line, e.g. "fcfs" */
    const char *summary;     /* one line for `treefarm policies` */
    int multiport;           /* may send to several children at once */
    int root_only;           /* never serves a child: the root computes
                                every task (a failed command is then tried
                                again on the root itself) */
    /*  Choose the child to start a transfer to among the n candidates, all
     *  of which have wanted > 0 and sending == 0. Return an index into
     *  children, or -1 to serve nobody now. */
    int (*pick) (const policy_parent_t *parent,
                 const policy_child_t *children, int n);
    /*  The policy's ranking of children, the one pick serves by: it also
     *  decides which transfer in flight sends the next chunk (see
     *  policy_pick_chunk). NULL for a policy that ranks nobody. */
    policy_order_fn order;
    /*  The planned split of the parent's send port (ia-split; NULL for a
     *  policy that does not plan): write x[i], the tasks/s child i gets
     *  in steady state, for the n children, from the parent's facts
     *  (target caps what the parent itself gets) and theirs (that, their
     *  subtree bounds), and return the tasks/s the parent computes, the
     *  rest. The core paces each child's transfers at x[i] Z (0: the
     *  child is not served) and calls it again whenever what it rests on
     *  changes. */
    double (*split) (const policy_parent_t *parent, const policy_child_t *children, int n,
                     double *x);
} policy_t;

/*  Return the policy with this name, or NULL (also for a NULL name).
 *  Names match ignoring case and the separators '-', '_' and ':', so the
 *  published spellings ("IA:Single", "IA:Single-opt", "IA:Multi",
 *  "CompRate", "RootComputes", "BWC", "FCFS") find the registered ones
 *  ("ia-single", ..., "root-computes"). */
const policy_t *policy_find (const char *name);

/*  Return the i-th registered policy, or NULL past the end. */
const policy_t *policy_at (int i);

/*  Write the registered names, comma separated, into buf (for messages
 *  such as "unknown policy; known: fcfs, ..."). */
void policy_names (char *buf, int len);

/*  --- the model's quantities, shared by the policies --------------------- */

/*  Return C^n, the tasks per second the parent computes while it does not
 *  communicate: compute_rate / task_units, or 0 if task_units is not
 *  positive. */
double policy_task_rate (const policy_parent_t *parent);

/*  Return 1 if the interference-aware policies must never send to child,
 *  else 0. The rule (docs/model.md) is IR_s(i) Z C^n >= 1: sending one
 *  task's Z MB to the child at any rate costs the parent IR_s Z C^n tasks
 *  of its own computation, so from 1 up the send loses at least the task
 *  it moves and serving the child cannot raise throughput. IA:Single,
 *  IA:Single-opt and IA:Multi all apply it through this function. */
int policy_excluded (const policy_parent_t *parent, const policy_child_t *child);

/*  Return the single-port priority of child, B_r^i (1 - IR_s(i) Z C^n) in
 *  tasks/s, where B_r^i = link_mbps / Z is the tasks/s the parent can move
 *  to it while both compute: the throughput a single port gains per second
 *  spent sending to it, net of the parent's lost computation. Larger is
 *  better; it is <= 0 exactly for an excluded child. With Z = 0 a task
 *  moves no data, B_r is unbounded and the result is HUGE_VAL. */
double policy_single_opt_priority (const policy_parent_t *parent,
                                   const policy_child_t *child);

/*  The IR_s the IA order ranks child by: its ir_send_alone when the
 *  parent orders by those (order_alone) and it has one, else ir_send.
 *  The never-use rule, the priorities and the bound keep ir_send, the
 *  cost of a send while both compute (docs/policies.md, "The IA
 *  order"). */
double policy_order_ir (const policy_parent_t *parent, const policy_child_t *child);

/*  The IA order shared by IA:Single, IA:Multi and IA:Split: lower IR_s
 *  (policy_order_ir) first; on a tie the larger Single-opt priority (the
 *  faster link), then 0 (the slot decides). Returns 1 if a goes before
 *  b, -1 if after, 0 if tied. */
int policy_ia_order (const policy_parent_t *parent, const policy_child_t *a,
                     const policy_child_t *b);

/*  The body of most picks: return the index of the candidate that order
 *  puts first, equal ones going to the lower slot, or -1 if none is
 *  eligible. A candidate with wanted == 0 or a transfer in flight is never
 *  eligible (the core does not offer such children; a direct caller might);
 *  with exclude set, neither is a child policy_excluded refuses. */
int policy_pick_first (const policy_parent_t *parent,
                       const policy_child_t *children, int n,
                       policy_order_fn order, int exclude);

/*  The multi-port bound's split of the parent's port (overlay/bound.h
 *  bound_step in the multi model, with T(n) capped at parent->target):
 *  x[i] tasks/s to child i, 0 for the children it leaves unused; returns
 *  what the parent computes itself, S(n). A child whose that is unknown
 *  counts as a leaf: min(B_r^i, C^i / (1 + IR_r(i) Z C^i)). */
double policy_bound_split (const policy_parent_t *parent, const policy_child_t *children,
                           int n, double *x);

/*  Choose which of the n transfers in flight (children with sending set)
 *  sends the next chunk: the one policy's order puts first, equal ones and
 *  a policy with no order going to the lower slot. A transfer is never
 *  refused here, not even to a child policy_excluded would now refuse
 *  (its IR_s estimate may have changed since it began): a started task
 *  finishes. Returns an index into children, or -1 if n <= 0. This is
 *  what makes multi-port sends interruptible: the core asks before every
 *  chunk, so a better child's transfer overtakes a worse one's. */
int policy_pick_chunk (const policy_t *policy, const policy_parent_t *parent,
                       const policy_child_t *children, int n);

#endif
