/*  sim_int — the simulation's state, shared by sim/actor.c (what a node
 *  does), sim/engine.c (its engines), sim/adapt.c (its adaptation) and
 *  sim/run.c (the run around them) and nothing else.
 */
#ifndef TF_SIM_INT_H
#define TF_SIM_INT_H

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>

#include "node/core.h"
#include "node/emulate.h"
#include "overlay/bound.h"
#include "overlay/trace.h"
#include "overlay/util.h"
#include "sim/sim.h"

/*  Times closer than this are the same (SimGrid's timing precision). */
#define SIM_EPSILON 1e-9

/*  What a message is: a core's event, an adapting child's SUBTREE (its
 *  subtree's bound and live rates, node/adaptor.h), or the end of the
 *  run going down the tree (STOP: the parent sends nothing more) and
 *  back up (BYE: nor does the child), so that every node stops with
 *  nothing in flight. */
typedef enum {
    SIM_MSG_EVENT = 0, SIM_MSG_STOP, SIM_MSG_BYE, SIM_MSG_SUBTREE,
    /*  A joining node to the parent it was placed under, on the link of
     *  the vacant slot it takes (ATTACH: take me; sim/join.c), and the
     *  parent's answer (ATTACHED: the slot is mine, START may come). */
    SIM_MSG_ATTACH, SIM_MSG_ATTACHED
} sim_msg_kind_t;

/*  One message between two nodes: the event it becomes at its
 *  destination, with its borrowed arrays copied in; or a SUBTREE. */
typedef struct {
    sim_msg_kind_t kind;
    double bounds[BOUND_MODEL_COUNT];   /* SUBTREE: per model, tasks/s */
    double compute, ir_recv;            /* SUBTREE: the child's live ones */
    int node;                           /* ATTACH: the joining node (cfg) */
    core_event_t ev;
    uint32_t avoid[CORE_MAX_AVOID];
    core_done_t done[];      /* ev.ndone entries */
} sim_msg_t;

/*  One of a node's engines: a synthetic task's, or a command slot's. */
typedef struct {
    int busy;
    int interfered;          /* a synthetic task under emulated interference */
    double work;             /* seconds left at full speed */
    double work0, units;     /* its whole work and its units */
    double speed;            /* now, in (0, 1] */
    double last;             /* when work was last taken */
    double end;              /* when it finishes at this speed */
    core_event_t done;       /* its COMPUTED */
} sim_engine_t;

typedef struct sim sim_t;

/*  An adapting parent's measure of a child's link (sim/adapt.c): the
 *  transfers the link alone carried, as the emulation's paced core counts
 *  them (node/xfer_pace.c), from a transfer's first chunk sent to its
 *  last delivered less the link's latency, leaving out any transfer a
 *  chunk of which shared the parent's send limit with so much else that
 *  the link could not have run at its own rate. */
typedef struct {
    uint64_t task;           /* the transfer being measured, */
    int on;                  /* if any: under way, */
    int held;                /* some chunk of it held by the send limit, */
    double start, bytes;     /* since when (simulated s), physical bytes */
} sim_linkmeter_t;

/*  A node: its core, its channels (0: from and to its parent; 1 + k:
 *  child k), its engines. */
typedef struct {
    sim_t *sim;
    int index, slot;         /* in the config; its slot at its parent */
    int at;                  /* in the cores' view (sim_t.view): its
                                platform names, its core's node number */
    int joined;              /* it joined during the run (sim/join.c) */
    double speed;            /* its engines' full speed, units/s */
    int nchan;
    core_t *core;
    sg_host_t host;
    sg_mailbox_t *in, *out;  /* per channel; the root's channel 0 NULL */
    sg_comm_t *rx;           /* per channel: the receive under way */
    sim_msg_t **rx_data;
    sg_comm_t *comms;        /* scratch, nchan entries: the receives */
    int *chan;               /* waited for, and their channels */
    double *send;            /* scratch: the rate to each child */
    sim_engine_t *eng;
    int neng;
    emul_t *emul;            /* NULL: no interference at this node */
    double emul_speed;       /* its factor, as last sampled */
    struct bgload *bg;       /* its background load's model, or NULL */
    double load_factor;      /* the model's factor now (1: none) */
    int comm_j;              /* the model's communicating contenders */
    double down_bps;         /* the link from the parent's own rate */
    sg_link_t down;          /* its link from its parent, the way down;
                                NULL on the root */
    sg_link_t *kid_down;     /* per child: the child's, the way down */
    double sample_at;        /* next speed sample, < 0 none */
    double busy_s;           /* simulated seconds an engine computed */
    double busy_since;       /* when the engines last went from idle */
    int running;             /* engines busy */
    int stopping;            /* STOP came (the root: FINISHED did) */
    int byes_due;            /* children whose BYE has not come */
    int done;                /* its BYE is sent: the actor ends */
    uint8_t *closed;         /* per channel: its last message came */
    struct trace *trace;     /* its timeline (--trace), or NULL */
    struct observe *observe; /* its samples (node/observe.h) */
    double units_done;       /* compute units of the tasks it finished */
    double *observed;        /* scratch, nchan entries: bytes in, out */
    /*  An adapting run (sim/adapt.c): the subtree bound, the adaptation
     *  (NULL both when the run does not adapt), when the fit was last
     *  solved and over how many samples, the changes and actions said. */
    struct subtree *subtree;
    struct adaptor *ad;
    double fit_at;
    long fit_n;
    int said_changes, said_actions;
    uint8_t *left;           /* per channel: a child shrunk away, STOP sent */
    int left_due;            /* of them, those whose BYE has not come */
    sg_link_t limit;         /* its send limit's link, or NULL */
    sim_linkmeter_t *meter;  /* per child: its link's transfer under way, */
    double *link_mb, *link_s;   /* and what it carried alone, cumulative:
                                   platform MB in platform seconds */
} sim_node_t;

struct sim {
    config_t *cfg;           /* the run's tree, as the results see it:
                                the nodes that join are attached to it */
    const config_t *view;    /* the cores' tree: cfg, or with offered
                                nodes cfg with the vacant child slots
                                every node keeps for them (sim/join.c) */
    struct sim_join *join;   /* the offers (sim/join.c), or NULL */
    const struct sim_commands *commands;   /* NULL: no command tasks */
    results_t *results;
    sim_node_t *nodes;
    sg_link_t *down;         /* per view node: its link from its parent,
                                down */
    sg_link_t *limit;        /* per view node: its send limit's link, or
                                NULL */
    bound_tree_t *plan;      /* the config's multi-port bound, computed
                                once for every core (node/setup.h) */
    sg_bar_t barrier;
    int finished, failed;
    double finished_at;
    char error[TF_ERRLEN];
    uint64_t events, messages, recorded;
    int progress;            /* 0 none, 1 a line in place, 2 plain lines */
    int tracing;             /* every node keeps its timeline */
    double wall0, shown;     /* wall clock at the start, last progress */
};

/*  sim/engine.c: n's engines' speeds taken to now (its background
 *  load's model followed, a due interference sample taken); the next
 *  time they need it (an engine's end, a sample, the background's next
 *  event; < 0 none); a free engine starting action a's task, whose
 *  completion is done (-1 when every engine is busy); and one engine
 *  done by now, its COMPUTED into *done (0 when none is). */
void sim_engines_follow (sim_node_t *n, double now);
double sim_engines_wake (const sim_node_t *n);
int sim_engine_start (sim_node_t *n, const core_action_t *a, core_event_t done,
                      double now);
int sim_engine_finished (sim_node_t *n, double now, core_event_t *done);

/*  sim/engine.c: a sample of n's counters when one is due (every sample
 *  interval, at the node's own events: an idle node with nothing
 *  happening takes none, and its next interval is longer). */
void sim_engines_sample (sim_node_t *n, double now);

/*  The last sample, when the run ends for n (STOP, or FINISHED on the
 *  root): its samples then cover all it computed, as a node's do. */
void sim_engines_sample_last (sim_node_t *n, double now);

/*  sim/actor.c: feed n's core one event now and carry out what it says
 *  (an event the core refuses stops the simulation); a SUBTREE to n's
 *  parent (none from the root); child slot leaves the run: STOP to it,
 *  what it still sends dropped, its BYE awaited before n's own. */
void sim_handle (sim_node_t *n, core_event_t ev);
void sim_post_subtree (sim_node_t *n, const double *bounds, double compute,
                       double ir_recv);
void sim_child_leaves (sim_node_t *n, int slot);

/*  sim/adapt.c, an adapting run (each a no-op otherwise; docs/adapt.md,
 *  docs/simulate.md): n's adaptation made (node/adaptor.h), its driver
 *  this actor; after START, a leaf's subtree bound goes up; a sample of
 *  n at now (its engines' cumulative units, n->observed just taken), the
 *  fit solved when due; child slot's SUBTREE m; the changes and actions
 *  into n's report; freed. Each says the changes and actions it brought
 *  on stderr as run's controller does. */
void sim_adapt_new (sim_node_t *n);
void sim_adapt_begin (sim_node_t *n);
void sim_adapt_sample (sim_node_t *n, double now, double units);
void sim_adapt_subtree (sim_node_t *n, int slot, const sim_msg_t *m);
/*  sim/adapt.c, an adapting run: n sent chunk ev to child slot; chunk ev
 *  from its parent reached kid (the parent's measure of their link). */
void sim_adapt_chunk_sent (sim_node_t *n, int slot, const core_event_t *ev);
void sim_adapt_chunk_arrived (sim_node_t *kid, const core_event_t *ev);
void sim_adapt_report (const sim_node_t *n, proto_stats_t *st);
void sim_adapt_free (sim_node_t *n);

/*  The actor of every node (sg_actor data: its sim_node_t); a node
 *  that joined starts in it once its parent took it (sim/join.c). */
void sim_node_main (int argc, char **argv);

/*  sim/run.c: node (its index in cfg), at view index `at`: its core,
 *  channels, engines, adaptation and samples; no actor yet. Returns 0,
 *  or -1 with err. */
int sim_node_build (sim_t *s, int node, int at, char *err, size_t errlen);

/*  sim/join.c, nodes offered to the run (docs/simulate.md,
 *  "Adaptation"): the cores' view (s->view; cfg itself when nothing is
 *  offered), s->down and s->limit's size; the offers' actor, a daemon
 *  that offers each node at its second as a run's controller does; a
 *  view index's node in cfg (-1: a vacant slot); whether channel c of
 *  n is a vacant slot; child slot's ATTACH m at n (the slot taken,
 *  ATTACHED back); freed. */
int sim_join_prepare (sim_t *s, char *err, size_t errlen);
void sim_join_start (sim_t *s);
int sim_join_node_of (const sim_t *s, int at);
int sim_join_vacant (const sim_node_t *n, int c);
void sim_join_attach (sim_node_t *n, int c, const sim_msg_t *m);
void sim_join_free (sim_t *s);

/*  sim/adapt.c: a line on stderr as the controller writes it (the
 *  progress line cleared first). */
void sim_say (const sim_t *s, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/*  The progress line on stderr, when the run shows one: every
 *  SIM_PROGRESS_S of wall time (rewritten in place on a terminal), and
 *  at the end (last set). */
#define SIM_PROGRESS_S 1.0
void sim_progress (sim_t *s, double now, int last);

/*  Stop the run with an error (the first one is kept). */
void sim_fail (sim_t *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
