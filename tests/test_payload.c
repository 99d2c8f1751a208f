/*  test_payload — the payload store a relay forwards from (node/payload.h):
 *  large chunks kept as the very frames that arrived, small ones copied,
 *  chunks served only once held, the root's pattern when nothing is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <string.h>
#include <cmocka.h>

#include "node/payload.h"
#include "overlay/util.h"

#if defined(__SANITIZE_ADDRESS__)
#define REPLACED_MALLOC 1       /* ASan's allocator: no glibc heap to look at */
#else
#define REPLACED_MALLOC 0
#endif

static zframe_t *
filled (size_t len, int value)
{
    zframe_t *f = zframe_new (NULL, len);
    memset (zframe_data (f), value, len);
    return f;
}

static int
all_bytes (zframe_t *f, int value)
{
    for (size_t i = 0; i < zframe_size (f); i++)
        if (zframe_data (f)[i] != (byte) value)
            return 0;
    return 1;
}

/*  Large chunks: what comes out is the frame that went in, not a copy,
 *  and only the chunks held come out. */
static void
test_large_chunks_are_served_from_the_frames_kept (void **state)
{
    (void) state;
    uint32_t chunk = PAYLOAD_FRAME_MIN;
    uint64_t bytes = 2 * (uint64_t) chunk + 100;
    payload_store_t *store = payload_store_new (chunk);
    zframe_t *f0 = filled (chunk, 1);
    byte *data0 = zframe_data (f0);
    assert_int_equal (payload_put (store, 9, bytes, 0, &f0), 0);
    assert_null (f0);   /* taken */
    zframe_t *out = payload_chunk (store, 9, 0, 0, chunk);
    assert_non_null (out);
    assert_ptr_equal (zframe_data (out), data0);   /* the same bytes */
    assert_null (payload_chunk (store, 9, 1, chunk, chunk));   /* not arrived */
    zframe_t *f1 = filled (chunk, 2), *f2 = filled (100, 3);
    assert_int_equal (payload_put (store, 9, bytes, 1, &f1), 0);
    assert_int_equal (payload_put (store, 9, bytes, 2, &f2), 0);
    assert_true (all_bytes (payload_chunk (store, 9, 2, 2 * (uint64_t) chunk, 100), 3));
    assert_int_equal (payload_tasks (store), 1);
    assert_int_equal (payload_bytes (store), bytes);
    payload_release (store, 9);
    assert_int_equal (payload_tasks (store), 0);
    assert_int_equal (payload_bytes (store), 0);
    payload_store_destroy (&store);
    assert_null (store);
}

/*  Small chunks are copied into one buffer and served as new frames. */
static void
test_small_chunks_are_copied (void **state)
{
    (void) state;
    payload_store_t *store = payload_store_new (400);
    zframe_t *f = filled (400, 7);
    assert_int_equal (payload_put (store, 4, 1000, 0, &f), 0);
    assert_null (f);   /* copied, and freed */
    f = filled (400, 8);
    assert_int_equal (payload_put (store, 4, 1000, 1, &f), 0);
    assert_true (all_bytes (payload_chunk (store, 4, 0, 0, 400), 7));
    zframe_t *out = payload_chunk (store, 4, 1, 400, 400);
    assert_int_equal (zframe_size (out), 400);
    assert_true (all_bytes (out, 8));
    assert_null (payload_chunk (store, 4, 2, 800, 200));
    assert_int_equal (payload_bytes (store), 800);
    payload_store_destroy (&store);
}

/*  A chunk that does not follow what is held is refused (and freed). */
static void
test_chunks_out_of_order_are_refused (void **state)
{
    (void) state;
    payload_store_t *store = payload_store_new (400);
    zframe_t *f = filled (400, 1);
    assert_int_equal (payload_put (store, 4, 1000, 1, &f), -1);   /* not first */
    assert_null (f);
    f = filled (300, 1);
    assert_int_equal (payload_put (store, 4, 1000, 0, &f), -1);   /* short */
    f = filled (400, 1);
    assert_int_equal (payload_put (store, 4, 1000, 0, &f), 0);
    f = filled (400, 1);
    assert_int_equal (payload_put (store, 4, 1000, 0, &f), -1);   /* again */
    f = filled (400, 1);
    assert_int_equal (payload_put (store, 4, 2000, 1, &f), -1);   /* another size */
    f = filled (200, 1);
    assert_int_equal (payload_put (store, 4, 1000, 2, &f), -1);   /* skips 1 */
    f = filled (0, 0);
    assert_int_equal (payload_put (store, 5, 0, 0, &f), 0);       /* empty task */
    f = filled (0, 0);
    assert_int_equal (payload_put (store, 5, 0, 1, &f), -1);      /* past its end */
    assert_int_equal (payload_tasks (store), 2);
    assert_int_equal (payload_bytes (store), 400);
    payload_store_destroy (&store);
}

/*  Nothing held of a task: the root's pattern, its id's low byte; a full
 *  chunk of it is made once for that byte and served again. */
static void
test_a_task_not_held_is_the_root_s_pattern (void **state)
{
    (void) state;
    uint32_t chunk = PAYLOAD_FRAME_MIN;
    payload_store_t *store = payload_store_new (chunk);
    zframe_t *a = payload_chunk (store, 0x1ab, 0, 0, chunk);
    assert_int_equal (zframe_size (a), chunk);
    assert_true (all_bytes (a, 0xab));
    assert_ptr_equal (payload_chunk (store, 0x2ab, 3, 3 * (uint64_t) chunk, chunk), a);
    zframe_t *last = payload_chunk (store, 0x2ab, 4, 4 * (uint64_t) chunk, 10);
    assert_int_equal (zframe_size (last), 10);
    assert_true (all_bytes (last, 0xab));
    assert_true (all_bytes (payload_chunk (store, 5, 0, 0, chunk), 5));
    payload_store_destroy (&store);
}

/*  A node's heap reserve (tf_heap_reserve) fixes glibc's mmap threshold
 *  at 128 KiB; after payload_tune_allocator a relay's task buffer of
 *  1 MiB (small chunks: one buffer a task) comes from the heap and is
 *  reused, not mapped and faulted in afresh for every task. */
static void
test_task_buffers_come_from_the_heap (void **state)
{
    (void) state;
    tf_heap_reserve (64 * 1024);
    payload_tune_allocator ();
    size_t mapped = mallinfo2 ().hblks;
    for (int task = 0; task < 3; task++) {
        char *buffer = xmalloc (1u << 20);
        memset (buffer, task, 1u << 20);
        if (!REPLACED_MALLOC)
            assert_int_equal (mallinfo2 ().hblks, mapped);
        free (buffer);
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_large_chunks_are_served_from_the_frames_kept),
        cmocka_unit_test (test_small_chunks_are_copied),
        cmocka_unit_test (test_chunks_out_of_order_are_refused),
        cmocka_unit_test (test_a_task_not_held_is_the_root_s_pattern),
        cmocka_unit_test (test_task_buffers_come_from_the_heap),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
