/*  calib — the 3-point calibration of docs/model.md, as a plan of phases
 *  and the arithmetic on what the nodes measured in them.
 *
 *  Every node computes in every phase, as in a run, but for the child of
 *  an idle phase. Phase 0 moves no data: each node's compute rate there
 *  is C. Then two phases per edge, parent p to child i (children in tree
 *  order), one after the other. In the first, p streams probes to i as
 *  fast as the link allows while, if p is not the root, p's parent
 *  streams to p. In it, i's receive rate is MR^i and its compute rate
 *  C_r^i; p's send rate is SR(i), its receive rate RR(i) and its compute
 *  rate C_sr(i). Then
 *      IR_r^i  = ((C^i - C_r^i) / C^i) / MR^i
 *      IR_s(i) = (1 - IR_r^p RR(i) - C_sr(i) / C^p) / SR(i)
 *  The second, i's idle phase, is the first again with i's engine held
 *  (it computes nothing): the same formula on p's figures there gives
 *  IR_s alone (i), the parent's loss of sending to i while only the
 *  parent computes (config's ir_send_alone). i's own compute rate there
 *  must be about 0, or the phase is refused.
 *  All rates are platform figures (units/s, MB/s), as the nodes report
 *  them. `treefarm measure` (controller/measure.c) sends each phase's
 *  MEASURE and feeds back the MEASURED replies; this module holds no
 *  socket.
 */
#ifndef TF_CALIB_H
#define TF_CALIB_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "overlay/config.h"

typedef struct calib calib_t;

/*  One node's calibrated parameters, platform terms. */
typedef struct {
    double c;                /* C: units/s, no communication */
    double mr, c_r;          /* non-root: MB/s from the parent; C meanwhile */
    double ir_r;             /* non-root: IR_r */
    double sr, rr, c_sr;     /* non-root: as seen by its parent (SR(i),
                                RR(i), C_sr(i) of the parent) */
    double ir_s;             /* non-root: IR_s at its parent of sending to it */
    double sr_alone, rr_alone, c_sr_alone;   /* non-root: the same three in
                                its idle phase */
    double ir_s_alone;       /* non-root: IR_s at its parent of sending to it
                                while it computes nothing */
    double c_idle;           /* non-root: its own compute rate in its idle
                                phase (0 when it honoured it) */
    int clamped;             /* a negative IR (noise) was written as 0 */
} calib_node_t;

/*  A plan for cfg with phases of `seconds` platform seconds, the first
 *  `warmup` of which are not measured (0 <= warmup < seconds). cfg is
 *  borrowed and must outlive the plan. */
calib_t *calib_new (const config_t *cfg, double seconds, double warmup);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void calib_destroy (calib_t **self_p);

/*  Number of phases: 1 + twice the number of edges. */
int calib_phases (const calib_t *self);

/*  "no transfers", or "Lab0 -> Lab3" (with "(Lab0 receiving)" where the
 *  sender's parent streams too, and ", Lab3 idle" in the child's idle
 *  phase), for progress lines. Borrowed. */
const char *calib_phase_str (const calib_t *self, int phase);

/*  What node must do in a phase (the MEASURE message's fields): stream
 *  probes to the children named, for the phase's wall seconds (platform
 *  seconds / time scale), measuring after the warm-up. A node streams to
 *  at most two children in a phase: the edge's child if it is the sender,
 *  the sender if it is the sender's parent. Names are borrowed from the
 *  config. */
typedef struct {
    uint32_t phase;
    double seconds, warmup;
    const char *streams[2];
    uint32_t nstreams;
    int idle;                /* the node computes nothing in the phase */
} calib_request_t;

calib_request_t calib_request (const calib_t *self, int phase, int node);

/*  Keep node's MEASURED reply (the body's fields, decoded). Returns 0, or
 *  -1 with a message if it is for another phase or a second reply. */
int calib_record (calib_t *self, int node, int phase, double units_per_s,
                    double recv_mbps, const json_t *send_mbps, char *err, size_t errlen);

/*  True when every node has replied for phase. */
int calib_phase_done (const calib_t *self, int phase);

/*  Apply the formulas. Returns 0, or -1 with a message naming the node if
 *  a rate needed is missing or zero (e.g. a link that moved nothing), or
 *  if a node computed in its idle phase (more than CALIB_IDLE_SHARE of
 *  its C). */
#define CALIB_IDLE_SHARE 0.01
int calib_compute (calib_t *self, char *err, size_t errlen);

/*  A node's result after calib_compute. */
const calib_node_t *calib_node (const calib_t *self, int node);

/*  Print the table: per node C, MR, C_r, IR_r, and for the link from its
 *  parent SR, RR, C_sr, IR_s and IR_s alone, beside the configured
 *  values ("-" for an ir_send_alone the config does not give). */
void calib_print (const calib_t *self, FILE *out);

/*  The measured platform as a config: the experiment as loaded, with each
 *  node's compute, link_mbps, ir_recv, ir_send and ir_send_alone replaced
 *  by the measured values (negative IR written as 0). Returns JSON text the caller frees,
 *  loadable by every command. */
char *calib_platform_json (const calib_t *self);

/*  node's calibration plot, as text: gnuplot's data and the script that
 *  draws it, and the canvas in pixels. */
typedef struct {
    char *dat;               /* one row per phase: x, y, "what" */
    char *gp;                /* the script; terminal and output left to the
                                command line (controller/gnuplot.h) */
    int width, height;
} calib_plot_t;

/*  The plot of node's calibration after calib_compute, into *out (freed
 *  with calib_plot_clear), the script reading its data from the file dat:
 *  normalized compute rate (rate / C) against transfer rate, one point per
 *  phase that moved its data, with the model's line through them
 *  (receiving: 1 - IR_r x; sending to child i while receiving at RR(i):
 *  1 - IR_r RR(i) - IR_s(i) x). No label is drawn in the plot area: each
 *  phase has a colour and point shape shared with its line, and an entry
 *  in the key outside on the right (its point and IR); the canvas grows
 *  with the key. Pure: `treefarm measure` writes the files and runs
 *  gnuplot (controller/measure.c). */
void calib_plot (const calib_t *self, int node, const char *dat, calib_plot_t *out);

/*  Free what calib_plot made and zero *plot. */
void calib_plot_clear (calib_plot_t *plot);

/*  Every phase's raw replies and the computed parameters, for scripts. */
json_t *calib_to_json (const calib_t *self);

#endif
