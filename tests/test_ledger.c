/*  test_ledger — the held queue and the root's record of the bag
 *  (node/ledger.h), driven directly: queue order, fresh tasks after held
 *  ones, the completion bits, attempts, retries and the nodes a failed
 *  command avoids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "node/ledger.h"

/*  Commands of 100 + id bytes and 2 units; synthetic tasks of 10 bytes
 *  and 1 unit. */
static core_task_info_t
info_of (void *arg, uint64_t task)
{
    (void) arg;
    return (core_task_info_t){.bytes = 100 + task, .units = 2};
}

static ledger_cfg_t
root_cfg (uint64_t tasks, uint64_t commands, uint32_t attempts, uint32_t nnodes)
{
    return (ledger_cfg_t){.is_root = 1, .task_count = tasks, .command_tasks = commands,
                          .task_units = 1, .task_bytes = 10, .task_info = info_of,
                          .max_attempts = attempts, .nnodes = nnodes};
}

static int
any_task (const void *arg, const task_t *t)
{
    (void) arg;
    (void) t;
    return 1;
}

/*  Only the task whose id *arg is. */
static int
task_is (const void *arg, const task_t *t)
{
    return t->id == *(const uint64_t *) arg;
}

/*  A node's queue is first in, first out, across the ring's growth; a
 *  task taken from the middle leaves the others in order; a non-root
 *  node has no fresh task and no record. */
static void
test_queue_keeps_arrival_order (void **state)
{
    (void) state;
    ledger_t *l = ledger_new (&(ledger_cfg_t){.task_count = 100, .nnodes = 3});
    for (uint64_t i = 0; i < 6; i++)
        ledger_push_task (l, &(task_t){.id = i});
    assert_int_equal (ledger_take_task (l, 0).id, 0);
    assert_int_equal (ledger_take_task (l, 0).id, 1);
    for (uint64_t i = 6; i < 20; i++)   /* wraps, then grows */
        ledger_push_task (l, &(task_t){.id = i});
    assert_int_equal (ledger_held (l), 18);
    uint64_t want = 9;
    assert_int_equal (ledger_find_task (l, task_is, &want, 1), 7);
    assert_int_equal (ledger_take_task (l, 7).id, 9);
    for (uint64_t i = 2; i < 20; i++)
        if (i != 9) {
            uint32_t pos = (uint32_t) (i < 9 ? i - 2 : i - 3);
            assert_int_equal (ledger_peek_task (l, pos)->id, i);
        }
    want = 99;
    assert_int_equal (ledger_find_task (l, task_is, &want, 1), -1);
    assert_int_equal (ledger_is_done (l, 2), 0);
    assert_int_equal (ledger_mark_done (l, 2), -1);
    assert_int_equal (ledger_all_done (l), 0);
    ledger_destroy (&l);
    assert_null (l);
    ledger_destroy (&l);   /* safe on NULL */
}

/*  The root hands out the bag in order, commands with their own size,
 *  after any task held; a fresh synthetic task only when allowed, a
 *  fresh command always. */
static void
test_root_hands_out_held_tasks_then_fresh_ones (void **state)
{
    (void) state;
    ledger_cfg_t cfg = root_cfg (4, 1, 1, 3);
    ledger_t *l = ledger_new (&cfg);
    assert_int_equal (ledger_find_task (l, any_task, NULL, 0), 0);   /* a command */
    task_t t = ledger_take_task (l, 0);
    assert_int_equal (t.id, 0);
    assert_int_equal (t.kind, CORE_KIND_COMMAND);
    assert_int_equal (t.bytes, 100);
    assert_true (t.units == 2);
    assert_int_equal (ledger_attempts (l, 0), 1);
    assert_int_equal (ledger_find_task (l, any_task, NULL, 0), -1);  /* synthetic */
    ledger_push_task (l, &(task_t){.id = 0, .kind = CORE_KIND_COMMAND});
    assert_int_equal (ledger_find_task (l, any_task, NULL, 1), 0);   /* held first */
    assert_int_equal (ledger_take_task (l, 0).id, 0);
    assert_int_equal (ledger_find_task (l, any_task, NULL, 1), 0);   /* fresh at held */
    t = ledger_take_task (l, 0);
    assert_int_equal (t.id, 1);
    assert_int_equal (t.kind, CORE_KIND_SYNTHETIC);
    assert_int_equal (t.bytes, 10);
    assert_int_equal (ledger_attempts (l, 1), 0);
    assert_int_equal (ledger_take_task (l, 0).id, 2);
    assert_int_equal (ledger_take_task (l, 0).id, 3);
    assert_int_equal (ledger_find_task (l, any_task, NULL, 1), -1);  /* bag out */
    ledger_destroy (&l);
}

/*  Each task is recorded once; tasks complete before they are handed
 *  out (a resumed run) are skipped; the bag is done at its last. */
static void
test_root_records_each_task_once (void **state)
{
    (void) state;
    ledger_cfg_t cfg = root_cfg (10, 0, 1, 3);
    ledger_t *l = ledger_new (&cfg);
    assert_int_equal (ledger_mark_done (l, 0), 0);
    assert_int_equal (ledger_mark_done (l, 1), 0);
    assert_int_equal (ledger_mark_done (l, 1), 0);   /* again: no change */
    assert_int_equal (ledger_mark_done (l, 10), -1);
    assert_int_equal (ledger_completed (l), 2);
    assert_int_equal (ledger_is_done (l, 1), 1);
    assert_int_equal (ledger_is_done (l, 2), 0);
    assert_int_equal (ledger_is_done (l, 10), 0);
    assert_int_equal (ledger_take_task (l, 0).id, 2);
    for (uint64_t i = 2; i < 10; i++) {
        assert_int_equal (ledger_all_done (l), 0);
        ledger_mark_done (l, i);
    }
    assert_int_equal (ledger_completed (l), 10);
    assert_int_equal (ledger_all_done (l), 1);
    ledger_destroy (&l);
}

/*  A failed command comes back with the node it failed on to avoid,
 *  as long as it has attempts; it is remembered while out again and
 *  recalled once. */
static void
test_retry_avoids_the_failed_nodes_within_attempts (void **state)
{
    (void) state;
    ledger_cfg_t cfg = root_cfg (3, 2, 3, 5);
    ledger_t *l = ledger_new (&cfg);
    task_t t = ledger_take_task (l, 0), back;
    assert_int_equal (ledger_recall_task (l, 0, &back), 0);   /* avoids none */
    assert_int_equal (ledger_retry_task (l, 0, 4, &t), 1);
    assert_int_equal (ledger_held (l), 1);
    t = ledger_take_task (l, 0);
    assert_int_equal (t.id, 0);
    assert_int_equal (t.bytes, 100);
    assert_int_equal (t.navoid, 1);
    assert_int_equal (t.avoid[0], 4);
    assert_int_equal (ledger_attempts (l, 0), 2);
    assert_int_equal (ledger_recall_task (l, 0, &back), 1);
    assert_int_equal (back.navoid, 1);
    assert_int_equal (ledger_recall_task (l, 0, &back), 0);   /* once */
    assert_int_equal (ledger_retry_task (l, 0, 2, &back), 1);
    t = ledger_take_task (l, 0);
    assert_int_equal (t.navoid, 2);
    assert_int_equal (t.avoid[1], 2);
    assert_int_equal (ledger_attempts (l, 0), 3);
    assert_int_equal (ledger_retry_task (l, 0, 1, &t), 0);    /* the third was the last */
    assert_int_equal (ledger_held (l), 0);
    assert_int_equal (ledger_retry_task (l, 2, 1, NULL), 0);  /* not a command */
    ledger_destroy (&l);
}

/*  The nodes to avoid start over when they would cover the tree; a
 *  one-node tree and a root-only run avoid nothing. */
static void
test_avoided_nodes_never_cover_the_tree (void **state)
{
    (void) state;
    ledger_cfg_t cfg = root_cfg (1, 1, 5, 3);
    ledger_t *l = ledger_new (&cfg);
    task_t t = ledger_take_task (l, 0);
    ledger_retry_task (l, 0, 1, &t);
    t = ledger_take_task (l, 0);
    ledger_retry_task (l, 0, 2, &t);
    t = ledger_take_task (l, 0);
    assert_int_equal (t.navoid, 2);    /* {1, 2}: the root is left */
    ledger_retry_task (l, 0, 0, &t);   /* {1, 2, 0} would be all */
    t = ledger_take_task (l, 0);
    assert_int_equal (t.navoid, 1);
    assert_int_equal (t.avoid[0], 0);
    ledger_destroy (&l);
    for (int k = 0; k < 2; k++) {
        cfg = root_cfg (1, 1, 5, k == 0 ? 1 : 3);
        cfg.root_only = k == 1;
        l = ledger_new (&cfg);
        t = ledger_take_task (l, 0);
        ledger_retry_task (l, 0, 0, &t);
        assert_int_equal (ledger_take_task (l, 0).navoid, 0);
        ledger_destroy (&l);
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_queue_keeps_arrival_order),
        cmocka_unit_test (test_root_hands_out_held_tasks_then_fresh_ones),
        cmocka_unit_test (test_root_records_each_task_once),
        cmocka_unit_test (test_retry_avoids_the_failed_nodes_within_attempts),
        cmocka_unit_test (test_avoided_nodes_never_cover_the_tree),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
