/*  core_report — a core's counters as a STATS or REPORT carries them.
 *
 *  The one mapping from core_stats_t to the counters of proto_stats_t,
 *  for every driver that reports a core: the ZeroMQ runtime
 *  (node/report.c) and the simulator (sim/).
 */
#ifndef TF_CORE_REPORT_H
#define TF_CORE_REPORT_H

#include "node/core.h"
#include "overlay/proto_stats.h"

/*  s's counters, held and computing from c; every other field zero. */
proto_stats_t core_report_counters (const core_stats_t *c);

#endif
