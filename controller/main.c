/*  treefarm — the controller's command line: `treefarm COMMAND [ARGS]`.
 *
 *  Every command is one line in the table below: its name, a one-line
 *  summary for `treefarm --help`, and its function, which gets argv with
 *  argv[0] = the command's name and returns the exit code. A command
 *  answers its own --help.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "controller/bound.h"
#include "controller/join_cli.h"
#include "controller/loadrec.h"
#include "controller/measure.h"
#include "controller/run.h"
#include "controller/simulate.h"
#include "controller/study.h"
#include "overlay/proto.h"
#include "overlay/util.h"
#include "policies/policy.h"

#ifndef TREEFARM_VERSION
#define TREEFARM_VERSION "0.1.0"
#endif

#define EXIT_USAGE 2

typedef struct {
    const char *name;
    const char *summary;
    int (*main) (int argc, char **argv);
} command_t;

static int policies_main (int argc, char **argv);
static int help_main (int argc, char **argv);

static const command_t commands[] = {
    {"run", "run an experiment on a tree of node processes, write its results",
     run_main},
    {"simulate", "simulate an experiment on SimGrid, write its results as run does",
     simulate_main},
    {"bound", "compute a tree's steady-state throughput upper bound", bound_main},
    {"bench", "run a grid of (send, compute, policy) cells, compare the policies",
     study_main},
    {"measure", "calibrate a deployed tree: measure C, link rates and interference", measure_main},
    {"join", "offer a node to a running run (--adapt) writing into OUT", join_main},
    {"load", "background load tools: record this machine's load as a trace",
     loadrec_main},
    {"policies", "list the scheduling policies", policies_main},
    {"help", "show this help, or a command's (help COMMAND)", help_main},
};

#define NCOMMANDS ((int) (sizeof commands / sizeof commands[0]))

static const command_t *
command_find (const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp (commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm COMMAND [ARGS]\n"
             "       treefarm COMMAND --help\n"
             "       treefarm --version\n"
             "\n"
             "Farm bags of independent tasks over a tree of machines.\n"
             "\n"
             "commands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf (out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

/*  `treefarm help [COMMAND]`. */
static int
help_main (int argc, char **argv)
{
    if (argc < 2) {
        usage (stdout);
        return 0;
    }
    const command_t *command = command_find (argv[1]);
    if (!command || command->main == help_main) {
        if (!command)
            fprintf (stderr, "treefarm: unknown command \"%s\" (see treefarm --help)\n",
                     argv[1]);
        else
            usage (stdout);
        return command ? 0 : EXIT_USAGE;
    }
    char *help_argv[] = {(char *) command->name, "--help", NULL};
    return command->main (2, help_argv);
}

/*  `treefarm policies`: one line per registered policy. */
static int
policies_main (int argc, char **argv)
{
    if (argc == 2 && (!strcmp (argv[1], "--help") || !strcmp (argv[1], "-h"))) {
        printf ("usage: treefarm policies\n\n"
                "List the scheduling policies a run can use (--policy NAME or\n"
                "\"policy\" in the config): name, port model, summary.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf (stderr, "treefarm policies: unexpected argument \"%s\" "
                 "(see treefarm policies --help)\n", argv[1]);
        return EXIT_USAGE;
    }
    int width = 4;
    for (int i = 0; policy_at (i); i++)
        if ((int) strlen (policy_at (i)->name) > width)
            width = (int) strlen (policy_at (i)->name);
    for (int i = 0; policy_at (i); i++) {
        const policy_t *policy = policy_at (i);
        printf ("%-*s  %-11s  %s\n", width, policy->name,
                policy->multiport ? "multi-port" : "single-port", policy->summary);
    }
    return 0;
}

int
main (int argc, char **argv)
{
    /*  One malloc arena, as in the node (node/main.c): libzmq's I/O thread
     *  then allocates from the heap the session reserves up front
     *  (session.c, tf_heap_reserve) instead of an arena of its own that
     *  grows as the run goes (docs/performance.md, "Scale and memory"). */
    mallopt (M_ARENA_MAX, 1);
    /*  The nodes it starts run without glibc's tcache (overlay/util.h):
     *  their private memory stays flat. This process keeps its own
     *  allocator as it started. */
    tf_malloc_env_for_nodes ();
    if (argc < 2) {
        usage (stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp (name, "--help") || !strcmp (name, "-h")) {
        usage (stdout);
        return 0;
    }
    if (!strcmp (name, "--version") || !strcmp (name, "-V")) {
        printf ("treefarm %s (protocol %d)\n", TREEFARM_VERSION, PROTO_VERSION);
        return 0;
    }
    const command_t *command = command_find (name);
    if (!command) {
        fprintf (stderr, "treefarm: unknown %s \"%s\" (see treefarm --help)\n",
                 name[0] == '-' ? "option" : "command", name);
        return EXIT_USAGE;
    }
    return command->main (argc - 1, argv + 1);
}
