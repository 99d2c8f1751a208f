/*  load — a node's background load: the writer, and what a
 *  description says over time: its kinds, its levels, the rate it
 *  predicts. The reader is load_read.c. See load.h and docs/load.md.
 *
 *  The formulas of the prediction are slowdown.c's, called here, not
 *  written again.
 */
#include "overlay/load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

static json_t *
stream_to_json (const load_stream_t *st)
{
    return json_pack ("{s:f, s:{s:s, s:f, s:f}, s:{s:s, s:f}}",
                      "utilization", st->utilization,
                      "demand", "dist", dist_kind_str (st->demand_kind),
                      "mean_s", st->demand_mean_s, "cv", st->demand_cv,
                      "arrivals", "dist", dist_kind_str (st->arrival_kind),
                      "cv", st->arrival_cv);
}

/*  The first stream at the top, the others as classes: what the reader
 *  reads back in the same order, within its limits. */
static json_t *
jobs_to_json (const load_t *self)
{
    json_t *jobs = stream_to_json (&self->streams[0]);
    if (self->nstreams == 1)
        return jobs;
    json_t *classes = json_array ();
    for (int k = 1; k < self->nstreams; k++)
        json_array_append_new (classes, stream_to_json (&self->streams[k]));
    json_object_set_new (jobs, "classes", classes);
    return jobs;
}

static json_t *
contenders_to_json (const load_t *self)
{
    json_t *array = json_array ();
    for (int k = 0; k < self->ncontenders; k++) {
        const load_contender_t *c = &self->contenders[k];
        json_t *item = json_pack ("{s:f, s:f, s:f}", "compute", c->compute, "comm",
                                  c->comm, "period_s", c->period_s);
        if (c->msg_bytes)
            json_object_set_new (item, "msg_bytes", json_integer (c->msg_bytes));
        json_array_append_new (array, item);
    }
    return array;
}

/*  steps as [{at_s, load}], or trace rows as [[time_s, load]]. */
static json_t *
points_to_json (const load_point_t *p, int n, int as_rows)
{
    json_t *array = json_array ();
    for (int k = 0; k < n; k++)
        json_array_append_new (array, as_rows ? json_pack ("[f, f]", p[k].at_s, p[k].load)
                                              : json_pack ("{s:f, s:f}", "at_s", p[k].at_s,
                                                           "load", p[k].load));
    return array;
}

json_t *
load_to_json (const load_t *self)
{
    json_t *json = json_object ();
    if (self->nstreams)
        json_object_set_new (json, "jobs", jobs_to_json (self));
    if (self->ncontenders)
        json_object_set_new (json, "contenders", contenders_to_json (self));
    if (self->delay_comm) {
        json_t *delays = json_array ();
        for (int k = 0; k < self->ncontenders; k++)
            json_array_append_new (delays, json_real (self->delay_comm[k]));
        json_object_set_new (json, "delay_comm", delays);
    }
    if (self->nsteps)
        json_object_set_new (json, "steps", points_to_json (self->steps, self->nsteps, 0));
    if (self->trace_path) {
        json_object_set_new (json, "trace", json_string (self->trace_path));
        json_object_set_new (json, "trace_rows",
                             points_to_json (self->trace, self->ntrace, 1));
    }
    json_object_set_new (json, "seed", json_integer ((json_int_t) self->seed));
    return json;
}

void
load_destroy (load_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    load_t *self = *self_p;
    free (self->streams);
    free (self->contenders);
    free (self->delay_comm);
    free (self->steps);
    free (self->trace);
    free (self->trace_path);
    free (self);
    *self_p = NULL;
}

const char *
load_kind_str (const load_t *self)
{
    /*  Indexed by the kinds present: jobs 1, contenders 2, steps 4, trace 8. */
    static const char *const names[16] = {
        "none", "jobs", "contenders", "jobs+contenders", "steps", "jobs+steps",
        "contenders+steps", "jobs+contenders+steps", "trace", "jobs+trace",
        "contenders+trace", "jobs+contenders+trace", "steps+trace", "jobs+steps+trace",
        "contenders+steps+trace", "jobs+contenders+steps+trace",
    };
    if (!self)
        return names[0];
    return names[(self->nstreams > 0) | (self->ncontenders > 0) << 1
                 | (self->nsteps > 0) << 2 | (self->ntrace > 0) << 3];
}

/* ------------------------------------------------------------------------
 *  The prediction.
 */

double
load_utilization (const load_t *self)
{
    double u = 0;
    for (int k = 0; self && k < self->nstreams; k++)
        u += self->streams[k].utilization;
    return u;
}

/*  The load L of n points at t: 1 before the first, then the last point
 *  at or before t (a binary search: traces are long). */
static double
level_of (const load_point_t *p, int n, double t)
{
    if (n == 0 || !(t >= p[0].at_s))
        return 1;
    int lo = 0, hi = n - 1;   /* p[lo].at_s <= t */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (p[mid].at_s <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return p[lo].load;
}

double
load_level_at (const load_t *self, double t)
{
    if (!self)
        return 1;
    return level_of (self->steps, self->nsteps, t) * level_of (self->trace, self->ntrace, t);
}

/*  The time of n points' first point after t, INFINITY when none. */
static double
next_of (const load_point_t *p, int n, double t)
{
    int lo = 0, hi = n;   /* the first point after t is in [lo, hi] */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p[mid].at_s <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n ? p[lo].at_s : INFINITY;
}

double
load_next_point (const load_t *self, double t)
{
    if (!self)
        return INFINITY;
    return fmin (next_of (self->steps, self->nsteps, t),
                 next_of (self->trace, self->ntrace, t));
}

void
load_delay_comm (const load_t *self, double ir_recv, double link_mbps, double *out)
{
    for (int i = 1; self && i <= self->ncontenders; i++) {
        double cost = ir_recv * link_mbps * i / (i + 1);
        if (self->delay_comm)
            out[i - 1] = self->delay_comm[i - 1];
        else
            out[i - 1] = cost < 1 ? 1 / (1 - cost) - 1 : 0;
    }
}

/*  1 - U of the job streams (slowdown_jobs), 1 without any. */
static double
jobs_factor (const load_t *self)
{
    double lambda[LOAD_MAX_CLASSES + 1], demand[LOAD_MAX_CLASSES + 1], u, factor;
    char err[TF_ERRLEN];
    int n = self->nstreams < LOAD_MAX_CLASSES + 1 ? self->nstreams : LOAD_MAX_CLASSES + 1;
    if (n == 0)
        return 1;
    for (int k = 0; k < n; k++) {
        demand[k] = self->streams[k].demand_mean_s;
        lambda[k] = self->streams[k].utilization / demand[k];
    }
    /*  The reader keeps U at most LOAD_MAX_UTILIZATION: this cannot fail. */
    if (slowdown_jobs (lambda, demand, n, &u, &factor, err, sizeof err) != 0)
        return 1 - LOAD_MAX_UTILIZATION;
    return factor;
}

/*  1 / slowdown of the contenders (slowdown_contenders), 1 without any. */
static double
contenders_factor (const load_t *self, double ir_recv, double link_mbps)
{
    double compute[LOAD_MAX_CONTENDERS], comm[LOAD_MAX_CONTENDERS];
    double delay[LOAD_MAX_CONTENDERS], slowdown;
    char err[TF_ERRLEN];
    int p = self->ncontenders < LOAD_MAX_CONTENDERS ? self->ncontenders
                                                    : LOAD_MAX_CONTENDERS;
    if (p == 0)
        return 1;
    for (int k = 0; k < p; k++) {
        compute[k] = self->contenders[k].compute;
        comm[k] = self->contenders[k].comm;
    }
    load_delay_comm (self, ir_recv, link_mbps, delay);
    /*  The reader checked every fraction and delay: this cannot fail. */
    if (slowdown_contenders (compute, comm, p, delay, &slowdown, err, sizeof err) != 0)
        return 1;
    return 1 / slowdown;
}

double
load_predict (const load_t *self, double t, double ir_recv, double link_mbps)
{
    if (!self)
        return 1;
    return jobs_factor (self) * contenders_factor (self, ir_recv, link_mbps)
         / load_level_at (self, t);
}

double
load_predict_long_run (const load_t *self, double ir_recv, double link_mbps)
{
    return load_predict (self, INFINITY, ir_recv, link_mbps);
}
