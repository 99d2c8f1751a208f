/*  test_tasks — the tasks loader and the --command shorthand: what a
 *  user's tasks file becomes, every rule of the format with the exact
 *  message (FILE:LINE: field 'NAME': ...), the limits, the replacement
 *  strings with their quoting, the order of glob matches, and the spec a
 *  node is sent. Input files live in a temporary directory per test;
 *  "@" in a test's text stands for that directory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "overlay/tasks.h"
#include "overlay/util.h"
#include "tests/helpers.h"

typedef struct {
    char dir[64];
    char err[TF_ERRLEN];
    tasks_t *tasks;
} fixture_t;

/*  The files every test may use: name and content. */
static const char *const files[][2] = {
    {"a.txt", "abc"},
    {"b.dat", "hello"},
    {"sub/a.txt", "again"},
    {"x y's.txt", "q"},
    {".hidden", ""},
    {"noext", "1"},
    {"arch.tar.gz", "22"},
    {"stdout", "reserved"},
    {"B", "upper"},
    {"_", "under"},
    {"a", "lower"},
    {"p[1].txt", "brackets"},
    {"p1.txt", "plain"},
};

/*  tests/helpers.h's, under the name the tests below use. */
static void
write_file (const char *path, const char *content)
{
    test_write_file (path, content);
}

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_tasks");
    char *path = xasprintf ("%s/sub", f->dir);
    mkdir (path, 0755);
    free (path);
    path = xasprintf ("%s/d.txt", f->dir);   /* a directory a glob matches */
    mkdir (path, 0755);
    free (path);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        path = xasprintf ("%s/%s", f->dir, files[i][0]);
        write_file (path, files[i][1]);
        free (path);
    }
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    tasks_destroy (&f->tasks);
    assert_null (f->tasks);
    test_remove_dir (f->dir);
    free (f);
    return 0;
}

/*  text with every "@" replaced by the fixture's directory (a new string). */
static char *
at_dir (const fixture_t *f, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '@' ? strlen (f->dir) : 1;
    char *out = xmalloc (n + 1), *q = out;
    for (const char *p = text; *p; p++) {
        if (*p == '@')
            q = stpcpy (q, f->dir);
        else
            *q++ = *p;
    }
    *q = '\0';
    return out;
}

/*  Load text (with "@" expanded) as the file "t.jsonl" into f->tasks. */
static tasks_t *
load (fixture_t *f, const char *text)
{
    char *data = at_dir (f, text);
    tasks_destroy (&f->tasks);
    f->err[0] = '\0';
    f->tasks = tasks_load_buffer (data, strlen (data), "t.jsonl", f->err, sizeof f->err);
    free (data);
    return f->tasks;
}

/*  Loading text must fail with exactly message (both with "@" expanded). */
static void
expect_error (fixture_t *f, const char *text, const char *message)
{
    if (load (f, text))
        fail_msg ("loaded, expected: %s\n  text: %s", message, text);
    char *want = at_dir (f, message);
    if (strcmp (f->err, want) != 0)
        fail_msg ("for %s\n  got:  %s\n  want: %s", text, f->err, want);
    free (want);
}

/*  Loading text must succeed (and give the tasks). */
static tasks_t *
expect_load (fixture_t *f, const char *text)
{
    if (!load (f, text))
        fail_msg ("refused: %s\n  text: %s", f->err, text);
    return f->tasks;
}

static void
test_a_full_task_loads_every_field (void **state)
{
    fixture_t *f = *state;
    expect_load (f, "\n"
                    "{\"id\": \"t-1.x_y\", \"argv\": [\"gzip\", \"\", \"-9\"],"
                    " \"inputs\": [\"@/a.txt\", \"@/b.dat\"], \"outputs\": [\"o/a.gz\"],"
                    " \"env\": {\"LC_ALL\": \"C\", \"_X1\": \"\"},"
                    " \"timeout_s\": 2.5}\n");
    assert_int_equal (tasks_count (f->tasks), 1);
    const tasks_task_t *t = tasks_get (f->tasks, 0);
    assert_string_equal (t->id, "t-1.x_y");
    assert_string_equal (t->argv[0], "gzip");
    assert_string_equal (t->argv[1], "");
    assert_string_equal (t->argv[2], "-9");
    assert_null (t->argv[3]);
    assert_null (t->sh);
    assert_int_equal (t->ninputs, 2);
    char *path = at_dir (f, "@/b.dat");
    char *real = realpath (path, NULL);
    assert_string_equal (t->inputs[1].path, real);
    assert_true (t->inputs[1].path[0] == '/');
    free (real);
    free (path);
    assert_string_equal (t->inputs[0].name, "a.txt");
    assert_int_equal (t->inputs[0].size, 3);
    assert_int_equal (t->inputs[1].size, 5);
    assert_int_equal (tasks_input_bytes (f->tasks, 0), 8);
    assert_int_equal (t->outputs_given, 1);
    assert_int_equal (t->noutputs, 1);
    assert_string_equal (t->outputs[0], "o/a.gz");
    assert_int_equal (t->nenv, 2);
    assert_string_equal (t->env[0], "LC_ALL=C");
    assert_string_equal (t->env[1], "_X1=");
    assert_true (t->timeout_s == 2.5);
    assert_int_equal (t->line, 2);
    assert_null (tasks_get (f->tasks, 1));
}

static void
test_a_shell_task_has_defaults (void **state)
{
    fixture_t *f = *state;
    expect_load (f, "{\"id\": \"s\", \"sh\": \"echo hi > out\"}");   /* no '\n' */
    const tasks_task_t *t = tasks_get (f->tasks, 0);
    assert_null (t->argv);
    assert_string_equal (t->sh, "echo hi > out");
    assert_int_equal (t->ninputs, 0);
    assert_int_equal (t->outputs_given, 0);
    assert_int_equal (t->noutputs, 0);
    assert_int_equal (t->nenv, 0);
    assert_true (t->timeout_s == 0);
    assert_int_equal (t->line, 1);
    assert_int_equal (tasks_input_bytes (f->tasks, 0), 0);
    /*  An empty list of outputs is given: only the captured streams. */
    expect_load (f, "{\"id\": \"s\", \"sh\": \"true\", \"outputs\": []}\n");
    assert_int_equal (tasks_get (f->tasks, 0)->outputs_given, 1);
    assert_int_equal (tasks_get (f->tasks, 0)->noutputs, 0);
}

static void
test_blank_lines_are_skipped_and_counted (void **state)
{
    fixture_t *f = *state;
    expect_load (f, "\n  \t\r\n{\"id\": \"a\", \"sh\": \"x\"}\r\n\n"
                    "{\"id\": \"b\", \"sh\": \"y\"}\n\n");
    assert_int_equal (tasks_count (f->tasks), 2);
    assert_int_equal (tasks_get (f->tasks, 0)->line, 3);
    assert_int_equal (tasks_get (f->tasks, 1)->line, 5);
    expect_load (f, "");
    assert_int_equal (tasks_count (f->tasks), 0);
}

static void
test_json_errors_name_line_and_column (void **state)
{
    fixture_t *f = *state;
    expect_error (f, "{\"id\": \"a\", \"sh\": \"x\"}\n{\"id\": \"b\", \"sh\": }\n",
                  "t.jsonl:2:19: unexpected token near '}'");
    expect_error (f, "\n\n{\"id\": \"a\", \"sh\": \"x\", \"sh\": \"y\"}\n",
                  "t.jsonl:3:27: duplicate object key near '\"sh\"'");
    expect_error (f, "{\"id\": \"a\", \"sh\": \"x\"} {}\n",
                  "t.jsonl:1:24: end of file expected near '{'");
    expect_error (f, "[\"a\"]\n", "t.jsonl:1: expected a task (a JSON object), "
                                  "got an array");
}

static void
test_an_unknown_field_is_named (void **state)
{
    fixture_t *f = *state;
    expect_error (f, "{\"id\": \"a\", \"sh\": \"x\", \"timeout\": 3}\n",
                  "t.jsonl:1: field 'timeout': unknown field (expected id, argv, sh, "
                  "inputs, outputs, env or timeout_s)");
    expect_error (f, "{\"i'd\\n\": 1}\n",
                  "t.jsonl:1: field 'i\\'d\\x0a': unknown field (expected id, argv, "
                  "sh, inputs, outputs, env or timeout_s)");
}

static void
test_id_rules (void **state)
{
    fixture_t *f = *state;
    static const char *const cases[][2] = {
        {"{\"sh\": \"x\"}", "t.jsonl:1: field 'id': missing (every task needs one)"},
        {"{\"id\": 7, \"sh\": \"x\"}",
         "t.jsonl:1: field 'id': expected a string, got a number"},
        {"{\"id\": \"\", \"sh\": \"x\"}", "t.jsonl:1: field 'id': must not be empty"},
        {"{\"id\": \"a/b\", \"sh\": \"x\"}",
         "t.jsonl:1: field 'id': \"a/b\" is not 1 to 128 characters from "
         "[A-Za-z0-9._-] other than \".\" and \"..\""},
        {"{\"id\": \"..\", \"sh\": \"x\"}",
         "t.jsonl:1: field 'id': \"..\" is not 1 to 128 characters from "
         "[A-Za-z0-9._-] other than \".\" and \"..\""},
        {"{\"id\": \".\", \"sh\": \"x\"}",
         "t.jsonl:1: field 'id': \".\" is not 1 to 128 characters from "
         "[A-Za-z0-9._-] other than \".\" and \"..\""},
        {"{\"id\": \"a b\", \"sh\": \"x\"}",
         "t.jsonl:1: field 'id': \"a b\" is not 1 to 128 characters from "
         "[A-Za-z0-9._-] other than \".\" and \"..\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error (f, cases[i][0], cases[i][1]);
    /*  128 characters is the longest id, 129 one too many. */
    char line[400], id[130];
    memset (id, 'x', 128);
    id[128] = '\0';
    snprintf (line, sizeof line, "{\"id\": \"%s\", \"sh\": \"x\"}", id);
    expect_load (f, line);
    strcat (id, "y");
    snprintf (line, sizeof line, "{\"id\": \"%s\", \"sh\": \"x\"}", id);
    assert_null (load (f, line));
    assert_non_null (strstr (f->err, "t.jsonl:1: field 'id': \"xxxx"));
}

static void
test_a_duplicate_id_names_both_lines (void **state)
{
    fixture_t *f = *state;
    expect_error (f, "{\"id\": \"a\", \"sh\": \"x\"}\n{\"id\": \"b\", \"sh\": \"x\"}\n"
                     "\n{\"id\": \"a\", \"sh\": \"y\"}\n",
                  "t.jsonl:4: field 'id': duplicate id \"a\" (first on line 1)");
}

static void
test_argv_and_sh_rules (void **state)
{
    fixture_t *f = *state;
    static const char *const cases[][2] = {
        {"{\"id\": \"a\"}",
         "t.jsonl:1: field 'argv': missing (a task needs 'argv' or 'sh')"},
        {"{\"id\": \"a\", \"argv\": [\"x\"], \"sh\": \"x\"}",
         "t.jsonl:1: field 'sh': a task has either 'argv' or 'sh', not both"},
        {"{\"id\": \"a\", \"argv\": []}", "t.jsonl:1: field 'argv': must not be empty"},
        {"{\"id\": \"a\", \"argv\": \"ls\"}",
         "t.jsonl:1: field 'argv': expected an array, got a string"},
        {"{\"id\": \"a\", \"argv\": [\"ls\", 3]}",
         "t.jsonl:1: field 'argv[1]': expected a string, got a number"},
        {"{\"id\": \"a\", \"argv\": [\"\", \"x\"]}",
         "t.jsonl:1: field 'argv[0]': must not be empty"},
        {"{\"id\": \"a\", \"sh\": \"\"}", "t.jsonl:1: field 'sh': must not be empty"},
        {"{\"id\": \"a\", \"sh\": [\"ls\"]}",
         "t.jsonl:1: field 'sh': expected a string, got an array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error (f, cases[i][0], cases[i][1]);
}

static void
test_input_rules (void **state)
{
    fixture_t *f = *state;
    static const char *const cases[][2] = {
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": \"@/a.txt\"}",
         "t.jsonl:1: field 'inputs': expected an array, got a string"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/a.txt\", null]}",
         "t.jsonl:1: field 'inputs[1]': expected a string, got null"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"\"]}",
         "t.jsonl:1: field 'inputs[0]': must not be empty"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/nope\"]}",
         "t.jsonl:1: field 'inputs[0]': cannot use input \"@/nope\": "
         "No such file or directory"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/sub\"]}",
         "t.jsonl:1: field 'inputs[0]': input \"@/sub\" is not a regular file"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/a.txt/\"]}",
         "t.jsonl:1: field 'inputs[0]': cannot use input \"@/a.txt/\": Not a directory"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/b.dat\", \"@/a.txt\", "
         "\"@/sub/a.txt\"]}",
         "t.jsonl:1: field 'inputs[2]': base name \"a.txt\" is also that of inputs[1]: "
         "both would be staged as the same file"},
        {"{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/stdout\"]}",
         "t.jsonl:1: field 'inputs[0]': input \"@/stdout\" would be staged as "
         "\"stdout\", the name of a captured stream"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error (f, cases[i][0], cases[i][1]);
}

/*  A relative input is made absolute against the current directory; a
 *  symbolic link keeps its own base name, the name it is staged under. */
static void
test_input_paths_become_absolute (void **state)
{
    fixture_t *f = *state;
    char *link = at_dir (f, "@/sub/link.bin");
    char *target = at_dir (f, "@/b.dat");
    assert_int_equal (symlink (target, link), 0);
    char *cwd = getcwd (NULL, 0);
    assert_int_equal (chdir (f->dir), 0);
    load (f, "{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"a.txt\", \"sub/../noext\","
             " \"./sub/link.bin\"]}");
    assert_int_equal (chdir (cwd), 0);
    assert_non_null (f->tasks);
    const tasks_task_t *t = tasks_get (f->tasks, 0);
    char *real = realpath (f->dir, NULL);
    char *want = xasprintf ("%s/a.txt", real);
    assert_string_equal (t->inputs[0].path, want);
    free (want);
    want = xasprintf ("%s/noext", real);
    assert_string_equal (t->inputs[1].path, want);
    free (want);
    want = xasprintf ("%s/sub/link.bin", real);
    assert_string_equal (t->inputs[2].path, want);
    assert_string_equal (t->inputs[2].name, "link.bin");
    assert_int_equal (t->inputs[2].size, 5);
    free (want);
    free (real);
    free (cwd);
    free (link);
    free (target);
}

/*  As root every file is readable: check as nobody, in a child. */
static void
test_an_unreadable_input_is_refused (void **state)
{
    fixture_t *f = *state;
    char *path = at_dir (f, "@/a.txt");
    assert_int_equal (chmod (path, 0), 0);
    assert_int_equal (chmod (f->dir, 0755), 0);
    free (path);
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        if (geteuid () == 0 && (setgid (65534) < 0 || setuid (65534) < 0))
            _exit (2);
        load (f, "{\"id\": \"a\", \"sh\": \"x\", \"inputs\": [\"@/a.txt\"]}");
        char *want = at_dir (f, "t.jsonl:1: field 'inputs[0]': cannot read input "
                                "\"@/a.txt\": Permission denied");
        if (f->tasks || strcmp (f->err, want) != 0) {
            fprintf (stderr, "got: %s\nwant: %s\n", f->err, want);
            _exit (1);
        }
        _exit (0);
    }
    int status = 0;
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    assert_int_equal (WEXITSTATUS (status), 0);
}

static void
test_output_rules (void **state)
{
    fixture_t *f = *state;
    static const char *const cases[][2] = {
        {"[\"/etc/passwd\"]", "field 'outputs[0]': \"/etc/passwd\" is absolute: outputs "
                              "are paths relative to the work directory"},
        {"[\"ok\", \"..\"]", "field 'outputs[1]': \"..\" has a '..' component: outputs "
                             "stay in the work directory"},
        {"[\"a/../../b\"]", "field 'outputs[0]': \"a/../../b\" has a '..' component: "
                            "outputs stay in the work directory"},
        {"[\"a//b\"]", "field 'outputs[0]': \"a//b\" has an empty component"},
        {"[\"a/\"]", "field 'outputs[0]': \"a/\" has an empty component"},
        {"[\"./a\"]", "field 'outputs[0]': \"./a\" has a '.' component"},
        {"[\"\"]", "field 'outputs[0]': must not be empty"},
        {"[\"stdout\"]", "field 'outputs[0]': \"stdout\" is reserved: stdout and stderr "
                         "are the captured streams, always brought back"},
        {"[\"stderr/x\"]", "field 'outputs[0]': \"stderr/x\" is reserved: stdout and "
                           "stderr are the captured streams, always brought back"},
        {"[\"a\", \"b\", \"a\"]", "field 'outputs[2]': \"a\" is also outputs[0]"},
        {"[1]", "field 'outputs[0]': expected a string, got a number"},
        {"{}", "field 'outputs': expected an array, got an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *line = xasprintf ("{\"id\": \"a\", \"sh\": \"x\", \"outputs\": %s}",
                                cases[i][0]);
        char *message = xasprintf ("t.jsonl:1: %s", cases[i][1]);
        expect_error (f, line, message);
        free (line);
        free (message);
    }
    expect_load (f, "{\"id\": \"a\", \"sh\": \"x\", \"outputs\": [\"stdout.txt\", "
                    "\"out/stdout\", \"a..b\", \".x\"]}");
    assert_int_equal (tasks_get (f->tasks, 0)->noutputs, 4);
}

static void
test_env_and_timeout_rules (void **state)
{
    fixture_t *f = *state;
    static const char *const cases[][2] = {
        {"\"env\": [\"A=1\"]", "field 'env': expected an object, got an array"},
        {"\"env\": {\"1A\": \"x\"}",
         "field 'env': \"1A\" is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)"},
        {"\"env\": {\"A-B\": \"x\"}",
         "field 'env': \"A-B\" is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)"},
        {"\"env\": {\"\": \"x\"}",
         "field 'env': \"\" is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)"},
        {"\"env\": {\"A\": 1}", "field 'env.A': expected a string, got a number"},
        {"\"timeout_s\": 0", "field 'timeout_s': must be > 0 and at most 604800 "
                             "(7 days), got 0"},
        {"\"timeout_s\": -1.5", "field 'timeout_s': must be > 0 and at most 604800 "
                                "(7 days), got -1.5"},
        {"\"timeout_s\": 604801", "field 'timeout_s': must be > 0 and at most 604800 "
                                  "(7 days), got 604801"},
        {"\"timeout_s\": \"10\"",
         "field 'timeout_s': expected a number of seconds, got a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *line = xasprintf ("{\"id\": \"a\", \"sh\": \"x\", %s}", cases[i][0]);
        char *message = xasprintf ("t.jsonl:1: %s", cases[i][1]);
        expect_error (f, line, message);
        free (line);
        free (message);
    }
    expect_load (f, "{\"id\": \"a\", \"sh\": \"x\", \"timeout_s\": 604800}");
    assert_true (tasks_get (f->tasks, 0)->timeout_s == 604800);
}

/*  A line of n elements "x" for field (an array), or n entries for env. */
static char *
line_with (const char *field, size_t n)
{
    size_t size = 64 + n * 16;
    char *line = xmalloc (size), *p = line;
    int is_env = strcmp (field, "env") == 0;
    p += sprintf (p, "{\"id\": \"a\", %s\"%s\": %c", is_env ? "\"sh\": \"x\", " : "",
                  field, is_env ? '{' : '[');
    for (size_t i = 0; i < n; i++)
        p += is_env ? sprintf (p, "%s\"V%zu\": \"\"", i ? "," : "", i)
                    : sprintf (p, "%s\"x\"", i ? "," : "");
    sprintf (p, "%c%s}", is_env ? '}' : ']',
             strcmp (field, "argv") == 0 || is_env ? "" : ", \"sh\": \"x\"");
    return line;
}

static void
expect_limit (fixture_t *f, const char *field, size_t limit, const char *message)
{
    char *line = line_with (field, limit + 1);
    expect_error (f, line, message);
    free (line);
}

static void
test_count_limits_fire (void **state)
{
    fixture_t *f = *state;
    expect_limit (f, "argv", TASKS_MAX_ARGV, "t.jsonl:1: field 'argv': has 4097 "
                  "elements, more than the limit of 4096");
    expect_limit (f, "inputs", TASKS_MAX_INPUTS, "t.jsonl:1: field 'inputs': has 1025 "
                  "elements, more than the limit of 1024");
    expect_limit (f, "outputs", TASKS_MAX_OUTPUTS, "t.jsonl:1: field 'outputs': has "
                  "1025 elements, more than the limit of 1024");
    expect_limit (f, "env", TASKS_MAX_ENV,
                  "t.jsonl:1: field 'env': has 257 entries, more than the limit of 256");
    char *line = line_with ("argv", TASKS_MAX_ARGV);   /* at the limit: loads */
    expect_load (f, line);
    free (line);
}

/*  A task whose line is exactly n bytes long (n >= 40): its sh is padded. */
static char *
line_of_length (size_t n)
{
    static const char head[] = "{\"id\": \"a\", \"sh\": \"", tail[] = "\"}";
    size_t pad = n - (sizeof head - 1) - (sizeof tail - 1);
    char *line = xmalloc (n + 2);
    memcpy (line, head, sizeof head - 1);
    memset (line + sizeof head - 1, ' ', pad);
    memcpy (line + sizeof head - 1 + pad, tail, sizeof tail);
    strcat (line, "\n");
    return line;
}

static void
test_length_limits_fire (void **state)
{
    fixture_t *f = *state;
    /*  The longest string: 16384 bytes of sh load, 16385 do not. */
    char *line = line_of_length (TASKS_MAX_STRING + 21);
    expect_load (f, line);
    assert_int_equal (strlen (tasks_get (f->tasks, 0)->sh), TASKS_MAX_STRING);
    free (line);
    line = line_of_length (TASKS_MAX_STRING + 22);
    expect_error (f, line, "t.jsonl:1: field 'sh': is 16385 bytes long, more than "
                           "the limit of 16384");
    free (line);
    /*  The longest line, through the buffer and through a file. */
    line = line_of_length (TASKS_MAX_LINE + 1);
    char *text = xasprintf ("{\"id\": \"z\", \"sh\": \"x\"}\n%s", line);
    expect_error (f, text, "t.jsonl:2: line longer than 65536 bytes, the limit");
    char *path = at_dir (f, "@/long.jsonl");
    write_file (path, text);
    f->tasks = tasks_load_file (path, f->err, sizeof f->err);
    assert_null (f->tasks);
    char *want = at_dir (f, "@/long.jsonl:2: line longer than 65536 bytes, the limit");
    assert_string_equal (f->err, want);
    free (want);
    free (path);
    free (text);
    free (line);
}

/*  The count limit: a million tasks load, one more is refused at its line. */
static void
test_the_task_count_limit_fires (void **state)
{
    fixture_t *f = *state;
    size_t n = TASKS_MAX_TASKS + 1, size = n * 32, len = 0, all_but_last = 0;
    char *data = xmalloc (size);
    for (size_t i = 1; i <= n; i++) {
        all_but_last = len;
        len += (size_t) snprintf (data + len, size - len,
                                  "{\"id\":\"%zu\",\"sh\":\"x\"}\n", i);
    }
    f->tasks = tasks_load_buffer (data, len, "big", f->err, sizeof f->err);
    assert_null (f->tasks);
    assert_string_equal (f->err, "big:1000001: more than 1000000 tasks, the limit of "
                                 "one run");
    /*  Without the last line: all of them, each found by its id. */
    f->tasks = tasks_load_buffer (data, all_but_last, "big", f->err, sizeof f->err);
    assert_non_null (f->tasks);
    assert_int_equal (tasks_count (f->tasks), TASKS_MAX_TASKS);
    assert_int_equal (tasks_find (f->tasks, "1"), 0);
    assert_int_equal (tasks_find (f->tasks, "777777"), 777776);
    assert_int_equal (tasks_find (f->tasks, "1000000"), 999999);
    assert_int_equal (tasks_find (f->tasks, "1000001"), -1);
    free (data);
}

static void
test_load_file_reads_a_file_and_names_it (void **state)
{
    fixture_t *f = *state;
    char *path = at_dir (f, "@/t.jsonl");
    write_file (path, "{\"id\": \"a\", \"sh\": \"x\"}\n\n"
                      "{\"id\": \"b\", \"argv\": [\"y\"]}\n");
    f->tasks = tasks_load_file (path, f->err, sizeof f->err);
    assert_non_null (f->tasks);
    assert_int_equal (tasks_count (f->tasks), 2);
    assert_int_equal (tasks_find (f->tasks, "b"), 1);
    assert_int_equal (tasks_get (f->tasks, 1)->line, 3);
    tasks_destroy (&f->tasks);
    write_file (path, "{\"id\": \"a\", \"sh\": \"x\"}\n"
                      "{\"id\": \"a\", \"argv\": [\"y\"]}\n");
    assert_null (tasks_load_file (path, f->err, sizeof f->err));
    char *want = xasprintf ("%s:2: field 'id': duplicate id \"a\" (first on line 1)",
                            path);
    assert_string_equal (f->err, want);
    free (want);
    free (path);
    path = at_dir (f, "@/missing.jsonl");
    assert_null (tasks_load_file (path, f->err, sizeof f->err));
    want = xasprintf ("%s: cannot open: No such file or directory", path);
    assert_string_equal (f->err, want);
    free (want);
    free (path);
}

static void
test_find_gives_the_index_of_an_id (void **state)
{
    fixture_t *f = *state;
    expect_load (f, "{\"id\": \"x\", \"sh\": \"1\"}\n{\"id\": \"y\", \"sh\": \"2\"}\n"
                    "{\"id\": \"z\", \"sh\": \"3\"}\n");
    assert_int_equal (tasks_find (f->tasks, "x"), 0);
    assert_int_equal (tasks_find (f->tasks, "z"), 2);
    assert_int_equal (tasks_find (f->tasks, "w"), -1);
    assert_int_equal (tasks_find (f->tasks, ""), -1);
}

static char *
spec_text (fixture_t *f, size_t i)
{
    json_t *spec = tasks_spec_json (f->tasks, i);
    assert_non_null (spec);
    char *text = json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (spec);
    return text;
}

static void
test_the_spec_has_what_a_node_needs_and_no_paths (void **state)
{
    fixture_t *f = *state;
    expect_load (f, "{\"id\": \"a\", \"argv\": [\"cat\", \"a.txt\"], \"inputs\": "
                    "[\"@/a.txt\", \"@/sub/../b.dat\"], \"env\": {\"K\": \"v=w\"}, "
                    "\"timeout_s\": 60, \"outputs\": [\"r/o\"]}\n"
                    "{\"id\": \"b\", \"sh\": \"ls > l\"}\n");
    char *text = spec_text (f, 0);
    assert_string_equal (text, "{\"argv\":[\"cat\",\"a.txt\"],\"env\":{\"K\":\"v=w\"},"
                               "\"id\":\"a\",\"inputs\":[{\"name\":\"a.txt\",\"size\":3},"
                               "{\"name\":\"b.dat\",\"size\":5}],\"outputs\":[\"r/o\"],"
                               "\"timeout_s\":60.0}");
    assert_null (strstr (text, f->dir));
    free (text);
    text = spec_text (f, 1);
    assert_string_equal (text, "{\"env\":{},\"id\":\"b\",\"inputs\":[],\"outputs\":null,"
                               "\"sh\":\"ls > l\",\"timeout_s\":null}");
    free (text);
    assert_null (tasks_spec_json (f->tasks, 2));
}

/*  Run the shorthand with globs given with "@"; return the tasks or NULL. */
static tasks_t *
command (fixture_t *f, const char *cmd, const char *glob1, const char *glob2)
{
    char *globs[2] = {at_dir (f, glob1), glob2 ? at_dir (f, glob2) : NULL};
    tasks_destroy (&f->tasks);
    f->tasks = tasks_from_command (cmd, (const char *const *) globs, glob2 ? 2 : 1,
                                   f->err, sizeof f->err);
    free (globs[0]);
    free (globs[1]);
    return f->tasks;
}

/*  The command line of task i of a shorthand: its sh, or its argv joined
 *  by spaces when it needs no shell. */
static const char *
sh_of (fixture_t *f, size_t i)
{
    static char line[TASKS_MAX_STRING + 64];
    assert_non_null (f->tasks);
    assert_true (i < tasks_count (f->tasks));
    const tasks_task_t *t = tasks_get (f->tasks, i);
    if (t->sh)
        return t->sh;
    line[0] = '\0';
    for (size_t k = 0; t->argv[k]; k++)
        snprintf (line + strlen (line), sizeof line - strlen (line), "%s%s", k ? " " : "",
                  t->argv[k]);
    return line;
}

/*  A command line of plain words runs without a shell; one with shell
 *  syntax, or a builtin first, keeps its shell. */
static void
test_plain_commands_need_no_shell (void **state)
{
    fixture_t *f = *state;
    command (f, "gzip -9 {}", "@/a.txt", NULL);
    const tasks_task_t *t = tasks_get (f->tasks, 0);
    assert_null (t->sh);
    assert_string_equal (t->argv[0], "gzip");
    assert_string_equal (t->argv[1], "-9");
    assert_string_equal (t->argv[2], "a.txt");
    assert_null (t->argv[3]);
    const char *shelly[] = {"wc -l {} > {}.n", "cd . && ls {}", "echo $HOME {}",
                            "cat  {}", "exit 3 {}", "x=1 env {}", "ls {} *"};
    for (size_t k = 0; k < sizeof shelly / sizeof *shelly; k++) {
        command (f, shelly[k], "@/a.txt", NULL);
        assert_non_null (tasks_get (f->tasks, 0)->sh);
        assert_null (tasks_get (f->tasks, 0)->argv);
    }
}

static void
test_replacement_strings (void **state)
{
    fixture_t *f = *state;
    command (f, "conv {} {/} {.} {/.} {#} ${HOME} {1} {", "@/arch.tar.gz", NULL);
    assert_string_equal (sh_of (f, 0), "conv arch.tar.gz arch.tar.gz arch.tar arch.tar 1 "
                                       "${HOME} {1} {");
    const tasks_task_t *t = tasks_get (f->tasks, 0);
    assert_string_equal (t->id, "1");
    assert_int_equal (t->ninputs, 1);
    assert_string_equal (t->inputs[0].name, "arch.tar.gz");
    assert_int_equal (t->inputs[0].size, 2);
    assert_int_equal (t->outputs_given, 0);
    assert_int_equal (t->line, 0);
    assert_null (t->argv);
    command (f, "x {.}|{/.}", "@/.hidden", "@/noext");
    assert_string_equal (sh_of (f, 0), "x .hidden|.hidden");
    assert_string_equal (sh_of (f, 1), "x noext|noext");
    assert_string_equal (tasks_get (f->tasks, 1)->id, "2");
}

static void
test_substituted_values_are_shell_quoted (void **state)
{
    fixture_t *f = *state;
    command (f, "wc {} > {.}.n", "@/x y's.txt", NULL);
    assert_string_equal (sh_of (f, 0), "wc 'x y'\\''s.txt' > 'x y'\\''s'.n");
    command (f, "a {/}", "@/B", "@/_");
    assert_string_equal (sh_of (f, 0), "a B");
    assert_string_equal (sh_of (f, 1), "a _");
}

static void
test_a_command_without_replacement_gets_one_appended (void **state)
{
    fixture_t *f = *state;
    command (f, "wc -l", "@/a.txt", NULL);
    assert_string_equal (sh_of (f, 0), "wc -l a.txt");
    command (f, "echo {#}", "@/a.txt", NULL);   /* {#} is a replacement string */
    assert_string_equal (sh_of (f, 0), "echo 1");
}

/*  Globs keep their order; each one's matches are sorted bytewise; a file
 *  matched twice is one task; directories are not tasks. */
static void
test_glob_order_and_duplicates (void **state)
{
    fixture_t *f = *state;
    command (f, "c", "@/b.*", "@/[aB_]*");
    assert_int_equal (tasks_count (f->tasks), 6);
    static const char *const want[] = {"b.dat", "B", "_", "a", "a.txt", "arch.tar.gz"};
    for (size_t i = 0; i < 6; i++) {
        const tasks_task_t *t = tasks_get (f->tasks, i);
        char id[8];
        snprintf (id, sizeof id, "%zu", i + 1);
        assert_string_equal (t->id, id);
        assert_string_equal (t->inputs[0].name, want[i]);
        assert_int_equal (tasks_find (f->tasks, id), i);
    }
    command (f, "c", "@/*.txt", "@/a.txt");   /* d.txt is a directory */
    assert_int_equal (tasks_count (f->tasks), 4);
    assert_string_equal (sh_of (f, 0), "c a.txt");
    assert_string_equal (sh_of (f, 1), "c p1.txt");   /* '1' < '[' */
    assert_string_equal (sh_of (f, 2), "c 'p[1].txt'");
    assert_string_equal (sh_of (f, 3), "c 'x y'\\''s.txt'");
}

/*  A file's own path is that file, whatever its name; a pattern is not. */
static void
test_a_glob_that_names_a_file_is_that_file (void **state)
{
    fixture_t *f = *state;
    command (f, "c", "@/p[1].txt", NULL);
    assert_int_equal (tasks_count (f->tasks), 1);
    assert_string_equal (tasks_get (f->tasks, 0)->inputs[0].name, "p[1].txt");
    command (f, "c", "@/p[1]*", NULL);
    assert_int_equal (tasks_count (f->tasks), 1);
    assert_string_equal (tasks_get (f->tasks, 0)->inputs[0].name, "p1.txt");
}

static void
test_command_errors (void **state)
{
    fixture_t *f = *state;
    assert_null (command (f, "c", "@/nothing*", NULL));
    char *want = at_dir (f, "glob \"@/nothing*\" matches no regular file");
    assert_string_equal (f->err, want);
    free (want);
    assert_null (command (f, "c", "@/a.txt", "@/d.*"));
    want = at_dir (f, "glob \"@/d.*\" matches no regular file");
    assert_string_equal (f->err, want);
    free (want);
    assert_null (command (f, "c", "@/stdout", NULL));
    want = at_dir (f, "input \"@/stdout\" would be staged as \"stdout\", the name of "
                      "a captured stream");
    assert_string_equal (f->err, want);
    free (want);
    assert_null (command (f, "", "@/a.txt", NULL));
    assert_string_equal (f->err, "the command is empty");
    assert_null (tasks_from_command ("c", NULL, 0, f->err, sizeof f->err));
    assert_string_equal (f->err, "no input files given for the command");
    char *long_cmd = xmalloc (TASKS_MAX_STRING + 2);
    memset (long_cmd, 'x', TASKS_MAX_STRING - 3);   /* + " {}" = the limit */
    long_cmd[TASKS_MAX_STRING - 3] = '\0';
    assert_null (command (f, long_cmd, "@/a.txt", NULL));   /* after substitution */
    want = at_dir (f, "the command for input \"@/a.txt\" is 16387 bytes long, more "
                      "than the limit of 16384");
    assert_string_equal (f->err, want);
    free (want);
    assert_non_null (command (f, long_cmd, "@/a", NULL));
    free (long_cmd);
}

/*  Every test runs in a fresh temporary directory. */
#define WITH_DIR(test) cmocka_unit_test_setup_teardown (test, setup, teardown)

int
main (void)
{
    const struct CMUnitTest tests[] = {
        WITH_DIR (test_a_full_task_loads_every_field),
        WITH_DIR (test_a_shell_task_has_defaults),
        WITH_DIR (test_blank_lines_are_skipped_and_counted),
        WITH_DIR (test_json_errors_name_line_and_column),
        WITH_DIR (test_an_unknown_field_is_named),
        WITH_DIR (test_id_rules),
        WITH_DIR (test_a_duplicate_id_names_both_lines),
        WITH_DIR (test_argv_and_sh_rules),
        WITH_DIR (test_input_rules),
        WITH_DIR (test_input_paths_become_absolute),
        WITH_DIR (test_an_unreadable_input_is_refused),
        WITH_DIR (test_output_rules),
        WITH_DIR (test_env_and_timeout_rules),
        WITH_DIR (test_count_limits_fire),
        WITH_DIR (test_length_limits_fire),
        WITH_DIR (test_the_task_count_limit_fires),
        WITH_DIR (test_load_file_reads_a_file_and_names_it),
        WITH_DIR (test_find_gives_the_index_of_an_id),
        WITH_DIR (test_the_spec_has_what_a_node_needs_and_no_paths),
        WITH_DIR (test_replacement_strings),
        WITH_DIR (test_plain_commands_need_no_shell),
        WITH_DIR (test_substituted_values_are_shell_quoted),
        WITH_DIR (test_a_command_without_replacement_gets_one_appended),
        WITH_DIR (test_glob_order_and_duplicates),
        WITH_DIR (test_a_glob_that_names_a_file_is_that_file),
        WITH_DIR (test_command_errors),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
