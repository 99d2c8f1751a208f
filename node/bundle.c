/*  bundle — files plus metadata as one byte stream, the names' checks
 *  and the source; see bundle.h. The sink is node/bundle_sink.c.
 *
 *  The source keeps the encoded prefix and header in memory and, per
 *  file, its path, size and offset in the stream; a read finds the first
 *  file of its range by binary search and preads from one descriptor,
 *  kept open across calls for the file read last (a chunked reader goes
 *  through the files in order, so it reopens each once).
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
    char *path;              /* local file */
    uint64_t size;           /* at bundle_src_new */
    uint64_t start;          /* its first byte's offset in the stream */
} src_file_t;

struct bundle_src {
    unsigned char *head;     /* prefix + JSON header */
    size_t head_len;
    src_file_t *files;
    size_t n;
    uint64_t size;
    int fd;                  /* open on files[fd_index], or -1 */
    size_t fd_index;
};

/* ------------------------------------------------------------------------
 *  Names.
 */

int
bundle_name_check (const char *name, char *err, size_t errlen)
{
    size_t len = strnlen (name, BUNDLE_MAX_NAME + 1);
    if (len == 0)
        return tf_error (err, errlen, "empty file name");
    if (len > BUNDLE_MAX_NAME)
        return tf_error (err, errlen, "file name \"%.*s...\" is longer than %d bytes",
                         BUNDLE_QUOTE, name, BUNDLE_MAX_NAME);
    if (name[0] == '/')
        return tf_error (err, errlen, "file name \"%.*s\" is absolute", BUNDLE_QUOTE,
                         name);
    for (const char *p = name;; p++) {
        size_t clen = strcspn (p, "/");
        const char *bad = NULL;
        if (clen == 0)
            bad = "an empty component";
        else if (clen == 1 && p[0] == '.')
            bad = "a \".\" component";
        else if (clen == 2 && p[0] == '.' && p[1] == '.')
            bad = "a \"..\" component";
        else if (clen > BUNDLE_MAX_COMPONENT)
            return tf_error (err, errlen, "file name \"%.*s\" has a component longer"
                             " than %d bytes", BUNDLE_QUOTE, name, BUNDLE_MAX_COMPONENT);
        if (bad)
            return tf_error (err, errlen, "file name \"%.*s\" has %s", BUNDLE_QUOTE,
                             name, bad);
        p += clen;
        if (!*p)
            return 0;
    }
}

/*  Order names byte by byte with '/' below every other byte, so that the
 *  names under a directory "a/" directly follow "a" itself: a name that is
 *  another's directory is then its neighbour. */
static int
name_cmp (const void *pa, const void *pb)
{
    const unsigned char *a = *(const unsigned char *const *) pa;
    const unsigned char *b = *(const unsigned char *const *) pb;
    for (;; a++, b++) {
        unsigned ca = *a == '/' ? 1u : *a ? *a + 1u : 0u;
        unsigned cb = *b == '/' ? 1u : *b ? *b + 1u : 0u;
        if (ca != cb || !ca)
            return (ca > cb) - (ca < cb);
    }
}

int
bundle_names_check (const char *const *names, size_t n, char *err, size_t errlen)
{
    if (n > BUNDLE_MAX_FILES)
        return tf_error (err, errlen, "%zu files, more than %d", n, BUNDLE_MAX_FILES);
    for (size_t i = 0; i < n; i++)
        if (bundle_name_check (names[i], err, errlen) != 0)
            return -1;
    if (n < 2)
        return 0;
    const char **sorted = xmalloc (n * sizeof *sorted);
    memcpy (sorted, names, n * sizeof *sorted);
    qsort (sorted, n, sizeof *sorted, name_cmp);
    int rc = 0;
    for (size_t i = 0; i + 1 < n && rc == 0; i++) {
        const char *a = sorted[i], *b = sorted[i + 1];
        size_t alen = strlen (a);
        if (strcmp (a, b) == 0)
            rc = tf_error (err, errlen, "file name \"%.*s\" appears twice", BUNDLE_QUOTE,
                           a);
        else if (strncmp (a, b, alen) == 0 && b[alen] == '/')
            rc = tf_error (err, errlen, "\"%.*s\" is both a file and the directory of \"%.*s\"",
                           BUNDLE_QUOTE, a, BUNDLE_QUOTE, b);
    }
    free (sorted);
    return rc;
}

/* ------------------------------------------------------------------------
 *  Plain I/O.
 */

/*  pread until len bytes or end of file. Returns the bytes read, or -1
 *  with errno set. */
static ssize_t
pread_full (int fd, uint64_t offset, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread (fd, (char *) buf + got, len - got, (off_t) (offset + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t) r;
    }
    return (ssize_t) got;
}

int
bundle_file_read (int fd, uint64_t offset, void *buf, size_t len, char *err,
                  size_t errlen)
{
    ssize_t got = pread_full (fd, offset, buf, len);
    if (got < 0)
        return tf_error (err, errlen, "read at byte %" PRIu64 ": %s", offset,
                         strerror (errno));
    if ((size_t) got < len)
        return tf_error (err, errlen, "end of file at byte %" PRIu64 ", %zu bytes short",
                         offset + (uint64_t) got, len - (size_t) got);
    return 0;
}

/* ------------------------------------------------------------------------
 *  Source.
 */

/*  Stat every path into self->files and describe it in list. Returns 0,
 *  or -1 with a message. */
static int
src_stat_files (bundle_src_t *self, const char *const *paths, const char *const *names,
                json_t *list, char *err, size_t errlen)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < self->n; i++) {
        struct stat st;
        if (stat (paths[i], &st) != 0)
            return tf_error (err, errlen, "%s: %s", paths[i], strerror (errno));
        if (!S_ISREG (st.st_mode))
            return tf_error (err, errlen, "%s: not a regular file", paths[i]);
        uint64_t size = (uint64_t) st.st_size;
        if (size > BUNDLE_MAX_BYTES - sum)
            return tf_error (err, errlen, "%s: the files add up to more than %" PRIu64
                             " bytes", paths[i], BUNDLE_MAX_BYTES);
        sum += size;
        json_t *entry = json_pack ("{s:s, s:I}", "name", names[i], "size",
                                   (json_int_t) size);
        if (!entry)
            return tf_error (err, errlen, "file name \"%.*s\" is not UTF-8", BUNDLE_QUOTE,
                             names[i]);
        json_array_append_new (list, entry);
        self->files[i].path = xstrdup (paths[i]);
        self->files[i].size = size;
    }
    return 0;
}

/*  Encode the prefix and header {"meta": meta, "files": list} into
 *  self->head and lay the files out after it. Returns 0, or -1 with a
 *  message. */
static int
src_build_header (bundle_src_t *self, const json_t *meta, json_t *list, char *err,
                  size_t errlen)
{
    json_t *header = json_object ();
    json_object_set_new (header, "meta", meta ? json_deep_copy (meta) : json_object ());
    json_object_set (header, "files", list);
    char *text = json_dumps (header, JSON_COMPACT);
    json_decref (header);
    if (!text)
        return tf_error (err, errlen, "bundle header: meta cannot be encoded");
    size_t hlen = strlen (text);
    if (hlen > BUNDLE_MAX_HEADER) {
        free (text);
        return tf_error (err, errlen, "bundle header of %zu bytes, more than %u", hlen,
                         BUNDLE_MAX_HEADER);
    }
    self->head_len = BUNDLE_PREFIX + hlen;
    self->head = xmalloc (self->head_len);
    memcpy (self->head, BUNDLE_MAGIC, 4);
    for (int i = 0; i < 4; i++)
        self->head[4 + i] = (unsigned char) (hlen >> (24 - 8 * i));
    memcpy (self->head + BUNDLE_PREFIX, text, hlen);
    free (text);

    uint64_t at = self->head_len;
    for (size_t i = 0; i < self->n; i++) {
        if (self->files[i].size > BUNDLE_MAX_BYTES - at)
            return tf_error (err, errlen, "bundle of more than %" PRIu64 " bytes",
                             BUNDLE_MAX_BYTES);
        self->files[i].start = at;
        at += self->files[i].size;
    }
    self->size = at;
    return 0;
}

bundle_src_t *
bundle_src_new (const json_t *meta, const char *const *paths, const char *const *names,
                size_t n, char *err, size_t errlen)
{
    if (meta && !json_is_object (meta)) {
        tf_error (err, errlen, "bundle meta is not a JSON object");
        return NULL;
    }
    if (bundle_names_check (names, n, err, errlen) != 0)
        return NULL;
    bundle_src_t *self = xcalloc (1, sizeof *self);
    self->fd = -1;
    self->n = n;
    self->files = xcalloc (n, sizeof *self->files);
    json_t *list = json_array ();
    int rc = src_stat_files (self, paths, names, list, err, errlen);
    if (rc == 0)
        rc = src_build_header (self, meta, list, err, errlen);
    json_decref (list);
    if (rc != 0)
        bundle_src_destroy (&self);
    return self;
}

void
bundle_src_destroy (bundle_src_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bundle_src_t *self = *self_p;
    if (self->fd >= 0)
        close (self->fd);
    for (size_t i = 0; i < self->n; i++)
        free (self->files[i].path);
    free (self->files);
    free (self->head);
    free (self);
    *self_p = NULL;
}

uint64_t
bundle_src_size (const bundle_src_t *self)
{
    return self->size;
}

/*  The file holding stream byte offset (head_len <= offset < size): the
 *  last one starting at or before it, which is never an empty one. */
static size_t
src_find (const bundle_src_t *self, uint64_t offset)
{
    size_t lo = 0, hi = self->n;         /* answer in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (self->files[mid].start <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/*  Make self->fd the descriptor of file i, and check the file still has
 *  its size. Returns 0, or -1 with a message naming it. */
static int
src_open (bundle_src_t *self, size_t i, char *err, size_t errlen)
{
    const src_file_t *f = &self->files[i];
    if (self->fd >= 0 && self->fd_index != i) {
        close (self->fd);
        self->fd = -1;
    }
    if (self->fd < 0) {
        self->fd = open (f->path, O_RDONLY | O_CLOEXEC);
        if (self->fd < 0)
            return tf_error (err, errlen, "%s: %s", f->path, strerror (errno));
        self->fd_index = i;
    }
    struct stat st;
    if (fstat (self->fd, &st) != 0)
        return tf_error (err, errlen, "%s: %s", f->path, strerror (errno));
    if (!S_ISREG (st.st_mode) || (uint64_t) st.st_size != f->size)
        return tf_error (err, errlen, "%s changed since the bundle was made: %" PRIu64
                         " bytes then, %jd now", f->path, f->size, (intmax_t) st.st_size);
    return 0;
}

int
bundle_src_read (bundle_src_t *self, uint64_t offset, void *buf, size_t len, char *err,
                 size_t errlen)
{
    if (offset > self->size || len > self->size - offset)
        return tf_error (err, errlen, "bytes %" PRIu64 "+%zu are beyond the bundle's %"
                         PRIu64, offset, len, self->size);
    unsigned char *out = buf;
    if (offset < self->head_len) {
        size_t m = self->head_len - (size_t) offset;
        m = m < len ? m : len;
        memcpy (out, self->head + offset, m);
        out += m, offset += m, len -= m;
    }
    while (len > 0) {
        size_t i = src_find (self, offset);
        const src_file_t *f = &self->files[i];
        uint64_t at = offset - f->start, left = f->size - at;
        size_t m = left < len ? (size_t) left : len;
        if (src_open (self, i, err, errlen) != 0)
            return -1;
        ssize_t got = pread_full (self->fd, at, out, m);
        if (got < 0)
            return tf_error (err, errlen, "%s: %s", f->path, strerror (errno));
        if ((size_t) got < m)
            return tf_error (err, errlen, "%s changed since the bundle was made: it ends at"
                             " byte %" PRIu64 ", not %" PRIu64, f->path,
                             at + (uint64_t) got, f->size);
        out += m, offset += m, len -= m;
    }
    return 0;
}

