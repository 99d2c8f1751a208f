/*  join_cli — `treefarm join OUT NODE.json [--timeout S]`: offer a node
 *  to the run writing into OUT (docs/adapt.md, "treefarm join").
 *
 *  The node's description is checked here first, as the run would read
 *  it, so a bad file is refused without disturbing the run; then it is
 *  sent over the run's join socket (controller/join_sock.h) and the
 *  run's answer printed. The exit code is the answer's code: 0 the node
 *  joins, 1 the run did not admit it, 2 refused (the file, no run at
 *  OUT, no answer in time, or the run refused it).
 */
#ifndef TF_JOIN_CLI_H
#define TF_JOIN_CLI_H

/*  The longest --timeout, seconds. */
#define JOIN_TIMEOUT_MAX_S 86400.0

/*  The command; argv[0] is "join". Returns the exit code. */
int join_main (int argc, char **argv);

#endif
