/*  fit — online ordinary least squares; see fit.h.
 *
 *  The raw sums X'X of a fit with an intercept are ill-conditioned when the
 *  regressors sit far from zero relative to their spread (rates near 10
 *  MB/s, slopes near 0.03), so the fit keeps the means and the centered
 *  cross-products instead, updated one observation at a time in Welford's
 *  way (no sum of squares is ever subtracted from another). Solving
 *  standardizes the centered matrix into a correlation matrix and factors
 *  it by Cholesky in regressor order; a regressor whose pivot is too small
 *  is left out (see FIT_TOL and fit.h), which both guards the factor and
 *  names what cannot be estimated. The intercept is recovered from the
 *  means afterwards.
 */
#include "node/fit.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "overlay/util.h"

/*  Relative tolerance of the two rules that leave a regressor out: a
 *  spread below sqrt(FIT_TOL) of its root mean square (it never varied),
 *  or a share of its variance below FIT_TOL not explained by the earlier
 *  regressors kept (it is collinear with them). */
#define FIT_TOL 1e-10

struct fit {
    int k;
    long n;
    double mean_y;
    double m2_y;             /* sum (y - mean_y)^2 */
    double *mean_x;          /* k */
    double *m2_xx;           /* k x k, sum (x_i - mean_i)(x_j - mean_j);
                                upper triangle kept, row-major */
    double *m2_xy;           /* k, sum (x_j - mean_j)(y - mean_y) */
    double *dx;              /* k, scratch for fit_add */
};


fit_t *
fit_new (int k)
{
    assert (k >= 0);
    fit_t *self = xcalloc (1, sizeof (*self));
    self->k = k;
    self->mean_x = xcalloc ((size_t) k, sizeof (double));
    self->m2_xx = xcalloc ((size_t) k * (size_t) k, sizeof (double));
    self->m2_xy = xcalloc ((size_t) k, sizeof (double));
    self->dx = xcalloc ((size_t) k, sizeof (double));
    return self;
}

void
fit_destroy (fit_t **self_p)
{
    assert (self_p);
    fit_t *self = *self_p;
    if (!self)
        return;
    free (self->mean_x);
    free (self->m2_xx);
    free (self->m2_xy);
    free (self->dx);
    free (self);
    *self_p = NULL;
}

void
fit_add (fit_t *self, double y, const double *x)
{
    assert (self);
    assert (self->k == 0 || x);
    int k = self->k;
    if (!isfinite (y))
        return;
    for (int j = 0; j < k; j++)
        if (!isfinite (x[j]))
            return;

    self->n++;
    double n = (double) self->n;
    for (int j = 0; j < k; j++) {
        self->dx[j] = x[j] - self->mean_x[j];
        self->mean_x[j] += self->dx[j] / n;
    }
    double dy = y - self->mean_y;
    self->mean_y += dy / n;
    double ey = y - self->mean_y;

    /*  Co-moments: old deviation times new deviation, exact in exact
     *  arithmetic and free of cancellation. */
    self->m2_y += dy * ey;
    for (int i = 0; i < k; i++) {
        double *row = self->m2_xx + (size_t) i * k;
        for (int j = i; j < k; j++)
            row[j] += self->dx[i] * (x[j] - self->mean_x[j]);
        self->m2_xy[i] += self->dx[i] * ey;
    }
}

long
fit_count (const fit_t *self)
{
    assert (self);
    return self->n;
}

/*  The centered cross-product of regressors i and j (any order). */
static double
m2_at (const fit_t *self, int i, int j)
{
    return i <= j ? self->m2_xx[(size_t) i * self->k + j]
                  : self->m2_xx[(size_t) j * self->k + i];
}

/*  Whether regressor j varied: its spread must be a measurable share of its
 *  magnitude, else it cannot be told apart from the intercept. An all-zero
 *  regressor (a child never sent to) fails too. */
static int
fit_varied (const fit_t *self, int j)
{
    double m2 = m2_at (self, j, j);
    double raw = m2 + (double) self->n * self->mean_x[j] * self->mean_x[j];
    return m2 > 0 && m2 > FIT_TOL * raw;
}

/*  Solve L z = b in place for lower-triangular L (m x m, row-major,
 *  leading dimension ld). */
static void
forward_solve (const double *L, int ld, int m, double *b)
{
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int r = 0; r < i; r++)
            s -= L[(size_t) i * ld + r] * b[r];
        b[i] = s / L[(size_t) i * ld + i];
    }
}

/*  Solve L' z = b in place for the same L. */
static void
backward_solve (const double *L, int ld, int m, double *b)
{
    for (int i = m - 1; i >= 0; i--) {
        double s = b[i];
        for (int r = i + 1; r < m; r++)
            s -= L[(size_t) r * ld + i] * b[r];
        b[i] = s / L[(size_t) i * ld + i];
    }
}

static double
sum_squares (const double *v, int m)
{
    double s = 0;
    for (int i = 0; i < m; i++)
        s += v[i] * v[i];
    return s;
}

/*  Scratch for one solve: kept[q] is the regressor in position q of the
 *  factor, scale[q] its centered root sum of squares; L (k x k, row
 *  major) factors the kept regressors' correlation matrix; m of them. */
typedef struct {
    int k, m;
    int *kept;
    double *scale, *L, *g, *u, *col;
} solve_t;

static void
solve_init (solve_t *w, int k)
{
    size_t n = (size_t) (k ? k : 1);
    w->k = k;
    w->m = 0;
    w->kept = xmalloc (n * sizeof (int));
    w->scale = xmalloc (n * sizeof (double));
    w->L = xcalloc ((size_t) k * (size_t) k, sizeof (double));
    w->g = xmalloc (n * sizeof (double));
    w->u = xmalloc (n * sizeof (double));
    w->col = xmalloc (n * sizeof (double));
}

static void
solve_free (solve_t *w)
{
    free (w->kept);
    free (w->scale);
    free (w->L);
    free (w->g);
    free (w->u);
    free (w->col);
}

/*  Cholesky-factor the correlations of the regressors that varied,
 *  leaving out each one collinear (within FIT_TOL) with those kept. */
static void
solve_factor (const fit_t *self, solve_t *w)
{
    int k = w->k;
    for (int j = 0; j < k; j++) {
        if (!fit_varied (self, j))
            continue;
        double sj = sqrt (m2_at (self, j, j));
        double *row = w->L + (size_t) w->m * k;
        for (int q = 0; q < w->m; q++) {
            double s = m2_at (self, j, w->kept[q]) / (sj * w->scale[q]);
            for (int r = 0; r < q; r++)
                s -= row[r] * w->L[(size_t) q * k + r];
            row[q] = s / w->L[(size_t) q * k + q];
        }
        double pivot = 1 - sum_squares (row, w->m);
        if (!(pivot > FIT_TOL)) {
            for (int q = 0; q < w->m; q++)
                row[q] = 0;
            continue;            /* collinear with the kept ones: left out */
        }
        row[w->m] = sqrt (pivot);
        w->kept[w->m] = j;
        w->scale[w->m] = sj;
        w->m++;
    }
}

/*  Standard errors, given the residual variance s2. (X'X)^-1 for a
 *  centered fit: slopes S^-1, intercept 1/n + mean' S^-1 mean, with S the
 *  centered cross-products. In standardized terms S^-1_jj = (R^-1)_qq /
 *  scale_q^2 and mean' S^-1 mean = |L^-1 u|^2, u_q = mean_q / scale_q. */
static void
solve_errors (const fit_t *self, solve_t *w, double s2, double *se)
{
    int m = w->m;
    for (int q = 0; q < m; q++) {
        for (int r = 0; r < m; r++)
            w->col[r] = r == q ? 1 : 0;
        forward_solve (w->L, w->k, m, w->col);
        double rinv = sum_squares (w->col, m);
        se[w->kept[q] + 1] = sqrt (s2 * rinv) / w->scale[q];
        w->u[q] = self->mean_x[w->kept[q]] / w->scale[q];
    }
    forward_solve (w->L, w->k, m, w->u);
    se[0] = sqrt (s2 * (1.0 / (double) self->n + sum_squares (w->u, m)));
}

int
fit_solve (const fit_t *self, double *coef, double *se)
{
    assert (self && coef && se);
    int k = self->k;
    for (int j = 0; j <= k; j++)
        coef[j] = se[j] = NAN;
    if (self->n < 1)
        return -1;
    solve_t w;
    solve_init (&w, k);
    solve_factor (self, &w);

    /*  Standardized slopes beta solve R beta = g, with g the correlations'
     *  counterpart for y (unscaled in y). With z = L^-1 g, the explained sum
     *  of squares is |z|^2. */
    for (int q = 0; q < w.m; q++)
        w.g[q] = self->m2_xy[w.kept[q]] / w.scale[q];
    forward_solve (w.L, k, w.m, w.g);
    double rss = self->m2_y - sum_squares (w.g, w.m);
    if (rss < 0)
        rss = 0;
    backward_solve (w.L, k, w.m, w.g);

    double intercept = self->mean_y;
    for (int q = 0; q < w.m; q++) {
        int j = w.kept[q];
        coef[j + 1] = w.g[q] / w.scale[q];
        intercept -= coef[j + 1] * self->mean_x[j];
    }
    coef[0] = intercept;

    int p = w.m + 1;
    if (self->n > p)
        solve_errors (self, &w, rss / (double) (self->n - p), se);
    solve_free (&w);
    return p;
}
