/*  join — nodes offered during a simulated run (docs/simulate.md,
 *  "Adaptation"; docs/adapt.md, "Grow"). See sim_int.h.
 *
 *  As in a run, the decision is the controller's: at each offered node's
 *  platform second the offers' actor weighs it through place_offer
 *  (controller/join.h), with the run's inputs: the tasks not yet
 *  recorded, the root's live bound, each node's vacant slots left and
 *  the start-up; what it decided goes to results.json's "joins" and to
 *  stderr as the controller says it. An admitted node is attached to the
 *  run's tree (config_attach: the next index, as in a run) and its actor
 *  starts after the start-up on the host of the vacant slot it takes;
 *  it asks its parent (ATTACH, on that slot's link), the parent takes it
 *  into the slot as node/attach.c does (config_fill_vacant,
 *  setup_child_info, core_attach_child, the subtree bound, interference
 *  and adaptation told), answers ATTACHED, and the node STARTs.
 *
 *  The cores' view. In a run each node keeps config_joins vacant child
 *  slots in its own copy of the config, and a joined node keeps as many.
 *  A simulation's cores share one view: cfg's nodes (their facts
 *  borrowed) with every node's vacant slots after them, and under each
 *  slot the slots the node taking it would keep, down to what the offers
 *  could still fill (a node that is the d-th of a chain of joined nodes
 *  can take at most noffered - d more). Only a run with offered nodes
 *  has a view; the platform has a host and a link for each of its slots
 *  (sim/platform.h), idle until taken.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/join.h"
#include "node/adaptor.h"
#include "node/setup.h"
#include "node/subtree.h"
#include "sim/platform.h"
#include "sim/s4u.h"
#include "sim/sim_int.h"

/*  A node's start-up, simulated seconds (seconds of the emulated run),
 *  from its admission to its START: what emulated runs of it_grow's tree
 *  measure on this machine, 0.011 to 0.017 s (a process spawned, its
 *  handshake, its parent's ATTACHED); the cost an offer is weighed
 *  against, as a run weighs the start-up it measured. */
#define SIM_JOIN_STARTUP_S 0.015

typedef struct sim_join sim_join_t;

struct sim_join {
    config_t *view;          /* the cores' view */
    int real;                /* cfg's nodes at the start: the view's first */
    int *node_of;            /* per view node: its node in cfg, -1 none yet */
    int *first_vacant;       /* per view node: its first vacant slot */
    int *taken;              /* per view node: its vacant slots given */
    int *vacant_left;        /* per cfg node: place_choose's vacant_left */
    uint8_t *offered;        /* per offered node: weighed already */
    place_live_t live;       /* the live factor offers are weighed with */
};

/*  --- the view ------------------------------------------------------------- */

/*  Vacant slots under a node that keeps k, and under those, recursively. */
static long
slots_under (int k)
{
    return k <= 0 ? 0 : k * (1 + slots_under (k - 1));
}

/*  k vacant slots under view node p, each with k - 1 under it. */
static void
add_slots (sim_join_t *j, int p, int k)
{
    if (k <= 0)
        return;
    int first = j->view->nnodes;
    j->first_vacant[p] = j->view->nodes[p].nchildren;
    config_add_vacant (j->view, p, k);
    for (int i = first; i < first + k; i++)
        add_slots (j, i, k - 1);
}

static void
free_view (sim_join_t *j)
{
    config_t *v = j->view;
    if (!v)
        return;
    for (int i = 0; i < v->nnodes; i++) {
        if (i < j->real)
            free (v->nodes[i].children);   /* the rest is cfg's */
        else
            config_node_clear (&v->nodes[i]);
    }
    free (v->nodes);
    free (v);
    j->view = NULL;
}

int
sim_join_prepare (sim_t *s, char *err, size_t errlen)
{
    config_t *cfg = s->cfg;
    int n = cfg->nnodes, k = cfg->noffered;
    if (k == 0) {
        s->view = cfg;   /* no slot kept: nothing costs more than without */
        return 0;
    }
    long total = n + (long) n * slots_under (k);
    if (total > CONFIG_MAX_NODES)
        return tf_error (err, errlen, "%s: %d nodes offered to a tree of %d: the vacant "
                         "child slots they may take are %ld nodes, more than the %d a "
                         "simulation holds", cfg->path, k, n, total - n, CONFIG_MAX_NODES);
    sim_join_t *j = xcalloc (1, sizeof *j);
    j->real = n;
    j->view = xmalloc (sizeof *j->view);
    *j->view = *cfg;   /* its facts borrowed; its nodes its own, room for every slot */
    j->view->capacity = (int) total;
    j->view->nodes = xcalloc ((size_t) total, sizeof *j->view->nodes);
    for (int i = 0; i < n; i++) {
        j->view->nodes[i] = cfg->nodes[i];
        j->view->nodes[i].children = xcalloc ((size_t) cfg->nodes[i].nchildren + 1,
                                              sizeof (int));
        if (cfg->nodes[i].nchildren)   /* a leaf's children may be NULL */
            memcpy (j->view->nodes[i].children, cfg->nodes[i].children,
                    (size_t) cfg->nodes[i].nchildren * sizeof (int));
    }
    j->node_of = xcalloc ((size_t) total, sizeof *j->node_of);
    j->first_vacant = xcalloc ((size_t) total, sizeof *j->first_vacant);
    j->taken = xcalloc ((size_t) total, sizeof *j->taken);
    for (int i = 0; i < n; i++)
        add_slots (j, i, k);
    for (int i = 0; i < total; i++)
        j->node_of[i] = i < n ? i : -1;
    /*  As the session counts them: the offered nodes each node may take. */
    j->vacant_left = xcalloc ((size_t) cfg->capacity + 1, sizeof *j->vacant_left);
    for (int i = 0; i < n; i++)
        j->vacant_left[i] = config_joins (cfg);
    j->offered = xcalloc ((size_t) k, 1);
    s->join = j;
    s->view = j->view;
    return 0;
}

void
sim_join_free (sim_t *s)
{
    sim_join_t *j = s->join;
    if (!j)
        return;
    free_view (j);
    free (j->node_of);
    free (j->first_vacant);
    free (j->taken);
    free (j->vacant_left);
    free (j->offered);
    free (j);
    s->join = NULL;
    s->view = s->cfg;
}

int
sim_join_node_of (const sim_t *s, int at)
{
    if (!s->join)
        return at;
    return at >= 0 && at < s->join->view->nnodes ? s->join->node_of[at] : -1;
}

int
sim_join_vacant (const sim_node_t *n, int c)
{
    const config_t *v = n->sim->view;
    return c > 0 && v->nodes[v->nodes[n->at].children[c - 1]].vacant;
}

/*  --- messages --------------------------------------------------------------- */

/*  An ATTACH, ATTACHED or STOP on mailbox box: an envelope's bytes. */
static void
post (const sim_t *s, sg_mailbox_t box, sim_msg_kind_t kind, int node)
{
    sim_msg_t *m = xcalloc (1, sizeof *m);
    m->kind = kind;
    m->node = node;
    long bytes = llround (SIM_ENVELOPE_BYTES * s->cfg->platform.payload_scale);
    sg_comm_detach (sg_mailbox_put_init (box, m, bytes), free);
}

/*  The parent's side, node/attach.c's take_slot: view node v, in n's
 *  child slot, becomes node g of the run. Returns 0, or -1 with err. */
static int
take_slot (sim_node_t *n, int slot, int v, int g, char *err, size_t errlen)
{
    sim_t *s = n->sim;
    const config_node_t *c = &s->cfg->nodes[g];
    if (config_fill_vacant (s->join->view, v, c, err, errlen) < 0)
        return -1;
    core_child_info_t info = setup_child_info (s->view, v, setup_bps_per_mbps (s->view));
    info.node = (uint32_t) v;   /* the cores number the view */
    if (core_attach_child (n->core, slot, &info, err, errlen) < 0)
        return -1;
    if (n->subtree)
        subtree_attach (n->subtree, slot, c->link_mbps, c->ir_send);
    if (n->emul)
        emul_set_ir_send (n->emul, slot, c->ir_send);
    n->send[slot] = c->ir_send;
    if (n->ad)
        adaptor_attach (n->ad, slot, c->link_mbps, c->ir_send, c->compute_rate);
    s->nodes[g].slot = slot;
    return 0;
}

void
sim_join_attach (sim_node_t *n, int c, const sim_msg_t *m)
{
    sim_t *s = n->sim;
    int v = s->view->nodes[n->at].children[c - 1];
    char err[TF_ERRLEN];
    if (n->stopping || !s->join || m->node < 0 || m->node >= s->cfg->nnodes
        || sim_join_node_of (s, v) != m->node || !s->view->nodes[v].vacant) {
        post (s, n->out[c], SIM_MSG_STOP, m->node);   /* not taken: it does not join */
        return;
    }
    if (take_slot (n, c - 1, v, m->node, err, sizeof err) != 0) {
        sim_fail (s, "%s cannot take %s as a child: %s", s->cfg->nodes[n->index].name,
                  s->cfg->nodes[m->node].name, err);
        return;
    }
    post (s, n->out[c], SIM_MSG_ATTACHED, m->node);
}

/*  --- the joining node ------------------------------------------------------- */

/*  The root's live bound in model (tasks/s), as its STATS gives the
 *  controller; NaN until the tree computed one. */
static double
live_bound (const sim_t *s, int model)
{
    const sim_node_t *root = &s->nodes[s->cfg->root];
    if (!root->subtree || !subtree_first_bounds (root->subtree))
        return NAN;
    return subtree_bounds (root->subtree)[model];
}

/*  Its link with the parent, both ways, and its send limit, at its own
 *  rates. */
static void
set_links (sim_node_t *n)
{
    sim_t *s = n->sim;
    const config_node_t *me = &s->cfg->nodes[n->index];
    double bps = setup_bps_per_mbps (s->cfg);
    char name[64];
    snprintf (name, sizeof name, "l%d_UP", n->at);
    sg_link_t way[2] = {s->down[n->at], sg_link_by_name (name)};
    for (int k = 0; k < 2; k++)
        if (way[k]) {
            sg_link_set_bandwidth (way[k], me->link_mbps * bps);
            sg_link_set_latency (way[k], sim_platform_latency (s->cfg, n->index));
        }
    if (me->send_limit_mbps > 0 && s->limit[n->at])
        sg_link_set_bandwidth (s->limit[n->at], me->send_limit_mbps * bps);
}

/*  ATTACH to the parent p, on the slot's link; its answer (ATTACHED, or
 *  STOP when the run ended there first), or -1 when p ended without one. */
static int
ask_parent (sim_node_t *n, const sim_node_t *p)
{
    sim_t *s = n->sim;
    char box[64];
    snprintf (box, sizeof box, "m%d-%d", n->at, p->at);
    post (s, sg_mailbox_by_name (box), SIM_MSG_ATTACH, n->index);
    snprintf (box, sizeof box, "m%d-%d", p->at, n->at);
    sim_msg_t *m = NULL;
    sg_comm_t rx = sg_mailbox_get_async (sg_mailbox_by_name (box), (void **) &m);
    while (sim_wait_any_for (&rx, 1, SIM_JOIN_STARTUP_S) < 0)
        if (p->done || s->failed) {
            sim_comm_cancel (rx);
            sg_comm_unref (rx);
            return -1;
        }
    sg_comm_unref (rx);
    int kind = m->kind;
    free (m);
    return kind;
}

/*  A joining node's actor: its start-up, its parent's slot, then a node
 *  like the others (sim_node_main). */
static void
joining_main (int argc, char **argv)
{
    sim_node_t *n = sg_actor_self_get_data ();
    sim_t *s = n->sim;
    const config_node_t *me = &s->cfg->nodes[n->index];
    sim_node_t *p = &s->nodes[me->parent];
    sg_actor_sleep_for (SIM_JOIN_STARTUP_S);
    while (!p->core && !s->finished && !s->failed)   /* a parent that joins too */
        sg_actor_sleep_for (SIM_JOIN_STARTUP_S);
    int answer = -1;
    if (!s->finished && !s->failed && !p->done) {
        set_links (n);
        answer = ask_parent (n, p);
    }
    if (answer != SIM_MSG_ATTACHED) {
        if (!s->failed)
            sim_say (s, "%s did not join: the run ended first", me->name);
        return;
    }
    char err[TF_ERRLEN];
    if (sim_node_build (s, n->index, n->at, err, sizeof err) != 0) {
        sim_fail (s, "%s cannot join: %s", me->name, err);
        return;
    }
    results_set_joined (s->results, n->index, simgrid_get_clock ());
    sim_say (s, "%s joined under %s", me->name, s->cfg->nodes[me->parent].name);
    sim_node_main (argc, argv);
}

/*  --- the controller's side ---------------------------------------------------- */

/*  Node (offered) admitted under parent: attached to cfg, given the
 *  parent's next vacant slot, its actor started there. */
static void
admit (sim_t *s, const config_node_t *node, int parent, double live)
{
    sim_join_t *j = s->join;
    char err[TF_ERRLEN];
    int g = config_attach (s->cfg, node, parent, err, sizeof err);
    if (g < 0) {
        sim_say (s, "%s cannot join: %s", node->name, err);
        return;
    }
    int pat = s->nodes[parent].at;
    int slot = j->first_vacant[pat] + j->taken[pat];
    if (slot >= j->view->nodes[pat].nchildren) {
        sim_fail (s, "%s has no vacant slot left for %s", node->name, s->cfg->nodes[parent].name);
        return;
    }
    j->taken[pat]++;
    j->vacant_left[parent]--;
    j->vacant_left[g] = config_joins (s->cfg);
    place_live_admitted (&j->live, live);
    int v = j->view->nodes[pat].children[slot];
    j->node_of[v] = g;
    sim_node_t *n = &s->nodes[g];
    *n = (sim_node_t){.sim = s, .index = g, .at = v, .slot = slot, .joined = 1};
    char host[64];
    snprintf (host, sizeof host, "n%d", v);
    n->host = sg_host_by_name (host);
    sg_actor_t a = sg_actor_init (node->name, n->host);
    sg_actor_set_data (a, n);
    sg_actor_start_ (a, joining_main, 0, NULL);
}

/*  Weigh offered node k now, as the session's offer does. */
static void
offer (sim_t *s, int k)
{
    sim_join_t *j = s->join;
    config_node_t *node = &s->cfg->offered[k];
    uint64_t total = config_bag_size (s->cfg);
    double remaining = s->recorded < total ? (double) (total - s->recorded) : 0;
    double ts = s->cfg->platform.time_scale, now = simgrid_get_clock ();
    int model = results_policy_model (s->cfg);
    double live = live_bound (s, model);
    char err[TF_ERRLEN];
    place_t p;
    if (place_offer (s->cfg, node, j->vacant_left, model, remaining, SIM_JOIN_STARTUP_S * ts,
                     live, &j->live, &p, err, sizeof err) != 0) {
        sim_say (s, "%s cannot be placed: %s", node->name, err);
        node->index = -2;
        return;
    }
    json_t *entry = place_json (s->cfg, node, &p, now * ts);
    if (entry)
        results_note_join (s->results, entry);
    sim_say (s, "%s %s", node->name, p.why);
    node->index = -2;   /* weighed; config_attach numbers the node itself */
    if (p.admit)
        admit (s, node, p.parent, live);
}

/*  The offers' actor, a daemon (it ends with the run): each offered node
 *  at its platform second, the earliest first (the config's order among
 *  equals, as the session's ticks take them), none once the run is
 *  finished. */
static void
offers_main (int argc, char **argv)
{
    (void) argc;
    (void) argv;
    sim_t *s = sg_actor_self_get_data ();
    const config_t *cfg = s->cfg;
    for (;;) {
        int next = -1;
        for (int k = 0; k < cfg->noffered; k++)
            if (!s->join->offered[k]
                && (next < 0 || cfg->offered[k].joins_at_s < cfg->offered[next].joins_at_s))
                next = k;
        if (next < 0)
            return;
        double at = cfg->offered[next].joins_at_s / cfg->platform.time_scale;
        if (at > simgrid_get_clock ())
            sg_actor_sleep_until (at);
        if (s->finished || s->failed)
            return;
        s->join->offered[next] = 1;
        offer (s, next);
    }
}

void
sim_join_start (sim_t *s)
{
    if (!s->join)
        return;
    sg_actor_t a = sg_actor_init ("offers", s->nodes[s->cfg->root].host);
    sg_actor_set_data (a, s);
    sg_actor_start_ (a, offers_main, 0, NULL);
    sg_actor_daemonize (a);
}
