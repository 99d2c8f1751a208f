/*  proto_control — the decoders of what the controller and a node say to
 *  each other: the handshake (HELLO, CONFIG, BOUND, START), calibration
 *  (MEASURE, MEASURED), STATS and REPORT, FAIL and LOST, a node joining
 *  or leaving (ATTACH, ATTACHED, DRAINED). See overlay/proto_int.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/config.h"
#include "overlay/curve.h"
#include "overlay/proto_int.h"
#include "overlay/proto_run.h"
#include "overlay/proto_stats.h"
#include "overlay/util.h"

int
pc_hello (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t pid, version;
    if (pf_get_string (m->body, "name", &m->text, cmd, err, errlen)
        || pf_get_uint (m->body, "pid", INT64_MAX, &pid, cmd, err, errlen)
        || pf_get_uint (m->body, "version", 255, &version, cmd, err, errlen))
        return -1;
    m->pid = (int64_t) pid;
    m->version = (int) version;
    return 0;
}

/*  The body's field key, an object, into m->object. */
int
pc_object (proto_msg_t *m, const char *key, const char *cmd, char *err, size_t errlen)
{
    m->object = json_object_get (m->body, key);
    if (!json_is_object (m->object))
        return tf_error (err, errlen, "%s: field \"%s\" must be an object", cmd, key);
    return 0;
}

/*  CONFIG keys: {node name: its public key}, one per node at most. */
int
pc_keys (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    m->keys = json_object_get (m->body, "keys");
    if (!m->keys)
        return 0;
    if (!json_is_object (m->keys) || json_object_size (m->keys) > CONFIG_MAX_NODES)
        return tf_error (err, errlen, "%s: field \"keys\" must be an object of at most "
                         "%d entries", cmd, CONFIG_MAX_NODES);
    const char *name;
    json_t *v;
    json_object_foreach (m->keys, name, v) {
        if (!curve_key_valid (json_string_value (v)))
            return tf_error (err, errlen, "%s: the key of \"%.64s\" is not a CURVE key "
                             "(%d characters of Z85)", cmd, name, CURVE_KEY_LEN);
    }
    return 0;
}

int
pc_config (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    m->run = json_object_get (m->body, "run");
    if (m->run && proto_run_decode (m->run, &m->run_fields, err, errlen) != 0)
        return -1;
    if (pc_keys (m, cmd, err, errlen) != 0)
        return -1;
    return pc_object (m, "config", cmd, err, errlen);
}

int
pc_text (proto_msg_t *m, const char *key, const char *cmd, char *err, size_t errlen)
{
    return pf_get_string (m->body, key, &m->text, cmd, err, errlen);
}

int
pc_bound (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    return pc_text (m, "endpoint", cmd, err, errlen);
}

int
pc_fail (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    return pc_text (m, "error", cmd, err, errlen);
}

int
pc_lost (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    return pc_text (m, "peer", cmd, err, errlen)
        || pf_get_string (m->body, "why", &m->why, cmd, err, errlen);
}

/*  The body's optional "key", a CURVE public key, into *out (left NULL
 *  when absent): ATTACH's, the joining node's; REPARENT's, the new
 *  parent's. */
static int
optional_key (proto_msg_t *m, const char **out, const char *cmd, char *err, size_t errlen)
{
    if (json_object_get (m->body, "key")
        && (pf_get_string (m->body, "key", out, cmd, err, errlen) || !curve_key_valid (*out)))
        return tf_error (err, errlen, "%s: field \"key\" must be a CURVE key", cmd);
    return 0;
}

/*  ATTACH: the joining node's description, decoded by the node
 *  (config_node_parse), and its index in the run. */
int
pc_attach (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t index;
    m->object = json_object_get (m->body, "node");
    if (!json_is_object (m->object))
        return tf_error (err, errlen, "%s: field \"node\" must be an object", cmd);
    if (pf_get_uint (m->body, "index", CONFIG_MAX_NODES + CONFIG_MAX_JOINS, &index, cmd,
                     err, errlen))
        return -1;
    m->node = (uint32_t) index;
    return optional_key (m, &m->text, cmd, err, errlen);
}

/*  ATTACHED: the node's name, and why it was not taken, if it was not. */
int
pc_attached (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    if (pc_text (m, "name", cmd, err, errlen))
        return -1;
    return json_object_get (m->body, "error")
               ? pf_get_string (m->body, "error", &m->why, cmd, err, errlen)
               : 0;
}

int
pc_drained (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    return pc_text (m, "peer", cmd, err, errlen);
}

/*  REPARENT: the new parent's endpoint and name, and its key with CURVE. */
int
pc_reparent (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    if (pc_text (m, "parent", cmd, err, errlen)
        || pf_get_string (m->body, "name", &m->why, cmd, err, errlen))
        return -1;
    if (m->text[0] == '\0' || m->why[0] == '\0')
        return tf_error (err, errlen, "%s: an empty parent endpoint or name", cmd);
    return optional_key (m, &m->key, cmd, err, errlen);
}

int
pc_start (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    const char *mode = NULL;
    if (pf_get_string (m->body, "parent", &m->text, cmd, err, errlen)
        || pf_get_string (m->body, "mode", &mode, cmd, err, errlen))
        return -1;
    if (strcmp (mode, "run") != 0 && strcmp (mode, "measure") != 0)
        return tf_error (err, errlen, "%s: mode must be \"run\" or \"measure\"", cmd);
    m->measure = strcmp (mode, "measure") == 0;
    m->seconds = 0;
    if (json_object_get (m->body, "since")
        && (pf_get_optional (m->body, "since", &m->seconds, cmd, err, errlen)
            || m->seconds > PROTO_MAX_SINCE_S))
        return tf_error (err, errlen, "%s: field \"since\" must be 0 .. %g seconds", cmd,
                         PROTO_MAX_SINCE_S);
    return 0;
}

/*  MEASURE and MEASURED: the phase and its seconds. */
int
pc_phase (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    uint64_t phase;
    if (pf_get_uint (m->body, "phase", UINT32_MAX, &phase, cmd, err, errlen)
        || pf_get_number (m->body, "seconds", &m->seconds, cmd, err, errlen))
        return -1;
    m->phase = (uint32_t) phase;
    return 0;
}

int
pc_measure (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    m->idle = 0;
    if (pc_phase (m, cmd, err, errlen)
        || pf_get_number (m->body, "warmup", &m->warmup, cmd, err, errlen)
        || pf_get_bool (m->body, "idle", &m->idle, cmd, err, errlen))
        return -1;
    if (!(m->seconds > 0) || m->warmup >= m->seconds)
        return tf_error (err, errlen, "%s: need 0 <= warmup < seconds", cmd);
    json_t *streams;
    m->streams = pf_get_array (m, "streams", PROTO_MAX_STREAMS, "names",
                               sizeof *m->streams, &streams, cmd, err, errlen);
    if (!m->streams)
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach (streams, i, e) {
        if (!json_is_string (e))
            return tf_error (err, errlen, "%s: streams[%zu] must be a name", cmd, i);
        m->streams[m->nstreams++] = json_string_value (e);
    }
    return 0;
}

int
pc_measured (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    if (pc_phase (m, cmd, err, errlen)
        || pf_get_number (m->body, "units_per_s", &m->units_per_s, cmd, err, errlen)
        || pf_get_number (m->body, "recv_mbps", &m->recv_mbps, cmd, err, errlen))
        return -1;
    m->object = json_object_get (m->body, "send_mbps");
    return pf_check_named (m->object, PROTO_MAX_STREAMS, cmd, "send_mbps", err, errlen);
}

int
pc_stats (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    return pc_object (m, "stats", cmd, err, errlen);
}

int
pc_nothing (proto_msg_t *m, const char *cmd, char *err, size_t errlen)
{
    (void) m, (void) cmd, (void) err, (void) errlen;
    return 0;
}
