/*  runner_outputs — the files a finished command task sends back; see
 *  node/runner.h. Split from node/runner.c, which starts and watches the
 *  command.
 */
#include "node/runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/bundle.h"
#include "overlay/util.h"

/* ------------------------------------------------------------------------
 *  Outputs.
 */

void
runner_names_free (char ***names_p, size_t n)
{
    if (!names_p || !*names_p)
        return;
    for (size_t i = 0; i < n; i++)
        free ((*names_p)[i]);
    free (*names_p);
    *names_p = NULL;
}

/*  Check that name is a regular file under wfd, reached without following
 *  a symlink. Returns 0, or -1 with a message naming it. */
static int
output_check (int wfd, const char *name, char *err, size_t errlen)
{
    char comp[BUNDLE_MAX_COMPONENT + 1];
    int cur = wfd, rc = 0;
    const char *p = name;
    for (;;) {
        size_t clen = strcspn (p, "/");
        memcpy (comp, p, clen);
        comp[clen] = '\0';
        struct stat st;
        if (!p[clen]) {
            if (fstatat (cur, comp, &st, AT_SYMLINK_NOFOLLOW) != 0)
                rc = tf_error (err, errlen, "declared output \"%s\" %s", name,
                               errno == ENOENT ? "is missing" : strerror (errno));
            else if (!S_ISREG (st.st_mode))
                rc = tf_error (err, errlen, "declared output \"%s\" is not a regular file",
                               name);
            break;
        }
        int next = openat (cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            rc = tf_error (err, errlen, "declared output \"%s\": \"%.*s\" is %s",
                           name, (int) (p - name + clen), name,
                           errno == ENOENT ? "missing" : "a symlink or not a directory");
            break;
        }
        if (cur != wfd)
            close (cur);
        cur = next;
        p += clen + 1;
    }
    if (cur != wfd)
        close (cur);
    return rc;
}

static int
outputs_declared (int wfd, const char *const *declared, size_t n, char ***names_out,
                  char *err, size_t errlen)
{
    if (bundle_names_check (declared, n, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (output_check (wfd, declared[i], err, errlen) != 0)
            return -1;
    *names_out = xcalloc (n, sizeof **names_out);
    for (size_t i = 0; i < n; i++)
        (*names_out)[i] = xstrdup (declared[i]);
    return 0;
}

/*  A listing in progress. */
typedef struct {
    char **names;
    size_t n;
    const char **staged;     /* sorted */
    size_t nstaged;
    char path[BUNDLE_MAX_NAME + 1];      /* the directory being read, relative */
} listing_t;

static int
str_cmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/*  Add the regular file path/name unless it is staged. */
static int
listing_add (listing_t *ls, const char *name, char *err, size_t errlen)
{
    const char *key = name;
    if (ls->nstaged && bsearch (&key, ls->staged, ls->nstaged, sizeof *ls->staged, str_cmp))
        return 0;
    if (ls->n == BUNDLE_MAX_FILES)
        return tf_error (err, errlen, "outputs: more than %d files", BUNDLE_MAX_FILES);
    ls->names = xrealloc (ls->names, (ls->n + 1) * sizeof *ls->names);
    ls->names[ls->n++] = xstrdup (name);
    return 0;
}

/*  List the directory open on fd (taken), whose relative name is
 *  ls->path[0..len) (len 0: the work directory), depth levels down. */
static int
listing_dir (listing_t *ls, int fd, size_t len, int depth, char *err, size_t errlen)
{
    DIR *dir = fdopendir (fd);
    if (!dir) {
        close (fd);
        return tf_error (err, errlen, "outputs: %s: %s", len ? ls->path : ".",
                         strerror (errno));
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir (dir))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat (dirfd (dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;                    /* gone meanwhile */
        if (!S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
            continue;                    /* symlinks and special files */
        size_t nlen = strlen (e->d_name), at = len ? len + 1 : 0;
        if (at + nlen > BUNDLE_MAX_NAME) {
            rc = tf_error (err, errlen, "outputs: a name under \"%.100s\" is longer than"
                           " %d bytes", len ? ls->path : ".", BUNDLE_MAX_NAME);
            break;
        }
        if (len)
            ls->path[len] = '/';
        memcpy (ls->path + at, e->d_name, nlen + 1);
        if (S_ISREG (st.st_mode)) {
            rc = listing_add (ls, ls->path, err, errlen);
        } else if (depth == RUNNER_MAX_DEPTH) {
            rc = tf_error (err, errlen, "outputs: \"%.100s\" is nested deeper than %d"
                           " directories", ls->path, RUNNER_MAX_DEPTH);
        } else {
            int sub = openat (dirfd (dir), e->d_name,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                rc = listing_dir (ls, sub, at + nlen, depth + 1, err, errlen);
        }
        ls->path[len] = '\0';
    }
    closedir (dir);
    return rc;
}

static int
outputs_listed (int wfd, const char *const *staged, size_t nstaged, char ***names_out,
                size_t *n_out, char *err, size_t errlen)
{
    listing_t *ls = xcalloc (1, sizeof *ls);
    ls->staged = xcalloc (nstaged ? nstaged : 1, sizeof *ls->staged);
    if (nstaged) {
        memcpy (ls->staged, staged, nstaged * sizeof *ls->staged);
        qsort (ls->staged, nstaged, sizeof *ls->staged, str_cmp);
    }
    ls->nstaged = nstaged;
    int fd = fcntl (wfd, F_DUPFD_CLOEXEC, 0);
    int rc = fd < 0 ? tf_error (err, errlen, "outputs: %s", strerror (errno))
                    : listing_dir (ls, fd, 0, 0, err, errlen);
    if (rc == 0) {
        if (!ls->names)
            ls->names = xcalloc (1, sizeof *ls->names);
        qsort (ls->names, ls->n, sizeof *ls->names, str_cmp);
        *names_out = ls->names;
        *n_out = ls->n;
    } else {
        runner_names_free (&ls->names, ls->n);
    }
    free (ls->staged);
    free (ls);
    return rc;
}

int
runner_outputs (const char *workdir, const char *const *declared, size_t ndeclared,
                const char *const *staged, size_t nstaged, char ***names_out,
                size_t *n_out, char *err, size_t errlen)
{
    *names_out = NULL;
    *n_out = 0;
    if (nstaged > BUNDLE_MAX_FILES)
        return tf_error (err, errlen, "outputs: %zu staged names, more than %d", nstaged,
                         BUNDLE_MAX_FILES);
    int wfd = open (workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (wfd < 0)
        return tf_error (err, errlen, "workdir %s: %s", workdir, strerror (errno));
    int rc;
    if (ndeclared > 0) {
        rc = outputs_declared (wfd, declared, ndeclared, names_out, err, errlen);
        if (rc == 0)
            *n_out = ndeclared;
    } else {
        rc = outputs_listed (wfd, staged, nstaged, names_out, n_out, err, errlen);
    }
    close (wfd);
    return rc;
}
