/*  root_computes — RootComputes: the root computes every task itself and
 *  serves no child. The baseline every comparison is normalized to: a
 *  policy that does worse has made the tree slower than its root alone.
 *  Its children and everything below them stay idle.
 */
#include "policies/policy.h"

static int
root_computes_pick (const policy_parent_t *parent, const policy_child_t *children,
                    int n)
{
    (void) parent;
    (void) children;
    (void) n;
    return -1;
}

const policy_t policy_root_computes = {
    .name = "root-computes",
    .summary = "RootComputes: the root computes all tasks (baseline)",
    .multiport = 0,
    .root_only = 1,
    .pick = root_computes_pick,
};
