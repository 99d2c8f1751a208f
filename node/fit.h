/*  fit — ordinary least squares, accumulated online.
 *
 *  A node fits its normalized compute rate y (compute rate over its rate
 *  with no communication) against its transfer rates x_1..x_k (receive
 *  rate, then the send rate to each child, platform MB/s):
 *      y = b_0 + b_1 x_1 + ... + b_k x_k
 *  so that IR_r = -b_1 and IR_s(i) = -b_{i+1}, with b_0 near 1. Each
 *  observation costs O(k^2): only the normal equations' sums are kept, so a
 *  fit can be solved at any time during a run. Pure.
 */
#ifndef TF_FIT_H
#define TF_FIT_H

typedef struct fit fit_t;

/*  Create a fit with k >= 0 regressors (plus the intercept). */
fit_t *fit_new (int k);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void fit_destroy (fit_t **self_p);

/*  Add one observation: y and x[0..k) (x may be NULL when k = 0). An
 *  observation with any non-finite value is ignored whole. O(k^2). */
void fit_add (fit_t *self, double y, const double *x);

/*  Observations added. */
long fit_count (const fit_t *self);

/*  Solve. coef and se receive k + 1 entries: [0] the intercept, [j] the
 *  coefficient of x_j (1-based). Some regressors cannot be estimated and
 *  are left out of the fit, their coefficient and standard error NAN:
 *  - one that never varied (e.g. a child never sent to, or a rate stuck at
 *    one value): its spread is below 1e-5 of its root mean square, so it
 *    cannot be told apart from the intercept;
 *  - one collinear with earlier regressors (e.g. two children always sent
 *    to at the same rate): less than 1e-10 of its variance is left once
 *    the earlier regressors kept are accounted for. Regressors are taken
 *    in order, so of a collinear group the earliest is kept and the later
 *    ones are left out; the kept one's coefficient then carries the
 *    group's combined effect.
 *  Standard errors are the usual OLS ones, sqrt(s^2 (X'X)^-1_jj) with
 *  s^2 = RSS / (n - p) over the p parameters estimated, the intercept's
 *  included; all NAN when n <= p. Returns p (>= 1), or -1 if there are
 *  too few observations for even the intercept (none); coef and se are
 *  then all NAN. */
int fit_solve (const fit_t *self, double *coef, double *se);

#endif
