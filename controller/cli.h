/*  cli — what every treefarm command says the same way. */
#ifndef TF_CLI_H
#define TF_CLI_H

/*  Print "treefarm COMMAND: MESSAGE (see treefarm COMMAND --help)" on
 *  stderr and return code, so a command's option parsing reads
 *  `return cli_usage_error ("run", 2, "...", ...);`. */
int cli_usage_error (const char *command, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif
