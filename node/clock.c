/*  clock — what is due on a node's clock: the controller's silence, the
 *  emulated engine speed (node/emulate.h's interference charge and the
 *  background load's factor, node/loademul.c), STATS, a sample while the
 *  engine is idle, a calibration snapshot, the root's journal; and how
 *  long the loop may sleep until the next of them, the core's and the
 *  engine's deadlines included. Also how late the loop woke
 *  (node_clock_t). See node/runtime.h.
 */
#include <math.h>

#include "node/runtime.h"
#include "overlay/util.h"

#define NODE_STATS_EVERY 0.25     /* seconds between STATS */
#define NODE_TICK_MAX 0.1         /* longest poll, seconds */
#define NODE_SPEED_EVERY 0.01     /* emulated interference update, seconds */

/*  Emulated interference: hand the bytes this node moved so far to the
 *  model (node/emulate.h) and run the engine at the speed it says since
 *  the last update, dated back, so that the compute the transfers took is
 *  IR x the bytes moved while computing; from now on at full speed (the
 *  next update charges what moves meanwhile, and what is still owed). */
static void
update_speed (node_t *self, double now)
{
    for (int i = 0; i < self->me->nchildren; i++)
        self->clock.send_bytes[i] = core_sent_bytes (self->parts.core, i);
    engine_t *e = self->parts.engine;
    double since = emul_updated_at (self->parts.emul);
    /*  The part of the interval the engine computed (its task's, since
     *  the one before ended at an update: clock_settle), and the part
     *  since its speed was last set, over which the charge is spread. */
    double start, end, busy_s = 0, apply_s = 0;
    if (engine_busy (e) && !engine_held (e) && engine_task_span (e, &start, &end)) {
        double from = fmax (since, start);
        busy_s = now - from;
        apply_s = now - fmax (from, engine_speed_set_at (e));
    }
    double f = emul_update_bytes (self->parts.emul, now, busy_s, apply_s,
                                  core_recv_bytes (self->parts.core), self->clock.send_bytes);
    if (since > 0)
        engine_set_speed_at (e, f * self->clock.load_factor, now - apply_s);
    engine_set_speed_at (e, self->clock.load_factor, now);
}

void
clock_settle (node_t *self, double now)
{
    if (emul_interferes (self->parts.emul) && engine_deadline (self->parts.engine, now) == 0)
        update_speed (self, now);
}

void
clock_follow_load (node_t *self, double now)
{
    if (self->load.load)
        self->clock.load_factor = loadgen_factor (self, now);
    if (self->load.links)
        loademul_links_follow (self, now);
}

/*  A message that came in time wakes the loop early: no lag. Since it
 *  never sleeps longer than NODE_TICK_MAX (emulated: NODE_SPEED_EVERY),
 *  a node starved of CPU shows here however busy its sockets. */
void
clock_note_lag (node_t *self, double late)
{
    if (late <= 0)
        return;
    self->clock.loop_lag += late;
    if (late > self->clock.loop_lag_max)
        self->clock.loop_lag_max = late;
}

/*  Root: write the journal's batch when due; lower *wait to its next
 *  deadline. */
static int
journal_due (node_t *self, double now, double *wait)
{
    char err[TF_ERRLEN];
    if (cargo_journal_tick (self->parts.cargo, now, 0, err, sizeof err) != 0) {
        node_fail (self, err);
        return -1;
    }
    if (act_release_recorded (self) != 0) {
        node_fail (self, "cannot send RECORDED to the controller");
        return -1;
    }
    double due = cargo_next_deadline (self->parts.cargo, now);
    if (due >= 0 && due < *wait)
        *wait = due;
    return 0;
}

/*  What is due on the clock: the controller's patience, the emulated
 *  speed, STATS, a sample while the engine is idle (it sends nothing
 *  then), a calibration snapshot. Returns 0, or -1 after a fatal error. */
static int
clock_due (node_t *self, double now)
{
    /*  The controller may be busy for seconds (filing hundreds of
     *  REPORTs): never less patience with it than PROTO_CONTROL_SILENCE,
     *  and more when the run allows its peers more. */
    double patience = fmax (PROTO_CONTROL_SILENCE, config_lost_after_s (self->cfg));
    if (beat_controller_silence (self, now) > patience) {
        node_fail (self, "the controller fell silent: exiting");
        return -1;
    }
    clock_follow_load (self, now);
    if (now - emul_updated_at (self->parts.emul) >= NODE_SPEED_EVERY)
        update_speed (self, now);
    receive_flush_refusals (self, now);
    if (now >= self->clock.next_stats) {
        report_stats (self, PROTO_STATS);
        self->clock.next_stats = now + NODE_STATS_EVERY;
    }
    report_idle_sample (self, now);
    if (measure_tick (self, now) < 0) {
        node_fail (self, "cannot report a calibration phase");
        return -1;
    }
    return 0;
}

double
clock_work (node_t *self, double now)
{
    if (clock_due (self, now) != 0)
        return -1;
    double wait = self->clock.next_stats - now;
    double cal = measure_next (self, now);
    if (cal >= 0 && cal < wait)
        wait = cal;
    double due = core_next_deadline (self->parts.core, now);
    if (due >= 0 && due < wait)
        wait = due;
    due = engine_deadline (self->parts.engine, now);   /* emulated, in the loop */
    if (due >= 0 && due < wait)
        wait = due;
    due = loadgen_deadline (self, now);   /* emulated load, while computing */
    if (due >= 0 && due < wait)
        wait = due;
    due = loademul_links_deadline (self, now);   /* children's links, while sending */
    if (due >= 0 && due < wait)
        wait = due;
    if (self->parts.cargo && journal_due (self, now, &wait) != 0)
        return -1;
    if (wait > NODE_TICK_MAX)
        wait = NODE_TICK_MAX;
    /*  Only traffic that slows the engine needs the loop this awake: on a
     *  node without interference, 100 wake-ups a second are pure cost,
     *  and hundreds of emulated nodes on one machine starve each other
     *  of CPU with them (docs/performance.md, "Scale and memory"). */
    if (emul_interferes (self->parts.emul) && wait > NODE_SPEED_EVERY)
        wait = NODE_SPEED_EVERY;
    return wait;
}

void
clock_start (node_t *self, double now)
{
    self->clock.next_stats = now;
    self->clock.load_factor = 1;
    self->clock.send_bytes = xcalloc (self->me->nchildren + 1, sizeof *self->clock.send_bytes);
}

double
clock_lag (const node_t *self, double *max)
{
    *max = self->clock.loop_lag_max;
    return self->clock.loop_lag;
}

void
clock_close (node_t *self)
{
    free (self->clock.send_bytes);
}
