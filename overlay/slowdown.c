/*  slowdown — the effective compute rate under a described background
 *  load. See slowdown.h.
 */
#include "overlay/slowdown.h"

#include <math.h>

#include "overlay/util.h"

/*  1 if x is a probability: in [0, 1], not NaN. */
static int
slowdown_is_fraction (double x)
{
    return x >= 0.0 && x <= 1.0;
}

int
slowdown_poisson_binomial (const double *prob, int p, double *dist_out)
{
    if (p < 0 || !dist_out || (p > 0 && !prob))
        return -1;
    for (int k = 0; k < p; k++)
        if (!slowdown_is_fraction (prob[k]))
            return -1;
    /*  After event k, dist_out[0..k+1] is the distribution of the first
     *  k + 1 events: exactly i happen if i did before and k does not, or
     *  i - 1 did and k does. Downwards, so dist_out[i - 1] is still the
     *  previous step's. */
    dist_out[0] = 1.0;
    for (int k = 0; k < p; k++) {
        double q = prob[k];
        dist_out[k + 1] = dist_out[k] * q;
        for (int i = k; i > 0; i--)
            dist_out[i] = dist_out[i] * (1.0 - q) + dist_out[i - 1] * q;
        dist_out[0] *= 1.0 - q;
    }
    return 0;
}

/*  Check the contenders' description (see slowdown_contenders). */
static int
slowdown_check_contenders (const double *compute, const double *comm, int p,
                           const double *delay_comm, char *err, size_t errlen)
{
    if (p < 0 || p > SLOWDOWN_CONTENDERS_MAX)
        return tf_error (err, errlen, "contenders: p = %d is not in [0, %d]",
                         p, SLOWDOWN_CONTENDERS_MAX);
    if (p > 0 && (!compute || !comm))
        return tf_error (err, errlen, "contenders: %s is NULL with p = %d",
                         compute ? "comm" : "compute", p);
    for (int k = 0; k < p; k++) {
        if (!slowdown_is_fraction (compute[k]))
            return tf_error (err, errlen,
                             "contender %d: compute %g is not in [0, 1]", k,
                             compute[k]);
        if (!slowdown_is_fraction (comm[k]))
            return tf_error (err, errlen,
                             "contender %d: comm %g is not in [0, 1]", k,
                             comm[k]);
        if (compute[k] + comm[k] > 1.0 + SLOWDOWN_FRACTION_SLACK)
            return tf_error (err, errlen,
                             "contender %d: compute %g + comm %g is over 1",
                             k, compute[k], comm[k]);
        if (delay_comm && !(isfinite (delay_comm[k]) && delay_comm[k] >= 0.0))
            return tf_error (err, errlen,
                             "contenders: delay_comm %d (for %d communicating)"
                             " is %g, not a finite delay >= 0",
                             k, k + 1, delay_comm[k]);
    }
    return 0;
}

int
slowdown_contenders (const double *compute, const double *comm, int p,
                     const double *delay_comm, double *out, char *err,
                     size_t errlen)
{
    if (slowdown_check_contenders (compute, comm, p, delay_comm, err, errlen))
        return -1;
    double pcomp[SLOWDOWN_CONTENDERS_MAX + 1];
    double pcomm[SLOWDOWN_CONTENDERS_MAX + 1];
    slowdown_poisson_binomial (compute, p, pcomp);
    slowdown_poisson_binomial (comm, p, pcomm);
    double slowdown = 1.0;
    for (int i = 1; i <= p; i++) {
        slowdown += pcomp[i] * i;
        if (delay_comm)
            slowdown += pcomm[i] * delay_comm[i - 1];
    }
    *out = slowdown;
    return 0;
}

int
slowdown_jobs (const double *lambda, const double *demand, int k,
               double *utilization, double *factor, char *err, size_t errlen)
{
    if (k < 1)
        return tf_error (err, errlen, "jobs: k = %d classes, need at least 1",
                         k);
    if (!lambda || !demand)
        return tf_error (err, errlen, "jobs: %s is NULL",
                         lambda ? "demand" : "lambda");
    double u = 0.0;
    for (int j = 0; j < k; j++) {
        if (!(isfinite (lambda[j]) && lambda[j] >= 0.0))
            return tf_error (err, errlen,
                             "jobs class %d: lambda %g is not a finite rate"
                             " >= 0", j, lambda[j]);
        if (!(isfinite (demand[j]) && demand[j] > 0.0))
            return tf_error (err, errlen,
                             "jobs class %d: demand %g is not a finite"
                             " mean > 0", j, demand[j]);
        u += lambda[j] * demand[j];
    }
    /*  Also catches a sum that overflowed to infinity. */
    if (!(u < 1.0))
        return tf_error (err, errlen,
                         "jobs: utilization U = %g over %d classes is not"
                         " below 1 (a saturated node)", u, k);
    *utilization = u;
    *factor = 1.0 - u;
    return 0;
}

int
slowdown_steps_factor (double load, double *factor, char *err, size_t errlen)
{
    if (!(isfinite (load) && load >= 1.0))
        return tf_error (err, errlen,
                         "steps: load %g is not a finite L >= 1 (1.0 is"
                         " dedicated)", load);
    *factor = 1.0 / load;
    return 0;
}
