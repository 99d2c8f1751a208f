/*  runner — run one command task in a work directory, and find what it
 *  left there.
 *
 *  runner_run forks the command into its own process group, with stdin
 *  from /dev/null, stdout and stderr to files, no other descriptor, the
 *  node's environment plus the task's additions, and its work directory
 *  as cwd. It blocks until the command is over, watching three things at
 *  once with poll: the command's exit (a pidfd, Linux >= 5.3), the
 *  caller's cancel descriptor, and the timeout. A cancel or a timeout
 *  sends SIGTERM to the whole group, then SIGKILL RUNNER_KILL_GRACE
 *  seconds later if the leader is still alive. When the leader exits, for
 *  whatever reason, whatever is left of its group is SIGKILLed: a task
 *  leaves no process behind (one that left the group with setsid or
 *  setpgid escapes; a cgroup would catch it, this does not). The child is
 *  always reaped. It also gets SIGKILL if the thread that called
 *  runner_run dies (PR_SET_PDEATHSIG), so a node that dies takes its
 *  running command with it.
 *
 *  The command's failure is a result, not an error: a non-zero exit, a
 *  signal, a timeout, a cancel, and an exec failure, which comes out like
 *  a shell's: exit status 127 (126 when the file exists but cannot be
 *  executed) with "treefarm: NAME: REASON" in the stderr file. runner_run
 *  returns -1 only when it could not run anything (a bad spec, a missing
 *  work directory, an output file it cannot create, fork failed).
 *
 *  The caller must not ignore SIGCHLD (SIG_IGN reaps children by itself,
 *  and the status would be lost) and must not reap the child on its own.
 *  The runner sizes no output: the command may fill the disk through its
 *  stdout and stderr files (a bundle's limits apply when they are sent).
 */
#ifndef TF_RUNNER_H
#define TF_RUNNER_H

#include <stddef.h>

/*  How much of the end of stderr a result carries: enough for the last
 *  lines of an error message, small enough for a FAIL message or a log
 *  line. */
#define RUNNER_TAIL_BYTES 2048

/*  Seconds between SIGTERM and SIGKILL on a cancel or timeout: time for
 *  a command to clean up, short enough not to hold a node's slot. */
#define RUNNER_KILL_GRACE 2.0

/*  Limits on a spec, which comes from a task: the most argv entries and
 *  environment additions, and the longest timeout (30 days: longer is a
 *  typo, not a task). exec itself refuses arguments too long in total
 *  (E2BIG, then exit 126 like any exec failure). */
#define RUNNER_MAX_ARGS 4096
#define RUNNER_MAX_ENV 1024
#define RUNNER_MAX_TIMEOUT (30 * 86400.0)

/*  The deepest directory runner_outputs lists, levels below the work
 *  directory: each level holds a descriptor while it is read. */
#define RUNNER_MAX_DEPTH 128

/*  What to run. Exactly one of argv and sh. Every pointer is borrowed for
 *  the call. */
typedef struct {
    const char *const *argv; /* NULL-terminated; argv[0] searched on PATH
                                (the command's PATH) unless it has a '/' */
    const char *sh;          /* or: run as /bin/sh -c sh */
    const char *const *env;  /* "KEY=VALUE" additions, NULL-terminated, or
                                NULL; each replaces the node's KEY, and a
                                later one an earlier one */
    double timeout_s;        /* wall seconds; 0: none */
    const char *workdir;     /* the command's cwd; must exist */
    const char *stdout_path; /* created (truncated) with mode 0644; a */
    const char *stderr_path; /* relative path is the caller's, not workdir's;
                                the same path for both interleaves them */
} runner_spec_t;

/*  How it went. */
typedef struct {
    int exited;              /* ended by exit: exit_code is its status */
    int exit_code;
    int signal;              /* else the signal that ended it */
    int timed_out;           /* the timeout fired (whatever the ending) */
    int cancelled;           /* cancel_fd fired (whatever the ending) */
    double wall_s;           /* from fork to reap */
    size_t stderr_len;       /* bytes in stderr_tail */
    int stderr_truncated;    /* stderr was longer than RUNNER_TAIL_BYTES */
    char stderr_tail[RUNNER_TAIL_BYTES + 1];   /* its last bytes, NUL-ended
                                                  (they may hold NULs too) */
} runner_result_t;

/*  Run spec to its end and fill *out. cancel_fd, if >= 0, is watched for
 *  reading: once readable (or hung up) the command is stopped as on a
 *  timeout and out->cancelled set; the runner reads nothing from it.
 *  Blocks for as long as the command runs (plus at most the grace).
 *  Returns 0 with *out filled, whatever the command did; or -1 with a
 *  message in err and nothing running: the spec breaks a limit above,
 *  cancel_fd is not open, the work directory cannot be opened, an output
 *  file cannot be created, or fork, pidfd_open or waitpid failed. */
int runner_run (const runner_spec_t *spec, int cancel_fd, runner_result_t *out,
                char *err, size_t errlen);

/*  runner_run in two halves, for a caller with other work while the
 *  command runs: runner_start checks spec, starts the command and returns
 *  0 with *proc set (spec's strings are no longer needed once it
 *  returns; cancel_fd must stay open), or -1 with nothing running, as
 *  runner_run. runner_finish waits for it to end as runner_run does,
 *  fills *out, frees *proc and nulls it; every started command must be
 *  finished. */
typedef struct runner_proc runner_proc_t;
int runner_start (const runner_spec_t *spec, int cancel_fd, runner_proc_t **proc,
                  char *err, size_t errlen);
int runner_finish (runner_proc_t **proc, runner_result_t *out, char *err, size_t errlen);

/*  The files a finished task sends back, as names relative to workdir.
 *  With ndeclared > 0: the declared names, in their order, each checked
 *  to be a valid bundle name (bundle_names_check) that is a regular file
 *  under workdir, reached without following any symlink; a missing one
 *  (or a symlink, a directory) is an error naming it. With ndeclared == 0:
 *  every regular file under workdir, recursively, sorted by strcmp, except
 *  the staged names (the task's inputs, and its stdout and stderr files if
 *  they are in workdir); symlinks (never followed) and special files are
 *  skipped. More than BUNDLE_MAX_FILES files, a name longer than
 *  BUNDLE_MAX_NAME or a directory deeper than RUNNER_MAX_DEPTH is an
 *  error. Returns 0 and a new array of new strings in *names_out, *n_out
 *  entries (free with runner_names_free), or -1 with a message and
 *  *names_out NULL. */
int runner_outputs (const char *workdir, const char *const *declared, size_t ndeclared,
                    const char *const *staged, size_t nstaged, char ***names_out,
                    size_t *n_out, char *err, size_t errlen);

/*  Free n names from runner_outputs and null the caller's pointer. Safe
 *  on NULL. */
void runner_names_free (char ***names_p, size_t n);

#endif
