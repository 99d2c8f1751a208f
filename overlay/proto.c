/*  proto — encoding and strict decoding of treefarm messages. See proto.h. */
#include "overlay/proto.h"

#include <math.h>
#include <string.h>

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
    [PROTO_RECORDED] = "RECORDED",
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
    memset (msg, 0, sizeof *msg);
}

/*  Integer field in [0, max], as JSON integer. */
static int
get_uint (json_t *body, const char *key, uint64_t max, uint64_t *out,
          const char *cmd, char *err, size_t errlen)
{
    json_t *v = json_object_get (body, key);
    if (!json_is_integer (v) || json_integer_value (v) < 0
        || (uint64_t) json_integer_value (v) > max)
        return tf_error (err, errlen, "%s: field \"%s\" must be an integer in "
                         "[0, %llu]", cmd, key, (unsigned long long) max);
    *out = (uint64_t) json_integer_value (v);
    return 0;
}

static int
get_string (json_t *body, const char *key, const char **out, const char *cmd,
            char *err, size_t errlen)
{
    json_t *v = json_object_get (body, key);
    if (!json_is_string (v))
        return tf_error (err, errlen, "%s: field \"%s\" must be a string", cmd, key);
    *out = json_string_value (v);
    return 0;
}

/*  Refuse a body with keys outside the allowed set: a field we do not know
 *  is a sender we do not understand. */
static int
check_keys (json_t *body, const char *const *allowed, const char *cmd,
            char *err, size_t errlen)
{
    const char *key;
    json_t *value;
    json_object_foreach (body, key, value) {
        int ok = 0;
        for (int i = 0; allowed[i] && !ok; i++)
            ok = strcmp (key, allowed[i]) == 0;
        if (!ok)
            return tf_error (err, errlen, "%s: unexpected field \"%s\"", cmd, key);
    }
    return 0;
}

static int
check_done (json_t *done, const char *cmd, char *err, size_t errlen)
{
    if (!json_is_array (done) || json_array_size (done) > PROTO_MAX_DONE)
        return tf_error (err, errlen, "%s: field \"done\" must be an array of at "
                         "most %d entries", cmd, PROTO_MAX_DONE);
    size_t i;
    json_t *e;
    json_array_foreach (done, i, e) {
        json_t *t = json_array_get (e, 0), *n = json_array_get (e, 1);
        if (!json_is_array (e) || json_array_size (e) != 2 || !json_is_integer (t)
            || !json_is_integer (n) || json_integer_value (t) < 0
            || json_integer_value (n) < 0 || json_integer_value (n) > UINT32_MAX)
            return tf_error (err, errlen, "%s: entry %zu must be [task, node] "
                             "with non-negative integers", cmd, i);
    }
    return 0;
}

/*  A finite number >= 0. */
static int
get_number (json_t *body, const char *key, double *out, const char *cmd, char *err,
            size_t errlen)
{
    json_t *v = json_object_get (body, key);
    if (!json_is_number (v) || !(json_number_value (v) >= 0)
        || !isfinite (json_number_value (v)))
        return tf_error (err, errlen, "%s: field \"%s\" must be a finite number >= 0",
                         cmd, key);
    *out = json_number_value (v);
    return 0;
}

/*  An object of names -> finite numbers >= 0 (at most 4096 entries). */
static int
check_bounds_named (json_t *object, const char *cmd, const char *field, char *err,
                    size_t errlen)
{
    if (!json_is_object (object) || json_object_size (object) > PROTO_MAX_DONE)
        return tf_error (err, errlen, "%s: field \"%s\" must be an object", cmd, field);
    const char *key;
    json_t *v;
    json_object_foreach (object, key, v) {
        if (!json_is_number (v) || !(json_number_value (v) >= 0)
            || !isfinite (json_number_value (v)))
            return tf_error (err, errlen, "%s: %s \"%s\" must be a finite number >= 0",
                             cmd, field, key);
    }
    return 0;
}

static int
check_bounds (json_t *bounds, char *err, size_t errlen)
{
    if (json_is_object (bounds) && json_object_size (bounds) > PROTO_MAX_BOUNDS)
        return tf_error (err, errlen, "SUBTREE: field \"bounds\" must be an object of "
                         "at most %d entries", PROTO_MAX_BOUNDS);
    return check_bounds_named (bounds, "SUBTREE", "bounds", err, errlen);
}

/*  Check and extract the fields of each command. */
static int
decode_fields (proto_msg_t *m, char *err, size_t errlen)
{
    const char *cmd = proto_command_str (m->command);
    json_t *b = m->body;
    uint64_t v = 0;

    switch (m->command) {
    case PROTO_HELLO: {
        static const char *const k[] = {"name", "pid", "version", NULL};
        if (check_keys (b, k, cmd, err, errlen)
            || get_string (b, "name", &m->text, cmd, err, errlen)
            || get_uint (b, "pid", INT64_MAX, &v, cmd, err, errlen))
            return -1;
        m->pid = (int64_t) v;
        return get_uint (b, "version", 255, &v, cmd, err, errlen);
    }
    case PROTO_CONFIG: {
        static const char *const k[] = {"config", NULL};
        m->object = json_object_get (b, "config");
        if (check_keys (b, k, cmd, err, errlen))
            return -1;
        if (!json_is_object (m->object))
            return tf_error (err, errlen, "CONFIG: field \"config\" must be an object");
        return 0;
    }
    case PROTO_BOUND: {
        static const char *const k[] = {"endpoint", NULL};
        return check_keys (b, k, cmd, err, errlen)
            || get_string (b, "endpoint", &m->text, cmd, err, errlen) ? -1 : 0;
    }
    case PROTO_START: {
        static const char *const k[] = {"parent", "mode", NULL};
        const char *mode = NULL;
        if (check_keys (b, k, cmd, err, errlen)
            || get_string (b, "parent", &m->text, cmd, err, errlen)
            || get_string (b, "mode", &mode, cmd, err, errlen))
            return -1;
        if (strcmp (mode, "run") != 0 && strcmp (mode, "measure") != 0)
            return tf_error (err, errlen, "START: mode must be \"run\" or \"measure\"");
        m->measure = strcmp (mode, "measure") == 0;
        return 0;
    }
    case PROTO_MEASURE: {
        static const char *const k[] = {"phase", "seconds", "warmup", "streams", NULL};
        size_t i;
        json_t *e;
        if (check_keys (b, k, cmd, err, errlen)
            || get_uint (b, "phase", UINT32_MAX, &v, cmd, err, errlen)
            || get_number (b, "seconds", &m->seconds, cmd, err, errlen)
            || get_number (b, "warmup", &m->warmup, cmd, err, errlen))
            return -1;
        m->phase = (uint32_t) v;
        if (!(m->seconds > 0) || !(m->warmup >= 0) || m->warmup >= m->seconds)
            return tf_error (err, errlen, "MEASURE: need 0 <= warmup < seconds");
        m->streams = json_object_get (b, "streams");
        if (!json_is_array (m->streams))
            return tf_error (err, errlen, "MEASURE: field \"streams\" must be an array");
        json_array_foreach (m->streams, i, e)
            if (!json_is_string (e))
                return tf_error (err, errlen, "MEASURE: streams[%zu] must be a name", i);
        return 0;
    }
    case PROTO_MEASURED: {
        static const char *const k[] = {"phase", "seconds", "units_per_s", "recv_mbps",
                                        "send_mbps", NULL};
        double x;
        if (check_keys (b, k, cmd, err, errlen)
            || get_uint (b, "phase", UINT32_MAX, &v, cmd, err, errlen)
            || get_number (b, "seconds", &m->seconds, cmd, err, errlen)
            || get_number (b, "units_per_s", &x, cmd, err, errlen)
            || get_number (b, "recv_mbps", &x, cmd, err, errlen))
            return -1;
        m->phase = (uint32_t) v;
        m->object = json_object_get (b, "send_mbps");
        return check_bounds_named (m->object, "MEASURED", "send_mbps", err, errlen);
    }
    case PROTO_FAIL: {
        static const char *const k[] = {"error", NULL};
        return check_keys (b, k, cmd, err, errlen)
            || get_string (b, "error", &m->text, cmd, err, errlen) ? -1 : 0;
    }
    case PROTO_STATS:
    case PROTO_REPORT: {
        static const char *const k[] = {"stats", NULL};
        m->object = json_object_get (b, "stats");
        if (check_keys (b, k, cmd, err, errlen))
            return -1;
        if (!json_is_object (m->object))
            return tf_error (err, errlen, "%s: field \"stats\" must be an object", cmd);
        return 0;
    }
    case PROTO_FINISHED:
    case PROTO_STOP:
    case PROTO_BYE: {
        static const char *const k[] = {NULL};
        return check_keys (b, k, cmd, err, errlen);
    }
    case PROTO_REQUEST: {
        static const char *const k[] = {"n", NULL};
        if (check_keys (b, k, cmd, err, errlen)
            || get_uint (b, "n", UINT32_MAX, &v, cmd, err, errlen))
            return -1;
        if (v == 0)
            return tf_error (err, errlen, "REQUEST: field \"n\" must be positive");
        m->n = (uint32_t) v;
        return 0;
    }
    case PROTO_ACK: {
        static const char *const k[] = {"task", "index", NULL};
        if (check_keys (b, k, cmd, err, errlen)
            || get_uint (b, "task", INT64_MAX, &m->task, cmd, err, errlen)
            || get_uint (b, "index", UINT32_MAX, &v, cmd, err, errlen))
            return -1;
        m->index = (uint32_t) v;
        return 0;
    }
    case PROTO_CHUNK: {
        static const char *const k[] = {"task", "units", "bytes", "index", "count", NULL};
        json_t *units = json_object_get (b, "units");
        uint64_t count = 0;
        if (check_keys (b, k, cmd, err, errlen)
            || get_uint (b, "task", INT64_MAX, &m->task, cmd, err, errlen)
            || get_uint (b, "bytes", PROTO_MAX_TASK_BYTES, &m->bytes, cmd, err, errlen)
            || get_uint (b, "index", UINT32_MAX, &v, cmd, err, errlen)
            || get_uint (b, "count", UINT32_MAX, &count, cmd, err, errlen))
            return -1;
        m->index = (uint32_t) v;
        m->count = (uint32_t) count;
        if (!json_is_number (units) || !(json_number_value (units) > 0)
            || !isfinite (json_number_value (units)))
            return tf_error (err, errlen, "CHUNK: field \"units\" must be a finite "
                             "positive number");
        m->units = json_number_value (units);
        if (m->count == 0 || m->index >= m->count)
            return tf_error (err, errlen, "CHUNK: index %u not below count %u",
                             m->index, m->count);
        if (!m->payload)
            return tf_error (err, errlen, "CHUNK: payload frame missing");
        if (zframe_size (m->payload) > PROTO_MAX_CHUNK_BYTES)
            return tf_error (err, errlen, "CHUNK: payload of %zu bytes exceeds %u",
                             zframe_size (m->payload), PROTO_MAX_CHUNK_BYTES);
        if (zframe_size (m->payload) > m->bytes)
            return tf_error (err, errlen, "CHUNK: payload of %zu bytes exceeds the "
                             "task's %llu", zframe_size (m->payload),
                             (unsigned long long) m->bytes);
        return 0;
    }
    case PROTO_DONE:
    case PROTO_RECORDED: {
        static const char *const k[] = {"done", NULL};
        m->done = json_object_get (b, "done");
        return check_keys (b, k, cmd, err, errlen)
            || check_done (m->done, cmd, err, errlen) ? -1 : 0;
    }
    case PROTO_SUBTREE: {
        static const char *const k[] = {"bounds", NULL};
        m->bounds = json_object_get (b, "bounds");
        return check_keys (b, k, cmd, err, errlen) || check_bounds (m->bounds, err, errlen)
            ? -1 : 0;
    }
    default:
        return tf_error (err, errlen, "unknown command %d", m->command);
    }
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

    if (!head || zframe_size (head) != 2) {
        tf_error (err, errlen, "header frame missing or not 2 bytes");
        goto out;
    }
    const byte *h = zframe_data (head);
    if (h[0] != PROTO_VERSION) {
        tf_error (err, errlen, "protocol version %u, expected %u", h[0], PROTO_VERSION);
        goto out;
    }
    out->command = h[1];
    if (h[1] == 0 || h[1] >= PROTO_COMMAND_END) {
        tf_error (err, errlen, "unknown command %u", h[1]);
        goto out;
    }
    size_t want = out->command == PROTO_CHUNK ? 3 : 2;
    if (frames != want) {
        tf_error (err, errlen, "%s: %zu frames, expected %zu",
                  proto_command_str (out->command), frames, want);
        goto out;
    }
    /*  The child <-> parent commands are numbered REQUEST to SUBTREE. */
    size_t most = out->command >= PROTO_REQUEST && out->command <= PROTO_SUBTREE
                  ? PROTO_MAX_PEER_BODY : PROTO_MAX_BODY;
    if (zframe_size (body) > most) {
        tf_error (err, errlen, "%s: body of %zu bytes exceeds %zu",
                  proto_command_str (out->command), zframe_size (body), most);
        goto out;
    }
    out->body = json_loadb ((const char *) zframe_data (body), zframe_size (body),
                            JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object (out->body)) {
        tf_error (err, errlen, "%s: body is not a JSON object%s%s",
                  proto_command_str (out->command), out->body ? "" : ": ",
                  out->body ? "" : jerr.text);
        goto out;
    }
    out->payload = zmsg_pop (msg);
    if (decode_fields (out, err, errlen) == 0)
        rc = 0;
out:
    zframe_destroy (&head);
    zframe_destroy (&body);
    zmsg_destroy (&msg);
    if (rc < 0)
        proto_msg_clear (out);
    return rc;
}

zmsg_t *
proto_encode (proto_command_t command, json_t **body_p, zframe_t **payload_p)
{
    byte head[2] = {PROTO_VERSION, (byte) command};
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, head, sizeof head);
    json_t *body = body_p && *body_p ? *body_p : json_object ();
    char *text = json_dumps (body, JSON_COMPACT);
    if (!text) {
        fprintf (stderr, "treefarm: out of memory encoding %s\n",
                 proto_command_str (command));
        abort ();
    }
    zmsg_addmem (msg, text, strlen (text));
    free (text);
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
proto_bound (const char *endpoint)
{
    return encode_packed (PROTO_BOUND, json_pack ("{s:s}", "endpoint", endpoint));
}

zmsg_t *
proto_start (const char *parent_endpoint, int measure)
{
    return encode_packed (PROTO_START, json_pack ("{s:s, s:s}", "parent", parent_endpoint,
                                                  "mode", measure ? "measure" : "run"));
}

zmsg_t *
proto_request (uint32_t n)
{
    return encode_packed (PROTO_REQUEST, json_pack ("{s:I}", "n", (json_int_t) n));
}

zmsg_t *
proto_chunk (uint64_t task, double units, uint64_t bytes, uint32_t index,
             uint32_t count, zframe_t **payload_p)
{
    json_t *body = json_pack ("{s:I, s:f, s:I, s:I, s:I}", "task", (json_int_t) task,
                              "units", units, "bytes", (json_int_t) bytes,
                              "index", (json_int_t) index, "count", (json_int_t) count);
    if (!body) {
        fprintf (stderr, "treefarm: cannot encode CHUNK\n");
        abort ();
    }
    return proto_encode (PROTO_CHUNK, &body, payload_p);
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
proto_empty (proto_command_t command)
{
    return proto_encode (command, NULL, NULL);
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
