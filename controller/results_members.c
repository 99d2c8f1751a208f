/*  results_members — who was in the run and when: nodes lost, nodes
 *  that joined it and nodes let go (docs/reliability.md, docs/adapt.md
 *  "Grow" and "Shrink"), and the bound a run that grew is judged
 *  against. See controller/results.h.
 */
#include <math.h>
#include <stdlib.h>

#include "controller/results_int.h"
#include "overlay/util.h"

void
results_set_lost (results_t *self, int node, const char *why, double at_s)
{
    node_results_t *n = &self->nodes[node];
    if (n->lost_why)
        return;
    n->lost_why = xstrdup (why);
    n->lost_at = at_s;
    self->nlost++;
}

void
results_set_joined (results_t *self, int node, double at_s)
{
    self->nodes[node].joined_at = at_s;
}

double
results_node_joined (const results_t *self, int node)
{
    return self->nodes[node].joined_at;
}

void
results_set_left (results_t *self, int node, double at_s)
{
    if (self->nodes[node].left_at < 0)
        self->nodes[node].left_at = at_s;
}

void
results_explain_lost (results_t *self, int node, const char *why)
{
    node_results_t *n = &self->nodes[node];
    if (!n->lost_why)
        return;
    free (n->lost_why);
    n->lost_why = xstrdup (why);
}

int
results_node_lost (const results_t *self, int node)
{
    return self->nodes[node].lost_why != NULL;
}

int
results_lost_count (const results_t *self)
{
    return self->nlost;
}

void
results_note_join (results_t *self, json_t *entry)
{
    json_array_append_new (self->joins, entry);
}

void
results_note_move (results_t *self, json_t *entry)
{
    json_array_append_new (self->moves, entry);
}

/*  The bound that was in force at each moment as nodes joined: the
 *  offline bound until the first admitted node, then each admitted
 *  node's bound_after from its at_s. The ideal makespan is when that
 *  piecewise rate has done the tasks this run ran; the bound the run is
 *  judged against is the rate that does them in that time. */
double
results_judged_bound (const results_t *self, double *final)
{
    double b = self->offline[results_policy_model (self->cfg)];
    double tasks = (double) results_ran (self), t = 0, done = 0;
    size_t i;
    json_t *e;
    int grew = 0;
    json_array_foreach (self->joins, i, e) {
        if (!json_is_true (json_object_get (e, "admitted")))
            continue;
        double at = json_real_value (json_object_get (e, "at_s"));
        double after = json_real_value (json_object_get (e, "bound_after"));
        if (!(b > 0) || !(after > 0) || at < t)
            continue;
        if (done + b * (at - t) >= tasks)
            break;
        done += b * (at - t);
        t = at;
        b = after;
        grew = 1;
    }
    if (final)
        *final = b;
    if (!grew || !(b > 0) || tasks <= 0)
        return self->offline[results_policy_model (self->cfg)];
    double ideal = t + (tasks - done) / b;
    return tasks / ideal;
}
