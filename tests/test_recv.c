/*  test_recv — the transfer from the parent and chunk validation
 *  (node/recv.h), driven directly: a task must be asked for, arrive in
 *  order and have exactly the sizes expected; a synthetic task is held
 *  from its first chunk, a command from its last, a probe never.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "node/recv.h"
#include "overlay/config.h"
#include "overlay/util.h"

#define T0 1000.0

/*  A bag of 10 tasks, 0 and 1 commands; synthetic tasks of 25 bytes and
 *  2 units in chunks of 10; 4 nodes. */
static recv_t *
new_recv (void)
{
    return recv_new (&(recv_cfg_t){.task_count = 10, .command_tasks = 2, .task_units = 2,
                                   .task_bytes = 25, .chunk_bytes = 10, .nnodes = 4,
                                   .meter_window = 0.1});
}

/*  Chunk index of synthetic task id, as its parent sends it. */
static core_event_t
chunk (uint64_t id, uint32_t index)
{
    return (core_event_t){.type = CORE_EV_CHUNK, .now = T0, .task = id, .units = 2,
                          .bytes = 25, .index = index, .count = 3,
                          .len = index == 2 ? 5 : 10, .kind = CORE_KIND_SYNTHETIC};
}

static int
check (const recv_t *r, core_event_t ev)
{
    char err[TF_ERRLEN];
    return recv_check_chunk (r, &ev, err, sizeof err);
}

/*  A synthetic task arrives asked for and in order, held from its first
 *  chunk (cut-through), whole at its last. */
static void
test_synthetic_task_arrives_in_order (void **state)
{
    (void) state;
    recv_t *r = new_recv ();
    task_t t;
    assert_int_equal (check (r, chunk (5, 0)), -1);   /* unasked */
    recv_add_pending (r, 2);
    assert_int_equal (check (r, chunk (5, 1)), -1);   /* not from 0 */
    assert_int_equal (check (r, chunk (5, 0)), 0);
    core_event_t ev = chunk (5, 0);
    assert_int_equal (recv_take_chunk (r, &ev, &t), RECV_HELD);
    assert_int_equal (t.id, 5);
    assert_int_equal (t.bytes, 25);
    assert_int_equal (recv_pending (r), 1);
    assert_int_equal (recv_arriving (r, 5), 1);
    assert_int_equal (recv_arriving (r, 6), 0);
    uint64_t id;
    uint32_t held;
    assert_int_equal (recv_progress (r, &id, &held), 1);
    assert_int_equal (id, 5);
    assert_int_equal (held, 1);
    assert_int_equal (check (r, chunk (5, 2)), -1);   /* skips 1 */
    assert_int_equal (check (r, chunk (5, 0)), -1);   /* again */
    assert_int_equal (check (r, chunk (6, 0)), -1);   /* another task */
    ev = chunk (5, 1);
    assert_int_equal (check (r, ev), 0);
    assert_int_equal (recv_take_chunk (r, &ev, &t), 0);
    ev = chunk (5, 2);
    assert_int_equal (check (r, ev), 0);
    assert_int_equal (recv_take_chunk (r, &ev, &t), RECV_LAST);
    assert_int_equal (recv_arriving (r, 5), 0);
    assert_int_equal (recv_progress (r, &id, &held), 0);
    assert_int_equal (recv_pending (r), 1);
    recv_destroy (&r);
    assert_null (r);
    recv_destroy (&r);
}

/*  Every size of a chunk must be the task's: its total, chunk count,
 *  this chunk's length, units, kind and the nodes it avoids. */
static void
test_chunk_sizes_must_be_the_tasks (void **state)
{
    (void) state;
    recv_t *r = new_recv ();
    recv_add_pending (r, 1);
    core_event_t ev = chunk (10, 0);
    assert_int_equal (check (r, ev), -1);          /* out of the bag */
    ev = chunk (5, 0);
    ev.bytes = 26;
    assert_int_equal (check (r, ev), -1);
    ev = chunk (5, 0);
    ev.count = 4;
    assert_int_equal (check (r, ev), -1);
    ev = chunk (5, 0);
    ev.len = 9;
    assert_int_equal (check (r, ev), -1);
    ev = chunk (5, 0);
    ev.units = 3;
    assert_int_equal (check (r, ev), -1);
    ev = chunk (5, 0);
    ev.kind = CORE_KIND_COMMAND;
    assert_int_equal (check (r, ev), -1);
    ev = chunk (5, 0);
    ev.navoid = 1;
    ev.avoid = (uint32_t[]){1};
    assert_int_equal (check (r, ev), -1);          /* only commands avoid */
    ev = chunk (5, 0);
    ev.count = 0;
    assert_int_equal (check (r, ev), -1);
    assert_int_equal (check (r, chunk (5, 0)), 0);
    recv_destroy (&r);
}

/*  A command declares its size (1 .. CONFIG_MAX_STREAM_BYTES), avoids
 *  nodes of the tree, and is held only once whole; a probe needs no
 *  asking and is never held. */
static void
test_commands_and_probes (void **state)
{
    (void) state;
    recv_t *r = new_recv ();
    recv_mark_meter (r, T0 - 0.1);
    recv_add_pending (r, 1);
    core_event_t ev = {.type = CORE_EV_CHUNK, .now = T0, .task = 1, .units = 7,
                       .bytes = 12, .index = 0, .count = 2, .len = 10,
                       .kind = CORE_KIND_COMMAND, .navoid = 1, .avoid = (uint32_t[]){4}};
    assert_int_equal (check (r, ev), -1);          /* node 4 of 4 */
    ev.avoid = (uint32_t[]){3};
    ev.bytes = CONFIG_MAX_STREAM_BYTES + 1;   /* chunks consistent, size not */
    ev.count = (uint32_t) ((CONFIG_MAX_STREAM_BYTES + 10) / 10);
    assert_int_equal (check (r, ev), -1);
    ev.bytes = 12;
    ev.count = 2;
    ev.units = 0;                             /* a command's units are its own */
    assert_int_equal (check (r, ev), -1);
    ev.units = 7;
    assert_int_equal (check (r, ev), 0);
    task_t t;
    assert_int_equal (recv_take_chunk (r, &ev, &t), 0);
    ev.index = 1;
    ev.len = 2;
    assert_int_equal (check (r, ev), 0);
    assert_int_equal (recv_take_chunk (r, &ev, &t), RECV_HELD | RECV_LAST);
    assert_int_equal (t.kind, CORE_KIND_COMMAND);
    assert_true (t.units == 7);
    assert_int_equal (t.navoid, 1);
    assert_int_equal (t.avoid[0], 3);
    assert_int_equal (recv_pending (r), 0);
    core_event_t probe = chunk (CORE_PROBE_TASK, 0);
    assert_int_equal (check (r, probe), 0);
    assert_int_equal (recv_take_chunk (r, &probe, &t), 0);
    assert_true (recv_rate (r, T0) > 0);   /* 37 bytes */
    recv_destroy (&r);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_synthetic_task_arrives_in_order),
        cmocka_unit_test (test_chunk_sizes_must_be_the_tasks),
        cmocka_unit_test (test_commands_and_probes),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
