/*  burner_probe — real mode's load processes (node/burner.h) started by a
 *  process of their own, for tests/it_loadreal.sh to watch: a load of L =
 *  2 (one full burner), a job stream (U 0.5, exponential demands of mean
 *  0.2 s) and a contender (computing a fifth of the time, sending 800-byte
 *  messages to 127.0.0.1 the rest).
 *
 *    burner_probe SECONDS stop|hang
 *
 *  prints, one a line and flushed, "slot PID" per duty-cycled burner,
 *  "generator PID", "contender PID", "started"; after SECONDS, "cpu S"
 *  (the shared counter, CPU seconds), then with `stop` calls burner_stop
 *  and prints "stopped", and in both cases sleeps until killed (the test
 *  SIGKILLs it). Exits 2 on bad arguments, 1 if the load cannot start.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/burner.h"
#include "overlay/util.h"

int
main (int argc, char **argv)
{
    double seconds = argc == 3 ? atof (argv[1]) : 0;
    if (argc != 3 || !(seconds > 0 && seconds < 60)
        || (strcmp (argv[2], "stop") != 0 && strcmp (argv[2], "hang") != 0)) {
        fprintf (stderr, "usage: burner_probe SECONDS(0..60) stop|hang\n");
        return 2;
    }
    load_point_t steps[] = {{0, 2.0}};
    load_stream_t stream = {.utilization = 0.5, .demand_kind = DIST_EXP,
                            .demand_mean_s = 0.2, .demand_cv = 1,
                            .arrival_kind = DIST_EXP, .arrival_cv = 1};
    load_contender_t contender = {.compute = 0.2, .comm = 0.8, .msg_bytes = 800,
                                  .period_s = 0.2};
    load_t load = {.streams = &stream, .nstreams = 1, .contenders = &contender,
                   .ncontenders = 1, .steps = steps, .nsteps = 1, .seed = 3};
    burner_opts_t opts = {.node = "probe", .dest_host = NULL, .t0 = tf_now ()};
    char err[TF_ERRLEN];
    burner_t *b = burner_start (&load, &opts, err, sizeof err);
    if (!b) {
        fprintf (stderr, "burner_probe: %s\n", err);
        return 1;
    }
    pid_t pids[BURNER_MAX_SLOTS + 2];
    int n = burner_pids (b, pids, BURNER_MAX_SLOTS + 2);
    int slots = burner_slots (&load);
    for (int i = 0; i < n; i++)
        printf ("%s %d\n", i < slots ? "slot" : i == slots ? "generator" : "contender",
                (int) pids[i]);
    printf ("started\n");
    fflush (stdout);
    usleep ((useconds_t) (seconds * 1e6));
    printf ("cpu %.3f\n", burner_cpu_seconds (b));
    if (strcmp (argv[2], "stop") == 0) {
        burner_stop (&b);
        printf ("stopped\n");
    }
    fflush (stdout);
    for (;;)
        pause ();
}
