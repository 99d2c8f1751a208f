/*  bundle — files plus metadata as one byte stream, read by offset on the
 *  sending side and consumed in order on the receiving side.
 *
 *  A command task's inputs travel down the tree as one bundle (the task's
 *  payload) and its outputs, stdout and stderr travel back up as another.
 *  The format (docs/protocol.md, "Bundles"):
 *
 *      offset 0   4 bytes   magic "TFB1"
 *      offset 4   4 bytes   H, the header's length, big-endian,
 *                           1 <= H <= BUNDLE_MAX_HEADER
 *      offset 8   H bytes   the header, a JSON object (UTF-8):
 *                             {"meta": {...the caller's object...},
 *                              "files": [{"name": "rel/path", "size": N}, ...]}
 *      offset 8+H           the files' contents back to back, in the
 *                           header's order, each exactly its size
 *
 *  The stream's length is therefore 8 + H + the sum of the sizes, which the
 *  receiver is told beforehand (the task's announced size) and checks
 *  exactly. A name is relative: components separated by single '/', none
 *  empty, "." or "..", each at most BUNDLE_MAX_COMPONENT bytes, no NUL,
 *  at most BUNDLE_MAX_NAME bytes in all; no two names are equal and no
 *  name is a directory of another ("a" and "a/b"). The
 *  header has exactly the keys "meta" and "files", each file exactly
 *  "name" and "size".
 *
 *  Neither side holds file contents in memory: the source reads any range
 *  by pread from the files themselves, the sink writes each byte to its
 *  file as it comes. Memory is O(header) whatever the files' sizes. Both
 *  are plain blocking file I/O, for one thread; neither touches a socket.
 *
 *  A node that only forwards a bundle spools it raw to one file and
 *  serves chunks from it by offset with bundle_file_read.
 */
#ifndef TF_BUNDLE_H
#define TF_BUNDLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "overlay/config.h"

#define BUNDLE_MAGIC "TFB1"
#define BUNDLE_PREFIX 8                  /* magic + header length */

/*  The largest header. 1 MiB holds the most files with names of a few
 *  hundred bytes and a generous meta; the sink holds the header in
 *  memory, so this is also its memory bound. */
#define BUNDLE_MAX_HEADER (1u << 20)

/*  The most files in one bundle: a task's inputs or outputs are a handful
 *  to a few hundred files; thousands is a listing gone wrong. */
#define BUNDLE_MAX_FILES 4096

/*  The longest name and the longest component of a name, bytes: Linux's
 *  PATH_MAX and NAME_MAX, so a name that passes can be created. */
#define BUNDLE_MAX_NAME 4096
#define BUNDLE_MAX_COMPONENT 255

/*  The largest bundle, bytes, header included: a command's stream
 *  (overlay/config.h, CONFIG_MAX_STREAM_BYTES). */
#define BUNDLE_MAX_BYTES CONFIG_MAX_STREAM_BYTES
_Static_assert (CONFIG_MAX_STREAM_BYTES >= CONFIG_MAX_TASK_BYTES,
                "a bundle may be as large as any task payload");

/*  Check one name against the rules above. Returns 0, or -1 with a
 *  message quoting the name in err. */
int bundle_name_check (const char *name, char *err, size_t errlen);

/*  Check n names as one bundle's: n <= BUNDLE_MAX_FILES, each name by
 *  bundle_name_check, no duplicates, no name a directory of another.
 *  Returns 0, or -1 with a message naming the offending name(s). */
int bundle_names_check (const char *const *names, size_t n, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 *  Source: the sender's side.
 */

typedef struct bundle_src bundle_src_t;

/*  Make a bundle of n local files: paths[i] is read and travels as
 *  names[i]. meta (borrowed, may be NULL for {}) must be a JSON object;
 *  it is copied into the header. Each path must be a regular file
 *  (symlinks are followed); its size is taken now. Nothing stays open.
 *  Returns the source, or NULL with a message in err: a bad name, a path
 *  that cannot be stat'ed or is not a regular file, a name that is not
 *  UTF-8, a header over BUNDLE_MAX_HEADER, a total over BUNDLE_MAX_BYTES. */
bundle_src_t *bundle_src_new (const json_t *meta, const char *const *paths,
                              const char *const *names, size_t n, char *err,
                              size_t errlen);

/*  Close whatever is open, free, and null the caller's pointer. Safe on
 *  NULL. */
void bundle_src_destroy (bundle_src_t **self_p);

/*  The bundle's length in bytes: 8 + H + the files' sizes. */
uint64_t bundle_src_size (const bundle_src_t *self);

/*  Fill buf with the len bytes of the stream at offset, across the header
 *  and any number of files. offset + len must not exceed the size. At
 *  most one file descriptor is open at a time between calls (the last
 *  file read, reopened on demand). Returns 0, or -1 with a message in
 *  err: the range is out of bounds, or a file cannot be read or no longer
 *  has the size it had at bundle_src_new (named, with both sizes); buf's
 *  contents are then unspecified. */
int bundle_src_read (bundle_src_t *self, uint64_t offset, void *buf, size_t len,
                     char *err, size_t errlen);

/*  Read exactly len bytes at offset from fd with pread (EINTR retried): a
 *  spooled bundle's chunk. Returns 0, or -1 with a message in err (an I/O
 *  error, or end of file before len bytes). */
int bundle_file_read (int fd, uint64_t offset, void *buf, size_t len, char *err,
                      size_t errlen);

/* ------------------------------------------------------------------------
 *  Sink: the receiver's side.
 */

typedef struct bundle_sink bundle_sink_t;

/*  Prepare to unpack a bundle of total_bytes (the length the sender
 *  announced: BUNDLE_PREFIX + 1 .. BUNDLE_MAX_BYTES) into the existing
 *  directory dir. Returns the sink, or NULL with a message. */
bundle_sink_t *bundle_sink_new (const char *dir, uint64_t total_bytes, char *err,
                                size_t errlen);

/*  The same, but dir need not exist: the first file creates it (mode
 *  0755, its parent must exist), so a bundle of no files creates nothing.
 *  Undoing removes it again when the sink created it. */
bundle_sink_t *bundle_sink_new_lazy (const char *dir, uint64_t total_bytes, char *err,
                                     size_t errlen);

/*  Consume the next len bytes of the stream, in any split (the header may
 *  arrive a byte at a time). As soon as the header is complete it is
 *  parsed and checked: the magic, H, the JSON's shape, every name
 *  (bundle_names_check) and 8 + H + the sizes == total_bytes exactly.
 *  Files are then created under dir as their bytes come, parent
 *  directories with mode 0755 and files with 0644 (both before the umask),
 *  written with write(2); a file of size 0 is created as soon as the
 *  stream reaches it. Nothing is ever written outside dir: every
 *  component is opened with O_NOFOLLOW, a file is created with O_EXCL, so
 *  a symlink or an existing file where the bundle puts a file is refused.
 *  Returns 0, or -1 with a message in err (the first error only: the sink
 *  then refuses every further call, and bundle_sink_destroy undoes it). */
int bundle_sink_write (bundle_sink_t *self, const void *data, size_t len, char *err,
                       size_t errlen);

/*  Check that all total_bytes arrived and every file is complete and
 *  closed. Returns 0 and a new reference to the header's meta object in
 *  *meta_out (the caller's to json_decref), or -1 with a message and
 *  *meta_out NULL. After success, what was written stays. */
int bundle_sink_finish (bundle_sink_t *self, json_t **meta_out, char *err,
                        size_t errlen);

/*  Close, free, and null the caller's pointer. Safe on NULL. Unless
 *  bundle_sink_finish succeeded, everything the sink created is removed
 *  first: its files, then its directories that are empty (best effort,
 *  by the same O_NOFOLLOW walk); what was in dir before is never touched. */
void bundle_sink_destroy (bundle_sink_t **self_p);

#endif
