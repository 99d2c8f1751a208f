/*  policy — how a parent chooses which requesting child to serve next.
 *
 *  A policy is pure code: it sees plain structs describing the parent and
 *  its children and returns a decision; it opens no socket and reads no
 *  clock. Every policy is a policy_t registered in the one table in
 *  policy.c, so adding a policy is one file and one line there.
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
} policy_child_t;

/*  What the parent knows of itself. */
typedef struct {
    double compute_rate;     /* C of the parent, units/s */
    double task_mb;          /* Z: one task's input, MB */
    double task_units;       /* w: one task's compute units */
    double send_limit_mbps;  /* total outgoing MB/s, 0 = none */
    int is_root;
} policy_parent_t;

typedef struct {
    const char *name;        /* as written in configs and on the command
                                line, e.g. "fcfs" */
    const char *summary;     /* one line for `treefarm policies` */
    int multiport;           /* may send to several children at once */
    /*  Choose the child to start a transfer to among the n candidates, all
     *  of which have wanted > 0 and sending == 0. Return an index into
     *  children, or -1 to serve nobody now. */
    int (*pick) (const policy_parent_t *parent,
                 const policy_child_t *children, int n);
} policy_t;

/*  Return the policy with this name (case-insensitive), or NULL. */
const policy_t *policy_find (const char *name);

/*  Return the i-th registered policy, or NULL past the end. */
const policy_t *policy_at (int i);

/*  Write the registered names, comma separated, into buf (for messages
 *  such as "unknown policy; known: fcfs, ..."). */
void policy_names (char *buf, int len);

#endif
