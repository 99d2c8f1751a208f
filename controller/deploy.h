/*  deploy — starting, watching and stopping the node processes of a run.
 *
 *  A deployment owns one process per tree node, kept in slots numbered in
 *  the order they were spawned. Whatever the backend, every node is stood
 *  for by one child process of the controller: the node itself (local
 *  backend), later an `ssh HOST ...` client or an `ip netns exec NS ...`
 *  process. Watching, signalling and reaping therefore work the same way
 *  everywhere; a backend only decides how a node's command line is started
 *  on its host, how a signal reaches it, and which address the controller
 *  must bind so that nodes on their hosts can reach it.
 *
 *  Guarantees of the local backend: a node gets PR_SET_PDEATHSIG(SIGKILL),
 *  so it dies with the controller even if the controller is SIGKILLed; it
 *  stays in the controller's process group (a terminal's Ctrl-C reaches
 *  it too); it inherits stdout and stderr, reads /dev/null, and inherits no
 *  other descriptor. deploy_stop and deploy_destroy leave no process alive
 *  and nothing unreaped.
 *
 *  Nothing here is thread-safe: one thread drives a deployment.
 */
#ifndef TF_DEPLOY_H
#define TF_DEPLOY_H

#include <stddef.h>
#include <sys/types.h>

typedef struct deploy deploy_t;

/*  How one backend starts and signals node processes. The state pointer is
 *  the backend's own (options, connections), created by its constructor
 *  and freed by destroy. */
typedef struct {
    const char *name;            /* "local"; later "ssh", "netns" */
    /*  Endpoint the controller binds its control ROUTER on, reachable from
     *  every host this backend deploys to, e.g. "tcp://127.0.0.1:*". */
    const char *control_bind;
    /*  Start argv (argv[0] the program as found on host, NULL-terminated)
     *  for a node on host. Store the local process standing for the node
     *  in *pid and return 0; or return -1 with a message in err, in which
     *  case nothing is left running. */
    int (*spawn) (void *state, const char *host, char *const argv[], pid_t *pid,
                  char *err, size_t errlen);
    /*  Check that program (argv[0] of a later spawn) can be run on host,
     *  so a wrong path is a usage error before anything starts. Return 0,
     *  or -1 with a message in err. */
    int (*check) (void *state, const char *host, const char *program, char *err,
                  size_t errlen);
    /*  Check that this backend can place a node on host (the address the
     *  node binds), so a host it cannot honour is a usage error before
     *  anything starts. Return 0, or -1 with a message in err. */
    int (*check_host) (void *state, const char *host, char *err, size_t errlen);
    /*  Deliver sig to the node standing behind pid. Return 0 or -1. */
    int (*signal) (void *state, const char *host, pid_t pid, int sig);
    /*  Create and destroy the backend's state; either may be NULL. */
    void *(*state_new) (void);
    void (*state_destroy) (void **state_p);
} deploy_backend_t;

/*  How a node process ended, as deploy_poll reports it. */
typedef struct {
    int slot;                    /* the node's slot */
    const char *name;            /* the node's name, borrowed from the
                                    deployment */
    pid_t pid;
    int status;                  /* raw status from waitpid */
    int signalled;               /* the deployment had sent it a signal
                                    (deploy_stop), so a death by signal
                                    was asked for */
} deploy_exit_t;

/*  Create a deployment using the named backend ("local" is the only one
 *  today). Returns NULL with a message in err if the backend is unknown. */
deploy_t *deploy_new (const char *backend, char *err, size_t errlen);

/*  Destroy a deployment and null the caller's pointer. A process still
 *  running is killed with SIGKILL and reaped first: callers stop their
 *  nodes gracefully with deploy_stop before. Safe on NULL. */
void deploy_destroy (deploy_t **self_p);

/*  Return the backend's name, and the endpoint the controller should bind
 *  (see deploy_backend_t.control_bind). Both borrowed. */
const char *deploy_backend_name (const deploy_t *self);
const char *deploy_control_bind (const deploy_t *self);

/*  Check that program can be started on host (see deploy_backend_t.check).
 *  Returns 0, or -1 with a message in err naming the program. */
int deploy_check_program (deploy_t *self, const char *host, const char *program,
                          char *err, size_t errlen);

/*  Check that the backend can run a node on host (see
 *  deploy_backend_t.check_host). The local backend accepts only addresses
 *  of this machine: host must resolve, and one of its addresses must bind
 *  here. Returns 0, or -1 with a message in err naming the host. */
int deploy_check_host (deploy_t *self, const char *host, char *err, size_t errlen);

/*  Start one node called name on host with the command line argv (argv[0]
 *  without a slash is looked up on PATH, on the node's host). Returns the
 *  node's slot (0, 1, ... in spawn order), or -1 with a message in err if
 *  the program could not be started (not found, not executable, fork
 *  failed): a failed exec is reported here, not as an exit later. name and
 *  host are copied. */
int deploy_spawn (deploy_t *self, const char *name, const char *host,
                  char *const argv[], char *err, size_t errlen);

/*  Number of slots, and one slot's name, pid and whether its process is
 *  still running (not yet reaped). */
int deploy_size (const deploy_t *self);
const char *deploy_name (const deploy_t *self, int slot);
pid_t deploy_pid (const deploy_t *self, int slot);
int deploy_is_running (const deploy_t *self, int slot);

/*  Number of processes not yet reaped. */
int deploy_running (const deploy_t *self);

/*  Reap whatever has exited, without blocking, and report the exits not
 *  yet reported, one per call: returns 1 and fills *out, or 0 when there
 *  is nothing new. Exits reaped by deploy_wait or deploy_stop are
 *  reported here too. */
int deploy_poll (deploy_t *self, deploy_exit_t *out);

/*  Write "node NAME (pid P) exited with status S", "... killed by signal S
 *  (NAME)" into buf. Returns buf. */
const char *deploy_describe_exit (const deploy_exit_t *exit_info, char *buf,
                                  size_t len);

/*  Return 1 if the exit is a clean one: status 0, or any end after the
 *  deployment signalled the process itself (deploy_stop). */
int deploy_exit_is_clean (const deploy_exit_t *exit_info);

/*  Wait up to timeout seconds for every process to exit by itself,
 *  reaping them. Returns the number still running. */
int deploy_wait (deploy_t *self, double timeout);

/*  Stop every process still running: SIGTERM, wait up to grace seconds,
 *  then SIGKILL and reap. When it returns, no process of the deployment
 *  is alive. Returns the number that had to be killed with SIGKILL. */
int deploy_stop (deploy_t *self, double grace);

#endif
