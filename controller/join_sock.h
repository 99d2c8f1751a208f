/* TEMPORARY stub until the helper's join_sock lands */
#ifndef TF_JOIN_SOCK_H
#define TF_JOIN_SOCK_H
#include <czmq.h>
#include "overlay/config.h"
zsock_t *join_sock_bind (const char *out_dir, char *err, size_t errlen);
void join_sock_close (zsock_t **sock, const char *out_dir);
int join_sock_read (zsock_t *sock, zframe_t **peer, config_node_t *node, char *err, size_t errlen);
int join_sock_answer (zsock_t *sock, zframe_t **peer, int code, const char *parent, const char *why);
#endif
