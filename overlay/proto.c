/*  proto — strict decoding of treefarm messages, and the command names:
 *  the command table, the framing and the peer commands (a child and its
 *  parent). See proto.h; the encoders are overlay/proto_encode.c's, the
 *  controller's commands' decoders overlay/proto_control.c's, the typed
 *  fields overlay/proto_fields.c's. */
#include "overlay/proto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/config.h"
#include "overlay/curve.h"
#include "overlay/jsonw.h"
#include "overlay/proto_int.h"
#include "overlay/util.h"

static const char *const command_names[PROTO_COMMAND_END] = {
    [PROTO_HELLO] = "HELLO",       [PROTO_CONFIG] = "CONFIG",
    [PROTO_BOUND] = "BOUND",       [PROTO_START] = "START",
    [PROTO_STATS] = "STATS",       [PROTO_FINISHED] = "FINISHED",
    [PROTO_STOP] = "STOP",         [PROTO_REPORT] = "REPORT",
    [PROTO_FAIL] = "FAIL",         [PROTO_REQUEST] = "REQUEST",
    [PROTO_CHUNK] = "CHUNK",       [PROTO_ACK] = "ACK",
    [PROTO_DONE] = "DONE",         [PROTO_SUBTREE] = "SUBTREE",
    [PROTO_MEASURE] = "MEASURE",   [PROTO_MEASURED] = "MEASURED",
    [PROTO_BYE] = "BYE",
    [PROTO_RECORDED] = "RECORDED", [PROTO_RESULT] = "RESULT",
    [PROTO_RESULT_ACK] = "RESULT_ACK", [PROTO_PING] = "PING",
    [PROTO_BEAT] = "BEAT",         [PROTO_LOST] = "LOST",
    [PROTO_BATCH] = "BATCH",       [PROTO_RECLAIM] = "RECLAIM",
    [PROTO_RETURN] = "RETURN",     [PROTO_ATTACH] = "ATTACH",
    [PROTO_ATTACHED] = "ATTACHED", [PROTO_DRAINED] = "DRAINED",
    [PROTO_REPARENT] = "REPARENT", [PROTO_CANCEL] = "CANCEL",
    [PROTO_BAG_EMPTY] = "BAG_EMPTY",
};

const char *
proto_command_str (int command)
{
    if (command <= 0 || command >= PROTO_COMMAND_END)
        return "?";
    return command_names[command];
}

void
proto_msg_clear (proto_msg_t *msg)
{
    json_decref (msg->body);
    zframe_destroy (&msg->payload);
    free (msg->done);
    free (msg->streams);
    proto_run_clear (&msg->run_fields);
    memset (msg, 0, sizeof *msg);
}

/* ------------------------------------------------------------------------
 *  One decoder per command: its fields, checked, into the message.
 */

typedef int (*decode_fn) (proto_msg_t *m, const char *cmd, char *err, size_t errlen);

static int
decode_request (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t n;
    if (pf_get_uint (m->body, "n", UINT32_MAX, &n, cmd, err, errlen))
        return -1;
    if (n == 0)
        return tf_error (err, errlen, "%s: field \"n\" must be positive", cmd);
    m->n = (uint32_t) n;
    return 0;
}

/*  RECLAIM: n > 0 (the core bounds it further) and the asks dropped. */
static int
decode_reclaim (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t dropped, n;
    if (pf_get_uint (m->body, "n", UINT32_MAX, &n, cmd, err, errlen)   /* 0: drain */
        || pf_get_uint (m->body, "dropped", UINT32_MAX, &dropped, cmd, err, errlen))
        return -1;
    m->n = (uint32_t) n;
    m->count = (uint32_t) dropped;
    return 0;
}

/*  CANCEL: a task id (the core checks it against the bag). */
static int
decode_cancel (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    return pf_get_uint (m->body, "task", INT64_MAX, &m->task, cmd, err, errlen);
}

static int
decode_ack (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t index;
    if (pf_get_uint (m->body, "task", INT64_MAX, &m->task, cmd, err, errlen)
        || pf_get_uint (m->body, "index", UINT32_MAX, &index, cmd, err, errlen))
        return -1;
    m->index = (uint32_t) index;
    return 0;
}

/*  CHUNK's or RESULT's payload frame against the body's claims. */
static int
check_payload (const proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    if (!m->payload)
        return tf_error (err, errlen, "%s: payload frame missing", cmd);
    if (zframe_size (m->payload) > PROTO_MAX_CHUNK_BYTES)
        return tf_error (err, errlen, "%s: payload of %zu bytes exceeds %u", cmd,
                         zframe_size (m->payload), PROTO_MAX_CHUNK_BYTES);
    if (zframe_size (m->payload) > m->bytes)
        return tf_error (err, errlen, "%s: payload of %zu bytes exceeds the stream's "
                         "%llu", cmd, zframe_size (m->payload),
                         (unsigned long long) m->bytes);
    return 0;
}

/*  The stream fields CHUNK and RESULT share: task, bytes, index, count. */
static int
decode_stream (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t index, count;
    if (pf_get_uint (m->body, "task", INT64_MAX, &m->task, cmd, err, errlen)
        || pf_get_uint (m->body, "bytes", PROTO_MAX_STREAM_BYTES, &m->bytes, cmd, err,
                        errlen)
        || pf_get_uint (m->body, "index", UINT32_MAX, &index, cmd, err, errlen)
        || pf_get_uint (m->body, "count", UINT32_MAX, &count, cmd, err, errlen))
        return -1;
    m->index = (uint32_t) index;
    m->count = (uint32_t) count;
    if (m->count == 0 || m->index >= m->count)
        return tf_error (err, errlen, "%s: index %u not below count %u", cmd, m->index,
                         m->count);
    return 0;
}

/*  CHUNK's optional kind and nodes to avoid. */
static int
decode_kind (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t kind = 0;
    if (json_object_get (m->body, "kind")
        && pf_get_uint (m->body, "kind", 1, &kind, cmd, err, errlen))
        return -1;
    m->kind = (uint32_t) kind;
    json_t *avoid = json_object_get (m->body, "avoid");
    if (!avoid)
        return 0;
    if (!json_is_array (avoid) || json_array_size (avoid) > PROTO_MAX_AVOID)
        return tf_error (err, errlen, "%s: field \"avoid\" must be an array of at most "
                         "%d nodes", cmd, PROTO_MAX_AVOID);
    size_t i;
    json_t *e;
    json_array_foreach (avoid, i, e) {
        if (!json_is_integer (e) || json_integer_value (e) < 0
            || json_integer_value (e) > UINT32_MAX)
            return tf_error (err, errlen, "%s: avoid[%zu] must be a node index", cmd, i);
        m->avoid[m->navoid++] = (uint32_t) json_integer_value (e);
    }
    return 0;
}

static int
decode_chunk (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    json_t *units = json_object_get (m->body, "units");
    if (decode_stream (m, cmd, err, errlen) || decode_kind (m, cmd, err, errlen))
        return -1;
    if (m->kind == 0 && m->bytes > PROTO_MAX_TASK_BYTES)
        return tf_error (err, errlen, "%s: field \"bytes\": a synthetic task of %llu bytes exceeds %llu",
                         cmd, (unsigned long long) m->bytes,
                         (unsigned long long) PROTO_MAX_TASK_BYTES);
    if (!json_is_number (units) || !(json_number_value (units) > 0)
        || !isfinite (json_number_value (units)))
        return tf_error (err, errlen, "%s: field \"units\" must be a finite positive "
                         "number", cmd);
    m->units = json_number_value (units);
    return check_payload (m, cmd, err, errlen);
}

static int
decode_result (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t node, failed;
    if (decode_stream (m, cmd, err, errlen)
        || pf_get_uint (m->body, "node", UINT32_MAX, &node, cmd, err, errlen)
        || pf_get_uint (m->body, "failed", 1, &failed, cmd, err, errlen))
        return -1;
    m->node = (uint32_t) node;
    m->failed = (int) failed;
    return check_payload (m, cmd, err, errlen);
}

/*  Element k of a completion entry, an integer in [0, max]. */
static int
entry_int (json_t *e, size_t k, json_int_t max, uint64_t *out)
{
    json_t *v = json_array_get (e, k);
    if (!json_is_integer (v) || json_integer_value (v) < 0 || json_integer_value (v) > max)
        return -1;
    *out = (uint64_t) json_integer_value (v);
    return 0;
}

/*  One completion: [task, node] (DONE), or [task, node, failed, attempts]
 *  (RECORDED). */
static int
decode_entry (json_t *e, int long_ok, proto_done_t *out)
{
    uint64_t t, n, f = 0, a = 0;
    size_t size = json_is_array (e) ? json_array_size (e) : 0;
    if ((size != 2 && !(long_ok && size == 4)) || entry_int (e, 0, INT64_MAX, &t)
        || entry_int (e, 1, UINT32_MAX, &n)
        || (size == 4 && (entry_int (e, 2, 1, &f) || entry_int (e, 3, 255, &a))))
        return -1;
    *out = (proto_done_t){t, (uint32_t) n, (uint32_t) f, (uint32_t) a};
    return 0;
}

/*  DONE, RETURN and RECORDED: [[task, node], ...], at most PROTO_MAX_DONE;
 *  RECORDED's entries may be long, with an info array beside them. */
static int
decode_done (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    json_t *done;
    int recorded = m->command == PROTO_RECORDED;
    m->done = pf_get_array (m, "done", PROTO_MAX_DONE, "entries", sizeof *m->done, &done,
                            cmd, err, errlen);
    if (!m->done)
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach (done, i, e) {
        if (decode_entry (e, recorded, &m->done[i]))
            return tf_error (err, errlen, "%s: entry %zu must be [task, node]%s with "
                             "non-negative integers", cmd, i,
                             recorded ? " or [task, node, failed, attempts]" : "");
    }
    m->ndone = (uint32_t) json_array_size (done);
    m->info = json_object_get (m->body, "info");
    if (m->info && (!recorded || !json_is_array (m->info)
                    || json_array_size (m->info) != m->ndone))
        return tf_error (err, errlen, "%s: field \"info\" must be an array of one "
                         "entry per completion", cmd);
    return 0;
}

/*  SUBTREE: every model's bound (bound_model_str), others ignored. */
static int
decode_subtree (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    json_t *bounds = json_object_get (m->body, "bounds");
    if (pf_check_named (bounds, PROTO_MAX_BOUNDS, cmd, "bounds", err, errlen))
        return -1;
    for (int k = 0; k < BOUND_MODEL_COUNT; k++) {
        json_t *v = json_object_get (bounds, bound_model_str (k));
        if (!v)
            return tf_error (err, errlen, "%s: no \"%s\" bound", cmd, bound_model_str (k));
        m->bounds[k] = json_number_value (v);
    }
    /*  An adapting run's: the child's live compute rate and IR_r, each a
     *  finite number >= 0 when present. */
    m->live_compute = m->live_ir_recv = NAN;
    if (pf_get_optional (m->body, "compute", &m->live_compute, cmd, err, errlen)
        || pf_get_optional (m->body, "ir_recv", &m->live_ir_recv, cmd, err, errlen))
        return -1;
    return 0;
}

/*  A BATCH is split by proto_unbatch, never decoded whole. */
static int
decode_batch (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    (void) m;
    return tf_error (err, errlen, "%s: split by proto_unbatch, not decoded", cmd);
}

/*  Every command: the fields its body may have, and its decoder. */
static const struct {
    const char *keys[8];
    decode_fn decode;
} codecs[PROTO_COMMAND_END] = {
    [PROTO_HELLO] = {{"name", "pid", "version"}, pc_hello},
    [PROTO_CONFIG] = {{"config", "run", "keys"}, pc_config},
    [PROTO_BOUND] = {{"endpoint"}, pc_bound},
    [PROTO_START] = {{"parent", "mode", "since"}, pc_start},
    [PROTO_STATS] = {{"stats"}, pc_stats},
    [PROTO_FINISHED] = {{NULL}, pc_nothing},
    [PROTO_STOP] = {{NULL}, pc_nothing},
    [PROTO_REPORT] = {{"stats"}, pc_stats},
    [PROTO_FAIL] = {{"error"}, pc_fail},
    [PROTO_REQUEST] = {{"n"}, decode_request},
    [PROTO_CHUNK] = {{"task", "units", "bytes", "index", "count", "kind", "avoid"},
                     decode_chunk},
    [PROTO_ACK] = {{"task", "index"}, decode_ack},
    [PROTO_DONE] = {{"done"}, decode_done},
    [PROTO_SUBTREE] = {{"bounds", "compute", "ir_recv"}, decode_subtree},
    [PROTO_MEASURE] = {{"phase", "seconds", "warmup", "streams", "idle"}, pc_measure},
    [PROTO_MEASURED] = {{"phase", "seconds", "units_per_s", "recv_mbps", "send_mbps"},
                        pc_measured},
    [PROTO_BYE] = {{NULL}, pc_nothing},
    [PROTO_RECORDED] = {{"done", "info"}, decode_done},
    [PROTO_RESULT] = {{"task", "node", "failed", "bytes", "index", "count"}, decode_result},
    [PROTO_RESULT_ACK] = {{"task", "index"}, decode_ack},
    [PROTO_PING] = {{NULL}, pc_nothing},
    [PROTO_BEAT] = {{NULL}, pc_nothing},
    [PROTO_LOST] = {{"peer", "why"}, pc_lost},
    [PROTO_BATCH] = {{"n"}, decode_batch},
    [PROTO_RECLAIM] = {{"n", "dropped"}, decode_reclaim},
    [PROTO_RETURN] = {{"done"}, decode_done},
    [PROTO_ATTACH] = {{"node", "index", "key"}, pc_attach},
    [PROTO_ATTACHED] = {{"name", "error"}, pc_attached},
    [PROTO_DRAINED] = {{"peer"}, pc_drained},
    [PROTO_REPARENT] = {{"parent", "name", "key"}, pc_reparent},
    [PROTO_CANCEL] = {{"task"}, decode_cancel},
    [PROTO_BAG_EMPTY] = {{NULL}, pc_nothing},
};

/*  Check and extract the fields of the message's command. */
static int
decode_fields (proto_msg_t *m, char *err, size_t errlen)
{
    const char *cmd = proto_command_str (m->command);
    if (pf_check_keys (m->body, codecs[m->command].keys, cmd, err, errlen))
        return -1;
    return codecs[m->command].decode (m, cmd, err, errlen);
}

/*  May the command come as the warm-up (overlay/proto.h)? */
static int
warmable (int command)
{
    return command == PROTO_PING || command == PROTO_BEAT;
}

/*  The command of a message's header frame, and its frame count and body
 *  size checked against the command. Returns the command, or 0 with a
 *  message in err. */
static proto_command_t
check_frames (zframe_t *head, zframe_t *body, size_t frames, char *err, size_t errlen)
{
    if (!head || zframe_size (head) != 2)
        return tf_error (err, errlen, "header frame missing or not 2 bytes"), 0;
    const byte *h = zframe_data (head);
    if (h[0] != PROTO_VERSION)
        return tf_error (err, errlen, "protocol version %u, expected %u", h[0],
                         PROTO_VERSION), 0;
    if (h[1] == 0 || h[1] >= PROTO_COMMAND_END)
        return tf_error (err, errlen, "unknown command %u", h[1]), 0;
    proto_command_t command = h[1];
    const char *cmd = proto_command_str (command);
    /*  CHUNK and RESULT carry a payload; a REPORT may (its texts). */
    size_t want = command == PROTO_CHUNK || command == PROTO_RESULT ? 3 : 2;
    if (warmable (command)) {
        if (frames != 2 && frames != PROTO_WARM_FRAMES)
            return tf_error (err, errlen, "%s: %zu frames, expected 2 or %d (the warm-up)",
                             cmd, frames, PROTO_WARM_FRAMES), 0;
    }
    else if (frames != want && !(command == PROTO_REPORT && frames == 3))
        return tf_error (err, errlen, "%s: %zu frames, expected %s", cmd, frames,
                         command == PROTO_REPORT ? "2 or 3" : want == 3 ? "3" : "2"), 0;
    /*  The child <-> parent commands: REQUEST to SUBTREE, RESULT,
     *  RESULT_ACK, BATCH, RECLAIM, RETURN, CANCEL and BAG_EMPTY. */
    int peer = (command >= PROTO_REQUEST && command <= PROTO_SUBTREE)
            || command == PROTO_RESULT || command == PROTO_RESULT_ACK
            || (command >= PROTO_BATCH && command <= PROTO_RETURN)
            || command == PROTO_CANCEL || command == PROTO_BAG_EMPTY;
    size_t most = peer ? PROTO_MAX_PEER_BODY : PROTO_MAX_BODY;
    if (zframe_size (body) > most)
        return tf_error (err, errlen, "%s: body of %zu bytes exceeds %zu", cmd,
                         zframe_size (body), most), 0;
    return command;
}

/*  Are the frames after a PING's or BEAT's body (the warm-up's) empty? */
static int
warm_frames_empty (proto_command_t command, zmsg_t *msg)
{
    if (!warmable (command))
        return 1;
    for (zframe_t *f = zmsg_first (msg); f; f = zmsg_next (msg))
        if (zframe_size (f) != 0)
            return 0;
    return 1;
}

int
proto_decode (zmsg_t **msg_p, proto_msg_t *out, char *err, size_t errlen)
{
    zmsg_t *msg = *msg_p;
    *msg_p = NULL;
    memset (out, 0, sizeof *out);
    int rc = -1;
    size_t frames = zmsg_size (msg);
    zframe_t *head = zmsg_pop (msg);
    zframe_t *body = zmsg_pop (msg);
    json_error_t jerr;
    out->command = check_frames (head, body, frames, err, errlen);
    if (out->command)
        out->body = json_loadb ((const char *) zframe_data (body), zframe_size (body),
                                JSON_REJECT_DUPLICATES, &jerr);
    if (out->command && !json_is_object (out->body))
        tf_error (err, errlen, "%s: body is not a JSON object%s%s",
                  proto_command_str (out->command), out->body ? "" : ": ",
                  out->body ? "" : jerr.text);
    else if (out->command && !warm_frames_empty (out->command, msg))
        tf_error (err, errlen, "%s: a warm-up frame is not empty", proto_command_str (out->command));
    else if (out->command) {
        out->payload = warmable (out->command) ? NULL : zmsg_pop (msg);
        rc = decode_fields (out, err, errlen) == 0 ? 0 : -1;
    }
    zframe_destroy (&head);
    zframe_destroy (&body);
    zmsg_destroy (&msg);
    if (rc < 0)
        proto_msg_clear (out);
    return rc;
}
