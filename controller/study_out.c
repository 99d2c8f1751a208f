/*  study_out — a study's files. See study_out.h. */
#include "controller/study_out.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/gnuplot.h"
#include "controller/results.h"
#include "overlay/util.h"

/*  Canvas of the plots, pixels (the svg terminal uses the same numbers):
 *  room for the key outside on the right, and per group of bars enough
 *  width that bars stay wider than a few pixels and the group's tick label
 *  fits beside its neighbours'. */
#define PLOT_HEIGHT 520
#define PLOT_MIN_WIDTH 760
#define PLOT_KEY_WIDTH 190
#define PLOT_BAR_WIDTH 16
#define PLOT_GROUP_GAP 40

/*  Writes one file of st; arg is the writer's own (a plot's index). */
typedef int (*writer_fn) (const study_t *st, const void *arg, FILE *file);

/*  One writer of st with its argument, as tf_write_file_atomic calls it. */
typedef struct {
    const study_t *st;
    writer_fn fn;
    const void *arg;
} study_writer_t;

static int
call_writer (FILE *file, const void *arg)
{
    const study_writer_t *w = arg;
    return w->fn (w->st, w->arg, file);
}

/*  Write DIR/name with fn through a temporary file renamed into place. */
static int
write_file (const study_t *st, const char *name, writer_fn fn, const void *arg, char *err,
            size_t errlen)
{
    study_writer_t w = {st, fn, arg};
    return tf_write_file_atomic (st->dir, name, call_writer, &w, err, errlen);
}

static int
json_writer (const study_t *st, const void *json, FILE *file)
{
    (void) st;
    return json_dumpf (json, file, JSON_INDENT (2)) || fputc ('\n', file) < 0;
}

int
study_out_write_json (const char *dir, const char *name, const json_t *json, char *err,
                      size_t errlen)
{
    study_t st = {.dir = dir};
    return write_file (&st, name, json_writer, json, err, errlen);
}

/*  A number, or null when unknown. */
static json_t *
number (double v)
{
    return isfinite (v) ? json_real (v) : json_null ();
}

/*  "%.9g", or "" when unknown. */
static const char *
cell_text (double v, char *buf, size_t len)
{
    if (isfinite (v))
        snprintf (buf, len, "%.9g", v);
    else
        buf[0] = '\0';
    return buf;
}

/*  The run's row as JSON: runs.json's entry, and runs.csv's columns. */
static json_t *
run_json (const study_t *st, int i)
{
    const study_params_t *p = st->params;
    const study_run_t *r = &st->runs[i];
    int complete = r->status == STUDY_RUN_COMPLETE;
    json_t *o = json_pack ("{s:f, s:f, s:s, s:i, s:s}", "send_mb", p->send[r->send],
                           "units", p->compute[r->compute], "policy",
                           p->policy[r->policy],
                           "repeat", r->repeat, "status", study_status_str (r->status));
    json_object_set_new (o, "makespan_s", number (r->makespan_s));
    json_object_set_new (o, "throughput", number (r->throughput));
    json_object_set_new (o, "bound", number (r->bound));
    json_object_set_new (o, "efficiency", number (r->efficiency));
    json_object_set_new (o, "efficiency_reliable",
                         complete ? json_boolean (r->reliable) : json_null ());
    json_object_set_new (o, "fidelity", number (r->fidelity));
    json_object_set_new (o, "wall_s", number (r->wall_s));
    json_object_set_new (o, "steady_efficiency", number (r->steady_efficiency));
    json_object_set_new (o, "tail_s", number (r->tail_s));
    json_object_set_new (o, "error", r->error[0] ? json_string (r->error) : json_null ());
    return o;
}

/*  text as a CSV field: quoted when it holds a comma, quote or newline. */
static void
csv_field (FILE *file, const char *text)
{
    if (!strpbrk (text, ",\"\n\r")) {
        fputs (text, file);
        return;
    }
    fputc ('"', file);
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            fputc ('"', file);
        fputc (*c == '\n' || *c == '\r' ? ' ' : *c, file);
    }
    fputc ('"', file);
}

#define RUNS_CSV_HEADER                                                           \
    "send_mb,units,policy,repeat,status,makespan_s,throughput,bound,efficiency,"   \
    "efficiency_reliable,fidelity,wall_s,steady_efficiency,tail_s,error"

static int
runs_csv (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    const study_params_t *p = st->params;
    char b[8][32];
    fprintf (file, "%s\n", RUNS_CSV_HEADER);
    for (int i = 0; i < study_run_count (p); i++) {
        const study_run_t *r = &st->runs[i];
        fprintf (file, "%g,%g,%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,", p->send[r->send],
                 p->compute[r->compute], p->policy[r->policy], r->repeat,
                 study_status_str (r->status), cell_text (r->makespan_s, b[0], 32),
                 cell_text (r->throughput, b[1], 32), cell_text (r->bound, b[2], 32),
                 cell_text (r->efficiency, b[3], 32),
                 r->status == STUDY_RUN_COMPLETE ? (r->reliable ? "true" : "false") : "",
                 cell_text (r->fidelity, b[4], 32), cell_text (r->wall_s, b[5], 32),
                 cell_text (r->steady_efficiency, b[6], 32), cell_text (r->tail_s, b[7], 32));
        csv_field (file, r->error);
        fputc ('\n', file);
    }
    return 0;
}

static int
runs_json (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    json_t *a = json_array ();
    for (int i = 0; i < study_run_count (st->params); i++)
        json_array_append_new (a, run_json (st, i));
    int rc = json_dumpf (a, file, JSON_INDENT (2)) || fputc ('\n', file) < 0;
    json_decref (a);
    return rc;
}

/*  "normalized to root-computes' mean makespan in the same (send, compute)
 *  cell", or to the first policy's, saying why. */
static void
reference_note (const study_t *st, char *buf, size_t len)
{
    const study_params_t *p = st->params;
    const char *ref = p->policy[study_reference (p)];
    snprintf (buf, len, "normalized = mean makespan / %s' mean makespan in the same "
              "(send, compute) cell%s", ref,
              strcmp (ref, STUDY_REFERENCE_POLICY)
                  ? " (" STUDY_REFERENCE_POLICY " is not in --policies: the first "
                    "policy instead)" : "");
}

static int
table_txt (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    const study_params_t *p = st->params;
    char note[256], span[32], norm[32], eff[32];
    int unreliable = 0, ncells = study_run_count (p) / p->repeat;
    reference_note (st, note, sizeof note);
    fprintf (file, "%s: %llu tasks per run, time scale %g, %d run%s per cell\n%s\n\n",
             st->name, (unsigned long long) p->tasks, p->time_scale, p->repeat,
             p->repeat > 1 ? "s" : "", note);
    fprintf (file, "%8s %8s  %-14s %5s %12s %11s %11s\n", "send_MB", "units", "policy",
             "runs", "makespan_s", "normalized", "efficiency");
    for (int i = 0; i < ncells; i++) {
        const study_cell_t *c = &st->cells[i];
        const study_run_t *r = &st->runs[i * p->repeat];
        snprintf (span, sizeof span, isfinite (c->makespan_s) ? "%.2f" : "-",
                  c->makespan_s);
        snprintf (norm, sizeof norm, isfinite (c->normalized) ? "%.3f" : "-",
                  c->normalized);
        snprintf (eff, sizeof eff, isfinite (c->efficiency) ? "%.1f%%" : "-",
                  100 * c->efficiency);
        int flag = c->complete && !c->reliable;
        unreliable += flag;
        fprintf (file, "%8g %8g  %-14s %2d/%-2d %12s %11s %10s%s\n", p->send[r->send],
                 p->compute[r->compute], p->policy[r->policy], c->complete, c->runs, span,
                 norm, eff, flag ? "!" : " ");
    }
    if (unreliable)
        fprintf (file, "\n! efficiency UNRELIABLE: a run of the cell fell behind the "
                 "emulated clock\n  (fidelity < %.2f); lower --time-scale "
                 "(docs/study/README.md)\n", RESULTS_FIDELITY_MIN);
    return 0;
}

static json_t *
cell_json (const study_t *st, int i)
{
    const study_params_t *p = st->params;
    const study_cell_t *c = &st->cells[i];
    const study_run_t *r = &st->runs[i * p->repeat];
    json_t *o = json_pack ("{s:f, s:f, s:s, s:i, s:i}", "send_mb", p->send[r->send],
                           "units", p->compute[r->compute], "policy",
                           p->policy[r->policy],
                           "runs", c->runs, "complete", c->complete);
    json_object_set_new (o, "makespan_s", number (c->makespan_s));
    json_object_set_new (o, "normalized", number (c->normalized));
    json_object_set_new (o, "efficiency", number (c->efficiency));
    json_object_set_new (o, "efficiency_min", number (c->eff_min));
    json_object_set_new (o, "efficiency_max", number (c->eff_max));
    json_object_set_new (o, "efficiency_reliable",
                         c->complete ? json_boolean (c->reliable) : json_null ());
    return o;
}

static int
summary_json (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    const study_params_t *p = st->params;
    int n = study_run_count (p), count[3] = {0, 0, 0};
    for (int i = 0; i < n; i++)
        count[st->runs[i].status]++;
    char note[256];
    reference_note (st, note, sizeof note);
    json_t *cells = json_array ();
    for (int i = 0; i < n / p->repeat; i++)
        json_array_append_new (cells, cell_json (st, i));
    json_t *o = json_pack ("{s:s, s:I, s:f, s:i, s:s, s:s, s:{s:i, s:i, s:i, s:i}, s:o}",
                           "experiment", st->name, "tasks", (json_int_t) p->tasks,
                           "time_scale", p->time_scale, "repeat", p->repeat,
                           "normalized_to", p->policy[study_reference (p)], "note", note,
                           "runs", "total", n, "complete", count[STUDY_RUN_COMPLETE],
                           "failed", count[STUDY_RUN_FAILED], "pending",
                           count[STUDY_RUN_PENDING], "cells", cells);
    int rc = json_dumpf (o, file, JSON_INDENT (2)) || fputc ('\n', file) < 0;
    json_decref (o);
    return rc;
}

int
study_out_write_data (const study_t *st, char *err, size_t errlen)
{
    if (write_file (st, "runs.csv", runs_csv, NULL, err, errlen) != 0
        || write_file (st, "runs.json", runs_json, NULL, err, errlen) != 0
        || write_file (st, "table.txt", table_txt, NULL, err, errlen) != 0
        || write_file (st, "summary.json", summary_json, NULL, err, errlen) != 0)
        return -1;
    return 0;
}

/* ------------------------------------------------------------------------
 *  Plots and index.html.
 */

/*  Colours of the bars, one per policy (or send size), cycled: distinct
 *  on screen and in grey. */
static const char *const plot_colors[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                          "#66a61e", "#e6ab02", "#a6761d", "#666666"};
#define PLOT_NCOLORS ((int) (sizeof plot_colors / sizeof plot_colors[0]))

/*  The canvas width for groups of bars per group. */
static int
plot_width (int groups, int bars)
{
    int w = PLOT_KEY_WIDTH + 100 + groups * (bars * PLOT_BAR_WIDTH + PLOT_GROUP_GAP);
    return w < PLOT_MIN_WIDTH ? PLOT_MIN_WIDTH : w;
}

/*  What every bar chart's script starts with. */
static void
plot_preamble (FILE *file, const char *base, int width, const char *title,
               const char *xlabel, const char *ylabel)
{
    fprintf (file, "# treefarm bench: drawn in this directory with\n"
             "#   gnuplot -e \"set terminal png size %d,%d; set output '%s.png'\" %s.gp\n"
             "set title \"%s\" noenhanced\nset xlabel \"%s\"\nset ylabel \"%s\"\n"
             "set style data histograms\nset style fill solid 0.9 border -1\n"
             "set datafile missing \"?\"\nset key outside right top vertical Left "
             "reverse noenhanced\nset grid ytics\n"
             "set xtics nomirror noenhanced\n", width,
             PLOT_HEIGHT, base, base, title, xlabel, ylabel);
}

/*  normalized-ZMB.dat: a row per compute size, a column per policy. */
static int
normalized_dat (const study_t *st, const void *arg, FILE *file)
{
    const study_params_t *p = st->params;
    int s = *(const int *) arg;
    fprintf (file, "units");
    for (int k = 0; k < p->npolicy; k++)
        fprintf (file, " %s", p->policy[k]);
    for (int c = 0; c < p->ncompute; c++) {
        fprintf (file, "\n%g", p->compute[c]);
        for (int k = 0; k < p->npolicy; k++) {
            double v = st->cells[study_run_index (p, s, c, k, 1) / p->repeat].normalized;
            fprintf (file, isfinite (v) ? " %.6g" : " ?", v);
        }
    }
    fprintf (file, "\n");
    return 0;
}

static int
normalized_gp (const study_t *st, const void *arg, FILE *file)
{
    const study_params_t *p = st->params;
    int s = *(const int *) arg;
    char base[64], title[160], ylabel[96];
    snprintf (base, sizeof base, "normalized-%gMB", p->send[s]);
    snprintf (title, sizeof title, "%s: execution time normalized to %s, send %g MB",
              st->name, p->policy[study_reference (p)], p->send[s]);
    snprintf (ylabel, sizeof ylabel, "makespan / %s' makespan",
              p->policy[study_reference (p)]);
    plot_preamble (file, base, plot_width (p->ncompute, p->npolicy), title,
                   "compute size (units per task)", ylabel);
    fprintf (file, "set style histogram clustered gap 1\nset yrange [0:*]\nplot ");
    for (int k = 0; k < p->npolicy; k++)
        fprintf (file, "'%s.dat' using %d:xtic(1) title columnheader(%d) lc rgb \"%s\", "
                 "\\\n     ", base, k + 2, k + 2, plot_colors[k % PLOT_NCOLORS]);
    fprintf (file, "1 with lines dt 2 lw 2 lc rgb \"black\" title \"%s = 1\"\n",
             p->policy[study_reference (p)]);
    return 0;
}

/*  Over the cells of policy k and send size s: the mean efficiency of
 *  the cells, and the lowest and highest of their runs', in %. */
static void
efficiency_of (const study_t *st, int s, int k, double *mean, double *lo, double *hi)
{
    const study_params_t *p = st->params;
    double sum = 0;
    int n = 0;
    *lo = *hi = NAN;
    for (int c = 0; c < p->ncompute; c++) {
        int i = study_run_index (p, s, c, k, 1) / p->repeat;
        const study_cell_t *cell = &st->cells[i];
        if (!cell->complete)
            continue;
        sum += cell->efficiency;
        n++;
        *lo = isnan (*lo) ? cell->eff_min : fmin (*lo, cell->eff_min);
        *hi = isnan (*hi) ? cell->eff_max : fmax (*hi, cell->eff_max);
    }
    *mean = n ? 100 * sum / n : NAN;
    *lo *= 100;
    *hi *= 100;
}

/*  efficiency.dat: a row per policy, per send size mean, low, high (%). */
static int
efficiency_dat (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    const study_params_t *p = st->params;
    fprintf (file, "# policy, then per send size: mean, lowest, highest efficiency %%");
    for (int k = 0; k < p->npolicy; k++) {
        fprintf (file, "\n%s", p->policy[k]);
        for (int s = 0; s < p->nsend; s++) {
            double mean, lo, hi;
            efficiency_of (st, s, k, &mean, &lo, &hi);
            if (isfinite (mean))
                fprintf (file, " %.4f %.4f %.4f", mean, lo, hi);
            else
                fprintf (file, " ? ? ?");
        }
    }
    fprintf (file, "\n");
    return 0;
}

static int
efficiency_gp (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    const study_params_t *p = st->params;
    char title[160];
    snprintf (title, sizeof title, "%s: efficiency = throughput / bound of the policy's "
              "port model\\nbars: mean over compute sizes; whiskers: lowest to "
              "highest run",
              st->name);
    plot_preamble (file, "efficiency", plot_width (p->npolicy, p->nsend), title, "policy",
                   "efficiency (%)");
    /*  Policy names are longer than a group is wide: rotated, they end at
     *  their tick. The bound's line at 100 stays inside the frame. */
    fprintf (file, "set style histogram errorbars gap 1 lw 1\nset xtics rotate by 30 "
             "right\nset yrange [0:115]\nplot ");
    for (int s = 0; s < p->nsend; s++)
        fprintf (file, "'efficiency.dat' using %d:%d:%d:xtic(1) title \"send %g MB\" "
                 "lc rgb \"%s\", \\\n     ", 2 + 3 * s, 3 + 3 * s, 4 + 3 * s, p->send[s],
                 plot_colors[s % PLOT_NCOLORS]);
    fprintf (file, "100 with lines dt 2 lw 2 lc rgb \"black\" title \"bound\"\n");
    return 0;
}

/*  Draw DIR/base.gp into base.png and base.svg, width x PLOT_HEIGHT, with
 *  gnuplot run in DIR. Returns 0, or -1 with gnuplot's first complaint. */
static int
plot_draw (const study_t *st, const char *base, int width, char *err, size_t errlen)
{
    static const char *const terminals[] = {"png", "svg"};
    char *script = xasprintf ("%s.gp", base);
    int rc = 0;
    for (int t = 0; t < 2 && rc == 0; t++) {
        char *out = xasprintf ("%s.%s", base, terminals[t]);
        rc = gnuplot_draw (st->dir, script, terminals[t], width, PLOT_HEIGHT, out, err,
                           errlen);
        free (out);
    }
    free (script);
    return rc;
}

/*  text with &, <, > and " escaped for HTML. */
static void
html_text (FILE *file, const char *text)
{
    for (const char *c = text; *c; c++)
        if (*c == '&')
            fputs ("&amp;", file);
        else if (*c == '<')
            fputs ("&lt;", file);
        else if (*c == '>')
            fputs ("&gt;", file);
        else if (*c == '"')
            fputs ("&quot;", file);
        else
            fputc (*c, file);
}

/*  One figure: the PNG, a link to the SVG. */
static void
html_figure (FILE *file, const char *base, const char *caption)
{
    fprintf (file, "<figure><img src=\"%s.png\" alt=\"", base);
    html_text (file, caption);
    fprintf (file, "\"><figcaption>");
    html_text (file, caption);
    fprintf (file, " (<a href=\"%s.svg\">SVG</a>, <a href=\"%s.dat\">data</a>, "
             "<a href=\"%s.gp\">script</a>)</figcaption></figure>\n", base, base, base);
}

/*  The cells as an HTML table, as table.txt has them. */
static void
html_table (const study_t *st, FILE *file)
{
    const study_params_t *p = st->params;
    fprintf (file, "<table>\n<tr><th>send MB</th><th>units</th><th class=l>policy</th>"
             "<th>runs</th><th>makespan s</th><th>normalized</th><th>efficiency</th>"
             "</tr>\n");
    for (int i = 0; i < study_run_count (p) / p->repeat; i++) {
        const study_cell_t *c = &st->cells[i];
        const study_run_t *r = &st->runs[i * p->repeat];
        int flag = c->complete && !c->reliable;
        fprintf (file, "<tr%s><td>%g</td><td>%g</td><td class=l>%s</td><td>%d/%d</td>",
                 r->policy == 0 ? " class=first" : "", p->send[r->send],
                 p->compute[r->compute], p->policy[r->policy], c->complete, c->runs);
        fprintf (file, isfinite (c->makespan_s) ? "<td>%.2f</td>" : "<td>-</td>",
                 c->makespan_s);
        fprintf (file, isfinite (c->normalized) ? "<td>%.3f</td>" : "<td>-</td>",
                 c->normalized);
        fprintf (file, isfinite (c->efficiency) ? "<td>%.1f%%" : "<td>-",
                 100 * c->efficiency);
        fprintf (file, "%s</td></tr>\n", flag ? " <b title=\"unreliable: fidelity "
                 "low\">!</b>" : "");
    }
    fprintf (file, "</table>\n");
}

static int
index_html (const study_t *st, const void *arg, FILE *file)
{
    (void) arg;
    const study_params_t *p = st->params;
    char note[256], base[64], caption[160];
    reference_note (st, note, sizeof note);
    fprintf (file, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>");
    html_text (file, st->name);
    fprintf (file, " study</title>\n<style>body{font-family:sans-serif;margin:2em;"
             "max-width:80em} table{border-collapse:collapse} td,th{padding:2px 10px;"
             "text-align:right} .l{text-align:left} tr.first td{border-top:1px solid "
             "#999} figure{margin:1em 0} img{max-width:100%%}</style></head>\n<body>\n"
             "<h1>");
    html_text (file, st->name);
    fprintf (file, ": policy study</h1>\n<p>%llu tasks per run, time scale %g, %d run%s "
             "per cell. ", (unsigned long long) p->tasks, p->time_scale, p->repeat,
             p->repeat > 1 ? "s" : "");
    html_text (file, note);
    fprintf (file, ". <b>!</b>: efficiency unreliable (a run fell behind the emulated "
             "clock: fidelity &lt; %.2f).</p>\n", RESULTS_FIDELITY_MIN);
    for (int s = 0; s < p->nsend; s++) {
        snprintf (base, sizeof base, "normalized-%gMB", p->send[s]);
        snprintf (caption, sizeof caption, "Normalized execution time, send %g MB",
                  p->send[s]);
        html_figure (file, base, caption);
    }
    html_figure (file, "efficiency", "Efficiency per policy");
    html_table (st, file);
    fprintf (file, "<p>Files: <a href=\"table.txt\">table.txt</a>, <a href=\"runs.csv\">"
             "runs.csv</a>, <a href=\"runs.json\">runs.json</a>, "
             "<a href=\"summary.json\">summary.json</a>, <a href=\"study.json\">"
             "study.json</a>, runs/ (each run's results.json).</p>\n</body></html>\n");
    return 0;
}

int
study_out_write_plots (const study_t *st, char *err, size_t errlen)
{
    const study_params_t *p = st->params;
    char name[96];
    for (int s = 0; s < p->nsend; s++) {
        char base[64];
        snprintf (base, sizeof base, "normalized-%gMB", p->send[s]);
        snprintf (name, sizeof name, "%s.dat", base);
        if (write_file (st, name, normalized_dat, &s, err, errlen) != 0)
            return -1;
        snprintf (name, sizeof name, "%s.gp", base);
        if (write_file (st, name, normalized_gp, &s, err, errlen) != 0
            || plot_draw (st, base, plot_width (p->ncompute, p->npolicy), err, errlen))
            return -1;
    }
    if (write_file (st, "efficiency.dat", efficiency_dat, NULL, err, errlen) != 0
        || write_file (st, "efficiency.gp", efficiency_gp, NULL, err, errlen) != 0
        || plot_draw (st, "efficiency", plot_width (p->npolicy, p->nsend), err, errlen))
        return -1;
    return write_file (st, "index.html", index_html, NULL, err, errlen);
}
