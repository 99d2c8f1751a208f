/*  ratelog — how often a process may say the same kind of thing.
 *
 *  A peer that floods a node with garbage must not flood its log: every
 *  refusal is counted, but at most `burst` are said per `window` seconds;
 *  the rest are summed up in one line when the next window opens ("N more
 *  refusals not shown"). Pure: the caller passes the time.
 */
#ifndef TF_RATELOG_H
#define TF_RATELOG_H

#include <stdint.h>

/*  Refusals said per second at most, by the node and by the controller:
 *  far above what a broken but honest peer causes (a few), far below what
 *  fills a disk (50 lines of ~100 bytes a second is 18 MB an hour). */
#define RATELOG_BURST 50
#define RATELOG_WINDOW 1.0

typedef struct {
    double window;           /* seconds, > 0 */
    uint32_t burst;          /* lines per window, >= 1 */
    double start;            /* the window in progress began at */
    uint32_t said;           /* lines said in it */
    uint64_t held;           /* lines not said since the last summary */
} ratelog_t;

/*  A limiter of burst lines per window seconds. */
ratelog_t ratelog_init (uint32_t burst, double window);

/*  May one more line be said at now? Returns 1 (say it) or 0 (count it,
 *  stay quiet). When a new window opens with lines held back, *held gets
 *  their number (to be said first) and is then cleared; else 0. */
int ratelog_allow (ratelog_t *self, double now, uint64_t *held);

/*  Lines held back whose window is over at now: their number (to be said
 *  now), which is then cleared; 0 if none, or if their window still runs.
 *  Call it now and then, so a flood that stops is still summed up. */
uint64_t ratelog_overdue (ratelog_t *self, double now);

#endif
