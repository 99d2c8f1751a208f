/*  loadrec — `treefarm load record`. See loadrec.h.
 *
 *  The recorder sleeps to fixed deadlines (start + k x interval), so a
 *  slow write does not stretch the trace, and flushes every row, so an
 *  interrupted recording leaves a trace of the rows it took.
 */
#include "controller/loadrec.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/cli.h"
#include "overlay/load.h"
#include "overlay/util.h"

#define STAT_PATH "/proc/stat"
#define DEFAULT_INTERVAL_S 1.0
#define DEFAULT_DURATION_S 60.0
/*  The "cpu" line is /proc/stat's first: this much holds it. */
#define STAT_HEAD_BYTES 4096

/*  SIGINT or SIGTERM arrived: stop after the rows taken. */
static volatile sig_atomic_t stop_signal;

static void
on_signal (int sig)
{
    stop_signal = sig;
}

int
loadrec_parse_stat (const char *text, loadrec_sample_t *out)
{
    const char *line = text;
    while (line && strncmp (line, "cpu ", 4) != 0) {
        line = strchr (line, '\n');
        line = line ? line + 1 : NULL;
    }
    /*  user nice system idle iowait irq softirq steal */
    unsigned long long v[8];
    if (!line || sscanf (line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                         &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
        return -1;
    out->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    out->total = out->busy + v[3] + v[4];
    return 0;
}

double
loadrec_level (const loadrec_sample_t *a, const loadrec_sample_t *b)
{
    if (b->total <= a->total || b->busy < a->busy)
        return 1;
    double share = (double) (b->busy - a->busy) / (double) (b->total - a->total);
    return 1 + (share > 1 ? 1 : share);
}

/*  One sample of STAT_PATH. */
static int
read_stat (loadrec_sample_t *out, char *err, size_t errlen)
{
    char text[STAT_HEAD_BYTES + 1];
    FILE *file = fopen (STAT_PATH, "r");
    if (!file)
        return tf_error (err, errlen, "%s: cannot open: %s", STAT_PATH, strerror (errno));
    size_t len = fread (text, 1, STAT_HEAD_BYTES, file);
    fclose (file);
    text[len] = '\0';
    if (loadrec_parse_stat (text, out) != 0)
        return tf_error (err, errlen, "%s: no aggregate \"cpu\" line with eight "
                         "counters", STAT_PATH);
    return 0;
}

/*  Sleep until tf_now () reaches t, or a signal stops the recording. */
static void
sleep_until (double t)
{
    double left;
    while (!stop_signal && (left = t - tf_now ()) > 0) {
        struct timespec ts = {.tv_sec = (time_t) left,
                              .tv_nsec = (long) ((left - floor (left)) * 1e9)};
        nanosleep (&ts, NULL);
    }
}

/*  Take rows rows of interval seconds into out. Returns the rows written,
 *  or -1 with a message in err. */
static int
record (FILE *out, double interval, int rows, char *err, size_t errlen)
{
    loadrec_sample_t prev, cur;
    if (read_stat (&prev, err, errlen) != 0)
        return -1;
    double t0 = tf_now (), start = t0;
    int k;
    for (k = 0; k < rows && !stop_signal; k++) {
        sleep_until (t0 + (k + 1) * interval);
        if (stop_signal)
            break;
        if (read_stat (&cur, err, errlen) != 0)
            return -1;
        double now = tf_now ();
        if (fprintf (out, "%.3f,%.4f\n", start - t0, loadrec_level (&prev, &cur)) < 0
            || fflush (out) != 0)
            return tf_error (err, errlen, "cannot write: %s", strerror (errno));
        prev = cur;
        start = now;
    }
    return k;
}

static void
record_usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm load record [--interval S] [--duration S] [--out FILE]\n"
             "\n"
             "Sample this machine's CPU load from /proc/stat and write it as a trace\n"
             "a node's \"load\" replays (docs/config.md, \"load\"): a header line\n"
             "time_s,load, then one row per interval, time_s its start in seconds\n"
             "from the first sample and load L = 1 + busy / total jiffies of the\n"
             "machine's CPUs in it (busy: user, nice, system, irq, softirq, steal;\n"
             "total adds idle and iowait): 1 idle, 2 every CPU busy.\n"
             "\n"
             "options:\n"
             "  --interval S   seconds between samples, %g to %g (default %g)\n"
             "  --duration S   seconds to record (default %g); at most %d rows\n"
             "                 (duration / interval) and %g s\n"
             "  --out FILE     write the trace to FILE (default: standard output)\n"
             "  -h, --help     show this help\n"
             "\n"
             "Progress goes to standard error. Ctrl-C stops early; the rows taken\n"
             "stay a valid trace.\n"
             "\n"
             "exit status: 0 recorded, 1 /proc/stat unreadable or FILE not written,\n"
             "2 bad usage, 130 interrupted.\n",
             LOADREC_MIN_INTERVAL_S, LOADREC_MAX_INTERVAL_S, DEFAULT_INTERVAL_S,
             DEFAULT_DURATION_S, LOAD_MAX_TRACE_ROWS, LOAD_MAX_TIME_S);
}

static void
load_usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm load record [--interval S] [--duration S] [--out FILE]\n"
             "\n"
             "Background load tools (docs/load.md):\n"
             "  record   sample this machine's /proc/stat into a trace\n"
             "           (treefarm load record --help)\n");
}

/*  The rows the options ask for, or -1 after a usage error. */
static int
check_options (double interval, double duration)
{
    if (interval < LOADREC_MIN_INTERVAL_S || interval > LOADREC_MAX_INTERVAL_S)
        return cli_usage_error ("load record", CLI_EXIT_USAGE, "--interval: %g is not "
                                "in [%g, %g] s", interval, LOADREC_MIN_INTERVAL_S,
                                LOADREC_MAX_INTERVAL_S), -1;
    double rows = floor (duration / interval + 1e-9);
    if (duration > LOAD_MAX_TIME_S || rows > LOAD_MAX_TRACE_ROWS || rows < 1)
        return cli_usage_error ("load record", CLI_EXIT_USAGE, "--duration: %g s at "
                                "--interval %g is %.0f rows; give 1 to %d rows and at "
                                "most %g s", duration, interval, rows,
                                LOAD_MAX_TRACE_ROWS, LOAD_MAX_TIME_S), -1;
    return (int) rows;
}

/*  Record into path (NULL: stdout). Returns the exit code. */
static int
record_to (const char *path, double interval, int rows)
{
    char err[TF_ERRLEN] = "";
    FILE *out = path ? fopen (path, "w") : stdout;
    if (!out) {
        fprintf (stderr, "treefarm load record: %s: cannot create: %s\n", path,
                 strerror (errno));
        return CLI_EXIT_FAILED;
    }
    struct sigaction sa = {.sa_handler = on_signal};   /* no SA_RESTART */
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    fprintf (stderr, "treefarm load record: sampling %s every %g s, %d rows, into %s\n",
             STAT_PATH, interval, rows, path ? path : "standard output");
    int n = fprintf (out, "time_s,load\n") < 0 ? -1 : record (out, interval, rows, err,
                                                            sizeof err);
    if (n < 0 && !*err)
        snprintf (err, sizeof err, "cannot write: %s", strerror (errno));
    if ((path ? fclose (out) : fflush (out)) != 0 && n >= 0) {
        snprintf (err, sizeof err, "cannot write: %s", strerror (errno));
        n = -1;
    }
    if (n < 0) {
        fprintf (stderr, "treefarm load record: %s%s%s\n", path ? path : "",
                 path ? ": " : "", err);
        return CLI_EXIT_FAILED;
    }
    fprintf (stderr, "treefarm load record: %d rows%s%s\n", n, path ? " in " : "",
             path ? path : "");
    return stop_signal ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
}

int
loadrec_main (int argc, char **argv)
{
    if (argc < 2 || (strcmp (argv[1], "record") && argv[1][0] == '-')) {
        int help = argc >= 2 && (!strcmp (argv[1], "--help") || !strcmp (argv[1], "-h"));
        load_usage (help ? stdout : stderr);
        return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (strcmp (argv[1], "record") != 0)
        return cli_usage_error ("load", CLI_EXIT_USAGE, "unknown subcommand \"%s\" "
                                "(expected record)", argv[1]);
    double interval = DEFAULT_INTERVAL_S, duration = DEFAULT_DURATION_S;
    const char *out = NULL;
    const cli_option_t options[] = {
        {"interval", CLI_POSITIVE, &interval, "a number of seconds > 0"},
        {"duration", CLI_POSITIVE, &duration, "a number of seconds > 0"},
        {"out", CLI_STRING, &out, NULL},
    };
    int code = cli_parse ("load record", argc - 1, argv + 1, options,
                          sizeof options / sizeof *options, record_usage, NULL);
    if (code >= 0)
        return code;
    int rows = check_options (interval, duration);
    return rows < 0 ? CLI_EXIT_USAGE : record_to (out, interval, rows);
}
