/*  policy — the registry of scheduling policies and the model quantities
 *  they share. See policy.h.
 */
#include "policies/policy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

extern const policy_t policy_fcfs;
extern const policy_t policy_comprate;
extern const policy_t policy_bwc;
extern const policy_t policy_ia_single;
extern const policy_t policy_ia_single_opt;
extern const policy_t policy_ia_multi;
extern const policy_t policy_ia_split;
extern const policy_t policy_root_computes;

/*  Every policy, in the order `treefarm policies` lists them: the
 *  published policies as the paper introduces them, the bound's split,
 *  then the baseline. */
static const policy_t *const registry[] = {
    &policy_fcfs,
    &policy_comprate,
    &policy_bwc,
    &policy_ia_single,
    &policy_ia_single_opt,
    &policy_ia_multi,
    &policy_ia_split,
    &policy_root_computes,
};

#define NPOLICIES ((int) (sizeof registry / sizeof registry[0]))

/*  Separators a name may carry or omit: "IA:Single" is "ia-single". */
static int
is_separator (char c)
{
    return c == '-' || c == '_' || c == ':';
}

/*  Return 1 if a and b are the same name up to case and separators. */
static int
same_name (const char *a, const char *b)
{
    for (;;) {
        while (is_separator (*a))
            a++;
        while (is_separator (*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (tolower ((unsigned char) *a) != tolower ((unsigned char) *b))
            return 0;
        a++;
        b++;
    }
}

const policy_t *
policy_find (const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < NPOLICIES; i++)
        if (same_name (registry[i]->name, name))
            return registry[i];
    return NULL;
}

const policy_t *
policy_at (int i)
{
    return i >= 0 && i < NPOLICIES ? registry[i] : NULL;
}

void
policy_names (char *buf, int len)
{
    int used = 0;
    buf[0] = '\0';
    for (int i = 0; i < NPOLICIES && used < len; i++)
        used += snprintf (buf + used, len - used, "%s%s", i ? ", " : "",
                          registry[i]->name);
}

/*  --- the model's quantities --------------------------------------------- */

double
policy_task_rate (const policy_parent_t *parent)
{
    return parent->task_units > 0 ? parent->compute_rate / parent->task_units : 0;
}

/*  IR_s(i) Z C^n: the tasks of computation the parent loses per task it
 *  sends to the child. */
static double
send_cost (const policy_parent_t *parent, const policy_child_t *child)
{
    return child->ir_send * parent->task_mb * policy_task_rate (parent);
}

int
policy_excluded (const policy_parent_t *parent, const policy_child_t *child)
{
    return send_cost (parent, child) >= 1;
}

double
policy_single_opt_priority (const policy_parent_t *parent, const policy_child_t *child)
{
    if (!(parent->task_mb > 0))
        return HUGE_VAL;
    return child->link_mbps / parent->task_mb * (1 - send_cost (parent, child));
}

int
policy_pick_first (const policy_parent_t *parent, const policy_child_t *children,
                   int n, policy_order_fn order, int exclude)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        const policy_child_t *c = &children[i];
        if (c->wanted == 0 || c->sending)
            continue;
        if (exclude && policy_excluded (parent, c))
            continue;
        if (best < 0) {
            best = i;
            continue;
        }
        int cmp = order (parent, c, &children[best]);
        if (cmp > 0 || (cmp == 0 && c->slot < children[best].slot))
            best = i;
    }
    return best;
}

int
policy_pick_chunk (const policy_t *policy, const policy_parent_t *parent,
                   const policy_child_t *children, int n)
{
    int best = n > 0 ? 0 : -1;
    for (int i = 1; i < n; i++) {
        int cmp = policy->order ? policy->order (parent, &children[i], &children[best]) : 0;
        if (cmp > 0 || (cmp == 0 && children[i].slot < children[best].slot))
            best = i;
    }
    return best;
}

double
policy_order_ir (const policy_parent_t *parent, const policy_child_t *child)
{
    if (parent->order_alone && child->ir_send_alone >= 0)
        return child->ir_send_alone;
    return child->ir_send;
}

int
policy_ia_order (const policy_parent_t *parent, const policy_child_t *a,
                 const policy_child_t *b)
{
    double ia = policy_order_ir (parent, a), ib = policy_order_ir (parent, b);
    if (ia != ib)
        return ia < ib ? 1 : -1;
    double pa = policy_single_opt_priority (parent, a);
    double pb = policy_single_opt_priority (parent, b);
    if (pa != pb)
        return pa > pb ? 1 : -1;
    return 0;
}
