/*  cli — what every treefarm command says and parses the same way.
 *
 *  Every command takes long options and one operand (CONFIG), or a
 *  fixed number of them (`join OUT NODE.json`): cli_parse reads them
 *  from a table, checks numbers, and answers --help and
 *  usage errors uniformly, so no command parses options by hand.
 */
#ifndef TF_CLI_H
#define TF_CLI_H

#include <stdio.h>

/*  Exit codes shared by every command. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_INTERRUPTED 130

/*  Print "treefarm COMMAND: MESSAGE (see treefarm COMMAND --help)" on
 *  stderr and return code, so a command's option parsing reads
 *  `return cli_usage_error ("run", 2, "...", ...);`. */
int cli_usage_error (const char *command, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

typedef enum {
    CLI_FLAG = 0,            /* no argument; target is an int set to 1 */
    CLI_STRING,              /* target is a const char * (argv's, borrowed) */
    CLI_POSITIVE,            /* target is a double, finite and > 0 */
    CLI_NONNEGATIVE,         /* target is a double, finite and >= 0 */
} cli_kind_t;

/*  One long option: --name, what it takes, where it goes, and how its
 *  argument is described in an error ("a number of seconds"). */
typedef struct {
    const char *name;
    cli_kind_t kind;
    void *target;
    const char *what;
} cli_option_t;

/*  Parse argv[1..argc) (argv[0] is the command's name) against options,
 *  n of them, plus -h/--help, and exactly one operand, stored in
 *  *operand (none when operand is NULL: a command without CONFIG).
 *  Returns -1 to go on; otherwise the command must exit with
 *  the code returned: 0 after printing usage to stdout for --help, 2
 *  after a usage error naming the option (unknown, missing argument,
 *  a bad number, a missing or extra operand). */
int cli_parse (const char *command, int argc, char **argv, const cli_option_t *options,
               int n, void (*usage) (FILE *out), const char **operand);

/*  cli_parse for a command of noperands operands (`join OUT NODE.json`):
 *  exactly that many, stored in operands[] in order; a missing one is
 *  named from names[] ("missing NODE.json"). */
int cli_parse_operands (const char *command, int argc, char **argv,
                        const cli_option_t *options, int n, void (*usage) (FILE *out),
                        const char **operands, const char *const *names, int noperands);

/*  A program of treefarm's: option (a path given on the command line) if
 *  not NULL, else $env when set and not empty, else the one named name
 *  next to this executable when there is one, else name (for PATH).
 *  Returns a new string. */
char *cli_find_program (const char *option, const char *env, const char *name);

#endif
