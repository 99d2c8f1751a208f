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

#include "controller/session.h"
#include "overlay/config.h"

/*  Run `treefarm run` with argv[0] = "run" and the command's arguments.
 *  Returns the process exit code. */
int run_main (int argc, char **argv);

/*  How much a run shows: its progress line and summary (LOUD), the
 *  summary only (QUIET, --quiet), nothing but errors on stderr (SILENT:
 *  `treefarm bench` runs many, and reports their fidelity itself). */
typedef enum {
    RUN_LOUD = 0,
    RUN_QUIET,
    RUN_SILENT,
} run_quiet_t;

/*  --no-endgame (no_endgame set) switches the end-game off in cfg; an
 *  end-game off with a policy that has none (root-computes) is refused
 *  naming both. Returns 0, or -1 after a usage error for command. */
int run_endgame_option (config_t *cfg, int no_endgame, const char *command);

/*  A policy that computes on the root only (root-computes) with a relay
 *  root ("slots": 0), which computes nothing, is refused: returns -1 with
 *  the message in err, naming the policy and the node; else 0. */
int run_relay_policy (const config_t *cfg, const char *policy, char *err, size_t errlen);

/*  --ia-order ORDER (NULL: not given; "alone" or "both") of command onto
 *  cfg's platform.ia_order. Returns 0, or -1 after a usage error naming
 *  the value. */
int run_ia_order_option (config_t *cfg, const char *order, const char *command);

/*  --adapt and --reclaim MODE (NULL: not given) of command onto cfg.
 *  Returns 0, or -1 after a usage error (an unknown mode, --reclaim in
 *  a run that does not adapt). */
int run_adapt_options (config_t *cfg, int adapt, const char *reclaim, const char *command);

/*  The experiment at path with the policy named (NULL: the config's),
 *  spelled as the registry does (IA:Single, ia_single, ...: "ia-single"),
 *  checked against the registry and against a relay root
 *  (run_relay_policy). Returns a config the caller destroys,
 *  or NULL after printing why (a usage error). */
config_t *run_load_experiment (const char *path, const char *policy,
                               const char *load_path);

/*  Run the synthetic bag of *cfg_p, which it takes (nulling the caller's
 *  pointer), in this process, exactly as `treefarm run` would, into
 *  opt->out_dir (results.json, nodes.csv, tasks.csv). Returns the exit
 *  status of `treefarm run` (cli.h): OK, FAILED, USAGE, INTERRUPTED. */
int run_synthetic (const session_opts_t *opt, config_t **cfg_p, run_quiet_t quiet);

#endif
