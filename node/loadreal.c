/*  loadreal — background load as real processes (node/burner.h), from
 *  START on: CPU burners on the node's CPUs, job streams, contenders
 *  sending to the parent's host. See node/runtime.h. */
#include "node/burner.h"
#include "node/runtime.h"

#include <arpa/inet.h>
#include <string.h>

#include "overlay/util.h"

/*  The parent's host from the endpoint the node connected to
 *  ("tcp://1.2.3.4:5555", "tcp://[::1]:5555") into buf; "" for the root,
 *  an endpoint of another form or a host that is not a numeric address
 *  (the contenders then send to 127.0.0.1). */
static void
parent_host (node_t *self, char *buf, size_t len)
{
    buf[0] = '\0';
    char *ep = self->link.parent ? zsock_last_endpoint (self->link.parent) : NULL;
    const char *host = ep && strncmp (ep, "tcp://", 6) == 0 ? ep + 6 : NULL;
    const char *colon = host ? strrchr (host, ':') : NULL;
    if (colon && host[0] == '[' && colon > host + 1 && colon[-1] == ']') {
        host++;
        colon--;
    }
    if (colon && (size_t) (colon - host) < len) {
        memcpy (buf, host, (size_t) (colon - host));
        buf[colon - host] = '\0';
    }
    zstr_free (&ep);
    unsigned char addr[sizeof (struct in6_addr)];
    if (inet_pton (AF_INET, buf, addr) != 1 && inet_pton (AF_INET6, buf, addr) != 1)
        buf[0] = '\0';   /* a name: unknown here */
}

int
loadreal_start (node_t *self, double now, char *err, size_t errlen)
{
    char host[256];
    parent_host (self, host, sizeof host);
    burner_opts_t opts = {.node = self->me->name, .dest_host = host, .t0 = now};
    self->load.real = burner_start (self->load.load, &opts, err, errlen);
    if (!self->load.real)
        return -1;
    node_verbose (self, "background load: %d processes on %d CPUs, contenders send to %s",
                  burner_pids (self->load.real, NULL, 0), burner_ncpus (self->load.real),
                  host[0] ? host : "127.0.0.1");
    return 0;
}

double
loadreal_busy_integral (node_t *self, double now)
{
    (void) now;
    if (!self->load.real)
        return 0;
    return burner_cpu_seconds (self->load.real) / burner_ncpus (self->load.real);
}

void
loadreal_stop (node_t *self)
{
    if (self->load.real && burner_dropped (self->load.real))
        node_log (self, "background load: %llu job arrivals dropped (%d jobs alive, or a "
                  "fork failed)",
                  (unsigned long long) burner_dropped (self->load.real), BURNER_MAX_JOBS);
    burner_stop (&self->load.real);
}
