/*  deploy_int — the deployment's state and its backends, shared by the
 *  files of the deployment and by nothing else (the public face is
 *  deploy.h).
 *
 *  The deployment is split by job:
 *    deploy.c           the slots (add, check, route, the command line,
 *                       the certificate, start) and the processes (reap,
 *                       poll, wait, kill, stop);
 *    deploy_backends.c  the backend table, by host kind, and what more
 *                       than one backend needs (routes from here, the
 *                       programs found here, a signal to the pid);
 *    deploy_local.c     the local backend: the node runs here;
 *    deploy_ssh.c       the ssh backend: the node runs on another
 *                       machine, its certificate sent on the client's
 *                       stdin;
 *    deploy_netns.c     the netns backend: the node runs here in a
 *                       network namespace, its control over ipc;
 *    deploy_slurm.c     the slurm backend: the nodes run on the hosts
 *                       of the run's Slurm allocation, all started by
 *                       one srun step that stands for them all.
 *  A new kind of host is one backend_t in its own file and one line in
 *  deploy_backends.c's table.
 */
#ifndef TF_DEPLOY_INT_H
#define TF_DEPLOY_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "controller/deploy.h"
#include "controller/ssh.h"

typedef struct {
    char *name;
    char *text;              /* the host as the config says it */
    host_t host;
    char *control;           /* control bind (deploy_control_bind) */
    char *bind;              /* --bind, or NULL */
    char *reach;             /* numeric address others reach the node
                                at (ssh, netns), or NULL */
    char *remote;            /* ssh: the node program on the host */
    char *target;            /* ssh: where its connection goes, as ssh -G
                                says: "USER@HOSTNAME:PORT[ (ADDR)]" */
    char *cert;              /* the node's certificate file, or NULL */
    char *cert_text;         /* ssh, slurm: its content, sent on the
                                node's stdin */
    int rank;                /* slurm: its task in the step, else -1 */
    int checked;
    int started;
    pid_t pid;
    int stdin_fd;            /* ssh: our end of the client's stdin, or -1 */
    int running;             /* started, not yet reaped */
    int status;              /* waitpid status once reaped */
    int reported;            /* the exit was returned by deploy_poll */
    int signalled;           /* we sent it a signal */
} proc_t;

struct deploy {
    ssh_opts_t ssh;          /* strings owned below */
    char *ssh_config;
    char *ipc_dir;           /* created for the first netns node
                                (deploy_netns.c) */
    char *ipc_control;       /* "ipc://DIR/control" */
    int slurm;               /* --slurm: slurm hosts may be used */
    struct slurm_step *step; /* the srun step of the slurm nodes, or
                                NULL (deploy_slurm.c) */
    proc_t *procs;
    int nprocs;
    int nalloc;
};

/*  One backend: what a host kind does. */
typedef struct {
    host_kind_t kind;
    /*  The up-front check of proc's host, before anything starts; sets
     *  proc->control (and bind, reach, remote where the kind has them).
     *  0, or -1 with err filled. */
    int (*check) (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
                  char *err, size_t errlen);
    /*  The command line that starts proc's node here, from the node's
     *  argv; the caller frees it (spawn_argv_free). */
    char **(*command) (const deploy_t *self, const proc_t *proc, char *const argv[]);
    int holds_stdin;         /* the node reads a pipe we hold (ssh) */
    /*  Send sig to proc's node, however it reaches it. */
    void (*signal) (deploy_t *self, proc_t *proc, int sig);
    /*  Optional: start proc's node with argv instead of spawning its
     *  command line (slurm: the node is armed, and deploy_launch starts
     *  them all). 0, or -1 with err filled. */
    int (*start) (deploy_t *self, proc_t *proc, char *const argv[], char *err,
                  size_t errlen);
    /*  Optional: reap proc, blocking if asked, instead of waiting for its
     *  pid (slurm: the step's pid stands for every node). */
    void (*reap) (deploy_t *self, proc_t *proc, int block);
} backend_t;

/*  The backends, one per file. */
extern const backend_t deploy_backend_local;
extern const backend_t deploy_backend_ssh;
extern const backend_t deploy_backend_netns;
extern const backend_t deploy_backend_slurm;

/*  proc's backend, by its host kind (deploy_backends.c). */
const backend_t *deploy_backend_of (const proc_t *proc);

/*  What more than one file needs (deploy_backends.c). */

/*  The local address the kernel sends from to reach addr (numeric), into
 *  src; 0, or -1 with err filled. Nothing is sent. */
int deploy_route_source (const char *addr, char *src, size_t len, char *err,
                         size_t errlen);
/*  1 if addr (numeric) is an address of the loopback interface. */
int deploy_is_loopback (const char *addr);
/*  0 if the programs of a command line's start (its first word and its
 *  last) are found here, else -1 with err filled. */
int deploy_programs_here (char *const program[], int nprogram, char *err,
                          size_t errlen);
/*  Send sig to proc's pid: the node, or the process that stands for it. */
void deploy_signal_pid (deploy_t *self, proc_t *proc, int sig);
/*  The first address name resolves to here, numeric, into buf; 0, or -1
 *  with err filled ("cannot resolve "NAME" here: ..."). */
int deploy_resolve_numeric (const char *name, char *buf, size_t len, char *err,
                            size_t errlen);
/*  The control bind for nodes that reach this machine from its address
 *  src: DEPLOY_LOCAL_CONTROL for IPv4 loopback, else "tcp://SRC:*". A new
 *  string. */
char *deploy_control_from (const char *src);
/*  Write len bytes of text to fd, a pipe whose reader may be gone:
 *  EPIPE, without the SIGPIPE that would end the controller. 0, or -1
 *  with errno set. */
int deploy_write_pipe (int fd, const char *text, size_t len);

/*  The ssh node's certificate (deploy_ssh.c). */

/*  May text, a certificate's, be sent on a node's stdin (an ssh client's,
 *  the srun step's): at most CURVE_FILE_MAX bytes, lines ended by a
 *  newline, no end line of its own in it? 1, or 0 with err filled. */
int deploy_ssh_cert_ok (const char *text, char *err, size_t errlen);
/*  Write proc's certificate, then the end line, to its stdin_fd. 0, or -1
 *  with err filled. */
int deploy_ssh_cert_send (proc_t *proc, char *err, size_t errlen);

/*  The slurm nodes' step (deploy_slurm.c): start it once every slurm
 *  node is armed (deploy_launch), and forget it (deploy_destroy, after
 *  every process is reaped). */
int deploy_slurm_launch (deploy_t *self, char *err, size_t errlen);
void deploy_slurm_destroy (deploy_t *self);

/*  Remove the netns nodes' private ipc directory, if one was made
 *  (deploy_netns.c). */
void deploy_ipc_remove (deploy_t *self);

#endif
