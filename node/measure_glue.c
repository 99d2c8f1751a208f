/*  measure_glue — a node's part in a calibration (treefarm measure,
 *  docs/model.md): MEASURE starts a phase that streams probes to the
 *  children it names, with the node's engine held for the phase if it
 *  says idle (its endless task waits, node/engine.h), the phase's snapshots come from the engine's units
 *  and the core's probe counters, and MEASURED reports it in platform
 *  terms (node/calphase.h does the arithmetic; node_measure_t). See
 *  node/runtime.h.
 */
#include "node/runtime.h"
#include "overlay/util.h"

/*  Stream probes to a child, or stop. */
static int
stream (node_t *self, int slot, int on)
{
    core_event_t ev = {.type = CORE_EV_STREAM, .now = tf_now (), .child = slot, .n = on};
    return act_feed (self, &ev, "the controller");
}

int
measure_on_message (node_t *self, const proto_msg_t *m)
{
    int n = self->me->nchildren;
    if (!self->link.measure || calphase_active (self->meas.cal)) {
        const char *why = self->link.measure ? "MEASURE during a phase"
                                             : "MEASURE outside measure mode";
        receive_refuse (self, "the controller", why);
        return 0;
    }
    memset (self->meas.streams, 0, (n + 1) * sizeof *self->meas.streams);
    for (uint32_t i = 0; i < m->nstreams; i++) {
        zhashx_t *slots = self->link.slots;
        intptr_t slot = slots ? (intptr_t) zhashx_lookup (slots, m->streams[i]) - 1 : -1;
        if (slot < 0) {
            receive_refuse (self, "the controller", "MEASURE streams to a non-child");
            return 0;
        }
        self->meas.streams[slot] = 1;
    }
    if (calphase_begin (self->meas.cal, m->phase, tf_now (), m->warmup, m->seconds,
                        self->meas.streams) != 0) {
        receive_refuse (self, "the controller",
                        "MEASURE with a warm-up not below its length");
        return 0;
    }
    /*  Held from the phase's start, so the warm-up covers the switch. */
    if (m->idle && engine_hold (self->parts.engine, 1) != 0)
        return node_fail (self, "the compute engine is gone"), -1;
    for (int c = 0; c < n; c++)
        if (self->meas.streams[c] && stream (self, c, 1) < 0)
            return -1;
    return 0;
}

/*  MEASURED: what the phase measured, in platform terms (units per
 *  platform second, MB/s). */
static int
send_measured (node_t *self, const calphase_result_t *r)
{
    double scale = self->cfg->platform.time_scale;
    json_t *send = json_object ();
    for (int c = 0; c < self->me->nchildren; c++)
        json_object_set_new (send, self->cfg->nodes[self->me->children[c]].name,
                             json_real (r->send_bps[c] / self->parts.bps_per_mbps));
    zmsg_t *msg = proto_measured (r->phase, r->seconds * scale, r->units_per_s / scale,
                                  r->recv_bps / self->parts.bps_per_mbps, &send);
    return zmsg_send (&msg, self->link.ctl);
}

int
measure_tick (node_t *self, double now)
{
    int n = self->me->nchildren;
    if (!calphase_active (self->meas.cal))
        return 0;
    for (int c = 0; c < n; c++)
        self->meas.probe_out[c] = core_child_stats (self->parts.core, c).probe_bytes;
    double units_at, units = report_engine_units (self, &units_at);
    calphase_counters_t counters = {units, units_at,
                                    core_stats (self->parts.core).probe_bytes_in,
                                    self->meas.probe_out};
    calphase_result_t r;
    if (!calphase_tick (self->meas.cal, now, &counters, &r))
        return 0;
    for (int c = 0; c < n; c++)
        if (calphase_streams (self->meas.cal, c) && stream (self, c, 0) < 0)
            return -1;
    if (engine_hold (self->parts.engine, 0) != 0)
        return -1;
    return send_measured (self, &r);
}

void
measure_start (node_t *self)
{
    int n = self->me->nchildren;
    self->meas.cal = calphase_new (n);
    self->meas.probe_out = xcalloc (n + 1, sizeof *self->meas.probe_out);
    self->meas.streams = xcalloc (n + 1, sizeof *self->meas.streams);
}

double
measure_next (node_t *self, double now)
{
    return calphase_next (self->meas.cal, now);
}

void
measure_close (node_t *self)
{
    calphase_destroy (&self->meas.cal);
    free (self->meas.probe_out);
    free (self->meas.streams);
}
