/*  run — `treefarm run`: deploy a tree, run the bag, collect the results.
 *
 *  Follows the sequence of docs/protocol.md through a session
 *  (controller/session.h): spawn one treefarm-node per config node, START
 *  every node once all are BOUND, show progress from the root's STATS,
 *  append the root's RECORDED completions to tasks.csv as they come, STOP
 *  everyone on FINISHED, collect the REPORTs, reap the processes, write
 *  the results directory and print a summary.
 *
 *  Exit codes (controller/cli.h): 0 complete; 1 a node failed or died, the
 *  handshake or the run timed out, a REPORT is missing, tasks.csv could
 *  not be written; 2 bad command line or config, unknown policy, a host
 *  that cannot be deployed to, node binary or results directory unusable;
 *  130 interrupted (SIGINT/SIGTERM). Whatever the path, no node process
 *  outlives the command.
 */
#ifndef TF_RUN_H
#define TF_RUN_H

/*  Run `treefarm run` with argv[0] = "run" and the command's arguments.
 *  Returns the process exit code. */
int run_main (int argc, char **argv);

#endif
