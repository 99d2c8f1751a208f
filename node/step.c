/*  step — the nodes one task of the controller's srun step starts. See
 *  step.h.
 */
#include "node/step.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "overlay/util.h"

/*  Who the stdin watcher signals: rank ranks[i]'s node is pids[i] (0
 *  once reaped); one node run here: itself. */
static struct {
    pthread_mutex_t lock;
    int n;
    int *ranks;
    pid_t *pids;
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER};

/*  Send sig to rank's node (rank < 0: every one). */
static void
signal_rank (int rank, int sig)
{
    pthread_mutex_lock (&watch.lock);
    for (int i = 0; i < watch.n; i++)
        if ((rank < 0 || watch.ranks[i] == rank) && watch.pids[i] > 0)
            kill (watch.pids[i], sig);
    pthread_mutex_unlock (&watch.lock);
}

/*  Read the step's signal lines until end of file, then SIGTERM. */
static void *
watch_stdin (void *arg)
{
    (void) arg;
    char line[STEPIN_LINE_MAX + 2];
    int rank, sig;
    while (fgets (line, sizeof line, stdin))
        if (stepin_signal_parse (line, &rank, &sig) == 0)
            signal_rank (rank, sig);
    signal_rank (-1, SIGTERM);
    return NULL;
}

static int
start_watcher (char *err, size_t errlen)
{
    pthread_t thread;
    if (pthread_create (&thread, NULL, watch_stdin, NULL) != 0)
        return tf_error (err, errlen, "cannot watch stdin");
    pthread_detach (thread);
    return 0;
}

/*  This process runs node i of the list: its name, bind address and
 *  certificate (its text, wiped once the node has read it) into opts;
 *  every other block is wiped. */
static void
become (step_node_t *self, stepin_node_t *nodes, int n, int i, node_opts_t *opts)
{
    self->me = nodes[i];
    nodes[i].cert = NULL;
    stepin_nodes_free (&nodes, n);
    opts->name = self->me.name;
    opts->bind = *self->me.bind ? self->me.bind : NULL;
    opts->cert_text = self->me.cert;
}

/*  In a forked node: die with the task that started it, and leave stdin
 *  to that task, which passes the node its signals. */
static void
child_detach (pid_t parent)
{
    if (prctl (PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid () != parent)
        _exit (1);
    int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2 (null, STDIN_FILENO) < 0)
        _exit (1);
    close (null);
}

/*  The task's termination signals (blocked in every thread of it), passed
 *  on to its nodes. */
static sigset_t stops;

static void *
relay_stops (void *arg)
{
    (void) arg;
    for (;;) {
        int sig;
        if (sigwait (&stops, &sig) == 0)
            signal_rank (-1, sig);
    }
    return NULL;
}

/*  The task's own process once its nodes are forked: pass them their
 *  signals (the stdin lines, and SIGTERM, SIGINT or SIGHUP sent to the
 *  task: Slurm's when the step is cancelled), reap them. The task stays
 *  until the last of them is gone, so that the step ends after its nodes
 *  have said why they stop. Returns 0 when every one exited 0, else 1. */
static int
supervise (void)
{
    char err[TF_ERRLEN];
    int worst = 0, status;
    sigemptyset (&stops);
    sigaddset (&stops, SIGTERM);
    sigaddset (&stops, SIGINT);
    sigaddset (&stops, SIGHUP);
    pthread_sigmask (SIG_BLOCK, &stops, NULL);
    pthread_t relay;
    if (pthread_create (&relay, NULL, relay_stops, NULL) == 0)
        pthread_detach (relay);
    if (start_watcher (err, sizeof err) != 0) {
        fprintf (stderr, "treefarm-node: %s: stopping this task's nodes\n", err);
        signal_rank (-1, SIGTERM);
        worst = 1;
    }
    for (;;) {
        pid_t pid = waitpid (-1, &status, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
            worst = 1;
        pthread_mutex_lock (&watch.lock);
        for (int i = 0; i < watch.n; i++)
            if (watch.pids[i] == pid)
                watch.pids[i] = 0;
        pthread_mutex_unlock (&watch.lock);
    }
    return worst;
}

/*  Fork a process for each of the n nodes: each child returns 0 from
 *  here as its node; the parent supervises them and returns 1 with their
 *  status in *status. */
static int
fork_nodes (step_node_t *self, stepin_node_t *nodes, int n, node_opts_t *opts,
            int *status, char *err, size_t errlen)
{
    pid_t parent = getpid ();
    watch.ranks = xcalloc ((size_t) n, sizeof *watch.ranks);
    watch.pids = xcalloc ((size_t) n, sizeof *watch.pids);
    for (int i = 0; i < n; i++) {
        fflush (NULL);
        pid_t pid = fork ();
        if (pid == 0) {
            child_detach (parent);
            free (watch.ranks);
            free (watch.pids);
            memset (&watch, 0, sizeof watch);
            become (self, nodes, n, i, opts);
            return 0;
        }
        if (pid < 0) {
            tf_error (err, errlen, "cannot start node %s: fork: %s", nodes[i].name,
                      strerror (errno));
            signal_rank (-1, SIGKILL);
            while (wait (NULL) > 0 || errno == EINTR)
                ;
            stepin_nodes_free (&nodes, n);
            return -1;
        }
        watch.ranks[i] = nodes[i].rank;
        watch.pids[i] = pid;
        watch.n = i + 1;
    }
    stepin_nodes_free (&nodes, n);
    *status = supervise ();
    return 1;
}

int
step_node_setup (step_node_t *self, node_opts_t *opts, int *status, char *err,
                 size_t errlen)
{
    char why[TF_ERRLEN];
    memset (self, 0, sizeof *self);
    int task = stepin_rank_parse (getenv ("SLURM_PROCID"), err, errlen);
    if (task < 0)
        return -1;
    stepin_node_t *nodes = NULL;
    int n = 0;
    if (stepin_read (stdin, task, &nodes, &n, why, sizeof why) != 0)
        return tf_error (err, errlen, "task %d of the step: %s", task, why);
    if (n > 1)
        return fork_nodes (self, nodes, n, opts, status, err, errlen);
    static int rank;
    static pid_t me;
    rank = nodes[0].rank;
    me = getpid ();
    watch.ranks = &rank;
    watch.pids = &me;
    watch.n = 1;
    become (self, nodes, n, 0, opts);
    return start_watcher (err, errlen);
}

void
step_node_clear (step_node_t *self)
{
    stepin_node_clear (&self->me);
    memset (self, 0, sizeof *self);
}
