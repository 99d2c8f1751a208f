/*  tasks — the command tasks of a run: what to execute, with which input
 *  files, and which files to bring back (docs/commands.md).
 *
 *  Two constructors. tasks_load_file reads a tasks file given with
 *  `treefarm run CONFIG --tasks FILE`: JSON Lines, one task per line,
 *
 *      {"id": "t1", "argv": ["gzip", "-9", "a.txt"], "inputs": ["data/a.txt"],
 *       "outputs": ["a.txt.gz"], "env": {"LC_ALL": "C"}, "timeout_s": 600}
 *
 *  with these fields (any other is an error):
 *
 *  - id: required, 1 to TASKS_MAX_ID characters from [A-Za-z0-9._-], not
 *    "." or "..", unique in the file. It names the task's results
 *    directory (OUT/tasks/ID).
 *  - argv (a non-empty array of strings, the first non-empty: executed
 *    without a shell) or sh (a non-empty string, run by /bin/sh -c):
 *    exactly one of the two.
 *  - inputs: optional array of paths on the controller's machine, each an
 *    existing readable regular file when the file is loaded. They are
 *    staged into the task's work directory (its cwd) under their base
 *    names, so base names within a task are distinct, and neither "stdout"
 *    nor "stderr".
 *  - outputs: optional array of paths relative to the work directory: not
 *    absolute, no empty, "." or ".." component, distinct, and not "stdout"
 *    or "stderr" (or below them), which are the captured streams. Absent:
 *    every file the command created is an output (outputs_given is 0).
 *  - env: optional object of strings; keys are shell variable names
 *    ([A-Za-z_][A-Za-z0-9_]*), added to the command's environment.
 *  - timeout_s: optional number of seconds, > 0 and at most
 *    TASKS_MAX_TIMEOUT_S.
 *
 *  Blank lines (only spaces, tabs, '\r') are skipped. Loading stops at the
 *  first error, whose message reads "FILE:LINE: field 'NAME': what is
 *  wrong" ('argv[2]', 'inputs[0]', 'env' for an element), or
 *  "FILE:LINE:COL: ..." for JSON syntax (column from jansson), or
 *  "FILE:LINE: ..." for what is about the line as a whole.
 *
 *  tasks_from_command is the GNU parallel shorthand
 *  `--command 'CMD {}' FILE-GLOB...`: one task per matching file, see its
 *  contract below.
 *
 *  Every count and length is checked against the limits below before it is
 *  used. The module is pure apart from reading the tasks file and checking
 *  the inputs with open(2)/fstat(2) (and glob(3) for the shorthand).
 */
#ifndef TF_TASKS_H
#define TF_TASKS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*  The most tasks in one run. The controller keeps every task (its
 *  strings and a hash entry, a few hundred bytes) in memory and a results
 *  directory per task on disk: a million directories is already a heavy
 *  file system load; a bag larger than that is better split into runs. */
#define TASKS_MAX_TASKS 1000000

/*  The longest line of a tasks file, bytes, without its '\n'. The loader
 *  reads a line at a time into a buffer of this size; 64 KiB holds a task
 *  with hundreds of inputs with long paths, and bounds memory whatever the
 *  file holds. */
#define TASKS_MAX_LINE 65536

/*  The longest id: it is a directory name, and NAME_MAX is 255. */
#define TASKS_MAX_ID 128

/*  The longest string anywhere in a task (an argv entry, sh, a path, an
 *  env key or value), bytes. A path longer than PATH_MAX (4096) cannot be
 *  opened anyway; a shell script longer than 16 KiB belongs in an input
 *  file. */
#define TASKS_MAX_STRING 16384

/*  The most argv entries. Far more than a command line written by hand or
 *  by a script takes, and the node passes them to execve(2). */
#define TASKS_MAX_ARGV 4096

/*  The most input files of one task: each is opened and sent over the
 *  tree and staged in the work directory; more than a thousand is a
 *  directory that should be an archive. */
#define TASKS_MAX_INPUTS 1024

/*  The most output paths of one task (same reasoning as inputs). */
#define TASKS_MAX_OUTPUTS 1024

/*  The most env entries of one task: added to the environment of every
 *  command, which the kernel limits with the arguments (ARG_MAX). */
#define TASKS_MAX_ENV 256

/*  The longest timeout, seconds: 7 days. A task that may run longer than a
 *  week is a run of its own; a larger value is a typo (ms for s). */
#define TASKS_MAX_TIMEOUT_S (7.0 * 24 * 3600)

typedef struct tasks_t tasks_t;

/*  One input file of a task. */
typedef struct {
    const char *path;        /* absolute path on the controller's machine */
    const char *name;        /* base name: its path in the work directory */
    uint64_t size;           /* bytes, from fstat(2) when loaded */
} tasks_input_t;

/*  One task. Every pointer is borrowed from the tasks_t. */
typedef struct {
    const char *id;
    char *const *argv;            /* NULL-terminated, for execv; or NULL */
    const char *sh;               /* the script for /bin/sh -c; or NULL */
    const tasks_input_t *inputs;
    size_t ninputs;
    const char *const *outputs;   /* relative to the work directory */
    size_t noutputs;
    int outputs_given;            /* 0: every file the command created */
    char *const *env;             /* "KEY=VALUE" */
    size_t nenv;
    double timeout_s;             /* 0: none */
    unsigned line;                /* its line in the file; 0 from a command */
} tasks_task_t;

/*  Load the tasks file at path (a regular file or a pipe). Return the
 *  tasks, the caller's to destroy, or NULL with the first error in err
 *  ("path: cannot open: ...", or one of the messages above). A file with
 *  no task is not an error: it gives an empty bag. */
tasks_t *tasks_load_file (const char *path, char *err, size_t errlen);

/*  Load len bytes of a tasks file at data (no NUL needed; name_for_errors
 *  prefixes messages, "<tasks>" when NULL). Returns like tasks_load_file. */
tasks_t *tasks_load_buffer (const char *data, size_t len,
                            const char *name_for_errors, char *err, size_t errlen);

/*  The GNU parallel shorthand: one task per file matched by the globs.
 *  Each glob is expanded with glob(3); its matches are sorted bytewise,
 *  kept in the order of the globs, and a path seen before is dropped, as
 *  is a match that is not a regular file. A glob that is the path of a
 *  regular file is that file, even with '[' or '*' in its name (the shell
 *  may have expanded the globs already). A glob that yields no regular
 *  file is an error naming it, and so is a file that cannot be opened.
 *  Task N (1-based, in that order) has id "N", the file as its only input,
 *  no outputs given, and sh = command with these replacement strings
 *  substituted:
 *
 *      {}    the staged input's path relative to the work directory,
 *            which is the task's cwd: the file's base name
 *      {/}   the base name (the same)
 *      {.}   {} without its extension
 *      {/.}  {/} without its extension
 *      {#}   the sequence number N
 *
 *  The extension is the last '.' of the base name and what follows it,
 *  unless that '.' starts the name (".bashrc" has none). A substituted
 *  value with any byte outside [A-Za-z0-9._/+-] is shell-quoted with
 *  single quotes, so do not quote replacement strings in the command
 *  yourself. A command with no replacement string gets " {}" appended, as
 *  GNU parallel does. command must be 1 to TASKS_MAX_STRING bytes, and so
 *  must each glob and each resulting sh. Returns like tasks_load_file. */
tasks_t *tasks_from_command (const char *command, const char *const *globs,
                             size_t nglobs, char *err, size_t errlen);

/*  Destroy the tasks and null the pointer; NULL is fine. */
void tasks_destroy (tasks_t **self_p);

/*  The number of tasks. */
size_t tasks_count (const tasks_t *self);

/*  Task i (0-based, in file order), borrowed; NULL when i is out of range. */
const tasks_task_t *tasks_get (const tasks_t *self, size_t i);

/*  The sum of task i's input sizes, bytes (UINT64_MAX if it overflows);
 *  0 when i is out of range. */
uint64_t tasks_input_bytes (const tasks_t *self, size_t i);

/*  The index of the task whose id is id, or -1; O(1) on average. */
ssize_t tasks_find (const tasks_t *self, const char *id);

/*  What a node needs to run task i, as a new JSON object (the caller's):
 *
 *      {"id": ID, "argv": [...] | "sh": "...", "env": {KEY: VALUE, ...},
 *       "timeout_s": N | null, "outputs": [...] | null,
 *       "inputs": [{"name": BASE, "size": BYTES}, ...]}
 *
 *  Exactly one of argv and sh is present; env is {} and inputs [] when
 *  there are none; outputs is null when not given; no controller path is
 *  included. NULL when i is out of range. */
json_t *tasks_spec_json (const tasks_t *self, size_t i);

#endif
