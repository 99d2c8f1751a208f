/*  curve — a run's CURVE keys. See curve.h and docs/security.md.
 *
 *  Files are created with open (O_EXCL, 0600) and mkdir (0700): the mode
 *  asked for is the widest the file ever has, whatever the umask, and no
 *  process-wide umask is changed (czmq's zcert_save_secret does that,
 *  which is not thread-safe). The certificate file is read by a parser of
 *  its own rather than zconfig, so a bad file is refused with its line,
 *  and nothing in it sizes anything before it is checked.
 */
#include "overlay/curve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/util.h"

/*  A key in bytes. */
#define KEY_BYTES 32
/*  The longest value of a certificate file: a node name (63 characters,
 *  config.h) or a key. */
#define VALUE_MAX 64
/*  Modes of the directory and of each certificate file. */
#define DIR_MODE 0700
#define FILE_MODE 0600

static const char z85_alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

struct curve_run {
    char *dir;               /* absolute */
    zcert_t *cert;           /* the controller's */
    int n;
    char **names;
    char **files;            /* absolute paths, NULL until written */
    char **texts;            /* the certificates' text (secret) */
    char (*pub)[CURVE_KEY_LEN + 1];
};

/*  The four values of a certificate file. */
enum { F_NODE = 0, F_CONTROLLER, F_PUBLIC, F_SECRET, F_COUNT };
static const struct {
    const char *section, *key;
} fields[F_COUNT] = {
    [F_NODE] = {"metadata", "node"},
    [F_CONTROLLER] = {"metadata", "controller"},
    [F_PUBLIC] = {"curve", "public-key"},
    [F_SECRET] = {"curve", "secret-key"},
};

int
curve_key_valid (const char *text)
{
    byte key[KEY_BYTES];
    if (!text || strlen (text) != CURVE_KEY_LEN)
        return 0;
    for (const char *p = text; *p; p++)
        if (!strchr (z85_alphabet, *p))
            return 0;
    return zmq_z85_decode (key, text) != NULL;
}

/* ------------------------------------------------------------------------
 *  Making a run's certificates (the controller).
 */

/*  dir exists, is a directory of ours (not a symlink), mode DIR_MODE. */
static int
make_dir (const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir (dir, DIR_MODE) != 0 && errno != EEXIST)
        return tf_error (err, errlen, "cannot create %s: %s", dir, strerror (errno));
    if (lstat (dir, &st) != 0)
        return tf_error (err, errlen, "%s: %s", dir, strerror (errno));
    if (!S_ISDIR (st.st_mode) || st.st_uid != geteuid ())
        return tf_error (err, errlen, "%s: not a directory of ours (a symlink, or "
                         "another user's): refusing to put keys there", dir);
    if (chmod (dir, DIR_MODE) != 0)
        return tf_error (err, errlen, "cannot chmod %s: %s", dir, strerror (errno));
    return 0;
}

/*  Node name's certificate text (cert's keys, the controller's public
 *  key), in the file format below. A new string, secret. */
static char *
cert_text (const char *name, zcert_t *cert, const char *controller)
{
    return xasprintf ("#   treefarm: the CURVE certificate of node \"%s\" for one "
                      "run. SECRET:\n#   mode 0600, removed when the run ends "
                      "(docs/security.md).\nmetadata\n    node = \"%s\"\n"
                      "    controller = \"%s\"\ncurve\n    public-key = \"%s\"\n"
                      "    secret-key = \"%s\"\n",
                      name, name, controller, zcert_public_txt (cert),
                      zcert_secret_txt (cert));
}

/*  Write text to path, created FILE_MODE; a stale file is replaced. */
static int
write_text (const char *path, const char *text, char *err, size_t errlen)
{
    int rc = 0;
    if (unlink (path) != 0 && errno != ENOENT)
        rc = tf_error (err, errlen, "cannot replace %s: %s", path, strerror (errno));
    int fd = rc ? -1 : open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             FILE_MODE);
    if (!rc && (fd < 0 || fchmod (fd, FILE_MODE) != 0
                || tf_write_all (fd, text, strlen (text)) != 0))
        rc = tf_error (err, errlen, "cannot write %s: %s", path, strerror (errno));
    if (fd >= 0 && close (fd) != 0 && !rc)
        rc = tf_error (err, errlen, "cannot write %s: %s", path, strerror (errno));
    return rc;
}

/*  Node i's key pair, as its certificate's text in memory (a file only
 *  when a node reads it from one: curve_run_file). */
static int
make_node (curve_run_t *self, int i, char *err, size_t errlen)
{
    zcert_t *cert = zcert_new ();
    if (!cert)
        return tf_error (err, errlen, "cannot make a key pair: %s", zmq_strerror (errno));
    self->texts[i] = cert_text (self->names[i], cert, zcert_public_txt (self->cert));
    snprintf (self->pub[i], sizeof self->pub[i], "%s", zcert_public_txt (cert));
    zcert_destroy (&cert);
    return 0;
}

curve_run_t *
curve_run_new (const char *dir, const char *const names[], int n, char *err,
               size_t errlen)
{
    char real[PATH_MAX];
    if (!zsys_has_curve ()) {
        tf_error (err, errlen, "this libzmq has no CURVE support");
        return NULL;
    }
    if (make_dir (dir, err, errlen) != 0)
        return NULL;
    if (!realpath (dir, real)) {
        tf_error (err, errlen, "%s: %s", dir, strerror (errno));
        return NULL;
    }
    curve_run_t *self = xcalloc (1, sizeof *self);
    self->dir = xstrdup (real);
    self->n = n;
    self->names = xcalloc ((size_t) n, sizeof *self->names);
    self->files = xcalloc ((size_t) n, sizeof *self->files);
    self->texts = xcalloc ((size_t) n, sizeof *self->texts);
    self->pub = xcalloc ((size_t) n, sizeof *self->pub);
    for (int i = 0; i < n; i++)
        self->names[i] = xstrdup (names[i]);
    self->cert = zcert_new ();
    int rc = self->cert ? 0 : tf_error (err, errlen, "cannot make a key pair: %s",
                                        zmq_strerror (errno));
    for (int i = 0; i < n && rc == 0; i++)
        rc = make_node (self, i, err, errlen);
    if (rc != 0)
        curve_run_destroy (&self);
    return self;
}

void
curve_run_destroy (curve_run_t **self_p)
{
    curve_run_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->n; i++) {
        if (self->files[i])
            unlink (self->files[i]);
        free (self->files[i]);
        free (self->names[i]);
        if (self->texts[i])
            explicit_bzero (self->texts[i], strlen (self->texts[i]));
        free (self->texts[i]);
    }
    if (self->dir)
        rmdir (self->dir);
    zcert_destroy (&self->cert);
    free (self->files);
    free (self->texts);
    free (self->names);
    free (self->pub);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

int
curve_run_add (curve_run_t *self, const char *name, char *err, size_t errlen)
{
    for (int i = 0; i < self->n; i++)
        if (strcmp (self->names[i], name) == 0)
            return tf_error (err, errlen, "%s has keys already", name);
    int i = self->n;
    self->names = xrealloc (self->names, (size_t) (i + 1) * sizeof *self->names);
    self->files = xrealloc (self->files, (size_t) (i + 1) * sizeof *self->files);
    self->texts = xrealloc (self->texts, (size_t) (i + 1) * sizeof *self->texts);
    self->pub = xrealloc (self->pub, (size_t) (i + 1) * sizeof *self->pub);
    self->names[i] = xstrdup (name);
    self->files[i] = NULL;
    self->texts[i] = NULL;
    self->n++;
    if (make_node (self, i, err, errlen) == 0)
        return i;
    free (self->names[i]);
    self->n--;
    return -1;
}

const char *
curve_run_file (curve_run_t *self, int i, char *err, size_t errlen)
{
    if (i < 0 || i >= self->n) {
        tf_error (err, errlen, "no certificate %d", i);
        return NULL;
    }
    if (self->files[i])
        return self->files[i];
    char *path = xasprintf ("%s/%s.cert", self->dir, self->names[i]);
    if (write_text (path, self->texts[i], err, errlen) != 0) {
        unlink (path);
        free (path);
        return NULL;
    }
    self->files[i] = path;
    return path;
}

const char *
curve_run_text (const curve_run_t *self, int i)
{
    return i >= 0 && i < self->n ? self->texts[i] : NULL;
}

const char *
curve_run_public (const curve_run_t *self, int i)
{
    return i >= 0 && i < self->n ? self->pub[i] : NULL;
}

zcert_t *
curve_run_cert (const curve_run_t *self)
{
    return self->cert;
}

json_t *
curve_run_keys (const curve_run_t *self)
{
    json_t *keys = json_object ();
    for (int i = 0; i < self->n; i++)
        json_object_set_new (keys, self->names[i], json_string (self->pub[i]));
    return keys;
}

/* ------------------------------------------------------------------------
 *  Reading a certificate file (a node).
 */

/*  The whole file at path into buf (size > CURVE_FILE_MAX), NUL-ended: a
 *  regular file of at most CURVE_FILE_MAX bytes, no NUL in it. */
static int
read_file (const char *path, char *buf, size_t size, char *err, size_t errlen)
{
    struct stat st;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat (fd, &st) != 0) {
        tf_error (err, errlen, "%s: %s", path, strerror (errno));
        if (fd >= 0)
            close (fd);
        return -1;
    }
    size_t got = 0;
    ssize_t r = 0;
    if (S_ISREG (st.st_mode))
        while (got < size && ((r = read (fd, buf + got, size - got)) > 0
                              || (r < 0 && errno == EINTR)))
            got += r > 0 ? (size_t) r : 0;
    int e = errno;
    close (fd);
    if (!S_ISREG (st.st_mode))
        return tf_error (err, errlen, "%s: not a regular file", path);
    if (r < 0)
        return tf_error (err, errlen, "%s: %s", path, strerror (e));
    if (got > CURVE_FILE_MAX)
        return tf_error (err, errlen, "%s: larger than %d bytes: not a certificate", path,
                         CURVE_FILE_MAX);
    buf[got] = '\0';
    if (strlen (buf) != got)
        return tf_error (err, errlen, "%s: a NUL byte: not a certificate", path);
    return 0;
}

/*  The value of a key line after the key: ` = "VALUE"` and nothing else.
 *  Returns it (NUL-ended in place) or NULL. */
static char *
line_value (char *p)
{
    p += strspn (p, " \t");
    if (*p++ != '=')
        return NULL;
    p += strspn (p, " \t");
    if (*p++ != '"')
        return NULL;
    char *value = p, *end = strchr (p, '"');
    if (!end || end[1 + strspn (end + 1, " \t")] != '\0')
        return NULL;
    *end = '\0';
    return value;
}

/*  One key line of section into values. */
static int
parse_key (const char *path, int line, const char *section, char *text,
           char values[F_COUNT][VALUE_MAX], char *err, size_t errlen)
{
    char *key = text + strspn (text, " \t");
    size_t klen = strcspn (key, " \t=");
    int f = 0;
    while (f < F_COUNT && (!section || strcmp (fields[f].section, section) != 0
                           || strlen (fields[f].key) != klen
                           || strncmp (fields[f].key, key, klen) != 0))
        f++;
    if (f == F_COUNT)
        return tf_error (err, errlen, "%s:%d: unexpected \"%.*s\"%s%s", path, line,
                         (int) (klen > VALUE_MAX ? VALUE_MAX : klen), key,
                         section ? " in " : " outside any section",
                         section ? section : "");
    char *value = line_value (key + klen);
    if (!value)
        return tf_error (err, errlen, "%s:%d: %s/%s: expected = \"VALUE\"", path, line,
                         section, fields[f].key);
    if (*values[f])
        return tf_error (err, errlen, "%s:%d: %s/%s given twice", path, line, section,
                         fields[f].key);
    if (!*value || strlen (value) >= VALUE_MAX)
        return tf_error (err, errlen, "%s:%d: %s/%s: %s value", path, line, section,
                         fields[f].key, *value ? "too long a" : "an empty");
    snprintf (values[f], VALUE_MAX, "%s", value);
    return 0;
}

/*  Every line of text: comments, the two section names, their keys. */
static int
parse_cert (const char *path, char *text, char values[F_COUNT][VALUE_MAX], char *err,
            size_t errlen)
{
    const char *section = NULL;
    int line = 0, rc = 0;
    for (char *p = text, *next; rc == 0 && p && *p; p = next) {
        next = strchr (p, '\n');
        if (next)
            *next++ = '\0';
        line++;
        char *word = p + strspn (p, " \t");
        if (!*word || *word == '#')
            continue;
        if (word != p)
            rc = parse_key (path, line, section, p, values, err, errlen);
        else if (strcmp (p, "metadata") == 0 || strcmp (p, "curve") == 0)
            section = strcmp (p, "curve") == 0 ? "curve" : "metadata";
        else
            rc = tf_error (err, errlen, "%s:%d: unexpected \"%.*s\"", path, line,
                           VALUE_MAX, p);
    }
    for (int f = 0; f < F_COUNT && rc == 0; f++)
        if (!*values[f])
            rc = tf_error (err, errlen, "%s: no %s/%s", path, fields[f].section,
                           fields[f].key);
    return rc;
}

/*  The values make a certificate of node name: valid keys, the public key
 *  the secret key's. */
static int
check_values (const char *path, const char *name, char values[F_COUNT][VALUE_MAX],
              char *err, size_t errlen)
{
    char derived[CURVE_KEY_LEN + 1];
    if (strcmp (values[F_NODE], name) != 0)
        return tf_error (err, errlen, "%s: the certificate of node \"%s\", not of \"%s\"",
                         path, values[F_NODE], name);
    for (int f = F_CONTROLLER; f < F_COUNT; f++)
        if (!curve_key_valid (values[f]))
            return tf_error (err, errlen, "%s: %s/%s is not a key (%d characters of "
                             "Z85)", path, fields[f].section, fields[f].key,
                             CURVE_KEY_LEN);
    if (zmq_curve_public (derived, values[F_SECRET]) != 0
        || strcmp (derived, values[F_PUBLIC]) != 0)
        return tf_error (err, errlen, "%s: the public key is not the secret key's", path);
    return 0;
}

/*  The certificate in text (parsed in place), named what in messages. */
static zcert_t *
load_text (const char *what, char *text, const char *name, char *controller, char *err,
           size_t errlen)
{
    char values[F_COUNT][VALUE_MAX] = {{0}};
    zcert_t *cert = NULL;
    if (parse_cert (what, text, values, err, errlen) == 0
        && check_values (what, name, values, err, errlen) == 0) {
        byte pub[KEY_BYTES], sec[KEY_BYTES];
        zmq_z85_decode (pub, values[F_PUBLIC]);
        zmq_z85_decode (sec, values[F_SECRET]);
        cert = zcert_new_from (pub, sec);
        explicit_bzero (sec, sizeof sec);
        memcpy (controller, values[F_CONTROLLER], CURVE_KEY_LEN + 1);   /* checked */
        if (!cert)
            tf_error (err, errlen, "%s: cannot make a certificate", what);
    }
    explicit_bzero (values, sizeof values);
    return cert;
}

zcert_t *
curve_load (const char *path, const char *name, char *controller, char *err,
            size_t errlen)
{
    char *text = xmalloc (CURVE_FILE_MAX + 2);
    zcert_t *cert = NULL;
    if (read_file (path, text, CURVE_FILE_MAX + 1, err, errlen) == 0)
        cert = load_text (path, text, name, controller, err, errlen);
    explicit_bzero (text, CURVE_FILE_MAX + 2);
    free (text);
    return cert;
}

zcert_t *
curve_load_text (const char *what, const char *text, const char *name, char *controller,
                 char *err, size_t errlen)
{
    size_t len = strlen (text);
    if (len > CURVE_FILE_MAX) {
        tf_error (err, errlen, "%s: larger than %d bytes: not a certificate", what,
                  CURVE_FILE_MAX);
        return NULL;
    }
    char *copy = xmalloc (len + 1);
    memcpy (copy, text, len + 1);
    zcert_t *cert = load_text (what, copy, name, controller, err, errlen);
    explicit_bzero (copy, len + 1);
    free (copy);
    return cert;
}

/* ------------------------------------------------------------------------
 *  Sockets.
 */

zactor_t *
curve_auth_new (const char *const names[], const char *const keys[], int n, char *err,
                size_t errlen)
{
    static const byte no_secret[KEY_BYTES];
    zcertstore_t *store = zcertstore_new (NULL);
    for (int i = 0; i < n; i++) {
        byte pub[KEY_BYTES];
        if (!curve_key_valid (keys[i]) || strlen (names[i]) >= VALUE_MAX) {
            zcertstore_destroy (&store);
            tf_error (err, errlen, "the key of %.*s is not a key", VALUE_MAX, names[i]);
            return NULL;
        }
        if (zcertstore_lookup (store, keys[i])) {
            zcertstore_destroy (&store);
            tf_error (err, errlen, "%s has the key of another node", names[i]);
            return NULL;
        }
        zmq_z85_decode (pub, keys[i]);
        zcert_t *cert = zcert_new_from (pub, no_secret);
        zcert_set_meta (cert, CURVE_META_NAME, "%s", names[i]);
        zcertstore_insert (store, &cert);
    }
    zactor_t *auth = zactor_new (zauth, store);   /* takes the store */
    if (!auth)
        tf_error (err, errlen, "cannot start the ZAP handler");
    return auth;
}

void
curve_server (zsock_t *sock, zcert_t *cert)
{
    zcert_apply (cert, sock);
    zsock_set_curve_server (sock, 1);
    zsock_set_zap_domain (sock, CURVE_ZAP_DOMAIN);
}

void
curve_client (zsock_t *sock, zcert_t *cert, const char *server_key)
{
    zcert_apply (cert, sock);
    zsock_set_curve_serverkey (sock, server_key);
}

int
curve_peer_is (zframe_t *frame, const char *name)
{
    const char *meta = frame ? zframe_meta (frame, CURVE_META_NAME) : NULL;
    return meta && strcmp (meta, name) == 0;
}
