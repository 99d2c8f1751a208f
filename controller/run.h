/*  run — `treefarm run`: deploy a tree, run the bag, collect the results.
 *
 *  Follows the sequence of docs/protocol.md: bind the control ROUTER,
 *  spawn one treefarm-node per config node, answer each HELLO with the
 *  CONFIG, START every node once all are BOUND, show progress from the
 *  root's STATS, STOP everyone on FINISHED, collect the REPORTs, reap the
 *  processes, write the results directory and print a summary.
 *
 *  Exit codes: RUN_EXIT_OK, RUN_EXIT_FAILED (a node failed or died, the
 *  handshake or the run timed out, a REPORT is missing), RUN_EXIT_USAGE
 *  (bad command line or config, unknown policy, node binary or results
 *  directory unusable), RUN_EXIT_INTERRUPTED (SIGINT/SIGTERM). Whatever
 *  the path, no node process outlives the command.
 */
#ifndef TF_RUN_H
#define TF_RUN_H

#define RUN_EXIT_OK 0
#define RUN_EXIT_FAILED 1
#define RUN_EXIT_USAGE 2
#define RUN_EXIT_INTERRUPTED 130

/*  Seconds allowed: for every node to say HELLO and BOUND (counted from
 *  the last handshake message received, so a slow start under valgrind
 *  is not a failure while nodes keep answering); for a node to exit after
 *  SIGTERM before SIGKILL. */
#define RUN_HANDSHAKE_TIMEOUT 10.0
#define RUN_STOP_GRACE 2.0

/*  REPORTs after STOP: the wait is proportional to what the tree still has
 *  to say. It starts at RUN_REPORT_TIMEOUT plus RUN_REPORT_PER_NODE for
 *  every node not yet reported (a REPORT is parsed and filed in well under
 *  a millisecond; the allowance covers 255 nodes starved of CPU on two
 *  cores), and every REPORT that arrives pushes the deadline to at least
 *  RUN_REPORT_TIMEOUT from then: a tree that keeps reporting is never cut
 *  off, one that falls silent is given up on after RUN_REPORT_TIMEOUT. */
#define RUN_REPORT_TIMEOUT 5.0
#define RUN_REPORT_PER_NODE 0.05

/*  Run `treefarm run` with argv[0] = "run" and the command's arguments.
 *  Returns the process exit code. */
int run_main (int argc, char **argv);

/*  Run `treefarm measure` (argv[0] = "measure"): deploy the tree as run
 *  does, calibrate it instead of running a bag (controller/measure.h), and
 *  write the measured platform. Returns the process exit code. */
int measure_main (int argc, char **argv);

#endif
