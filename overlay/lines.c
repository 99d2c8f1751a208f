/*  lines — see lines.h. */
#include "overlay/lines.h"
#include "overlay/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lines_t {
    int fd;                 /* -1 when reading a buffer */
    const char *data;       /* the buffer, or buf when reading fd */
    size_t len;             /* bytes valid at data */
    size_t pos;             /* the next line starts here */
    char *buf;              /* fd only: max_line + 1 bytes */
    size_t max_line;
    int eof;                /* fd only: read(2) returned 0 */
    unsigned number;
    lines_status_t stuck;   /* LINES_LINE, or the status that stopped us */
};

const char *
lines_status_str (lines_status_t status)
{
    switch (status) {
    case LINES_LINE:
        return "line";
    case LINES_TAIL:
        return "tail";
    case LINES_TOO_LONG:
        return "too long";
    case LINES_TOO_MANY:
        return "too many lines";
    case LINES_END:
        return "end";
    case LINES_ERROR:
        return "read error";
    }
    return "unknown";
}

static lines_t *
lines_new (size_t max_line)
{
    lines_t *self = xcalloc (1, sizeof *self);
    self->fd = -1;
    self->max_line = max_line ? max_line : 1;
    self->stuck = LINES_LINE;
    return self;
}

lines_t *
lines_new_fd (int fd, size_t max_line)
{
    lines_t *self = lines_new (max_line);
    self->fd = fd;
    self->buf = xmalloc (self->max_line + 1);
    self->data = self->buf;
    return self;
}

lines_t *
lines_new_buffer (const char *data, size_t len, size_t max_line)
{
    lines_t *self = lines_new (max_line);
    self->data = data;
    self->len = len;
    self->eof = 1;
    return self;
}

void
lines_destroy (lines_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->buf);
    free (*self_p);
    *self_p = NULL;
}

/*  fd only: move what is left of the buffer to its front and read more
 *  after it, once. Return 0, or -1 with errno set. */
static int
refill (lines_t *self)
{
    size_t left = self->len - self->pos;
    memmove (self->buf, self->buf + self->pos, left);
    self->pos = 0;
    self->len = left;
    ssize_t n;
    do
        n = read (self->fd, self->buf + self->len, self->max_line + 1 - self->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0)
        self->eof = 1;
    self->len += (size_t) n;
    return 0;
}

/*  Find the end of the next line; return its status (LINES_LINE with
 *  *end at the '\n', LINES_TAIL with *end at the input's end, or a
 *  failure). */
static lines_status_t
find_end (lines_t *self, size_t *end)
{
    for (;;) {
        const char *start = self->data + self->pos;
        size_t left = self->len - self->pos;
        size_t look = left < self->max_line + 1 ? left : self->max_line + 1;
        const char *nl = look ? memchr (start, '\n', look) : NULL;
        if (nl) {
            *end = (size_t) (nl - self->data);
            return LINES_LINE;
        }
        if (left > self->max_line)
            return LINES_TOO_LONG;
        if (self->eof) {
            *end = self->len;
            return left ? LINES_TAIL : LINES_END;
        }
        if (refill (self) < 0)
            return LINES_ERROR;
    }
}

lines_status_t
lines_next (lines_t *self, const char **line, size_t *len)
{
    if (self->stuck != LINES_LINE)
        return self->stuck;
    size_t end = 0;
    lines_status_t status = find_end (self, &end);
    if (status == LINES_END)
        return status;
    if (self->number >= LINES_MAX_COUNT) {
        self->stuck = LINES_TOO_MANY;
        return self->stuck;
    }
    self->number++;
    if (status != LINES_LINE && status != LINES_TAIL) {
        self->stuck = status;
        return status;
    }
    *line = self->data + self->pos;
    *len = end - self->pos;
    self->pos = status == LINES_LINE ? end + 1 : end;
    return status;
}

unsigned
lines_number (const lines_t *self)
{
    return self->number;
}
