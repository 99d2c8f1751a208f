/*  lines — read text one line at a time, from a file descriptor or a
 *  buffer, with a bound on the length of a line.
 *
 *  The tasks loader and the journal read files that come from outside and
 *  may be large (a million tasks) or hostile (one line of a gigabyte, NUL
 *  bytes). A reader holds at most max_line + 1 bytes, whatever the input:
 *  a line longer than max_line is reported as such, never allocated. Lines
 *  may contain any byte but '\n'; a final line with no '\n' after it is
 *  told apart, so a caller can decide what a torn write means to it. Works
 *  on pipes as well as regular files.
 */
#ifndef TF_LINES_H
#define TF_LINES_H

#include <stddef.h>

/*  The most lines one input may have: line numbers are unsigned int. */
#define LINES_MAX_COUNT 4000000000u

typedef struct lines_t lines_t;

typedef enum {
    LINES_LINE,       /* a line that ended in '\n' (the '\n' is not given) */
    LINES_TAIL,       /* the input's last bytes, with no '\n' after them */
    LINES_TOO_LONG,   /* a line of more than max_line bytes: stop reading */
    LINES_TOO_MANY,   /* more than LINES_MAX_COUNT lines: stop reading */
    LINES_END,        /* the input is exhausted */
    LINES_ERROR,      /* read(2) failed; errno says why: stop reading */
} lines_status_t;

const char *lines_status_str (lines_status_t status);

/*  A reader of the open descriptor fd, which stays the caller's to close.
 *  max_line (>= 1) is the longest line accepted, in bytes, without its
 *  '\n'; the reader allocates max_line + 1 bytes. */
lines_t *lines_new_fd (int fd, size_t max_line);

/*  A reader of len bytes at data, which must outlive the reader (lines are
 *  handed out as pointers into it; nothing is copied). */
lines_t *lines_new_buffer (const char *data, size_t len, size_t max_line);

/*  Destroy the reader and null the pointer; NULL is fine. */
void lines_destroy (lines_t **self_p);

/*  Read the next line. On LINES_LINE and LINES_TAIL, *line and *len give
 *  its bytes (not NUL-terminated, borrowed until the next call); any other
 *  status leaves them unset. After LINES_TOO_LONG, LINES_TOO_MANY or
 *  LINES_ERROR the reader is stuck and says so again. */
lines_status_t lines_next (lines_t *self, const char **line, size_t *len);

/*  The 1-based number of the line the last lines_next call was about (the
 *  one returned, too long, or that failed to read); 0 before the first. */
unsigned lines_number (const lines_t *self);

#endif
