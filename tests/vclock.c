/*  vclock — the unit tests' discrete-event driver on a virtual clock
 *  (tests/vclock.h): an event queue ordered by virtual time, each event
 *  fed to its node's core and the core's actions turned into events
 *  where node/route.h says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/emulate.h"
#include "node/route.h"
#include "node/setup.h"
#include "overlay/util.h"
#include "tests/vclock.h"

typedef enum { EV_DELIVER, EV_ENGINE, EV_TICK, EV_SAMPLE } kind_t;

typedef struct {
    double t;
    uint64_t seq;            /* ties in time keep their order */
    kind_t kind;
    int node;
    core_event_t ev;         /* EV_DELIVER; EV_ENGINE: task */
    core_done_t *done;       /* DONE: owned copy */
    uint64_t gen;            /* EV_ENGINE, EV_SAMPLE of an engine under
                                interference (engine set): the schedule
                                it belongs to */
    int engine;
    uint32_t avoid[CORE_MAX_AVOID];   /* CHUNK: copy of the action's */
} event_t;

/*  A node's synthetic engine under emulated interference: the work left
 *  (virtual seconds at full speed) runs at the speed the node's own
 *  transfers leave it (node/emulate.h), sampled every VCLOCK_SAMPLE_S. */
typedef struct {
    emul_t *emul;
    int busy;
    double work, speed, last;
    uint64_t gen;            /* bumped at every new schedule */
    core_event_t done;       /* its COMPUTED, when the work is done */
} engine_t;

struct vclock {
    const config_t *cfg;
    core_t **cores;
    int *slot;               /* node -> its slot at its parent */
    double *tick_at;         /* node -> its pending tick, -1 if none */
    event_t *heap;
    int len, cap;
    uint64_t seq;
    uint32_t *recorded;      /* task -> times RECORDED */
    core_done_t *last;       /* task -> its RECORDED entry */
    uint64_t *per_node;      /* node -> tasks RECORDED as computed there */
    int bad_node;            /* commands always fail there (-1: none) */
    uint64_t hopeless;       /* commands below this id fail everywhere */
    uint64_t retries, results;   /* RETRY actions, RESULT events */
    uint64_t bad_failures;   /* RETRY actions of commands failed at bad_node */
    int finished, max_sending, max_port;   /* transfers in flight, holding
                                               the port (paced: until
                                               delivered), at most */
    int max_computing;       /* the most tasks one node computed at once */
    double latency;          /* one way, virtual seconds */
    double now;
    engine_t *eng;           /* node -> its engine; NULL: no interference */
    double *rec_at;          /* when the k-th first record came */
    uint64_t nrec;
};

static int
before (const event_t *a, const event_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
push (vclock_t *s, event_t e)
{
    if (s->len == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->heap = xrealloc (s->heap, s->cap * sizeof *s->heap);
    }
    e.seq = s->seq++;
    int i = s->len++;
    while (i > 0 && before (&e, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
}

static event_t
pop (vclock_t *s)
{
    event_t top = s->heap[0], last = s->heap[--s->len];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= s->len)
            break;
        if (c + 1 < s->len && before (&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!before (&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    s->heap[i] = last;
    return top;
}

/*  An event for node `to`, the latency from now. */
static void
send (vclock_t *s, int to, core_event_t ev, const core_done_t *done, uint32_t ndone)
{
    event_t e = {.t = s->now + s->latency, .kind = EV_DELIVER, .node = to, .ev = ev};
    if (ev.navoid)
        memcpy (e.avoid, ev.avoid, ev.navoid * sizeof *ev.avoid);
    if (ndone) {
        e.done = xmalloc (ndone * sizeof *done);
        memcpy (e.done, done, ndone * sizeof *done);
    }
    push (s, e);
}

/*  Node `at` child in `slot`. */
static int
child_at (const vclock_t *s, int at, int slot)
{
    return s->cfg->nodes[at].children[slot];
}

/*  Node at's engine speed from its transfers' metered rates now; a busy
 *  engine's work done so far is counted and its completion scheduled
 *  again at the new speed (an older schedule is ignored when it comes). */
static void
resample (vclock_t *s, int at)
{
    engine_t *e = &s->eng[at];
    core_t *core = s->cores[at];
    int n = s->cfg->nodes[at].nchildren;
    double send[n + 1];
    for (int i = 0; i < n; i++)
        send[i] = core_send_rate (core, i, s->now);
    if (e->busy)
        e->work -= (s->now - e->last) * e->speed;
    e->last = s->now;
    e->speed = emul_update (e->emul, s->now, e->busy, core_recv_rate (core, s->now), send);
    if (e->speed < VCLOCK_MIN_SPEED)
        e->speed = VCLOCK_MIN_SPEED;
    if (!e->busy)
        return;
    e->gen++;
    double left = e->work > 0 ? e->work / e->speed : 0;
    push (s, (event_t){.t = s->now + left, .kind = EV_ENGINE, .node = at, .ev = e->done,
                       .gen = e->gen, .engine = 1});
    push (s, (event_t){.t = s->now + VCLOCK_SAMPLE_S, .kind = EV_SAMPLE, .node = at,
                       .gen = e->gen});
}

/*  Node at's engine or command worker starts a task: its completion
 *  (done, from node/route.h) comes back after units / (C x time scale),
 *  a command's with its outputs' bytes, failed where it always fails. */
static void
start_work (vclock_t *s, int at, const core_action_t *x, core_event_t done)
{
    const config_node_t *me = &s->cfg->nodes[at];
    double rate = me->compute_rate * s->cfg->platform.time_scale;
    if (x->kind == CORE_KIND_COMMAND) {
        done.bytes = 1000 + x->task;   /* outputs, stdout, stderr */
        done.failed = at == s->bad_node || x->task < s->hopeless;
    }
    if (s->eng && x->kind == CORE_KIND_SYNTHETIC) {
        engine_t *e = &s->eng[at];
        *e = (engine_t){.emul = e->emul, .busy = 1, .work = x->units / rate,
                        .last = s->now, .gen = e->gen, .done = done};
        resample (s, at);
        return;
    }
    push (s, (event_t){.t = s->now + x->units / rate, .kind = EV_ENGINE, .node = at,
                       .ev = done});
}

/*  What the controller hears from the root (every record before
 *  FINISHED), and the node's own retries. */
static void
note_home (vclock_t *s, const core_action_t *x)
{
    switch (x->type) {
    case CORE_ACT_RECORDED:
        assert_false (s->finished);   /* every record before FINISHED */
        for (uint32_t d = 0; d < x->ndone; d++) {
            if (s->recorded[x->done[d].task] == 0)
                s->rec_at[s->nrec++] = s->now;
            s->recorded[x->done[d].task]++;
            s->last[x->done[d].task] = x->done[d];
            s->per_node[x->done[d].node]++;
        }
        break;
    case CORE_ACT_FINISHED:
        s->finished = 1;
        break;
    case CORE_ACT_RETRY:
        s->retries++;
        s->bad_failures += (int) x->node == s->bad_node;
        break;
    default:
        break;
    }
}

/*  Carry out node at's actions, each where node/route.h says: the
 *  driver's whole job. */
static void
carry_out (vclock_t *s, int at, const core_action_t *a, int n)
{
    for (int i = 0; i < n; i++) {
        route_t r;
        assert_int_equal (route_action (&a[i], s->slot[at], &r), 0);
        if (r.to == ROUTE_PARENT) {
            s->results += r.ev.type == CORE_EV_RESULT;
            send (s, s->cfg->nodes[at].parent, r.ev, r.ev.done, r.ev.ndone);
        }
        else if (r.to == ROUTE_CHILD)
            send (s, child_at (s, at, r.child), r.ev, NULL, 0);
        else if (r.to == ROUTE_WORKER)
            start_work (s, at, &a[i], r.ev);
        else
            note_home (s, &a[i]);
    }
}

/*  Feed node at one event now, carry out what it says, and make sure it
 *  is ticked at its next deadline. */
static void
step (vclock_t *s, int at, core_event_t ev)
{
    char err[TF_ERRLEN];
    ev.now = s->now;
    if (core_handle (s->cores[at], &ev, err, sizeof err) != 0)
        fail_msg ("node %s refused %s at t=%.6f: %s", s->cfg->nodes[at].name,
                  core_event_str (ev.type), s->now, err);
    int n;
    const core_action_t *a = core_actions (s->cores[at], &n);
    carry_out (s, at, a, n);
    if (core_sending (s->cores[at]) > s->max_sending)
        s->max_sending = core_sending (s->cores[at]);
    if (core_port_busy (s->cores[at], s->now) > s->max_port)
        s->max_port = core_port_busy (s->cores[at], s->now);
    if (core_stats (s->cores[at]).computing > s->max_computing)
        s->max_computing = core_stats (s->cores[at]).computing;
    double due = core_next_deadline (s->cores[at], s->now);
    if (due >= 0 && (s->tick_at[at] < 0 || s->now + due < s->tick_at[at])) {
        s->tick_at[at] = s->now + due;
        push (s, (event_t){.t = s->now + due, .kind = EV_TICK, .node = at});
    }
}

/*  Command tasks' input bundles: a few chunks each, of varying sizes. */
static core_task_info_t
command_info (void *arg, uint64_t task)
{
    (void) arg;
    return (core_task_info_t){.bytes = 3000 + 977 * (task % 7), .units = 0.2};
}

vclock_opts_t
vclock_opts_default (void)
{
    return (vclock_opts_t){.latency = VCLOCK_LATENCY, .bad_node = -1};
}

/*  Every node's engine under interference: its IR_r and its children's
 *  IR_s, as the emulation applies them (node/emulate.h). */
static void
new_engines (vclock_t *s)
{
    const config_t *cfg = s->cfg;
    s->eng = xcalloc (cfg->nnodes, sizeof *s->eng);
    for (int i = 0; i < cfg->nnodes; i++) {
        const config_node_t *me = &cfg->nodes[i];
        double ir_send[me->nchildren + 1];
        for (int k = 0; k < me->nchildren; k++)
            ir_send[k] = cfg->nodes[me->children[k]].ir_send;
        s->eng[i].emul = emul_new (me->nchildren, me->parent < 0 ? 0 : me->ir_recv, ir_send,
                                   setup_bps_per_mbps (cfg), 1);
        s->eng[i].speed = 1;
    }
}

vclock_t *
vclock_new (const config_t *cfg, const vclock_opts_t *o)
{
    char err[TF_ERRLEN];
    vclock_t *s = xcalloc (1, sizeof *s);
    vclock_opts_t given = o ? *o : vclock_opts_default ();
    s->cfg = cfg;
    s->bad_node = given.bad_node;
    s->hopeless = given.hopeless;
    s->latency = given.latency;
    s->cores = xcalloc (cfg->nnodes, sizeof *s->cores);
    s->slot = xcalloc (cfg->nnodes, sizeof *s->slot);
    s->tick_at = xcalloc (cfg->nnodes, sizeof *s->tick_at);
    s->recorded = xcalloc (config_bag_size (cfg), sizeof *s->recorded);
    s->last = xcalloc (config_bag_size (cfg), sizeof *s->last);
    s->per_node = xcalloc (cfg->nnodes, sizeof *s->per_node);
    s->rec_at = xcalloc (config_bag_size (cfg) + 1, sizeof *s->rec_at);
    if (given.interference)
        new_engines (s);
    setup_bag_t bag = {command_info, NULL};
    setup_opts_t opts = setup_opts_default ();
    opts.bag = &bag;
    for (int i = 0; i < cfg->nnodes; i++) {
        s->cores[i] = setup_core (cfg, i, &opts, err, sizeof err);
        if (!s->cores[i])
            fail_msg ("%s", err);
        s->tick_at[i] = -1;
        const config_node_t *node = &cfg->nodes[i];
        for (int k = 0; k < node->nchildren; k++)
            s->slot[node->children[k]] = k;
    }
    return s;
}

void
vclock_destroy (vclock_t **self_p)
{
    vclock_t *s = *self_p;
    if (!s)
        return;
    for (int i = 0; i < s->cfg->nnodes; i++)
        core_destroy (&s->cores[i]);
    while (s->len)
        free (pop (s).done);
    free (s->heap);
    free (s->cores);
    free (s->slot);
    free (s->tick_at);
    free (s->recorded);
    free (s->last);
    free (s->per_node);
    free (s->rec_at);
    for (int i = 0; s->eng && i < s->cfg->nnodes; i++)
        emul_destroy (&s->eng[i].emul);
    free (s->eng);
    free (s);
    *self_p = NULL;
}

double
vclock_run (vclock_t *s)
{
    const config_t *cfg = s->cfg;
    for (int i = 0; i < cfg->nnodes; i++)
        step (s, i, (core_event_t){.type = CORE_EV_START});
    long events = 0;
    while (!s->finished) {
        if (s->len == 0)
            fail_msg ("%s: the tree stalled at t=%.3f", cfg->policy, s->now);
        if (++events > VCLOCK_MAX_EVENTS)
            fail_msg ("%s: no end after %d events", cfg->policy, VCLOCK_MAX_EVENTS);
        event_t e = pop (s);
        s->now = e.t;
        if (e.kind == EV_TICK) {
            if (e.t != s->tick_at[e.node])
                continue;           /* superseded by an earlier one */
            s->tick_at[e.node] = -1;
            step (s, e.node, (core_event_t){.type = CORE_EV_TICK});
        }
        else if (e.kind == EV_SAMPLE) {
            if (e.gen == s->eng[e.node].gen && s->eng[e.node].busy)
                resample (s, e.node);
        }
        else if (e.kind == EV_ENGINE) {
            if (e.engine && e.gen != s->eng[e.node].gen)
                continue;           /* rescheduled at another speed */
            if (e.engine)
                s->eng[e.node].busy = 0;
            e.ev.type = CORE_EV_COMPUTED;
            step (s, e.node, e.ev);
        }
        else {
            e.ev.done = e.done;
            e.ev.avoid = e.avoid;
            step (s, e.node, e.ev);
            free (e.done);
        }
    }
    return s->now;
}

/*  Every task recorded once, by a node whose engine computed it. */
void
vclock_check_exactly_once (const vclock_t *s)
{
    const config_t *cfg = s->cfg;
    for (uint64_t t = 0; t < config_bag_size (cfg); t++)
        if (s->recorded[t] != 1)
            fail_msg ("%s: task %llu recorded %u times", cfg->policy,
                      (unsigned long long) t, s->recorded[t]);
    /*  A task computed twice (an end-game copy that lost, its completion
     *  dropped where the copies met: wasted) is recorded once; the losing
     *  copies still under way when the run finished (at most one per
     *  copy) are computed nowhere or dropped nowhere yet. */
    uint64_t total = 0, wasted = 0, copies = 0;
    for (int i = 0; i < cfg->nnodes; i++) {
        core_stats_t st = core_stats (s->cores[i]);
        assert_int_equal (st.malformed, 0);
        if (cfg->commands.count == 0)
            assert_true (s->per_node[i] <= st.computed);
        total += st.computed;
        wasted += st.wasted;
        copies += st.copies;
    }
    uint64_t once = config_bag_size (cfg) + s->retries;
    if (total < once + wasted || total > once + wasted + copies)
        fail_msg ("%s: %llu computations for %llu tasks and retries, %llu wasted, "
                  "%llu copies", cfg->policy, (unsigned long long) total,
                  (unsigned long long) once, (unsigned long long) wasted,
                  (unsigned long long) copies);
    assert_int_equal (core_stats (s->cores[cfg->root]).duplicates, 0);
}

vclock_counts_t
vclock_counts (const vclock_t *s)
{
    return (vclock_counts_t){.retries = s->retries, .results = s->results,
                             .bad_failures = s->bad_failures,
                             .max_sending = s->max_sending, .max_port = s->max_port,
                             .max_computing = s->max_computing};
}

core_t *
vclock_core (const vclock_t *s, int node)
{
    return s->cores[node];
}

const core_done_t *
vclock_last (const vclock_t *s, uint64_t task)
{
    return &s->last[task];
}

uint64_t
vclock_recorded_from (const vclock_t *s, int node)
{
    return s->per_node[node];
}

double
vclock_tail (const vclock_t *s, double fraction)
{
    if (s->nrec == 0)
        return 0;
    uint64_t from = (uint64_t) ((double) s->nrec * (1 - fraction));
    if (from >= s->nrec)
        from = s->nrec - 1;
    return s->rec_at[s->nrec - 1] - s->rec_at[from];
}
