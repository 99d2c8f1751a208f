/*  gnuplot — drawing a plot by running gnuplot. See gnuplot.h. */
#include "controller/gnuplot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/shell.h"
#include "overlay/util.h"

char *
gnuplot_quote (const char *text)
{
    char *out = xcalloc (2 * strlen (text) + 3, 1), *o = out;
    *o++ = '\'';
    for (const char *p = text; *p; p++)
        if (*p == '\'') {
            memcpy (o, "''", 2);
            o += 2;
        }
        else
            *o++ = *p;
    *o = '\'';
    return out;
}

/*  The command line: [cd DIR &&] gnuplot -e SETUP SCRIPT 2>&1, every
 *  word quoted. A new string. */
static char *
draw_command (const char *dir, const char *script, const char *terminal, int width,
              int height, const char *out)
{
    char *qout = gnuplot_quote (out);
    char *setup = xasprintf ("set terminal %s size %d,%d; set output %s", terminal, width,
                             height, qout);
    char *qsetup = shell_quote (setup), *qscript = shell_quote (script);
    char *qdir = shell_quote (dir ? dir : ".");
    char *cmd = xasprintf ("cd %s && gnuplot -e %s %s 2>&1", qdir, qsetup, qscript);
    free (qout);
    free (setup);
    free (qsetup);
    free (qscript);
    free (qdir);
    return cmd;
}

int
gnuplot_draw (const char *dir, const char *script, const char *terminal, int width,
              int height, const char *out, char *err, size_t errlen)
{
    char *cmd = draw_command (dir, script, terminal, width, height, out);
    FILE *pipe = popen (cmd, "r");
    free (cmd);
    if (!pipe)
        return tf_error (err, errlen, "cannot run gnuplot: %s", strerror (errno));
    /*  gnuplot says what is wrong on its last line, after the line it
     *  could not read and a caret. */
    char line[256], last[256] = "";
    while (fgets (line, sizeof line, pipe)) {
        size_t len = strcspn (line, "\n");
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
            len--;
        line[len] = '\0';
        if (line[strspn (line, " \t")])
            snprintf (last, sizeof last, "%s", line);
    }
    if (pclose (pipe) == 0)
        return 0;
    return tf_error (err, errlen, "gnuplot failed for %s%s%s%s%s", dir ? dir : "",
                     dir ? "/" : "", out, last[0] ? ": " : "", last);
}
