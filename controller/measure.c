/*  measure — `treefarm measure`. See measure.h.
 *
 *  The calibration's driver of a session (controller/session.h): once the
 *  whole tree is connected (the root knows the tree's bound, so every
 *  node's SUBTREE came through) it sends each phase of the plan
 *  (controller/calib.h) to every node, files the MEASURED replies, starts
 *  the next phase when every node has replied, and finishes after the
 *  last. Then it prints the calibrated parameters and writes the platform
 *  file, measure.json and the plot.
 */
#include "controller/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/calib.h"
#include "controller/cli.h"
#include "controller/gnuplot.h"
#include "controller/results.h"
#include "controller/session.h"
#include "overlay/config.h"
#include "overlay/proto.h"
#include "overlay/util.h"

/*  Platform seconds per phase unless --seconds says otherwise; the
 *  warm-up defaults to a quarter of it. */
#define MEASURE_SECONDS 20.0
#define MEASURE_WARMUP_SHARE 0.25

/*  The calibration's own files in its results directory (the session
 *  writes results.json, nodes.csv and samples/ there too). */
#define MEASURE_TABLE_FILE "calibration.txt"
#define MEASURE_PLATFORM_FILE "platform.json"
#define MEASURE_JSON_FILE "measure.json"

typedef struct {
    double seconds, warmup;  /* platform seconds per phase, not measured */
    const char *platform_out;   /* --out: a copy of the platform file, or NULL */
    const char *plot_node;   /* --plot NODE, or NULL for the root */
    int quiet;
} measure_opts_t;

typedef struct {
    const measure_opts_t *opt;
    calib_t *plan;
    int phase;               /* phase in progress, -1 before the first */
} measure_t;

/*  Start the next phase once the current one is done; finish after the
 *  last. */
static void
measure_tick (session_t *s, void *arg, double now)
{
    measure_t *m = arg;
    const config_t *cfg = session_config (s);
    if (m->phase < 0 && !results_node_stats (session_results (s), cfg->root)->has_bound)
        return;
    if (m->phase >= 0 && !calib_phase_done (m->plan, m->phase))
        return;
    if (++m->phase == calib_phases (m->plan)) {
        session_finish (s, now);
        return;
    }
    if (!m->opt->quiet)
        fprintf (stderr, "[%s] phase %d/%d: %s\n", cfg->name, m->phase + 1,
                 calib_phases (m->plan), calib_phase_str (m->plan, m->phase));
    for (int i = 0; i < cfg->nnodes; i++) {
        calib_request_t r = calib_request (m->plan, m->phase, i);
        if (session_send (s, i, proto_measure (r.phase, r.seconds, r.warmup, r.streams,
                                               r.nstreams, r.idle)) != 0) {
            session_fail (s, RESULTS_FAILED, "node %s: cannot send MEASURE",
                          cfg->nodes[i].name);
            return;
        }
    }
}

static int
measure_message (session_t *s, void *arg, int node, const proto_msg_t *msg, char *err,
                 size_t errlen)
{
    measure_t *m = arg;
    (void) s;
    if (msg->command != PROTO_MEASURED)
        return tf_error (err, errlen, "unexpected");
    return calib_record (m->plan, node, (int) msg->phase, msg->units_per_s,
                         msg->recv_mbps, msg->object, err, errlen);
}

/*  Write text and a newline to path. Returns 0, or -1. */
static int
write_text (const char *path, const char *text)
{
    FILE *f = text ? fopen (path, "w") : NULL;
    int ok = f && fputs (text, f) >= 0 && fputc ('\n', f) != EOF;
    ok = (f && fclose (f) == 0) && ok;
    return ok ? 0 : -1;
}

/*  Write the table calib_print prints to path. Returns 0, or -1. */
static int
write_table (const calib_t *plan, const char *path)
{
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    calib_print (plan, f);
    int ok = !ferror (f);
    return fclose (f) == 0 && ok ? 0 : -1;
}

/*  The calibration's files in dir: the table, the measured platform (and
 *  its copy at --out), measure.json. Returns 0, or -1 having logged the
 *  file that could not be written. */
static int
measure_write_files (session_t *s, const measure_t *m, const char *dir)
{
    const char *out = m->opt->platform_out;
    char *table = xasprintf ("%s/%s", dir, MEASURE_TABLE_FILE);
    char *platform = xasprintf ("%s/%s", dir, MEASURE_PLATFORM_FILE);
    char *mjson = xasprintf ("%s/%s", dir, MEASURE_JSON_FILE);
    char *text = calib_platform_json (m->plan);
    json_t *json = calib_to_json (m->plan);
    const char *failed = NULL;
    if (write_table (m->plan, table) != 0)
        failed = table;
    else if (write_text (platform, text) != 0)
        failed = platform;
    else if (out && write_text (out, text) != 0)
        failed = out;
    else if (json_dump_file (json, mjson, JSON_INDENT (2) | JSON_REAL_PRECISION (15)))
        failed = mjson;
    if (failed)
        session_log (s, "cannot write %s", failed);
    else
        printf ("platform: %s%s%s\n", platform, out ? ", copied to " : "",
                out ? out : "");
    int rc = failed ? -1 : 0;
    json_decref (json);
    free (text);
    free (table);
    free (platform);
    free (mjson);
    return rc;
}

/*  Write text into DIR/base.ext. Returns 0, or -1 with a message. */
static int
write_plot_file (const char *dir, const char *base, const char *ext, const char *text,
                 char *err, size_t errlen)
{
    char *path = xasprintf ("%s/%s.%s", dir, base, ext);
    FILE *f = fopen (path, "w");
    int ok = f && fputs (text, f) >= 0;
    ok = (f && fclose (f) == 0) && ok;
    int rc = ok ? 0 : tf_error (err, errlen, "cannot write %s", path);
    free (path);
    return rc;
}

/*  node's plot (calib_plot) into DIR/interference-NAME.{dat,gp,png,svg}:
 *  the data and script written, drawn by gnuplot. Returns 0, or -1 with a
 *  message (a file not written, gnuplot missing or failing). */
static int
measure_plot (measure_t *m, const config_t *cfg, int node, const char *dir, char *err,
              size_t errlen)
{
    char *base = xasprintf ("interference-%s", cfg->nodes[node].name);
    char *dat = xasprintf ("%s/%s.dat", dir, base), *gp = xasprintf ("%s/%s.gp", dir, base);
    char *png = xasprintf ("%s/%s.png", dir, base), *svg = xasprintf ("%s/%s.svg", dir, base);
    calib_plot_t plot;
    calib_plot (m->plan, node, dat, &plot);
    int rc = write_plot_file (dir, base, "dat", plot.dat, err, errlen);
    if (rc == 0)
        rc = write_plot_file (dir, base, "gp", plot.gp, err, errlen);
    if (rc == 0)
        rc = gnuplot_draw (NULL, gp, "png", plot.width, plot.height, png, err, errlen);
    if (rc == 0)
        rc = gnuplot_draw (NULL, gp, "svg", plot.width, plot.height, svg, err, errlen);
    calib_plot_clear (&plot);
    free (base);
    free (dat);
    free (gp);
    free (png);
    free (svg);
    return rc;
}

/*  Calibration done: the table on stdout, the files, the plot. */
static int
measure_report (session_t *s, measure_t *m)
{
    char err[TF_ERRLEN];
    const config_t *cfg = session_config (s);
    const char *dir = session_dir (s);
    if (calib_compute (m->plan, err, sizeof err) != 0) {
        session_log (s, "calibration: %s", err);
        return CLI_EXIT_FAILED;
    }
    calib_print (m->plan, stdout);
    int code = CLI_EXIT_OK;
    if (measure_write_files (s, m, dir) != 0)
        code = CLI_EXIT_FAILED;
    int node = m->opt->plot_node ? config_find_node (cfg, m->opt->plot_node) : cfg->root;
    if (measure_plot (m, cfg, node, dir, err, sizeof err) != 0) {
        session_log (s, "plot: %s", err);
        code = CLI_EXIT_FAILED;
    }
    else
        printf ("plot: %s/interference-%s.png (and .svg)\n", dir, cfg->nodes[node].name);
    return code;
}

/*  Calibrate a prepared session; print the outcome. */
static int
measure_execute (session_t *s, const measure_opts_t *opt)
{
    measure_t m = {.opt = opt, .phase = -1,
                   .plan = calib_new (session_config (s), opt->seconds, opt->warmup)};
    session_driver_t driver = {.measure = 1, .tick = measure_tick,
                               .message = measure_message, .arg = &m};
    int code = session_execute (s, &driver);
    if (code == CLI_EXIT_OK)
        code = measure_report (s, &m);
    else {
        const char *why = results_error (session_results (s));
        printf ("calibration of %s: %s\n", session_config (s)->name, why ? why : "failed");
    }
    printf ("results: %s/\n", session_dir (s));
    fflush (stdout);
    calib_destroy (&m.plan);
    return code;
}

/* ------------------------------------------------------------------------
 *  The command line.
 */

/*  --out names a file: check before calibrating that it is not a directory
 *  and that its directory takes a new file. Returns 0, or -1 having logged
 *  why. */
static int
check_out (const char *out)
{
    char err[TF_ERRLEN];
    struct stat st;
    if (stat (out, &st) == 0 && S_ISDIR (st.st_mode)) {
        session_log (NULL, "--out %s: is a directory (--out names the platform file, "
                     "--dir the results directory)", out);
        return -1;
    }
    const char *slash = strrchr (out, '/');
    char *dir = !slash ? xstrdup (".") : slash == out ? xstrdup ("/")
                                       : xasprintf ("%.*s", (int) (slash - out), out);
    int rc = results_check_writable (dir, err, sizeof err);
    if (rc != 0)
        session_log (NULL, "--out %s: %s", out, err);
    free (dir);
    return rc;
}

static void
measure_usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm measure CONFIG [--dir DIR] [--out PLATFORM.json]\n"
             "                        [--seconds S] [--warmup S] [--plot NODE]\n"
             "                        [--node-bin PATH] [--quiet] [--timeout SECONDS]\n"
             "                        [--ssh-config FILE] [--push-binary]\n"
             "                        [--curve | --no-curve] [--load FILE]\n"
             "\n"
             "Calibrate the deployed tree with the 3-point procedure (docs/model.md,\n"
             "docs/measure.md): every node computes throughout; a first phase moves no\n"
             "data (C); then, for each link, the parent streams to the child as fast as\n"
             "the link allows while its own parent streams to it (MR, C_r at the child;\n"
             "SR, RR, C_sr at the parent: IR_r, IR_s), and then the same again with the\n"
             "child idle, computing nothing (IR_s alone, the config's ir_send_alone):\n"
             "1 + 2 x links phases. Prints the measured parameters beside the configured\n"
             "ones and writes the measured platform as a config every command accepts.\n"
             "\n"
             "  --dir DIR       the results directory: every file of the calibration\n"
             "                  goes there (created if missing, and checked writable\n"
             "                  before anything starts; default results/NAME-TIME\n"
             "                  below the current directory, NAME the experiment's):\n"
             "                  calibration.txt (the table printed), platform.json (the\n"
             "                  measured platform), measure.json (every phase's\n"
             "                  figures), interference-NODE.{png,svg,gp,dat} (the plot),\n"
             "                  results.json, nodes.csv, samples/\n"
             "  --out FILE      also write the measured platform to FILE (it is always\n"
             "                  in DIR/platform.json); a file, not a directory\n"
             "  --seconds S     platform seconds per phase (default 20)\n"
             "  --warmup S      platform seconds not measured at each phase's start\n"
             "                  (default a quarter of --seconds)\n"
             "  --plot NODE     the node to plot (default the root)\n"
             "  --node-bin PATH the treefarm-node binary (also TREEFARM_NODE)\n"
             "  --quiet         no phase lines on stderr\n"
             "  --timeout S     give up after S wall seconds\n"
             "  --ssh-config F  ssh -F F for every ssh host (default ~/.ssh/config)\n"
             "  --push-binary   copy the node binary to every ssh host first\n"
             "                  (docs/deploy.md)\n"
             "  --curve         CURVE on every socket (default with ssh hosts;\n"
             "                  docs/security.md)\n"
             "  --no-curve      plain TCP, even with ssh hosts\n"
             "  --load FILE     background load on nodes while measuring: a JSON\n"
             "                  object, node name -> load (docs/config.md, \"load\")\n"
             "  -h, --help      this help\n"
             "\n"
             "The last line printed names the results directory.\n"
             "Exit status: 0 calibrated, 1 failed, 2 bad usage or config or a directory\n"
             "that cannot be written, 130 interrupted.\n");
}

/*  A calibration measures each link's IR_s by the parent's compute rate,
 *  which a relay does not have: is the root one (said so)? */
static int
relay_root (const config_t *cfg, const char *path)
{
    const config_node_t *root = &cfg->nodes[cfg->root];
    if (!config_node_is_relay (root))
        return 0;
    session_log (NULL, "%s: tree[%d] (node \"%s\") is a relay (\"slots\": 0): treefarm "
                 "measure cannot measure IR_s at a parent that does not compute", path,
                 root->index, root->name);
    return 1;
}

int
measure_main (int argc, char **argv)
{
    const char *path = NULL, *load = NULL;
    int curve_on = 0, curve_off = 0;
    measure_opts_t mopt = {.seconds = MEASURE_SECONDS, .warmup = -1};
    session_opts_t opt = {.command = "measure"};
    const cli_option_t options[] = {
        {"out", CLI_STRING, &mopt.platform_out, NULL},
        {"dir", CLI_STRING, &opt.out_dir, NULL},
        {"seconds", CLI_POSITIVE, &mopt.seconds, "a positive number of seconds"},
        {"warmup", CLI_NONNEGATIVE, &mopt.warmup, "a number of seconds >= 0"},
        {"plot", CLI_STRING, &mopt.plot_node, NULL},
        {"quiet", CLI_FLAG, &mopt.quiet, NULL},
        {"node-bin", CLI_STRING, &opt.node_bin, NULL},
        {"timeout", CLI_POSITIVE, &opt.timeout, "a positive number of seconds"},
        {"ssh-config", CLI_STRING, &opt.ssh_config, NULL},
        {"push-binary", CLI_FLAG, &opt.push_binary, NULL},
        {"curve", CLI_FLAG, &curve_on, NULL},
        {"no-curve", CLI_FLAG, &curve_off, NULL},
        {"load", CLI_STRING, &load, NULL},
    };
    int code = cli_parse ("measure", argc, argv, options,
                          sizeof options / sizeof *options, measure_usage, &path);
    if (code < 0)
        code = session_curve_flags ("measure", curve_on, curve_off, &opt.curve);
    if (code >= 0)
        return code;
    if (mopt.warmup < 0)
        mopt.warmup = mopt.seconds * MEASURE_WARMUP_SHARE;
    if (mopt.warmup >= mopt.seconds)
        return cli_usage_error ("measure", CLI_EXIT_USAGE,
                                "--warmup must be below --seconds");
    opt.config_path = path;
    config_t *cfg = session_load_config (path, load);
    if (cfg && mopt.plot_node && config_find_node (cfg, mopt.plot_node) < 0) {
        session_log (NULL, "%s: --plot: no node named \"%s\"", path, mopt.plot_node);
        config_destroy (&cfg);
    }
    if (cfg && mopt.platform_out && check_out (mopt.platform_out) != 0)
        config_destroy (&cfg);
    if (cfg && relay_root (cfg, path))
        config_destroy (&cfg);
    session_t *s = cfg ? session_new (&opt, &cfg) : NULL;
    if (!s)
        return CLI_EXIT_USAGE;
    code = measure_execute (s, &mopt);
    session_destroy (&s);
    return code;
}
