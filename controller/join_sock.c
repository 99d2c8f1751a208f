/* TEMPORARY stub */
#include "controller/join_sock.h"
#include "overlay/util.h"
zsock_t *join_sock_bind (const char *out_dir, char *err, size_t errlen) { (void) out_dir; tf_error (err, errlen, "stub"); return NULL; }
void join_sock_close (zsock_t **sock, const char *out_dir) { (void) out_dir; zsock_destroy (sock); }
int join_sock_read (zsock_t *sock, zframe_t **peer, config_node_t *node, char *err, size_t errlen) { (void) sock; (void) peer; (void) node; return tf_error (err, errlen, "stub"); }
int join_sock_answer (zsock_t *sock, zframe_t **peer, int code, const char *parent, const char *why) { (void) sock; (void) code; (void) parent; (void) why; zframe_destroy (peer); return 0; }
