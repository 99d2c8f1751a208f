/*  cli — see cli.h. */
#include "controller/cli.h"

#include <stdarg.h>
#include <stdio.h>

int
cli_usage_error (const char *command, int code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fprintf (stderr, "treefarm %s: ", command);
    vfprintf (stderr, fmt, ap);
    fprintf (stderr, " (see treefarm %s --help)\n", command);
    va_end (ap);
    return code;
}
