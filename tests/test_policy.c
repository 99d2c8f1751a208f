/*  test_policy — the scheduling policies as pure functions: each policy's
 *  service order on the published 7-node fork, the interference-aware
 *  exclusion rule over the 18 published application types, tie-breaks,
 *  and the registry (names, aliases, summaries).
 *
 *  A service order is found the way a parent meets it when every child
 *  keeps asking: offer all requesting children, serve the one the policy
 *  picks, withdraw it, and ask again until the policy serves nobody.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policies/policy.h"

/*  The root Lab0's children in configs/fork7.json (docs/model.md, "The reference platform"), slots in
 *  file order. Fields: slot, compute (units/s), link_mbps (both compute),
 *  link_idle_mbps, ir_send (at Lab0), ir_recv, wanted, oldest_request,
 *  sending. Every child asks; oldest_request is set per test. */
enum { LAB3, LAB4, LAB5, LAB6, SB0, TENN, NKIDS };

static const char *const kid_names[NKIDS] = {"Lab3", "Lab4", "Lab5", "Lab6", "SB0",
                                             "Tenn"};

static const policy_child_t fork7[NKIDS] = {
    {LAB3, 23.86, 10.8, 11.1, 0.0333, 0.0443, 3, 0, 0},
    {LAB4, 3.47, 10.81, 11.12, 0.0208, 0.0454, 3, 0, 0},
    {LAB5, 3.02, 9.62, 11.05, 0.0226, 0.0621, 3, 0, 0},
    {LAB6, 8.27, 10.7, 10.85, 0.0331, 0.0130, 3, 0, 0},
    {SB0, 22.55, 7.73, 7.7, 0.0342, 0.0425, 3, 0, 0},
    {TENN, 13.23, 0.2, 0.3, 0.0331, 0.1300, 3, 0, 0},
};

/*  Lab0 computes 9.06 units/s and sends at most 10.7 MB/s; the default
 *  application type is Z = 2 MB, w = 5 units. */
static policy_parent_t
lab0 (double z, double w)
{
    return (policy_parent_t){.compute_rate = 9.06, .task_mb = z, .task_units = w,
                             .send_limit_mbps = 10.7, .is_root = 1};
}

static const policy_t *
get (const char *name)
{
    const policy_t *policy = policy_find (name);
    if (!policy)
        fail_msg ("no policy \"%s\"", name);
    return policy;
}

/*  Fill order[] with the slots the policy takes, in turn, from the n
 *  children offered in the given order: with chunks = 0 the ones it serves
 *  (pick, until it serves nobody), with chunks = 1 the order in which it
 *  gives chunks to transfers in flight (policy_pick_chunk). Each choice is
 *  withdrawn before asking again. Returns how many it took. */
static int
take_order (const policy_t *policy, const policy_parent_t *parent,
            const policy_child_t *kids, int n, int *order, int chunks)
{
    policy_child_t cands[NKIDS];
    memcpy (cands, kids, n * sizeof *cands);
    int taken = 0;
    while (n > 0) {
        int k = chunks ? policy_pick_chunk (policy, parent, cands, n)
                       : policy->pick (parent, cands, n);
        if (k < 0 && !chunks)
            break;
        assert_in_range (k, 0, n - 1);
        order[taken++] = cands[k].slot;
        memmove (&cands[k], &cands[k + 1], (n - k - 1) * sizeof *cands);
        n--;
    }
    return taken;
}

static int
service_order (const policy_t *policy, const policy_parent_t *parent,
               const policy_child_t *kids, int n, int *order)
{
    return take_order (policy, parent, kids, n, order, 0);
}

/*  Assert that the policy serves the fork's children in exactly the
 *  expected order (then nobody), whether the children are offered in slot
 *  order or reversed: the order is the policy's, not the array's. */
static void
assert_fork7_order (const char *name, const policy_parent_t *parent,
                    const int *expected, int nexpected)
{
    policy_child_t kids[NKIDS];
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < NKIDS; i++)
            kids[i] = fork7[pass ? NKIDS - 1 - i : i];
        int order[NKIDS];
        int served = service_order (get (name), parent, kids, NKIDS, order);
        char got[128] = "", want[128] = "";
        for (int i = 0; i < served; i++)
            snprintf (got + strlen (got), sizeof got - strlen (got), " %s",
                      kid_names[order[i]]);
        for (int i = 0; i < nexpected; i++)
            snprintf (want + strlen (want), sizeof want - strlen (want), " %s",
                      kid_names[expected[i]]);
        if (strcmp (got, want) != 0)
            fail_msg ("%s (%s order): served%s, expected%s", name,
                      pass ? "reversed" : "slot", got, want);
    }
}

/*  --- service orders on the reference fork, Z = 2 MB, w = 5 -------------- */

static void
test_fcfs_serves_the_oldest_request_first (void **state)
{
    (void) state;
    policy_parent_t parent = lab0 (2, 5);
    policy_child_t kids[NKIDS];
    memcpy (kids, fork7, sizeof kids);
    static const uint64_t asked[NKIDS] = {40, 7, 12, 3, 90, 25};
    for (int i = 0; i < NKIDS; i++)
        kids[i].oldest_request = asked[i];
    int order[NKIDS];
    assert_int_equal (service_order (get ("fcfs"), &parent, kids, NKIDS, order), NKIDS);
    static const int want[NKIDS] = {LAB6, LAB4, LAB5, TENN, LAB3, SB0};
    assert_memory_equal (order, want, sizeof want);

    /*  Equal arrival numbers (not produced by the core) go to the lower slot. */
    kids[LAB4].oldest_request = kids[SB0].oldest_request = 1;
    assert_int_equal (get ("fcfs")->pick (&parent, kids, NKIDS), LAB4);
    policy_child_t two[2] = {kids[SB0], kids[LAB4]};
    assert_int_equal (get ("fcfs")->pick (&parent, two, 2), 1);
}

static void
test_comprate_serves_the_fastest_computer_first (void **state)
{
    (void) state;
    policy_parent_t parent = lab0 (2, 5);
    static const int want[] = {LAB3, SB0, TENN, LAB6, LAB4, LAB5};
    assert_fork7_order ("comprate", &parent, want, 6);
}

static void
test_bwc_serves_the_fastest_idle_link_first (void **state)
{
    (void) state;
    /*  By link_idle_mbps: 11.12, 11.1, 11.05, 10.85, 7.7, 0.3. By the loaded
     *  link_mbps Lab6 (10.7) would come before Lab5 (9.62). */
    policy_parent_t parent = lab0 (2, 5);
    static const int want[] = {LAB4, LAB3, LAB5, LAB6, SB0, TENN};
    assert_fork7_order ("bwc", &parent, want, 6);
}

static void
test_ia_single_serves_the_lowest_ir_s_first (void **state)
{
    (void) state;
    /*  IR_s: Lab4 0.0208, Lab5 0.0226, Lab6 0.0331 = Tenn 0.0331, Lab3 0.0333,
     *  SB0 0.0342. The tie goes to the larger B_r (1 - IR_s Z C), i.e. for
     *  equal IR_s the faster link: Lab6 (10.7 MB/s) before Tenn (0.2). */
    policy_parent_t parent = lab0 (2, 5);
    static const int want[] = {LAB4, LAB5, LAB6, TENN, LAB3, SB0};
    assert_fork7_order ("ia-single", &parent, want, 6);
}

static void
test_ia_single_opt_serves_the_largest_port_priority_first (void **state)
{
    (void) state;
    /*  C^n = 9.06 / 5 = 1.812 tasks/s, Z C^n = 3.624; priority
     *  B_r (1 - IR_s Z C^n) with B_r = link_mbps / 2:
     *    Lab4  5.405  x (1 - 0.0208 x 3.624 = 0.92462) = 4.998
     *    Lab3  5.4    x (1 - 0.0333 x 3.624 = 0.87932) = 4.748
     *    Lab6  5.35   x (1 - 0.0331 x 3.624 = 0.88005) = 4.708
     *    Lab5  4.81   x (1 - 0.0226 x 3.624 = 0.91810) = 4.416
     *    SB0   3.865  x (1 - 0.0342 x 3.624 = 0.87606) = 3.386
     *    Tenn  0.1    x (1 - 0.0331 x 3.624 = 0.88005) = 0.088 */
    policy_parent_t parent = lab0 (2, 5);
    static const int want[] = {LAB4, LAB3, LAB6, LAB5, SB0, TENN};
    assert_fork7_order ("ia-single-opt", &parent, want, 6);
    assert_true (fabs (policy_single_opt_priority (&parent, &fork7[LAB4]) - 4.998) < 1e-3);
    assert_true (fabs (policy_single_opt_priority (&parent, &fork7[TENN]) - 0.088) < 1e-3);
}

static void
test_ia_multi_starts_sends_by_lowest_ir_s (void **state)
{
    (void) state;
    /*  Each pick starts one more concurrent send; the order of starts is
     *  IA:Single's, tie included. */
    policy_parent_t parent = lab0 (2, 5);
    assert_true (get ("ia-multi")->multiport);
    static const int want[] = {LAB4, LAB5, LAB6, TENN, LAB3, SB0};
    assert_fork7_order ("ia-multi", &parent, want, 6);
}

static void
test_every_policy_gives_chunks_in_its_service_order (void **state)
{
    (void) state;
    /*  Z = 2, w = 1: no child is excluded, so every policy that serves
     *  anyone serves all six, and the chunk order of transfers in flight
     *  (all sending, none still asking) must be that same order, offered
     *  in slot order or reversed. RootComputes ranks nobody: slot order. */
    policy_parent_t parent = lab0 (2, 1);
    for (int p = 0; policy_at (p); p++) {
        const policy_t *policy = policy_at (p);
        for (int pass = 0; pass < 2; pass++) {
            policy_child_t kids[NKIDS], busy[NKIDS];
            for (int i = 0; i < NKIDS; i++) {
                kids[i] = fork7[pass ? NKIDS - 1 - i : i];
                kids[i].oldest_request = 100 - (uint64_t) kids[i].slot * 7 % 13;
                kids[i].split = 1;   /* every child in ia-split's plan */
                busy[i] = kids[i];
                busy[i].sending = 1;
                busy[i].wanted = 0;
            }
            int want[NKIDS], got[NKIDS];
            int served = service_order (policy, &parent, kids, NKIDS, want);
            if (served == 0)
                for (int i = 0; i < NKIDS; i++)
                    want[i] = i;
            else
                assert_int_equal (served, NKIDS);
            assert_int_equal (take_order (policy, &parent, busy, NKIDS, got, 1), NKIDS);
            for (int i = 0; i < NKIDS; i++)
                if (got[i] != want[i])
                    fail_msg ("%s: chunk %d goes to %s, its service order says %s",
                              policy->name, i, kid_names[got[i]], kid_names[want[i]]);
        }
    }
    assert_int_equal (policy_pick_chunk (get ("ia-multi"), &parent, fork7, 0), -1);
}

static void
test_root_computes_serves_nobody (void **state)
{
    (void) state;
    const policy_t *rc = get ("root-computes");
    static const double zs[] = {0, 2, 10}, ws[] = {1, 5, 11};
    for (int z = 0; z < 3; z++)
        for (int w = 0; w < 3; w++) {
            policy_parent_t parent = lab0 (zs[z], ws[w]);
            assert_int_equal (rc->pick (&parent, fork7, NKIDS), -1);
            assert_int_equal (rc->pick (&parent, &fork7[LAB4], 1), -1);
            parent.is_root = 0;
            assert_int_equal (rc->pick (&parent, fork7, NKIDS), -1);
        }
}

/*  --- the exclusion rule IR_s Z C^n >= 1 ---------------------------------- */

static const char *const ia_policies[] = {"ia-single", "ia-single-opt", "ia-multi"};
static const char *const blind_policies[] = {"fcfs", "comprate", "bwc"};

static void
test_z10_w1_ia_policies_serve_nobody (void **state)
{
    (void) state;
    /*  C^n = 9.06 tasks/s, Z C^n = 90.6: even Lab4 costs 0.0208 x 90.6 = 1.88
     *  tasks of the root's computation per task sent. */
    policy_parent_t parent = lab0 (10, 1);
    for (int i = 0; i < NKIDS; i++)
        assert_true (policy_excluded (&parent, &fork7[i]));
    for (int p = 0; p < 3; p++)
        assert_int_equal (get (ia_policies[p])->pick (&parent, fork7, NKIDS), -1);
    /*  The policies blind to interference serve everyone, in their usual
     *  order. */
    for (int p = 0; p < 3; p++) {
        int order[NKIDS];
        assert_int_equal (service_order (get (blind_policies[p]), &parent, fork7,
                                         NKIDS, order), NKIDS);
    }
    static const int bwc[] = {LAB4, LAB3, LAB5, LAB6, SB0, TENN};
    assert_fork7_order ("bwc", &parent, bwc, 6);
}

static void
test_z10_w3_ia_policies_skip_lab3_and_sb0 (void **state)
{
    (void) state;
    /*  C^n = 3.02, Z C^n = 30.2: Lab4 0.628, Lab5 0.683, Lab6 = Tenn 0.9996
     *  (just under), Lab3 1.0057, SB0 1.0328 (excluded). */
    policy_parent_t parent = lab0 (10, 3);
    for (int i = 0; i < NKIDS; i++)
        assert_int_equal (policy_excluded (&parent, &fork7[i]), i == LAB3 || i == SB0);
    static const int ia[] = {LAB4, LAB5, LAB6, TENN};
    assert_fork7_order ("ia-single", &parent, ia, 4);
    assert_fork7_order ("ia-multi", &parent, ia, 4);
    /*  Priorities, B_r = link_mbps / 10: Lab4 1.081 x 0.372 = 0.402, Lab5
     *  0.962 x 0.317 = 0.305, Lab6 1.07 x 0.00038 = 0.0004, Tenn 0.02 x
     *  0.00038 = 0.000008: the same order as IR_s here. */
    assert_fork7_order ("ia-single-opt", &parent, ia, 4);
    /*  An excluded child is refused even when it is the only one asking. */
    for (int p = 0; p < 3; p++) {
        assert_int_equal (get (ia_policies[p])->pick (&parent, &fork7[LAB3], 1), -1);
        assert_int_equal (get (blind_policies[p])->pick (&parent, &fork7[LAB3], 1), 0);
    }
}

/*  Which fork7 children the root excludes, per application type, as bits
 *  (1 << slot). docs/policies.md prints the same table; this keeps it true. */
static void
test_exclusion_table_of_the_18_application_types (void **state)
{
    (void) state;
    static const double zs[3] = {2, 5, 10};
    static const double ws[6] = {1, 3, 5, 7, 9, 11};
    const unsigned all_but_lab4 = (1u << NKIDS) - 1 - (1u << LAB4);
    unsigned want[3][6] = {{0}};
    want[1][0] = all_but_lab4;               /* Z = 5, w = 1 */
    want[2][0] = (1u << NKIDS) - 1;          /* Z = 10, w = 1: everyone */
    want[2][1] = 1u << LAB3 | 1u << SB0;     /* Z = 10, w = 3 */
    for (int z = 0; z < 3; z++)
        for (int w = 0; w < 6; w++) {
            policy_parent_t parent = lab0 (zs[z], ws[w]);
            unsigned got = 0;
            for (int i = 0; i < NKIDS; i++)
                got |= (unsigned) policy_excluded (&parent, &fork7[i]) << i;
            if (got != want[z][w])
                fail_msg ("Z = %g, w = %g: excluded 0x%x, expected 0x%x", zs[z], ws[w],
                          got, want[z][w]);
        }
}

static void
test_model_quantities_and_degenerate_parents (void **state)
{
    (void) state;
    policy_parent_t parent = lab0 (2, 5);
    assert_true (fabs (policy_task_rate (&parent) - 1.812) < 1e-12);
    /*  A parent that computes nothing loses nothing by sending. */
    parent.compute_rate = 0;
    assert_false (policy_excluded (&parent, &fork7[SB0]));
    /*  Tasks without data cost nothing to send and take no port time. */
    parent = lab0 (0, 1);
    assert_false (policy_excluded (&parent, &fork7[SB0]));
    assert_true (policy_single_opt_priority (&parent, &fork7[SB0]) == HUGE_VAL);
    parent.task_units = 0;
    assert_true (policy_task_rate (&parent) == 0);
    /*  An excluded child has a non-positive priority. */
    parent = lab0 (10, 1);
    for (int i = 0; i < NKIDS; i++)
        assert_true (policy_single_opt_priority (&parent, &fork7[i]) <= 0);
}

/*  --- ties and eligibility ----------------------------------------------- */

static void
test_ties_are_broken_by_the_documented_key_then_slot (void **state)
{
    (void) state;
    /*  Z = 2, C^n = 8 tasks/s: Z C^n = 16, so IR_s 1/32 halves the gain. */
    policy_parent_t parent = {.compute_rate = 8, .task_mb = 2, .task_units = 1};
    policy_child_t a = {.slot = 0, .compute_rate = 5, .link_mbps = 4,
                        .link_idle_mbps = 6, .ir_send = 0.03125, .wanted = 1,
                        .split = 1};   /* in ia-split's plan */
    policy_child_t b = a;
    b.slot = 1;

    /*  Equal in everything: the lower slot, wherever it sits in the array. */
    for (int i = 0; policy_at (i); i++) {
        const policy_t *p = policy_at (i);
        policy_child_t ab[2] = {a, b}, ba[2] = {b, a};
        if (!strcmp (p->name, "root-computes"))
            continue;
        assert_int_equal (p->pick (&parent, ab, 2), 0);
        assert_int_equal (p->pick (&parent, ba, 2), 1);
    }

    /*  CompRate and BWC: equal primary key, the faster loaded link wins. */
    b.link_mbps = 5;
    policy_child_t ab[2] = {a, b};
    assert_int_equal (get ("comprate")->pick (&parent, ab, 2), 1);
    assert_int_equal (get ("bwc")->pick (&parent, ab, 2), 1);
    assert_int_equal (get ("ia-single")->pick (&parent, ab, 2), 1);
    assert_int_equal (get ("ia-multi")->pick (&parent, ab, 2), 1);
    assert_int_equal (get ("ia-split")->pick (&parent, ab, 2), 1);
    /*  ia-split serves only a child its plan gives a share. */
    ab[1].split = 0;
    assert_int_equal (get ("ia-split")->pick (&parent, ab, 2), 0);

    /*  IA:Single-opt: a = 4/2 x (1 - 1/2) = 1 and c = 2/2 x (1 - 0) = 1 tie;
     *  the lower IR_s (c) wins. */
    policy_child_t c = a;
    c.slot = 1;
    c.link_mbps = 2;
    c.ir_send = 0;
    policy_child_t ac[2] = {a, c};
    assert_true (policy_single_opt_priority (&parent, &a)
                 == policy_single_opt_priority (&parent, &c));
    assert_int_equal (get ("ia-single-opt")->pick (&parent, ac, 2), 1);
}

static void
test_children_not_asking_or_receiving_are_never_picked (void **state)
{
    (void) state;
    policy_parent_t parent = lab0 (2, 5);
    policy_child_t kids[NKIDS];
    memcpy (kids, fork7, sizeof kids);
    kids[LAB4].sending = 1;      /* first for bwc, ia-*  */
    kids[LAB3].wanted = 0;       /* first for comprate */
    kids[LAB3].oldest_request = 0;
    for (int i = 1; i < NKIDS; i++)
        kids[i].oldest_request = (uint64_t) i;
    assert_int_equal (get ("fcfs")->pick (&parent, kids, NKIDS), LAB5);
    assert_int_equal (get ("comprate")->pick (&parent, kids, NKIDS), SB0);
    assert_int_equal (get ("bwc")->pick (&parent, kids, NKIDS), LAB5);
    assert_int_equal (get ("ia-single")->pick (&parent, kids, NKIDS), LAB5);
    assert_int_equal (get ("ia-single-opt")->pick (&parent, kids, NKIDS), LAB6);
    assert_int_equal (get ("ia-multi")->pick (&parent, kids, NKIDS), LAB5);
    for (int i = 0; policy_at (i); i++)
        assert_int_equal (policy_at (i)->pick (&parent, kids, 0), -1);
}

/*  --- the registry --------------------------------------------------------- */

static void
test_registry_lists_the_eight_policies_well_formed (void **state)
{
    (void) state;
    static const char *const names[] = {"fcfs",     "comprate", "bwc",
                                        "ia-single", "ia-single-opt", "ia-multi",
                                        "ia-split", "root-computes"};
    int n = 0;
    for (; policy_at (n); n++) {
        const policy_t *p = policy_at (n);
        assert_true (n < 8);
        assert_string_equal (p->name, names[n]);
        assert_non_null (p->pick);
        assert_non_null (p->summary);
        /*  `treefarm policies` prints name (13), port model (11) and summary
         *  with two spaces between: one line of 80 columns. */
        assert_true (strlen (p->summary) > 0 && strlen (p->summary) <= 52);
        assert_null (strchr (p->summary, '\n'));
        for (const char *c = p->name; *c; c++)
            assert_true ((*c >= 'a' && *c <= 'z') || *c == '-');
        /*  Unique, also up to case and separators: each name finds itself. */
        assert_ptr_equal (policy_find (p->name), p);
        assert_int_equal (p->multiport,
                          !strcmp (p->name, "ia-multi") || !strcmp (p->name, "ia-split"));
        assert_int_equal (p->split != NULL, !strcmp (p->name, "ia-split"));
    }
    assert_int_equal (n, 8);
    assert_null (policy_at (-1));
    assert_null (policy_at (8));

    char buf[256];
    policy_names (buf, sizeof buf);
    assert_string_equal (buf, "fcfs, comprate, bwc, ia-single, ia-single-opt, "
                              "ia-multi, ia-split, root-computes");
    char small[10];
    policy_names (small, sizeof small);
    assert_string_equal (small, "fcfs, com");
}

static void
test_policy_find_accepts_published_spellings_only (void **state)
{
    (void) state;
    static const struct {
        const char *alias, *name;
    } aliases[] = {
        {"FCFS", "fcfs"},           {"CompRate", "comprate"},
        {"BWC", "bwc"},             {"IA:Single", "ia-single"},
        {"ia_single", "ia-single"}, {"IA:Single-opt", "ia-single-opt"},
        {"IA:Multi", "ia-multi"},   {"IA:Split", "ia-split"},
        {"RootComputes", "root-computes"},
        {"root_computes", "root-computes"}, {"Root-Computes", "root-computes"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        const policy_t *p = policy_find (aliases[i].alias);
        if (!p || strcmp (p->name, aliases[i].name) != 0)
            fail_msg ("\"%s\" found %s, expected %s", aliases[i].alias,
                      p ? p->name : "nothing", aliases[i].name);
    }
    static const char *const unknown[] = {
        "", "-", ":", "ia", "ia-", "ia-single-op", "ia-single-opts", "fcfs ",
        " fcfs", "random", "IA Single", "fcfs2",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        if (policy_find (unknown[i]))
            fail_msg ("\"%s\" should name no policy", unknown[i]);
    assert_null (policy_find (NULL));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_fcfs_serves_the_oldest_request_first),
        cmocka_unit_test (test_comprate_serves_the_fastest_computer_first),
        cmocka_unit_test (test_bwc_serves_the_fastest_idle_link_first),
        cmocka_unit_test (test_ia_single_serves_the_lowest_ir_s_first),
        cmocka_unit_test (test_ia_single_opt_serves_the_largest_port_priority_first),
        cmocka_unit_test (test_ia_multi_starts_sends_by_lowest_ir_s),
        cmocka_unit_test (test_every_policy_gives_chunks_in_its_service_order),
        cmocka_unit_test (test_root_computes_serves_nobody),
        cmocka_unit_test (test_z10_w1_ia_policies_serve_nobody),
        cmocka_unit_test (test_z10_w3_ia_policies_skip_lab3_and_sb0),
        cmocka_unit_test (test_exclusion_table_of_the_18_application_types),
        cmocka_unit_test (test_model_quantities_and_degenerate_parents),
        cmocka_unit_test (test_ties_are_broken_by_the_documented_key_then_slot),
        cmocka_unit_test (test_children_not_asking_or_receiving_are_never_picked),
        cmocka_unit_test (test_registry_lists_the_eight_policies_well_formed),
        cmocka_unit_test (test_policy_find_accepts_published_spellings_only),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
