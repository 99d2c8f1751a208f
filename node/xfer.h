/*  xfer — a parent's transfers to its children: who is served next, and
 *  when each chunk goes.
 *
 *  Per child it keeps the unserved asks (each task numbered in arrival
 *  order, for the policies), the transfer in flight and the earlier ones
 *  still awaiting acks (pipelined, at most window chunks unacknowledged
 *  per child), the link's pacer and a meter of the bytes sent, the tasks
 *  given to the child's subtree until their completion comes back, and
 *  calibration probes. Over all children it keeps the send limit's pacer.
 *  The rules are docs/architecture.md's, summed up in node/core.h: a
 *  single-port policy starts a transfer while none holds the port, a
 *  multi-port one while the estimated outgoing total leaves spare
 *  bandwidth; before every chunk the policy's favourite among the
 *  transfers that may send goes first; paced, a chunk of L bytes
 *  advances the link's and the total's virtual clock by L / rate.
 *
 *  Pure: time is passed in; actions (SEND_CHUNK, RELEASE) are appended to
 *  the caller's list. Which task may go to which child is the caller's
 *  decision: of the children ready for a transfer (xfer_list_ready) it
 *  keeps those it has a task for, and the policy picks among them
 *  (xfer_pick_child).
 */
#ifndef TF_XFER_H
#define TF_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "node/coretask.h"
#include "policies/policy.h"

typedef struct xfer xfer_t;

/*  A child may not hold more unserved asks than this: a child asking
 *  beyond it is broken, and its requests are refused. */
#define XFER_MAX_WANTED 100000u

typedef struct {
    int nchildren;
    const core_child_info_t *children;   /* nchildren entries, copied */
    uint32_t chunk_bytes;    /* > 0 */
    uint32_t window;         /* >= 1 */
    int pace;                /* pace links and the total (emulation) */
    double send_limit_bps;   /* physical bytes/s out in total, 0 = none */
    double meter_window;     /* seconds, > 0 */
    const policy_t *policy;  /* borrowed, must outlive the xfer */
    policy_parent_t parent;  /* the sender's facts, for the policy */
    double probe_units;      /* a probe's units and bytes (one task's) */
    uint64_t probe_bytes;
    int keep_commands;       /* a command's input is not released at its
                                transfer's last ack (a non-root node keeps
                                it until its result is back) */
    int fanout;              /* the ratio rule applies (a multi-port
                                policy with a send limit, adapting): only
                                the children the port can feed are kept
                                busy (xfer_pick_child) */
} xfer_cfg_t;

/*  Create the transfers' state of cfg->nchildren idle children. */
xfer_t *xfer_new (const xfer_cfg_t *cfg);

/*  Destroy and null the caller's pointer. Safe on NULL. */
void xfer_destroy (xfer_t **self_p);

/*  0 if c is a child's slot and the child is not lost; else -1 with a
 *  message in err. */
int xfer_check_child (const xfer_t *self, int c, char *err, size_t errlen);

/*  Child c (checked) asks for n more tasks. Returns 0, or -1 with a
 *  message in err (nothing kept) when n is 0 or its unserved asks would
 *  pass XFER_MAX_WANTED. */
int xfer_add_ask (xfer_t *self, int c, uint32_t n, char *err, size_t errlen);

/*  Child c's node index in the config. */
uint32_t xfer_child_node (const xfer_t *self, int c);

/*  The task arriving from this node's parent, of which held chunks are
 *  here (active 0: none): a transfer of it sends no chunk beyond them
 *  (cut-through). */
void xfer_set_arriving (xfer_t *self, int active, uint64_t task, uint32_t held);

/*  Start every child's send meter at now (0 bytes). */
void xfer_mark_meters (xfer_t *self, double now);

/*  Calibration: keep a probe transfer going to child c (checked) while
 *  on; its meter notes now. */
void xfer_set_streaming (xfer_t *self, int c, int on, double now);

/*  Start a probe transfer to every streaming child that has none going. */
void xfer_serve_probes (xfer_t *self, double now);

/*  The children that may start a transfer at now, the port rule aside:
 *  each with an unserved ask and its link free (pipelined: its last
 *  transfer all sent and delivered, and room in its window). Returns
 *  their slots, *n of them, in a scratch array the caller may shrink in
 *  place (keep those it has a task for), valid until the next call. */
int *xfer_list_ready (xfer_t *self, double now, int *n);

/*  Among slots[0..n) (ready children of the last xfer_list_ready at the
 *  same now, nothing started since, that the caller has a task for), the
 *  one whose ask the policy serves next; -1 when n is 0 or the port rule
 *  says wait: single-port, while a transfer holds the port; multi-port,
 *  while there is no spare bandwidth. Under the ratio rule (cfg.fanout)
 *  the first k children in the policy's order are offered, those short
 *  of the tasks that keep them busy first; a child beyond them only when
 *  the kept children's planned demand leaves its own free below the send
 *  limit, or when no kept child has an ask the port could serve now (one
 *  offered, or one whose link is still busy), and the next one after
 *  them also when every kept child asking holds what keeps it busy: the
 *  port has room (node/xfer_fanout.c). */
int xfer_pick_child (xfer_t *self, double now, const int *slots, int n);

/*  Serve one of child c's asks with task, which goes out from now and is
 *  counted in c's subtree until its completion comes back. */
void xfer_start_task (xfer_t *self, int c, const task_t *task, double now);

/*  Send every chunk the windows and pacers allow at now, re-deciding
 *  before each by the policy's chunk rule; a SEND_CHUNK action each. */
void xfer_pump_chunks (xfer_t *self, core_acts_t *acts, double now);

/*  Child c (checked) acknowledged chunk index of task at now. At a
 *  transfer's last ack, counts it and appends RELEASE (a command's input
 *  on a keep_commands node excepted). Returns 0, or -1 with a message in
 *  err (nothing changed) for an ack not awaited: acks come in order. */
int xfer_ack_chunk (xfer_t *self, int c, uint64_t task, uint32_t index, double now,
                    core_acts_t *acts, char *err, size_t errlen);

/*  Take the ndone completions (or tasks given back) from child c
 *  (checked) off the tasks given to its subtree: all of them, or, when one
 *  was not given (or came back already), none, -1 with a message in err. */
int xfer_take_given (xfer_t *self, int c, const core_done_t *done, uint32_t ndone,
                     char *err, size_t errlen);

/*  The tasks the last successful xfer_take_given took, in the order of
 *  its completions (as handed out: their avoid lists), borrowed until the
 *  next call to it. */
const task_t *xfer_taken (const xfer_t *self);

/*  Drop child c's unserved asks (a RECLAIM tells it). Returns how many
 *  tasks they asked for. */
uint32_t xfer_drop_asks (xfer_t *self, int c);

/*  1 if task is given to child c's subtree and not back, else 0. */
int xfer_was_given (const xfer_t *self, int c, uint64_t task);

/*  The tasks given to child c's subtree and not back, *n of them (none
 *  for a lost child or a bad slot), borrowed until the xfer next
 *  changes. */
const task_t *xfer_given_list (const xfer_t *self, int c, uint32_t *n);

/*  Take task off child c's given tasks, if there. */
void xfer_drop_given (xfer_t *self, int c, uint64_t task);

/*  Child c (checked) is lost: its transfers and asks are dropped, and it
 *  is never served again. Returns the tasks its subtree had (the one in
 *  flight included), *n of them, borrowed until the next call. */
const task_t *xfer_lose_child (xfer_t *self, int c, uint32_t *n);

/*  The earliest time a chunk held back by pacing may go, or a paced
 *  transfer's last chunk frees the port; -1 when there is none. */
double xfer_next_due (const xfer_t *self, double now);

/*  Bytes per second sent to child c over the last meter window (0 for a
 *  bad slot). */
double xfer_send_rate (xfer_t *self, int c, double now);

/*  Bytes sent to child c since its meter started; 0 for a bad c. */
double xfer_sent_bytes (const xfer_t *self, int c);

/*  Replace what the policy sees of child c's rates (core_set_child_rates:
 *  each field kept when NaN, negative or infinite; a bad slot ignored).
 *  link_bps, the pacing, is not among them. */
void xfer_set_child_rates (xfer_t *self, int c, const core_rates_t *rates);

/*  Replace child c's IR_s alone (xfer_set_child_rates). */
void xfer_set_child_ir (xfer_t *self, int c, double ir_send);
/*  Slot c, vacant since creation (info.absent), becomes child info.
 *  Returns 0, or -1 with a message in err. */
int xfer_attach_child (xfer_t *self, int c, const core_child_info_t *info, char *err,
                       size_t errlen);

/*  Child c's live subtree bound, tasks/s (its SUBTREE), for the ratio
 *  rule: it replaces C_i / w as the child's consumption rate. Ignored
 *  for a bad slot or a value not finite or negative. */
void xfer_set_child_bound (xfer_t *self, int c, double tasks_per_s);

/*  The number of children the ratio rule keeps busy now, or -1 when it
 *  does not apply. */
int xfer_fanout (const xfer_t *self);

/*  core_rank: the children's slots in the policy's order. */
void xfer_rank (const xfer_t *self, int *slots);

/*  Replace the sender's own compute rate in what the policy sees
 *  (policy_parent_t.compute_rate; ignored unless > 0 and finite). */
void xfer_set_compute_rate (xfer_t *self, double units_per_s);

/*  Carry child c's chunks at share x its link rate from the next chunk
 *  on (core_set_link_share; ignored for a bad slot or a share outside
 *  (0, 1]). */
void xfer_set_link_share (xfer_t *self, int c, double share);

/*  Tasks/s child c gets in the policy's planned split (ia-split;
 *  core_split_rate), 0 without one. */
double xfer_split_rate (const xfer_t *self, int c);

/*  What the policy sees of child c now (its beliefs, asks, subtree
 *  bound and share), for the end-game's estimates. */
policy_child_t xfer_child_facts (const xfer_t *self, int c);

/*  Bytes/s a transfer to child c moves at, by the beliefs: its link's
 *  rate (link_mbps), at most its planned share; 0 when unknown. */
double xfer_child_bps (const xfer_t *self, int c);

/*  Bytes of task not yet sent to child c (0 unless it is c's transfer
 *  in flight). */
uint64_t xfer_bytes_left (const xfer_t *self, int c, uint64_t task);

/*  Transfers holding the port at now (core_port_busy). */
int xfer_port_busy (const xfer_t *self, double now);

/*  Transfers whose last ack is not in (core_sending). */
int xfer_sending (const xfer_t *self);

/*  Child c's counters (zeros for a bad slot). */
core_child_stats_t xfer_child_stats (const xfer_t *self, int c);

#endif
