/*  tasks_command — the `--command CMD --inputs GLOB` shorthand (see
 *  tasks.h and docs/commands.md): one task per file the globs match, the
 *  command's replacement strings filled in, quoted for sh where a value
 *  needs it, run without a shell when the line is plain words.
 */
#include "overlay/tasks.h"
#include "overlay/tasks_int.h"
#include "overlay/jsonw.h"
#include "overlay/util.h"

#include <czmq.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*  Bytes a substituted value may be left unquoted with. */
#define SHELL_SAFE "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/+-"

/*  The replacement strings of the shorthand (tasks.h). */
static const char *const replacements[] = {"{}", "{/}", "{.}", "{/.}", "{#}", NULL};

/*  A growing string. */
typedef struct {
    char *data;
    size_t len;
    size_t alloc;
} text_t;

static void
text_add (text_t *t, const char *bytes, size_t n)
{
    if (t->len + n + 1 > t->alloc) {
        t->alloc = (t->len + n + 1) * 2;
        t->data = xrealloc (t->data, t->alloc);
    }
    memcpy (t->data + t->len, bytes, n);
    t->len += n;
    t->data[t->len] = '\0';
}

/*  Add value, single-quoted for sh if it has a byte outside SHELL_SAFE. */
static void
text_add_quoted (text_t *t, const char *value, size_t n)
{
    size_t safe = 0;
    while (safe < n && value[safe] && strchr (SHELL_SAFE, value[safe]))
        safe++;
    if (n > 0 && safe == n) {
        text_add (t, value, n);
        return;
    }
    text_add (t, "'", 1);
    for (size_t i = 0; i < n; i++) {
        if (value[i] == '\'')
            text_add (t, "'\\''", 4);
        else
            text_add (t, value + i, 1);
    }
    text_add (t, "'", 1);
}

/*  The length of the replacement string at p, or 0 if none starts there. */
static size_t
replacement_at (const char *p)
{
    for (int i = 0; replacements[i]; i++) {
        size_t n = strlen (replacements[i]);
        if (strncmp (p, replacements[i], n) == 0)
            return n;
    }
    return 0;
}

static int
has_replacement (const char *command)
{
    for (const char *p = command; *p; p++)
        if (replacement_at (p))
            return 1;
    return 0;
}

/*  The command with its replacement strings substituted for the input
 *  staged as name, task number seq (a new string). */
static char *
substitute (const char *command, const char *name, size_t seq)
{
    const char *dot = strrchr (name, '.');
    size_t stem = dot && dot != name ? (size_t) (dot - name) : strlen (name);
    char number[32];
    snprintf (number, sizeof number, "%zu", seq);
    text_t out = {0};
    text_add (&out, "", 0);
    for (const char *p = command; *p;) {
        size_t n = replacement_at (p);
        if (n == 0) {
            text_add (&out, p++, 1);
            continue;
        }
        if (p[1] == '#')
            text_add_quoted (&out, number, strlen (number));
        else if (p[n - 2] == '.')
            text_add_quoted (&out, name, stem);
        else
            text_add_quoted (&out, name, strlen (name));
        p += n;
    }
    return out.data;
}

/*  1 if text is valid UTF-8 (as every JSON string must be). */
static int
is_utf8 (const char *text)
{
    json_t *probe = json_string (text);
    json_decref (probe);
    return probe != NULL;
}

static int
check_command (jsonw_doc_t *ld, const char *command, const char *const *globs,
               size_t nglobs)
{
    if (!command || !*command)
        return jsonw_fail (ld, NULL, "the command is empty");
    if (strlen (command) > TASKS_MAX_STRING)
        return jsonw_fail (ld, NULL, "the command is %zu bytes long, more than the limit "
                           "of %d", strlen (command), TASKS_MAX_STRING);
    if (!is_utf8 (command))
        return jsonw_fail (ld, NULL, "the command is not valid UTF-8");
    if (nglobs == 0 || !globs)
        return jsonw_fail (ld, NULL, "no input files given for the command");
    if (nglobs > TASKS_MAX_TASKS)
        return jsonw_fail (ld, NULL, "%zu globs, more than the limit of %d tasks", nglobs,
                           TASKS_MAX_TASKS);
    for (size_t i = 0; i < nglobs; i++) {
        if (!globs[i] || !*globs[i])
            return jsonw_fail (ld, NULL, "glob %zu is empty", i + 1);
        if (strlen (globs[i]) > TASKS_MAX_STRING)
            return jsonw_fail (ld, NULL, "glob %zu is %zu bytes long, more than the "
                               "limit of %d", i + 1, strlen (globs[i]), TASKS_MAX_STRING);
    }
    return 0;
}

/*  The words of a command line that needs no shell, as argv: only bytes
 *  of SHELL_SAFE and single spaces (no quote, variable, glob, redirection,
 *  pipe, ...), and a first word that is no shell builtin or keyword. NULL
 *  when a shell is needed. Saves a shell per task: a tenth of the CPU of
 *  short tasks. */
static char **
plain_words (const char *line)
{
    static const char *const builtins[] = {
        "cd", "exit", "export", "set", "unset", "ulimit", "umask", "exec", "eval",
        "alias", "read", "wait", "trap", "shift", "return", "break", "continue",
        "if", "for", "while", "until", "case", "time", "source", "type", "command",
        "hash", "getopts", "readonly", "local", "times", NULL};
    size_t n = 0, len = strlen (line);
    for (size_t i = 0; i < len; i++)
        if (line[i] == ' ' ? i == 0 || line[i - 1] == ' ' || i + 1 == len
                           : !strchr (SHELL_SAFE, line[i]))
            return NULL;
        else
            n += line[i] == ' ';
    size_t first = strcspn (line, " ");
    for (int k = 0; builtins[k]; k++)
        if (strlen (builtins[k]) == first && strncmp (line, builtins[k], first) == 0)
            return NULL;
    if (len == 0)
        return NULL;
    char **argv = xcalloc (n + 2, sizeof *argv);
    for (size_t at = 0, w = 0; at < len; w++) {
        size_t l = strcspn (line + at, " ");
        argv[w] = xasprintf ("%.*s", (int) l, line + at);
        at += l + 1;
    }
    return argv;
}

/*  Add the task for one file, path, matched by a glob. */
static int
add_file_task (tasks_t *self, jsonw_doc_t *ld, const char *command, const char *path)
{
    char q[JSONW_QUOTE_LEN];
    if (self->count >= TASKS_MAX_TASKS)
        return jsonw_fail (ld, NULL, "the globs match more than %d files, the limit of "
                           "tasks in one run", TASKS_MAX_TASKS);
    if (strlen (path) > TASKS_MAX_STRING || !is_utf8 (path))
        return jsonw_fail (ld, NULL, "input \"%s\": the path is not UTF-8 of at most %d "
                           "bytes", jsonw_show (ld, q, sizeof q, path), TASKS_MAX_STRING);
    tasks_task_t t = {0};
    tasks_input_t *in = xcalloc (1, sizeof *in);
    t.inputs = in;
    t.id = xasprintf ("%zu", self->count + 1);
    if (stage_input (ld, NULL, path, in) < 0) {
        task_free (&t);
        return -1;
    }
    t.ninputs = 1;
    t.sh = substitute (command, in->name, self->count + 1);
    if (strlen (t.sh) > TASKS_MAX_STRING) {
        int rc = jsonw_fail (ld, NULL, "the command for input \"%s\" is %zu bytes long, "
                             "more than the limit of %d",
                             jsonw_show (ld, q, sizeof q, path), strlen (t.sh),
                             TASKS_MAX_STRING);
        task_free (&t);
        return rc;
    }
    t.argv = plain_words (t.sh);
    if (t.argv) {
        free ((char *) t.sh);
        t.sh = NULL;
    }
    add_task (self, &t);
    return 0;
}

static int
by_bytes (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/*  Add the task for path unless it is not a regular file (skipped) or
 *  seen holds it already; count it in *regular if it is one. */
static int
add_match (tasks_t *self, jsonw_doc_t *ld, const char *command, const char *path,
           zhashx_t *seen, size_t *regular)
{
    struct stat st;
    if (stat (path, &st) < 0 || !S_ISREG (st.st_mode))
        return 0;
    (*regular)++;
    if (zhashx_lookup (seen, path))
        return 0;
    zhashx_insert (seen, path, (void *) 1);
    return add_file_task (self, ld, command, path);
}

/*  Add a task for every regular file pattern matches that seen does not
 *  hold yet, in bytewise order. A pattern that names a regular file as it
 *  is stands for that file alone, even with '[' or '*' in its name: it is
 *  what the shell passes for a glob it expanded itself. */
static int
expand_glob (tasks_t *self, jsonw_doc_t *ld, const char *command, const char *pattern,
             zhashx_t *seen)
{
    char q[JSONW_QUOTE_LEN];
    size_t regular = 0;
    struct stat st;
    if (stat (pattern, &st) == 0 && S_ISREG (st.st_mode))
        return add_match (self, ld, command, pattern, seen, &regular);
    glob_t g;
    memset (&g, 0, sizeof g);
    int rc = glob (pattern, GLOB_NOSORT, NULL, &g);
    if (rc != 0 && rc != GLOB_NOMATCH) {
        globfree (&g);
        return jsonw_fail (ld, NULL, "glob \"%s\": cannot expand it (%s)",
                           jsonw_show (ld, q, sizeof q, pattern),
                           rc == GLOB_NOSPACE ? "out of memory" : "read error");
    }
    rc = 0;
    if (g.gl_pathc > 0)
        qsort (g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, by_bytes);
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        rc = add_match (self, ld, command, g.gl_pathv[i], seen, &regular);
    globfree (&g);
    if (rc == 0 && regular == 0)
        rc = jsonw_fail (ld, NULL, "glob \"%s\" matches no regular file",
                         jsonw_show (ld, q, sizeof q, pattern));
    return rc;
}

tasks_t *
tasks_from_command (const char *command, const char *const *globs, size_t nglobs,
                    char *err, size_t errlen)
{
    jsonw_doc_t ld = {.style = JSONW_TASKS, .err = err, .errlen = errlen};
    if (check_command (&ld, command, globs, nglobs) < 0)
        return NULL;
    char *full = has_replacement (command) ? xstrdup (command)
                                           : xasprintf ("%s {}", command);
    tasks_t *self = tasks_new ();
    zhashx_t *seen = zhashx_new ();
    int rc = 0;
    for (size_t i = 0; i < nglobs && rc == 0; i++)
        rc = expand_glob (self, &ld, full, globs[i], seen);
    zhashx_destroy (&seen);
    free (full);
    if (rc < 0)
        tasks_destroy (&self);
    return self;
}
