/*  calib — the 3-point calibration plan and its arithmetic. See calib.h. */
#include "controller/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    int *phase_of;           /* node -> its edge's phase (root: -1) */
    char **names;            /* phase descriptions */
    reply_t *replies;        /* nphases x nnodes */
    calib_node_t *nodes;
};

static reply_t *
reply (const calib_t *self, int phase, int node)
{
    return &self->replies[phase * self->cfg->nnodes + node];
}

calib_t *
calib_new (const config_t *cfg, double seconds, double warmup)
{
    calib_t *self = xcalloc (1, sizeof *self);
    self->cfg = cfg;
    self->seconds = seconds;
    self->warmup = warmup;
    self->nphases = cfg->nnodes;   /* phase 0 + one per non-root node */
    self->edge = xcalloc (self->nphases, sizeof *self->edge);
    self->phase_of = xcalloc (cfg->nnodes, sizeof *self->phase_of);
    self->names = xcalloc (self->nphases, sizeof *self->names);
    self->edge[0] = -1;
    self->names[0] = xstrdup ("no transfers");
    int p = 1;
    for (int i = 0; i < cfg->nnodes; i++) {
        const config_node_t *n = &cfg->nodes[i];
        self->phase_of[i] = -1;
        if (n->parent < 0)
            continue;
        const config_node_t *up = &cfg->nodes[n->parent];
        self->edge[p] = i;
        self->phase_of[i] = p;
        self->names[p] = up->parent >= 0
                             ? xasprintf ("%s -> %s (%s receiving)", up->name, n->name,
                                          up->name)
                             : xasprintf ("%s -> %s", up->name, n->name);
        p++;
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
    for (int i = 0; i < cfg->nnodes; i++) {
        calib_node_t *m = &self->nodes[i];
        int p = self->phase_of[i];
        if (p < 0)
            continue;
        int up = cfg->nodes[i].parent;
        const reply_t *r = reply (self, p, up);
        const calib_node_t *pm = &self->nodes[up];
        m->sr = r->send[slot_of (cfg, i)];
        m->rr = cfg->nodes[up].parent >= 0 ? r->recv : 0;
        m->c_sr = r->units;
        if (!(m->sr > 0))
            return tf_error (err, errlen, "node %s sent nothing to %s (phase %s)",
                             cfg->nodes[up].name, cfg->nodes[i].name, self->names[p]);
        m->ir_s = (1 - pm->ir_r * m->rr - m->c_sr / pm->c) / m->sr;
    }
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
    fprintf (out, "  %-*s  %17s  %8s  %8s  %17s  %8s  %8s  %8s  %17s\n", w, "node",
             "C", "MR", "C_r", "IR_r", "SR", "RR", "C_sr", "IR_s");
    for (int i = 0; i < cfg->nnodes; i++) {
        const config_node_t *n = &cfg->nodes[i];
        const calib_node_t *m = &self->nodes[i];
        fprintf (out, "  %*s%-*s  %8.3f (%6.2f)", 2 * n->depth, "", w - 2 * n->depth,
                 n->name, m->c, n->compute_rate);
        if (n->parent < 0) {
            fprintf (out, "\n");
            continue;
        }
        fprintf (out, "  %8.3f  %8.3f  %8.4f (%6.4f)  %8.3f  %8.3f  %8.3f  %8.4f (%6.4f)\n",
                 m->mr, m->c_r, m->ir_r, n->ir_recv, m->sr, m->rr, m->c_sr, m->ir_s,
                 n->ir_send);
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
        m->clamped = m->ir_r < 0 || m->ir_s < 0;
        n->ir_recv = m->ir_r > 0 ? m->ir_r : 0;
        n->ir_send = m->ir_s > 0 ? m->ir_s : 0;
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
            json_object_update (o, more);
            json_decref (more);
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
        json_array_append_new (phases, json_pack ("{s:i, s:s, s:o}", "phase", p, "what",
                                                  self->names[p], "nodes", rows));
    }
    return json_pack ("{s:s, s:f, s:f, s:o, s:o}", "experiment", cfg->name, "seconds",
                      self->seconds, "warmup", self->warmup, "nodes", nodes, "phases",
                      phases);
}

/*  One gnuplot run writing out, with the terminal given. */
static int
plot_with (const char *gp, const char *terminal, const char *out, char *err,
           size_t errlen)
{
    char *cmd = xasprintf ("gnuplot -e \"set terminal %s size 800,560; set output '%s'\" "
                           "'%s' 2>&1", terminal, out, gp);
    FILE *pipe = popen (cmd, "r");
    free (cmd);
    if (!pipe)
        return tf_error (err, errlen, "cannot run gnuplot");
    char line[256], first[256] = "";
    while (fgets (line, sizeof line, pipe))
        if (!first[0])
            snprintf (first, sizeof first, "%s", line);
    int status = pclose (pipe);
    if (status != 0)
        return tf_error (err, errlen, "gnuplot failed for %s%s%s", out, first[0] ? ": " : "",
                         first);
    return 0;
}

int
calib_plot (const calib_t *self, int node, const char *dir, char *err,
              size_t errlen)
{
    const config_t *cfg = self->cfg;
    const config_node_t *n = &cfg->nodes[node];
    const calib_node_t *m = &self->nodes[node];
    char *dat = xasprintf ("%s/interference-%s.dat", dir, n->name);
    char *gp = xasprintf ("%s/interference-%s.gp", dir, n->name);
    char *png = xasprintf ("%s/interference-%s.png", dir, n->name);
    char *svg = xasprintf ("%s/interference-%s.svg", dir, n->name);
    int rc = -1;
    double xmax = 0;
    FILE *f = fopen (dat, "w");
    if (!f) {
        tf_error (err, errlen, "cannot write %s", dat);
        goto out;
    }
    /*  x, normalized rate, label */
    fprintf (f, "# transfer MB/s, compute rate / C, phase\n0 1 \"no transfers\"\n");
    if (n->parent >= 0) {
        fprintf (f, "%.9g %.9g \"receiving\"\n", m->mr, m->c_r / m->c);
        xmax = m->mr;
    }
    for (int c = 0; c < n->nchildren; c++) {
        const calib_node_t *k = &self->nodes[n->children[c]];
        fprintf (f, "%.9g %.9g \"to %s\"\n", k->sr, k->c_sr / m->c,
                 cfg->nodes[n->children[c]].name);
        xmax = k->sr > xmax ? k->sr : xmax;
    }
    fclose (f);
    f = fopen (gp, "w");
    if (!f) {
        tf_error (err, errlen, "cannot write %s", gp);
        goto out;
    }
    fprintf (f, "set title \"%s: compute rate while transferring (C = %.3f units/s)\"\n"
             "set xlabel \"transfer rate (MB/s)\"\nset ylabel \"compute rate / C\"\n"
             "set key outside right\nset grid\nset xrange [0:%.9g]\n"
             "set yrange [*:1.05]\n", n->name, m->c, xmax > 0 ? 1.15 * xmax : 1);
    fprintf (f, "plot '%s' using 1:2 with points pointtype 7 pointsize 1.5 title "
             "\"measured\", '' using 1:2:3 with labels offset 0,1 notitle", dat);
    if (n->parent >= 0)
        fprintf (f, ", 1 - %.9g * x title \"receiving: IR_r = %.4f\"", m->ir_r, m->ir_r);
    for (int c = 0; c < n->nchildren; c++) {
        const calib_node_t *k = &self->nodes[n->children[c]];
        fprintf (f, ", (x <= %.9g ? 1 - %.9g - %.9g * x : 1/0) title \"to %s: IR_s = "
                 "%.4f\"", 1.15 * k->sr, m->ir_r * k->rr, k->ir_s,
                 cfg->nodes[n->children[c]].name, k->ir_s);
    }
    fprintf (f, "\n");
    fclose (f);
    if (plot_with (gp, "png", png, err, errlen) == 0
        && plot_with (gp, "svg", svg, err, errlen) == 0)
        rc = 0;
out:
    free (dat);
    free (gp);
    free (png);
    free (svg);
    return rc;
}
