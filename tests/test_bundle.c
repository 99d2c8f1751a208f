/*  test_bundle — files plus metadata as one byte stream (node/bundle.h).
 *
 *  A bundle read by the source in chunks of any size and fed to the sink
 *  unpacks into the same files and meta; any range the source reads is
 *  that range of the stream, whose layout is checked independently here;
 *  the sink refuses every malformed header, every name that could escape
 *  or clash, and every symlink planted in its directory, with a message
 *  saying what is wrong, and undoes what it wrote when it did not finish;
 *  a 1 GiB file passes through while the process's resident memory
 *  barely moves. Real files under a fresh directory in /tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <dirent.h>

#include "node/bundle.h"
#include "overlay/util.h"
#include "tests/helpers.h"

#define KIB 1024
#define MIB (1024 * 1024)

typedef struct {
    char root[64];           /* the fixture's directory */
    char in[96];             /* source files */
    char out[96];            /* the sink's directory */
    char outside[96];        /* where a planted symlink points */
} fixture_t;

/*  One file of a test bundle: its name, size and content seed. */
typedef struct {
    const char *name;
    size_t size;
    unsigned seed;
} spec_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->root, sizeof f->root, "test_bundle");
    snprintf (f->in, sizeof f->in, "%s/in", f->root);
    snprintf (f->out, sizeof f->out, "%s/out", f->root);
    snprintf (f->outside, sizeof f->outside, "%s/outside", f->root);
    if (mkdir (f->in, 0755) || mkdir (f->out, 0755) || mkdir (f->outside, 0755))
        fail_msg ("mkdir: %s", strerror (errno));
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    test_remove_dir (f->root);
    free (f);
    return 0;
}

/*  The byte at position i of a file with this seed. */
static unsigned char
content (unsigned seed, size_t i)
{
    uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
    return (unsigned char) (x >> 37 ^ x >> 17);
}

static void
write_file (const char *path, size_t size, unsigned seed)
{
    unsigned char *buf = xmalloc (size);
    for (size_t i = 0; i < size; i++)
        buf[i] = content (seed, i);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, buf, size), (ssize_t) size);
    close (fd);
    free (buf);
}

/*  Fail unless path is a regular file of mode 0644 holding the content. */
static void
check_file (const char *path, size_t size, unsigned seed)
{
    struct stat st;
    if (lstat (path, &st) != 0)
        fail_msg ("%s: %s", path, strerror (errno));
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (st.st_mode & 07777, 0644);
    assert_int_equal (st.st_size, size);
    unsigned char *buf = xmalloc (size + 1);
    int fd = open (path, O_RDONLY);
    assert_int_equal (read (fd, buf, size + 1), (ssize_t) size);
    close (fd);
    for (size_t i = 0; i < size; i++)
        if (buf[i] != content (seed, i))
            fail_msg ("%s: byte %zu differs", path, i);
    free (buf);
}

/*  Write the specs' files under f->in (flattened names) and make a source
 *  of them with meta. */
static bundle_src_t *
make_src (fixture_t *f, const spec_t *specs, size_t n, const json_t *meta)
{
    const char **paths = xcalloc (n + 1, sizeof *paths);
    const char **names = xcalloc (n + 1, sizeof *names);
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf ("%s/%zu", f->in, i);
        write_file (path, specs[i].size, specs[i].seed);
        paths[i] = path;
        names[i] = specs[i].name;
    }
    char err[TF_ERRLEN] = "";
    bundle_src_t *src = bundle_src_new (meta, paths, names, n, err, sizeof err);
    if (!src)
        fail_msg ("bundle_src_new: %s", err);
    for (size_t i = 0; i < n; i++)
        free ((char *) paths[i]);
    free (paths);
    free (names);
    return src;
}

/*  Stream src into sink in chunks of chunk bytes; fail on any error. */
static void
pump (bundle_src_t *src, bundle_sink_t *sink, size_t chunk)
{
    unsigned char *buf = xmalloc (chunk);
    uint64_t size = bundle_src_size (src);
    char err[TF_ERRLEN] = "";
    for (uint64_t at = 0; at < size; at += chunk) {
        size_t len = size - at < chunk ? (size_t) (size - at) : chunk;
        if (bundle_src_read (src, at, buf, len, err, sizeof err) != 0)
            fail_msg ("read at %" PRIu64 ": %s", at, err);
        if (bundle_sink_write (sink, buf, len, err, sizeof err) != 0)
            fail_msg ("write at %" PRIu64 ": %s", at, err);
    }
    free (buf);
}

/*  How many entries are under dir, recursively (not dir itself). */
static int tree_count;
static int
count_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) path, (void) st, (void) flag;
    tree_count += ftw->level > 0;
    return 0;
}

static int
count_tree (const char *dir)
{
    tree_count = 0;
    nftw (dir, count_entry, 16, FTW_PHYS);
    return tree_count;
}

/* ------------------------------------------------------------------------
 *  Round trips.
 */

static const spec_t mixed[] = {
    {"empty", 0, 1},
    {"a.txt", 1000, 2},
    {"dir/sub/b.bin", 70000, 3},
    {"dir/c", 0, 4},
    {"dir/sub2/deeper/d", 3, 5},
    {"dir.x", 5, 6},
    {"z", 600 * KIB, 7},     /* spans two 512 KiB chunks */
    {"last-empty", 0, 8},
};
#define NMIXED (sizeof mixed / sizeof mixed[0])

/*  Every chunk size gives the same files, modes and meta; a zero-size
 *  file at the start, the middle and the end is created; nested
 *  directories are made 0755. */
static void
test_round_trip_any_chunk_size (void **state)
{
    fixture_t *f = *state;
    json_t *meta = json_pack ("{s:i, s:s, s:[i,i]}", "task", 17, "cmd", "x y", "v", 1, 2);
    bundle_src_t *src = make_src (f, mixed, NMIXED, meta);
    const size_t chunks[] = {1, 7, 4096, 512 * KIB};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        char err[TF_ERRLEN] = "";
        bundle_sink_t *sink = bundle_sink_new (f->out, bundle_src_size (src), err,
                                               sizeof err);
        assert_non_null (sink);
        pump (src, sink, chunks[c]);
        json_t *got = NULL;
        if (bundle_sink_finish (sink, &got, err, sizeof err) != 0)
            fail_msg ("finish (chunk %zu): %s", chunks[c], err);
        assert_true (json_equal (got, meta));
        json_decref (got);
        bundle_sink_destroy (&sink);
        assert_null (sink);
        for (size_t i = 0; i < NMIXED; i++) {
            char *path = xasprintf ("%s/%s", f->out, mixed[i].name);
            check_file (path, mixed[i].size, mixed[i].seed);
            free (path);
        }
        struct stat st;
        char *dir = xasprintf ("%s/dir/sub2/deeper", f->out);
        assert_int_equal (stat (dir, &st), 0);
        assert_int_equal (st.st_mode & 07777, 0755);
        free (dir);
        assert_int_equal (count_tree (f->out), NMIXED + 4);   /* + 4 directories */
        test_remove_dir (f->out);
        assert_int_equal (mkdir (f->out, 0755), 0);
    }
    bundle_src_destroy (&src);
    assert_null (src);
    bundle_src_destroy (&src);           /* safe on NULL */
    json_decref (meta);
}

/*  BUNDLE_MAX_FILES files in 64 directories travel; one more is refused
 *  by the source. No meta is an empty object. */
static void
test_many_files (void **state)
{
    fixture_t *f = *state;
    size_t n = BUNDLE_MAX_FILES;
    spec_t *specs = xcalloc (n + 1, sizeof *specs);
    char **names = xcalloc (n + 1, sizeof *names);
    for (size_t i = 0; i <= n; i++) {
        names[i] = xasprintf ("d%02zu/f%04zu", i % 64, i);
        specs[i] = (spec_t) {names[i], i % 7, (unsigned) i};
    }
    bundle_src_t *src = make_src (f, specs, n, NULL);
    char err[TF_ERRLEN] = "";
    bundle_sink_t *sink = bundle_sink_new (f->out, bundle_src_size (src), err, sizeof err);
    pump (src, sink, 4096);
    json_t *meta = NULL;
    assert_int_equal (bundle_sink_finish (sink, &meta, err, sizeof err), 0);
    assert_true (json_is_object (meta) && json_object_size (meta) == 0);
    json_decref (meta);
    bundle_sink_destroy (&sink);
    assert_int_equal (count_tree (f->out), n + 64);
    for (size_t i = 0; i < n; i += 97) {
        char *path = xasprintf ("%s/%s", f->out, names[i]);
        check_file (path, specs[i].size, specs[i].seed);
        free (path);
    }
    bundle_src_destroy (&src);

    const char **paths = xcalloc (n + 1, sizeof *paths);
    for (size_t i = 0; i <= n; i++)
        paths[i] = "/dev/null";          /* never looked at: the count is first */
    assert_null (bundle_src_new (NULL, paths, (const char *const *) names, n + 1, err,
                                 sizeof err));
    assert_non_null (strstr (err, "4097 files, more than 4096"));
    free (paths);
    for (size_t i = 0; i <= n; i++)
        free (names[i]);
    free (names);
    free (specs);
}

/*  A bundle of no files carries its meta alone. */
static void
test_meta_only (void **state)
{
    fixture_t *f = *state;
    json_t *meta = json_pack ("{s:i, s:{s:b}}", "exit", 3, "x", "y", 1);
    char err[TF_ERRLEN] = "";
    bundle_src_t *src = bundle_src_new (meta, NULL, NULL, 0, err, sizeof err);
    assert_non_null (src);
    bundle_sink_t *sink = bundle_sink_new (f->out, bundle_src_size (src), err, sizeof err);
    pump (src, sink, 3);
    json_t *got = NULL;
    assert_int_equal (bundle_sink_finish (sink, &got, err, sizeof err), 0);
    assert_true (json_equal (got, meta));
    json_decref (got);
    bundle_sink_destroy (&sink);
    bundle_src_destroy (&src);
    assert_int_equal (count_tree (f->out), 0);
    json_decref (meta);
}

/*  A lazy sink makes its directory with its first file: none for a
 *  bundle of no files; and an unfinished one removes the directory it
 *  made. */
static void
test_lazy_sink (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "", dir[128];
    snprintf (dir, sizeof dir, "%s/lazy", f->out);
    bundle_src_t *src = bundle_src_new (NULL, NULL, NULL, 0, err, sizeof err);
    bundle_sink_t *sink = bundle_sink_new_lazy (dir, bundle_src_size (src), err, sizeof err);
    pump (src, sink, 7);
    json_t *meta = NULL;
    assert_int_equal (bundle_sink_finish (sink, &meta, err, sizeof err), 0);
    json_decref (meta);
    bundle_sink_destroy (&sink);
    bundle_src_destroy (&src);
    struct stat st;
    assert_int_equal (stat (dir, &st), -1);   /* nothing to hold: no directory */

    const spec_t one[] = {{"a/b.txt", 5000, 7}};
    src = make_src (f, one, 1, NULL);
    sink = bundle_sink_new_lazy (dir, bundle_src_size (src), err, sizeof err);
    pump (src, sink, 4096);
    assert_int_equal (bundle_sink_finish (sink, &meta, err, sizeof err), 0);
    json_decref (meta);
    bundle_sink_destroy (&sink);
    char path[192];
    snprintf (path, sizeof path, "%s/a/b.txt", dir);
    check_file (path, 5000, 7);

    test_remove_dir (dir);
    sink = bundle_sink_new_lazy (dir, bundle_src_size (src), err, sizeof err);
    unsigned char buf[2048];
    assert_int_equal (bundle_src_read (src, 0, buf, sizeof buf, err, sizeof err), 0);
    assert_int_equal (bundle_sink_write (sink, buf, sizeof buf, err, sizeof err), 0);
    assert_int_equal (stat (dir, &st), 0);    /* the first file made it */
    bundle_sink_destroy (&sink);              /* unfinished: undone */
    assert_int_equal (stat (dir, &st), -1);
    bundle_src_destroy (&src);
}

/* ------------------------------------------------------------------------
 *  The source's reads.
 */

/*  How many descriptors this process has open. */
static int
open_fds (void)
{
    DIR *d = opendir ("/proc/self/fd");
    int n = 0;
    while (d && readdir (d))
        n++;
    if (d)
        closedir (d);
    return n - 3;                        /* ".", ".." and d's own */
}

static uint32_t
be32 (const unsigned char *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/*  The stream read in one go is the documented layout: magic, H, the
 *  header naming the files and sizes in order, the contents back to back.
 *  Then any range, in any order, overlapping or not, is the same bytes,
 *  with never more than one descriptor open; a range past the end is
 *  refused. */
static void
test_read_any_range (void **state)
{
    fixture_t *f = *state;
    json_t *meta = json_pack ("{s:s}", "k", "v");
    int fds = open_fds ();
    bundle_src_t *src = make_src (f, mixed, NMIXED, meta);
    assert_int_equal (open_fds (), fds);
    uint64_t size = bundle_src_size (src);
    unsigned char *all = xmalloc (size);
    char err[TF_ERRLEN] = "";
    assert_int_equal (bundle_src_read (src, 0, all, size, err, sizeof err), 0);

    assert_memory_equal (all, "TFB1", 4);
    uint32_t hlen = be32 (all + 4);
    json_t *header = json_loadb ((char *) all + 8, hlen, 0, NULL);
    assert_non_null (header);
    assert_true (json_equal (json_object_get (header, "meta"), meta));
    json_t *files = json_object_get (header, "files");
    assert_int_equal (json_array_size (files), NMIXED);
    size_t at = 8 + hlen;
    for (size_t i = 0; i < NMIXED; i++) {
        json_t *e = json_array_get (files, i);
        assert_string_equal (json_string_value (json_object_get (e, "name")),
                             mixed[i].name);
        assert_int_equal (json_integer_value (json_object_get (e, "size")), mixed[i].size);
        for (size_t j = 0; j < mixed[i].size; j++)
            assert_int_equal (all[at + j], content (mixed[i].seed, j));
        at += mixed[i].size;
    }
    assert_int_equal (at, size);
    json_decref (header);

    unsigned char *buf = xmalloc (size);
    srand (11);
    for (int k = 0; k < 3000; k++) {
        uint64_t off = (uint64_t) rand () % (size + 1);
        size_t len = (size_t) ((uint64_t) rand () % (size - off + 1));
        if (k % 3 == 0)
            len %= 3000;                 /* many short ranges at file edges */
        if (bundle_src_read (src, off, buf, len, err, sizeof err) != 0)
            fail_msg ("read %" PRIu64 "+%zu: %s", off, len, err);
        if (memcmp (buf, all + off, len) != 0)
            fail_msg ("read %" PRIu64 "+%zu differs", off, len);
        assert_true (open_fds () <= fds + 1);
    }
    assert_int_equal (bundle_src_read (src, size, buf, 0, err, sizeof err), 0);
    assert_int_equal (bundle_src_read (src, size - 1, buf, 2, err, sizeof err), -1);
    assert_non_null (strstr (err, "beyond the bundle"));
    assert_int_equal (bundle_src_read (src, UINT64_MAX, buf, 2, err, sizeof err), -1);
    assert_int_equal (bundle_src_read (src, 1, buf, SIZE_MAX, err, sizeof err), -1);
    free (buf);
    free (all);
    bundle_src_destroy (&src);
    json_decref (meta);
}

/*  A spooled bundle is read back by offset; reading past its end says so. */
static void
test_spooled_bundle (void **state)
{
    fixture_t *f = *state;
    bundle_src_t *src = make_src (f, mixed, NMIXED, NULL);
    uint64_t size = bundle_src_size (src);
    char *spool = xasprintf ("%s/spool", f->root);
    int fd = open (spool, O_RDWR | O_CREAT | O_TRUNC, 0600);
    unsigned char buf[64 * KIB];
    char err[TF_ERRLEN] = "";
    for (uint64_t at = 0; at < size; at += sizeof buf) {
        size_t len = size - at < sizeof buf ? (size_t) (size - at) : sizeof buf;
        assert_int_equal (bundle_src_read (src, at, buf, len, err, sizeof err), 0);
        assert_int_equal (write (fd, buf, len), (ssize_t) len);
    }
    bundle_sink_t *sink = bundle_sink_new (f->out, size, err, sizeof err);
    for (uint64_t at = 0; at < size; at += sizeof buf) {
        size_t len = size - at < sizeof buf ? (size_t) (size - at) : sizeof buf;
        assert_int_equal (bundle_file_read (fd, at, buf, len, err, sizeof err), 0);
        assert_int_equal (bundle_sink_write (sink, buf, len, err, sizeof err), 0);
    }
    json_t *meta;
    assert_int_equal (bundle_sink_finish (sink, &meta, err, sizeof err), 0);
    json_decref (meta);
    bundle_sink_destroy (&sink);
    char *z = xasprintf ("%s/z", f->out);
    check_file (z, 600 * KIB, 7);
    free (z);
    assert_int_equal (bundle_file_read (fd, size - 10, buf, 11, err, sizeof err), -1);
    assert_non_null (strstr (err, "end of file"));
    assert_int_equal (bundle_file_read (-1, 0, buf, 1, err, sizeof err), -1);
    close (fd);
    free (spool);
    bundle_src_destroy (&src);
}

/*  The source refuses what it cannot send, naming the file; a file that
 *  shrinks or grows after bundle_src_new fails the read that reaches it. */
static void
test_source_errors (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    char *file = xasprintf ("%s/file", f->in);
    write_file (file, 100, 1);
    struct {
        const char *path, *name, *expect;
    } cases[] = {
        {"/nonexistent/x", "x", "/nonexistent/x: No such file"},
        {f->in, "x", "not a regular file"},
        {"/dev/null", "x", "/dev/null: not a regular file"},
        {file, "bad\xff", "not UTF-8"},
        {file, "../x", "\"..\" component"},
        {file, "/x", "absolute"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *paths[] = {cases[i].path}, *names[] = {cases[i].name};
        err[0] = '\0';
        assert_null (bundle_src_new (NULL, paths, names, 1, err, sizeof err));
        if (!strstr (err, cases[i].expect))
            fail_msg ("case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].expect);
    }
    json_t *array = json_array ();
    const char *paths[] = {file}, *names[] = {"x"};
    assert_null (bundle_src_new (array, paths, names, 1, err, sizeof err));
    assert_non_null (strstr (err, "meta is not a JSON object"));
    json_decref (array);

    bundle_src_t *src = bundle_src_new (NULL, paths, names, 1, err, sizeof err);
    unsigned char buf[200];
    uint64_t size = bundle_src_size (src);
    assert_int_equal (truncate (file, 99), 0);
    assert_int_equal (bundle_src_read (src, size - 100, buf, 100, err, sizeof err), -1);
    if (!strstr (err, file) || !strstr (err, "100 bytes then, 99 now"))
        fail_msg ("shrunk: %s", err);
    assert_int_equal (truncate (file, 101), 0);
    assert_int_equal (bundle_src_read (src, size - 1, buf, 1, err, sizeof err), -1);
    assert_non_null (strstr (err, "101 now"));
    assert_int_equal (bundle_src_read (src, 0, buf, 8, err, sizeof err), 0);  /* header */
    bundle_src_destroy (&src);
    free (file);
}

/*  A header over BUNDLE_MAX_HEADER is refused by the source. */
static void
test_source_header_limit (void **state)
{
    fixture_t *f = *state;
    char *file = xasprintf ("%s/file", f->in);
    write_file (file, 0, 1);
    json_t *meta = json_object ();
    char *big = xmalloc (BUNDLE_MAX_HEADER + 1);
    memset (big, 'm', BUNDLE_MAX_HEADER);
    big[BUNDLE_MAX_HEADER] = '\0';
    json_object_set_new (meta, "big", json_string (big));
    const char *paths[] = {file}, *names[] = {"x"};
    char err[TF_ERRLEN] = "";
    assert_null (bundle_src_new (meta, paths, names, 1, err, sizeof err));
    assert_non_null (strstr (err, "more than 1048576"));
    big[BUNDLE_MAX_HEADER - 100] = '\0';
    json_object_set_new (meta, "big", json_string (big));
    bundle_src_t *src = bundle_src_new (meta, paths, names, 1, err, sizeof err);
    assert_non_null (src);
    bundle_src_destroy (&src);
    json_decref (meta);
    free (big);
    free (file);
}

/* ------------------------------------------------------------------------
 *  The sink refuses.
 */

/*  A raw stream: magic, H (the header's length unless hlen >= 0), the
 *  header, then content bytes. */
static unsigned char *
raw_bundle (const char *magic, const char *header, long long hlen, size_t content_len,
            size_t *len)
{
    size_t h = strlen (header);
    *len = 8 + h + content_len;
    unsigned char *raw = xcalloc (1, *len);
    memcpy (raw, magic, 4);
    uint32_t v = hlen >= 0 ? (uint32_t) hlen : (uint32_t) h;
    for (int i = 0; i < 4; i++)
        raw[4 + i] = (unsigned char) (v >> (24 - 8 * i));
    memcpy (raw + 8, header, h);
    memset (raw + 8 + h, 'x', content_len);
    return raw;
}

typedef struct {
    const char *header;
    size_t content;          /* bytes after the header */
    const char *expect;      /* in the error message */
    const char *magic;       /* NULL: TFB1 */
    long long hlen;          /* >= 0: H in the prefix instead of the length */
    uint64_t total;          /* 0: the stream's length */
} bad_t;

#define F(body) "{\"meta\":{},\"files\":[" body "]}"

static const bad_t bad[] = {
    {F (""), 0, "magic is not \"TFB1\"", "TFB2", -1, 0},
    {F (""), 0, "magic", "\0FB1", -1, 0},
    {F (""), 0, "header length 0: must be 1 to 1048576", NULL, 0, 0},
    {F (""), 0, "header length 1048577: must be 1 to 1048576", NULL, BUNDLE_MAX_HEADER + 1,
     2 * BUNDLE_MAX_HEADER},
    {F (""), 0, "header length 1000 exceeds the", NULL, 1000, 0},
    {"{", 0, "bundle header:", NULL, -1, 0},
    {"[]", 0, "bundle header:", NULL, -1, 0},
    {"{\"meta\":{}}", 0, "files", NULL, -1, 0},
    {"{\"meta\":{},\"files\":[],\"x\":1}", 0, "x", NULL, -1, 0},
    {"{\"meta\":{},\"meta\":{},\"files\":[]}", 0, "duplicate", NULL, -1, 0},
    {"{\"meta\":[],\"files\":[]}", 0, "meta is not an object", NULL, -1, 0},
    {"{\"meta\":{},\"files\":{}}", 0, "files is not an array", NULL, -1, 0},
    {"{\"meta\":{},\"files\":[]} x", 0, "bundle header:", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":1,\"mode\":1}"), 1, "files[0]", NULL, -1, 0},
    {F ("{\"name\":\"a\"}"), 0, "files[0]", NULL, -1, 0},
    {F ("{\"name\":1,\"size\":0}"), 0, "name is not a string", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":1.5}"), 1, "files[0]", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":-1}"), 0, "size -1 is negative", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":99999999999999999}"), 0, "past the", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":3}"), 4, "were announced", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":3},{\"name\":\"b\",\"size\":3}"), 5, "were announced", NULL, -1,
     0},
    {F ("{\"name\":\"../x\",\"size\":0}"), 0, "\"../x\" has a \"..\" component", NULL, -1, 0},
    {F ("{\"name\":\"a/../../x\",\"size\":0}"), 0, "\"..\" component", NULL, -1, 0},
    {F ("{\"name\":\"..\",\"size\":0}"), 0, "\"..\" component", NULL, -1, 0},
    {F ("{\"name\":\"/abs\",\"size\":0}"), 0, "\"/abs\" is absolute", NULL, -1, 0},
    {F ("{\"name\":\"a//b\",\"size\":0}"), 0, "\"a//b\" has an empty component", NULL, -1, 0},
    {F ("{\"name\":\"a/\",\"size\":0}"), 0, "empty component", NULL, -1, 0},
    {F ("{\"name\":\"\",\"size\":0}"), 0, "empty file name", NULL, -1, 0},
    {F ("{\"name\":\"./a\",\"size\":0}"), 0, "\".\" component", NULL, -1, 0},
    {F ("{\"name\":\"a/./b\",\"size\":0}"), 0, "\".\" component", NULL, -1, 0},
    {F ("{\"name\":\"a\\u0000b\",\"size\":0}"), 0, "u0000", NULL, -1, 0},
    {F ("{\"name\":\"d/a\",\"size\":1},{\"name\":\"d/a\",\"size\":1}"), 2,
     "\"d/a\" appears twice", NULL, -1, 0},
    {F ("{\"name\":\"a\",\"size\":0},{\"name\":\"a.b\",\"size\":0},{\"name\":\"a/b\",\"size\":0}"),
     0, "\"a\" is both a file and the directory of \"a/b\"", NULL, -1, 0},
    {F ("{\"name\":\"x/a/b/c\",\"size\":0},{\"name\":\"x/a\",\"size\":0}"), 0,
     "\"x/a\" is both a file and the directory of \"x/a/b/c\"", NULL, -1, 0},
};

/*  Feed a stream to a fresh sink in pieces of step bytes and return the
 *  first error (from a write or the finish), or fail if none. The sink's
 *  directory is empty afterwards. */
static void
expect_refusal (fixture_t *f, const unsigned char *raw, size_t len, uint64_t total,
                size_t step, const char *expect, const char *what)
{
    char err[TF_ERRLEN] = "";
    bundle_sink_t *sink = bundle_sink_new (f->out, total, err, sizeof err);
    if (!sink)
        fail_msg ("%s: sink_new: %s", what, err);
    int rc = 0;
    for (size_t at = 0; at < len && rc == 0; at += step)
        rc = bundle_sink_write (sink, raw + at, len - at < step ? len - at : step, err,
                                sizeof err);
    int write_failed = rc != 0;
    json_t *meta = NULL;
    if (rc == 0)
        rc = bundle_sink_finish (sink, &meta, err, sizeof err);
    if (rc == 0)
        fail_msg ("%s: accepted", what);
    assert_null (meta);
    if (!strstr (err, expect))
        fail_msg ("%s: \"%s\" lacks \"%s\"", what, err, expect);
    if (write_failed) {
        assert_int_equal (bundle_sink_write (sink, raw, 1, err, sizeof err), -1);
        assert_non_null (strstr (err, "already failed"));
    }
    bundle_sink_destroy (&sink);
    assert_int_equal (count_tree (f->out), 0);
}

/*  Every malformed stream is refused with a message saying what is wrong,
 *  whether it comes whole or a byte at a time, and leaves nothing. */
static void
test_sink_refuses_malformed (void **state)
{
    fixture_t *f = *state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        unsigned char *raw = raw_bundle (bad[i].magic ? bad[i].magic : "TFB1",
                                         bad[i].header, bad[i].hlen, bad[i].content, &len);
        uint64_t total = bad[i].total ? bad[i].total : len;
        char what[64];
        snprintf (what, sizeof what, "case %zu", i);
        expect_refusal (f, raw, len, total, len, bad[i].expect, what);
        expect_refusal (f, raw, len, total, 1, bad[i].expect, what);
        free (raw);
    }
}

/*  A name 256 bytes long in one component, a name over 4096 bytes, and
 *  more than 4096 files are refused. */
static void
test_sink_refuses_over_limits (void **state)
{
    fixture_t *f = *state;
    char comp[300], *longname = xmalloc (BUNDLE_MAX_NAME + 2);
    memset (comp, 'c', 256);
    comp[256] = '\0';
    for (size_t i = 0; i <= BUNDLE_MAX_NAME; i++)
        longname[i] = i % 100 == 99 ? '/' : 'n';
    longname[BUNDLE_MAX_NAME + 1] = '\0';
    char *headers[3];
    headers[0] = xasprintf (F ("{\"name\":\"%s\",\"size\":0}"), comp);
    headers[1] = xasprintf (F ("{\"name\":\"%s\",\"size\":0}"), longname);
    char *list = xstrdup ("");
    for (int i = 0; i <= BUNDLE_MAX_FILES; i++) {
        char *next = xasprintf ("%s%s{\"name\":\"%d\",\"size\":0}", list, i ? "," : "", i);
        free (list);
        list = next;
    }
    headers[2] = xasprintf (F ("%s"), list);
    const char *expect[] = {"longer than 255 bytes", "longer than 4096 bytes",
                            "4097 files, more than 4096"};
    for (int i = 0; i < 3; i++) {
        size_t len;
        unsigned char *raw = raw_bundle ("TFB1", headers[i], -1, 0, &len);
        expect_refusal (f, raw, len, len, len, expect[i], expect[i]);
        free (raw);
        free (headers[i]);
    }
    free (list);
    free (longname);

    char err[TF_ERRLEN] = "";
    assert_null (bundle_sink_new (f->out, BUNDLE_MAX_BYTES + 1, err, sizeof err));
    assert_non_null (strstr (err, "must be 9 to 17179869184"));
    assert_null (bundle_sink_new (f->out, 8, err, sizeof err));
    bundle_sink_t *sink = bundle_sink_new (f->out, BUNDLE_MAX_BYTES, err, sizeof err);
    assert_non_null (sink);
    bundle_sink_destroy (&sink);
    assert_null (bundle_sink_new ("/nonexistent", 100, err, sizeof err));
    assert_non_null (strstr (err, "/nonexistent: No such file"));
}

/*  A good bundle with one byte too many, or cut short, is refused. */
static void
test_sink_refuses_wrong_length (void **state)
{
    fixture_t *f = *state;
    size_t len;
    unsigned char *raw = raw_bundle ("TFB1", F ("{\"name\":\"a\",\"size\":3}"), -1, 3, &len);
    unsigned char *more = xcalloc (1, len + 1);
    memcpy (more, raw, len);
    expect_refusal (f, more, len + 1, len, 5, "longer than the", "one too many");
    expect_refusal (f, raw, len - 1, len, 5, "incomplete", "cut short");
    expect_refusal (f, raw, len - 4, len, 5, "incomplete", "cut in the header");
    free (more);
    free (raw);
}

/*  Feed raw whole to a sink on f->out; return the error or "" on
 *  success (then the sink is finished). */
static void
feed (fixture_t *f, const unsigned char *raw, size_t len, char *err, size_t errlen)
{
    bundle_sink_t *sink = bundle_sink_new (f->out, len, err, errlen);
    assert_non_null (sink);
    json_t *meta = NULL;
    err[0] = '\0';
    if (bundle_sink_write (sink, raw, len, err, errlen) == 0)
        bundle_sink_finish (sink, &meta, err, errlen);
    json_decref (meta);
    bundle_sink_destroy (&sink);
}

/*  A symlink planted in the sink's directory, as a directory or as the
 *  file itself, is refused and nothing appears where it points; an
 *  existing file is not overwritten; the refusal undoes the bundle's
 *  earlier files and directories but keeps what was there. */
static void
test_sink_refuses_planted_symlinks (void **state)
{
    fixture_t *f = *state;
    char *link = xasprintf ("%s/sub", f->out);
    char *target = xasprintf ("%s/target", f->outside);
    char *existing = xasprintf ("%s/exists", f->out);
    assert_int_equal (symlink (f->outside, link), 0);
    write_file (existing, 10, 9);
    char err[TF_ERRLEN];
    const struct {
        const char *header, *expect;
    } cases[] = {
        {F ("{\"name\":\"new/a\",\"size\":1},{\"name\":\"sub/x\",\"size\":1}"),
         "/sub: a symlink or not a directory"},
        {F ("{\"name\":\"new/a\",\"size\":1},{\"name\":\"sub/deep/x\",\"size\":1}"),
         "/sub: a symlink or not a directory"},
        {F ("{\"name\":\"new/a\",\"size\":1},{\"name\":\"sub\",\"size\":1}"),
         "/sub: already exists"},
        {F ("{\"name\":\"new/a\",\"size\":1},{\"name\":\"exists/x\",\"size\":1}"),
         "/exists: a symlink or not a directory"},
        {F ("{\"name\":\"new/a\",\"size\":1},{\"name\":\"exists\",\"size\":1}"),
         "/exists: already exists"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        unsigned char *raw = raw_bundle ("TFB1", cases[i].header, -1, 2, &len);
        feed (f, raw, len, err, sizeof err);
        if (!strstr (err, cases[i].expect))
            fail_msg ("case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].expect);
        free (raw);
        assert_int_equal (count_tree (f->outside), 0);
        assert_int_equal (count_tree (f->out), 2);       /* sub and exists only */
        check_file (existing, 10, 9);
    }
    /*  A symlink planted as the file, pointing to a file that does not
     *  exist yet, is not followed either. */
    assert_int_equal (unlink (link), 0);
    assert_int_equal (symlink (target, link), 0);
    size_t len;
    unsigned char *raw = raw_bundle ("TFB1", F ("{\"name\":\"sub\",\"size\":1}"), -1, 1, &len);
    feed (f, raw, len, err, sizeof err);
    assert_non_null (strstr (err, "already exists"));
    assert_int_equal (access (target, F_OK), -1);
    free (raw);
    free (existing);
    free (target);
    free (link);
}

/*  A sink destroyed before it finished removes the files and directories
 *  it created, also when the bundle's files go into a directory that was
 *  already there; finish then refuses. */
static void
test_sink_undoes_unfinished (void **state)
{
    fixture_t *f = *state;
    char *pre = xasprintf ("%s/pre", f->out), *old = xasprintf ("%s/pre/old", f->out);
    assert_int_equal (mkdir (pre, 0755), 0);
    write_file (old, 5, 1);
    static const spec_t specs[] = {
        {"pre/new", 10, 1}, {"n/e/w", 20, 2}, {"n/x", 0, 3}, {"big", 100 * KIB, 4},
    };
    bundle_src_t *src = make_src (f, specs, 4, NULL);
    uint64_t size = bundle_src_size (src);
    unsigned char *buf = xmalloc (size);
    char err[TF_ERRLEN] = "";
    assert_int_equal (bundle_src_read (src, 0, buf, size, err, sizeof err), 0);
    bundle_sink_t *sink = bundle_sink_new (f->out, size, err, sizeof err);
    assert_int_equal (bundle_sink_write (sink, buf, size - 1000, err, sizeof err), 0);
    assert_int_equal (count_tree (f->out), 8);   /* pre, old, 4 files, n, n/e */
    json_t *meta;
    assert_int_equal (bundle_sink_finish (sink, &meta, err, sizeof err), -1);
    assert_non_null (strstr (err, "incomplete"));
    bundle_sink_destroy (&sink);
    assert_int_equal (count_tree (f->out), 2);
    check_file (old, 5, 1);
    free (buf);
    bundle_src_destroy (&src);
    free (pre);
    free (old);
}

/* ------------------------------------------------------------------------
 *  Memory.
 */

/*  A field of /proc/self/status in KiB. */
static long
status_kib (const char *field)
{
    FILE *fp = fopen ("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t flen = strlen (field);
    while (fp && fgets (line, sizeof line, fp))
        if (strncmp (line, field, flen) == 0 && line[flen] == ':')
            v = strtol (line + flen + 1, NULL, 10);
    if (fp)
        fclose (fp);
    return v;
}

#define BIG_BYTES ((uint64_t) 1 << 30)
#define RSS_GROWTH_KIB (16 * 1024)

/*  A 1 GiB (sparse) input streamed through source and sink in 512 KiB
 *  chunks, as a node would: the process's peak resident memory grows by
 *  less than 16 MiB, and the unpacked file is whole (its last bytes and
 *  size checked). */
static void
test_big_file_in_bounded_memory (void **state)
{
    fixture_t *f = *state;
    char *path = xasprintf ("%s/big", f->in);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal (ftruncate (fd, (off_t) BIG_BYTES), 0);
    assert_int_equal (pwrite (fd, "END", 3, (off_t) BIG_BYTES - 3), 3);
    close (fd);
    const char *paths[] = {path}, *names[] = {"data/big"};
    char err[TF_ERRLEN] = "";
    bundle_src_t *src = bundle_src_new (NULL, paths, names, 1, err, sizeof err);
    assert_non_null (src);
    bundle_sink_t *sink = bundle_sink_new (f->out, bundle_src_size (src), err, sizeof err);

    /*  Reset VmHWM to the current RSS and measure from the RSS: should
     *  the reset fail, an earlier peak can only make the test fail, never
     *  pass wrongly. */
    FILE *clear = fopen ("/proc/self/clear_refs", "w");
    if (clear) {
        fputs ("5", clear);
        fclose (clear);
    }
    long before = status_kib ("VmRSS");
    double t0 = tf_now ();
    pump (src, sink, 512 * KIB);
    double seconds = tf_now () - t0;
    long growth = status_kib ("VmHWM") - before;
    json_t *meta;
    assert_int_equal (bundle_sink_finish (sink, &meta, err, sizeof err), 0);
    json_decref (meta);
    bundle_sink_destroy (&sink);
    bundle_src_destroy (&src);
    print_message ("1 GiB through src and sink in %.1f s, peak RSS +%ld KiB\n", seconds,
                   growth);
    assert_true (before > 0);
    assert_true (growth < RSS_GROWTH_KIB);

    char *out = xasprintf ("%s/data/big", f->out);
    struct stat st;
    assert_int_equal (stat (out, &st), 0);
    assert_int_equal ((uint64_t) st.st_size, BIG_BYTES);
    char tail[4] = "";
    fd = open (out, O_RDONLY);
    assert_int_equal (pread (fd, tail, 3, (off_t) BIG_BYTES - 3), 3);
    assert_memory_equal (tail, "END", 3);
    close (fd);
    unlink (out);
    unlink (path);
    free (out);
    free (path);
}

int
main (void)
{
    umask (022);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_round_trip_any_chunk_size, setup, teardown),
        cmocka_unit_test_setup_teardown (test_many_files, setup, teardown),
        cmocka_unit_test_setup_teardown (test_meta_only, setup, teardown),
        cmocka_unit_test_setup_teardown (test_lazy_sink, setup, teardown),
        cmocka_unit_test_setup_teardown (test_read_any_range, setup, teardown),
        cmocka_unit_test_setup_teardown (test_spooled_bundle, setup, teardown),
        cmocka_unit_test_setup_teardown (test_source_errors, setup, teardown),
        cmocka_unit_test_setup_teardown (test_source_header_limit, setup, teardown),
        cmocka_unit_test_setup_teardown (test_sink_refuses_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown (test_sink_refuses_over_limits, setup, teardown),
        cmocka_unit_test_setup_teardown (test_sink_refuses_wrong_length, setup, teardown),
        cmocka_unit_test_setup_teardown (test_sink_refuses_planted_symlinks, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_sink_undoes_unfinished, setup, teardown),
        cmocka_unit_test_setup_teardown (test_big_file_in_bounded_memory, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
