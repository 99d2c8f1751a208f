/*  proto_run — CONFIG's run object. See proto_run.h. */
#include "overlay/proto_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/jsonw.h"
#include "overlay/util.h"

static const char *const run_keys[] = {
    "commands", "attempts", "input_mb", "out", "journal", "tasks", "scratch",
    "resume", "trace", "vacant", NULL
};

/*  The path fields, in the order they are read. */
static const char *const path_keys[] = {"out", "journal", "tasks", "scratch", NULL};

static char **
path_field (proto_run_t *run, int i)
{
    char **fields[] = {&run->out, &run->journal, &run->tasks, &run->scratch};
    return fields[i];
}

/*  A path as the run object carries one: absolute, of at most
 *  PROTO_RUN_MAX_PATH bytes, no NUL. */
static int
path_ok (const char *path, size_t len)
{
    return len >= 2 && len <= PROTO_RUN_MAX_PATH && path[0] == '/'
        && strlen (path) == len;
}

/*  The rules across fields. */
static const char *
run_inconsistency (const proto_run_t *run)
{
    if (run->commands > 0 && (!run->out || !run->journal))
        return "a run with commands needs \"out\" and \"journal\"";
    if (run->resume && !run->journal)
        return "a resumed run needs its \"journal\"";
    return NULL;
}

/*  The numbers and flags of the object into out. */
static int
decode_numbers (jsonw_t *w, proto_run_t *out)
{
    long long commands = 0, attempts = 0, vacant = 0;
    if (jsonw_get_integer (w, "commands", 1, 0, PROTO_RUN_MAX_COMMANDS, &commands) < 0
        || jsonw_get_integer (w, "vacant", 0, 0, CONFIG_MAX_JOINS, &vacant) < 0
        || jsonw_get_integer (w, "attempts", 1, 1, PROTO_RUN_MAX_ATTEMPTS, &attempts) < 0
        || jsonw_get_number (w, "input_mb", 1, JSONW_NONNEGATIVE, &out->input_mb) < 0
        || jsonw_get_bool (w, "resume", 0, &out->resume) < 0
        || jsonw_get_bool (w, "trace", 0, &out->trace) < 0)
        return -1;
    if (out->input_mb > PROTO_RUN_MAX_INPUT_MB)
        return jsonw_fail (w->doc, NULL, "field \"input_mb\" must be at most %g",
                           PROTO_RUN_MAX_INPUT_MB);
    out->commands = (uint64_t) commands;
    out->attempts = (uint32_t) attempts;
    out->vacant = (uint32_t) vacant;
    return 0;
}

/*  The paths of the object into out (copies). */
static int
decode_paths (jsonw_t *w, proto_run_t *out)
{
    for (int i = 0; path_keys[i]; i++) {
        json_t *v = json_object_get (w->obj, path_keys[i]);
        if (!v)
            continue;
        if (!json_is_string (v)
            || !path_ok (json_string_value (v), json_string_length (v)))
            return jsonw_fail (w->doc, NULL, "field \"%s\" must be an absolute path of "
                               "at most %d bytes", path_keys[i], PROTO_RUN_MAX_PATH);
        *path_field (out, i) = xstrdup (json_string_value (v));
    }
    return 0;
}

int
proto_run_decode (const json_t *object, proto_run_t *out, char *err, size_t errlen)
{
    jsonw_doc_t doc = {.style = JSONW_PROTO, .origin = "CONFIG: run", .err = err,
                       .errlen = errlen};
    jsonw_t w;
    memset (out, 0, sizeof *out);
    if (!json_is_object (object))
        return tf_error (err, errlen, "CONFIG: field \"run\" must be an object");
    jsonw_init (&w, &doc, (json_t *) object);
    const char *why = NULL;
    if (jsonw_check_keys (&w, run_keys) < 0 || decode_numbers (&w, out) < 0
        || decode_paths (&w, out) < 0
        || ((why = run_inconsistency (out)) && jsonw_fail (&doc, NULL, "%s", why))) {
        proto_run_clear (out);
        return -1;
    }
    return 0;
}

void
proto_run_clear (proto_run_t *run)
{
    for (int i = 0; path_keys[i]; i++)
        free (*path_field (run, i));
    memset (run, 0, sizeof *run);
}

json_t *
proto_run_encode (const proto_run_t *run, char *err, size_t errlen)
{
    json_t *o = json_pack ("{s:I, s:i, s:f}", "commands", (json_int_t) run->commands,
                           "attempts", (int) run->attempts, "input_mb", run->input_mb);
    for (int i = 0; o && path_keys[i]; i++) {
        const char *path = *path_field ((proto_run_t *) run, i);
        json_t *v = path ? json_string (path) : NULL;
        if (path && !v) {   /* not UTF-8 */
            json_decref (o);
            o = NULL;
        }
        else if (v)
            json_object_set_new (o, path_keys[i], v);
    }
    if (o && run->resume)
        json_object_set_new (o, "resume", json_true ());
    if (o && run->trace)
        json_object_set_new (o, "trace", json_true ());
    if (o && run->vacant)
        json_object_set_new (o, "vacant", json_integer (run->vacant));
    /*  What the decoder would refuse is refused here, with its message. */
    proto_run_t check;
    if (!o || proto_run_decode (o, &check, err, errlen) != 0) {
        if (!o)
            tf_error (err, errlen, "CONFIG: run: cannot encode (a path not UTF-8?)");
        json_decref (o);
        return NULL;
    }
    proto_run_clear (&check);
    return o;
}
