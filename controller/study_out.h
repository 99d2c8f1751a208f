/*  study_out — the files a study (`treefarm bench`, controller/study.h)
 *  leaves in its directory DIR:
 *
 *    runs.csv, runs.json  one row per run of the grid, pending ones too:
 *                         send_mb, units, policy, repeat, status,
 *                         makespan_s, throughput, bound, efficiency,
 *                         efficiency_reliable, fidelity, wall_s, error;
 *    table.txt            per cell: complete runs, mean makespan, it
 *                         normalized, mean efficiency (flagged when a run's
 *                         efficiency is unreliable);
 *    summary.json         the same per cell, and the study's parameters;
 *    normalized-ZMB.{dat,gp,png,svg}   per send size Z, grouped bars of the
 *                         normalized execution time, one group per compute
 *                         size, one bar per policy, a line at 1;
 *    efficiency.{dat,gp,png,svg}       per policy, one bar per send size:
 *                         mean efficiency over compute sizes and repeats,
 *                         error bars from the lowest to the highest run;
 *    index.html           the table and the plots on one static page.
 *
 *  Every file is written to a temporary name and renamed, so a reader
 *  never sees half a file. The plots are drawn by running gnuplot on the
 *  .gp scripts in DIR (each says how to draw it again by hand).
 */
#ifndef TF_STUDY_OUT_H
#define TF_STUDY_OUT_H

#include <jansson.h>
#include <stddef.h>

#include "controller/study.h"

/*  Write json into DIR/name (indented). Returns 0, or -1 with a message
 *  naming the file. */
int study_out_write_json (const char *dir, const char *name, const json_t *json,
                          char *err, size_t errlen);

/*  Write runs.csv, runs.json, table.txt and summary.json of st, whose
 *  cells are summarized (study_summarize). Returns 0, or -1 with a message
 *  naming the file. */
int study_out_write_data (const study_t *st, char *err, size_t errlen);

/*  Write the plots' data and scripts, draw them with gnuplot as PNG and
 *  SVG, and write index.html. Returns 0, or -1 with a message naming the
 *  file, or gnuplot's complaint (gnuplot missing or failing). */
int study_out_write_plots (const study_t *st, char *err, size_t errlen);

#endif
