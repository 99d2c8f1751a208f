/*  dist — the PRNG (xoshiro256** seeded by splitmix64) and the draws of
 *  each distribution kind, with the checks of their parameters
 *  (overlay/dist.h).
 */
#include <math.h>
#include <string.h>

#include "overlay/dist.h"
#include "overlay/util.h"

static const char *const kind_names[DIST_COUNT] = {
    [DIST_EXP] = "exp",
    [DIST_ERLANG] = "erlang",
    [DIST_H2] = "h2",
    [DIST_GAMMA] = "gamma",
    [DIST_PARETO] = "pareto",
};

/*  Relative tolerance on 1/cv^2 being the integer k of an Erlang. */
#define ERLANG_K_TOL 1e-9

static uint64_t
splitmix64_next (uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t
rotl (uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void
dist_rng_seed (dist_rng_t *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64_next (&x);
}

uint64_t
dist_rng_next (dist_rng_t *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl (s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl (s[3], 45);
    return result;
}

double
dist_unit_from_bits (uint64_t bits)
{
    /*  52 bits, not 53: (2^53 - 0.5) / 2^53 would round to 1.0, while
     *  (2^52 - 0.5) / 2^52 = 1 - 2^-53 is a double. */
    return ((double) (bits >> 12) + 0.5) * 0x1p-52;
}

double
dist_rng_uniform (dist_rng_t *rng)
{
    return dist_unit_from_bits (dist_rng_next (rng));
}

const char *
dist_kind_str (dist_kind_t kind)
{
    if ((int) kind < 0 || kind >= DIST_COUNT)
        return "?";
    return kind_names[kind];
}

int
dist_kind_parse (const char *name, dist_kind_t *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < DIST_COUNT; i++)
        if (strcmp (name, kind_names[i]) == 0) {
            *out = (dist_kind_t) i;
            return 0;
        }
    return -1;
}

static int
init_erlang (dist_t *d, double cv, char *err, size_t errlen)
{
    double kmin_cv = 1.0 / sqrt ((double) DIST_ERLANG_K_MAX);
    if (!(cv > 0 && cv <= 1) || cv < kmin_cv * (1 - ERLANG_K_TOL))
        return tf_error (err, errlen,
                         "cv %g: an Erlang's cv is 1/sqrt(k) for an integer k "
                         "from 1 to %d (cv from %.4g to 1)",
                         cv, DIST_ERLANG_K_MAX, kmin_cv);
    double kf = 1.0 / (cv * cv);
    double k = round (kf);
    if (fabs (kf - k) > ERLANG_K_TOL * k)
        return tf_error (err, errlen,
                         "cv %g: an Erlang's cv is 1/sqrt(k) for an integer k "
                         "(1/cv^2 = %.6g; the nearest, k = %.0f, has cv %.6g)",
                         cv, kf, k, 1.0 / sqrt (k));
    d->k = (int) k;
    return 0;
}

static int
init_h2 (dist_t *d, double cv, char *err, size_t errlen)
{
    if (!(cv > 1 && cv <= DIST_H2_CV_MAX))
        return tf_error (err, errlen,
                         "cv %g: a hyperexponential's cv is above 1 and at most %g",
                         cv, DIST_H2_CV_MAX);
    /*  Balanced means: p1 / mu1 = p2 / mu2 = mean / 2, which gives
     *  cv^2 + 1 = 1 / (2 p1 p2). */
    double c2 = cv * cv;
    d->p1 = 0.5 * (1 + sqrt ((c2 - 1) / (c2 + 1)));
    d->mean1 = d->mean / (2 * d->p1);
    d->mean2 = d->mean / (2 * (1 - d->p1));
    return 0;
}

static int
init_gamma (dist_t *d, double cv, char *err, size_t errlen)
{
    if (!(cv >= DIST_GAMMA_CV_MIN && cv <= DIST_GAMMA_CV_MAX))
        return tf_error (err, errlen,
                         "cv %g: a gamma's cv is from %g to %g",
                         cv, DIST_GAMMA_CV_MIN, DIST_GAMMA_CV_MAX);
    d->shape = 1.0 / (cv * cv);
    d->scale = d->mean / d->shape;
    return 0;
}

static int
init_pareto (dist_t *d, double cv, char *err, size_t errlen)
{
    if (!(cv > 0 && isfinite (cv)))
        return tf_error (err, errlen,
                         "cv %g: a Pareto's cv is finite and above 0", cv);
    /*  cv^2 = 1 / (alpha (alpha - 2)), solved for alpha > 2. */
    d->shape = 1 + sqrt (1 + 1 / (cv * cv));
    d->scale = d->mean * (d->shape - 1) / d->shape;
    return 0;
}

int
dist_init (dist_t *d, dist_kind_t kind, double mean, double cv,
           char *err, size_t errlen)
{
    memset (d, 0, sizeof *d);
    if ((int) kind < 0 || kind >= DIST_COUNT)
        return tf_error (err, errlen, "distribution kind %d: unknown", (int) kind);
    if (!(isfinite (mean) && mean > 0))
        return tf_error (err, errlen,
                         "mean %g: a mean must be finite and above 0", mean);
    if (!isfinite (cv))
        return tf_error (err, errlen, "cv %g: a cv must be finite", cv);
    d->kind = kind;
    d->mean = mean;
    d->cv = cv;
    switch (kind) {
    case DIST_EXP:
        if (cv != 1)
            return tf_error (err, errlen, "cv %g: an exponential's cv is 1", cv);
        return 0;
    case DIST_ERLANG:
        return init_erlang (d, cv, err, errlen);
    case DIST_H2:
        return init_h2 (d, cv, err, errlen);
    case DIST_GAMMA:
        return init_gamma (d, cv, err, errlen);
    case DIST_PARETO:
    default:
        return init_pareto (d, cv, err, errlen);
    }
}

/*  A standard normal by Box-Muller (the second value is dropped, so that
 *  a draw depends on the rng alone). */
static double
draw_normal (dist_rng_t *rng)
{
    double u1 = dist_rng_uniform (rng);
    double u2 = dist_rng_uniform (rng);
    return sqrt (-2 * log (u1)) * cos (2 * M_PI * u2);
}

/*  A gamma of shape a >= 1 and scale 1 (Marsaglia and Tsang, 2000). */
static double
draw_gamma_ge1 (double a, dist_rng_t *rng)
{
    double dd = a - 1.0 / 3;
    double c = 1 / sqrt (9 * dd);
    for (;;) {
        double x = draw_normal (rng);
        double v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = dist_rng_uniform (rng);
        double x2 = x * x;
        if (u < 1 - 0.0331 * x2 * x2)
            return dd * v;
        if (log (u) < 0.5 * x2 + dd * (1 - v + log (v)))
            return dd * v;
    }
}

/*  A gamma of shape a and scale theta; below shape 1, a draw of shape
 *  a + 1 times u^(1/a), computed in logarithms. */
static double
draw_gamma (double a, double theta, dist_rng_t *rng)
{
    if (a >= 1)
        return theta * draw_gamma_ge1 (a, rng);
    double g = draw_gamma_ge1 (a + 1, rng);
    double u = dist_rng_uniform (rng);
    return exp (log (theta) + log (g) + log (u) / a);
}

double
dist_draw (const dist_t *d, dist_rng_t *rng)
{
    switch (d->kind) {
    case DIST_EXP:
        return -d->mean * log (dist_rng_uniform (rng));
    case DIST_ERLANG: {
        /*  A sum of logarithms: a product of up to 1,000 uniforms could
         *  underflow. */
        double s = 0;
        for (int i = 0; i < d->k; i++)
            s += log (dist_rng_uniform (rng));
        return -d->mean / d->k * s;
    }
    case DIST_H2: {
        double m = dist_rng_uniform (rng) < d->p1 ? d->mean1 : d->mean2;
        return -m * log (dist_rng_uniform (rng));
    }
    case DIST_GAMMA:
        return draw_gamma (d->shape, d->scale, rng);
    case DIST_PARETO:
    default:
        return d->scale * exp (-log (dist_rng_uniform (rng)) / d->shape);
    }
}
