/*  emulate — what a node observes of its own transfers, and the emulated
 *  interference they cause.
 *
 *  Every few milliseconds the runtime hands the bytes it moved so far
 *  (received from the parent, sent to each child) to emul_update_bytes,
 *  which turns those moved since the last update into the interval's
 *  rates; the simulator (sim/) hands rates as they are now to
 *  emul_update. What the node "observed" — the sampler's transfer
 *  columns (docs/measure.md) — is the bytes moved up to the last update,
 *  plus the rates held since (the simulator's last rates; 0 for the
 *  runtime's). When emulating, the rates set the engine's
 *  speed factor: the model's normalized compute rate
 *  1 - IR_r TR(n) - sum_i IR_s(i) TR(i) in platform MB/s
 *  (docs/model.md; node/meter.h interference_factor). The time-weighted
 *  mean of that factor while the engine computes is the run's speed_mean.
 *
 *  Pure: no sockets, no clock; the caller passes the time.
 */
#ifndef TF_EMULATE_H
#define TF_EMULATE_H

typedef struct emul emul_t;

/*  A node with nchildren children, IR_r ir_recv and, per child, IR_s
 *  ir_send[i] (copied); bps_per_mbps physical bytes/s per platform MB/s
 *  (> 0). With apply = 0 (real compute) rates are still held and
 *  integrated but the factor stays 1. */
emul_t *emul_new (int nchildren, double ir_recv, const double *ir_send,
                  double bps_per_mbps, int apply);

/*  Destroy and null the pointer. Safe on NULL. */
void emul_destroy (emul_t **self_p);

/*  The rates metered at now (bytes/s: recv from the parent, send[i] to
 *  child i) replace the held ones, after the held ones are integrated up
 *  to now, and the time since the last update counts toward the mean
 *  speed if busy (the engine computed). Returns the speed factor the
 *  engine must run at from now, in [0, 1]. */
double emul_update (emul_t *self, double now, int busy, double recv, const double *send);

/*  The runtime's update: the bytes moved so far (recv_total from the
 *  parent, sent_total[i] to child i, as the meters total them) instead of
 *  rates. The bytes moved since the last update, over its length, are
 *  the interval's mean rates; busy_s is how much of the interval (its
 *  end) the engine computed, 0 if it is idle now. The compute the
 *  transfers took while busy, lost fraction x busy_s, is charged over
 *  the last apply_s seconds (<= busy_s; shorter when the engine's speed
 *  was set since, which the charge may not date before): the factor
 *  returned is to run the engine at over them, dated back. The compute
 *  the transfers take is then exactly IR x the bytes moved while
 *  computing, whatever the meters' windows or the moments the loop
 *  turns. What does not fit (more than apply_s) is owed to the next
 *  intervals while the engine stays busy, and forgiven once idle. From now until the next update the engine is to run at
 *  1: nothing is assumed to move, so that the factor dated back is never
 *  above the one in force and a charge only ever pushes a task's end
 *  later, never into the past. The held rates (the sampler's, between
 *  updates) are 0 likewise.
 *  A call less than EMUL_MIN_INTERVAL after the last changes nothing and
 *  returns 1: the next update charges what moved. The first call only
 *  notes the totals. Do not mix with emul_update on one emul_t. */
#define EMUL_MIN_INTERVAL 1e-4   /* seconds */
double emul_update_bytes (emul_t *self, double now, double busy_s, double apply_s,
                          double recv_total, const double *sent_total);

/*  1 if traffic can change the speed factor (apply, and some IR_r or
 *  IR_s is not 0): only then must the runtime update it every few
 *  milliseconds; otherwise the factor is 1 whatever flows, and updates
 *  may be as rare as the runtime likes (the held rates are then only
 *  the sampler's, integrated as they were metered at each update). */
int emul_interferes (const emul_t *self);

/*  When emul_update last ran, 0 before the first. */
double emul_updated_at (const emul_t *self);

/*  The bytes observed up to now: out[0] received, out[1 + i] sent to
 *  child i (nchildren + 1 entries): the integral of the held rates. */
void emul_observed (const emul_t *self, double now, double *out);

/*  The time-weighted mean speed factor while busy; 1 if never busy. */
double emul_speed_mean (const emul_t *self);

/*  Child i's IR_s from now on (a node that joined in a vacant slot).
 *  Ignored for a bad slot or a value not finite and >= 0. */
void emul_set_ir_send (emul_t *self, int i, double ir_send);

#endif
