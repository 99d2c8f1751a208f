/*  place_offer — an offered node weighed as a run's controller weighs it
 *  (join.h): the live factor, platform.admit, place_choose, and the
 *  decision as results.json's "joins" keeps it. The session
 *  (controller/session_join.c) and the simulation (sim/join.c) both
 *  decide through here, so a simulated join is decided as a run's is.
 */
#include "controller/join.h"

#include <math.h>
#include <stdio.h>

#include "overlay/bound.h"
#include "overlay/util.h"

double
place_live_factor (const config_t *cfg, int model, double live, place_live_t *keep)
{
    /*  After an admission the root's live bound is of the tree without
     *  the node (its SUBTREE has yet to climb the tree) while the config
     *  has it: the factor taken before is kept until the live bound
     *  moves. A node that adds nothing never moves it, and then the
     *  factor kept is still the right one. */
    if (keep->kept && (live == keep->live_then || (isnan (live) && isnan (keep->live_then))))
        return keep->factor;
    keep->kept = 0;
    keep->factor = 1;
    if (!isfinite (live) || live <= 0 || model < 0 || model >= BOUND_MODEL_COUNT)
        return 1;
    bound_app_t app = bound_app_of (cfg);
    char err[TF_ERRLEN];
    bound_tree_t *tree = bound_tree_new (cfg, (bound_model_t) model, &app, err, sizeof err);
    double now = tree ? tree->bound : NAN;
    bound_tree_destroy (&tree);
    keep->factor = isfinite (now) && now > 0 ? live / now : 1;
    return keep->factor;
}

void
place_live_admitted (place_live_t *keep, double live)
{
    keep->kept = 1;
    keep->live_then = live;
}

int
place_offer (config_t *cfg, const config_node_t *node, const int *vacant_left, int model,
             double remaining, double cost_s, double live, place_live_t *keep, place_t *out,
             char *err, size_t errlen)
{
    if (!cfg || !keep)
        return tf_error (err, errlen, "place: no config or live factor");
    reclaim_mode_t mode = cfg->platform.admit;
    if (place_choose (cfg, node, vacant_left, model, remaining, cost_s,
                      place_live_factor (cfg, model, live, keep), mode == RECLAIM_ALWAYS,
                      out, err, errlen) != 0)
        return -1;
    if (mode == RECLAIM_NEVER && out->admit) {
        out->admit = 0;
        snprintf (out->why, sizeof out->why, "not admitted: the run admits no offer "
                  "(platform.admit \"never\"); under %s the bound would be %.3g -> %.3g tasks/s",
                  cfg->nodes[out->parent].name, out->bound_now, out->bound_after);
    }
    return 0;
}

json_t *
place_json (const config_t *cfg, const config_node_t *node, const place_t *p, double at_s)
{
    const char *parent = p->parent >= 0 ? cfg->nodes[p->parent].name : NULL;
    return json_pack ("{s:s, s:f, s:b, s:o, s:f, s:f, s:f, s:f, s:s}", "node", node->name,
                      "at_s", at_s, "admitted", p->admit, "parent",
                      parent ? json_string (parent) : json_null (), "bound_now", p->bound_now,
                      "bound_after", p->bound_after, "gain_s", p->gain_s, "cost_s", p->cost_s,
                      "why", p->why);
}
