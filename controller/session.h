/*  session — one deployment of an experiment's tree: its node processes,
 *  the control conversation with them, and the shutdown every path goes
 *  through.
 *
 *  `treefarm run` and `treefarm measure` are two drivers of a session. The
 *  session spawns every node, answers HELLO with CONFIG, sends START once
 *  every node is BOUND, files STATS and REPORTs into the run's results,
 *  notices nodes that fail or exit, enforces the deadlines, and on every
 *  exit path — done, a failure, Ctrl-C — sends STOP, collects REPORTs
 *  (answering each with BYE), reaps every process and writes results.json.
 *  What happens between START and the end is the driver's: it is called
 *  on every turn of the loop and with every message the session does not
 *  handle itself (FINISHED and RECORDED for a run, MEASURED for a
 *  calibration), and says when the work is done (session_finish).
 *
 *  The first failure is the cause and is kept; later ones are
 *  consequences and only logged. docs/protocol.md has the conversation.
 */
#ifndef TF_SESSION_H
#define TF_SESSION_H

#include "controller/progress.h"
#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/proto.h"

/*  Seconds allowed: for every node to say HELLO and BOUND (counted from
 *  the last handshake message received, so a slow start under valgrind
 *  is not a failure while nodes keep answering); for a node to exit after
 *  SIGTERM before SIGKILL. */
#define SESSION_HANDSHAKE_TIMEOUT 10.0
#define SESSION_STOP_GRACE 2.0

/*  REPORTs after STOP: the wait is proportional to what the tree still has
 *  to say. It starts at SESSION_REPORT_TIMEOUT plus SESSION_REPORT_PER_NODE
 *  for every node not yet reported (a REPORT is parsed and filed in well
 *  under a millisecond; the allowance covers 255 nodes starved of CPU on
 *  two cores), and every REPORT that arrives pushes the deadline to at
 *  least SESSION_REPORT_TIMEOUT from then: a tree that keeps reporting is
 *  never cut off, one that falls silent is given up on. */
#define SESSION_REPORT_TIMEOUT 5.0
#define SESSION_REPORT_PER_NODE 0.05

typedef struct session session_t;

/*  CURVE on the run's sockets (docs/security.md): by default on when a
 *  node runs on an ssh or slurm host, off otherwise; or as asked. */
typedef enum {
    SESSION_CURVE_AUTO = 0,
    SESSION_CURVE_ON,
    SESSION_CURVE_OFF,
} session_curve_t;

typedef struct {
    const char *command;     /* "run", "measure": for messages */
    const char *config_path; /* for messages */
    const char *out_dir;     /* results directory; NULL: results/NAME-TIME */
    const char *node_bin;    /* NULL: $TREEFARM_NODE, next to treefarm, PATH */
    double timeout;          /* fail after this many wall seconds; 0: never */
    const char *ssh_config;  /* --ssh-config: ssh -F FILE; NULL: ssh's own */
    int push_binary;         /* --push-binary: copy the node to ssh hosts */
    int slurm;               /* --slurm: place nodes on the Slurm
                                allocation's hosts (docs/deploy.md) */
    session_curve_t curve;   /* --curve, --no-curve */
} session_opts_t;

/*  What a command does with a session. Every callback is optional. */
typedef struct {
    int measure;             /* START the nodes in calibration mode */
    /*  Every turn of the loop once START went out, and until the end. */
    void (*tick) (session_t *session, void *arg, double now);
    /*  A message from node the session does not handle. Return 0, or -1
     *  with err to have it refused (logged, counted as malformed). */
    int (*message) (session_t *session, void *arg, int node, const proto_msg_t *m,
                    char *err, size_t errlen);
    /*  After every process is gone, before the outcome is settled: a last
     *  check that may still fail the session. */
    void (*done) (session_t *session, void *arg);
    void *arg;
} session_driver_t;

/*  The command's --curve (on) and --no-curve (off) flags into *out.
 *  Returns -1 to go on, or CLI_EXIT_USAGE after saying that both were
 *  given. */
int session_curve_flags (const char *command, int on, int off, session_curve_t *out);

/*  Load the experiment at path with the strict loader, put the background
 *  load of load_path on it (--load FILE, config_apply_load_file; NULL:
 *  none), and check that an emulation of it is sound
 *  (config_check_emulation). Returns it, or NULL after printing why. */
config_t *session_load_config (const char *path, const char *load_path);

/*  Prepare a session of *cfg_p, which it takes (nulling the caller's
 *  pointer): check that every host can be deployed to and the node binary
 *  runs there (deploy_check: ssh hosts are reached, --push-binary copies
 *  the node, namespaces exist), create the results directory and the
 *  results. No node is started. Returns NULL after printing why, naming
 *  the node (a usage error: exit 2). */
session_t *session_new (const session_opts_t *opt, config_t **cfg_p);

/*  Destroy a session (after session_execute, every process is gone) and
 *  null the pointer. Safe on NULL. */
void session_destroy (session_t **self_p);

/*  Launch the tree, run it with driver until it finishes or fails, shut
 *  it down, settle the outcome (complete if nothing failed) and write
 *  results.json. Returns the exit code (cli.h): OK, FAILED, INTERRUPTED. */
int session_execute (session_t *self, const session_driver_t *driver);

/*  The driver's work is done: stop the tree. */
void session_finish (session_t *self, double now);

/*  Fail the session (or mark it interrupted) for the reason given, unless
 *  it failed already; print the reason. */
void session_fail (session_t *self, results_status_t status, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/*  Print "treefarm: ..." on stderr, on a line of its own even while a
 *  progress line is shown. self may be NULL. */
void session_log (session_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/*  Send msg (taken) to node. Returns 0, or -1 after saying why. */
int session_send (session_t *self, int node, zmsg_t *msg);

/*  The progress line to clear before printing (borrowed; may be NULL). */
void session_set_progress (session_t *self, progress_t *progress);

/*  Nothing has failed so far. */
int session_ok (const session_t *self);

/*  START went out and the session is not stopping. */
int session_running (const session_t *self);

/*  The driver finished (session_finish was called). */
int session_finished (const session_t *self);

/*  When START went out (tf_now), 0 before; when the work finished or the
 *  session failed, 0 before. */
double session_started_at (const session_t *self);
double session_ended_at (const session_t *self);

const config_t *session_config (const session_t *self);

/*  The run's object (overlay/proto.h, CONFIG "run": command tasks, the
 *  root's tasks file, OUT, the journal), shipped with the config to every
 *  node; set before session_execute. Takes a reference. */
void session_set_run (session_t *self, json_t *run);
results_t *session_results (session_t *self);
const char *session_dir (const session_t *self);

#endif
