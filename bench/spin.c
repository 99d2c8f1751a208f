/*  spin — burn SECONDS of CPU time and exit 0: the command of make bench's
 *  short CPU-bound commands (scripts/bench-commands.sh). It counts its own
 *  CPU time (CLOCK_PROCESS_CPUTIME_ID), not wall time, so a command
 *  descheduled by other work on the machine runs longer rather than doing
 *  less work: the efficiency it measures is the share of the CPUs that
 *  went to the commands.
 *
 *    spin SECONDS      0 <= SECONDS <= 3600
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_MAX_S 3600.0

static double
cpu_seconds (void)
{
    struct timespec t;
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

int
main (int argc, char **argv)
{
    char *end = NULL;
    errno = 0;
    double s = argc == 2 ? strtod (argv[1], &end) : -1;
    if (argc != 2 || errno || end == argv[1] || *end || !(s >= 0 && s <= SPIN_MAX_S)) {
        fprintf (stderr, "usage: spin SECONDS (CPU seconds to burn, 0 to %.0f)\n", SPIN_MAX_S);
        return 2;
    }
    volatile unsigned long x = 0;
    while (cpu_seconds () < s)
        for (int i = 0; i < 1000; i++)   /* a few microseconds between clock reads */
            x++;
    return 0;
}
