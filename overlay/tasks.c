/*  tasks — load and check command tasks (see tasks.h and docs/commands.md).
 *
 *  The loader reads one line at a time (overlay/lines.c), so a file of a
 *  million tasks is never held in memory as text, and walks each line's
 *  JSON object itself, so that every message names the line and the field
 *  and the first error found is the one reported. Ids are indexed in a
 *  zhashx whose keys are borrowed from the tasks. The `--command`
 *  shorthand's tasks are made in overlay/tasks_command.c.
 */
#include "overlay/tasks.h"
#include "overlay/tasks_int.h"
#include "overlay/jsonw.h"
#include "overlay/lines.h"
#include "overlay/util.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>



static const char *const task_fields[] = {
    "id", "argv", "sh", "inputs", "outputs", "env", "timeout_s", NULL
};

/*  Free what a task owns (also a task left half-built by an error). */
void
task_free (tasks_task_t *t)
{
    free ((char *) t->id);
    for (size_t i = 0; t->argv && t->argv[i]; i++)
        free (t->argv[i]);
    free ((char **) t->argv);
    free ((char *) t->sh);
    for (size_t i = 0; i < t->ninputs; i++)
        free ((char *) t->inputs[i].path);   /* name points into path */
    free ((tasks_input_t *) t->inputs);
    for (size_t i = 0; i < t->noutputs; i++)
        free ((char *) t->outputs[i]);
    free ((char **) t->outputs);
    for (size_t i = 0; i < t->nenv; i++)
        free (t->env[i]);
    free ((char **) t->env);
    memset (t, 0, sizeof *t);
}

tasks_t *
tasks_new (void)
{
    tasks_t *self = xcalloc (1, sizeof *self);
    self->index = zhashx_new ();
    zhashx_set_key_duplicator (self->index, NULL);
    zhashx_set_key_destructor (self->index, NULL);
    return self;
}

void
tasks_destroy (tasks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    tasks_t *self = *self_p;
    zhashx_destroy (&self->index);
    for (size_t i = 0; i < self->count; i++)
        task_free (&self->tasks[i]);
    free (self->tasks);
    free (self);
    *self_p = NULL;
}

/*  Append a complete task (taking what it owns) and index its id, which
 *  the caller has checked is new. */
void
add_task (tasks_t *self, tasks_task_t *t)
{
    if (self->count == self->alloc) {
        self->alloc = self->alloc ? self->alloc * 2 : 64;
        self->tasks = xrealloc (self->tasks, self->alloc * sizeof *self->tasks);
    }
    self->tasks[self->count] = *t;
    self->count++;
    zhashx_insert (self->index, t->id, (void *) (uintptr_t) self->count);
    memset (t, 0, sizeof *t);
}

/*  1 if id is 1..TASKS_MAX_ID bytes of [A-Za-z0-9._-] and not "." or "..". */
static int
valid_id (const char *id)
{
    size_t len = strlen (id);
    if (len < 1 || len > TASKS_MAX_ID || streq (id, ".") || streq (id, ".."))
        return 0;
    return strspn (id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789._-") == len;
}

static int
parse_id (tasks_t *self, jsonw_doc_t *ld, json_t *obj, tasks_task_t *t)
{
    json_t *value = json_object_get (obj, "id");
    if (!value)
        return jsonw_fail (ld, "id", "missing (every task needs one)");
    const char *id = jsonw_string_of (ld, "id", value, 1, TASKS_MAX_STRING);
    if (!id)
        return -1;
    char q[JSONW_QUOTE_LEN];
    if (!valid_id (id))
        return jsonw_fail (ld, "id", "\"%s\" is not 1 to %d characters from "
                           "[A-Za-z0-9._-] other than \".\" and \"..\"",
                           jsonw_show (ld, q, sizeof q, id), TASKS_MAX_ID);
    ssize_t first = tasks_find (self, id);
    if (first >= 0)
        return jsonw_fail (ld, "id", "duplicate id \"%s\" (first on line %u)", id,
                           self->tasks[first].line);
    t->id = xstrdup (id);
    return 0;
}

static int
parse_argv (jsonw_doc_t *ld, const json_t *value, tasks_task_t *t)
{
    size_t n;
    if (jsonw_array_of (ld, "argv", value, 1, TASKS_MAX_ARGV, &n) < 0)
        return -1;
    char **argv = xcalloc (n + 1, sizeof *argv);
    t->argv = argv;
    for (size_t i = 0; i < n; i++) {
        char field[32];
        snprintf (field, sizeof field, "argv[%zu]", i);
        /*  The program may not be "", its arguments may. */
        const char *arg = jsonw_string_of (ld, field, json_array_get (value, i), i == 0,
                                           TASKS_MAX_STRING);
        if (!arg)
            return -1;
        argv[i] = xstrdup (arg);
    }
    return 0;
}

static int
parse_command (jsonw_doc_t *ld, json_t *obj, tasks_task_t *t)
{
    json_t *argv = json_object_get (obj, "argv");
    json_t *sh = json_object_get (obj, "sh");
    if (argv && sh)
        return jsonw_fail (ld, "sh", "a task has either 'argv' or 'sh', not both");
    if (!argv && !sh)
        return jsonw_fail (ld, "argv", "missing (a task needs 'argv' or 'sh')");
    if (argv)
        return parse_argv (ld, argv, t);
    const char *script = jsonw_string_of (ld, "sh", sh, 1, TASKS_MAX_STRING);
    if (!script)
        return -1;
    t->sh = xstrdup (script);
    return 0;
}

/*  The absolute path of the file at path, with its directory resolved
 *  (symbolic links, "..") and its base name as given, since that is the
 *  name it is staged under. NULL with errno set if the directory cannot
 *  be resolved. */
static char *
absolute (const char *path)
{
    const char *slash = strrchr (path, '/');
    /*  The directory with its last '/': "/" for "/x", "a/" for "a/x". */
    char *dir = slash ? xasprintf ("%.*s", (int) (slash - path + 1), path)
                      : xstrdup (".");
    char *real = realpath (dir, NULL);
    free (dir);
    if (!real)
        return NULL;
    char *abs = xasprintf ("%s%s%s", real, streq (real, "/") ? "" : "/",
                           slash ? slash + 1 : path);
    free (real);
    return abs;
}

/*  Check the file at path is a readable regular file whose base name is
 *  not reserved, and fill in with its absolute path, name and size.
 *  Messages go to field (NULL: none, they name the path). */
int
stage_input (jsonw_doc_t *ld, const char *field, const char *path, tasks_input_t *in)
{
    char q[JSONW_QUOTE_LEN];
    struct stat st;
    if (stat (path, &st) < 0)
        return jsonw_fail (ld, field, "cannot use input \"%s\": %s",
                           jsonw_show (ld, q, sizeof q, path), strerror (errno));
    if (!S_ISREG (st.st_mode))
        return jsonw_fail (ld, field, "input \"%s\" is not a regular file",
                           jsonw_show (ld, q, sizeof q, path));
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return jsonw_fail (ld, field, "cannot read input \"%s\": %s",
                           jsonw_show (ld, q, sizeof q, path), strerror (errno));
    close (fd);
    char *abs = absolute (path);
    if (!abs)
        return jsonw_fail (ld, field, "cannot resolve the directory of input \"%s\": %s",
                           jsonw_show (ld, q, sizeof q, path), strerror (errno));
    const char *name = strrchr (abs, '/') + 1;
    if (streq (name, "stdout") || streq (name, "stderr")) {
        jsonw_fail (ld, field, "input \"%s\" would be staged as \"%s\", the name of a "
                    "captured stream", jsonw_show (ld, q, sizeof q, path), name);
        free (abs);
        return -1;
    }
    in->path = abs;
    in->name = name;
    in->size = (uint64_t) st.st_size;
    return 0;
}

static int
by_name (const void *a, const void *b, void *arg)
{
    const char *const *names = arg;
    size_t i = *(const size_t *) a, j = *(const size_t *) b;
    int c = strcmp (names[i], names[j]);
    return c ? c : (i > j) - (i < j);
}

/*  Find two equal strings among names[0..n): return 1 with their indices
 *  in *first < *second, or 0. O(n log n). */
static int
find_duplicate (const char **names, size_t n, size_t *first, size_t *second)
{
    if (n < 2)
        return 0;
    size_t *order = xmalloc (n * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r (order, n, sizeof *order, by_name, names);
    int found = 0;
    for (size_t i = 1; i < n && !found; i++) {
        if (streq (names[order[i - 1]], names[order[i]])) {
            *first = order[i - 1];
            *second = order[i];
            found = 1;
        }
    }
    free (order);
    return found;
}

static int
check_input_names (jsonw_doc_t *ld, const tasks_task_t *t)
{
    const char **names = xcalloc (t->ninputs, sizeof *names);
    for (size_t i = 0; i < t->ninputs; i++)
        names[i] = t->inputs[i].name;
    size_t a, b;
    int dup = find_duplicate (names, t->ninputs, &a, &b);
    free (names);
    if (!dup)
        return 0;
    char field[32], q[JSONW_QUOTE_LEN];
    snprintf (field, sizeof field, "inputs[%zu]", b);
    return jsonw_fail (ld, field, "base name \"%s\" is also that of inputs[%zu]: both "
                       "would be staged as the same file",
                       jsonw_show (ld, q, sizeof q, t->inputs[b].name), a);
}

static int
parse_inputs (jsonw_doc_t *ld, json_t *obj, tasks_task_t *t)
{
    json_t *value = json_object_get (obj, "inputs");
    size_t n;
    if (!value)
        return 0;
    if (jsonw_array_of (ld, "inputs", value, 0, TASKS_MAX_INPUTS, &n) < 0)
        return -1;
    tasks_input_t *inputs = xcalloc (n, sizeof *inputs);
    t->inputs = inputs;
    for (size_t i = 0; i < n; i++) {
        char field[32];
        snprintf (field, sizeof field, "inputs[%zu]", i);
        const char *path = jsonw_string_of (ld, field, json_array_get (value, i), 1,
                                            TASKS_MAX_STRING);
        if (!path || stage_input (ld, field, path, &inputs[i]) < 0)
            return -1;
        t->ninputs = i + 1;
    }
    return check_input_names (ld, t);
}

/*  Check an output path: relative, every component non-empty and neither
 *  "." nor "..", and not a captured stream or below one. */
static int
check_output_path (jsonw_doc_t *ld, const char *field, const char *path)
{
    char q[JSONW_QUOTE_LEN];
    jsonw_show (ld, q, sizeof q, path);
    if (path[0] == '/')
        return jsonw_fail (ld, field, "\"%s\" is absolute: outputs are paths relative to "
                           "the work directory", q);
    for (const char *p = path;;) {
        const char *end = strchr (p, '/');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        if (len == 0)
            return jsonw_fail (ld, field, "\"%s\" has an empty component", q);
        if (len == 1 && p[0] == '.')
            return jsonw_fail (ld, field, "\"%s\" has a '.' component", q);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return jsonw_fail (ld, field, "\"%s\" has a '..' component: outputs stay in "
                               "the work directory", q);
        if (p == path && ((len == 6 && strncmp (p, "stdout", 6) == 0)
                          || (len == 6 && strncmp (p, "stderr", 6) == 0)))
            return jsonw_fail (ld, field, "\"%s\" is reserved: stdout and stderr are the "
                               "captured streams, always brought back", q);
        if (!end)
            return 0;
        p = end + 1;
    }
}

static int
parse_outputs (jsonw_doc_t *ld, json_t *obj, tasks_task_t *t)
{
    json_t *value = json_object_get (obj, "outputs");
    size_t n;
    if (!value)
        return 0;
    t->outputs_given = 1;
    if (jsonw_array_of (ld, "outputs", value, 0, TASKS_MAX_OUTPUTS, &n) < 0)
        return -1;
    const char **outputs = xcalloc (n, sizeof *outputs);
    t->outputs = outputs;
    for (size_t i = 0; i < n; i++) {
        char field[32];
        snprintf (field, sizeof field, "outputs[%zu]", i);
        const char *path = jsonw_string_of (ld, field, json_array_get (value, i), 1,
                                            TASKS_MAX_STRING);
        if (!path || check_output_path (ld, field, path) < 0)
            return -1;
        outputs[i] = xstrdup (path);
        t->noutputs = i + 1;
    }
    size_t a, b;
    if (!find_duplicate (outputs, n, &a, &b))
        return 0;
    char field[32], q[JSONW_QUOTE_LEN];
    snprintf (field, sizeof field, "outputs[%zu]", b);
    return jsonw_fail (ld, field, "\"%s\" is also outputs[%zu]",
                       jsonw_show (ld, q, sizeof q, outputs[b]), a);
}

/*  1 if key is a shell variable name of at most TASKS_MAX_STRING bytes. */
static int
valid_variable (const char *key)
{
    size_t len = strlen (key);
    if (len < 1 || len > TASKS_MAX_STRING || (key[0] >= '0' && key[0] <= '9'))
        return 0;
    return strspn (key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789_") == len;
}

static int
parse_env (jsonw_doc_t *ld, json_t *obj, tasks_task_t *t)
{
    json_t *value = json_object_get (obj, "env");
    if (!value)
        return 0;
    if (!json_is_object (value))
        return jsonw_fail (ld, "env", "expected an object, got %s",
                           jsonw_type_name (ld, value));
    size_t n = json_object_size (value);
    if (n > TASKS_MAX_ENV)
        return jsonw_fail (ld, "env", "has %zu entries, more than the limit of %d", n,
                           TASKS_MAX_ENV);
    char **env = xcalloc (n + 1, sizeof *env);
    t->env = env;
    const char *key;
    json_t *v;
    json_object_foreach (value, key, v) {
        char q[JSONW_QUOTE_LEN], field[JSONW_QUOTE_LEN + 8];
        jsonw_show (ld, q, sizeof q, key);
        if (!valid_variable (key))
            return jsonw_fail (ld, "env", "\"%s\" is not a shell variable name "
                               "([A-Za-z_][A-Za-z0-9_]*)", q);
        snprintf (field, sizeof field, "env.%s", q);
        const char *text = jsonw_string_of (ld, field, v, 0, TASKS_MAX_STRING);
        if (!text)
            return -1;
        env[t->nenv++] = xasprintf ("%s=%s", key, text);
    }
    return 0;
}

static int
parse_timeout (jsonw_doc_t *ld, json_t *obj, tasks_task_t *t)
{
    json_t *value = json_object_get (obj, "timeout_s");
    if (!value)
        return 0;
    if (!json_is_number (value))
        return jsonw_fail (ld, "timeout_s", "expected a number of seconds, got %s",
                           jsonw_type_name (ld, value));
    double v = json_number_value (value);
    if (!isfinite (v) || !(v > 0) || v > TASKS_MAX_TIMEOUT_S)
        return jsonw_fail (ld, "timeout_s", "must be > 0 and at most %.0f (7 days), "
                           "got %g", TASKS_MAX_TIMEOUT_S, v);
    t->timeout_s = v;
    return 0;
}

/*  Check one task object and add it; on error nothing is added. */
static int
parse_task (tasks_t *self, jsonw_doc_t *ld, json_t *obj)
{
    tasks_task_t t = {.line = ld->line};
    jsonw_t w;
    jsonw_init (&w, ld, obj);
    if (jsonw_check_keys (&w, task_fields) < 0 || parse_id (self, ld, obj, &t) < 0
        || parse_command (ld, obj, &t) < 0 || parse_inputs (ld, obj, &t) < 0
        || parse_outputs (ld, obj, &t) < 0 || parse_env (ld, obj, &t) < 0
        || parse_timeout (ld, obj, &t) < 0) {
        task_free (&t);
        return -1;
    }
    add_task (self, &t);
    return 0;
}

static int
blank (const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r')
            return 0;
    return 1;
}

static int
parse_line (tasks_t *self, jsonw_doc_t *ld, const char *text, size_t len)
{
    if (blank (text, len))
        return 0;
    if (self->count >= TASKS_MAX_TASKS)
        return jsonw_fail (ld, NULL, "more than %d tasks, the limit of one run",
                           TASKS_MAX_TASKS);
    json_error_t jerr;
    json_t *obj = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        return jsonw_fail_syntax (ld, (int) ld->line,
                                  jerr.column, jerr.text);
    int rc = json_is_object (obj)
                 ? parse_task (self, ld, obj)
                 : jsonw_fail (ld, NULL, "expected a task (a JSON object), got %s",
                               jsonw_type_name (ld, obj));
    json_decref (obj);
    return rc;
}

/*  Load every line of the reader; name prefixes messages. */
static tasks_t *
load_lines (lines_t *lines, const char *name, char *err, size_t errlen)
{
    tasks_t *self = tasks_new ();
    jsonw_doc_t ld = {.style = JSONW_TASKS, .origin = name, .err = err, .errlen = errlen};
    for (;;) {
        const char *text = NULL;
        size_t len = 0;
        lines_status_t status = lines_next (lines, &text, &len);
        int read_errno = errno;
        ld.line = lines_number (lines);
        int rc = 0;
        if (status == LINES_END)
            return self;
        if (status == LINES_LINE || status == LINES_TAIL)
            rc = parse_line (self, &ld, text, len);
        else if (status == LINES_TOO_LONG)
            rc = jsonw_fail (&ld, NULL, "line longer than %d bytes, the limit",
                             TASKS_MAX_LINE);
        else if (status == LINES_TOO_MANY)
            rc = jsonw_fail (&ld, NULL, "more than %u lines", LINES_MAX_COUNT);
        else
            rc = tf_error (err, errlen, "%s: cannot read: %s", name,
                           strerror (read_errno));
        if (rc < 0) {
            tasks_destroy (&self);
            return NULL;
        }
    }
}

tasks_t *
tasks_load_file (const char *path, char *err, size_t errlen)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
        return NULL;
    }
    lines_t *lines = lines_new_fd (fd, TASKS_MAX_LINE);
    tasks_t *self = load_lines (lines, path, err, errlen);
    lines_destroy (&lines);
    close (fd);
    return self;
}

tasks_t *
tasks_load_buffer (const char *data, size_t len, const char *name_for_errors,
                   char *err, size_t errlen)
{
    lines_t *lines = lines_new_buffer (data, len, TASKS_MAX_LINE);
    tasks_t *self = load_lines (lines, name_for_errors ? name_for_errors : "<tasks>",
                                err, errlen);
    lines_destroy (&lines);
    return self;
}


size_t
tasks_count (const tasks_t *self)
{
    return self->count;
}

const tasks_task_t *
tasks_get (const tasks_t *self, size_t i)
{
    return i < self->count ? &self->tasks[i] : NULL;
}

uint64_t
tasks_input_bytes (const tasks_t *self, size_t i)
{
    const tasks_task_t *t = tasks_get (self, i);
    uint64_t sum = 0;
    for (size_t k = 0; t && k < t->ninputs; k++) {
        if (t->inputs[k].size > UINT64_MAX - sum)
            return UINT64_MAX;
        sum += t->inputs[k].size;
    }
    return sum;
}

ssize_t
tasks_find (const tasks_t *self, const char *id)
{
    uintptr_t slot = (uintptr_t) zhashx_lookup (self->index, id);
    return slot ? (ssize_t) slot - 1 : -1;
}

static json_t *
strings_json (const char *const *strings, size_t n)
{
    json_t *array = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (array, json_string (strings[i]));
    return array;
}

json_t *
tasks_spec_json (const tasks_t *self, size_t i)
{
    const tasks_task_t *t = tasks_get (self, i);
    if (!t)
        return NULL;
    json_t *spec = json_object ();
    json_object_set_new (spec, "id", json_string (t->id));
    if (t->argv) {
        size_t argc = 0;
        while (t->argv[argc])
            argc++;
        json_object_set_new (spec, "argv",
                             strings_json ((const char *const *) t->argv, argc));
    } else
        json_object_set_new (spec, "sh", json_string (t->sh));
    json_t *env = json_object ();
    for (size_t k = 0; k < t->nenv; k++) {
        const char *eq = strchr (t->env[k], '=');
        json_object_setn_new (env, t->env[k], (size_t) (eq - t->env[k]),
                              json_string (eq + 1));
    }
    json_object_set_new (spec, "env", env);
    json_object_set_new (spec, "timeout_s",
                         t->timeout_s > 0 ? json_real (t->timeout_s) : json_null ());
    json_object_set_new (spec, "outputs", t->outputs_given
                                              ? strings_json (t->outputs, t->noutputs)
                                              : json_null ());
    json_t *inputs = json_array ();
    for (size_t k = 0; k < t->ninputs; k++)
        json_array_append_new (inputs, json_pack ("{s:s, s:I}", "name",
                                                  t->inputs[k].name, "size",
                                                  (json_int_t) t->inputs[k].size));
    json_object_set_new (spec, "inputs", inputs);
    return spec;
}
