/*  test_unreadable — a command whose input cannot be read when the root
 *  hands it out (core_task_info_t.unreadable): the attempt fails at the
 *  root, nothing of it is sent, the asking child gets the next task, and
 *  after its last attempt the task is recorded failed; an input found
 *  again on a later look goes out as usual.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/core.h"
#include "tests/helpers.h"

static const core_child_info_t kid[1] = {{1, 10, 10, 0.01, 0.02, 0}};

/*  Task 1's input is unreadable for the first `gone` looks. */
typedef struct {
    int gone, looks;
} bag_t;

static core_task_info_t
bag_info (void *arg, uint64_t task)
{
    bag_t *bag = arg;
    if (task == 1 && bag->looks++ < bag->gone)
        return (core_task_info_t){.bytes = 0, .units = 1, .unreadable = 1};
    return (core_task_info_t){.bytes = 1000, .units = 1};
}

static core_t *
make_root (bag_t *bag)
{
    core_cfg_t cfg = {
        .self = 0, .nnodes = 2, .is_root = 1, .task_count = 4, .command_tasks = 4,
        .task_units = 1, .task_mb = 1, .task_bytes = 1000, .chunk_bytes = 400, .window = 2,
        .buffer = 3, .batch_max = 8, .batch_delay = 0.05, .meter_window = 0.1,
        .max_attempts = 3, .slots = 1, .policy = policy_find ("fcfs"), .nchildren = 1,
        .children = kid, .task_info = bag_info, .task_arg = bag,
    };
    return test_core_new (&cfg);
}

/*  The tasks whose first chunk goes out among the n actions, as a bit set. */
static unsigned
first_chunks (const core_action_t *a, int n)
{
    unsigned sent = 0;
    for (int i = 0; i < n; i++)
        if (a[i].type == CORE_ACT_SEND_CHUNK && a[i].index == 0)
            sent |= 1u << a[i].task;
    return sent;
}

static int
count_of (const core_action_t *a, int n, core_action_type_t type, uint64_t task)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += a[i].type == type && a[i].task == task;
    return k;
}

static void
test_an_unreadable_input_fails_at_the_root_and_the_run_goes_on (void **state)
{
    (void) state;
    bag_t bag = {.gone = 1000};
    core_t *core = make_root (&bag);
    int n;
    const core_action_t *a =
        test_core_feed (core, (core_event_t){.type = CORE_EV_START, .now = 1}, &n);
    assert_int_equal (count_of (a, n, CORE_ACT_COMPUTE, 0), 1);   /* the root's own */
    /*  The child asks: task 1 fails three times at the root without a
     *  byte sent, and the child's ask gets task 2 (one transfer at a
     *  time: fcfs is single-port). */
    a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .now = 1, .child = 0, .n = 2}, &n);
    assert_int_equal (first_chunks (a, n), 1u << 2);
    assert_int_equal (count_of (a, n, CORE_ACT_RETRY, 1), 2);
    for (int i = 0; i < n; i++)
        if (a[i].type == CORE_ACT_RETRY)
            assert_int_equal (a[i].node, 0);
    assert_true (core_is_done (core, 1));
    assert_false (core_is_done (core, 2));
    assert_int_equal (core_stats (core).failed, 1);
    /*  Its record: failed at the root after three attempts. */
    a = test_core_feed (core, (core_event_t){.type = CORE_EV_TICK, .now = 2}, &n);
    const core_action_t *r = test_core_find (a, n, CORE_ACT_RECORDED);
    assert_non_null (r);
    assert_int_equal (r->ndone, 1);
    assert_int_equal (r->done[0].task, 1);
    assert_int_equal (r->done[0].node, 0);
    assert_true (r->done[0].failed);
    assert_int_equal (r->done[0].attempts, 3);
    core_destroy (&core);
}

static void
test_an_input_found_again_goes_out (void **state)
{
    (void) state;
    bag_t bag = {.gone = 1};   /* gone at its first hand-out only */
    core_t *core = make_root (&bag);
    int n;
    test_core_feed (core, (core_event_t){.type = CORE_EV_START, .now = 1}, &n);
    const core_action_t *a = test_core_feed (
        core, (core_event_t){.type = CORE_EV_REQUEST, .now = 1, .child = 0, .n = 1}, &n);
    assert_int_equal (count_of (a, n, CORE_ACT_RETRY, 1), 1);
    assert_int_equal (first_chunks (a, n), 1u << 1);   /* its second attempt */
    assert_false (core_is_done (core, 1));
    assert_int_equal (core_stats (core).failed, 0);
    core_destroy (&core);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_an_unreadable_input_fails_at_the_root_and_the_run_goes_on),
        cmocka_unit_test (test_an_input_found_again_goes_out),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
