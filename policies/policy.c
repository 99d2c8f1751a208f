/*  policy — the registry of scheduling policies. See policy.h. */
#include "policies/policy.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

extern const policy_t policy_fcfs;

/*  Every policy, in the order `treefarm policies` lists them. */
static const policy_t *const registry[] = {
    &policy_fcfs,
};

#define NPOLICIES ((int) (sizeof registry / sizeof registry[0]))

const policy_t *
policy_find (const char *name)
{
    for (int i = 0; i < NPOLICIES; i++)
        if (strcasecmp (registry[i]->name, name) == 0)
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
