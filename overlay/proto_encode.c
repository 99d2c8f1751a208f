/*  proto_encode — the encoders of treefarm messages. See proto.h. */
#include "overlay/proto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

zmsg_t *
proto_encode (proto_command_t command, json_t **body_p, zframe_t **payload_p)
{
    byte head[2] = {PROTO_VERSION, (byte) command};
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, head, sizeof head);
    json_t *body = body_p && *body_p ? *body_p : json_object ();
    /*  Dumped straight into the frame: json_dumps would build the text in
     *  a buffer that doubles, copy it, and the frame copy it again (a
     *  REPORT's 55 KB of samples: four copies at once, a quarter MiB of a
     *  node's peak memory). A body that fits `small` takes one pass and
     *  no allocation; a larger one a second pass. */
    char small[4096];
    size_t len = json_dumpb (body, small, sizeof small, JSON_COMPACT);
    zframe_t *frame = len > sizeof small ? zframe_new (NULL, len) : NULL;
    if (len == 0 || (frame && json_dumpb (body, (char *) zframe_data (frame), len,
                                          JSON_COMPACT) != len)) {
        fprintf (stderr, "treefarm: out of memory encoding %s\n",
                 proto_command_str (command));
        abort ();
    }
    if (frame)
        zmsg_append (msg, &frame);
    else
        zmsg_addmem (msg, small, len);
    json_decref (body);
    if (body_p)
        *body_p = NULL;
    if (payload_p && *payload_p)
        zmsg_append (msg, payload_p);
    return msg;
}

static zmsg_t *
encode_packed (proto_command_t command, json_t *body)
{
    if (!body) {
        fprintf (stderr, "treefarm: cannot encode %s\n", proto_command_str (command));
        abort ();
    }
    return proto_encode (command, &body, NULL);
}

zmsg_t *
proto_hello (const char *name, int64_t pid)
{
    return encode_packed (PROTO_HELLO, json_pack ("{s:s, s:I, s:i}", "name", name,
                                                  "pid", (json_int_t) pid,
                                                  "version", PROTO_VERSION));
}

zmsg_t *
proto_config (json_t *config, json_t *run, json_t *keys)
{
    json_t *body = json_pack ("{s:O}", "config", config);
    if (body && run)
        json_object_set (body, "run", run);
    if (body && keys)
        json_object_set (body, "keys", keys);
    return encode_packed (PROTO_CONFIG, body);
}

zmsg_t *
proto_bound (const char *endpoint)
{
    return encode_packed (PROTO_BOUND, json_pack ("{s:s}", "endpoint", endpoint));
}

zmsg_t *
proto_start (const char *parent_endpoint, int measure)
{
    return proto_start_since (parent_endpoint, measure, 0);
}

zmsg_t *
proto_start_since (const char *parent_endpoint, int measure, double since)
{
    json_t *body = json_pack ("{s:s, s:s}", "parent", parent_endpoint, "mode",
                              measure ? "measure" : "run");
    if (body && since > 0)
        json_object_set_new (body, "since", json_real (since));
    return encode_packed (PROTO_START, body);
}

zmsg_t *
proto_request (uint32_t n)
{
    return encode_packed (PROTO_REQUEST, json_pack ("{s:I}", "n", (json_int_t) n));
}

static json_t *
stream_body (uint64_t task, uint64_t bytes, uint32_t index, uint32_t count)
{
    json_t *body = json_pack ("{s:I, s:I, s:I, s:I}", "task", (json_int_t) task,
                              "bytes", (json_int_t) bytes, "index", (json_int_t) index,
                              "count", (json_int_t) count);
    if (!body) {
        fprintf (stderr, "treefarm: cannot encode a stream chunk\n");
        abort ();
    }
    return body;
}

zmsg_t *
proto_chunk (uint64_t task, double units, uint64_t bytes, uint32_t index,
             uint32_t count, uint32_t kind, const uint32_t *avoid, uint32_t navoid,
             zframe_t **payload_p)
{
    json_t *body = stream_body (task, bytes, index, count);
    json_object_set_new (body, "units", json_real (units));
    if (kind)
        json_object_set_new (body, "kind", json_integer (kind));
    if (navoid) {
        json_t *arr = json_array ();
        for (uint32_t i = 0; i < navoid; i++)
            json_array_append_new (arr, json_integer (avoid[i]));
        json_object_set_new (body, "avoid", arr);
    }
    return proto_encode (PROTO_CHUNK, &body, payload_p);
}

zmsg_t *
proto_result (uint64_t task, uint32_t node, int failed, uint64_t bytes, uint32_t index,
              uint32_t count, zframe_t **payload_p)
{
    json_t *body = stream_body (task, bytes, index, count);
    json_object_set_new (body, "node", json_integer (node));
    json_object_set_new (body, "failed", json_integer (failed != 0));
    return proto_encode (PROTO_RESULT, &body, payload_p);
}

zmsg_t *
proto_result_ack (uint64_t task, uint32_t index)
{
    return encode_packed (PROTO_RESULT_ACK, json_pack ("{s:I, s:I}", "task",
                                                       (json_int_t) task, "index",
                                                       (json_int_t) index));
}

zmsg_t *
proto_ack (uint64_t task, uint32_t index)
{
    return encode_packed (PROTO_ACK, json_pack ("{s:I, s:I}", "task", (json_int_t) task,
                                                "index", (json_int_t) index));
}

zmsg_t *
proto_fail (const char *error)
{
    return encode_packed (PROTO_FAIL, json_pack ("{s:s}", "error", error));
}

zmsg_t *
proto_cancel (uint64_t task)
{
    return encode_packed (PROTO_CANCEL, json_pack ("{s:I}", "task", (json_int_t) task));
}

zmsg_t *
proto_reclaim (uint32_t n, uint32_t dropped)
{
    return encode_packed (PROTO_RECLAIM, json_pack ("{s:I, s:I}", "n", (json_int_t) n,
                                                    "dropped", (json_int_t) dropped));
}

zmsg_t *
proto_done (proto_command_t command, const proto_done_t *done, uint32_t n,
            json_t **info_p)
{
    json_t *arr = json_array ();
    for (uint32_t i = 0; i < n; i++) {
        json_t *e = json_pack ("[I, I]", (json_int_t) done[i].task,
                               (json_int_t) done[i].node);
        if (done[i].attempts > 0) {
            json_array_append_new (e, json_integer (done[i].failed != 0));
            json_array_append_new (e, json_integer (done[i].attempts));
        }
        json_array_append_new (arr, e);
    }
    json_t *body = json_pack ("{s:o}", "done", arr);
    if (body && info_p && *info_p)
        json_object_set_new (body, "info", *info_p);
    if (info_p)
        *info_p = NULL;
    return encode_packed (command, body);
}

zmsg_t *
proto_subtree (const double *bounds)
{
    return proto_subtree_live (bounds, NAN, NAN);
}

zmsg_t *
proto_subtree_live (const double *bounds, double compute, double ir_recv)
{
    json_t *o = json_object ();
    for (int m = 0; m < BOUND_MODEL_COUNT; m++)
        json_object_set_new (o, bound_model_str (m), json_real (bounds[m]));
    json_t *body = json_pack ("{s:o}", "bounds", o);
    if (body && !isnan (compute))
        json_object_set_new (body, "compute", json_real (compute));
    if (body && !isnan (ir_recv))
        json_object_set_new (body, "ir_recv", json_real (ir_recv));
    return encode_packed (PROTO_SUBTREE, body);
}

zmsg_t *
proto_measure (uint32_t phase, double seconds, double warmup, const char *const *streams,
               uint32_t n, int idle)
{
    json_t *names = json_array ();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new (names, json_string (streams[i]));
    json_t *body = json_pack ("{s:I, s:f, s:f, s:o}", "phase", (json_int_t) phase,
                              "seconds", seconds, "warmup", warmup, "streams", names);
    if (body && idle)
        json_object_set_new (body, "idle", json_true ());
    return encode_packed (PROTO_MEASURE, body);
}

zmsg_t *
proto_measured (uint32_t phase, double seconds, double units_per_s, double recv_mbps,
                json_t **send_mbps_p)
{
    json_t *send = *send_mbps_p;
    *send_mbps_p = NULL;
    return encode_packed (PROTO_MEASURED,
                          json_pack ("{s:I, s:f, s:f, s:f, s:o}", "phase",
                                     (json_int_t) phase, "seconds", seconds, "units_per_s",
                                     units_per_s, "recv_mbps", recv_mbps, "send_mbps",
                                     send));
}

zmsg_t *
proto_attach (json_t *node, uint32_t index, const char *key)
{
    json_t *body = json_pack ("{s:O, s:I}", "node", node, "index", (json_int_t) index);
    if (body && key)
        json_object_set_new (body, "key", json_string (key));
    return encode_packed (PROTO_ATTACH, body);
}

zmsg_t *
proto_attached (const char *name, const char *why)
{
    json_t *body = json_pack ("{s:s}", "name", name);
    if (body && why)
        json_object_set_new (body, "error", json_string (why));
    return encode_packed (PROTO_ATTACHED, body);
}

zmsg_t *
proto_drained (const char *peer)
{
    return encode_packed (PROTO_DRAINED, json_pack ("{s:s}", "peer", peer));
}

zmsg_t *
proto_reparent (const char *endpoint, const char *name, const char *key)
{
    json_t *body = json_pack ("{s:s, s:s}", "parent", endpoint, "name", name);
    if (body && key)
        json_object_set_new (body, "key", json_string (key));
    return encode_packed (PROTO_REPARENT, body);
}

zmsg_t *
proto_lost (const char *peer, const char *why)
{
    return encode_packed (PROTO_LOST, json_pack ("{s:s,s:s}", "peer", peer, "why", why));
}

zmsg_t *
proto_empty (proto_command_t command)
{
    return proto_encode (command, NULL, NULL);
}

zmsg_t *
proto_warm (proto_command_t command)
{
    zmsg_t *msg = proto_empty (command);
    for (int k = 2; k < PROTO_WARM_FRAMES; k++)
        zmsg_addmem (msg, NULL, 0);
    return msg;
}

zmsg_t *
proto_raw (int version, int command, const char *body, const void *payload, size_t len)
{
    zmsg_t *msg = zmsg_new ();
    byte head[2] = {(byte) version, (byte) command};
    zmsg_addmem (msg, head, 2);
    if (body)
        zmsg_addstr (msg, body);
    if (payload)
        zmsg_addmem (msg, payload, len);
    return msg;
}
