/*  calib — the 3-point calibration plan and its arithmetic. See calib.h. */
#include "controller/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/gnuplot.h"
#include "overlay/util.h"

/*  One node's reply in one phase. */
typedef struct {
    int got;
    double units, recv;
    double *send;            /* per child slot */
} reply_t;

struct calib {
    const config_t *cfg;
    double seconds, warmup;  /* platform seconds */
    int nphases;
    int *edge;               /* phase -> child node index (phase 0: -1) */
    int *idle;               /* phase -> 1 if its child is held idle */
    int *phase_of;           /* node -> its edge's phase (root: -1); its
                                idle phase is the next one */
    char **names;            /* phase descriptions */
    reply_t *replies;        /* nphases x nnodes */
    calib_node_t *nodes;
};

static reply_t *
reply (const calib_t *self, int phase, int node)
{
    return &self->replies[phase * self->cfg->nnodes + node];
}

/*  Plan edge child's two phases from phase p: both computing, then the
 *  child idle. Its idle phase comes right after, so the two points it
 *  compares are measured minutes apart at most, under the same load. */
static void
plan_edge (calib_t *self, int child, int p)
{
    const config_node_t *n = &self->cfg->nodes[child];
    const config_node_t *up = &self->cfg->nodes[n->parent];
    char *what = up->parent >= 0
                     ? xasprintf ("%s -> %s (%s receiving)", up->name, n->name, up->name)
                     : xasprintf ("%s -> %s", up->name, n->name);
    self->edge[p] = self->edge[p + 1] = child;
    self->idle[p + 1] = 1;
    self->phase_of[child] = p;
    self->names[p] = what;
    self->names[p + 1] = xasprintf ("%s, %s idle", what, n->name);
}

calib_t *
calib_new (const config_t *cfg, double seconds, double warmup)
{
    calib_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->seconds = seconds;
    self->warmup = warmup;
    self->nphases = 2 * cfg->nnodes - 1;   /* phase 0 + two per non-root node */
    self->edge = xcalloc (self->nphases, sizeof *self->edge);
    self->idle = xcalloc (self->nphases, sizeof *self->idle);
    self->phase_of = xcalloc (cfg->nnodes, sizeof *self->phase_of);
    self->names = xcalloc (self->nphases, sizeof *self->names);
    self->edge[0] = -1;
    self->names[0] = xstrdup ("no transfers");
    int p = 1;
    for (int i = 0; i < cfg->nnodes; i++) {
        self->phase_of[i] = -1;
        if (cfg->nodes[i].parent < 0)
            continue;
        plan_edge (self, i, p);
        p += 2;
    }
    self->replies = xcalloc (self->nphases * cfg->nnodes, sizeof *self->replies);
    for (int i = 0; i < self->nphases * cfg->nnodes; i++)
        self->replies[i].send = xcalloc (cfg->nodes[i % cfg->nnodes].nchildren + 1,
                                         sizeof (double));
    self->nodes = xcalloc (cfg->nnodes, sizeof *self->nodes);
    return self;
}

void
calib_destroy (calib_t **self_p)
{
    calib_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->nphases * self->cfg->nnodes; i++)
        free (self->replies[i].send);
    for (int p = 0; p < self->nphases; p++)
        free (self->names[p]);
    free (self->replies);
    free (self->names);
    free (self->edge);
    free (self->idle);
    free (self->phase_of);
    free (self->nodes);
    free (self);
    *self_p = NULL;
}

int
calib_phases (const calib_t *self)
{
    return self->nphases;
}

const char *
calib_phase_str (const calib_t *self, int phase)
{
    return phase >= 0 && phase < self->nphases ? self->names[phase] : "?";
}

calib_request_t
calib_request (const calib_t *self, int phase, int node)
{
    const config_t *cfg = self->cfg;
    double scale = cfg->platform.time_scale;
    calib_request_t r = {.phase = (uint32_t) phase, .seconds = self->seconds / scale,
                         .warmup = self->warmup / scale};
    int child = self->edge[phase];
    if (child >= 0) {
        int sender = cfg->nodes[child].parent;
        if (node == sender)
            r.streams[r.nstreams++] = cfg->nodes[child].name;
        /*  The sender's parent keeps the sender receiving meanwhile. */
        if (cfg->nodes[sender].parent == node)
            r.streams[r.nstreams++] = cfg->nodes[sender].name;
        r.idle = self->idle[phase] && node == child;
    }
    return r;
}

int
calib_record (calib_t *self, int node, int phase, double units_per_s,
                double recv_mbps, const json_t *send_mbps, char *err, size_t errlen)
{
    const config_node_t *n = &self->cfg->nodes[node];
    if (phase < 0 || phase >= self->nphases)
        return tf_error (err, errlen, "MEASURED for phase %d of %d", phase, self->nphases);
    reply_t *r = reply (self, phase, node);
    if (r->got)
        return tf_error (err, errlen, "a second MEASURED for phase %d", phase);
    for (int c = 0; c < n->nchildren; c++) {
        json_t *v = json_object_get (send_mbps, self->cfg->nodes[n->children[c]].name);
        if (!json_is_number (v))
            return tf_error (err, errlen, "MEASURED has no send rate to child %s",
                             self->cfg->nodes[n->children[c]].name);
        r->send[c] = json_number_value (v);
    }
    r->got = 1;
    r->units = units_per_s;
    r->recv = recv_mbps;
    return 0;
}

int
calib_phase_done (const calib_t *self, int phase)
{
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (!reply (self, phase, i)->got)
            return 0;
    return 1;
}

/*  The slot of child among its parent's children. */
static int
slot_of (const config_t *cfg, int child)
{
    const config_node_t *up = &cfg->nodes[cfg->nodes[child].parent];
    for (int c = 0; c < up->nchildren; c++)
        if (up->children[c] == child)
            return c;
    return -1;
}

/*  The sender's side of phase p for the edge to child: SR, RR and C_sr
 *  of the parent there, and IR_s by the formula (calib.h), into *sr,
 *  *rr, *c_sr and *ir_s. The parent's C and IR_r must be known. Returns
 *  0, or -1 with a message if the parent sent nothing. */
static int
sender_side (const calib_t *self, int child, int p, double *sr, double *rr, double *c_sr,
             double *ir_s, char *err, size_t errlen)
{
    const config_t *cfg = self->cfg;
    int up = cfg->nodes[child].parent;
    const reply_t *r = reply (self, p, up);
    const calib_node_t *pm = &self->nodes[up];
    *sr = r->send[slot_of (cfg, child)];
    *rr = cfg->nodes[up].parent >= 0 ? r->recv : 0;
    *c_sr = r->units;
    if (!(*sr > 0))
        return tf_error (err, errlen, "node %s sent nothing to %s (phase %s)",
                         cfg->nodes[up].name, cfg->nodes[child].name, self->names[p]);
    *ir_s = (1 - pm->ir_r * *rr - *c_sr / pm->c) / *sr;
    return 0;
}

/*  IR_s and IR_s alone of the edge to child i, from its two phases. */
static int
compute_send (calib_t *self, int i, char *err, size_t errlen)
{
    calib_node_t *m = &self->nodes[i];
    int p = self->phase_of[i];
    if (sender_side (self, i, p, &m->sr, &m->rr, &m->c_sr, &m->ir_s, err, errlen) != 0)
        return -1;
    m->c_idle = reply (self, p + 1, i)->units;
    if (m->c_idle > CALIB_IDLE_SHARE * m->c)
        return tf_error (err, errlen, "node %s computed %.4g units/s in its idle phase "
                         "(phase %s), not at most %g%% of its C", self->cfg->nodes[i].name,
                         m->c_idle, self->names[p + 1], 100 * CALIB_IDLE_SHARE);
    return sender_side (self, i, p + 1, &m->sr_alone, &m->rr_alone, &m->c_sr_alone,
                        &m->ir_s_alone, err, errlen);
}

int
calib_compute (calib_t *self, char *err, size_t errlen)
{
    const config_t *cfg = self->cfg;
    for (int i = 0; i < cfg->nnodes; i++) {
        calib_node_t *m = &self->nodes[i];
        m->c = reply (self, 0, i)->units;
        if (!(m->c > 0))
            return tf_error (err, errlen, "node %s computed nothing with no transfers",
                             cfg->nodes[i].name);
    }
    /*  IR_r first: IR_s at a node needs that node's IR_r. */
    for (int i = 0; i < cfg->nnodes; i++) {
        calib_node_t *m = &self->nodes[i];
        int p = self->phase_of[i];
        if (p < 0)
            continue;
        m->mr = reply (self, p, i)->recv;
        m->c_r = reply (self, p, i)->units;
        if (!(m->mr > 0))
            return tf_error (err, errlen, "node %s received nothing from its parent "
                             "(phase %s)", cfg->nodes[i].name, self->names[p]);
        m->ir_r = (m->c - m->c_r) / m->c / m->mr;
    }
    for (int i = 0; i < cfg->nnodes; i++)
        if (self->phase_of[i] >= 0 && compute_send (self, i, err, errlen) != 0)
            return -1;
    return 0;
}

const calib_node_t *
calib_node (const calib_t *self, int node)
{
    return &self->nodes[node];
}

void
calib_print (const calib_t *self, FILE *out)
{
    const config_t *cfg = self->cfg;
    int w = 4;
    for (int i = 0; i < cfg->nnodes; i++) {
        int len = (int) strlen (cfg->nodes[i].name) + 2 * cfg->nodes[i].depth;
        w = len > w ? len : w;
    }
    fprintf (out, "calibration of %s: %d phases of %g platform s (first %g s not "
             "measured)\n", cfg->name, self->nphases, self->seconds, self->warmup);
    fprintf (out, "units: C in units/s; MR, SR, RR in MB/s; IR in fraction per MB/s; "
             "(configured) beside\n");
    fprintf (out, "  %-*s  %17s  %8s  %8s  %17s  %8s  %8s  %8s  %17s  %17s\n", w, "node",
             "C", "MR", "C_r", "IR_r", "SR", "RR", "C_sr", "IR_s", "IR_s alone");
    for (int i = 0; i < cfg->nnodes; i++) {
        const config_node_t *n = &cfg->nodes[i];
        const calib_node_t *m = &self->nodes[i];
        fprintf (out, "  %*s%-*s  %8.3f (%6.2f)", 2 * n->depth, "", w - 2 * n->depth,
                 n->name, m->c, n->compute_rate);
        if (n->parent < 0) {
            fprintf (out, "\n");
            continue;
        }
        fprintf (out, "  %8.3f  %8.3f  %8.4f (%6.4f)  %8.3f  %8.3f  %8.3f  %8.4f (%6.4f)",
                 m->mr, m->c_r, m->ir_r, n->ir_recv, m->sr, m->rr, m->c_sr, m->ir_s,
                 n->ir_send);
        /*  ir_send_alone is optional: NaN when the config has none. */
        if (n->ir_send_alone >= 0)
            fprintf (out, "  %8.4f (%6.4f)\n", m->ir_s_alone, n->ir_send_alone);
        else
            fprintf (out, "  %8.4f (%6s)\n", m->ir_s_alone, "-");
    }
}

char *
calib_platform_json (const calib_t *self)
{
    char err[TF_ERRLEN];
    char *text = config_to_json (self->cfg);
    config_t *copy = config_load_string (text, self->cfg->path, err, sizeof err);
    free (text);
    if (!copy)
        return NULL;
    for (int i = 0; i < copy->nnodes; i++) {
        config_node_t *n = &copy->nodes[i];
        calib_node_t *m = &self->nodes[i];
        n->compute_rate = m->c;
        if (n->parent < 0)
            continue;
        n->link_mbps = m->mr;
        m->clamped = m->ir_r < 0 || m->ir_s < 0 || m->ir_s_alone < 0;
        n->ir_recv = m->ir_r > 0 ? m->ir_r : 0;
        n->ir_send = m->ir_s > 0 ? m->ir_s : 0;
        n->ir_send_alone = m->ir_s_alone > 0 ? m->ir_s_alone : 0;
    }
    text = config_to_json (copy);
    config_destroy (&copy);
    return text;
}

json_t *
calib_to_json (const calib_t *self)
{
    const config_t *cfg = self->cfg;
    json_t *nodes = json_array (), *phases = json_array ();
    for (int i = 0; i < cfg->nnodes; i++) {
        const calib_node_t *m = &self->nodes[i];
        json_t *o = json_pack ("{s:s, s:f}", "name", cfg->nodes[i].name, "c", m->c);
        if (cfg->nodes[i].parent >= 0) {
            json_t *more = json_pack ("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "mr", m->mr,
                                      "c_r", m->c_r, "ir_r", m->ir_r, "sr", m->sr,
                                      "rr", m->rr, "c_sr", m->c_sr, "ir_s", m->ir_s);
            json_t *alone = json_pack ("{s:f, s:f, s:f, s:f, s:f}", "sr_alone", m->sr_alone,
                                       "rr_alone", m->rr_alone, "c_sr_alone",
                                       m->c_sr_alone, "ir_s_alone", m->ir_s_alone,
                                       "c_idle", m->c_idle);
            json_object_update (o, more);
            json_object_update (o, alone);
            json_decref (more);
            json_decref (alone);
        }
        json_array_append_new (nodes, o);
    }
    for (int p = 0; p < self->nphases; p++) {
        json_t *rows = json_array ();
        for (int i = 0; i < cfg->nnodes; i++) {
            const reply_t *r = reply (self, p, i);
            json_t *send = json_object ();
            for (int c = 0; c < cfg->nodes[i].nchildren; c++)
                json_object_set_new (send, cfg->nodes[cfg->nodes[i].children[c]].name,
                                     json_real (r->send[c]));
            json_array_append_new (rows, json_pack ("{s:s, s:f, s:f, s:o}", "node",
                                                    cfg->nodes[i].name, "units_per_s",
                                                    r->units, "recv_mbps", r->recv,
                                                    "send_mbps", send));
        }
        const char *idle = self->idle[p] ? cfg->nodes[self->edge[p]].name : NULL;
        json_array_append_new (phases, json_pack ("{s:i, s:s, s:s?, s:o}", "phase", p,
                                                  "what", self->names[p], "idle", idle,
                                                  "nodes", rows));
    }
    return json_pack ("{s:s, s:f, s:f, s:o, s:o}", "experiment", cfg->name, "seconds",
                      self->seconds, "warmup", self->warmup, "nodes", nodes, "phases",
                      phases);
}

/* ------------------------------------------------------------------------
 *  The plot. No label is drawn inside the plot area: a node's points sit
 *  close together (fork7's Lab3 and Lab6 coincide; "no transfers" and
 *  "to Tenn" nearly do), so labels there cover each other, the lines and
 *  the axis. Each phase has a colour and an open point shape of its own,
 *  shared with its model line, and one entry in the key outside the plot
 *  on the right, which reads as a table: the phase, the measured point,
 *  the IR. The canvas grows with the key, so the plot area keeps its size.
 */

/*  Canvas, in pixels of the png terminal (svg uses the same numbers).
 *  gnuplot shrinks the plot area to make room for the key outside it, and
 *  reserves for the key its own estimate of the longest entry, about 11
 *  pixels a character with the default fonts (the text takes 7). So the
 *  canvas is the y axis's label and tics, the plot area, the key's sample
 *  and padding, and its longest entry at that width: the plot area keeps
 *  its size whatever the names. The height is at least the minimum, and
 *  grows by a row per key entry beyond what the frame (title, x axis)
 *  leaves. */
#define PLOT_LEFT 90
#define PLOT_AREA_WIDTH 520
#define PLOT_KEY_PAD 60
#define PLOT_CHAR_WIDTH 11
#define PLOT_MIN_HEIGHT 560
#define PLOT_FRAME_HEIGHT 140
#define PLOT_ROW_HEIGHT 22
/*  The x axis and each model line run this far past the fastest (its own)
 *  measured rate, so the points are not on the border. */
#define PLOT_X_MARGIN 1.15

/*  Colour-blind-safe colours (Okabe-Ito without its yellow, which is lost
 *  on white, plus brown); black is the no-transfers point. */
static const char *const plot_colors[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                          "#e69f00", "#56b4e9", "#8c564b"};
/*  Open shapes, so points that coincide both show: square, triangles up and
 *  down, diamond, plus, cross (gnuplot's numbers, the same on the png and
 *  svg terminals). The open circle is the no-transfers point. */
static const int plot_points[] = {4, 8, 10, 12, 1, 2};
#define PLOT_NCOLORS (sizeof plot_colors / sizeof *plot_colors)
#define PLOT_NPOINTS (sizeof plot_points / sizeof *plot_points)
#define PLOT_POINT_NONE 6

/*  One phase of the plotted node: the measured point and the model line
 *  through it, y = y0 - slope x for 0 <= x <= xend (none for series 0). */
typedef struct {
    double x, y;             /* transfer MB/s, compute rate / C */
    double y0, slope, xend;
    char *what;              /* "no transfers", "receiving", "to NAME" */
    char *key;               /* the key entry, gnuplot enhanced text */
} plot_series_t;

/*  name for enhanced text inside double quotes: names are [A-Za-z0-9_.-],
 *  and "_" would make a subscript unless written "\\_". The caller
 *  frees. */
static char *
plot_name (const char *name)
{
    char *out = xcalloc (3 * strlen (name) + 1, 1), *o = out;
    for (const char *p = name; *p; p++) {
        if (*p == '_') {
            *o++ = '\\';
            *o++ = '\\';
        }
        *o++ = *p;
    }
    return out;
}

/*  The series of node: no transfers, receiving (non-root), then sending to
 *  each child in tree order. Sets *count; the caller frees with
 *  plot_series_free. */
static plot_series_t *
plot_series_new (const calib_t *self, int node, int *count)
{
    const config_node_t *n = &self->cfg->nodes[node];
    const calib_node_t *m = &self->nodes[node];
    plot_series_t *s = xcalloc (n->nchildren + 2, sizeof *s);
    int k = 0;
    s[k++] = (plot_series_t) {.x = 0, .y = 1, .what = xstrdup ("no transfers"),
                              .key = xasprintf ("no transfers: C = %.3f units/s", m->c)};
    if (n->parent >= 0)
        s[k++] = (plot_series_t) {
            .x = m->mr, .y = m->c_r / m->c, .y0 = 1, .slope = m->ir_r,
            .xend = PLOT_X_MARGIN * m->mr, .what = xstrdup ("receiving"),
            .key = xasprintf ("receiving (%.2f, %.3f): IR_r = %.4f", m->mr,
                              m->c_r / m->c, m->ir_r)};
    for (int c = 0; c < n->nchildren; c++) {
        const char *name = self->cfg->nodes[n->children[c]].name;
        const calib_node_t *q = &self->nodes[n->children[c]];
        char *label = plot_name (name);
        s[k++] = (plot_series_t) {
            .x = q->sr, .y = q->c_sr / m->c, .y0 = 1 - m->ir_r * q->rr, .slope = q->ir_s,
            .xend = PLOT_X_MARGIN * q->sr, .what = xasprintf ("to %s", name),
            .key = xasprintf ("to %s (%.2f, %.3f): IR_s = %.4f", label, q->sr,
                              q->c_sr / m->c, q->ir_s)};
        free (label);
    }
    *count = k;
    return s;
}

static void
plot_series_free (plot_series_t *s, int count)
{
    for (int i = 0; i < count; i++) {
        free (s[i].what);
        free (s[i].key);
    }
    free (s);
}

/*  The canvas for the series' key: width and height in pixels. */
static void
plot_size (const plot_series_t *s, int count, int *width, int *height)
{
    size_t longest = 0;
    for (int i = 0; i < count; i++)
        longest = strlen (s[i].key) > longest ? strlen (s[i].key) : longest;
    *width = PLOT_LEFT + PLOT_AREA_WIDTH + PLOT_KEY_PAD + PLOT_CHAR_WIDTH * (int) longest;
    *height = PLOT_FRAME_HEIGHT + PLOT_ROW_HEIGHT * count;
    *height = *height > PLOT_MIN_HEIGHT ? *height : PLOT_MIN_HEIGHT;
}

/*  The data: one row per series, x, y and what, in series order (row i
 *  is series i, which the script picks with `every ::i::i`). */
static void
plot_dat (FILE *f, const plot_series_t *s, int count)
{
    fprintf (f, "# transfer MB/s, compute rate / C, phase\n");
    for (int i = 0; i < count; i++)
        fprintf (f, "%.9g %.9g \"%s\"\n", s[i].x, s[i].y, s[i].what);
}

/*  The gnuplot script for a canvas width x height, reading dat: every
 *  series' point with its key entry, its model line in the same colour
 *  without one. The terminal and output are left to the command line
 *  (gnuplot_draw). */
static void
plot_gp (FILE *f, const char *dat, const char *title, const plot_series_t *s, int count,
         int width, int height)
{
    double xmax = 0;
    for (int i = 0; i < count; i++)
        xmax = s[i].x > xmax ? s[i].x : xmax;
    char *qdat = gnuplot_quote (dat);
    fprintf (f, "# treefarm measure: drawn with\n"
             "#   gnuplot -e \"set terminal png size %d,%d; set output 'OUT.png'\" "
             "THIS.gp\n", width, height);
    fprintf (f, "set title \"%s: compute rate while transferring\"\n"
             "set xlabel \"transfer rate (MB/s)\"\nset ylabel \"compute rate / C\"\n"
             "set key outside right top vertical Left reverse samplen 3 spacing 1.5\n"
             "set grid\nset xrange [0:%.9g]\nset yrange [*:1.05]\ndat = %s\n", title,
             xmax > 0 ? PLOT_X_MARGIN * xmax : 1, qdat);
    fprintf (f, "plot dat every ::0::0 using 1:2 with points pt %d ps 2 lw 2 lc rgb "
             "\"black\" title \"%s\"", PLOT_POINT_NONE, s[0].key);
    free (qdat);
    for (int i = 1; i < count; i++) {
        const char *color = plot_colors[(i - 1) % PLOT_NCOLORS];
        int point = plot_points[(i - 1) % PLOT_NPOINTS];
        fprintf (f, ", \\\n  dat every ::%d::%d using 1:2 with linespoints pt %d ps 2 "
                 "lw 2 lc rgb \"%s\" title \"%s\"", i, i, point, color, s[i].key);
        fprintf (f, ", \\\n  (x <= %.9g ? %.9g - %.9g * x : 1/0) with lines lw 2 "
                 "lc rgb \"%s\" notitle", s[i].xend, s[i].y0, s[i].slope, color);
    }
    fprintf (f, "\n");
}

void
calib_plot (const calib_t *self, int node, const char *dat, calib_plot_t *out)
{
    char *title = plot_name (self->cfg->nodes[node].name);
    int count;
    size_t len;
    plot_series_t *s = plot_series_new (self, node, &count);
    plot_size (s, count, &out->width, &out->height);
    FILE *f = open_memstream (&out->dat, &len);
    plot_dat (f, s, count);
    fclose (f);
    f = open_memstream (&out->gp, &len);
    plot_gp (f, dat, title, s, count, out->width, out->height);
    fclose (f);
    plot_series_free (s, count);
    free (title);
}

void
calib_plot_clear (calib_plot_t *plot)
{
    free (plot->dat);
    free (plot->gp);
    *plot = (calib_plot_t) {0};
}
