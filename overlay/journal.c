/*  journal — see journal.h. */
#include "overlay/journal.h"
#include "overlay/lines.h"
#include "overlay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*  A deadline counts as reached this close to it, so a driver that sleeps
 *  exactly until it never finds the tick early and spins (as in
 *  node/core.c). */
#define DEADLINE_SLACK 1e-9

struct journal_t {
    char *path;
    int fd;
    off_t size;              /* bytes of complete records in the file */
    size_t batch;
    double max_delay_s;
    char *pending;           /* encoded lines, each ending in '\n' */
    size_t pending_len;
    size_t pending_alloc;
    size_t npending;
    double oldest;           /* when the first pending record came */
    uint64_t syncs;
};

/*  pread exactly n bytes at offset; return 0 or -1 with errno set. */
static int
read_at (int fd, char *buf, size_t n, off_t offset)
{
    while (n > 0) {
        ssize_t got = pread (fd, buf, n, offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            errno = got < 0 ? errno : EIO;
            return -1;
        }
        buf += got;
        n -= (size_t) got;
        offset += got;
    }
    return 0;
}

/*  Cut a final line without '\n' (a torn write) off the file of size
 *  bytes; *kept gets the size left. Return 0, or -1 with err filled. */
static int
cut_torn_tail (int fd, const char *path, off_t size, off_t *kept, char *err,
               size_t errlen)
{
    *kept = size;
    if (size == 0)
        return 0;
    size_t want = size < JOURNAL_MAX_LINE + 1 ? (size_t) size : JOURNAL_MAX_LINE + 1;
    char *tail = xmalloc (want);
    if (read_at (fd, tail, want, size - (off_t) want) < 0) {
        free (tail);
        return tf_error (err, errlen, "%s: cannot read: %s", path, strerror (errno));
    }
    const char *nl = memrchr (tail, '\n', want);
    if (nl)
        *kept = size - (off_t) want + (nl - tail) + 1;
    else if (want == (size_t) size)
        *kept = 0;   /* the file is one torn record */
    free (tail);
    if (!nl && want < (size_t) size)
        return tf_error (err, errlen, "%s: not a journal: its last line is longer "
                         "than %d bytes", path, JOURNAL_MAX_LINE);
    if (*kept < size && (ftruncate (fd, *kept) < 0 || fsync (fd) < 0))
        return tf_error (err, errlen, "%s: cannot cut a torn last line: %s", path,
                         strerror (errno));
    return 0;
}

/*  Make a new file's directory entry durable. Best effort: some file
 *  systems refuse fsync on a directory, and the records are synced
 *  either way. */
static void
sync_directory (const char *path)
{
    char *copy = xstrdup (path);
    int fd = open (dirname (copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free (copy);
    if (fd >= 0) {
        (void) fsync (fd);
        close (fd);
    }
}

/*  Open, lock and check the file; return the descriptor and its size in
 *  *size, or -1 with err filled. */
static int
open_locked (const char *path, off_t *size, char *err, size_t errlen)
{
    int fd = open (path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
    struct stat st;
    if (flock (fd, LOCK_EX | LOCK_NB) < 0) {
        tf_error (err, errlen, "%s: %s", path,
                  errno == EWOULDBLOCK ? "in use by another process"
                                       : strerror (errno));
    } else if (fstat (fd, &st) < 0) {
        tf_error (err, errlen, "%s: cannot stat: %s", path, strerror (errno));
    } else if (!S_ISREG (st.st_mode)) {
        tf_error (err, errlen, "%s: not a regular file", path);
    } else if (cut_torn_tail (fd, path, st.st_size, size, err, errlen) == 0) {
        if (st.st_size == 0)
            sync_directory (path);
        return fd;
    }
    close (fd);
    return -1;
}

journal_t *
journal_open (const char *path, size_t batch, double max_delay_s, char *err,
              size_t errlen)
{
    if (batch < 1 || batch > JOURNAL_MAX_BATCH) {
        tf_error (err, errlen, "%s: batch must be 1 to %d records, got %zu", path,
                  JOURNAL_MAX_BATCH, batch);
        return NULL;
    }
    if (!(max_delay_s >= 0 && max_delay_s <= JOURNAL_MAX_DELAY_S)) {
        tf_error (err, errlen, "%s: max_delay_s must be 0 to %g seconds, got %g", path,
                  JOURNAL_MAX_DELAY_S, max_delay_s);
        return NULL;
    }
    off_t size = 0;
    int fd = open_locked (path, &size, err, errlen);
    if (fd < 0)
        return NULL;
    journal_t *self = xcalloc (1, sizeof *self);
    self->path = xstrdup (path);
    self->fd = fd;
    self->size = size;
    self->batch = batch;
    self->max_delay_s = max_delay_s;
    return self;
}

int
journal_flush (journal_t *self, char *err, size_t errlen)
{
    if (self->npending == 0)
        return 0;
    if (tf_write_all (self->fd, self->pending, self->pending_len) < 0) {
        int write_errno = errno;
        /*  Part of the batch may be in the file: cut it, so the file ends
         *  with a complete record and a retry starts a line of its own. */
        if (ftruncate (self->fd, self->size) < 0)
            return tf_error (err, errlen, "%s: cannot write: %s; and cannot cut the "
                             "partial write: %s", self->path, strerror (write_errno),
                             strerror (errno));
        return tf_error (err, errlen, "%s: cannot write: %s", self->path,
                         strerror (write_errno));
    }
    self->size += (off_t) self->pending_len;
    self->pending_len = 0;
    self->npending = 0;
    if (fsync (self->fd) < 0)
        return tf_error (err, errlen, "%s: cannot sync: %s", self->path,
                         strerror (errno));
    self->syncs++;
    return 0;
}

int
journal_append (journal_t *self, const json_t *record, double now, char *err,
                size_t errlen)
{
    if (!json_is_object (record))
        return tf_error (err, errlen, "%s: a record must be a JSON object", self->path);
    char *line = json_dumps (record, JSON_COMPACT);
    if (!line)
        return tf_error (err, errlen, "%s: cannot encode a record", self->path);
    size_t len = strlen (line);
    if (len > JOURNAL_MAX_LINE) {
        free (line);
        return tf_error (err, errlen, "%s: a record of %zu bytes, more than the limit "
                         "of %d", self->path, len, JOURNAL_MAX_LINE);
    }
    if (self->pending_len + len + 1 > self->pending_alloc) {
        self->pending_alloc = (self->pending_len + len + 1) * 2;
        self->pending = xrealloc (self->pending, self->pending_alloc);
    }
    memcpy (self->pending + self->pending_len, line, len);
    self->pending[self->pending_len + len] = '\n';
    self->pending_len += len + 1;
    free (line);
    if (self->npending++ == 0)
        self->oldest = now;
    if (self->npending >= self->batch || self->pending_len >= JOURNAL_MAX_PENDING_BYTES)
        return journal_flush (self, err, errlen);
    return 0;
}

int
journal_tick (journal_t *self, double now, char *err, size_t errlen)
{
    if (self->npending && now + DEADLINE_SLACK >= self->oldest + self->max_delay_s)
        return journal_flush (self, err, errlen);
    return 0;
}

double
journal_next_deadline (const journal_t *self, double now)
{
    if (self->npending == 0)
        return -1;
    double left = self->oldest + self->max_delay_s - now;
    return left > 0 ? left : 0;
}

int
journal_close (journal_t **self_p, char *err, size_t errlen)
{
    if (!self_p || !*self_p)
        return 0;
    journal_t *self = *self_p;
    int rc = journal_flush (self, err, errlen);
    if (close (self->fd) < 0 && rc == 0)
        rc = tf_error (err, errlen, "%s: cannot close: %s", self->path, strerror (errno));
    free (self->pending);
    free (self->path);
    free (self);
    *self_p = NULL;
    return rc;
}

size_t
journal_pending (const journal_t *self)
{
    return self->npending;
}

uint64_t
journal_syncs (const journal_t *self)
{
    return self->syncs;
}

/*  Decode one complete line and give it to the callback. */
static int
load_record (const char *path, unsigned line, const char *text, size_t len,
             journal_fn *callback, void *arg, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *record = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!record)
        return tf_error (err, errlen, "%s:%u:%d: malformed record: %s", path, line,
                         jerr.column, jerr.text);
    int rc = 0;
    if (!json_is_object (record))
        rc = tf_error (err, errlen, "%s:%u: a record must be a JSON object", path, line);
    else if (callback (record, line, arg) < 0)
        rc = tf_error (err, errlen, "%s:%u: record refused", path, line);
    json_decref (record);
    return rc;
}

static int
load_lines (lines_t *lines, const char *path, journal_fn *callback, void *arg,
            unsigned *torn, char *err, size_t errlen)
{
    for (;;) {
        const char *text = NULL;
        size_t len = 0;
        lines_status_t status = lines_next (lines, &text, &len);
        int read_errno = errno;
        unsigned line = lines_number (lines);
        switch (status) {
        case LINES_LINE:
            if (load_record (path, line, text, len, callback, arg, err, errlen) < 0)
                return -1;
            break;
        case LINES_TAIL:
            /*  A write torn by a crash: never a record. */
            if (torn)
                *torn = 1;
            return 0;
        case LINES_END:
            return 0;
        case LINES_TOO_LONG:
            return tf_error (err, errlen, "%s:%u: line longer than %d bytes, the limit",
                             path, line, JOURNAL_MAX_LINE);
        case LINES_TOO_MANY:
            return tf_error (err, errlen, "%s:%u: more than %u lines", path, line,
                             LINES_MAX_COUNT);
        case LINES_ERROR:
            return tf_error (err, errlen, "%s: cannot read: %s", path,
                             strerror (read_errno));
        }
    }
}

int
journal_load (const char *path, journal_fn *callback, void *arg, unsigned *torn,
              char *err, size_t errlen)
{
    if (torn)
        *torn = 0;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0)
        return tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
    lines_t *lines = lines_new_fd (fd, JOURNAL_MAX_LINE);
    int rc = load_lines (lines, path, callback, arg, torn, err, errlen);
    lines_destroy (&lines);
    close (fd);
    return rc;
}
