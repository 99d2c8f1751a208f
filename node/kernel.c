/*  kernel — the synthetic compute kernel of docs/model.md, "The synthetic kernel"; see kernel.h.
 *
 *  The matrix is filled from a splitmix64 stream seeded by the caller, so a
 *  given (n, seed) gives the same matrix on every machine and every run.
 *  A diagonal walks column (r + d) mod N top to bottom for each row r: a
 *  stride of N entries per step, which is what makes the kernel memory-bound.
 *  Do not transpose the matrix to "optimise" it; the stride is the point.
 */
#include "node/kernel.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>

#include "overlay/util.h"

#define KERNEL_MIN_N 2
#define KERNEL_MAX_N 16384
#define KERNEL_MAX_ENTRY 7      /* entries lie in [-7, 7] */

struct kernel {
    uint32_t n;
    int32_t *a;                 /* n * n entries, row-major */
};

/*  One step of splitmix64: a well-mixed 64-bit value from a counter, so
 *  that seed 0 is as good as any other. */
static uint64_t
splitmix64_next (uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

kernel_t *
kernel_new (uint32_t n, uint32_t seed)
{
    if (n < KERNEL_MIN_N || n > KERNEL_MAX_N)
        return NULL;

    kernel_t *self = xmalloc (sizeof (*self));
    size_t count = (size_t) n * n;
    self->n = n;
    self->a = xmalloc (count * sizeof (int32_t));

    uint64_t state = seed;
    const uint32_t span = 2 * KERNEL_MAX_ENTRY + 1;
    for (size_t i = 0; i < count; i++) {
        /* The top 32 bits modulo 15: the bias is below 1e-8. */
        uint32_t draw = (uint32_t) (splitmix64_next (&state) >> 32);
        self->a[i] = (int32_t) (draw % span) - KERNEL_MAX_ENTRY;
    }
    return self;
}

void
kernel_destroy (kernel_t **self_p)
{
    assert (self_p);
    kernel_t *self = *self_p;
    if (!self)
        return;
    free (self->a);
    free (self);
    *self_p = NULL;
}

uint32_t
kernel_size (const kernel_t *self)
{
    assert (self);
    return self->n;
}

const int32_t *
kernel_matrix (const kernel_t *self)
{
    assert (self);
    return self->a;
}

int64_t
kernel_rows (const kernel_t *self, uint32_t d, uint32_t row_from,
             uint32_t row_to, int64_t *out)
{
    assert (self);
    assert (row_from <= row_to && row_to <= self->n);

    const size_t n = self->n;
    const uint32_t shift = d % self->n;
    int64_t checksum = 0;

    for (uint32_t r = row_from; r < row_to; r++) {
        const int32_t *row = self->a + (size_t) r * n;
        /* (r + shift) mod n without overflow: both are below n. */
        uint32_t c = r >= self->n - shift ? r - (self->n - shift) : r + shift;
        const int32_t *col = self->a + c;
        int64_t sum = 0;
        for (size_t j = 0; j < n; j++)
            sum += (int64_t) row[j] * col[j * n];
        if (out)
            out[r - row_from] = sum;
        checksum += sum;
    }
    return checksum;
}

int64_t
kernel_units (const kernel_t *self, uint32_t d, double units)
{
    assert (self);
    if (!(units > 0))           /* zero, negative and NaN: no work */
        return 0;
    /* A run this long would outlast the machine; it is a caller's bug. */
    assert (units < 9007199254740992.0);   /* 2^53 */

    /* Truncation is floor for positive values, and rounding half up is
     * all the rounding needed, so the kernel needs no libm. */
    const uint32_t n = self->n;
    uint64_t diagonals = (uint64_t) units;
    uint32_t rows = (uint32_t) ((units - (double) diagonals) * n + 0.5);
    uint32_t diag = d % n;
    int64_t checksum = 0;

    for (uint64_t k = 0; k < diagonals; k++) {
        checksum += kernel_rows (self, diag, 0, n, NULL);
        diag = diag + 1 == n ? 0 : diag + 1;
    }
    if (rows > 0)
        checksum += kernel_rows (self, diag, 0, rows, NULL);
    return checksum;
}
