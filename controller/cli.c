/*  cli — see cli.h. */
#include "controller/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlay/util.h"

/*  The most options a command has; a table is sized once. */
#define CLI_MAX_OPTIONS 32

int
cli_usage_error (const char *command, int code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fprintf (stderr, "treefarm %s: ", command);
    vfprintf (stderr, fmt, ap);
    fprintf (stderr, " (see treefarm %s --help)\n", command);
    va_end (ap);
    return code;
}

/*  Store text into option o's target. Returns -1, or the exit code after
 *  a usage error. */
static int
store (const char *command, const cli_option_t *o, const char *text)
{
    if (o->kind == CLI_FLAG) {
        *(int *) o->target = 1;
        return -1;
    }
    if (o->kind == CLI_STRING) {
        *(const char **) o->target = text;
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    int ok = !errno && end != text && !*end && isfinite (v)
          && (o->kind == CLI_POSITIVE ? v > 0 : v >= 0);
    if (!ok)
        return cli_usage_error (command, CLI_EXIT_USAGE, "--%s: \"%s\" is not %s",
                                o->name, text, o->what ? o->what : "a valid number");
    *(double *) o->target = v;
    return -1;
}

int
cli_parse (const char *command, int argc, char **argv, const cli_option_t *options,
           int n, void (*usage) (FILE *out), const char **operand)
{
    static const char *const config[] = {"CONFIG"};
    return cli_parse_operands (command, argc, argv, options, n, usage, operand, config,
                               operand != NULL);
}

int
cli_parse_operands (const char *command, int argc, char **argv,
                    const cli_option_t *options, int n, void (*usage) (FILE *out),
                    const char **operands, const char *const *names, int noperands)
{
    struct option table[CLI_MAX_OPTIONS + 2];
    if (n > CLI_MAX_OPTIONS)
        n = CLI_MAX_OPTIONS;
    for (int i = 0; i < n; i++)
        table[i] = (struct option){options[i].name,
                                   options[i].kind == CLI_FLAG ? no_argument
                                                               : required_argument,
                                   NULL, 256 + i};
    table[n] = (struct option){"help", no_argument, NULL, 'h'};
    table[n + 1] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 0;              /* glibc: a full reset */
    int c;
    while ((c = getopt_long (argc, argv, ":h", table, NULL)) != -1) {
        if (c >= 256 && c < 256 + n) {
            int code = store (command, &options[c - 256], optarg);
            if (code >= 0)
                return code;
        }
        else if (c == 'h') {
            usage (stdout);
            return CLI_EXIT_OK;
        }
        else if (c == ':')
            return cli_usage_error (command, CLI_EXIT_USAGE, "%s needs an argument",
                                    argv[optind - 1]);
        else
            return cli_usage_error (command, CLI_EXIT_USAGE, "unknown option \"%s\"",
                                    argv[optind - 1]);
    }
    if (optind + noperands > argc)
        return cli_usage_error (command, CLI_EXIT_USAGE, "missing %s",
                                names[argc - optind]);
    if (optind + noperands < argc)
        return cli_usage_error (command, CLI_EXIT_USAGE, "unexpected argument \"%s\"",
                                argv[optind + noperands]);
    for (int i = 0; i < noperands; i++)
        operands[i] = argv[optind + i];
    return -1;
}

char *
cli_find_program (const char *option, const char *env, const char *name)
{
    if (option)
        return xstrdup (option);
    const char *given = getenv (env);
    if (given && *given)
        return xstrdup (given);
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr (self, '/');
        if (slash) {
            char *candidate = xasprintf ("%.*s/%s", (int) (slash - self), self, name);
            if (access (candidate, X_OK) == 0)
                return candidate;
            free (candidate);
        }
    }
    return xstrdup (name);
}
