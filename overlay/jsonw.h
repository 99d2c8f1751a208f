/*  jsonw — the one strict JSON walker of the experiment file
 *  (overlay/config.c), the tasks file (overlay/tasks.c) and the wire's
 *  bodies (overlay/proto.c, overlay/proto_run.c).
 *
 *  Each reads a document whose keys it knows, walks its objects itself
 *  and stops at the first error, a message that names the exact place:
 *  an unknown key (JSON_STRICT's rule, with the key named), a missing
 *  one, a value of the wrong type or out of its stated range. The three
 *  readers' messages differ in form, and users and tests rely on each,
 *  so the walker writes them in the reader's style (jsonw_style_t):
 *
 *    config   "path: tree[2] (node "Lab4"): compute: must be > 0, got 0"
 *    tasks    "tasks.jsonl:3: field 'argv': expected an array, got a string"
 *    proto    "HELLO: field "pid" must be an integer in [0, 9223372036854775807]"
 *
 *  A syntax error of the document reads "path:line:col: message"
 *  (jsonw_fail_syntax). Strings handed out are borrowed from the JSON.
 */
#ifndef TF_JSONW_H
#define TF_JSONW_H

#include <jansson.h>
#include <stddef.h>

/*  The longest label of an object in messages ("tree[2] (node "x")"). */
#define JSONW_LABEL_LEN 128
/*  How much of a value from the document a message quotes. */
#define JSONW_QUOTE_LEN 80

typedef enum {
    JSONW_CONFIG,   /* "origin: where: message" */
    JSONW_TASKS,    /* "origin:line: field 'where': message" */
    JSONW_PROTO,    /* "origin: message" (origin the command's name) */
} jsonw_style_t;

/*  A document being read: how its messages read and where they go. */
typedef struct {
    jsonw_style_t style;
    const char *origin;      /* config: the file; tasks: the file (or NULL,
                                the messages name what they are about);
                                proto: the command ("HELLO") */
    unsigned line;           /* tasks: the line being read, 0 for none */
    char *err;
    size_t errlen;
} jsonw_doc_t;

/*  One JSON object being read: its label in messages ("" at the top,
 *  "tasks", "tree[2] (node "Lab4")") and the separator put between the
 *  label and a key to name a field ("tasks.count", "tree[2]: compute"). */
typedef struct {
    jsonw_doc_t *doc;
    json_t *obj;
    char label[JSONW_LABEL_LEN];
    const char *sep;
} jsonw_t;

/*  The rule a number obeys (jsonw_get_number). */
typedef enum {
    JSONW_ANY,           /* any finite number */
    JSONW_POSITIVE,      /* > 0 */
    JSONW_NONNEGATIVE,   /* >= 0 */
    JSONW_FRACTION,      /* in (0, 1] */
} jsonw_rule_t;

/*  Start reading obj, the top object of doc (label ""). */
void jsonw_init (jsonw_t *self, jsonw_doc_t *doc, json_t *obj);

/*  Write the message fmt formats, about where (a field, a label; NULL
 *  or "" for none), into doc's buffer in doc's style; return -1. */
int jsonw_fail (const jsonw_doc_t *doc, const char *where, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/*  A document that is no JSON: "origin:line:col: text"; return -1. */
int jsonw_fail_syntax (const jsonw_doc_t *doc, int line, int column, const char *text);

/*  A JSON value's type the way doc's messages name it after "got":
 *  "real" (config), "a number" (tasks, proto). */
const char *jsonw_type_name (const jsonw_doc_t *doc, const json_t *json);

/*  Copy text into buf for a message, cut short with "..." and its
 *  quotes, backslashes and control bytes escaped; config and proto put
 *  it in double quotes (tf_quote), tasks as it is. Returns buf. */
const char *jsonw_show (const jsonw_doc_t *doc, char *buf, size_t size,
                        const char *text);

/*  Refuse an object with a key outside allowed (NULL-terminated): the
 *  message names the key and, for config, suggests the closest allowed
 *  key or lists them; for tasks it lists them. Returns 0 or -1. */
int jsonw_check_keys (jsonw_t *self, const char *const *allowed);

/*  Name a field of the object for messages: "tasks.count". Returns buf. */
const char *jsonw_field (const jsonw_t *self, const char *key, char *buf, size_t size);

/*  The value at key, or NULL when absent; an absent required key is an
 *  error (-1 in *rc, else 0). */
json_t *jsonw_lookup (jsonw_t *self, const char *key, int required, int *rc);

/*  The getters: read key into *out. Each returns 1 when read, 0 when
 *  absent and optional (*out untouched), -1 with a message when absent
 *  and required, of the wrong type or out of range. */

/*  A finite number (integer or real JSON) obeying rule. */
int jsonw_get_number (jsonw_t *self, const char *key, int required, jsonw_rule_t rule,
                      double *out);

/*  An integer JSON value in [min, max]; a real, even 3.0, is none. */
int jsonw_get_integer (jsonw_t *self, const char *key, int required, long long min,
                       long long max, long long *out);

/*  A string of min_len to max_len bytes. */
int jsonw_get_string (jsonw_t *self, const char *key, int required, size_t min_len,
                      size_t max_len, const char **out);

/*  true or false, into *out as 1 or 0. */
int jsonw_get_bool (jsonw_t *self, const char *key, int required, int *out);

/*  The object at key of parent, opened as s (its label parent's field,
 *  separator "."). */
int jsonw_get_section (jsonw_t *parent, const char *key, int required, jsonw_t *s);

/*  A value, not a key (array elements): value as a string of min_len to
 *  max_len bytes, or NULL with a message about where. */
const char *jsonw_string_of (const jsonw_doc_t *doc, const char *where,
                             const json_t *value, size_t min_len, size_t max_len);

/*  value as an array of min_n to max_n elements, its size in *n. Returns
 *  0, or -1 with a message about where. */
int jsonw_array_of (const jsonw_doc_t *doc, const char *where, const json_t *value,
                    size_t min_n, size_t max_n, size_t *n);

#endif
