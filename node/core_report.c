/*  core_report — see core_report.h. */
#include "node/core_report.h"

proto_stats_t
core_report_counters (const core_stats_t *c)
{
    return (proto_stats_t){
        .computed = c->computed, .forwarded = c->forwarded, .received = c->received,
        .requested = c->requested, .bytes_in = c->bytes_in, .bytes_out = c->bytes_out,
        .malformed = c->malformed, .completed = c->completed,
        .duplicates = c->duplicates, .requeued = c->requeued,
        .reclaimed = c->reclaimed, .returned = c->returned, .stale = c->stale,
        .stale_dropped = c->stale_dropped, .copies = c->copies, .copies_won = c->copies_won,
        .cancelled = c->cancelled, .wasted = c->wasted, .held = c->held,
        .computing = c->computing,
    };
}
