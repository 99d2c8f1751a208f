/*  simulate — `treefarm simulate`: the experiment on SimGrid
 *  (docs/simulate.md), run by the treefarm-sim program, which links the
 *  node layer's cores with SimGrid and the controller's results; this
 *  command finds it and hands it the arguments.
 */
#ifndef TF_SIMULATE_H
#define TF_SIMULATE_H

/*  The simulator: $TREEFARM_SIM, else treefarm-sim next to treefarm,
 *  else on PATH. Returns a new string. */
char *simulate_program (void);

/*  Say on stderr, as command ("simulate", "bench"), that the simulator
 *  cannot be run (why: the program and the reason) and how to get it. */
void simulate_cannot_run (const char *command, const char *why);

/*  `treefarm simulate ARGS`: runs the simulator with ARGS (argv[0] is
 *  "simulate"), and returns its exit status; 2 with how to get it when
 *  it cannot be run (a build without SimGrid). */
int simulate_main (int argc, char **argv);

#endif
