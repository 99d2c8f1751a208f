/*  place — where a node offered to a running run joins its tree, and
 *  whether it pays (join.h, place_choose). Each parent with a vacant
 *  child slot is tried: the node attached there, the tree's bound
 *  computed (overlay/bound.h), the node detached. The rule is the gate's
 *  (node/gate.h), written out: the controller does not link node/.
 */
#include "controller/join.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "overlay/bound.h"
#include "overlay/util.h"

/*  The significant digits a bound is printed with, and the most it gets
 *  when two bounds would otherwise print the same. */
#define FIG_DIGITS 3
#define FIG_DIGITS_MAX 9

/*  cfg's bound in model for app, into *bound. */
static int
bound_of (const config_t *cfg, bound_model_t model, const bound_app_t *app, double *bound,
          char *err, size_t errlen)
{
    bound_tree_t *tree = bound_tree_new (cfg, model, app, err, errlen);
    if (!tree)
        return -1;
    *bound = tree->bound;
    bound_tree_destroy (&tree);
    return 0;
}

/*  The bound with node under parent p, into *after; cfg as it was after. */
static int
try_parent (config_t *cfg, const config_node_t *node, int p, bound_model_t model,
            const bound_app_t *app, double *after, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    if (config_attach (cfg, node, p, why, sizeof why) < 0)
        return tf_error (err, errlen, "cannot try %s under %s: %s", node->name,
                         cfg->nodes[p].name, why);
    int rc = bound_of (cfg, model, app, after, err, errlen);
    if (config_detach_last (cfg) < 0)
        return tf_error (err, errlen, "cannot detach %s again", node->name);
    return rc;
}

/*  The candidate parents, lo .. hi - 1: the fixed one alone, or every
 *  node. Returns 0, or -1 with the reason in why when there is none. */
static int
candidates (const config_t *cfg, const config_node_t *node, int *lo, int *hi, char *why,
            size_t whylen)
{
    *lo = 0;
    *hi = cfg->nnodes;
    if (cfg->nnodes >= cfg->capacity)
        return tf_error (why, whylen, "not admitted: the run has room for no more nodes");
    if (!node->parent_name)
        return 0;
    *lo = config_find_node (cfg, node->parent_name);
    *hi = *lo + 1;
    if (*lo < 0)
        return tf_error (why, whylen, "not admitted: its parent %s is not a node of the run",
                         node->parent_name);
    return 0;
}

/*  The parent whose bound is highest (the earliest of equals) into
 *  out->parent and out->bound_after (unscaled); when none has room,
 *  parent -1 and why says so. Returns -1 when a bound fails. */
static int
best_parent (config_t *cfg, const config_node_t *node, const int *vacant_left,
             bound_model_t model, const bound_app_t *app, place_t *out, char *err,
             size_t errlen)
{
    int lo, hi;
    out->parent = -1;
    if (candidates (cfg, node, &lo, &hi, out->why, sizeof out->why) < 0)
        return 0;
    for (int p = lo; p < hi; p++) {
        double after;
        if (vacant_left[p] <= 0 || cfg->nodes[p].vacant)
            continue;
        if (try_parent (cfg, node, p, model, app, &after, err, errlen) < 0)
            return -1;
        if (out->parent < 0 || after > out->bound_after) {
            out->parent = p;
            out->bound_after = after;
        }
    }
    if (out->parent < 0 && node->parent_name)
        snprintf (out->why, sizeof out->why,
                  "not admitted: its parent %s has no vacant child slot", node->parent_name);
    else if (out->parent < 0)
        snprintf (out->why, sizeof out->why,
                  "not admitted: no node of the run has a vacant child slot");
    return 0;
}

/*  a and b printed with FIG_DIGITS significant digits, more if they would
 *  otherwise read the same while they differ. */
static void
figures (double a, double b, char *sa, char *sb, size_t len)
{
    for (int digits = FIG_DIGITS; digits <= FIG_DIGITS_MAX; digits++) {
        snprintf (sa, len, "%.*g", digits, a);
        snprintf (sb, len, "%.*g", digits, b);
        if (a == b || strcmp (sa, sb) != 0)
            return;
    }
}

/*  out->why for a decision: the place, the bounds, the gain and the cost. */
static void
say_why (const config_t *cfg, const config_node_t *node, double remaining, int always,
         place_t *out)
{
    char now[32], after[32], change[80];
    const char *parent = cfg->nodes[out->parent].name;
    figures (out->bound_now, out->bound_after, now, after, sizeof now);
    if (out->admit)
        snprintf (out->why, sizeof out->why,
                  "joins under %s%s: bound %s -> %s tasks/s, saves %.1f s on %.0f tasks "
                  "%s start-up %.1f s", parent,
                  always ? " because the run admits every offer" : "", now, after,
                  out->gain_s, remaining, always ? "against" : ">", out->cost_s);
    if (out->admit)
        return;
    if (out->bound_after <= out->bound_now)
        snprintf (change, sizeof change, "stays %s", now);
    else
        snprintf (change, sizeof change, "goes %s -> %s", now, after);
    snprintf (out->why, sizeof out->why,
              "not admitted: under %s (%s) the bound %s tasks/s (gain %.1f s on %.0f tasks "
              "<= start-up %.1f s)", node->parent_name ? "its parent" : "the best parent",
              parent, change, out->gain_s, remaining, out->cost_s);
}

/*  Weissman's rule's gain: remaining x (1/now - 1/after), seconds. A
 *  node added can be left unused, so a bound after below the bound now
 *  is rounding: no gain. */
static double
gain_of (double remaining, double now, double after)
{
    if (remaining == 0 || after <= now)
        return 0;
    if (!(now > 0))
        return INFINITY;
    return remaining * (1 / now - 1 / after);
}

/*  The arguments' limits (join.h); err names the first one broken. */
static int
check_input (const config_t *cfg, const config_node_t *node, const int *vacant_left,
             int model, double remaining, double cost_s, const place_t *out, char *err,
             size_t errlen)
{
    if (!cfg || !node || !node->name || !out)
        return tf_error (err, errlen, "place: no config, node or answer");
    if (!vacant_left)
        return tf_error (err, errlen, "place %s: no vacant slot counts", node->name);
    if (model < 0 || model >= BOUND_MODEL_COUNT)
        return tf_error (err, errlen, "place %s: bound model %d is not a model", node->name,
                         model);
    if (!isfinite (remaining) || remaining < 0)
        return tf_error (err, errlen, "place %s: remaining tasks %g (must be >= 0)",
                         node->name, remaining);
    if (!isfinite (cost_s) || cost_s < 0)
        return tf_error (err, errlen, "place %s: start-up cost %g s (must be >= 0)",
                         node->name, cost_s);
    return 0;
}

int
place_choose (config_t *cfg, const config_node_t *node, const int *vacant_left,
              int model, double remaining, double cost_s, double live_factor,
              int always, place_t *out, char *err, size_t errlen)
{
    if (check_input (cfg, node, vacant_left, model, remaining, cost_s, out, err, errlen) < 0)
        return -1;
    double factor = isfinite (live_factor) && live_factor > 0 ? live_factor : 1;
    bound_app_t app = bound_app_of (cfg);
    memset (out, 0, sizeof *out);
    out->cost_s = cost_s;
    if (bound_of (cfg, model, &app, &out->bound_now, err, errlen) < 0
        || best_parent (cfg, node, vacant_left, model, &app, out, err, errlen) < 0)
        return -1;
    out->bound_now *= factor;
    if (out->parent < 0) {
        out->bound_after = out->bound_now;
        return 0;
    }
    out->bound_after *= factor;
    out->gain_s = gain_of (remaining, out->bound_now, out->bound_after);
    out->admit = always || out->gain_s > cost_s;
    say_why (cfg, node, remaining, always, out);
    return 0;
}
