/*  study_sim — a cell of `treefarm bench --simulate`. See study_int.h.
 *
 *  The cell's config, as the strict loader made it, goes to
 *  DIR/runs/NAME/config.json, and treefarm-sim runs it into that
 *  directory as a child: SimGrid's engine is global to a process (one
 *  simulation per process, sim/sim.h), and the controller does not link
 *  SimGrid at all (a build without it still runs every other study).
 *  The child's stdin is /dev/null and its stdout too (with --quiet it
 *  prints only a failed run's summary, which results.json and runs.csv
 *  hold already: the study's stdout stays its own); its stderr, where it
 *  says why it failed, passes through.
 *
 *  The study waits for it looking at zsys_interrupted, so that a Ctrl-C
 *  (or a SIGINT or SIGTERM sent to the study alone, which the child does
 *  not get) stops the child before the study stops; --timeout too.
 */
#include "controller/study_int.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/results.h"
#include "controller/session.h"
#include "controller/simulate.h"
#include "controller/spawn.h"
#include "controller/study_out.h"
#include "overlay/util.h"
#include "policies/policy.h"

/*  The wait looks at the child after WAIT_FIRST_S, then twice as long
 *  each time up to WAIT_MAX_S: a cell of a small tree simulates in tens
 *  of milliseconds, which a fixed 50 ms nap would double, and a long one
 *  costs 20 wake-ups a second. */
#define WAIT_FIRST_S 0.0005
#define WAIT_MAX_S 0.05

/*  How long a child told to stop (SIGTERM) has before SIGKILL. The
 *  simulator keeps nothing to save: its results.json is written at the
 *  end only, so a stopped cell is pending again. */
#define STOP_GRACE_S 2.0

typedef enum {
    STOP_NONE = 0,
    STOP_INTERRUPT,          /* zsys_interrupted: Ctrl-C, SIGTERM */
    STOP_TIMEOUT,            /* --timeout */
} stop_t;

char *
study_sim_program (char *err, size_t errlen)
{
    char *program = simulate_program ();
    char *path = spawn_resolve (program, err, errlen);
    free (program);
    return path;
}

/*  DIR/runs/NAME made, and the cell's config written there as config.json
 *  for the simulator. Returns its path, or NULL with a message. */
static char *
write_config (const config_t *cfg, const char *dir, char *err, size_t errlen)
{
    if (results_make_dir (dir, err, errlen) != 0)
        return NULL;
    char *text = config_to_json (cfg);
    json_t *json = text ? json_loads (text, 0, NULL) : NULL;
    free (text);
    int rc = json ? study_out_write_json (dir, "config.json", json, err, errlen)
                  : tf_error (err, errlen, "%s: the config as JSON failed", dir);
    json_decref (json);
    return rc == 0 ? xasprintf ("%s/config.json", dir) : NULL;
}

/*  Sleep that long, or less. */
static void
nap (double seconds)
{
    struct timespec ts = {.tv_sec = (time_t) seconds,
                          .tv_nsec = (long) (fmod (seconds, 1) * 1e9)};
    nanosleep (&ts, NULL);   /* a signal cuts it short: we look sooner */
}

/*  Wait for pid to end, stopping it (SIGTERM, then SIGKILL after
 *  STOP_GRACE_S) on a Ctrl-C or after timeout seconds (0: none), and
 *  say which in *stop. Returns its raw wait status. */
static int
wait_child (pid_t pid, double timeout, stop_t *stop)
{
    double start = tf_now (), gap = WAIT_FIRST_S, stopped_at = NAN;
    int status = 0;
    *stop = STOP_NONE;
    for (;;) {
        pid_t got = waitpid (pid, &status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR))
            return status;
        double now = tf_now ();
        if (*stop == STOP_NONE && zsys_interrupted)
            *stop = STOP_INTERRUPT;
        else if (*stop == STOP_NONE && timeout > 0 && now - start > timeout)
            *stop = STOP_TIMEOUT;
        if (*stop != STOP_NONE && isnan (stopped_at)) {
            kill (pid, SIGTERM);
            stopped_at = now;
        }
        else if (now - stopped_at > STOP_GRACE_S)
            kill (pid, SIGKILL);
        nap (gap);
        gap = fmin (2 * gap, WAIT_MAX_S);
    }
}

/*  The child's raw wait status as the in-process run's exit status, and
 *  a message when results.json cannot have one. A child stopped by us
 *  ended as we stopped it, whatever it says, unless it completed first;
 *  one dead of SIGINT had the terminal's Ctrl-C, as the study did. */
static int
exit_code (const bench_t *b, int status, stop_t stop, const char *config, char *err,
           size_t errlen)
{
    int code = WIFEXITED (status) ? WEXITSTATUS (status) : -1;
    int sig = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
    if (code == CLI_EXIT_OK)
        return CLI_EXIT_OK;
    if (stop == STOP_INTERRUPT || sig == SIGINT)
        return CLI_EXIT_INTERRUPTED;
    if (stop == STOP_TIMEOUT)
        tf_error (err, errlen, "run timed out after %g s", b->opt.timeout);
    else if (code == CLI_EXIT_USAGE) {
        tf_error (err, errlen, "the simulator refused %s", config);
        session_log (NULL, "%s: the simulator refused it (exit status 2, its message "
                     "above); the study stops", config);
        return CLI_EXIT_USAGE;
    }
    else if (sig)
        tf_error (err, errlen, "the simulator was killed by signal %d (%s)", sig,
                  strsignal (sig));
    else if (code != CLI_EXIT_FAILED)
        tf_error (err, errlen, "the simulator exited with status %d", code);
    return CLI_EXIT_FAILED;
}

/*  Start the simulator on config into dir, wait for it and map its end.
 *  Returns the exit status as study_sim_cell's. */
static int
simulate (const bench_t *b, const char *config, const char *dir, int no_endgame,
          char *err, size_t errlen)
{
    char *argv[] = {b->sim, (char *) config, "--out", (char *) dir, "--quiet",
                    no_endgame ? "--no-endgame" : NULL, NULL};
    int out = open ("/dev/null", O_WRONLY | O_CLOEXEC);
    if (out >= 0 && out <= STDERR_FILENO) {
        /*  A standard descriptor was closed: spawn_start takes fds above 2. */
        int high = fcntl (out, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        close (out);
        out = high;
    }
    const int fds[3] = {-1, out, -1};
    pid_t pid;
    fflush (NULL);           /* what we said before, ahead of what it says */
    int rc = out >= 0 ? spawn_start (argv, fds, &pid, err, errlen)
                      : tf_error (err, errlen, "/dev/null: %s", strerror (errno));
    if (out >= 0)
        close (out);
    if (rc != 0) {
        simulate_cannot_run ("bench", err);
        return CLI_EXIT_USAGE;
    }
    stop_t stop;
    int status = wait_child (pid, b->opt.timeout, &stop);
    return exit_code (b, status, stop, config, err, errlen);
}

int
study_sim_cell (const bench_t *b, config_t **cfg_p, const char *dir, char *err,
                size_t errlen)
{
    config_t *cfg = *cfg_p;
    *cfg_p = NULL;
    const policy_t *policy = policy_find (cfg->policy);
    int root_only = policy && policy->root_only;
    /*  The simulator refuses an end-game switched off for a policy that
     *  has none (run_endgame_option), where a run in process ignores it:
     *  such a cell keeps its end-game "on", which changes nothing. */
    if (root_only)
        cfg->platform.endgame = 1;
    char *config = write_config (cfg, dir, err, errlen);
    config_destroy (&cfg);
    if (!config) {
        session_log (NULL, "%s", err);
        return CLI_EXIT_USAGE;
    }
    int code = simulate (b, config, dir, b->no_endgame && !root_only, err, errlen);
    free (config);
    return code;
}
