/*  bound — `treefarm bound`: a tree's steady-state throughput upper bound.
 *
 *  Loads an experiment, computes the bound of its tree in one model
 *  (overlay/bound.h) for the config's application type or the one given
 *  by --send and --compute, and prints a per-node table with units, or
 *  JSON (--json). With --lp it also solves the model as linear programs
 *  with GLPK and shows the greedy and the LP side by side.
 *
 *  Exit codes: BOUND_EXIT_OK; BOUND_EXIT_LP_ABOVE when --lp finds the
 *  greedy above the LP anywhere (a bug: it claims what no schedule
 *  reaches) or GLPK fails; BOUND_EXIT_USAGE for a bad command line or
 *  config. The greedy below the LP is flagged in the output, not an
 *  error (docs/bounds.md).
 */
#ifndef TF_CONTROLLER_BOUND_H
#define TF_CONTROLLER_BOUND_H

#define BOUND_EXIT_OK 0
#define BOUND_EXIT_LP_ABOVE 1
#define BOUND_EXIT_USAGE 2

/*  Run `treefarm bound` with argv[0] = "bound" and the command's
 *  arguments. Returns the process exit code. */
int bound_main (int argc, char **argv);

#endif
