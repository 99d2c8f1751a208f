/*  shell — words for a POSIX shell. See shell.h. */
#include "controller/shell.h"

#include <string.h>

#include "overlay/util.h"

char *
shell_quote (const char *word)
{
    size_t len = 3;
    for (const char *p = word; *p; p++)
        len += *p == '\'' ? 4 : 1;
    char *out = xmalloc (len), *o = out;
    *o++ = '\'';
    for (const char *p = word; *p; p++) {
        if (*p == '\'') {
            memcpy (o, "'\\''", 4);
            o += 4;
        }
        else
            *o++ = *p;
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}
