/*  step — a node started as one task of the controller's srun step. See
 *  step.h.
 */
#include "node/step.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay/util.h"

/*  The rank the watcher acts for. */
static int watch_rank = -1;

/*  Read the step's signal lines until end of file, then SIGTERM. */
static void *
watch_stdin (void *arg)
{
    (void) arg;
    char line[STEPIN_LINE_MAX + 2];
    int rank, sig;
    while (fgets (line, sizeof line, stdin))
        if (stepin_signal_parse (line, &rank, &sig) == 0 && rank == watch_rank)
            kill (getpid (), sig);
    kill (getpid (), SIGTERM);
    return NULL;
}

/*  The certificate into a fresh file only we can read. */
static int
write_cert (step_node_t *self, char *err, size_t errlen)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (self->cert_path, sizeof self->cert_path, "%s/treefarm-cert.XXXXXX",
              tmp && *tmp ? tmp : "/tmp");
    mode_t old = umask (077);
    int fd = mkstemp (self->cert_path);
    umask (old);
    if (fd < 0) {
        int e = errno;
        self->cert_path[0] = '\0';
        return tf_error (err, errlen, "cannot write the certificate: %s", strerror (e));
    }
    int rc = tf_write_all (fd, self->me.cert, strlen (self->me.cert));
    int e = errno;
    close (fd);
    if (rc != 0)
        return tf_error (err, errlen, "cannot write the certificate %s: %s",
                         self->cert_path, strerror (e));
    return 0;
}

int
step_node_setup (step_node_t *self, node_opts_t *opts, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    memset (self, 0, sizeof *self);
    int rank = stepin_rank_parse (getenv ("SLURM_PROCID"), err, errlen);
    if (rank < 0)
        return -1;
    if (stepin_read (stdin, rank, &self->me, why, sizeof why) != 0)
        return tf_error (err, errlen, "task %d of the step: %s", rank, why);
    opts->name = self->me.name;
    opts->bind = *self->me.bind ? self->me.bind : NULL;
    if (self->me.cert) {
        if (write_cert (self, err, errlen) != 0)
            return -1;
        opts->cert = self->cert_path;
        opts->cert_once = 1;
    }
    stepin_node_clear (&self->me);
    watch_rank = rank;
    pthread_t thread;
    if (pthread_create (&thread, NULL, watch_stdin, NULL) != 0)
        return tf_error (err, errlen, "cannot watch stdin");
    pthread_detach (thread);
    return 0;
}

void
step_node_clear (step_node_t *self)
{
    if (self->cert_path[0])
        unlink (self->cert_path);
    stepin_node_clear (&self->me);
    memset (self, 0, sizeof *self);
}
