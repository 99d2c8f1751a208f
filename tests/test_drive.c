/*  test_drive — the node core driven by something other than sockets and
 *  a wall clock: each test runs a whole experiment's tree in this one
 *  process on a virtual clock (tests/vclock.h, a driver of the interface
 *  of docs/architecture.md, "Drivers"), through every registered policy,
 *  and checks that every task is recorded exactly once; command tasks
 *  fail on a bad node and are retried elsewhere; slots run commands side
 *  by side. A message takes VCLOCK_LATENCY seconds (or the test's
 *  latency). The ratio rule (node/fanout.h) is driven here too: a star
 *  behind a shared send limit and the reference fork, through the real
 *  IA:Multi, with and without the rule on the same virtual clock; and k
 *  as the core's beliefs change. ia-split races IA:Multi on the reference
 *  fork's (10 MB, 3 units), interference emulated.
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

#include "node/setup.h"
#include "overlay/util.h"
#include "policies/policy.h"
#include "tests/helpers.h"
#include "tests/vclock.h"

static config_t *
load (const char *name, uint64_t count)
{
    config_t *cfg = test_config_load (name);
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
            vclock_t *s = vclock_new (cfg, NULL);
            double span = vclock_run (s);
            vclock_check_exactly_once (s);
            const core_stats_t root = core_stats (vclock_core (s, cfg->root));
            const vclock_counts_t n = vclock_counts (s);
            if (!policy->pick || policy_find ("root-computes") == policy)
                assert_int_equal (root.computed, 300);
            else
                assert_true (root.forwarded > 0);
            /*  Single-port policies never have two sends holding the port
             *  (a paced transfer delivered may wait for its last ack
             *  while the next one sends); IA:Multi does on the fork,
             *  whose root has six children. */
            if (!policy->multiport)
                assert_true (n.max_port <= 1);
            else if (c == 0)
                assert_true (n.max_sending > 1);
            printf ("  %-10s %-14s makespan %7.2f s (platform, virtual clock), root "
                    "computed %llu\n", configs[c], policy->name,
                    span * cfg->platform.time_scale, (unsigned long long) root.computed);
            vclock_destroy (&s);
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
        vclock_opts_t opts = vclock_opts_default ();
        opts.bad_node = config_find_node (cfg, "rackA");
        opts.hopeless = 4;
        vclock_t *s = vclock_new (cfg, &opts);
        vclock_run (s);
        vclock_check_exactly_once (s);
        const core_stats_t root = core_stats (vclock_core (s, cfg->root));
        const vclock_counts_t n = vclock_counts (s);
        for (uint64_t t = 0; t < cfg->commands.count; t++) {
            const core_done_t *d = vclock_last (s, t);
            if (t < opts.hopeless) {
                assert_true (d->failed);
                assert_int_equal (d->attempts, 3);
            }
            else {
                assert_false (d->failed);
                assert_int_not_equal (d->node, opts.bad_node);
                assert_true (d->attempts >= 1 && d->attempts <= 2);
            }
        }
        assert_int_equal (root.failed, opts.hopeless);
        assert_int_equal (root.retried, n.retries);
        if (policy_at (p)->pick && policy_find ("root-computes") != policy_at (p)) {
            core_t *rack_a = vclock_core (s, config_find_node (cfg, "rackA"));
            core_t *rack_b = vclock_core (s, config_find_node (cfg, "rackB"));
            assert_true (n.results > 0);
            assert_true (core_stats (rack_a).results_up > 0
                         || core_stats (rack_b).results_up > 0);
        }
        printf ("  %-14s %llu retries (%llu of them from %s), %llu result chunks\n",
                policy_at (p)->name, (unsigned long long) n.retries,
                (unsigned long long) n.bad_failures, "rackA",
                (unsigned long long) n.results);
        bad_failures += n.bad_failures;
        vclock_destroy (&s);
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
    vclock_t *s = vclock_new (cfg, NULL);
    vclock_run (s);
    vclock_check_exactly_once (s);
    assert_int_equal (vclock_counts (s).max_computing, 3);
    vclock_destroy (&s);
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
    /*  The rule alone: near the end, the end-game would rightly hand the
     *  last tasks to idle children beyond k. */
    cfg->platform.endgame = 0;
    vclock_opts_t opts = vclock_opts_default ();
    opts.latency = 3e-4;
    vclock_t *s = vclock_new (cfg, &opts);
    assert_string_equal (cfg->policy, "ia-multi");   /* the registered policy */
    double span = vclock_run (s);
    vclock_check_exactly_once (s);
    *served = 0;
    for (int c = 0; c < 8; c++)
        *served += core_child_stats (vclock_core (s, cfg->root), c).tasks_sent > 0;
    *k = core_fanout (vclock_core (s, cfg->root));
    printf ("  star8 %-9s k %2d, children served %d, makespan %.1f s (virtual clock)\n",
            adapt ? "the rule" : "no rule", *k, *served, span);
    vclock_destroy (&s);
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

/*  The reference fork, adapting, through IA:Multi: the rule keeps the
 *  children first in the IA order until their demand fills the port,
 *  and a kept child on a slow link (Tenn, 0.2 MB/s) does not hold the
 *  port while its link carries a task: the makespan is no worse than
 *  without the rule. Ranking by the alone rates (the default) Lab4, Lab5
 *  and Lab3 (9.5 MB/s of demand alone) fill the 10.7 MB/s: k = 3.
 *  Ranking by the both-compute rates Lab4, Lab5, Lab6, Tenn and Lab3:
 *  k = 5, SB0 the spare, as the model's bound leaves it unused too. */
static double
run_fork (int adapt, int both, int *k)
{
    config_t *cfg = load ("fork7.json", 1000);
    config_set_policy (cfg, "ia-multi");
    cfg->platform.adapt = adapt;
    cfg->platform.ia_order_both = both;
    vclock_t *s = vclock_new (cfg, NULL);
    double span = vclock_run (s) * cfg->platform.time_scale;
    vclock_check_exactly_once (s);
    *k = core_fanout (vclock_core (s, cfg->root));
    printf ("  fork7 %-9s %-5s k %2d, makespan %.2f s (platform, virtual clock)\n",
            adapt ? "the rule" : "no rule", both ? "both" : "alone", *k, span);
    vclock_destroy (&s);
    config_destroy (&cfg);
    return span;
}

static void
test_the_ratio_rule_costs_the_fork_nothing (void **state)
{
    (void) state;
    int k_rule, k_all;
    for (int both = 0; both <= 1; both++) {
        double rule = run_fork (1, both, &k_rule), all = run_fork (0, both, &k_all);
        assert_int_equal (k_rule, both ? 5 : 3);
        assert_true (rule <= all);
    }
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

/*  One run of the (10 MB, 3 units) fork on the virtual clock, its
 *  interference emulated as a run's is; its makespan in platform
 *  seconds. With ia-split, also: the children the
 *  bound leaves out get nothing, and each served child's link carried
 *  its share while the root sent to it (its tasks over its transfers'
 *  time, start to last ack, within 3%). */
static double
run_split_fork (const char *policy, int endgame)
{
    config_t *cfg = load ("fork7.json", 300);
    cfg->platform.endgame = endgame;
    cfg->tasks.input_mb = 10;
    cfg->tasks.units = 3;
    config_set_policy (cfg, policy);
    vclock_opts_t opts = vclock_opts_default ();
    opts.interference = 1;
    vclock_t *s = vclock_new (cfg, &opts);
    double span = vclock_run (s) * cfg->platform.time_scale;
    vclock_check_exactly_once (s);
    core_t *root = vclock_core (s, cfg->root);
    printf ("  fork7 (10 MB, 3 units) %-9s %-12s makespan %.1f s (platform, virtual "
            "clock)\n", policy, endgame ? "end-game" : "no end-game", span);
    if (strcmp (policy, "ia-split") == 0) {
        for (int c = 0; c < 6; c++) {
            core_child_stats_t st = core_child_stats (root, c);
            double plan = core_split_rate (root, c);
            if (plan == 0) {
                assert_int_equal (st.tasks_sent, 0);
                continue;
            }
            /*  Platform tasks/s while the child's link was busy. */
            double carried = (double) st.tasks_sent
                           / (st.send_seconds * cfg->platform.time_scale);
            printf ("    child %d: planned %.4f tasks/s, carried %.4f\n", c, plan, carried);
            assert_true (fabs (carried - plan) < 0.03 * plan);
        }
    }
    vclock_destroy (&s);
    config_destroy (&cfg);
    return span;
}

/*  IA:Multi lets a transfer started while the port had room wait behind
 *  better-ranked children, its task held hostage; ia-split gives each
 *  child a steady share of the port (the reference study's worst cell
 *  for IA:Multi, docs/study/README.md): by the policies alone, without
 *  the end-game, and with it. */
static void
test_ia_split_beats_ia_multi_where_priority_holds_tasks_hostage (void **state)
{
    (void) state;
    double split = run_split_fork ("ia-split", 0), multi = run_split_fork ("ia-multi", 0);
    assert_true (split < 0.8 * multi);
    /*  The end-game takes back much of what IA:Multi's hostages cost. */
    double split_eg = run_split_fork ("ia-split", 1), multi_eg = run_split_fork ("ia-multi", 1);
    assert_true (split_eg <= multi_eg && multi_eg < multi);
}

/*  The end-game on the reference fork at (5 MB, 7 units), interference
 *  emulated: Tenn's link (0.2 MB/s) takes 25 s of platform time per
 *  task, and the slow computers (Lab4, Lab5) hold queues, so without the
 *  end-game the run waits on them at the end. With it, no task goes
 *  where it would finish late, the root copies what is still out there,
 *  every run is shorter and the last 5% of the tasks take at most half
 *  as long; every task is recorded once either way. */
static void
run_tail (const char *policy, int endgame, double *span, double *tail, uint64_t *copies)
{
    config_t *cfg = load ("fork7.json", 300);
    cfg->tasks.input_mb = 5;
    cfg->tasks.units = 7;
    cfg->platform.endgame = endgame;
    config_set_policy (cfg, policy);
    vclock_opts_t opts = vclock_opts_default ();
    opts.interference = 1;
    vclock_t *s = vclock_new (cfg, &opts);
    *span = vclock_run (s) * cfg->platform.time_scale;
    vclock_check_exactly_once (s);
    *tail = vclock_tail (s, 0.05) * cfg->platform.time_scale;
    *copies = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        *copies += core_stats (vclock_core (s, i)).copies;
    printf ("  fork7 (5 MB, 7 units) %-9s %-12s makespan %6.1f s, last 5%% %5.1f s, "
            "%llu copies\n", policy, endgame ? "end-game" : "no end-game", *span, *tail,
            (unsigned long long) *copies);
    vclock_destroy (&s);
    config_destroy (&cfg);
}

static void
test_the_end_game_does_not_wait_on_the_slow_link (void **state)
{
    (void) state;
    const char *policies[] = {"ia-multi", "ia-split", "bwc", "fcfs"};
    for (int p = 0; p < 4; p++) {
        double span, tail, span_eg, tail_eg;
        uint64_t copies, copies_eg;
        run_tail (policies[p], 0, &span, &tail, &copies);
        run_tail (policies[p], 1, &span_eg, &tail_eg, &copies_eg);
        assert_int_equal (copies, 0);
        assert_true (span_eg < span);
        assert_true (tail_eg < tail);
        /*  ia-split's own tail is short already (5.4 s, 15 tasks at the
         *  bound's 3 tasks/s take 4.9 s); the others waited. */
        if (p != 1)
            assert_true (tail_eg <= 0.5 * tail);
    }
}

/*  A 255-node binary tree (depth 7) with uneven nodes: every eighth link
 *  slow (0.3 MB/s), compute rates from 2 to 9 units/s. */
static config_t *
tree255 (uint64_t tasks)
{
    size_t cap = 256 * 200;
    char *text = xmalloc (cap), err[TF_ERRLEN];
    int len = snprintf (text, cap,
                        "{\"name\": \"tree255\", \"tasks\": {\"count\": %llu, "
                        "\"input_mb\": 1, \"units\": 2}, \"platform\": {\"mode\": "
                        "\"emulated\", \"time_scale\": 20, \"payload_scale\": 0.01}, "
                        "\"tree\": [{\"name\": \"n0\", \"compute\": 6, "
                        "\"send_limit_mbps\": 12}",
                        (unsigned long long) tasks);
    for (int i = 1; i < 255; i++)
        len += snprintf (text + len, cap - (size_t) len,
                         ", {\"name\": \"n%d\", \"parent\": \"n%d\", \"compute\": %d, "
                         "\"send_limit_mbps\": 12, \"link_mbps\": %s, \"ir_send\": 0.02, "
                         "\"ir_recv\": 0.03}",
                         i, (i - 1) / 2, 2 + i * 7 % 8, i % 8 == 5 ? "0.3" : "10");
    snprintf (text + len, cap - (size_t) len, "]}");
    config_t *cfg = config_load_string (text, "tree255", err, sizeof err);
    free (text);
    if (!cfg)
        fail_msg ("%s", err);
    return cfg;
}

/*  At the scale users run: BAG_EMPTY reaches every node, relays copy
 *  and cancel below them, and every task is recorded once, through the
 *  multi-port policies and FCFS. */
static void
test_the_end_game_at_255_nodes (void **state)
{
    (void) state;
    const char *policies[] = {"ia-split", "ia-multi", "fcfs"};
    for (int p = 0; p < 3; p++) {
        config_t *cfg = tree255 (3000);
        config_set_policy (cfg, policies[p]);
        vclock_opts_t opts = vclock_opts_default ();
        opts.interference = 1;
        vclock_t *s = vclock_new (cfg, &opts);
        double span = vclock_run (s) * cfg->platform.time_scale;
        vclock_check_exactly_once (s);
        uint64_t copies = 0, below = 0, cancelled = 0;
        for (int i = 0; i < cfg->nnodes; i++) {
            core_stats_t st = core_stats (vclock_core (s, i));
            copies += st.copies;
            below += i != cfg->root ? st.copies : 0;
            cancelled += st.cancelled;
        }
        printf ("  tree255 %-9s makespan %.1f s, %llu copies (%llu below the root), "
                "%llu CANCELs\n", policies[p], span, (unsigned long long) copies,
                (unsigned long long) below, (unsigned long long) cancelled);
        assert_true (below > 0);
        vclock_destroy (&s);
        config_destroy (&cfg);
    }
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
        cmocka_unit_test (test_ia_split_beats_ia_multi_where_priority_holds_tasks_hostage),
        cmocka_unit_test (test_the_end_game_does_not_wait_on_the_slow_link),
        cmocka_unit_test (test_the_end_game_at_255_nodes),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
