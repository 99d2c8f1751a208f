/*  util — allocation that aborts on exhaustion, error-buffer helpers and
 *  the monotonic clock. Every other module builds on these; none of them
 *  touches a socket.
 */
#ifndef TF_UTIL_H
#define TF_UTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/*  Size of the error buffers passed down by callers. A message longer than
 *  this is truncated, never overflowed. */
#define TF_ERRLEN 512

/*  Allocate, or print "out of memory" and abort. They never return NULL, so
 *  callers carry no dead NULL checks. xcalloc zeroes the block. */
void *xmalloc (size_t size);
void *xcalloc (size_t count, size_t size);
void *xrealloc (void *ptr, size_t size);
char *xstrdup (const char *text);
/*  The len bytes at text (which need not end there) and a NUL. */
char *xstrndup (const char *text, size_t len);

/*  Like xcalloc, but every page of the block is written now, so it is
 *  resident from the start: a table sized up front (a bit per task, a
 *  sampler's history) then costs its memory at once instead of growing a
 *  process's RssAnon as the run fills it (docs/performance.md, "Scale and
 *  memory"). */
void *xcalloc_resident (size_t count, size_t size);

/*  Commit `bytes` of malloc heap now: allocate them in pieces, write
 *  them, free them, and raise glibc's trim threshold above them so the
 *  freed top of the heap is kept, not given back. Later allocations up to
 *  that much then land on pages already resident, so a process whose heap
 *  settles within the reserve shows flat private memory from its start.
 *  Call early, in a process with one malloc arena (M_ARENA_MAX 1). Setting
 *  a trim threshold also fixes glibc's mmap threshold at 128 KiB (it no
 *  longer follows the largest block freed): a process with larger blocks
 *  to reuse sets M_MMAP_THRESHOLD itself (node/payload.c does). */
void tf_heap_reserve (size_t bytes);

/*  Raise glibc's trim threshold to at least `bytes`; never lowers it, so
 *  tf_heap_reserve and other callers (node/payload.c) can come in any
 *  order. */
void tf_heap_keep (size_t bytes);

/*  glibc's per-thread cache of freed blocks (tcache) off, for the node
 *  processes: a node's I/O thread allocates the messages it receives and
 *  its main thread frees them; with tcache on, each thread keeps up to 7
 *  freed blocks of each small size that the other cannot reuse and that
 *  hold the heap's free space apart, and a node's private memory creeps
 *  up over a long run (docs/performance.md, "Scale and memory"). glibc
 *  reads GLIBC_TUNABLES only when a process starts, so the process that
 *  starts the nodes sets it. */
#define TF_MALLOC_TUNABLE "glibc.malloc.tcache_count=0"
#define TF_MALLOC_TUNED_ENV "TREEFARM_MALLOC_TUNED"

/*  For the processes this one starts from now on: TF_MALLOC_TUNABLE
 *  appended to GLIBC_TUNABLES, and TF_MALLOC_TUNED_ENV=1 so that a node
 *  can take it back out (tf_malloc_env_restore). Nothing if GLIBC_TUNABLES
 *  sets tcache_count already: the user's choice stands. */
void tf_malloc_env_for_nodes (void);

/*  Undo tf_malloc_env_for_nodes in this process's environment (not its
 *  allocator: glibc read the tunables at start), so that the commands a
 *  node runs see the user's environment. Nothing without
 *  TF_MALLOC_TUNED_ENV. */
void tf_malloc_env_restore (void);

/*  Return a newly allocated string formatted like printf; the caller frees. */
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/*  Write a formatted message into err (errlen bytes, may be NULL) and return
 *  -1, so error paths read `return tf_error (err, errlen, "...", ...);`. */
int tf_error (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/*  Write text into buf (size bytes, at least 16) between double quotes,
 *  with quotes, backslashes and control bytes escaped (\x0a) and cut
 *  short with "..." when it does not fit, so text from a file or a peer
 *  keeps a message on one line. Returns buf. */
const char *tf_quote (char *buf, size_t size, const char *text);

/*  Seconds on the monotonic clock. Only runtimes call this: the node's
 *  decision core and the policies are given time, they never read it. */
double tf_now (void);

/*  write(2) all len bytes of buf to fd, EINTR retried. Returns 0, or -1
 *  with errno set (ENOSPC when the file takes no more). */
int tf_write_all (int fd, const void *buf, size_t len);

/*  The longest line tf_log_line writes, its newline included; a longer
 *  one is cut, ending "...". Ample for any message of ours (TF_ERRLEN
 *  and a prefix). */
#define TF_LOG_LINE_MAX 2048

/*  Write prefix, the message fmt formats, and a newline to stderr in one
 *  write(2), so that the lines of processes sharing a terminal or a log
 *  file (the controller and its local nodes) never interleave within a
 *  line. Errors are ignored: a log has nowhere to report them. */
void tf_log_line (const char *prefix, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 2, 0)));

/*  Writes a file's content to file; arg is the writer's own. Returns 0,
 *  or non-zero when it could not (a stream error is caught anyway). */
typedef int (*tf_file_writer_fn) (FILE *file, const void *arg);

/*  Write dir/name with fn through dir/.name.tmp, renamed into place only
 *  once the whole file is written and closed, so that a reader never sees
 *  half of it; the temporary is removed on any failure. Returns 0, or -1
 *  with "cannot write PATH: REASON" in err. */
int tf_write_file_atomic (const char *dir, const char *name, tf_file_writer_fn fn,
                          const void *arg, char *err, size_t errlen);

/*  Remove path and everything below it (with below_only, only what is
 *  below it), following no link; best effort, errors ignored. */
void tf_remove_tree (const char *path, int below_only);

/*  In a child between fork (or vfork) and exec: give every signal its
 *  default action, then unblock every one, since blocked and ignored
 *  signals survive exec. In that order, and with the parent's signals
 *  blocked across vfork (tf_block_signals), no handler of the parent's
 *  ever runs in a vfork child, where it would write the parent's memory.
 *  glibc's own signals (32 up to SIGRTMIN) are left as they are: its
 *  sigaction refuses them. Async-signal-safe. */
void tf_child_reset_signals (void);

/*  Block every signal in the calling thread, the mask before in *old, to
 *  be given back to tf_restore_signals once vfork has returned. */
void tf_block_signals (sigset_t *old);
void tf_restore_signals (const sigset_t *old);

/*  Seconds since the epoch, wall clock, for timestamps in results. */
double tf_wall (void);

#endif
