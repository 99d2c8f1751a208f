/*  waitset — the node loop's wait; see waitset.h.
 *
 *  The sockets go to zmq_poll as ZeroMQ items and the deadline as one
 *  more item: a timerfd armed at the absolute deadline on
 *  CLOCK_MONOTONIC (tf_now's clock), so zmq_poll waits without a timeout
 *  of its own. Rearming a timerfd clears its expirations, so a deadline
 *  that fired unread never wakes a later wait.
 *
 *  Interrupts: czmq's own handler only sets zsys_interrupted, and a loop
 *  that checks the flag and then polls loses a signal that lands between
 *  the two, or that libzmq's own threads take: the poll sleeps to its
 *  deadline (seen: a node told to stop by its ssh session slept 9 s to
 *  its next one). Our handler also writes a byte to a pipe every wait
 *  polls and nobody reads, so a signal ends the wait under way and every
 *  later one, whenever it came and whichever thread took it.
 */
#include "node/waitset.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "overlay/util.h"

struct waitset {
    zsock_t *socks[WAITSET_MAX];
    zmq_pollitem_t items[WAITSET_MAX + 2];   /* the sockets, the wake pipe, the timer */
    int n;
    int timer;
};

/*  The interrupt pipe: the handler writes, every wait polls, nobody
 *  reads; -1 until waitset_catch_interrupts. */
static int wake_read = -1, wake_write = -1;

static void
on_interrupt (int sig)
{
    (void) sig;
    int saved = errno;
    zsys_interrupted = 1;
    zctx_interrupted = 1;
    if (wake_write >= 0 && write (wake_write, "", 1) < 0) {
        /* full: a byte is waiting already, and that wakes the wait */
    }
    errno = saved;
}

int
waitset_catch_interrupts (char *err, size_t errlen)
{
    if (wake_read < 0) {
        int fds[2];
        if (pipe2 (fds, O_NONBLOCK | O_CLOEXEC) < 0)
            return tf_error (err, errlen, "cannot make a pipe for interrupts: %s",
                             strerror (errno));
        wake_read = fds[0];
        wake_write = fds[1];
    }
    zsys_handler_set (on_interrupt);
    if (zsys_interrupted)   /* czmq's handler took one before ours */
        on_interrupt (SIGTERM);
    return 0;
}

void
waitset_actor_destroy (zactor_t **actor_p)
{
    sigset_t block, old;
    sigemptyset (&block);
    sigaddset (&block, SIGINT);
    sigaddset (&block, SIGTERM);
    sigaddset (&block, SIGHUP);
    pthread_sigmask (SIG_BLOCK, &block, &old);
    zactor_destroy (actor_p);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
}

waitset_t *
waitset_new (char *err, size_t errlen)
{
    int fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) {
        tf_error (err, errlen, "cannot make a timer: %s", strerror (errno));
        return NULL;
    }
    waitset_t *self = xcalloc (1, sizeof *self);
    self->timer = fd;
    return self;
}

void
waitset_destroy (waitset_t **self_p)
{
    waitset_t *self = *self_p;
    if (!self)
        return;
    close (self->timer);
    free (self);
    *self_p = NULL;
}

int
waitset_add (waitset_t *self, zsock_t *sock)
{
    if (self->n == WAITSET_MAX)
        return -1;
    self->socks[self->n] = sock;
    self->items[self->n] = (zmq_pollitem_t){.socket = zsock_resolve (sock),
                                            .events = ZMQ_POLLIN};
    self->n++;
    return 0;
}

int
waitset_readable (zsock_t *sock)
{
    return (zsock_events (sock) & ZMQ_POLLIN) != 0;
}

/*  Arm the timer at until; 0, or -1 if it is past (or cannot be armed:
 *  then the wait only checks the sockets, and the loop comes back). */
static int
arm (waitset_t *self, double until)
{
    if (!(until > tf_now ()))
        return -1;
    double whole = floor (until);
    struct itimerspec at = {.it_value = {.tv_sec = (time_t) whole,
                                         .tv_nsec = (long) ((until - whole) * 1e9)}};
    if (at.it_value.tv_nsec >= 1000000000L)
        at.it_value.tv_nsec = 999999999L;
    if (at.it_value.tv_sec == 0 && at.it_value.tv_nsec == 0)
        at.it_value.tv_nsec = 1;   /* zero would disarm it */
    return timerfd_settime (self->timer, TFD_TIMER_ABSTIME, &at, NULL);
}

int
waitset_wait (waitset_t *self, double until, zsock_t **ready, int max)
{
    int armed = arm (self, until) == 0;
    int n = self->n;
    int wake = wake_read >= 0 ? n++ : -1;
    if (wake >= 0)
        self->items[wake] = (zmq_pollitem_t){.fd = wake_read, .events = ZMQ_POLLIN};
    int timer = armed ? n++ : -1;
    if (armed)
        self->items[timer] = (zmq_pollitem_t){.fd = self->timer, .events = ZMQ_POLLIN};
    int rc = zmq_poll (self->items, n, armed ? -1 : 0);
    if (rc < 0) {
        if (zsys_interrupted || zmq_errno () == ETERM)
            return -1;
        return 0;   /* a signal that is not an interrupt: the loop comes back */
    }
    if (wake >= 0 && (self->items[wake].revents & ZMQ_POLLIN))
        return -1;   /* never read: an interrupt ends every later wait too */
    if (armed && (self->items[timer].revents & ZMQ_POLLIN)) {
        uint64_t expirations;
        if (read (self->timer, &expirations, sizeof expirations) < 0)
            expirations = 0;   /* nothing to do: rearming clears it */
    }
    int got = 0;
    for (int i = 0; i < self->n && got < max; i++)
        if (self->items[i].revents & ZMQ_POLLIN)
            ready[got++] = self->socks[i];
    return got;
}
