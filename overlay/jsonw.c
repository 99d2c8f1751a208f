/*  jsonw — the strict JSON walker of the config, the tasks file and the
 *  wire. See jsonw.h. */
#include "overlay/jsonw.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "overlay/util.h"

void
jsonw_init (jsonw_t *self, jsonw_doc_t *doc, json_t *obj)
{
    memset (self, 0, sizeof *self);
    self->doc = doc;
    self->obj = obj;
    self->sep = "";
}

int
jsonw_fail (const jsonw_doc_t *doc, const char *where, const char *fmt, ...)
{
    char msg[TF_ERRLEN], at[TF_ERRLEN] = "";
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    int named = where && *where;
    switch (doc->style) {
    case JSONW_CONFIG:
        if (named)
            return tf_error (doc->err, doc->errlen, "%s: %s: %s", doc->origin, where,
                             msg);
        return tf_error (doc->err, doc->errlen, "%s: %s", doc->origin, msg);
    case JSONW_TASKS:
        if (doc->origin && doc->line)
            snprintf (at, sizeof at, "%s:%u: ", doc->origin, doc->line);
        else if (doc->origin)
            snprintf (at, sizeof at, "%s: ", doc->origin);
        if (where)
            return tf_error (doc->err, doc->errlen, "%sfield '%s': %s", at, where, msg);
        return tf_error (doc->err, doc->errlen, "%s%s", at, msg);
    case JSONW_PROTO:
        break;
    }
    return tf_error (doc->err, doc->errlen, "%s: %s", doc->origin, msg);
}

int
jsonw_fail_syntax (const jsonw_doc_t *doc, int line, int column, const char *text)
{
    if (doc->style == JSONW_PROTO)
        return jsonw_fail (doc, NULL, "%s", text);
    return tf_error (doc->err, doc->errlen, "%s:%d:%d: %s", doc->origin, line, column,
                     text);
}

const char *
jsonw_type_name (const jsonw_doc_t *doc, const json_t *json)
{
    static const char *const bare[] = {
        [JSON_OBJECT] = "object", [JSON_ARRAY] = "array", [JSON_STRING] = "string",
        [JSON_INTEGER] = "integer", [JSON_REAL] = "real", [JSON_TRUE] = "boolean",
        [JSON_FALSE] = "boolean", [JSON_NULL] = "null",
    };
    static const char *const article[] = {
        [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
        [JSON_STRING] = "a string", [JSON_INTEGER] = "a number",
        [JSON_REAL] = "a number", [JSON_TRUE] = "a boolean",
        [JSON_FALSE] = "a boolean", [JSON_NULL] = "null",
    };
    int type = json ? (int) json_typeof (json) : -1;
    if (type < 0 || type > JSON_NULL)
        return "a value";
    return doc->style == JSONW_CONFIG ? bare[type] : article[type];
}

const char *
jsonw_show (const jsonw_doc_t *doc, char *buf, size_t size, const char *text)
{
    if (doc->style != JSONW_TASKS)
        return tf_quote (buf, size, text);
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        if (n + 8 >= size) {
            n += snprintf (buf + n, size - n, "...");
            break;
        }
        if (*p == '"' || *p == '\'' || *p == '\\')
            n += snprintf (buf + n, size - n, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            n += snprintf (buf + n, size - n, "\\x%02x", *p);
        else
            buf[n++] = (char) *p;
    }
    buf[n < size ? n : size - 1] = '\0';
    return buf;
}

/*  Levenshtein distance between two short strings; keys longer than 63
 *  characters are never close to anything. */
static size_t
edit_distance (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    if (la > 63 || lb > 63)
        return SIZE_MAX;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/*  The allowed keys as a list for a message: "a, b, c" (config) or
 *  "a, b or c" (tasks). */
static const char *
key_list (const char *const *allowed, int with_or, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; allowed[i]; i++) {
        const char *sep = i == 0 ? "" : with_or && !allowed[i + 1] ? " or " : ", ";
        snprintf (buf + strlen (buf), size - strlen (buf), "%s%s", sep, allowed[i]);
    }
    return buf;
}

/*  The message for key, which allowed does not hold. */
static int
fail_unknown (jsonw_t *self, const char *key, const char *const *allowed)
{
    const jsonw_doc_t *doc = self->doc;
    char q[JSONW_QUOTE_LEN], list[256];
    if (doc->style == JSONW_PROTO)
        return jsonw_fail (doc, NULL, "unexpected field \"%s\"", key);
    if (doc->style == JSONW_TASKS)
        return jsonw_fail (doc, jsonw_show (doc, q, sizeof q, key),
                           "unknown field (expected %s)",
                           key_list (allowed, 1, list, sizeof list));
    const char *near = NULL;
    size_t near_dist = SIZE_MAX;
    for (int i = 0; allowed[i]; i++) {
        size_t d = edit_distance (key, allowed[i]);
        if (d < near_dist) {
            near_dist = d;
            near = allowed[i];
        }
    }
    if (near_dist <= 2 && near_dist < strlen (key))
        return jsonw_fail (doc, self->label, "unknown key %s (did you mean \"%s\"?)",
                           jsonw_show (doc, q, sizeof q, key), near);
    return jsonw_fail (doc, self->label, "unknown key %s (expected one of: %s)",
                       jsonw_show (doc, q, sizeof q, key),
                       key_list (allowed, 0, list, sizeof list));
}

int
jsonw_check_keys (jsonw_t *self, const char *const *allowed)
{
    const char *key;
    json_t *value;
    json_object_foreach (self->obj, key, value) {
        int known = 0;
        for (int i = 0; allowed[i] && !known; i++)
            known = strcmp (key, allowed[i]) == 0;
        if (!known)
            return fail_unknown (self, key, allowed);
    }
    return 0;
}

const char *
jsonw_field (const jsonw_t *self, const char *key, char *buf, size_t size)
{
    if (*self->label)
        snprintf (buf, size, "%s%s%s", self->label, self->sep, key);
    else
        snprintf (buf, size, "%s", key);
    return buf;
}

json_t *
jsonw_lookup (jsonw_t *self, const char *key, int required, int *rc)
{
    json_t *value = json_object_get (self->obj, key);
    *rc = 0;
    if (!value && required)
        *rc = jsonw_fail (self->doc, self->label, "missing required key \"%s\"", key);
    return value;
}

/*  The value at key for a getter: NULL with *rc 0 (absent, optional) or
 *  -1 (absent, required: config's message; the wire's says what the
 *  field must be, so it is left to the getter, *rc 1). */
static json_t *
value_at (jsonw_t *self, const char *key, int required, int *rc)
{
    json_t *value = json_object_get (self->obj, key);
    *rc = 0;
    if (!value && required && self->doc->style == JSONW_PROTO)
        *rc = 1;
    else if (!value)
        return jsonw_lookup (self, key, required, rc);
    return value;
}

/*  Does v obey rule? Sets *what to the rule's words for a message. */
static int
obeys (double v, jsonw_rule_t rule, const char **what)
{
    static const char *const words[] = {
        [JSONW_ANY] = "finite", [JSONW_POSITIVE] = "> 0",
        [JSONW_NONNEGATIVE] = ">= 0", [JSONW_FRACTION] = "in (0, 1]",
    };
    *what = words[rule];
    return rule == JSONW_ANY || (rule == JSONW_POSITIVE && v > 0)
        || (rule == JSONW_NONNEGATIVE && v >= 0)
        || (rule == JSONW_FRACTION && v > 0 && v <= 1);
}

int
jsonw_get_number (jsonw_t *self, const char *key, int required, jsonw_rule_t rule,
                  double *out)
{
    int rc;
    json_t *value = value_at (self, key, required, &rc);
    if (!value && rc <= 0)
        return rc;
    const char *what;
    double v = json_number_value (value);
    int ok = obeys (v, rule, &what);
    if (self->doc->style == JSONW_PROTO) {
        if (!json_is_number (value) || !isfinite (v) || !ok)
            return jsonw_fail (self->doc, NULL, "field \"%s\" must be a finite "
                               "number%s%s", key, rule == JSONW_ANY ? "" : " ",
                               rule == JSONW_ANY ? "" : what);
        *out = v;
        return 1;
    }
    char where[JSONW_LABEL_LEN + 32];
    jsonw_field (self, key, where, sizeof where);
    if (!json_is_number (value))
        return jsonw_fail (self->doc, where, "expected a number, got %s",
                           jsonw_type_name (self->doc, value));
    if (!isfinite (v))
        return jsonw_fail (self->doc, where, "must be finite, got %g", v);
    if (!ok)
        return jsonw_fail (self->doc, where, "must be %s, got %g", what, v);
    *out = v;
    return 1;
}

int
jsonw_get_integer (jsonw_t *self, const char *key, int required, long long min,
                   long long max, long long *out)
{
    int rc;
    json_t *value = value_at (self, key, required, &rc);
    if (!value && rc <= 0)
        return rc;
    long long v = json_integer_value (value);
    if (self->doc->style == JSONW_PROTO) {
        if (!json_is_integer (value) || v < min || v > max)
            return jsonw_fail (self->doc, NULL, "field \"%s\" must be an integer in "
                               "[%lld, %lld]", key, min, max);
        *out = v;
        return 1;
    }
    char where[JSONW_LABEL_LEN + 32], want[64];
    jsonw_field (self, key, where, sizeof where);
    if (min == 1 && max == LLONG_MAX)
        snprintf (want, sizeof want, "a positive integer");
    else
        snprintf (want, sizeof want, "an integer in %lld..%lld", min, max);
    if (!json_is_integer (value))
        return jsonw_fail (self->doc, where, "expected %s, got %s", want,
                           jsonw_type_name (self->doc, value));
    if (v < min || v > max)
        return jsonw_fail (self->doc, where, "expected %s, got %lld", want, v);
    *out = v;
    return 1;
}

const char *
jsonw_string_of (const jsonw_doc_t *doc, const char *where, const json_t *value,
                 size_t min_len, size_t max_len)
{
    size_t len = json_string_length (value);
    if (doc->style == JSONW_PROTO) {
        if (json_is_string (value) && len >= min_len && len <= max_len)
            return json_string_value (value);
        if (min_len == 0 && max_len == SIZE_MAX)
            jsonw_fail (doc, NULL, "field \"%s\" must be a string", where);
        else
            jsonw_fail (doc, NULL, "field \"%s\" must be a string of %zu to %zu bytes",
                        where, min_len, max_len);
        return NULL;
    }
    if (!json_is_string (value))
        jsonw_fail (doc, where, "expected a string, got %s",
                    jsonw_type_name (doc, value));
    else if (len < min_len)
        jsonw_fail (doc, where, "must not be empty");
    else if (len > max_len)
        jsonw_fail (doc, where, "is %zu bytes long, more than the limit of %zu", len,
                    max_len);
    else
        return json_string_value (value);
    return NULL;
}

int
jsonw_get_string (jsonw_t *self, const char *key, int required, size_t min_len,
                  size_t max_len, const char **out)
{
    int rc;
    json_t *value = value_at (self, key, required, &rc);
    if (!value && rc <= 0)
        return rc;
    char where[JSONW_LABEL_LEN + 32];
    if (self->doc->style == JSONW_PROTO)
        snprintf (where, sizeof where, "%s", key);
    else
        jsonw_field (self, key, where, sizeof where);
    const char *s = jsonw_string_of (self->doc, where, value, min_len, max_len);
    if (!s)
        return -1;
    *out = s;
    return 1;
}

int
jsonw_get_bool (jsonw_t *self, const char *key, int required, int *out)
{
    int rc;
    json_t *value = value_at (self, key, required, &rc);
    if (!value && rc <= 0)
        return rc;
    char where[JSONW_LABEL_LEN + 32];
    if (self->doc->style == JSONW_PROTO && !json_is_boolean (value))
        return jsonw_fail (self->doc, NULL, "field \"%s\" must be true or false", key);
    if (!json_is_boolean (value))
        return jsonw_fail (self->doc, jsonw_field (self, key, where, sizeof where),
                           "expected true or false, got %s",
                           jsonw_type_name (self->doc, value));
    *out = json_is_true (value);
    return 1;
}

int
jsonw_get_section (jsonw_t *parent, const char *key, int required, jsonw_t *s)
{
    int rc;
    json_t *value = value_at (parent, key, required, &rc);
    if (!value && rc <= 0)
        return rc;
    if (parent->doc->style == JSONW_PROTO && !json_is_object (value))
        return jsonw_fail (parent->doc, NULL, "field \"%s\" must be an object", key);
    jsonw_field (parent, key, s->label, sizeof s->label);
    if (!json_is_object (value))
        return jsonw_fail (parent->doc, s->label, "expected an object, got %s",
                           jsonw_type_name (parent->doc, value));
    s->doc = parent->doc;
    s->obj = value;
    s->sep = ".";
    return 1;
}

int
jsonw_array_of (const jsonw_doc_t *doc, const char *where, const json_t *value,
                size_t min_n, size_t max_n, size_t *n)
{
    if (!json_is_array (value))
        return jsonw_fail (doc, where, "expected an array, got %s",
                           jsonw_type_name (doc, value));
    *n = json_array_size (value);
    if (*n < min_n)
        return jsonw_fail (doc, where, "must not be empty");
    if (*n > max_n)
        return jsonw_fail (doc, where, "has %zu elements, more than the limit of %zu",
                           *n, max_n);
    return 0;
}
