/*  curve_dir — a ZAP handler whose admitted keys can grow while the
 *  process runs: a directory of public certificates that czmq's zauth
 *  reads again whenever it changed (a node that joins a running run,
 *  docs/adapt.md "Grow", docs/security.md). See overlay/curve.h.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/curve.h"
#include "overlay/util.h"

#define KEY_BYTES 32
#define DIR_MODE 0700
/*  zauth's loader skips files whose names end so: a certificate being
 *  written is named that way until it is complete. */
#define HIDDEN_SUFFIX "_secret"

int
curve_auth_admit (const char *dir, const char *name, const char *key, char *err,
                  size_t errlen)
{
    static const byte no_secret[KEY_BYTES];
    byte pub[KEY_BYTES];
    if (!curve_key_valid (key) || strlen (name) > 63 || strchr (name, '/'))
        return tf_error (err, errlen, "the key of %.63s is not a key", name);
    zmq_z85_decode (pub, key);
    zcert_t *cert = zcert_new_from (pub, no_secret);
    zcert_set_meta (cert, CURVE_META_NAME, "%s", name);
    char *tmp = xasprintf ("%s/%s%s", dir, name, HIDDEN_SUFFIX);
    char *path = xasprintf ("%s/%s", dir, name);
    mode_t old = umask (0177);
    int rc = zcert_save_public (cert, tmp);
    umask (old);
    if (rc != 0 || rename (tmp, path) != 0) {
        unlink (tmp);
        rc = tf_error (err, errlen, "cannot write %s: %s", path, strerror (errno));
    }
    zcert_destroy (&cert);
    free (tmp);
    free (path);
    return rc;
}

zactor_t *
curve_auth_dir_new (const char *dir, const char *const names[], const char *const keys[],
                    int n, char *err, size_t errlen)
{
    struct stat st;
    if ((mkdir (dir, DIR_MODE) != 0 && errno != EEXIST) || lstat (dir, &st) != 0
        || !S_ISDIR (st.st_mode) || st.st_uid != geteuid () || chmod (dir, DIR_MODE) != 0) {
        tf_error (err, errlen, "%s: not a directory of ours to keep keys in", dir);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (curve_auth_admit (dir, names[i], keys[i], err, errlen) != 0)
            return NULL;
    zactor_t *auth = zactor_new (zauth, NULL);
    if (!auth) {
        tf_error (err, errlen, "cannot start the ZAP handler");
        return NULL;
    }
    zstr_sendx (auth, "CURVE", dir, NULL);
    zsock_wait (auth);
    return auth;
}

void
curve_auth_dir_remove (const char *dir)
{
    if (!dir)
        return;
    DIR *d = opendir (dir);
    struct dirent *e;
    while (d && (e = readdir (d)))
        if (e->d_name[0] != '.') {
            char path[PATH_MAX];
            snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
            unlink (path);
        }
    if (d)
        closedir (d);
    rmdir (dir);
}
