/*  session_int — the session's state, shared by the files of the session
 *  and by nothing else (tests/test_session.c drives the peer handlers
 *  through it).
 *
 *  The session is three jobs, one file each:
 *    session.c          the loop, the phases, the shutdown, the public face;
 *    session_peers.c    the node processes and their messages: the
 *                       handshake, STATS and REPORT, the losses, the exits;
 *    session_prepare.c  before anything starts: the config, the
 *                       deployment's checks, the node's command line, the
 *                       results directory, the CURVE certificates.
 *  Each owns its part of struct session: the sub-struct named after it.
 */
#ifndef TF_SESSION_INT_H
#define TF_SESSION_INT_H

#include <czmq.h>

#include "controller/deploy.h"
#include "controller/join.h"
#include "controller/session.h"
#include "overlay/curve.h"
#include "overlay/ratelog.h"

/*  How long an unexpected exit waits for the FAIL that may explain it,
 *  during the run (the exit fails it) and at its end (a node lost by its
 *  exit whose FAIL is still on its way). */
#define SESSION_EXIT_EXPLAIN_GRACE 0.3

typedef enum {
    PEER_SPAWNED = 0,        /* process started, no HELLO yet */
    PEER_CONFIGURED,         /* HELLO received, CONFIG sent */
    PEER_BOUND,              /* BOUND received */
    PEER_STARTED,            /* START sent */
    PEER_STOPPED,            /* STOP sent */
    PEER_STATE_COUNT
} peer_state_t;

/*  "spawned", "configured", ...; "?" out of range. */
const char *peer_state_str (peer_state_t state);

typedef enum {
    PHASE_HANDSHAKE = 0,     /* waiting for every HELLO and BOUND */
    PHASE_RUNNING,           /* START sent, until the driver is done */
    PHASE_STOPPING,          /* finished or failed: shut down */
} run_phase_t;

/*  One node as the controller sees it. */
typedef struct {
    const config_node_t *node;
    peer_state_t state;
    int slot;                /* deploy slot, -1 before spawn */
    int exited;              /* its process has been reaped */
    char *endpoint;          /* from BOUND */
    const char *control;     /* the controller's endpoint it connects to,
                                borrowed from session.link.controls */
    uint64_t malformed;      /* its messages the controller refused */
    int lost;                /* declared lost: neither heard nor awaited */
    int left;                /* drained and stopped during the run: its
                                exit and its silence are expected */
    double heard;            /* when its last message came (after START) */
    double fail_awaited;     /* lost by its exit: until when its FAIL may
                                still come to say why (0: not awaited) */
    int moving;              /* session_move.c: ATTACH sent to its new
                                parent, REPARENT not yet sent to it */
    int moved_from;          /* its parent before its last move, plus 1
                                (0: never moved): that parent's LOST
                                about it, or its about that parent, is
                                expected */
} peer_t;

/*  What session_prepare.c sets up: the deployment and the run's keys. */
typedef struct {
    char **node_argv;        /* wrapper words + node binary, NULL-ended */
    int node_argc;
    deploy_t *deploy;
    int curve;               /* CURVE on every socket of the run */
    curve_run_t *certs;      /* the run's certificates, or NULL */
    json_t *keys;            /* every node's public key, for CONFIG */
} session_setup_t;

/*  The control socket and what is said on it (session_peers.c reads,
 *  session.c binds and sends). */
typedef struct {
    zsock_t *control;
    zhashx_t *controls;      /* control bind -> endpoint bound there */
    zpoller_t *poller;
    zactor_t *auth;          /* the control socket's ZAP handler, or NULL */
    char *zap_dir;           /* its store when `treefarm join` may add
                                nodes (OUT/.curve/zap), or NULL */
    uint64_t malformed;      /* messages refused, all peers */
    ratelog_t refusals;      /* how often refusals are said */
} session_link_t;

/*  When things happened (tf_now). */
typedef struct {
    double created;          /* session_new, before the checks */
    double launch;           /* processes spawned */
    double handshake;        /* last HELLO or BOUND */
    double start;            /* START sent, 0 before */
    double ping;             /* the last PINGs went out */
    double end;              /* finished, or the failure */
} session_times_t;

/*  session_join.c: nodes that join the running tree (controller/join.h). */
typedef struct {
    int on;                  /* an adapting run that may take nodes in */
    int tree;                /* nodes in the tree at START: a node at an
                                index past them joined */
    int *vacant;             /* per node (capacity): its vacant slots left */
    zsock_t *sock;           /* the join socket (`treefarm join`), or NULL */
    uint32_t by_command;     /* nodes `treefarm join` offered and admitted */
    double startup_s;        /* a node's start-up cost, wall seconds: the
                                last joined node's, from its spawn to its
                                START; before any, the tree's from the
                                spawn to START (an upper bound) */
    double *spawned;         /* per node (capacity): when a joining node
                                was spawned (tf_now) */
    place_live_t live;       /* the live factor offers are weighed with */
} session_join_t;

/*  An unexpected exit outside the run proper, waiting for its FAIL. */
typedef struct {
    char *text;              /* the exit, described; NULL: none */
    int peer;                /* whose: index in peers */
    double deadline;
} session_pending_t;

struct session {
    session_opts_t opt;
    const session_driver_t *driver;   /* during session_execute */
    config_t *cfg;
    json_t *config_object;   /* canonical config, shipped in CONFIG */
    json_t *run;             /* CONFIG's run object, or NULL */
    char *dir;               /* results directory */
    progress_t *progress;    /* borrowed, may be NULL */
    results_t *results;
    peer_t *peers;           /* cfg->nnodes, tree order */
    run_phase_t phase;
    int finished;            /* the driver said its work is done */
    session_setup_t setup;
    session_link_t link;
    session_times_t t;
    session_pending_t pending;
    session_join_t join;
};

/*  Send msg (taken) to peer through the control ROUTER; say why not
 *  unless quiet. Returns 0, or -1. */
int session_send_peer (session_t *self, peer_t *peer, zmsg_t *msg, int quiet);

/*  The node in deploy slot `slot` as the run starts, which is also its
 *  certificate's index: the tree's nodes, then the offered ones
 *  (session_prepare.c, check_deployable). */
const char *session_slot_name (const session_t *self, int slot);

/*  For an ssh node in deploy slot `slot`, checked: one line saying where
 *  its connection goes, as ssh's configuration decides it (`NAME:
 *  ssh://lo -> USER@127.0.0.1:2222`, deploy_target), so that what an
 *  alias stands for is seen. Nothing for other kinds. */
void session_say_target (session_t *self, int slot, const char *name);

/*  The control endpoint node in deploy slot `slot` connects to, bound
 *  now if no node needed it yet; NULL after session_fail. */
const char *session_bind_for (session_t *self, int slot);

/*  Start peer's process in deploy slot `slot` (its control endpoint set).
 *  Returns 0, or -1 with a message in err. */
int session_spawn (session_t *self, peer_t *peer, int slot, char *err, size_t errlen);

/*  Node (an index) and every node under it are lost for why, while the
 *  run goes on (docs/reliability.md); the run fails if the root is. */
void session_lose (session_t *self, int node, const char *why);

/*  The CONFIG peer is sent: the experiment as the node must see it (a
 *  node that joined finds itself in it). A new message. */
zmsg_t *session_config_for (session_t *self, const peer_t *peer);

/*  session_join.c. Ready the joins at START (vacant slots, the join
 *  socket); offer the config's nodes whose time came, answer `treefarm
 *  join` (every turn of the loop); a joining node is BOUND (ATTACH to
 *  its parent); its parent answered ATTACHED (START it, or lose it);
 *  close the join socket. */
void session_join_start (session_t *self);
void session_join_tick (session_t *self, double now);
void session_join_bound (session_t *self, peer_t *peer);
void session_join_attached (session_t *self, peer_t *parent, const proto_msg_t *m);
void session_join_close (session_t *self);

/*  session_move.c (docs/adapt.md, "Re-parent"). Node, running, lost
 *  its parent `lost` (why): move it and its subtree under the nearest
 *  node above `lost` with a vacant slot (ATTACH there). Returns 1 when
 *  the move is on its way, 0 when the run cannot move it (it does not
 *  adapt, no slot, the node is not running): the caller loses it. */
int session_move (session_t *self, int node, int lost, const char *why);

/*  ATTACHED from parent for peer, which is moving under it: send it
 *  REPARENT, or lose it when parent did not take it. */
void session_move_attached (session_t *self, peer_t *parent, peer_t *peer,
                            const proto_msg_t *m);

/*  DRAINED from parent: its child (m->text) holds nothing of the run's
 *  and leaves: STOP it and its subtree, which are then not lost when
 *  they fall silent or exit (docs/adapt.md, "Shrink"). */
void session_join_drained (session_t *self, peer_t *parent, const proto_msg_t *m);

/*  Receive one message from the control socket and act on it: the
 *  handshake, STATS, REPORT, FAIL, LOST; the driver's for the rest. */
void session_handle_message (session_t *self);

/*  Wait up to timeout_ms for messages and handle those that came. */
void session_poll_messages (session_t *self, int timeout_ms);

/*  Account for node processes that exited: during the run a node other
 *  than the root is lost; before it, an exit waits briefly for its FAIL
 *  and then fails the session; after STOP an unclean exit fails it. */
void session_handle_exits (session_t *self);

/*  Started nodes silent for longer than the run's lost-peer silence are
 *  lost. */
void session_check_silence (session_t *self, double now);

/*  Nodes lost by their own exit whose FAIL may still come to say why
 *  (within SESSION_EXIT_EXPLAIN_GRACE of their loss): the shutdown reads
 *  messages for them as it does for REPORTs. */
int session_fails_awaited (session_t *self, double now);

/*  STOP every node still in the run, collect the REPORTs (and the FAILs
 *  still awaited), reap every process, whatever happened before. */
void session_shutdown (session_t *self);

#endif
