/*  test_drive — the node core driven by something other than sockets and
 *  a wall clock: a discrete-event driver that runs a whole experiment's
 *  tree in this one process on a virtual clock, through every registered
 *  policy, and checks that every task is recorded exactly once.
 *
 *  It implements the driver interface of docs/architecture.md ("Drivers"):
 *  build each node's core from the config (node/setup.h); feed it START;
 *  turn each action into an event for the node it is meant for, as
 *  node/route.h says (REQUEST, ACK and DONE go to the parent, SEND_CHUNK
 *  to the child, COMPUTE to the node's own engine); tick each core at its
 *  next deadline; give every event the virtual time it happens at. Here
 *  a message takes LATENCY seconds (or the test's latency), a paced chunk leaves when its pacers
 *  allow (the core's deadline), and an engine takes units / (C x time
 *  scale) per task. The ratio rule (node/fanout.h) is driven here too:
 *  a star behind a shared send limit, through the real IA:Multi, with
 *  and without the rule on the same virtual clock.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/route.h"
#include "node/setup.h"
#include "overlay/util.h"
#include "policies/policy.h"

#define LATENCY 1e-4          /* one way, virtual seconds */
#define MAX_EVENTS 5000000    /* a run that takes more is stuck */

typedef enum { EV_DELIVER, EV_ENGINE, EV_TICK } kind_t;

typedef struct {
    double t;
    uint64_t seq;            /* ties in time keep their order */
    kind_t kind;
    int node;
    core_event_t ev;         /* EV_DELIVER; EV_ENGINE: task */
    core_done_t *done;       /* DONE: owned copy */
    uint32_t avoid[CORE_MAX_AVOID];   /* CHUNK: copy of the action's */
} event_t;

typedef struct {
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
} sim_t;

static int
before (const event_t *a, const event_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
push (sim_t *s, event_t e)
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
pop (sim_t *s)
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
send (sim_t *s, int to, core_event_t ev, const core_done_t *done, uint32_t ndone)
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
child_at (const sim_t *s, int at, int slot)
{
    return s->cfg->nodes[at].children[slot];
}

/*  Node at's engine or command worker starts a task: its completion
 *  (done, from node/route.h) comes back after units / (C x time scale),
 *  a command's with its outputs' bytes, failed where it always fails. */
static void
start_work (sim_t *s, int at, const core_action_t *x, core_event_t done)
{
    const config_node_t *me = &s->cfg->nodes[at];
    double rate = me->compute_rate * s->cfg->platform.time_scale;
    if (x->kind == CORE_KIND_COMMAND) {
        done.bytes = 1000 + x->task;   /* outputs, stdout, stderr */
        done.failed = at == s->bad_node || x->task < s->hopeless;
    }
    push (s, (event_t){.t = s->now + x->units / rate, .kind = EV_ENGINE, .node = at,
                       .ev = done});
}

/*  What the controller hears from the root (every record before
 *  FINISHED), and the node's own retries. */
static void
note_home (sim_t *s, const core_action_t *x)
{
    switch (x->type) {
    case CORE_ACT_RECORDED:
        assert_false (s->finished);   /* every record before FINISHED */
        for (uint32_t d = 0; d < x->ndone; d++) {
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
carry_out (sim_t *s, int at, const core_action_t *a, int n)
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
step (sim_t *s, int at, core_event_t ev)
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

/*  Run cfg to the end; returns the virtual makespan. */
static double
simulate (sim_t *s)
{
    const config_t *cfg = s->cfg;
    for (int i = 0; i < cfg->nnodes; i++)
        step (s, i, (core_event_t){.type = CORE_EV_START});
    long events = 0;
    while (!s->finished) {
        if (s->len == 0)
            fail_msg ("%s: the tree stalled at t=%.3f", cfg->policy, s->now);
        if (++events > MAX_EVENTS)
            fail_msg ("%s: no end after %d events", cfg->policy, MAX_EVENTS);
        event_t e = pop (s);
        s->now = e.t;
        if (e.kind == EV_TICK) {
            if (e.t != s->tick_at[e.node])
                continue;           /* superseded by an earlier one */
            s->tick_at[e.node] = -1;
            step (s, e.node, (core_event_t){.type = CORE_EV_TICK});
        }
        else if (e.kind == EV_ENGINE) {
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

/*  Command tasks' input bundles: a few chunks each, of varying sizes. */
static core_task_info_t
command_info (void *arg, uint64_t task)
{
    (void) arg;
    return (core_task_info_t){.bytes = 3000 + 977 * (task % 7), .units = 0.2};
}

static void
sim_init (sim_t *s, const config_t *cfg)
{
    char err[TF_ERRLEN];
    memset (s, 0, sizeof *s);
    s->cfg = cfg;
    s->bad_node = -1;
    s->latency = LATENCY;
    s->cores = xcalloc (cfg->nnodes, sizeof *s->cores);
    s->slot = xcalloc (cfg->nnodes, sizeof *s->slot);
    s->tick_at = xcalloc (cfg->nnodes, sizeof *s->tick_at);
    s->recorded = xcalloc (config_bag_size (cfg), sizeof *s->recorded);
    s->last = xcalloc (config_bag_size (cfg), sizeof *s->last);
    s->per_node = xcalloc (cfg->nnodes, sizeof *s->per_node);
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
}

static void
sim_free (sim_t *s)
{
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
}

/*  Every task recorded once, by a node whose engine computed it. */
static void
check_exactly_once (const sim_t *s)
{
    const config_t *cfg = s->cfg;
    for (uint64_t t = 0; t < config_bag_size (cfg); t++)
        if (s->recorded[t] != 1)
            fail_msg ("%s: task %llu recorded %u times", cfg->policy,
                      (unsigned long long) t, s->recorded[t]);
    uint64_t total = 0;
    for (int i = 0; i < cfg->nnodes; i++) {
        core_stats_t st = core_stats (s->cores[i]);
        assert_int_equal (st.malformed, 0);
        if (cfg->commands.count == 0)
            assert_int_equal (st.computed, s->per_node[i]);
        total += st.computed;
    }
    assert_int_equal (total, config_bag_size (cfg) + s->retries);
    assert_int_equal (core_stats (s->cores[cfg->root]).duplicates, 0);
}

static config_t *
load (const char *name, uint64_t count)
{
    char err[TF_ERRLEN], path[4096];
    const char *src = getenv ("TF_SRCDIR");
    snprintf (path, sizeof path, "%s/configs/%s", src ? src : ".", name);
    config_t *cfg = config_load_file (path, err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    cfg->tasks.count = count;
    return cfg;
}

/*  The reference fork and a 3-level tree, every registered policy. */
static void
test_every_policy_completes_every_task_once (void **state)
{
    (void) state;
    const char *configs[] = {"fork7.json", "tree3.json"};
    for (int c = 0; c < 2; c++)
        for (int p = 0; policy_at (p); p++) {
            config_t *cfg = load (configs[c], 300);
            const policy_t *policy = policy_at (p);
            config_set_policy (cfg, policy->name);
            sim_t s;
            sim_init (&s, cfg);
            double span = simulate (&s);
            check_exactly_once (&s);
            const core_stats_t root = core_stats (s.cores[cfg->root]);
            if (!policy->pick || policy_find ("root-computes") == policy)
                assert_int_equal (root.computed, 300);
            else
                assert_true (root.forwarded > 0);
            /*  Single-port policies never have two sends holding the port
             *  (a paced transfer delivered may wait for its last ack
             *  while the next one sends); IA:Multi does on the fork,
             *  whose root has six children. */
            if (!policy->multiport)
                assert_true (s.max_port <= 1);
            else if (c == 0)
                assert_true (s.max_sending > 1);
            printf ("  %-10s %-14s makespan %7.2f s (platform, virtual clock), root "
                    "computed %llu\n", configs[c], policy->name,
                    span * cfg->platform.time_scale, (unsigned long long) root.computed);
            sim_free (&s);
            config_destroy (&cfg);
        }
}

/*  Command tasks and synthetic ones in one bag on the 3-level tree, every
 *  policy: one leaf fails every command it runs, the first few commands
 *  fail everywhere. Every task is recorded once; results climb through
 *  the racks; a command that failed on the bad leaf is retried elsewhere
 *  and recorded as a success there; a hopeless one is recorded failed
 *  after its last attempt. */
static void
test_commands_retry_elsewhere_and_record_once (void **state)
{
    (void) state;
    uint64_t bad_failures = 0;
    for (int p = 0; policy_at (p); p++) {
        config_t *cfg = load ("tree3.json", 60);
        config_set_policy (cfg, policy_at (p)->name);
        cfg->commands.count = 120;
        cfg->commands.attempts = 3;
        sim_t s;
        sim_init (&s, cfg);
        s.bad_node = config_find_node (cfg, "rackA");
        s.hopeless = 4;
        simulate (&s);
        check_exactly_once (&s);
        const core_stats_t root = core_stats (s.cores[cfg->root]);
        for (uint64_t t = 0; t < cfg->commands.count; t++) {
            const core_done_t *d = &s.last[t];
            if (t < s.hopeless) {
                assert_true (d->failed);
                assert_int_equal (d->attempts, 3);
            }
            else {
                assert_false (d->failed);
                assert_int_not_equal (d->node, s.bad_node);
                assert_true (d->attempts >= 1 && d->attempts <= 2);
            }
        }
        assert_int_equal (root.failed, s.hopeless);
        assert_int_equal (root.retried, s.retries);
        if (policy_at (p)->pick && policy_find ("root-computes") != policy_at (p)) {
            assert_true (s.results > 0);
            assert_true (core_stats (s.cores[config_find_node (cfg, "rackA")]).results_up > 0
                         || core_stats (s.cores[config_find_node (cfg, "rackB")]).results_up > 0);
        }
        printf ("  %-14s %llu retries (%llu of them from %s), %llu result chunks\n",
                policy_at (p)->name, (unsigned long long) s.retries,
                (unsigned long long) s.bad_failures, "rackA",
                (unsigned long long) s.results);
        bad_failures += s.bad_failures;
        sim_free (&s);
        config_destroy (&cfg);
    }
    assert_true (bad_failures > 0);   /* the bad node's path was taken */
}

/*  Slots: every node runs up to 3 commands at once, never more; synthetic
 *  tasks keep the one engine. Every task is still recorded once. */
static void
test_slots_run_commands_side_by_side (void **state)
{
    (void) state;
    config_t *cfg = load ("tree3.json", 40);
    config_set_policy (cfg, "fcfs");
    cfg->commands.count = 200;
    cfg->commands.attempts = 1;
    for (int i = 0; i < cfg->nnodes; i++)
        cfg->nodes[i].slots = 3;
    sim_t s;
    sim_init (&s, cfg);
    simulate (&s);
    check_exactly_once (&s);
    assert_int_equal (s.max_computing, 3);
    sim_free (&s);
    config_destroy (&cfg);
}

/*  A star of 8 identical children behind a 1.1 MB/s shared send limit
 *  (8.8 Mb/s, a shared segment), tasks of 10 MB; each child computes
 *  0.6 units/s of tasks of 10 units: 0.06 tasks/s, 0.6 MB/s of demand,
 *  so the port feeds k = 2 (0.6, then 1.2 >= 1.1). */
static const char STAR[] =
    "{\"name\": \"star8\", \"tasks\": {\"count\": %d, \"input_mb\": 10, \"units\": 10},"
    " \"policy\": \"ia-multi\", \"platform\": {\"mode\": \"emulated\", \"time_scale\": 1,"
    " \"buffer\": 3, \"adapt\": %s}, \"tree\": ["
    "{\"name\": \"hub\", \"compute\": 0.6, \"send_limit_mbps\": 1.1}%s]}";

static config_t *
star (int tasks, int adapt)
{
    char kids[2048] = "", text[4096], err[TF_ERRLEN];
    for (int i = 0; i < 8; i++)
        snprintf (kids + strlen (kids), sizeof kids - strlen (kids),
                  ", {\"name\": \"c%d\", \"parent\": \"hub\", \"compute\": 0.6,"
                  " \"link_mbps\": 1.1}", i);
    snprintf (text, sizeof text, STAR, tasks, adapt ? "true" : "false", kids);
    config_t *cfg = config_load_string (text, "star8", err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    return cfg;
}

/*  Run the star with or without the rule (0.3 ms latency); the children
 *  the hub served and its k. */
static double
run_star (int adapt, int *served, int *k)
{
    config_t *cfg = star (60, adapt);
    sim_t s;
    sim_init (&s, cfg);
    s.latency = 3e-4;
    assert_string_equal (cfg->policy, "ia-multi");   /* the registered policy */
    double span = simulate (&s);
    check_exactly_once (&s);
    *served = 0;
    for (int c = 0; c < 8; c++)
        *served += core_child_stats (s.cores[cfg->root], c).tasks_sent > 0;
    *k = core_fanout (s.cores[cfg->root]);
    printf ("  star8 %-9s k %2d, children served %d, makespan %.1f s (virtual clock)\n",
            adapt ? "the rule" : "no rule", *k, *served, span);
    sim_free (&s);
    config_destroy (&cfg);
    return span;
}

/*  With the rule the hub keeps busy at most k children (one more woken
 *  when the kept ones are satisfied), and finishes no later than without
 *  it; every task is recorded once either way. Without it, the same star
 *  spreads its tasks over more children than the port can feed. */
static void
test_the_ratio_rule_keeps_busy_what_the_port_feeds (void **state)
{
    (void) state;
    int served_rule, served_all, k_rule, k_all;
    double rule = run_star (1, &served_rule, &k_rule);
    double all = run_star (0, &served_all, &k_all);
    assert_int_equal (k_all, -1);   /* not adapting: the rule is off */
    assert_int_equal (k_rule, 2);
    assert_true (served_rule <= k_rule + 1);
    assert_true (served_all > k_rule + 1);
    assert_true (rule <= all);
}

/*  The reference fork, adapting, through IA:Multi: the rule keeps 5 of
 *  its 6 children (SB0, last in the IA order, is the spare: the model's
 *  bound leaves it unused too), and a kept child on a slow link (Tenn,
 *  0.2 MB/s) does not hold the port while its link carries a task:
 *  the makespan is no worse than without the rule. */
static double
run_fork (int adapt, int *k)
{
    config_t *cfg = load ("fork7.json", 1000);
    config_set_policy (cfg, "ia-multi");
    cfg->platform.adapt = adapt;
    sim_t s;
    sim_init (&s, cfg);
    double span = simulate (&s) * cfg->platform.time_scale;
    check_exactly_once (&s);
    *k = core_fanout (s.cores[cfg->root]);
    printf ("  fork7 %-9s k %2d, makespan %.2f s (platform, virtual clock)\n",
            adapt ? "the rule" : "no rule", *k, span);
    sim_free (&s);
    config_destroy (&cfg);
    return span;
}

static void
test_the_ratio_rule_costs_the_fork_nothing (void **state)
{
    (void) state;
    int k_rule, k_all;
    double rule = run_fork (1, &k_rule), all = run_fork (0, &k_all);
    assert_int_equal (k_rule, 5);
    assert_true (rule <= all);
}

/*  k follows the core's beliefs: a child's rate, its subtree bound, its
 *  IR_s (the order), the hub's own rate (the never-use rule), a lost
 *  child. */
static void
test_the_ratio_rule_follows_the_beliefs (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    config_t *cfg = star (10, 1);
    core_t *hub = setup_core (cfg, cfg->root, NULL, err, sizeof err);
    assert_non_null (hub);
    assert_int_equal (core_fanout (hub), 2);
    /*  c0 computes 1.2 units/s: 1.2 MB/s alone fills the port. */
    core_set_child_rates (hub, 0, &(core_rates_t){1.2, NAN, NAN, NAN, NAN});
    assert_int_equal (core_fanout (hub), 1);
    /*  Its SUBTREE says 0.03 tasks/s: 0.3, 0.9, 1.5 -> 3. */
    core_set_child_bound (hub, 0, 0.03);
    assert_int_equal (core_fanout (hub), 3);
    /*  IR_s 1.0 on c0..c6 (IR_s Z C^n = 1.0 x 10 x 0.06 = 0.6 < 1: still
     *  served) puts c7 first in the IA order, and c7's subtree says 0.12
     *  tasks/s: 1.2 MB/s alone fills the port. */
    for (int c = 0; c < 7; c++)
        core_set_child_ir (hub, c, 1.0);
    core_set_child_bound (hub, 7, 0.12);
    assert_int_equal (core_fanout (hub), 1);
    core_set_child_bound (hub, 7, 0.06);   /* c7 0.6, c0 0.9, c1 1.5 */
    assert_int_equal (core_fanout (hub), 3);
    /*  The hub computes twice as fast: 1.0 x 10 x 0.12 = 1.2 >= 1, c0..c6
     *  are never used (the never-use rule), and c7 alone (0.6 MB/s) does
     *  not fill the port: k counts it alone. */
    core_set_compute_rate (hub, 1.2);
    assert_int_equal (core_fanout (hub), 1);
    for (int c = 0; c < 7; c++)
        core_set_child_ir (hub, c, 0);   /* back: c0 0.3, c1 0.9, c2 1.5 */
    assert_int_equal (core_fanout (hub), 3);
    /*  c0 lost: c1 and c2 fill the port (0.6, 1.2). */
    core_event_t lost = {.type = CORE_EV_LOST, .child = 0};
    assert_int_equal (core_handle (hub, &lost, err, sizeof err), 0);
    assert_int_equal (core_fanout (hub), 2);
    core_destroy (&hub);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_every_policy_completes_every_task_once),
        cmocka_unit_test (test_commands_retry_elsewhere_and_record_once),
        cmocka_unit_test (test_slots_run_commands_side_by_side),
        cmocka_unit_test (test_the_ratio_rule_keeps_busy_what_the_port_feeds),
        cmocka_unit_test (test_the_ratio_rule_costs_the_fork_nothing),
        cmocka_unit_test (test_the_ratio_rule_follows_the_beliefs),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
