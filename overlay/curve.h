/*  curve — a run's CURVE keys: making them, carrying them, checking them
 *  (docs/security.md).
 *
 *  With CURVE on, every socket of a run is encrypted and every peer
 *  authenticated. The controller makes one key pair for itself and one
 *  per node for every run (curve_run_new). A node's secret certificate
 *  file holds its own key pair, its name and the controller's public key,
 *  so a node needs exactly one file, whose path it is given (--cert).
 *  Public keys are not secret: the controller ships every node's in
 *  CONFIG, from which each node learns its parent's (the server key of
 *  its DEALERs) and its children's (the clients its ROUTER admits).
 *
 *  A server socket admits exactly the keys its ZAP handler knows
 *  (curve_auth_new, one zauth actor per process: libzmq asks it on every
 *  handshake) and tags each connection with the name the key belongs to,
 *  which every message then carries as metadata: curve_peer_is checks
 *  that the identity a message claims is the one its key was given to.
 *
 *  The certificate file is a zcert (zconfig) text file, read by a strict
 *  parser of its own here: at most CURVE_FILE_MAX bytes, the sections
 *  "metadata" (node, controller) and "curve" (public-key, secret-key),
 *  nothing else, every value a quoted string, keys 40 characters of Z85
 *  and the public key the secret key's.
 */
#ifndef TF_CURVE_H
#define TF_CURVE_H

#include <czmq.h>
#include <jansson.h>
#include <stddef.h>

/*  A key as Z85 text (32 bytes), without its NUL. */
#define CURVE_KEY_LEN 40
/*  The largest certificate file read: ours are about 400 bytes; a file
 *  ten times that is not one. */
#define CURVE_FILE_MAX 4096
/*  The ZAP domain of every CURVE server socket of a run. */
#define CURVE_ZAP_DOMAIN "treefarm"
/*  The connection metadata zauth attaches: the admitted peer's name. */
#define CURVE_META_NAME "name"
/*  The directory, under the results directory, of a run's certificates. */
#define CURVE_DIR_NAME ".curve"

typedef struct curve_run curve_run_t;

/*  Make the keys of a run of n nodes named names[0..n) (config names,
 *  [A-Za-z0-9_.-], at most 63 characters): one pair for the controller,
 *  kept in memory only, and one per node, kept in memory as its
 *  certificate's text with the controller's public key (curve_run_text)
 *  and written to DIR/NAME.cert, mode 0600, only when a node is to read
 *  it from there (curve_run_file); the directory dir is created (or taken
 *  over if it exists and is ours, not a symlink) with mode 0700. Both are
 *  created with those modes, never wider at any moment, whatever the
 *  umask; a stale file of the same name is replaced. The paths are made
 *  absolute. Returns a new run, or NULL with a message in err (nothing is
 *  left behind). */
curve_run_t *curve_run_new (const char *dir, const char *const names[], int n,
                            char *err, size_t errlen);

/*  Make one more node's key pair, for name (a node that joins the run,
 *  docs/adapt.md "Grow"), kept as curve_run_new keeps them. Returns
 *  its index (curve_run_file, curve_run_public), or -1 with a message in
 *  err (a name that has keys already, a file that cannot be written). */
int curve_run_add (curve_run_t *self, const char *name, char *err, size_t errlen);

/*  Remove the run's certificate files and its directory (if empty), and
 *  destroy it; null the pointer. Safe on NULL. */
void curve_run_destroy (curve_run_t **self_p);

/*  The absolute path of node i's certificate file, written on the first
 *  call; NULL with a message in err if it cannot be. Borrowed. */
const char *curve_run_file (curve_run_t *self, int i, char *err, size_t errlen);

/*  Node i's certificate's text (secret: for a node that takes it on its
 *  stdin); node i's public key (Z85). Borrowed. */
const char *curve_run_text (const curve_run_t *self, int i);
const char *curve_run_public (const curve_run_t *self, int i);

/*  The controller's certificate (both keys). Borrowed. */
zcert_t *curve_run_cert (const curve_run_t *self);

/*  Every node's public key as a JSON object {name: key}, CONFIG's "keys".
 *  A new reference. */
json_t *curve_run_keys (const curve_run_t *self);

/*  Load node name's certificate file at path: both its keys, and the
 *  controller's public key into controller (CURVE_KEY_LEN + 1 bytes).
 *  The file must be a regular file of at most CURVE_FILE_MAX bytes, in
 *  the format above, name's (metadata node), its public key matching its
 *  secret key. Returns a new certificate, or NULL with a message in err
 *  that names the file and the line when there is one ("PATH:LINE:
 *  ..."). */
zcert_t *curve_load (const char *path, const char *name, char *controller, char *err,
                     size_t errlen);

/*  The same from a certificate's text (at most CURVE_FILE_MAX bytes),
 *  called what in messages. */
zcert_t *curve_load_text (const char *what, const char *text, const char *name,
                          char *controller, char *err, size_t errlen);

/*  Is text a key: exactly CURVE_KEY_LEN characters of the Z85 alphabet,
 *  and decodable? */
int curve_key_valid (const char *text);

/*  Start the ZAP handler of this process (a zauth actor with an in-memory
 *  store): it admits exactly the n public keys keys[0..n) and tags each
 *  connection with the matching names[i] (CURVE_META_NAME). Only one may
 *  run in a process, started before any CURVE server socket binds and
 *  destroyed after the last one closes: libzmq admits every CURVE client
 *  to a socket whose ZAP handler is missing. Returns the actor, or NULL
 *  with a message in err. */
zactor_t *curve_auth_new (const char *const names[], const char *const keys[], int n,
                          char *err, size_t errlen);

/*  The same ZAP handler, with a store that can grow while the process
 *  runs (a run that nodes may join, docs/adapt.md "Grow"): the public
 *  certificates in dir (created mode 0700, or taken over if it is ours),
 *  one file per admitted name, each written with the name as metadata;
 *  the handler (czmq's zauth, CURVE with a location) reads the directory
 *  again at a handshake whenever its files changed. names/keys[0..n) are
 *  admitted at once. Returns the actor, or NULL with a message in err. */
zactor_t *curve_auth_dir_new (const char *dir, const char *const names[],
                              const char *const keys[], int n, char *err, size_t errlen);

/*  Admit name's public key (Z85) to the store in dir from the next
 *  handshake on. The file is written under a name the handler skips and
 *  renamed into place, so it is never read half written. Returns 0, or -1
 *  with a message in err. */
int curve_auth_admit (const char *dir, const char *name, const char *key, char *err,
                      size_t errlen);

/*  Remove the store's files and dir (what curve_auth_dir_new made), after
 *  the handler is gone. Safe on NULL. */
void curve_auth_dir_remove (const char *dir);

/*  Make sock, not yet bound, a CURVE server with cert's keys in the ZAP
 *  domain of the run. */
void curve_server (zsock_t *sock, zcert_t *cert);

/*  Make sock, not yet connected, a CURVE client with cert's keys that
 *  only accepts a server whose public key is server_key (Z85). */
void curve_client (zsock_t *sock, zcert_t *cert, const char *server_key);

/*  Did frame, received from a CURVE server socket, arrive on a connection
 *  admitted as name (a node name; for "NAME/beat" pass NAME)? 1 or 0. */
int curve_peer_is (zframe_t *frame, const char *name);

#endif
