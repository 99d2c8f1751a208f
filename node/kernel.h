/*  kernel — the synthetic compute kernel of docs/model.md, "The synthetic kernel".
 *
 *  One compute unit is one diagonal of A*A for an N x N int matrix A: for
 *  each row r, out[r] = sum_j A[r][j] * A[j][(r + d) mod N]. The column walk
 *  makes it memory-bound, like the published kernel. Entries are small
 *  (|a| <= 7) and sums are 64-bit, so nothing overflows for any N allowed.
 */
#ifndef TF_KERNEL_H
#define TF_KERNEL_H

#include <stdint.h>

typedef struct kernel kernel_t;

/*  Create an N x N matrix (2 <= n <= 16384) filled deterministically from
 *  seed. Returns NULL if n is out of range. */
kernel_t *kernel_new (uint32_t n, uint32_t seed);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void kernel_destroy (kernel_t **self_p);

uint32_t kernel_size (const kernel_t *self);

/*  Read-only view of the matrix, row-major, n*n entries. */
const int32_t *kernel_matrix (const kernel_t *self);

/*  Compute rows [row_from, row_to) of diagonal d (d taken mod N). When out
 *  is not NULL, out[r - row_from] receives each row's value. Returns the sum
 *  of the values computed, a checksum that keeps the work from being
 *  optimised away. */
int64_t kernel_rows (const kernel_t *self, uint32_t d, uint32_t row_from,
                     uint32_t row_to, int64_t *out);

/*  Run `units` compute units starting at diagonal d: whole diagonals, then
 *  the fractional part as that fraction of the next diagonal's rows.
 *  Returns the checksum. */
int64_t kernel_units (const kernel_t *self, uint32_t d, double units);

#endif
