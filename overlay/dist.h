/*  dist — seeded random draws for background load (docs/model.md): a small
 *  PRNG and the distributions a job stream's arrivals and CPU demands
 *  follow, each given by its mean and coefficient of variation (cv).
 *
 *  The generator is xoshiro256** (Blackman and Vigna), its state filled
 *  from the seed by splitmix64 (Steele, Lea and Flood), both public-domain
 *  algorithms written here from their published definitions: the same
 *  seed gives the same sequence on every machine. Everything is plain
 *  structs the caller owns: no global state, no allocation.
 *
 *  Kinds and the cv each can have:
 *    exp     exponential, cv 1;
 *    erlang  Erlang-k, cv = 1/sqrt(k), k an integer from 1 to DIST_ERLANG_K_MAX;
 *    h2      two-phase hyperexponential with balanced means (each phase
 *            holds half the mean), cv above 1 and at most DIST_H2_CV_MAX;
 *    gamma   gamma of shape 1/cv^2, cv from DIST_GAMMA_CV_MIN to DIST_GAMMA_CV_MAX;
 *    pareto  Pareto of shape alpha = 1 + sqrt(1 + 1/cv^2) (above 2, so the
 *            mean and variance exist) and scale mean (alpha - 1) / alpha,
 *            any finite cv above 0.
 */
#ifndef TF_DIST_H
#define TF_DIST_H

#include <stddef.h>
#include <stdint.h>

/*  The largest Erlang k (the smallest Erlang cv is 1/sqrt of it): a draw
 *  costs k logarithms. */
#define DIST_ERLANG_K_MAX 1000
/*  The largest hyperexponential cv: at 100 the rare phase has probability
 *  5e-5 and a mean 10,000 times the distribution's. */
#define DIST_H2_CV_MAX 100.0
/*  The gamma's cv range: shapes from 1e-4 to 1e4. */
#define DIST_GAMMA_CV_MIN 0.01
#define DIST_GAMMA_CV_MAX 100.0

/*  xoshiro256** state. Seed it with dist_rng_seed before use. */
typedef struct {
    uint64_t s[4];
} dist_rng_t;

typedef enum {
    DIST_EXP,
    DIST_ERLANG,
    DIST_H2,
    DIST_GAMMA,
    DIST_PARETO,
    DIST_COUNT
} dist_kind_t;

/*  A distribution ready to draw from: set by dist_init, read-only after. */
typedef struct {
    dist_kind_t kind;
    double mean;
    double cv;
    int k;          /* erlang: phases */
    double p1;      /* h2: probability of the first (short) phase */
    double mean1;   /* h2: the phases' means */
    double mean2;
    double shape;   /* gamma: shape; pareto: alpha */
    double scale;   /* gamma: scale; pareto: xm, the smallest value */
} dist_t;

/*  Seed rng from seed through splitmix64. Every seed, 0 included, gives a
 *  valid (never all-zero) state. */
void dist_rng_seed (dist_rng_t *rng, uint64_t seed);

/*  The next 64 raw bits of rng's sequence. */
uint64_t dist_rng_next (dist_rng_t *rng);

/*  Map 64 raw bits to a double in (0, 1), open at both ends: the top 52
 *  bits k give (k + 0.5) / 2^52, from 2^-53 to 1 - 2^-53. Never 0 or 1,
 *  so log() and division by 1 - u are safe. */
double dist_unit_from_bits (uint64_t bits);

/*  The next uniform draw in (0, 1) (dist_unit_from_bits of the next bits). */
double dist_rng_uniform (dist_rng_t *rng);

/*  The kind's name ("exp", "erlang", "h2", "gamma", "pareto"); "?" for a
 *  value out of range. Borrowed, static. */
const char *dist_kind_str (dist_kind_t kind);

/*  Set *out to the kind named name (the names of dist_kind_str, exact
 *  case). Returns 0, or -1 for NULL or an unknown name (*out untouched). */
int dist_kind_parse (const char *name, dist_kind_t *out);

/*  Check mean and cv for kind and fill d to draw from it. The mean must
 *  be finite and above 0; the cv as the kind allows (above; an exp's
 *  cv is 1: callers pass 1 when the user gave none). Returns 0, or -1
 *  with a message in err naming the parameter, its value and the allowed
 *  range ("cv 0.5: an exponential's cv is 1"); d is then unusable. */
int dist_init (dist_t *d, dist_kind_t kind, double mean, double cv,
               char *err, size_t errlen);

/*  One draw from d, advancing rng. Draws are finite and >= 0; a gamma of
 *  a very small shape (cv above about 10) puts most of its mass below
 *  the smallest double and then returns 0 for those draws. */
double dist_draw (const dist_t *d, dist_rng_t *rng);

#endif
