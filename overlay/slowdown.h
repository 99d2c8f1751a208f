/*  slowdown — the effective compute rate a node should get under a
 *  described background load (docs/model.md, "Background load"): the
 *  pure formulas, no state, no clock.
 *
 *  Three descriptions, three sources:
 *  - contenders (Figueira & Berman, HPDC 1996): p on/off contenders,
 *    contender k computing a fraction c_k of the time and communicating
 *    a fraction m_k, independently. With pcomp_i the probability that
 *    exactly i of them compute at once and pcomm_i that exactly i
 *    communicate at once (Poisson-binomial distributions over the c_k
 *    and the m_k),
 *        slowdown = 1 + sum_{i=1..p} pcomp_i * i
 *                     + sum_{i=1..p} pcomm_i * delay_comm(i),
 *    delay_comm calibrated elsewhere for the message size in use; p
 *    CPU-bound contenders give p + 1. The rate factor is 1 / slowdown.
 *  - a job stream (Anglano, ICS 1998): K classes sharing the CPU by
 *    processor sharing, class k arriving at rate lambda_k with mean
 *    demand D_k; U = sum_k lambda_k D_k < 1 and a foreground
 *    computation takes 1 / (1 - U) as long: the rate factor is 1 - U.
 *  - steps (Weissman, 2002): a load L >= 1 (1.0 dedicated, 2.0 halves
 *    the speed): the rate factor is 1 / L.
 *
 *  Every function returns 0, or -1 with its outputs untouched and, where
 *  it takes one, a message in err naming the parameter (and the
 *  contender or class, counted from 0).
 */
#ifndef TF_SLOWDOWN_H
#define TF_SLOWDOWN_H

#include <stddef.h>

/*  The most contenders slowdown_contenders takes: a description with
 *  more is not a machine someone shares, and it bounds the work. */
#define SLOWDOWN_CONTENDERS_MAX 64
/*  How far a contender's compute + comm may pass 1 before it is refused:
 *  room for fractions written in decimal (0.24 + 0.76), no more. */
#define SLOWDOWN_FRACTION_SLACK 1e-12

/*  The Poisson-binomial distribution of p independent events, event k
 *  happening with probability prob[k] (each in [0, 1]): dist_out[i]
 *  (p + 1 entries, the caller's) receives the probability that exactly i
 *  of them happen, by the O(p^2) dynamic program. p = 0 gives {1}.
 *  Returns -1 (dist_out untouched) if p < 0, an array is NULL (prob may
 *  be NULL when p = 0) or a probability is outside [0, 1] or NaN. */
int slowdown_poisson_binomial (const double *prob, int p, double *dist_out);

/*  The Figueira & Berman contention slowdown of p contenders (0 <= p <=
 *  SLOWDOWN_CONTENDERS_MAX): contender k computes compute[k] and
 *  communicates comm[k] of the time, both in [0, 1], their sum at most
 *  1 (+ SLOWDOWN_FRACTION_SLACK). delay_comm[i - 1] (p entries, each
 *  finite and >= 0) is the communication delay with i contenders
 *  communicating at once; NULL means all zeros. Writes the slowdown (>=
 *  1; the rate factor is its inverse) into *out. compute and comm may be
 *  NULL when p = 0. Returns -1 with a message naming the parameter and
 *  the contender if an input is out of range. */
int slowdown_contenders (const double *compute, const double *comm, int p,
                         const double *delay_comm, double *out, char *err,
                         size_t errlen);

/*  The Anglano job stream of k >= 1 classes, class j arriving at rate
 *  lambda[j] (finite, >= 0, per second) with mean CPU demand demand[j]
 *  (finite, > 0, seconds): writes U = sum_j lambda[j] * demand[j] into
 *  *utilization and the rate factor 1 - U into *factor (a foreground
 *  computation takes 1 / factor as long). Returns -1 with a message
 *  naming the parameter and the class if an input is out of range, or
 *  if U >= 1 (a saturated node: no finite expansion). Limits tighter
 *  than U < 1 are the caller's. */
int slowdown_jobs (const double *lambda, const double *demand, int k,
                   double *utilization, double *factor, char *err,
                   size_t errlen);

/*  The Weissman load L (finite, >= 1; 1.0 a dedicated node): writes the
 *  rate factor 1 / L into *factor. Returns -1 with a message naming the
 *  load if it is below 1 or not finite. */
int slowdown_steps_factor (double load, double *factor, char *err,
                           size_t errlen);

#endif
