/*  shell — words for a POSIX shell.
 *
 *  The controller builds command lines for sh: the remote commands of ssh
 *  hosts (controller/ssh.c), gnuplot's (controller/gnuplot.c). Every word
 *  that comes from a user (a path, a script) goes through shell_quote, so
 *  that sh reads it back as the one word it was.
 */
#ifndef TF_SHELL_H
#define TF_SHELL_H

/*  Return word quoted for a POSIX shell: in single quotes, a single quote
 *  written '\'' ("it's" -> 'it'\''s', "" -> ''). sh reads the result as
 *  exactly word, whatever it holds. The caller frees. */
char *shell_quote (const char *word);

#endif
