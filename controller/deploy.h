/*  deploy — placing, starting, watching and stopping the node processes
 *  of a run (docs/deploy.md).
 *
 *  A deployment holds one slot per tree node, numbered in the order they
 *  were added. Each node's host (overlay/host.h) picks its backend, so one
 *  run may mix them:
 *
 *    local        the node is a child process here;
 *    ssh://...    the node runs on another machine, and a local `ssh`
 *                 client process stands for it (controller/ssh.h);
 *    netns:NAME   the node runs here inside a network namespace, started
 *                 by `ip netns exec`, which execs it (controller/netns.h);
 *    slurm        the node runs on a host of the run's Slurm allocation
 *                 (controller/slurm.h): every slurm node is started by
 *                 one `srun` step, whose process stands for them all.
 *
 *  Whatever the backend, every node is stood for by one child process of
 *  the controller (the slurm nodes all by the same one), so watching,
 *  signalling and reaping work the same way everywhere. A backend decides how a node's command line is started,
 *  what the up-front checks are, which endpoint the controller's control
 *  socket must be bound on for the node to reach it, which address the
 *  node binds, and how a stop reaches it.
 *
 *  A node's life:
 *    deploy_add     parse its host; nothing checked or started
 *    deploy_check   the up-front checks (host reachable, program runs,
 *                   namespace exists...), before anything starts
 *    deploy_route   which address a `local` parent binds so that its
 *                   children elsewhere reach it
 *    deploy_start   start it with a command line built from
 *                   deploy_program, deploy_control_bind (as bound) and
 *                   deploy_bind_address (a slurm node is only armed)
 *    deploy_launch  start what deploy_start armed: the slurm step
 *
 *  Every process started gets PR_SET_PDEATHSIG(SIGKILL) (controller/
 *  spawn.h), so it dies with the controller even if the controller is
 *  SIGKILLed; for an ssh node that ends the remote node too (ssh.h). It
 *  stays in the controller's process group (a terminal's Ctrl-C reaches
 *  it too); it inherits stdout and stderr and no other descriptor; it
 *  reads /dev/null, or for ssh a pipe the deployment holds. deploy_stop
 *  and deploy_destroy leave no process alive and nothing unreaped.
 *
 *  Nothing here is thread-safe: one thread drives a deployment.
 */
#ifndef TF_DEPLOY_H
#define TF_DEPLOY_H

#include <stddef.h>
#include <sys/types.h>

#include "overlay/curve.h"
#include "overlay/host.h"

/*  The control endpoint local nodes reach. */
#define DEPLOY_LOCAL_CONTROL "tcp://127.0.0.1:*"

typedef struct deploy deploy_t;

/*  What the command line says about deployment. */
typedef struct {
    const char *ssh_config;  /* --ssh-config FILE: ssh -F FILE; NULL:
                                ssh's own (~/.ssh/config) */
    int push_binary;         /* --push-binary: copy the node binary to
                                every ssh host first */
    int slurm;               /* --slurm: nodes on host slurm are placed
                                on the allocation's hosts */
} deploy_opts_t;

/*  How a node process ended, as deploy_poll reports it. */
typedef struct {
    int slot;                /* the node's slot */
    const char *name;        /* the node's name, borrowed from the
                                deployment */
    pid_t pid;
    int status;              /* raw status from waitpid */
    int signalled;           /* the deployment had sent it a signal
                                (deploy_stop), so a death by signal
                                was asked for */
    int step;                /* a slurm node: pid and status are its srun
                                step's, which stands for every node */
} deploy_exit_t;

/*  Create an empty deployment with opts (copied; NULL: the defaults). */
deploy_t *deploy_new (const deploy_opts_t *opts);

/*  Destroy a deployment and null the caller's pointer. A process still
 *  running is killed with SIGKILL and reaped first: callers stop their
 *  nodes gracefully with deploy_stop before. The private directory of the
 *  ipc endpoint, if any, is removed. Safe on NULL. */
void deploy_destroy (deploy_t **self_p);

/*  Add the node called name on host, a node's `host` text (host_parse).
 *  Nothing is checked beyond the syntax and nothing starts. Returns the
 *  node's slot (0, 1, ... in the order added), or -1 with a message in
 *  err. name and host are copied. */
int deploy_add (deploy_t *self, const char *name, const char *host, char *err,
                size_t errlen);

/*  The up-front checks for slot's node, with program[0..nprogram) the
 *  start of its command line here (wrapper words, then the node binary):
 *    local: a given address is one of this machine (it resolves and one
 *      of its addresses binds here); the programs are found here;
 *    ssh: `ssh -G HOST` says where HOST goes (ssh_resolve.h), and that
 *      hostname resolves here and routes from a local address (the
 *      control socket is bound there; the node binds the hostname,
 *      deploy_bind_address, when it is not HOST itself, as for an
 *      alias); `ssh -o BatchMode=yes -o ConnectTimeout=5 HOST true`
 *      succeeds; with push_binary the node binary is copied to the
 *      host's cache unless its hash is there already; the node program
 *      runs there;
 *    netns: the namespace exists, can be entered, and has a global IPv4
 *      address; `ip` and the programs are found here;
 *    slurm: the deployment was made with --slurm, inside an allocation
 *      (SLURM_JOB_ID...; controller/slurm.h), which has a CPU left for
 *      the node; the host it is placed on resolves here and routes from a
 *      local address; srun and the programs are found here (the node
 *      program must be at the same path on the allocation's hosts).
 *  Hosts checked once are not checked again for a later slot. Returns 0,
 *  or -1 with a message in err (the caller names the node), quoting what
 *  ssh or ip said. */
int deploy_check (deploy_t *self, int slot, char *const program[], int nprogram,
                  char *err, size_t errlen);

/*  After every slot is checked: choose the address a `local` node binds
 *  so that its children in children[0..nchildren) (slots) that are not
 *  local reach it: the local address that routes to them (found with a
 *  connected UDP socket), when that is not loopback. Refuses a parent
 *  whose children are routed through different local addresses, and one
 *  whose given address is loopback while a child runs elsewhere. Returns
 *  0, or -1 with a message in err naming the child. */
int deploy_route (deploy_t *self, int slot, const int *children, int nchildren,
                  char *err, size_t errlen);

/*  The endpoint the controller's control socket must be bound on for
 *  slot's node to reach it, as a bind address with a wildcard port:
 *  DEPLOY_LOCAL_CONTROL, "tcp://ADDR:*" (the local address that routes
 *  to an ssh host), or "ipc://DIR/control" (netns; DIR private, 0700).
 *  Borrowed; valid after deploy_check. */
const char *deploy_control_bind (const deploy_t *self, int slot);

/*  The address slot's node must be told to bind (--bind): a `local`
 *  parent's routing address (deploy_route), an ssh alias's HostName, a
 *  namespace's address; or NULL when its host says it (host_bind_name).
 *  Borrowed. */
const char *deploy_bind_address (const deploy_t *self, int slot);

/*  For an ssh node, where its connections go, as `ssh -G` says once the
 *  ssh configuration has had its say (an alias's HostName, Port, User):
 *  "USER@HOSTNAME:PORT", an IPv6 HOSTNAME in brackets, followed by "
 *  (ADDR)" when HOSTNAME is a name that resolves here to ADDR. NULL for
 *  other kinds. Borrowed; valid after deploy_check. */
const char *deploy_target (const deploy_t *self, int slot);

/*  The node program to put in slot's command line: for ssh, its path on
 *  the host as deploy_check found it; else local_program. Borrowed. */
const char *deploy_program (const deploy_t *self, int slot, const char *local_program);

/*  The host's kind and text of slot. */
host_kind_t deploy_kind (const deploy_t *self, int slot);
const char *deploy_host (const deploy_t *self, int slot);

/*  The command line deploy_start runs here for slot's node with argv
 *  (NULL-terminated): argv itself (local), `ssh ... HOST 'sh -c ...'`, or
 *  `ip netns exec NAME argv...`. A new NULL-terminated array
 *  (spawn_argv_free). */
char **deploy_command (const deploy_t *self, int slot, char *const argv[]);

/*  Give slot's node, before it starts, certificate i of certs
 *  (docs/security.md): a local or netns node is started with `--cert
 *  PATH`, its file written now (curve_run_file); an ssh or slurm node
 *  takes its text on stdin (an ssh client's, where the remote script
 *  stores it in a file of mode 0600 for the node, removed when the node
 *  exits (ssh_node_command); the srun step's, kept in the node's memory).
 *  Returns 0, or -1 with a message in err. */
int deploy_set_cert (deploy_t *self, int slot, curve_run_t *certs, int i, char *err,
                     size_t errlen);

/*  Start what deploy_start armed: the slurm nodes, all by one `srun`
 *  step, each learning which node it is, its bind address and its
 *  certificate from the step's stdin (docs/deploy.md, "Slurm"). Every
 *  slurm slot must have been armed. Returns 0 (nothing to do included),
 *  or -1 with a message in err. */
int deploy_launch (deploy_t *self, char *err, size_t errlen);

/*  Start slot's node with the command line argv (argv[0] without a slash
 *  is looked up on PATH, on the node's host). Returns 0, or -1 with a
 *  message in err if the process could not be started (not found, not
 *  executable, fork failed): a failed exec is reported here, not as an
 *  exit later. A slot starts once. */
int deploy_start (deploy_t *self, int slot, char *const argv[], char *err,
                  size_t errlen);

/*  deploy_add, then deploy_start with no check. Returns the slot, or -1
 *  with a message in err (and no slot is added). */
int deploy_spawn (deploy_t *self, const char *name, const char *host,
                  char *const argv[], char *err, size_t errlen);

/*  Number of slots, and one slot's name, pid (-1 before it started) and
 *  whether its process is running (started, not yet reaped). */
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
 *  (NAME)" into buf ("(srun step, pid P)" for a slurm node). Returns
 *  buf. */
const char *deploy_describe_exit (const deploy_exit_t *exit_info, char *buf,
                                  size_t len);

/*  Return 1 if the exit is a clean one: status 0, or any end after the
 *  deployment signalled the process itself (deploy_stop). */
int deploy_exit_is_clean (const deploy_exit_t *exit_info);

/*  Wait up to timeout seconds for every process to exit by itself,
 *  reaping them. Returns the number still running. */
int deploy_wait (deploy_t *self, double timeout);

/*  End slot's process at once, whatever it is doing (a node declared
 *  lost, which may be hung or stopped): SIGKILL, after closing an ssh
 *  node's stdin so that its remote shell ends it too. Its exit is then
 *  clean (deploy_exit_is_clean) and reported by deploy_poll. Nothing
 *  happens to a slot not running. */
void deploy_kill (deploy_t *self, int slot);

/*  Stop every process still running: SIGTERM (for an ssh node: close
 *  its stdin, and the remote shell sends the node SIGTERM), wait up to
 *  grace seconds, then SIGKILL and reap. When it returns, no process of
 *  the deployment is alive. Returns the number that had to be killed
 *  with SIGKILL. */
int deploy_stop (deploy_t *self, double grace);

#endif
