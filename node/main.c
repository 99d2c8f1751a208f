/*  treefarm-node — one node of a treefarm tree. Started by the controller;
 *  see `treefarm-node --help`. */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "node/node.h"
#include "node/step.h"
#include "overlay/util.h"

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm-node --name NAME --controller ENDPOINT [--bind ADDRESS]\n"
             "                     [--cert FILE] [--verbose]\n"
             "       treefarm-node --slurm --controller ENDPOINT [--verbose]\n"
             "\n"
             "One node of a treefarm tree. The controller (`treefarm run`) starts one\n"
             "per tree node; you do not usually run it by hand. It connects to the\n"
             "controller at ENDPOINT (tcp://HOST:PORT or ipc://PATH), receives the\n"
             "experiment, binds an endpoint for its children, connects to its parent,\n"
             "computes tasks and forwards tasks to children that ask, until the\n"
             "controller stops it.\n"
             "\n"
             "  --name NAME          this node's name in the experiment's tree\n"
             "  --controller EP      the controller's endpoint\n"
             "  --bind ADDRESS       the address to bind for the children (default:\n"
             "                       what the node's host in the experiment says:\n"
             "                       127.0.0.1 for local, the address given, an ssh\n"
             "                       host's name)\n"
             "  --cert FILE          this node's CURVE certificate for the run (made by\n"
             "                       the controller, mode 0600): every socket is then\n"
             "                       CURVE, authenticated and encrypted\n"
             "                       (docs/security.md)\n"
             "  --slurm              a task of the controller's srun step: the names,\n"
             "                       addresses to bind and certificates of the\n"
             "                       nodes of task $SLURM_PROCID come on stdin, which\n"
             "                       stays open: its end stops them; with several,\n"
             "                       one process is forked for each (docs/deploy.md,\n"
             "                       \"Slurm\")\n"
             "  --verbose            log the steps of the run (bind, connect, stop)\n"
             "  -h, --help           this help\n"
             "\n"
             "Exit status: 0 when stopped by the controller, 1 on failure, 2 on bad usage.\n");
}

/*  What the options say together. Returns -1 to go on, or 2. */
static int
check_args (int argc, const node_opts_t *opts, int slurm)
{
    const char *bad = optind < argc ? "unexpected argument"
                    : slurm && (opts->name || opts->bind || opts->cert)
                    ? "--slurm takes the name, address and certificate from stdin"
                    : !opts->controller || (!slurm && !opts->name)
                    ? "--name (or --slurm) and --controller are required" : NULL;
    if (bad) {
        fprintf (stderr, "treefarm-node: %s\n", bad);
        usage (stderr);
        return 2;
    }
    return -1;
}

/*  Read the command line into *opts. Returns -1 to go on, or the exit
 *  status to leave with at once (0 after --help, 2 on bad usage). */
static int
parse_args (int argc, char **argv, node_opts_t *opts, int *slurm)
{
    static const struct option longopts[] = {
        {"name", required_argument, NULL, 'n'},
        {"controller", required_argument, NULL, 'c'},
        {"bind", required_argument, NULL, 'b'},
        {"cert", required_argument, NULL, 'k'},
        {"slurm", no_argument, NULL, 's'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long (argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            opts->name = optarg;
            break;
        case 'c':
            opts->controller = optarg;
            break;
        case 'b':
            opts->bind = optarg;
            break;
        case 'k':
            opts->cert = optarg;
            break;
        case 's':
            *slurm = 1;
            break;
        case 'v':
            opts->verbose = 1;
            break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            usage (stderr);
            return 2;
        }
    }
    return check_args (argc, opts, *slurm);
}

int
main (int argc, char **argv)
{
    /*  One malloc arena for the process's few threads (the loop, the
     *  engine or command workers, libzmq's I/O thread) instead of one
     *  each: every arena keeps its own pages, and hundreds of nodes on one
     *  machine pay for them many times (about 100 to 170 KiB of RssAnon
     *  a node; docs/performance.md, "Scale and memory"). The controller
     *  also started this process with tcache off (overlay/util.h,
     *  TF_MALLOC_TUNABLE); the commands it runs get the user's
     *  environment back. */
    mallopt (M_ARENA_MAX, 1);
    tf_malloc_env_restore ();
    node_opts_t opts = {0};
    int slurm = 0;
    int status = parse_args (argc, argv, &opts, &slurm);
    if (status >= 0)
        return status;
    if (!slurm)
        return node_run (&opts);
    char err[TF_ERRLEN];
    step_node_t step;
    int setup = step_node_setup (&step, &opts, &status, err, sizeof err);
    if (setup != 0) {
        if (setup < 0)
            fprintf (stderr, "treefarm-node: %s\n", err);
        step_node_clear (&step);
        return setup < 0 ? 1 : status;
    }
    status = node_run (&opts);
    step_node_clear (&step);
    return status;
}
