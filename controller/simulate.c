/*  simulate — see simulate.h. */
#include "controller/simulate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/cli.h"
#include "overlay/util.h"

char *
simulate_program (void)
{
    return cli_find_program (NULL, "TREEFARM_SIM", "treefarm-sim");
}

void
simulate_cannot_run (const char *command, const char *why)
{
    fprintf (stderr,
             "treefarm %s: cannot run %s\n"
             "treefarm %s: the simulator is built only where SimGrid is installed:\n"
             "  apt-get install libsimgrid-dev (or scripts/install-deps.sh as root),\n"
             "  then make (docs/simulate.md)\n", command, why, command);
}

int
simulate_main (int argc, char **argv)
{
    char *program = simulate_program ();
    char **args = xcalloc ((size_t) argc + 1, sizeof *args);
    args[0] = program;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    fflush (NULL);
    execvp (program, args);
    char *why = xasprintf ("%s: %s", program, strerror (errno));
    simulate_cannot_run ("simulate", why);
    free (why);
    free (args);
    free (program);
    return CLI_EXIT_USAGE;
}
