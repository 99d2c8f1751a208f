/*  spawn — starting child processes of the controller safely.
 *
 *  Every process the controller starts, a node or a short command of the
 *  up-front checks (ssh HOST true, ip netns exec NS true), goes through
 *  here. The controller is multi-threaded (ZeroMQ's I/O threads), so
 *  between fork and exec the child makes async-signal-safe calls only;
 *  everything that allocates (the PATH search) happens before the fork.
 *  A child gets PR_SET_PDEATHSIG(SIGKILL), so it dies with the controller
 *  even if the controller is SIGKILLed; default signal dispositions and
 *  an empty signal mask; the descriptors it is given as stdin, stdout and
 *  stderr and no other. A failed exec is reported to the caller through a
 *  close-on-exec pipe, so "not found" is an error of the start and not an
 *  exit status 127 later.
 */
#ifndef TF_SPAWN_H
#define TF_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/*  Bytes of a command's stdout and of its stderr that spawn_capture
 *  keeps; the rest is read and dropped. */
#define SPAWN_CAPTURE_MAX 4096

/*  What a captured command did. */
typedef struct {
    int status;              /* raw waitpid status */
    int timed_out;           /* killed after the timeout */
    char out[SPAWN_CAPTURE_MAX + 1];   /* its stdout, NUL-terminated */
    char err[SPAWN_CAPTURE_MAX + 1];   /* its stderr, NUL-terminated */
} spawn_result_t;

/*  Find program the way execvp would: a name with a slash must be an
 *  executable regular file; a name without one is looked up on $PATH.
 *  Returns a new string, the caller's to free, or NULL with a message in
 *  err naming the program ("not found on PATH", the errno's text). */
char *spawn_resolve (const char *program, char *err, size_t errlen);

/*  Start argv (argv[0] found with spawn_resolve, NULL-terminated) as a
 *  child of this process, with stdin, stdout and stderr from fds[0..2];
 *  -1 means /dev/null for stdin and the controller's own for the others.
 *  The descriptors given must be above 2. Store its pid in *pid and
 *  return 0, or return -1 with a message in err, in which case nothing is
 *  left running or unreaped. The caller reaps the child. */
int spawn_start (char *const argv[], const int fds[3], pid_t *pid, char *err,
                 size_t errlen);

/*  Run argv to its end with stdin from in_fd (-1: /dev/null), capturing
 *  its stdout and stderr into *res. A command still running after timeout
 *  seconds is killed with SIGKILL (res->timed_out). Returns 0 once it
 *  ended, whatever its status (the caller judges res->status), or -1
 *  with a message in err if it could not be started. */
int spawn_capture (char *const argv[], int in_fd, double timeout, spawn_result_t *res,
                   char *err, size_t errlen);

/*  Text a command printed, as one line for a message: control bytes
 *  escaped, line breaks shown as " | ", surrounding blanks dropped, cut to
 *  len. Returns buf ("" when there was nothing). */
const char *spawn_one_line (const char *text, char *buf, size_t len);

/*  Free a NULL-terminated array of strings and every string in it. Safe
 *  on NULL. */
void spawn_argv_free (char **argv);

#endif
