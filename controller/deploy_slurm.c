/*  deploy_slurm — the slurm backend (deploy_int.h): the nodes run on the
 *  hosts of the Slurm allocation the controller runs in
 *  (controller/slurm.h), every one started by the same `srun` step, whose
 *  process here stands for them all.
 *
 *  Its check places the node: the next host of the allocation with a CPU
 *  left (its rank in the step is the order of the checks), resolved here
 *  and routed to (the node's control endpoint; the node binds that
 *  address). deploy_start only arms a node; deploy_launch, once every
 *  slurm node is armed, runs
 *
 *      srun --ntasks=T --distribution=arbitrary --nodelist=H0,H1,...
 *           --kill-on-bad-exit=0 --input=all NODE... --slurm --controller EP
 *
 *  with one task for each host the nodes were placed on (H_t the host of
 *  task t, in the order of their first node), which starts that host's
 *  nodes (node/step.h: one process loads the program, and forks the
 *  others), and writes each node's rank, task, name, bind address and
 *  certificate on the step's stdin (overlay/stepin.h). A signal to one
 *  node is a line there; end of file stops them all. The step's exit is
 *  every node's: srun gives one status for the step.
 */
#include "controller/deploy_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/slurm.h"
#include "controller/spawn.h"
#include "overlay/stepin.h"
#include "overlay/util.h"

/*  How long a blocking reap waits for the step to end once its nodes
 *  were told to stop, before srun is killed (which ends the step). */
#define SLURM_STEP_KILL_WAIT 3.0
#define SLURM_STEP_WAIT_STEP 0.01

typedef struct slurm_step {
    slurm_alloc_t *alloc;
    char **addrs;            /* per host: numeric, NULL until placed on */
    int *host_of;            /* per rank: its host */
    int nranks;
    int *task_of;            /* per host: its task in the step, or -1 */
    int *task_host;          /* per task: its host */
    int ntasks;
    int armed;
    char **argv;             /* the nodes' common words (deploy_start's argv
                                without --name and --bind) */
    pid_t pid;
    int stdin_fd;
    int launched;
    int running;
    int status;
} slurm_step_t;

/* ------------------------------------------------------------------------
 *  The check: placing the node.
 */

/*  The step, with the allocation read on first use. */
static slurm_step_t *
step_of (deploy_t *self, char *err, size_t errlen)
{
    if (self->step)
        return self->step;
    slurm_alloc_t *alloc = slurm_alloc_read (err, errlen);
    if (!alloc)
        return NULL;
    slurm_step_t *step = xcalloc (1, sizeof *step);
    step->alloc = alloc;
    step->addrs = xcalloc ((size_t) slurm_alloc_hosts (alloc), sizeof *step->addrs);
    step->stdin_fd = -1;
    step->pid = -1;
    self->step = step;
    return step;
}

/*  Host h's address, resolved here on first use. */
static const char *
host_addr (slurm_step_t *step, int h, char *err, size_t errlen)
{
    char addr[NI_MAXHOST], why[TF_ERRLEN];
    const char *name = slurm_alloc_host (step->alloc, h);
    if (step->addrs[h])
        return step->addrs[h];
    if (deploy_resolve_numeric (name, addr, sizeof addr, why, sizeof why) != 0) {
        tf_error (err, errlen, "host %s of the allocation (job %s): %s", name,
                  slurm_alloc_job (step->alloc), why);
        return NULL;
    }
    step->addrs[h] = xstrdup (addr);
    return step->addrs[h];
}

/*  proc on host h as rank: where it binds, how it reaches us, what the
 *  run shows. */
static int
slurm_locate (slurm_step_t *step, proc_t *proc, int h, char *err, size_t errlen)
{
    char src[NI_MAXHOST], why[TF_ERRLEN];
    const char *addr = host_addr (step, h, err, errlen);
    if (!addr)
        return -1;
    if (deploy_route_source (addr, src, sizeof src, why, sizeof why) != 0)
        return tf_error (err, errlen, "host %s of the allocation: %s",
                         slurm_alloc_host (step->alloc, h), why);
    proc->reach = xstrdup (addr);
    proc->bind = xstrdup (addr);
    proc->control = deploy_control_from (src);
    proc->target = xasprintf ("job %s, host %s (%s), rank %d", slurm_alloc_job (step->alloc),
                              slurm_alloc_host (step->alloc, h), addr, proc->rank);
    return 0;
}

static int
slurm_check (deploy_t *self, proc_t *proc, char *const program[], int nprogram,
             char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    if (!self->slurm)
        return tf_error (err, errlen, "host slurm places the node on a host of a Slurm "
                         "allocation, with treefarm run --slurm: give --slurm");
    if (self->step && self->step->launched)
        return tf_error (err, errlen, "the Slurm step has started: a node cannot join it");
    slurm_step_t *step = step_of (self, err, errlen);
    if (!step)
        return -1;
    int h = slurm_alloc_place (step->alloc, err, errlen);
    if (h < 0)
        return -1;
    proc->rank = step->nranks++;
    step->host_of = xrealloc (step->host_of, (size_t) step->nranks * sizeof *step->host_of);
    step->host_of[proc->rank] = h;
    if (slurm_locate (step, proc, h, err, errlen) != 0)
        return -1;
    char *srun = spawn_resolve ("srun", why, sizeof why);
    free (srun);
    if (!srun)
        return tf_error (err, errlen, "cannot start the Slurm step: srun: %s", why);
    return deploy_programs_here (program, nprogram, err, errlen);
}

/* ------------------------------------------------------------------------
 *  Arming and launching.
 */

/*  argv without "--name X" and "--bind X": what every node of the step
 *  is given. A new NULL-terminated array. */
static char **
common_words (char *const argv[])
{
    int n = 0, k = 0;
    while (argv[n])
        n++;
    char **out = xcalloc ((size_t) n + 1, sizeof *out);
    for (int i = 0; i < n; i++) {
        if ((strcmp (argv[i], "--name") == 0 || strcmp (argv[i], "--bind") == 0)
            && i + 1 < n) {
            i++;
            continue;
        }
        out[k++] = xstrdup (argv[i]);
    }
    return out;
}

static int
same_words (char *const a[], char *const b[])
{
    int i = 0;
    for (; a[i] && b[i]; i++)
        if (strcmp (a[i], b[i]) != 0)
            return 0;
    return !a[i] && !b[i];
}

static int
slurm_start (deploy_t *self, proc_t *proc, char *const argv[], char *err, size_t errlen)
{
    slurm_step_t *step = self->step;
    if (!step || proc->rank < 0 || step->launched)
        return tf_error (err, errlen, "%s", step && step->launched
                         ? "the Slurm step has started already" : "not placed (no check)");
    char **words = common_words (argv);
    if (step->argv && !same_words (step->argv, words)) {
        spawn_argv_free (words);
        return tf_error (err, errlen, "its command line differs from the other Slurm "
                         "nodes' (they reach the controller at different endpoints?)");
    }
    if (!step->argv)
        step->argv = words;
    else
        spawn_argv_free (words);
    proc->started = 1;
    step->armed++;
    return 0;
}

/*  One task for each host the nodes are on, in the order of its first
 *  node. */
static void
assign_tasks (slurm_step_t *step)
{
    int hosts = slurm_alloc_hosts (step->alloc);
    free (step->task_of);
    free (step->task_host);
    step->task_of = xmalloc ((size_t) hosts * sizeof *step->task_of);
    step->task_host = xcalloc ((size_t) hosts, sizeof *step->task_host);
    for (int h = 0; h < hosts; h++)
        step->task_of[h] = -1;
    step->ntasks = 0;
    for (int r = 0; r < step->nranks; r++) {
        int h = step->host_of[r];
        if (step->task_of[h] < 0) {
            step->task_host[step->ntasks] = h;
            step->task_of[h] = step->ntasks++;
        }
    }
}

/*  The srun command line of the step. A new NULL-terminated array. */
static char **
srun_argv (const slurm_step_t *step)
{
    int n = 0;
    while (step->argv[n])
        n++;
    char **out = xcalloc ((size_t) n + 9, sizeof *out);
    size_t len = 1;
    for (int t = 0; t < step->ntasks; t++)
        len += strlen (slurm_alloc_host (step->alloc, step->task_host[t])) + 1;
    char *list = xcalloc (1, len);
    for (int t = 0; t < step->ntasks; t++)
        strcat (strcat (list, t ? "," : ""),
                slurm_alloc_host (step->alloc, step->task_host[t]));
    int k = 0;
    out[k++] = xstrdup ("srun");
    out[k++] = xasprintf ("--ntasks=%d", step->ntasks);
    out[k++] = xstrdup ("--distribution=arbitrary");
    out[k++] = xasprintf ("--nodelist=%s", list);
    out[k++] = xstrdup ("--kill-on-bad-exit=0");
    out[k++] = xstrdup ("--input=all");
    for (int i = 0; i < n; i++)
        out[k++] = xstrdup (step->argv[i]);
    out[k++] = xstrdup ("--slurm");
    free (list);
    return out;
}

/*  Every rank's block, then the end line, on the step's stdin. */
static int
send_blocks (deploy_t *self, char *err, size_t errlen)
{
    for (int i = 0; i < self->nprocs; i++) {
        const proc_t *proc = &self->procs[i];
        if (proc->host.kind != HOST_SLURM)
            continue;
        char *block = stepin_block (proc->rank,
                                    self->step->task_of[self->step->host_of[proc->rank]],
                                    proc->name, proc->bind, proc->cert_text);
        int rc = deploy_write_pipe (self->step->stdin_fd, block, strlen (block));
        explicit_bzero (block, strlen (block));
        free (block);
        if (rc != 0)
            return tf_error (err, errlen, "cannot write to the Slurm step's stdin: %s",
                             strerror (errno));
    }
    const char *end = STEPIN_END "\n";
    if (deploy_write_pipe (self->step->stdin_fd, end, strlen (end)) != 0)
        return tf_error (err, errlen, "cannot write to the Slurm step's stdin: %s",
                         strerror (errno));
    return 0;
}

int
deploy_slurm_launch (deploy_t *self, char *err, size_t errlen)
{
    slurm_step_t *step = self->step;
    if (!step || step->launched || step->armed == 0)
        return 0;
    if (step->armed != step->nranks)
        return tf_error (err, errlen, "%d of the %d Slurm nodes were started", step->armed,
                         step->nranks);
    int pipefd[2];
    if (pipe2 (pipefd, O_CLOEXEC) != 0)
        return tf_error (err, errlen, "pipe: %s", strerror (errno));
    const int fds[3] = {pipefd[0], -1, -1};
    assign_tasks (step);
    char **argv = srun_argv (step);
    int rc = spawn_start (argv, fds, &step->pid, err, errlen);
    spawn_argv_free (argv);
    close (pipefd[0]);
    if (rc != 0) {
        close (pipefd[1]);
        return -1;
    }
    step->stdin_fd = pipefd[1];
    step->launched = step->running = 1;
    for (int i = 0; i < self->nprocs; i++)
        if (self->procs[i].host.kind == HOST_SLURM && self->procs[i].started) {
            self->procs[i].pid = step->pid;
            self->procs[i].running = 1;
        }
    return send_blocks (self, err, errlen);
}

/* ------------------------------------------------------------------------
 *  Signals and exits.
 */

/*  A signal for proc's node, on the step's stdin: its node acts on it. */
static void
slurm_signal (deploy_t *self, proc_t *proc, int sig)
{
    slurm_step_t *step = self->step;
    if (!step || !step->running || step->stdin_fd < 0)
        return;
    char *line = stepin_signal_line (proc->rank, sig);
    deploy_write_pipe (step->stdin_fd, line, strlen (line));
    free (line);
}

/*  Reap srun, blocking if asked: up to SLURM_STEP_KILL_WAIT seconds, then
 *  srun is killed, which ends the step. */
static void
step_reap (slurm_step_t *step, int block)
{
    double deadline = tf_now () + SLURM_STEP_KILL_WAIT;
    int status, killed = 0;
    while (step->running) {
        pid_t rc = waitpid (step->pid, &status, block && killed ? 0 : WNOHANG);
        if (rc == step->pid || (rc < 0 && errno == ECHILD)) {
            step->running = 0;
            step->status = rc == step->pid ? status : 0;
        }
        else if (rc < 0 && errno == EINTR)
            continue;
        else if (!block)
            return;
        else if (!killed && tf_now () >= deadline) {
            kill (step->pid, SIGKILL);
            killed = 1;
        }
        else if (!killed) {
            const struct timespec ts = {0, (long) (SLURM_STEP_WAIT_STEP * 1e9)};
            nanosleep (&ts, NULL);
        }
    }
    if (step->stdin_fd >= 0) {
        close (step->stdin_fd);
        step->stdin_fd = -1;
    }
}

static void
slurm_reap (deploy_t *self, proc_t *proc, int block)
{
    slurm_step_t *step = self->step;
    if (!step)
        return;
    step_reap (step, block);
    if (step->running)
        return;
    proc->running = 0;
    proc->status = step->status;
    /*  srun's status is the worst of its tasks': one a node we killed
     *  (lost) ended with. The others' cannot be told apart: they say
     *  why they failed themselves (FAIL) before they exit. */
    for (int i = 0; i < self->nprocs && step->status != 0; i++)
        if (self->procs[i].host.kind == HOST_SLURM && self->procs[i].signalled)
            proc->status = 0;
}

void
deploy_slurm_destroy (deploy_t *self)
{
    slurm_step_t *step = self->step;
    if (!step)
        return;
    if (step->running) {
        kill (step->pid, SIGKILL);
        step_reap (step, 1);
    }
    for (int h = 0; h < slurm_alloc_hosts (step->alloc); h++)
        free (step->addrs[h]);
    free (step->addrs);
    free (step->host_of);
    free (step->task_of);
    free (step->task_host);
    spawn_argv_free (step->argv);
    slurm_alloc_destroy (&step->alloc);
    free (step);
    self->step = NULL;
}

/*  The node's command line is the step's (deploy_launch): this one only
 *  shows what it would be. */
static char **
slurm_command (const deploy_t *self, const proc_t *proc, char *const argv[])
{
    (void) self;
    (void) proc;
    return common_words (argv);
}

const backend_t deploy_backend_slurm = {
    .kind = HOST_SLURM,
    .check = slurm_check,
    .command = slurm_command,
    .holds_stdin = 0,
    .signal = slurm_signal,
    .start = slurm_start,
    .reap = slurm_reap,
};
