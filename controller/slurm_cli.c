/*  slurm_cli — `treefarm run`'s Slurm options and the watch on the job's
 *  end. See slurm_cli.h.
 */
#include "controller/slurm_cli.h"

#include <stdlib.h>
#include <string.h>

#include "controller/cli.h"
#include "controller/results.h"
#include "controller/slurm.h"
#include "controller/slurm_tree.h"
#include "overlay/host.h"
#include "overlay/util.h"

void
slurm_cli_usage (FILE *out)
{
    fprintf (out,
             "  --slurm            place the nodes on the hosts of the Slurm allocation\n"
             "                     this runs in (salloc, sbatch): those with host\n"
             "                     \"slurm\", or every node when none names a host,\n"
             "                     one CPU each, round the hosts in order; all start\n"
             "                     with one srun step (docs/deploy.md, \"Slurm\")\n"
             "  --tree auto        with --slurm and --fanout K: instead of the config's\n"
             "                     tree, one node per host of the allocation, named\n"
             "                     after it, its slots the host's CPUs, a complete\n"
             "                     K-ary tree in the allocation's order; each node's\n"
             "                     other fields from the config's root (the root) or\n"
             "                     its second node (the others)\n"
             "  --fanout K         the children of each node of --tree auto\n"
             "  --slurm-args ARGS  outside an allocation, ask for one first: run this\n"
             "                     command again under `salloc ARGS` with --slurm,\n"
             "                     e.g. --slurm-args '-N 16 -p batch -t 60' (ARGS\n"
             "                     split at blanks)\n");
}

/* ------------------------------------------------------------------------
 *  The options.
 */

/*  --tree auto --fanout K, with --slurm: *cfg_p's tree replaced by one of
 *  the allocation's hosts (controller/slurm_tree.h). Returns 0, or -1
 *  after saying why (*cfg_p kept). */
static int
tree_auto (config_t **cfg_p, const slurm_cli_t *so, int slurm, const char *path)
{
    char err[TF_ERRLEN];
    const char *bad = !so->tree || !so->fanout ? "--tree auto and --fanout K go together"
                    : strcmp (so->tree, "auto") != 0
                    ? "--tree takes auto: one node per host of the Slurm allocation"
                    : !slurm ? "--tree auto places the nodes with --slurm"
                    : so->fanout != (int) so->fanout || so->fanout > SLURM_TREE_FANOUT_MAX
                    ? "--fanout takes a whole number of children"
                    : so->load ? "--load names the config's nodes, and --tree auto names "
                                 "them after the allocation's hosts" : NULL;
    if (bad) {
        cli_usage_error ("run", CLI_EXIT_USAGE, "%s", bad);
        return -1;
    }
    slurm_alloc_t *alloc = slurm_alloc_read (err, sizeof err);
    config_t *tree = alloc ? slurm_tree_config (*cfg_p, alloc, (int) so->fanout,
                                                path, err, sizeof err) : NULL;
    slurm_alloc_destroy (&alloc);
    if (!tree) {
        session_log (NULL, "%s: --tree auto: %s", path, err);
        return -1;
    }
    config_destroy (cfg_p);
    *cfg_p = tree;
    return 0;
}

/*  --slurm-args: outside an allocation, run again under salloc (the
 *  config checked first, so a bad one asks Slurm for nothing). Returns
 *  only on failure, -1 after saying why. */
static int
salloc_again (const char *args, int argc, char **argv)
{
    char err[TF_ERRLEN];
    const char *job = getenv ("SLURM_JOB_ID");
    if (job && *job) {
        cli_usage_error ("run", CLI_EXIT_USAGE, "--slurm-args asks Slurm for an "
                         "allocation, and this runs in one (job %s): give --slurm", job);
        return -1;
    }
    slurm_salloc_exec (args, "run", argc, argv, err, sizeof err);
    cli_usage_error ("run", CLI_EXIT_USAGE, "--slurm-args: %s", err);
    return -1;
}

int
slurm_cli_apply (config_t **cfg_p, const slurm_cli_t *so, int slurm, const char *path,
                 int argc, char **argv)
{
    if (so->args && salloc_again (so->args, argc, argv) != 0)
        return -1;
    if ((so->tree || so->fanout) && tree_auto (cfg_p, so, slurm, path) != 0)
        return -1;
    return 0;
}


/* ------------------------------------------------------------------------
 *  The job's end.
 */

/*  The Slurm job's end, when the run's nodes are placed by Slurm and the
 *  job has a time limit (squeue); 0 otherwise. */
static time_t
job_end_of (session_t *s)
{
    const config_t *cfg = session_config (s);
    const char *job = getenv ("SLURM_JOB_ID");
    int placed = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        placed |= strcmp (cfg->nodes[i].host, HOST_SLURM_TEXT) == 0;
    char err[TF_ERRLEN];
    time_t end = 0;
    if (placed && job && slurm_job_end (job, &end, err, sizeof err) != 0)
        session_log (s, "cannot tell when the Slurm job ends: %s", err);
    return placed ? end : 0;
}

void
slurm_watch_tick (slurm_watch_t *job, session_t *s, double now)
{
    double since = now - session_started_at (s);
    if (!job->end || job->warned || since < SLURM_WATCH_FIRST_S
        || now - job->t_check < SLURM_WATCH_EVERY_S)
        return;
    uint64_t done = results_completed (session_results (s));
    uint64_t total = config_bag_size (session_config (s));
    if (done <= job->done_at_start || done >= total)
        return;   /* no rate yet: looked at again on the next turn */
    job->t_check = now;
    double rate = (double) (done - job->done_at_start) / since;
    double need = (double) (total - done) / rate, left = difftime (job->end, time (NULL));
    if (need <= left)
        return;
    job->warned = 1;
    session_log (s, "the Slurm job ends in %.0f s, before the bag: %llu tasks left at "
                 "%.2f tasks/s need %.0f s; what is not done by then stays in the journal, "
                 "and --resume in a new allocation continues", left,
                 (unsigned long long) (total - done), rate, need);
}

void
slurm_watch_start (slurm_watch_t *self, session_t *s)
{
    self->done_at_start = results_completed (session_results (s));
    self->end = job_end_of (s);
}
