/*  fanout — the ratio rule. See node/fanout.h. */
#include "node/fanout.h"

#include <math.h>

double
fanout_demand (double rate, double task_mb)
{
    if (!(rate > 0) || !(task_mb > 0) || !isfinite (task_mb))
        return 0;
    return rate * task_mb;
}

int
fanout_count (double send_limit_mbps, double task_mb, const fanout_child_t *children,
              int n)
{
    int usable = 0, k = -1;
    double sum = 0;
    int limited = send_limit_mbps > 0 && isfinite (send_limit_mbps);
    for (int i = 0; i < n; i++) {
        if (children[i].excluded)
            continue;
        usable++;
        sum += fanout_demand (children[i].rate, task_mb);
        if (k < 0 && limited && sum >= send_limit_mbps * (1 - FANOUT_EPS))
            k = usable;
    }
    return k < 0 ? usable : k;
}
