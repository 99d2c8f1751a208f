/*  waitset — the node loop's wait: a few czmq sockets, in priority order,
 *  and a deadline kept to the microsecond.
 *
 *  waitset_wait sleeps until a socket is readable or the deadline passes,
 *  whichever comes first, and never sleeps blind: the deadline is a
 *  timerfd polled beside the sockets (zmq_poll counts whole milliseconds
 *  only), so a message that arrives during the last sub-millisecond of a
 *  wait is read at once, and the wait ends on the deadline, not up to a
 *  millisecond after it. It returns every readable socket, in the order
 *  they were added, so the loop can serve them all in one turn, the most
 *  urgent first (node/node.c: children, then the parent, then the
 *  engine ...).
 */
#ifndef TF_WAITSET_H
#define TF_WAITSET_H

#include <czmq.h>

/*  The most sockets one set holds: the controller, engine, parent,
 *  heartbeat and children's sockets, and a command worker per slot. */
#define WAITSET_MAX 300

typedef struct waitset waitset_t;

/*  An empty set, or NULL with a message in err if no timer could be made. */
waitset_t *waitset_new (char *err, size_t errlen);
void waitset_destroy (waitset_t **self_p);

/*  Add a socket, after those added before it in priority. Returns 0, or
 *  -1 when the set holds WAITSET_MAX already. */
int waitset_add (waitset_t *self, zsock_t *sock);

/*  Wait until a socket is readable, `until` (tf_now's clock, seconds)
 *  has come, or an interrupt (waitset_catch_interrupts); a deadline
 *  already past only checks the sockets. Stores up to max readable
 *  sockets in ready[], in priority order, and returns how many (0: the
 *  deadline came). Returns -1 when the process was interrupted
 *  (zsys_interrupted, or the interrupt pipe) or its ZeroMQ context
 *  terminated. */
int waitset_wait (waitset_t *self, double until, zsock_t **ready, int max);

/*  From now on SIGINT and SIGTERM set zsys_interrupted and end every
 *  wait, the one under way and any that begins after the signal (czmq's
 *  handler only sets the flag, and a signal between a check of the flag
 *  and the poll would go unseen until the deadline). Call after
 *  zsys_init, which installs czmq's. Returns 0, or -1 with a message. */
int waitset_catch_interrupts (char *err, size_t errlen);

/*  zactor_destroy with SIGINT, SIGTERM and SIGHUP blocked in this thread:
 *  it waits for the actor's thread to end, and a signal caught meanwhile
 *  would cut that wait short (EINTR), leaving the thread to run on with
 *  what the caller frees next. A signal that comes is taken afterwards. */
void waitset_actor_destroy (zactor_t **actor_p);

/*  1 if sock has a message waiting now, without blocking. */
int waitset_readable (zsock_t *sock);

#endif
