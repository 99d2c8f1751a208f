/*  config_int — what the files of the config loader share (private to
 *  overlay/config*.c; overlay/config.h is the public face).
 */
#ifndef TF_CONFIG_INT_H
#define TF_CONFIG_INT_H

#include "overlay/config.h"
#include "overlay/jsonw.h"

#define NAME_MAX_LEN 63
#define NAME_CHARS   "[A-Za-z0-9_.-]"

/*  config.c: 1 if name is 1..63 characters from [A-Za-z0-9_.-], else 0. */
int config_valid_name (const char *name);

/*  config_tree.c: the "tree" array of top into self->nodes, every node
 *  checked and linked to its parent and children. Returns 0, or -1 after
 *  jsonw_fail named the place. */
int config_parse_tree (config_t *self, jsonw_t *top);

#endif
