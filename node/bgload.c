/*  bgload — one node's emulated background load; see bgload.h.
 *
 *  Processor sharing without per-job bookkeeping: every active job gets
 *  the same rate, so the service a job present all along would have
 *  received (`v`, the virtual time) says how far each has come. A job
 *  arriving at virtual time v with demand d is done when v reaches
 *  v + d: the jobs are a min-heap of those finish times, and the next
 *  end is when v reaches the smallest. Between events every rate is
 *  constant, so the integrals are sums of rate x interval, and an end's
 *  virtual time is set exactly rather than integrated.
 */
#include "node/bgload.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "overlay/util.h"

/*  The jobs' heap starts this big and doubles up to BGLOAD_MAX_JOBS. */
#define BGLOAD_HEAP_START 16
/*  Jobs whose finish is within this fraction of v of it end together: the
 *  rounding of v's sums, far above 2.2e-16, far below any demand. */
#define BGLOAD_V_TOL 1e-12
/*  Generator index of contender k: after every job stream's. */
#define BGLOAD_CONTENDER_BASE 64
/*  Weyl increment mixing a source's index into the seed. */
#define BGLOAD_GOLDEN 0x9e3779b97f4a7c15ULL

enum { CONT_IDLE = 0, CONT_COMPUTE, CONT_COMM };

typedef struct {
    dist_t arrival, demand;
    dist_rng_t rng;
    double next;              /* platform time of the next arrival */
} stream_t;

typedef struct {
    double compute, comm;     /* the state's probabilities */
    dist_t period;
    dist_rng_t rng;
    int state;
    double until;             /* platform time the period ends */
} contender_t;

struct bgload {
    const load_t *load;       /* steps and trace, borrowed */
    double ir_recv, link_mbps;
    double now;
    stream_t *streams;
    int nstreams;
    double *heap;             /* active jobs' finish virtual times */
    int njobs, cap;
    double v;                 /* service of a job active all along */
    uint64_t refused;
    contender_t *cont;
    int ncont;
    int computing, comm;
    int step, row;            /* the next step and trace row to apply */
    double level_step, level_row;
    double busy, fg;          /* the integrals */
};


/*  --------------------------------------------------------------------
 *  Jobs: a binary min-heap of finish virtual times */

static void
heap_push (bgload_t *self, double finish)
{
    if (self->njobs == self->cap) {
        self->cap = self->cap ? self->cap * 2 : BGLOAD_HEAP_START;
        if (self->cap > BGLOAD_MAX_JOBS)
            self->cap = BGLOAD_MAX_JOBS;
        self->heap = xrealloc (self->heap, (size_t) self->cap * sizeof *self->heap);
    }
    int k = self->njobs++;
    while (k > 0 && self->heap[(k - 1) / 2] > finish) {
        self->heap[k] = self->heap[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    self->heap[k] = finish;
}

static void
heap_pop (bgload_t *self)
{
    double last = self->heap[--self->njobs];
    int n = self->njobs, k = 0;
    for (;;) {
        int c = 2 * k + 1;
        if (c >= n)
            break;
        if (c + 1 < n && self->heap[c + 1] < self->heap[c])
            c++;
        if (self->heap[c] >= last)
            break;
        self->heap[k] = self->heap[c];
        k = c;
    }
    if (n > 0)
        self->heap[k] = last;
}

/*  Admit a job of demand d now, or count it refused. */
static int
admit (bgload_t *self, double d)
{
    if (self->njobs >= BGLOAD_MAX_JOBS) {
        self->refused++;
        return -1;
    }
    heap_push (self, self->v + d);
    return 0;
}


/*  --------------------------------------------------------------------
 *  Rates: constant between events */

/*  The CPU the communicating contenders leave. */
static double
cpu_left (const bgload_t *self)
{
    int j = self->comm;
    double c = 1 - self->ir_recv * self->link_mbps * j / (j + 1.0);
    return c > 0 ? c : 0;
}

static double
job_rate (const bgload_t *self, int fg)
{
    int s = self->njobs + self->computing + (fg != 0);
    return self->njobs > 0 ? cpu_left (self) / s : 0;
}

static double
busy_share (const bgload_t *self, int fg)
{
    double c = cpu_left (self);
    int bg = self->njobs + self->computing;
    int s = bg + (fg != 0);
    return s > 0 ? 1 - c + c * bg / s : 1 - c;
}

double
bgload_factor (const bgload_t *self)
{
    double f = cpu_left (self) / (self->njobs + self->computing + 1);
    return f / (self->level_step * self->level_row);
}

/*  Credit dt seconds at the rates in force; v too unless set exactly. */
static void
integrate (bgload_t *self, double dt, int fg, int credit_v)
{
    if (credit_v)
        self->v += job_rate (self, fg) * dt;
    self->busy += busy_share (self, fg) * dt;
    if (fg)
        self->fg += bgload_factor (self) * dt;
}


/*  --------------------------------------------------------------------
 *  Events */

static void
contender_draw (contender_t *c)
{
    double u = dist_rng_uniform (&c->rng);
    c->state = u < c->compute ? CONT_COMPUTE
             : u < c->compute + c->comm ? CONT_COMM : CONT_IDLE;
    c->until += dist_draw (&c->period, &c->rng);
}

/*  Apply every step and trace row due at or before now. */
static void
levels_due (bgload_t *self)
{
    const load_t *l = self->load;
    if (!l)
        return;
    while (self->step < l->nsteps && l->steps[self->step].at_s <= self->now)
        self->level_step = l->steps[self->step++].load;
    while (self->row < l->ntrace && l->trace[self->row].at_s <= self->now)
        self->level_row = l->trace[self->row++].load;
}

/*  Switch the contenders whose period ended; recount them. */
static void
contenders_due (bgload_t *self)
{
    self->computing = self->comm = 0;
    for (int k = 0; k < self->ncont; k++) {
        contender_t *c = &self->cont[k];
        while (c->until <= self->now)
            contender_draw (c);
        self->computing += c->state == CONT_COMPUTE;
        self->comm += c->state == CONT_COMM;
    }
}

/*  Everything due now: switches, levels, arrivals, then the jobs served
 *  in full (a job of demand 0 arrives and leaves at once). */
static void
events_due (bgload_t *self)
{
    contenders_due (self);
    levels_due (self);
    for (int k = 0; k < self->nstreams; k++) {
        stream_t *s = &self->streams[k];
        while (s->next <= self->now) {
            admit (self, dist_draw (&s->demand, &s->rng));
            s->next += dist_draw (&s->arrival, &s->rng);
        }
    }
    double tol = BGLOAD_V_TOL * fmax (1, fabs (self->v));
    while (self->njobs > 0 && self->heap[0] <= self->v + tol)
        heap_pop (self);
}

/*  The next event other than a job's end and an arrival. */
static double
next_switch (const bgload_t *self)
{
    double t = INFINITY;
    for (int k = 0; k < self->ncont; k++)
        t = fmin (t, self->cont[k].until);
    const load_t *l = self->load;
    if (l && self->step < l->nsteps)
        t = fmin (t, l->steps[self->step].at_s);
    if (l && self->row < l->ntrace)
        t = fmin (t, l->trace[self->row].at_s);
    return t;
}

/*  The next event other than a job's end. */
static double
next_other (const bgload_t *self)
{
    double t = next_switch (self);
    for (int k = 0; k < self->nstreams; k++)
        t = fmin (t, self->streams[k].next);
    return t;
}

/*  The next job's end if the foreground stays fg. */
static double
next_end (const bgload_t *self, int fg)
{
    double rate = job_rate (self, fg);
    if (self->njobs == 0 || !(rate > 0))
        return INFINITY;
    double left = self->heap[0] - self->v;
    return self->now + (left > 0 ? left / rate : 0);
}

double
bgload_next (const bgload_t *self, int fg_busy)
{
    assert (self);
    return fmax (self->now, fmin (next_other (self), next_end (self, fg_busy)));
}

void
bgload_advance (bgload_t *self, double t, int fg_busy)
{
    assert (self);
    for (;;) {
        double other = next_other (self), end = next_end (self, fg_busy);
        double at = fmax (self->now, fmin (other, end));
        if (at > t)
            break;
        integrate (self, at - self->now, fg_busy, end > other);
        if (end <= other)
            self->v = fmax (self->v, self->heap[0]);
        self->now = at;
        events_due (self);
    }
    if (t > self->now) {
        integrate (self, t - self->now, fg_busy, 1);
        self->now = t;
    }
}


/*  A copy of self, to run ahead: its own jobs, streams and contenders. */
static bgload_t
copy_of (const bgload_t *self)
{
    bgload_t c = *self;
    c.cap = self->njobs;
    c.heap = self->njobs ? xmalloc ((size_t) self->njobs * sizeof *c.heap) : NULL;
    if (self->njobs)
        memcpy (c.heap, self->heap, (size_t) self->njobs * sizeof *c.heap);
    c.streams = xmalloc (((size_t) self->nstreams + 1) * sizeof *c.streams);
    memcpy (c.streams, self->streams, (size_t) self->nstreams * sizeof *c.streams);
    c.cont = xmalloc (((size_t) self->ncont + 1) * sizeof *c.cont);
    memcpy (c.cont, self->cont, (size_t) self->ncont * sizeof *c.cont);
    return c;
}

double
bgload_finish (const bgload_t *self, double work)
{
    assert (self);
    bgload_t c = copy_of (self);
    double left = work, t = c.now;
    for (int k = 0; k < BGLOAD_FINISH_MAX_EVENTS; k++, t = c.now) {
        double f = bgload_factor (&c), at = bgload_next (&c, 1);
        if (!(left > 0) || (f > 0 && c.now + left / f <= at)) {
            t = left > 0 ? c.now + left / f : c.now;
            break;
        }
        if (!isfinite (at)) {   /* no factor, nothing ahead: never */
            t = INFINITY;
            break;
        }
        double before = c.fg;
        bgload_advance (&c, at, 1);
        left -= c.fg - before;
    }
    free (c.heap);
    free (c.streams);
    free (c.cont);
    return t;
}


/*  --------------------------------------------------------------------
 *  Construction */

/*  FNV-1a of the name, mixed into the seed; source k's generator. */
static void
seed_source (dist_rng_t *rng, uint64_t base, int k)
{
    dist_rng_seed (rng, base + BGLOAD_GOLDEN * (uint64_t) (k + 1));
}

static uint64_t
seed_base (const load_t *load, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = name ? name : ""; *p; p++)
        h = (h ^ (unsigned char) *p) * 0x100000001b3ULL;
    return load->seed ^ h;
}

static int
streams_init (bgload_t *self, const load_t *l, uint64_t base, char *err, size_t errlen)
{
    self->nstreams = l->nstreams;
    self->streams = xcalloc ((size_t) l->nstreams + 1, sizeof *self->streams);
    for (int k = 0; k < l->nstreams; k++) {
        const load_stream_t *ls = &l->streams[k];
        stream_t *s = &self->streams[k];
        seed_source (&s->rng, base, k);
        s->next = INFINITY;
        if (!(ls->utilization > 0))
            continue;
        if (dist_init (&s->demand, ls->demand_kind, ls->demand_mean_s, ls->demand_cv,
                       err, errlen)
            || dist_init (&s->arrival, ls->arrival_kind,
                          ls->demand_mean_s / ls->utilization, ls->arrival_cv, err, errlen))
            return -1;
        s->next = dist_draw (&s->arrival, &s->rng);
    }
    return 0;
}

static int
contenders_init (bgload_t *self, const load_t *l, uint64_t base, char *err,
                 size_t errlen)
{
    self->ncont = l->ncontenders;
    self->cont = xcalloc ((size_t) l->ncontenders + 1, sizeof *self->cont);
    for (int k = 0; k < l->ncontenders; k++) {
        contender_t *c = &self->cont[k];
        c->compute = l->contenders[k].compute;
        c->comm = l->contenders[k].comm;
        seed_source (&c->rng, base, BGLOAD_CONTENDER_BASE + k);
        if (dist_init (&c->period, DIST_EXP, l->contenders[k].period_s, 1, err, errlen))
            return -1;
        contender_draw (c);
    }
    return 0;
}

/*  jobs_and_levels 0: the contenders only (the job streams, the steps and
 *  the trace left out). */
static bgload_t *
make (const load_t *load, const char *name, double ir_recv, double link_mbps,
      int jobs_and_levels, char *err, size_t errlen)
{
    assert (load);
    bgload_t *self = xcalloc (1, sizeof *self);
    self->load = jobs_and_levels ? load : NULL;
    self->ir_recv = ir_recv;
    self->link_mbps = link_mbps;
    self->level_step = self->level_row = 1;
    uint64_t base = seed_base (load, name);
    load_t none = {.seed = load->seed};
    int rc = streams_init (self, jobs_and_levels ? load : &none, base, err, errlen);
    if (rc == 0)
        rc = contenders_init (self, load, base, err, errlen);
    if (rc != 0)
        bgload_destroy (&self);
    else
        events_due (self);
    return self;
}

bgload_t *
bgload_new (const load_t *load, const char *name, double ir_recv, double link_mbps,
            char *err, size_t errlen)
{
    return make (load, name, ir_recv, link_mbps, 1, err, errlen);
}

bgload_t *
bgload_new_contenders (const load_t *load, const char *name, char *err, size_t errlen)
{
    return make (load, name, 0, 0, 0, err, errlen);
}

void
bgload_destroy (bgload_t **self_p)
{
    assert (self_p);
    bgload_t *self = *self_p;
    if (!self)
        return;
    free (self->streams);
    free (self->heap);
    free (self->cont);
    free (self);
    *self_p = NULL;
}


/*  --------------------------------------------------------------------
 *  Queries */

double
bgload_now (const bgload_t *self)
{
    return self->now;
}

double
bgload_busy_integral (const bgload_t *self)
{
    return self->busy;
}

double
bgload_fg_integral (const bgload_t *self)
{
    return self->fg;
}

int
bgload_jobs (const bgload_t *self)
{
    return self->njobs;
}

int
bgload_computing (const bgload_t *self)
{
    return self->computing;
}

int
bgload_comm (const bgload_t *self)
{
    return self->comm;
}

uint64_t
bgload_refused (const bgload_t *self)
{
    return self->refused;
}

int
bgload_add_job (bgload_t *self, double demand)
{
    assert (self);
    if (!(demand >= 0) || !isfinite (demand))
        return -1;
    return admit (self, demand);
}
