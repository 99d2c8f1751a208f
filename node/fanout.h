/*  fanout — the ratio rule: how many children a multi-port parent's send
 *  port can feed (docs/adapt.md, "Fan-out: the ratio rule").
 *
 *  Tangmunarunkit and Steenkiste steer the number of nodes in use by the
 *  measured communication/computation ratio to its optimum, 1 on a shared
 *  segment: a parent whose children, served in the policy's order,
 *  together ask for as many bytes per second as its port sends is at
 *  ratio 1; one more child only shares out the same bytes more thinly,
 *  and ends the run holding tasks that a kept child would have finished.
 *  Child i asks rate_i x Z MB/s (rate_i the tasks per second its subtree
 *  consumes: its live subtree bound That_i when known, else C_i / w), and
 *  the port feeds the smallest k whose cumulative demand
 *  sum_{i<=k} rate_i x Z reaches the send limit S.
 *
 *  Pure: plain numbers in, a count out; the decision core keeps the
 *  children's order and beliefs (node/xfer_fanout.c).
 */
#ifndef TF_FANOUT_H
#define TF_FANOUT_H

/*  Relative slack with which a cumulative demand "reaches" the limit: a
 *  sum of rates computed from decimal figures (0.11 x 10 against 1.1)
 *  may fall short by a rounding error, which must not add a child. */
#define FANOUT_EPS 1e-9

/*  One child as the rule sees it, in the policy's order. */
typedef struct {
    double rate;             /* tasks/s its subtree consumes; NaN or
                                negative: unknown, asks nothing; INFINITY:
                                fills any port */
    int excluded;            /* the policy never serves it (or it is lost):
                                it never counts */
} fanout_child_t;

/*  One child's demand on the port, MB/s: rate x task_mb (0 for an
 *  unknown rate or a task that moves no data). */
double fanout_demand (double rate, double task_mb);

/*  The number of children, counting only those not excluded and in
 *  order, the port feeds: the smallest k whose cumulative demand reaches
 *  send_limit_mbps, or every one not excluded when it never does — in
 *  particular with no send limit (send_limit_mbps <= 0, or not finite)
 *  and with tasks that move no data (task_mb <= 0). 0 when n is 0 or
 *  every child is excluded. */
int fanout_count (double send_limit_mbps, double task_mb, const fanout_child_t *children,
                  int n);

#endif
