/*  loadrec — `treefarm load record`: sample this machine's CPU load from
 *  /proc/stat into a trace a node's "load" replays (overlay/load.h,
 *  "trace"; docs/config.md, "load").
 *
 *  Every interval it reads the aggregate "cpu" line and writes one row
 *  "time_s,load" for the interval just ended: time_s its start, seconds
 *  from the first sample, and L = 1 + busy / total, the jiffies the
 *  machine's CPUs spent busy (user, nice, system, irq, softirq, steal)
 *  over all they spent (those, idle and iowait) in the interval: 1 on
 *  an idle machine, 2 on one whose CPUs were all busy.
 */
#ifndef TF_LOADREC_H
#define TF_LOADREC_H

#include <stdint.h>

/*  The shortest interval: /proc/stat counts in jiffies (10 ms at the
 *  usual 100 Hz), so a shorter interval would read no change. */
#define LOADREC_MIN_INTERVAL_S 0.01
/*  The longest interval: an hour. */
#define LOADREC_MAX_INTERVAL_S 3600.0

/*  The counters of one sample of the "cpu" line. */
typedef struct {
    uint64_t busy;           /* user + nice + system + irq + softirq + steal */
    uint64_t total;          /* busy + idle + iowait */
} loadrec_sample_t;

/*  Read the aggregate "cpu" line of text (the contents of /proc/stat)
 *  into *out. Returns 0, or -1 if text has no such line with at least
 *  the eight counters user .. steal. */
int loadrec_parse_stat (const char *text, loadrec_sample_t *out);

/*  The load L of the interval from a to b: 1 + busy / total of the
 *  difference, 1 when no jiffy passed (or a counter went back). */
double loadrec_level (const loadrec_sample_t *a, const loadrec_sample_t *b);

/*  `treefarm load SUBCOMMAND`; argv[0] is "load". Returns the exit code. */
int loadrec_main (int argc, char **argv);

#endif
