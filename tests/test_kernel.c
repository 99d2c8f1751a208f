/*  test_kernel — the diagonal kernel against a naive full product.
 *
 *  The reference computes C = A * A with a plain triple loop; diagonal d of
 *  the kernel must equal C[r][(r + d) mod N] for every row r.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "node/kernel.h"
#include "overlay/util.h"

/*  C = A * A, n x n, 64-bit. The caller frees. */
static int64_t *
reference_square (const int32_t *a, uint32_t n)
{
    int64_t *c = xcalloc ((size_t) n * n, sizeof (int64_t));
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            int64_t sum = 0;
            for (uint32_t k = 0; k < n; k++)
                sum += (int64_t) a[(size_t) i * n + k] * a[(size_t) k * n + j];
            c[(size_t) i * n + j] = sum;
        }
    return c;
}

static void
check_against_reference (uint32_t n, uint32_t seed)
{
    kernel_t *kernel = kernel_new (n, seed);
    assert_non_null (kernel);
    assert_int_equal (kernel_size (kernel), n);
    int64_t *c = reference_square (kernel_matrix (kernel), n);
    int64_t *out = xcalloc (n, sizeof (int64_t));

    /* Every diagonal, plus d >= n, which is taken mod n. */
    for (uint32_t d = 0; d < n + 2; d++) {
        memset (out, 0x5a, n * sizeof (int64_t));
        int64_t checksum = kernel_rows (kernel, d, 0, n, out);
        int64_t expected_sum = 0;
        for (uint32_t r = 0; r < n; r++) {
            int64_t expected = c[(size_t) r * n + (r + d) % n];
            assert_true (out[r] == expected);
            expected_sum += expected;
        }
        assert_true (checksum == expected_sum);
        /* Without out, the same checksum. */
        assert_true (kernel_rows (kernel, d, 0, n, NULL) == expected_sum);
    }
    free (out);
    free (c);
    kernel_destroy (&kernel);
    assert_null (kernel);
}

static void
test_reference_n5 (void **state)
{
    (void) state;
    check_against_reference (5, 1);
}

static void
test_reference_n16 (void **state)
{
    (void) state;
    check_against_reference (16, 2);
}

static void
test_reference_n64 (void **state)
{
    (void) state;
    check_against_reference (64, 3);
}

static void
test_reference_n67 (void **state)
{
    (void) state;
    check_against_reference (67, 0);
}

/*  A sub-range writes only its rows, from out[0], and sums only them; the
 *  pieces of a partition add up to the whole diagonal. */
static void
test_row_ranges (void **state)
{
    (void) state;
    const uint32_t n = 67;
    kernel_t *kernel = kernel_new (n, 42);
    int64_t full[67], part[67 + 1];
    int64_t total = kernel_rows (kernel, 9, 0, n, full);

    /* Rows [10, 30): out[0..19], the sentinel after them untouched. */
    part[20] = -12345;
    int64_t sum = kernel_rows (kernel, 9, 10, 30, part);
    int64_t expected = 0;
    for (uint32_t r = 10; r < 30; r++) {
        assert_true (part[r - 10] == full[r]);
        expected += full[r];
    }
    assert_true (sum == expected);
    assert_true (part[20] == -12345);

    /* An empty range computes nothing and writes nothing. */
    part[0] = -777;
    assert_true (kernel_rows (kernel, 9, 30, 30, part) == 0);
    assert_true (part[0] == -777);

    /* A partition, including the wrap of column (r + d) past n. */
    int64_t pieces = kernel_rows (kernel, 9, 0, 1, NULL) +
                     kernel_rows (kernel, 9, 1, 57, NULL) +
                     kernel_rows (kernel, 9, 57, 58, NULL) +
                     kernel_rows (kernel, 9, 58, n, NULL);
    assert_true (pieces == total);

    /* The last row alone, whose column wraps to (66 + 9) mod 67 = 8. */
    kernel_rows (kernel, 9, n - 1, n, part);
    assert_true (part[0] == full[n - 1]);
    kernel_destroy (&kernel);
}

/*  The same seed gives the same matrix; another seed a different one. All
 *  entries lie in [-7, 7] and every value in that range occurs. */
static void
test_determinism (void **state)
{
    (void) state;
    const uint32_t n = 64;
    kernel_t *a = kernel_new (n, 7);
    kernel_t *b = kernel_new (n, 7);
    kernel_t *c = kernel_new (n, 8);
    size_t bytes = (size_t) n * n * sizeof (int32_t);

    assert_memory_equal (kernel_matrix (a), kernel_matrix (b), bytes);
    assert_memory_not_equal (kernel_matrix (a), kernel_matrix (c), bytes);
    assert_true (kernel_units (a, 0, 3) == kernel_units (b, 0, 3));
    assert_true (kernel_units (a, 0, 3) != kernel_units (c, 0, 3));

    int seen[15] = {0};
    const int32_t *m = kernel_matrix (a);
    for (size_t i = 0; i < (size_t) n * n; i++) {
        assert_in_range (m[i] + 7, 0, 14);
        seen[m[i] + 7]++;
    }
    for (int v = 0; v < 15; v++)
        assert_true (seen[v] > 0);

    /* Golden values pin the generator and the kernel: nodes on different
     * machines must agree on them, so a change here is a deliberate,
     * incompatible one. */
    static const int32_t golden[16] = {-4, 7,  -3, -3, 5,  0,  1, -6,
                                       -7, 2,  2,  0,  -7, -7, 4, 1};
    kernel_t *pinned = kernel_new (4, 0);
    assert_memory_equal (kernel_matrix (pinned), golden, sizeof (golden));
    assert_true (kernel_units (pinned, 1, 2.5) == -145);
    kernel_destroy (&pinned);

    kernel_destroy (&a);
    kernel_destroy (&b);
    kernel_destroy (&c);
}

/*  Units: whole diagonals from d on, wrapping at n, then the nearest number
 *  of rows of the next one. */
static void
test_units (void **state)
{
    (void) state;
    const uint32_t n = 16;
    kernel_t *k = kernel_new (n, 99);

    /* 2.5 units from d = 3: diagonals 3 and 4, then 8 rows of 5. */
    int64_t expected = kernel_rows (k, 3, 0, n, NULL) +
                       kernel_rows (k, 4, 0, n, NULL) +
                       kernel_rows (k, 5, 0, 8, NULL);
    assert_true (kernel_units (k, 3, 2.5) == expected);

    /* 0.3 of 16 rows = 4.8, rounded to 5. */
    assert_true (kernel_units (k, 3, 0.3) == kernel_rows (k, 3, 0, 5, NULL));
    assert_true (kernel_units (k, 3, 0.3) != kernel_rows (k, 3, 0, 4, NULL));

    /* 0.01 of 16 rows rounds to none: nothing computed. */
    assert_true (kernel_units (k, 3, 0.01) == 0);

    /* 1.99: 0.99 * 16 = 15.84 rounds to 16 rows, a whole next diagonal. */
    assert_true (kernel_units (k, 3, 1.99) == kernel_units (k, 3, 2.0));

    /* Diagonals wrap: 3.25 from d = 14 is 14, 15, 0 and 4 rows of 1. */
    expected = kernel_rows (k, 14, 0, n, NULL) + kernel_rows (k, 15, 0, n, NULL) +
               kernel_rows (k, 0, 0, n, NULL) + kernel_rows (k, 1, 0, 4, NULL);
    assert_true (kernel_units (k, 14, 3.25) == expected);

    /* d is taken mod n. */
    assert_true (kernel_units (k, 14 + 5 * n, 3.25) == expected);

    /* Zero and negative units: no work. */
    assert_true (kernel_units (k, 0, 0) == 0);
    assert_true (kernel_units (k, 0, -1.5) == 0);

    kernel_destroy (&k);
}

static void
test_size_limits (void **state)
{
    (void) state;
    assert_null (kernel_new (0, 1));
    assert_null (kernel_new (1, 1));
    assert_null (kernel_new (16385, 1));
    assert_null (kernel_new (UINT32_MAX, 1));

    kernel_t *k = kernel_new (2, 1);
    assert_non_null (k);
    assert_int_equal (kernel_size (k), 2);
    kernel_destroy (&k);
    assert_null (k);
    kernel_destroy (&k);        /* safe on NULL */
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_reference_n5),
        cmocka_unit_test (test_reference_n16),
        cmocka_unit_test (test_reference_n64),
        cmocka_unit_test (test_reference_n67),
        cmocka_unit_test (test_row_ranges),
        cmocka_unit_test (test_determinism),
        cmocka_unit_test (test_units),
        cmocka_unit_test (test_size_limits),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
