/*  proto_int — what the wire's decoders share (overlay/proto.c: the
 *  command table, the framing, the peer commands; proto_fields.c: the
 *  body's typed fields; proto_control.c: the controller's conversation
 *  with a node). Private to overlay/proto*.c.
 */
#ifndef TF_PROTO_INT_H
#define TF_PROTO_INT_H

#include <stddef.h>
#include <stdint.h>

#include "overlay/jsonw.h"
#include "overlay/proto.h"

/*  proto_fields.c: a body's fields, each checked, every refusal naming
 *  the command (cmd) and the field in err. */
void pf_walk (jsonw_t *w, jsonw_doc_t *doc, json_t *body, const char *cmd, char *err,
              size_t errlen);
int pf_get_uint (json_t *body, const char *key, uint64_t max, uint64_t *out,
                 const char *cmd, char *err, size_t errlen);
int pf_get_string (json_t *body, const char *key, const char **out, const char *cmd,
                   char *err, size_t errlen);
int pf_get_bool (json_t *body, const char *key, int *out, const char *cmd, char *err,
                 size_t errlen);
int pf_check_keys (json_t *body, const char *const *allowed, const char *cmd,
                   char *err, size_t errlen);
int pf_get_number (json_t *body, const char *key, double *out, const char *cmd, char *err,
                   size_t errlen);
int pf_get_optional (json_t *body, const char *key, double *out, const char *cmd, char *err,
                     size_t errlen);
void *pf_get_array (const proto_msg_t *m, const char *key, size_t most, const char *what,
                    size_t elem, json_t **array, const char *cmd, char *err, size_t errlen);
int pf_check_named (json_t *object, size_t most, const char *cmd, const char *field,
                    char *err, size_t errlen);

/*  proto_control.c: the decoders of the controller <-> node commands
 *  (HELLO to MEASURED, STATS and REPORT, LOST, ATTACH, ATTACHED,
 *  DRAINED, and the bodiless ones). */
int pc_hello (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_object (proto_msg_t *m, const char *key, const char *cmd, char *err, size_t errlen);
int pc_keys (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_config (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_text (proto_msg_t *m, const char *key, const char *cmd, char *err, size_t errlen);
int pc_bound (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_fail (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_lost (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_attach (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_attached (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_drained (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_reparent (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_start (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_phase (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_measure (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_measured (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_stats (proto_msg_t *m, const char *cmd, char *err, size_t errlen);
int pc_nothing (proto_msg_t *m, const char *cmd, char *err, size_t errlen);

#endif
