/*  bundle_sink — a bundle's byte stream unpacked into a directory; see
 *  bundle.h (the source and the names' checks are node/bundle.c).
 *
 *  The sink is a small state machine driven by the count of bytes
 *  received: the 8-byte prefix, then H bytes of header (the only bytes it
 *  buffers), then the files one after another, each open only while its
 *  bytes arrive. It remembers which files and directories it created, so
 *  an unfinished sink can undo exactly those.
 */
#include "node/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/util.h"

/*  How much of a name an error message quotes: enough to recognise it. */
#define BUNDLE_QUOTE 200

typedef struct {
    const char *name;        /* borrowed from the parsed header */
    uint64_t size;
} sink_file_t;

typedef struct {
    size_t file;             /* the directory is files[file].name[0..len) */
    size_t len;
} sink_dir_t;

struct bundle_sink {
    char *dir;               /* for messages */
    int dirfd;               /* -1 until a lazy sink's directory exists */
    int made_dir;            /* a lazy sink created its directory */
    uint64_t total;          /* announced */
    uint64_t received;
    unsigned char prefix[BUNDLE_PREFIX];
    uint32_t hlen;           /* H, once the prefix is in */
    char *htext;             /* the header while it arrives */
    json_t *header;          /* parsed; owns the names and meta */
    sink_file_t *files;
    size_t n;
    size_t cur;              /* the file being written */
    uint64_t cur_done;       /* its bytes written */
    int fd;                  /* open on files[cur], or -1 */
    size_t created;          /* files[0..created) were created here */
    sink_dir_t *dirs;        /* directories created here, in order */
    size_t ndirs;
    int failed;
    int finished;
};

/* ------------------------------------------------------------------------
 *  Sink: directories.
 */

/*  Walk path[0..len) from the sink's directory, never following a
 *  symlink: open every component but the last as a directory (with
 *  create, make it first if missing, recording it as created for file),
 *  and copy the last component into last. Returns the descriptor of the
 *  directory holding it (the sink's own dirfd when path has one
 *  component: close it only if it differs), or -1 with a message. */
static int
sink_walk (bundle_sink_t *self, const char *path, size_t len, int create, size_t file,
           char last[BUNDLE_MAX_COMPONENT + 1], char *err, size_t errlen)
{
    int cur = self->dirfd;
    size_t at = 0;
    for (;;) {
        size_t clen = 0;
        while (at + clen < len && path[at + clen] != '/')
            clen++;
        memcpy (last, path + at, clen);
        last[clen] = '\0';
        if (at + clen == len)
            return cur;
        if (create && mkdirat (cur, last, 0755) == 0) {
            self->dirs = xrealloc (self->dirs, (self->ndirs + 1) * sizeof *self->dirs);
            self->dirs[self->ndirs++] = (sink_dir_t) {file, at + clen};
        } else if (create && errno != EEXIST) {
            tf_error (err, errlen, "%s/%.*s: %s", self->dir, (int) (at + clen), path,
                      strerror (errno));
            goto fail;
        }
        int next = openat (cur, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            int e = errno;
            tf_error (err, errlen, "%s/%.*s: %s", self->dir, (int) (at + clen), path,
                      e == ELOOP || e == ENOTDIR ? "a symlink or not a directory"
                                                 : strerror (e));
            goto fail;
        }
        if (cur != self->dirfd)
            close (cur);
        cur = next;
        at += clen + 1;
    }
fail:
    if (cur != self->dirfd)
        close (cur);
    return -1;
}

/*  Create file i (O_EXCL, never through a symlink) and keep it open.
 *  Returns 0, or -1 with a message. */
static int
sink_create (bundle_sink_t *self, size_t i, char *err, size_t errlen)
{
    const char *name = self->files[i].name;
    if (self->dirfd < 0) {   /* lazy: the first file makes the directory */
        if (mkdir (self->dir, 0755) == 0)
            self->made_dir = 1;
        else if (errno != EEXIST)
            return tf_error (err, errlen, "%s: %s", self->dir, strerror (errno));
        self->dirfd = open (self->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (self->dirfd < 0)
            return tf_error (err, errlen, "%s: %s", self->dir, strerror (errno));
    }
    char last[BUNDLE_MAX_COMPONENT + 1];
    int parent = sink_walk (self, name, strlen (name), 1, i, last, err, errlen);
    if (parent < 0)
        return -1;
    self->fd = openat (parent, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0644);
    int e = errno;
    if (parent != self->dirfd)
        close (parent);
    if (self->fd < 0)
        return tf_error (err, errlen, "%s/%s: %s", self->dir, name,
                         e == EEXIST ? "already exists" : strerror (e));
    self->created = i + 1;
    return 0;
}

/*  Remove path[0..len) (a directory with rmdir set), found by the same
 *  walk; best effort, errors ignored. */
static void
sink_remove (bundle_sink_t *self, const char *path, size_t len, int rmdir)
{
    char last[BUNDLE_MAX_COMPONENT + 1];
    int parent = sink_walk (self, path, len, 0, 0, last, NULL, 0);
    if (parent < 0)
        return;
    (void) unlinkat (parent, last, rmdir ? AT_REMOVEDIR : 0);
    if (parent != self->dirfd)
        close (parent);
}

/*  Undo an unfinished sink: its files, then its directories, deepest
 *  (latest created) first; a directory that is not empty stays. */
static void
sink_undo (bundle_sink_t *self)
{
    if (self->fd >= 0) {
        close (self->fd);
        self->fd = -1;
    }
    for (size_t i = self->created; i-- > 0;)
        sink_remove (self, self->files[i].name, strlen (self->files[i].name), 0);
    for (size_t i = self->ndirs; i-- > 0;)
        sink_remove (self, self->files[self->dirs[i].file].name, self->dirs[i].len, 1);
    if (self->made_dir)
        rmdir (self->dir);
}

/* ------------------------------------------------------------------------
 *  Sink: the stream.
 */

/*  A sink of total_bytes into dir (lazy: not opened yet). */
static bundle_sink_t *
sink_alloc (const char *dir, uint64_t total_bytes, char *err, size_t errlen)
{
    if (total_bytes <= BUNDLE_PREFIX || total_bytes > BUNDLE_MAX_BYTES) {
        tf_error (err, errlen, "bundle of %" PRIu64 " bytes: must be %d to %" PRIu64,
                  total_bytes, BUNDLE_PREFIX + 1, BUNDLE_MAX_BYTES);
        return NULL;
    }
    bundle_sink_t *self = xcalloc (1, sizeof *self);
    self->dir = xstrdup (dir);
    self->dirfd = -1;
    self->total = total_bytes;
    self->fd = -1;
    return self;
}

bundle_sink_t *
bundle_sink_new (const char *dir, uint64_t total_bytes, char *err, size_t errlen)
{
    bundle_sink_t *self = sink_alloc (dir, total_bytes, err, errlen);
    if (self && (self->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        tf_error (err, errlen, "%s: %s", dir, strerror (errno));
        bundle_sink_destroy (&self);
    }
    return self;
}

bundle_sink_t *
bundle_sink_new_lazy (const char *dir, uint64_t total_bytes, char *err, size_t errlen)
{
    return sink_alloc (dir, total_bytes, err, errlen);
}

void
bundle_sink_destroy (bundle_sink_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bundle_sink_t *self = *self_p;
    if (!self->finished)
        sink_undo (self);
    if (self->fd >= 0)
        close (self->fd);
    if (self->dirfd >= 0)
        close (self->dirfd);
    free (self->dirs);
    free (self->files);
    json_decref (self->header);
    free (self->htext);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

/*  Check the complete prefix and make room for the header. */
static int
sink_prefix (bundle_sink_t *self, char *err, size_t errlen)
{
    if (memcmp (self->prefix, BUNDLE_MAGIC, 4) != 0)
        return tf_error (err, errlen, "not a bundle: the magic is not \"%s\"",
                         BUNDLE_MAGIC);
    const unsigned char *p = self->prefix + 4;
    uint32_t hlen = (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8
                    | p[3];
    if (hlen < 1 || hlen > BUNDLE_MAX_HEADER)
        return tf_error (err, errlen, "bundle header length %" PRIu32 ": must be 1 to %u",
                         hlen, BUNDLE_MAX_HEADER);
    if (hlen > self->total - BUNDLE_PREFIX)
        return tf_error (err, errlen, "bundle header length %" PRIu32
                         " exceeds the %" PRIu64 " bytes announced", hlen, self->total);
    self->hlen = hlen;
    self->htext = xmalloc (hlen);
    return 0;
}

/*  Fill self->files from the header's "files" array: shape, names, and
 *  sizes that add up to exactly what was announced. */
static int
sink_files (bundle_sink_t *self, json_t *files, char *err, size_t errlen)
{
    size_t n = json_array_size (files);
    if (n > BUNDLE_MAX_FILES)
        return tf_error (err, errlen, "bundle header: %zu files, more than %d", n,
                         BUNDLE_MAX_FILES);
    self->files = xcalloc (n, sizeof *self->files);
    self->n = n;
    uint64_t sum = BUNDLE_PREFIX + (uint64_t) self->hlen;
    for (size_t i = 0; i < n; i++) {
        json_t *name;
        json_int_t size;
        json_error_t jerr;
        if (json_unpack_ex (json_array_get (files, i), &jerr, JSON_STRICT, "{s:o, s:I}",
                            "name", &name, "size", &size) != 0)
            return tf_error (err, errlen, "bundle header: files[%zu]: %s", i, jerr.text);
        /*  json_loadb already refused "\u0000" in a string: a name is a C
         *  string. */
        const char *text = json_string_value (name);
        if (!text)
            return tf_error (err, errlen, "bundle header: files[%zu]: name is not a string",
                             i);
        if (size < 0 || (uint64_t) size > BUNDLE_MAX_BYTES - sum)
            return tf_error (err, errlen, "bundle header: files[%zu] (\"%.*s\"): size %"
                             JSON_INTEGER_FORMAT " is negative or past the %" PRIu64
                             " bytes announced", i, BUNDLE_QUOTE, text, size, self->total);
        sum += (uint64_t) size;
        self->files[i] = (sink_file_t) {text, (uint64_t) size};
    }
    if (sum != self->total)
        return tf_error (err, errlen, "bundle header: 8 + %" PRIu32 " + the file sizes = %"
                         PRIu64 " bytes, but %" PRIu64 " were announced", self->hlen, sum,
                         self->total);
    const char **names = xmalloc ((n ? n : 1) * sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = self->files[i].name;
    int rc = bundle_names_check (names, n, err, errlen);
    free (names);
    return rc;
}

/*  Parse and check the complete header. */
static int
sink_header (bundle_sink_t *self, char *err, size_t errlen)
{
    json_error_t jerr;
    self->header = json_loadb (self->htext, self->hlen, JSON_REJECT_DUPLICATES, &jerr);
    free (self->htext);
    self->htext = NULL;
    if (!self->header)
        return tf_error (err, errlen, "bundle header: %s (byte %d)", jerr.text,
                         jerr.position);
    json_t *meta, *files;
    if (json_unpack_ex (self->header, &jerr, JSON_STRICT, "{s:o, s:o}", "meta", &meta,
                        "files", &files) != 0)
        return tf_error (err, errlen, "bundle header: %s", jerr.text);
    if (!json_is_object (meta))
        return tf_error (err, errlen, "bundle header: meta is not an object");
    if (!json_is_array (files))
        return tf_error (err, errlen, "bundle header: files is not an array");
    return sink_files (self, files, err, errlen);
}

/*  Move past every complete file, closing it, and create the next one:
 *  afterwards files[cur] is open and wants bytes, or cur == n. */
static int
sink_advance (bundle_sink_t *self, char *err, size_t errlen)
{
    for (;;) {
        if (self->cur == self->n)
            return 0;
        if (self->fd < 0 && sink_create (self, self->cur, err, errlen) != 0)
            return -1;
        if (self->cur_done < self->files[self->cur].size)
            return 0;
        int rc = close (self->fd);
        self->fd = -1;
        if (rc != 0)
            return tf_error (err, errlen, "%s/%s: %s", self->dir,
                             self->files[self->cur].name, strerror (errno));
        self->cur++;
        self->cur_done = 0;
    }
}

/*  Consume up to len bytes of whichever part comes next. Returns the
 *  bytes consumed (> 0), or -1 with a message. */
static ssize_t
sink_step (bundle_sink_t *self, const unsigned char *data, size_t len, char *err,
           size_t errlen)
{
    uint64_t head_end = BUNDLE_PREFIX + (uint64_t) self->hlen;
    size_t m;
    int rc = 0;
    if (self->received < BUNDLE_PREFIX) {
        m = BUNDLE_PREFIX - (size_t) self->received;
        m = m < len ? m : len;
        memcpy (self->prefix + self->received, data, m);
        if (self->received + m == BUNDLE_PREFIX)
            rc = sink_prefix (self, err, errlen);
    } else if (self->received < head_end) {
        size_t at = (size_t) (self->received - BUNDLE_PREFIX);
        m = self->hlen - at;
        m = m < len ? m : len;
        memcpy (self->htext + at, data, m);
        if (at + m == self->hlen) {
            rc = sink_header (self, err, errlen);
            if (rc == 0)
                rc = sink_advance (self, err, errlen);
        }
    } else {
        uint64_t left = self->files[self->cur].size - self->cur_done;
        m = left < len ? (size_t) left : len;
        if (tf_write_all (self->fd, data, m) != 0)
            return tf_error (err, errlen, "%s/%s: %s", self->dir,
                             self->files[self->cur].name, strerror (errno));
        self->cur_done += m;
        rc = sink_advance (self, err, errlen);
    }
    self->received += m;
    return rc == 0 ? (ssize_t) m : -1;
}

int
bundle_sink_write (bundle_sink_t *self, const void *data, size_t len, char *err,
                   size_t errlen)
{
    if (self->failed || self->finished)
        return tf_error (err, errlen, "bundle sink already %s",
                         self->failed ? "failed" : "finished");
    if (len > self->total - self->received) {
        self->failed = 1;
        return tf_error (err, errlen, "bundle longer than the %" PRIu64 " bytes announced",
                         self->total);
    }
    const unsigned char *p = data;
    while (len > 0) {
        ssize_t m = sink_step (self, p, len, err, errlen);
        if (m < 0) {
            self->failed = 1;
            return -1;
        }
        p += m;
        len -= (size_t) m;
    }
    return 0;
}

int
bundle_sink_finish (bundle_sink_t *self, json_t **meta_out, char *err, size_t errlen)
{
    *meta_out = NULL;
    if (self->failed)
        return tf_error (err, errlen, "bundle refused earlier");
    if (self->received < self->total)
        return tf_error (err, errlen, "bundle incomplete: %" PRIu64 " of %" PRIu64
                         " bytes arrived", self->received, self->total);
    /*  All bytes in: the header was parsed and sink_advance closed every
     *  file (the sizes add up to the total). */
    self->finished = 1;
    *meta_out = json_incref (json_object_get (self->header, "meta"));
    return 0;
}
