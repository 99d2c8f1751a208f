/*  util — see util.h. */
#include "overlay/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

static void *
oom (size_t size)
{
    fprintf (stderr, "treefarm: out of memory (allocating %zu bytes)\n", size);
    abort ();
}

void *
xmalloc (size_t size)
{
    void *p = malloc (size ? size : 1);
    return p ? p : oom (size);
}

void *
xcalloc (size_t count, size_t size)
{
    void *p = calloc (count ? count : 1, size ? size : 1);
    return p ? p : oom (count * size);
}

void *
xrealloc (void *ptr, size_t size)
{
    void *p = realloc (ptr, size ? size : 1);
    return p ? p : oom (size);
}

char *
xstrdup (const char *text)
{
    size_t len = strlen (text) + 1;
    return memcpy (xmalloc (len), text, len);
}

char *
xstrndup (const char *text, size_t len)
{
    char *copy = xmalloc (len + 1);
    memcpy (copy, text, len);
    copy[len] = '\0';
    return copy;
}

void *
xcalloc_resident (size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        oom (SIZE_MAX);
    /*  Not xcalloc then memset: the compiler knows calloc's block is zero
     *  and drops the memset, and a fresh mapping's pages stay untouched
     *  (test_util's test_resident_block fails that way). */
    size_t n = count * size;
    void *p = xmalloc (n ? n : 1);
    memset (p, 0, n);
    return p;
}

void
tf_heap_keep (size_t bytes)
{
    static size_t kept;
    if (bytes <= kept)
        return;
    kept = bytes > INT_MAX ? INT_MAX : bytes;
    mallopt (M_TRIM_THRESHOLD, (int) kept);
}

void
tf_malloc_env_for_nodes (void)
{
    const char *now = getenv ("GLIBC_TUNABLES");
    if (now && strstr (now, "glibc.malloc.tcache_count="))
        return;
    char *tuned = now && *now ? xasprintf ("%s:%s", now, TF_MALLOC_TUNABLE)
                              : xstrdup (TF_MALLOC_TUNABLE);
    setenv ("GLIBC_TUNABLES", tuned, 1);
    setenv (TF_MALLOC_TUNED_ENV, "1", 1);
    free (tuned);
}

void
tf_malloc_env_restore (void)
{
    if (!getenv (TF_MALLOC_TUNED_ENV))
        return;
    unsetenv (TF_MALLOC_TUNED_ENV);
    const char *now = getenv ("GLIBC_TUNABLES");
    size_t len = now ? strlen (now) : 0, ours = strlen (TF_MALLOC_TUNABLE);
    if (len < ours || strcmp (now + len - ours, TF_MALLOC_TUNABLE) != 0)
        return;   /* not as we left it: leave it alone */
    if (len == ours) {
        unsetenv ("GLIBC_TUNABLES");
        return;
    }
    if (now[len - ours - 1] != ':')
        return;
    char *user = xstrndup (now, len - ours - 1);
    setenv ("GLIBC_TUNABLES", user, 1);
    free (user);
}

void
tf_heap_reserve (size_t bytes)
{
    /*  Pieces under the mmap threshold come from the heap's top; freed
     *  in reverse they coalesce back into it. */
    enum { PIECE = 16 * 1024 };
    tf_heap_keep (2 * bytes + 128 * 1024);
    size_t n = (bytes + PIECE - 1) / PIECE;
    if (n == 0)
        return;
    void **piece = xcalloc (n, sizeof *piece);
    for (size_t i = 0; i < n; i++) {
        piece[i] = xmalloc (PIECE);
        memset (piece[i], 0, PIECE);
    }
    for (size_t i = n; i-- > 0;)
        free (piece[i]);
    free (piece);
}

char *
xasprintf (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    char *out = NULL;
    int rc = vasprintf (&out, fmt, ap);
    va_end (ap);
    if (rc < 0)
        oom (strlen (fmt));
    return out;
}

int
tf_error (char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err, errlen, fmt, ap);
        va_end (ap);
    }
    return -1;
}

const char *
tf_quote (char *buf, size_t size, const char *text)
{
    size_t n = 0;
    buf[n++] = '"';
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        if (n + 8 >= size) {
            n += snprintf (buf + n, size - n, "...");
            break;
        }
        if (*p == '"' || *p == '\\')
            n += snprintf (buf + n, size - n, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            n += snprintf (buf + n, size - n, "\\x%02x", *p);
        else
            buf[n++] = (char) *p;
    }
    snprintf (buf + n, size - n, "\"");
    return buf;
}

double
tf_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

double
tf_wall (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

void
tf_child_reset_signals (void)
{
    struct sigaction dfl;
    memset (&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction (sig, &dfl, NULL);     /* fails harmlessly on KILL, STOP */
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
}

void
tf_block_signals (sigset_t *old)
{
    sigset_t all;
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, old);
}

void
tf_restore_signals (const sigset_t *old)
{
    pthread_sigmask (SIG_SETMASK, old, NULL);
}

static int
remove_any (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st, (void) flag, (void) ftw;
    remove (path);
    return 0;
}

static int
remove_below (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st, (void) flag;
    if (ftw->level > 0)
        remove (path);
    return 0;
}

/*  Is directory path empty (or unreadable: then nftw finds nothing to
 *  remove either)? One read of its entries, without opendir's buffer. */
static int
dir_is_empty (const char *path)
{
    int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    union {
        struct dirent64 d;
        char bytes[1024];
    } buf;
    ssize_t n = getdents64 (fd, buf.bytes, sizeof buf.bytes);
    close (fd);
    for (ssize_t at = 0; at < n;) {
        const struct dirent64 *d = (const struct dirent64 *) (buf.bytes + at);
        if (strcmp (d->d_name, ".") != 0 && strcmp (d->d_name, "..") != 0)
            return 0;
        at += d->d_reclen;
    }
    return n >= 0;
}

void
tf_remove_tree (const char *path, int below_only)
{
    /*  The common cases without nftw's setup: nothing there (a task that
     *  left no outputs), an empty directory to empty. */
    struct stat st;
    if (lstat (path, &st) != 0)
        return;
    if (below_only && S_ISDIR (st.st_mode) && dir_is_empty (path))
        return;
    nftw (path, below_only ? remove_below : remove_any, 16, FTW_DEPTH | FTW_PHYS);
}

void
tf_log_line (const char *prefix, const char *fmt, va_list ap)
{
    /*  The text, then the newline in the place of its NUL. */
    char line[TF_LOG_LINE_MAX];
    int n = snprintf (line, sizeof line, "%s", prefix);
    size_t used = n < 0 ? 0 : (size_t) n < sizeof line ? (size_t) n : sizeof line - 1;
    n = vsnprintf (line + used, sizeof line - used, fmt, ap);
    if (n > 0 && (size_t) n >= sizeof line - used) {
        used = sizeof line - 1;
        memcpy (line + used - 3, "...", 3);
    }
    else if (n > 0)
        used += (size_t) n;
    line[used++] = '\n';
    (void) tf_write_all (STDERR_FILENO, line, used);
}

int
tf_write_file_atomic (const char *dir, const char *name, tf_file_writer_fn fn,
                      const void *arg, char *err, size_t errlen)
{
    char *path = xasprintf ("%s/%s", dir, name);
    char *tmp = xasprintf ("%s/.%s.tmp", dir, name);
    int rc = -1;
    FILE *file = fopen (tmp, "we");
    if (!file) {
        tf_error (err, errlen, "cannot write %s: %s", tmp, strerror (errno));
        goto out_free;
    }
    int failed = fn (file, arg) != 0 || ferror (file);
    if (fclose (file) != 0 || failed) {
        tf_error (err, errlen, "cannot write %s: %s", tmp, strerror (errno));
        goto out_unlink;
    }
    if (rename (tmp, path) != 0) {
        tf_error (err, errlen, "cannot write %s: %s", path, strerror (errno));
        goto out_unlink;
    }
    rc = 0;
    goto out_free;
out_unlink:
    unlink (tmp);
out_free:
    free (tmp);
    free (path);
    return rc;
}

int
tf_write_all (int fd, const void *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write (fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        buf = (const char *) buf + w;
        len -= (size_t) w;
    }
    return 0;
}
