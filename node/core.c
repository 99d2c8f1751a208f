/*  core — a node's decision logic as a pure state machine. See core.h.
 *
 *  Every event is first validated without touching the state, then applied,
 *  then `dispatch` brings the node to its next fixed point: the engine busy
 *  if there is a task, transfers started while the policy allows, the
 *  buffer topped up, due completions flushed.
 *
 *  The state is in parts, each its own object: the held tasks and the
 *  root's record of the bag (ledger.h), the transfers to the children
 *  (xfer.h), the transfer from the parent and chunk validation (recv.h),
 *  and the result streams (streams.h). The core owns what ties them
 *  together: which task may go where (the engine's slots, the tree's
 *  shape for the nodes a command avoids), completions and their batches,
 *  the actions of an event, the counters: this file creates it and takes
 *  each event in, node/core_events.c checks and applies events, and
 *  node/core_plan.c decides where tasks go and reaches the fixed point
 *  (their shared state: node/core_int.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node/core_int.h"
#include "overlay/config.h"
#include "overlay/util.h"

static const char *const event_names[CORE_EV_COUNT] = {
    "START", "REQUEST", "CHUNK", "ACK", "DONE", "COMPUTED", "TICK", "STREAM",
    "RESULT", "RESULT_ACK", "LOST", "TAKE_BACK", "RECLAIM", "RETURNED",
    "ORPHANED", "REPARENT", "CANCEL", "EMPTY",
};

static const char *const action_names[CORE_ACT_COUNT] = {
    "REQUEST", "SEND_CHUNK", "ACK", "COMPUTE", "REPORT", "RELEASE", "FINISHED",
    "RECORDED", "SEND_RESULT", "ACK_RESULT", "RELEASE_RESULT", "RETRY",
    "DROP_RESULT", "RECLAIM", "RETURN", "CANCEL", "EMPTY",
};

const char *
core_event_str (core_event_type_t type)
{
    return type < CORE_EV_COUNT ? event_names[type] : "?";
}

const char *
core_action_str (core_action_type_t type)
{
    return type < CORE_ACT_COUNT ? action_names[type] : "?";
}

/*  --- creation ------------------------------------------------------------- */

/*  The sizes and counts of a configuration. */
static int
check_sizes (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (!cfg->policy)
        return tf_error (err, errlen, "core: no policy");
    if (cfg->chunk_bytes == 0 || cfg->window == 0 || cfg->buffer == 0
        || cfg->batch_max == 0 || !(cfg->batch_delay >= 0))
        return tf_error (err, errlen, "core: chunk size, window, buffer and "
                         "batch size must be positive");
    if (cfg->task_count == 0 || !(cfg->task_units > 0) || !isfinite (cfg->task_units))
        return tf_error (err, errlen, "core: the bag needs tasks of positive units");
    if (cfg->task_bytes > CONFIG_MAX_TASK_BYTES)
        return tf_error (err, errlen, "core: tasks of %llu bytes, more than %llu",
                         (unsigned long long) cfg->task_bytes,
                         (unsigned long long) CONFIG_MAX_TASK_BYTES);
    if (cfg->self >= cfg->nnodes)
        return tf_error (err, errlen, "core: node index %u out of %u", cfg->self,
                         cfg->nnodes);
    if (cfg->nchildren < 0 || (cfg->nchildren > 0 && !cfg->children))
        return tf_error (err, errlen, "core: children missing");
    if (!(cfg->meter_window > 0) || !(cfg->send_limit_bps >= 0))
        return tf_error (err, errlen, "core: meter window must be positive and the "
                         "send limit not negative");
    return 0;
}

/*  The command-task part of a configuration. */
static int
check_commands (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (cfg->command_tasks > cfg->task_count)
        return tf_error (err, errlen, "core: %llu command tasks in a bag of %llu",
                         (unsigned long long) cfg->command_tasks,
                         (unsigned long long) cfg->task_count);
    if (cfg->is_root && cfg->command_tasks > 0 && !cfg->task_info)
        return tf_error (err, errlen, "core: command tasks need task_info");
    if (cfg->slots > CORE_MAX_SLOTS)
        return tf_error (err, errlen, "core: %u slots, more than %u", cfg->slots,
                         CORE_MAX_SLOTS);
    if (cfg->depth > CORE_MAX_DEPTH)
        return tf_error (err, errlen, "core: %u places a slot, more than %u", cfg->depth,
                         CORE_MAX_DEPTH);
    if (cfg->max_attempts > CORE_MAX_ATTEMPTS)
        return tf_error (err, errlen, "core: %u attempts, more than %u",
                         cfg->max_attempts, CORE_MAX_ATTEMPTS);
    for (uint32_t i = 0; cfg->tree_parent && i < cfg->nnodes; i++)
        if (cfg->tree_parent[i] >= (int32_t) cfg->nnodes
            || (cfg->tree_parent[i] < 0 && cfg->tree_parent[i] != -1))
            return tf_error (err, errlen, "core: node %u has parent %d", i,
                             cfg->tree_parent[i]);
    for (int c = 0; c < cfg->nchildren; c++)
        if (cfg->tree_parent && cfg->children[c].node >= cfg->nnodes)
            return tf_error (err, errlen, "core: child %d is node %u of %u", c,
                             cfg->children[c].node, cfg->nnodes);
    return 0;
}

/*  Keep the tree's shape, and count each node's subtree (a node walks up
 *  to the root; a cycle, which config loading rules out, stops after
 *  nnodes steps). */
static void
copy_tree (core_t *self, const int32_t *parent)
{
    uint32_t n = self->cfg.nnodes;
    self->shape.parent = xmalloc (n * sizeof *self->shape.parent);
    memcpy (self->shape.parent, parent, n * sizeof *parent);
    self->shape.size = xcalloc (n, sizeof *self->shape.size);
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = (int32_t) i;
        for (uint32_t steps = 0; x >= 0 && steps <= n; steps++) {
            self->shape.size[x]++;
            x = parent[x];
        }
    }
}

/*  The parts, each configured from cfg. */
static void
new_parts (core_t *self, const core_cfg_t *cfg)
{
    self->ledger = ledger_new (&(ledger_cfg_t){
        .is_root = cfg->is_root, .task_count = cfg->task_count,
        .command_tasks = cfg->command_tasks, .task_units = cfg->task_units,
        .task_bytes = cfg->task_bytes, .task_info = cfg->task_info,
        .task_arg = cfg->task_arg, .max_attempts = cfg->max_attempts,
        /*  The nodes a failed command may be tried again on: a relay
         *  (only ever the root) is none of them. */
        .nnodes = cfg->nnodes - (cfg->relay && cfg->nnodes > 1),
        .root_only = cfg->policy->root_only});
    self->xfer = xfer_new (&(xfer_cfg_t){
        .nchildren = cfg->nchildren, .children = cfg->children,
        .chunk_bytes = cfg->chunk_bytes, .window = cfg->window, .pace = cfg->pace,
        .send_limit_bps = cfg->send_limit_bps, .meter_window = cfg->meter_window,
        .policy = cfg->policy, .parent = cfg->parent, .probe_units = cfg->task_units,
        .probe_bytes = cfg->task_bytes, .keep_commands = !cfg->is_root,
        .fanout = cfg->adapt && cfg->policy->multiport && !cfg->policy->split
                  && cfg->send_limit_bps > 0 && cfg->parent.send_limit_mbps > 0});
    self->recv = recv_new (&(recv_cfg_t){
        .task_count = cfg->task_count, .command_tasks = cfg->command_tasks,
        .task_units = cfg->task_units, .task_bytes = cfg->task_bytes,
        .chunk_bytes = cfg->chunk_bytes, .nnodes = cfg->nnodes,
        .meter_window = cfg->meter_window});
    self->streams = streams_new (cfg->chunk_bytes, cfg->window, cfg->nchildren);
}

core_t *
core_new (const core_cfg_t *cfg, char *err, size_t errlen)
{
    if (check_sizes (cfg, err, errlen) || check_commands (cfg, err, errlen))
        return NULL;
    core_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    self->cfg.children = NULL;
    self->cfg.tree_parent = NULL;
    new_parts (self, cfg);
    self->buffer_cfg = cfg->buffer;
    /*  A relay has no slot: no task is ever computed, or copied, here. */
    self->compute.slots = cfg->relay ? 0 : core_cfg_slots (cfg)
                                           * (cfg->depth ? cfg->depth : 1);
    self->compute.running = xcalloc (self->compute.slots + 1, sizeof (task_t));
    self->compute.given = xcalloc (self->compute.slots + 1, sizeof (double));
    if (cfg->tree_parent)
        copy_tree (self, cfg->tree_parent);
    return self;
}

void
core_destroy (core_t **self_p)
{
    core_t *self = *self_p;
    if (!self)
        return;
    ledger_destroy (&self->ledger);
    xfer_destroy (&self->xfer);
    recv_destroy (&self->recv);
    streams_destroy (&self->streams);
    free (self->shape.parent);
    free (self->shape.size);
    free (self->compute.running);
    free (self->compute.given);
    free (self->batch.items);
    free (self->back.items);
    free (self->stale.items);
    free (self->eg.copies);
    free (self->eg.cancelled);
    free (self->eg.back);
    free (self->eg.kid);
    free (self->acts.items);
    free (self);
    *self_p = NULL;
}

int
core_handle (core_t *self, const core_event_t *ev, char *err, size_t errlen)
{
    self->acts.n = 0;
    if (!self->meters_marked) {
        /*  The meters measure from the first event on (a run's START, or a
         *  calibration's first probe). */
        recv_mark_meter (self->recv, ev->now);
        xfer_mark_meters (self->xfer, ev->now);
        self->meters_marked = 1;
    }
    if (self->batch.flushed) {
        self->batch.n = 0;
        self->batch.flushed = 0;
    }
    if (core_apply (self, ev, err, errlen) < 0) {
        self->stats.malformed++;
        self->acts.n = 0;
        return -1;
    }
    core_dispatch (self, ev->now);
    return 0;
}

/*  --- what the runtime reads ---------------------------------------------- */

const core_action_t *
core_actions (const core_t *self, int *count)
{
    *count = self->acts.n;
    return self->acts.items;
}

core_stats_t
core_stats (const core_t *self)
{
    core_stats_t s = self->stats;
    for (int i = 0; i < self->cfg.nchildren; i++) {
        core_child_stats_t c = xfer_child_stats (self->xfer, i);
        s.forwarded += c.tasks_sent;
        s.bytes_out += c.bytes_sent;
    }
    streams_add_stats (self->streams, &s);
    s.completed = ledger_completed (self->ledger);
    s.held = ledger_held (self->ledger);
    s.computing = (int) self->compute.n;
    return s;
}

core_child_stats_t
core_child_stats (const core_t *self, int child)
{
    return xfer_child_stats (self->xfer, child);
}

int
core_is_done (const core_t *self, uint64_t task)
{
    return ledger_is_done (self->ledger, task);
}

int
core_mark_done (core_t *self, uint64_t task)
{
    if (self->started)
        return -1;
    return ledger_mark_done (self->ledger, task);
}

double
core_next_deadline (const core_t *self, double now)
{
    double due = -1;
    if (self->batch.n > 0 && !self->batch.flushed)
        due = self->batch.since + self->cfg.batch_delay;
    double at = xfer_next_due (self->xfer, now);
    if (at >= 0 && (due < 0 || at < due))
        due = at;
    if (due < 0)
        return -1;
    return due > now ? due - now : 0;
}

double
core_recv_rate (core_t *self, double now)
{
    return recv_rate (self->recv, now);
}

double
core_recv_bytes (const core_t *self)
{
    return recv_bytes (self->recv);
}

double
core_sent_bytes (const core_t *self, int child)
{
    return xfer_sent_bytes (self->xfer, child);
}

double
core_send_rate (core_t *self, int child, double now)
{
    return xfer_send_rate (self->xfer, child, now);
}

void
core_set_child_ir (core_t *self, int child, double ir_send)
{
    xfer_set_child_ir (self->xfer, child, ir_send);
}

void
core_set_child_rates (core_t *self, int child, const core_rates_t *rates)
{
    xfer_set_child_rates (self->xfer, child, rates);
}

int
core_attach_child (core_t *self, int child, const core_child_info_t *info, char *err,
                   size_t errlen)
{
    return xfer_attach_child (self->xfer, child, info, err, errlen);
}

int
core_detach_child (core_t *self, int child, char *err, size_t errlen)
{
    if (xfer_check_child (self->xfer, child, err, errlen))
        return -1;
    if (core_child_stats (self, child).given > 0)
        return tf_error (err, errlen, "child %d still has tasks", child);
    uint32_t n;
    xfer_lose_child (self->xfer, child, &n);
    streams_drop_child (self->streams, child, &self->acts);
    return 0;
}

void
core_set_compute_rate (core_t *self, double units_per_s)
{
    if (!(units_per_s > 0) || !isfinite (units_per_s))
        return;
    self->cfg.parent.compute_rate = units_per_s;
    xfer_set_compute_rate (self->xfer, units_per_s);
}

void
core_set_child_bound (core_t *self, int child, double tasks_per_s)
{
    xfer_set_child_bound (self->xfer, child, tasks_per_s);
}

double
core_split_rate (const core_t *self, int child)
{
    return xfer_split_rate (self->xfer, child);
}

int
core_fanout (const core_t *self)
{
    return xfer_fanout (self->xfer);
}

void
core_set_link_share (core_t *self, int child, double share)
{
    xfer_set_link_share (self->xfer, child, share);
}

int
core_port_busy (const core_t *self, double now)
{
    return xfer_port_busy (self->xfer, now);
}

void
core_rank (const core_t *self, int *slots)
{
    xfer_rank (self->xfer, slots);
}

int
core_sending (const core_t *self)
{
    return xfer_sending (self->xfer);
}
