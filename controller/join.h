/*  join — nodes that join a running run (docs/adapt.md, "Grow").
 *
 *  A node is offered to a run in two ways: the config names it with
 *  joins_at_s (offered at that platform second, emulation's way of
 *  telling a story), or `treefarm join OUT NODE.json` offers it to the
 *  run writing into OUT, through the run's join socket (an ipc endpoint
 *  in OUT, JOIN_SOCKET_NAME, reachable by the run's owner only). Either
 *  way the controller decides whether and where the node joins
 *  (place_choose, pure): under the parent whose bound gains most, when
 *  that gain on the remaining tasks exceeds the node's start-up cost
 *  (Weissman's rule, docs/adapt.md). An admitted node is started like
 *  any other (its host), its parent told (ATTACH) and it then STARTs.
 */
#ifndef TF_JOIN_H
#define TF_JOIN_H

#include <jansson.h>
#include <stddef.h>

#include "overlay/config.h"

/*  The join socket's file name in the results directory: ipc://OUT/.join */
#define JOIN_SOCKET_NAME ".join"
/*  How long `treefarm join` waits for the run's answer, seconds. */
#define JOIN_ANSWER_TIMEOUT 30.0
/*  The largest JOIN request the run reads (a node description). */
#define JOIN_MAX_BYTES 65536

/*  Where and whether a node joins. */
typedef struct {
    int admit;               /* 1: attach it under parent */
    int parent;              /* the parent's index in the config, or -1
                                when no place has room */
    double bound_now;        /* the tree's bound as it is, tasks/s */
    double bound_after;      /* with the node under parent, tasks/s */
    double gain_s;           /* remaining x (1/bound_now - 1/bound_after),
                                platform seconds */
    double cost_s;           /* the node's start-up cost, platform s */
    char why[256];           /* one sentence: what was decided and why */
} place_t;

/*  place.c (pure). Where node (a description: its rates and link, its
 *  parent_name NULL unless the place is fixed, then only that parent is
 *  tried) should join cfg's tree, and whether it pays: each node p with
 *  vacant_left[p] > 0 is tried as its parent (the node attached there in
 *  cfg for the bound, then detached: cfg is left as it was); the best is
 *  the p whose bound in model, for cfg's application, is highest (ties:
 *  the earliest). bound_now is scaled by live_factor (the root's live
 *  bound over its configured one, 1 when unknown) and bound_after alike.
 *  It is admitted when gain_s > cost_s, or always when `always`. Returns
 *  0 with *out filled (admit may be 0), or -1 with a message in err when
 *  the bound cannot be computed. */
int place_choose (config_t *cfg, const config_node_t *node, const int *vacant_left,
                  int model, double remaining, double cost_s, double live_factor,
                  int always, place_t *out, char *err, size_t errlen);

/*  The live factor an offer is weighed with (place_offer), kept across
 *  offers: after an admission, until the root's live bound moves. */
typedef struct {
    int kept;                /* an admission is on its way to the root */
    double live_then;        /* the root's live bound at that admission */
    double factor;           /* the factor taken then */
} place_live_t;

/*  place_offer.c. The live bound (the root's, tasks/s; NaN unknown) over
 *  cfg's bound in model, 1 when unknown; after place_live_admitted, the
 *  factor taken before while live stays what it was then. */
double place_live_factor (const config_t *cfg, int model, double live, place_live_t *keep);
void place_live_admitted (place_live_t *keep, double live);

/*  place_offer.c. Weigh node offered to cfg's run as its controller
 *  does: place_choose scaled by the live factor, admitted as
 *  platform.admit says (gated; always; never: still weighed, *out says
 *  what it would have been). Returns 0 with *out, or -1 with err. */
int place_offer (config_t *cfg, const config_node_t *node, const int *vacant_left, int model,
                 double remaining, double cost_s, double live, place_live_t *keep,
                 place_t *out, char *err, size_t errlen);

/*  place_offer.c. The decision as results.json "joins" keeps it: {node,
 *  at_s (platform s), admitted, parent, bound_now, bound_after, gain_s,
 *  cost_s, why}. A new reference, or NULL. */
json_t *place_json (const config_t *cfg, const config_node_t *node, const place_t *p,
                    double at_s);

#endif
