/*  proto_fields — a message body's typed fields, each checked strictly
 *  (through the one JSON walker, overlay/jsonw.h) with a refusal that
 *  names the command and the field. See overlay/proto_int.h.
 */
#include <stdint.h>
#include <string.h>

#include "overlay/jsonw.h"
#include "overlay/proto_int.h"
#include "overlay/util.h"

/*  The body as the walker reads it (overlay/jsonw.h), for cmd's
 *  messages. */
void
pf_walk (jsonw_t *w, jsonw_doc_t *doc, json_t *body, const char *cmd, char *err,
         size_t errlen)
{
    *doc = (jsonw_doc_t) {.style = JSONW_PROTO, .origin = cmd, .err = err,
                          .errlen = errlen};
    jsonw_init (w, doc, body);
}

/*  Integer field in [0, max], as JSON integer. */
int
pf_get_uint (json_t *body, const char *key, uint64_t max, uint64_t *out,
             const char *cmd, char *err, size_t errlen)
{
    jsonw_doc_t doc;
    jsonw_t w;
    long long v;
    pf_walk (&w, &doc, body, cmd, err, errlen);
    if (jsonw_get_integer (&w, key, 1, 0, (long long) max, &v) < 0)
        return -1;
    *out = (uint64_t) v;
    return 0;
}

int
pf_get_string (json_t *body, const char *key, const char **out, const char *cmd,
               char *err, size_t errlen)
{
    jsonw_doc_t doc;
    jsonw_t w;
    pf_walk (&w, &doc, body, cmd, err, errlen);
    return jsonw_get_string (&w, key, 1, 0, SIZE_MAX, out) < 0 ? -1 : 0;
}

/*  Optional true or false into *out as 1 or 0; left as it is when
 *  absent. Anything else (null, 0 or 1, a string) is refused. */
int
pf_get_bool (json_t *body, const char *key, int *out, const char *cmd, char *err,
             size_t errlen)
{
    jsonw_doc_t doc;
    jsonw_t w;
    pf_walk (&w, &doc, body, cmd, err, errlen);
    return jsonw_get_bool (&w, key, 0, out) < 0 ? -1 : 0;
}

/*  Refuse a body with keys outside the allowed set: a field we do not know
 *  is a sender we do not understand. */
int
pf_check_keys (json_t *body, const char *const *allowed, const char *cmd,
               char *err, size_t errlen)
{
    jsonw_doc_t doc;
    jsonw_t w;
    pf_walk (&w, &doc, body, cmd, err, errlen);
    return jsonw_check_keys (&w, allowed);
}

/*  A finite number >= 0 into *out; when not required, *out is left as
 *  it is if the key is absent. */
static int
nonnegative (json_t *body, const char *key, int required, double *out, const char *cmd,
             char *err, size_t errlen)
{
    jsonw_doc_t doc;
    jsonw_t w;
    pf_walk (&w, &doc, body, cmd, err, errlen);
    return jsonw_get_number (&w, key, required, JSONW_NONNEGATIVE, out) < 0 ? -1 : 0;
}

/*  Required. */
int
pf_get_number (json_t *body, const char *key, double *out, const char *cmd, char *err,
               size_t errlen)
{
    return nonnegative (body, key, 1, out, cmd, err, errlen);
}

/*  Optional: left as it is when absent. */
int
pf_get_optional (json_t *body, const char *key, double *out, const char *cmd, char *err,
                 size_t errlen)
{
    return nonnegative (body, key, 0, out, cmd, err, errlen);
}

/*  The body's field key, an array of at most `most` elements (`what`, for
 *  the message), into *array; returns room for as many elements of elem
 *  bytes (the caller's), or NULL with a message in err. */
void *
pf_get_array (const proto_msg_t *m, const char *key, size_t most, const char *what,
              size_t elem, json_t **array, const char *cmd, char *err, size_t errlen)
{
    *array = json_object_get (m->body, key);
    if (!json_is_array (*array) || json_array_size (*array) > most) {
        tf_error (err, errlen, "%s: field \"%s\" must be an array of at most %zu %s", cmd,
                  key, most, what);
        return NULL;
    }
    return xcalloc (json_array_size (*array) + 1, elem);
}

/*  An object of at most `most` names -> finite numbers >= 0. */
int
pf_check_named (json_t *object, size_t most, const char *cmd, const char *field, char *err,
                size_t errlen)
{
    if (!json_is_object (object) || json_object_size (object) > most)
        return tf_error (err, errlen, "%s: field \"%s\" must be an object of at most "
                         "%zu entries", cmd, field, most);
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
