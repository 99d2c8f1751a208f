/*  gnuplot — drawing a plot by running gnuplot.
 *
 *  The controller's plots (a calibration's, controller/calib.c; a study's,
 *  controller/study_out.c) are gnuplot scripts that leave the terminal
 *  and output to the command line, so that one script draws both the png
 *  and the svg. This module is the one place that runs gnuplot.
 */
#ifndef TF_GNUPLOT_H
#define TF_GNUPLOT_H

#include <stddef.h>

/*  Return text as a gnuplot string in single quotes, a single quote
 *  written '' ("it's" -> 'it''s'). The caller frees. */
char *gnuplot_quote (const char *text);

/*  Run gnuplot on the script file script, drawing out on terminal
 *  ("png", "svg") at width x height pixels: gnuplot -e "set terminal
 *  TERMINAL size W,H; set output 'OUT'" SCRIPT. With dir (may be NULL),
 *  gnuplot runs in dir, and script and out are relative to it. gnuplot is
 *  found on PATH. Returns 0, or -1 with "cannot run gnuplot: REASON" or
 *  "gnuplot failed for OUT: MESSAGE" (OUT as DIR/OUT with dir;
 *  MESSAGE the last line gnuplot, or sh, wrote) in err. */
int gnuplot_draw (const char *dir, const char *script, const char *terminal, int width,
                  int height, const char *out, char *err, size_t errlen);

#endif
