/*  vclock — the unit tests' discrete-event driver on a virtual clock: a
 *  whole experiment's tree in one process, every node a decision core
 *  built from the config, every task checked to be recorded exactly once.
 *
 *  It implements the driver interface of docs/architecture.md ("Drivers"):
 *  build each node's core from the config (node/setup.h); feed it START;
 *  turn each action into an event for the node it is meant for, as
 *  node/route.h says (REQUEST, ACK and DONE go to the parent, SEND_CHUNK
 *  to the child, COMPUTE to the node's own engine); tick each core at its
 *  next deadline; give every event the virtual time it happens at. A
 *  message takes the latency (VCLOCK_LATENCY unless the options say
 *  otherwise), a paced chunk leaves when its pacers allow (the core's
 *  deadline), and an engine takes units / (C x time scale) per task, or
 *  with the options' interference longer, by what its node's transfers
 *  cost it (docs/model.md). A
 *  command task's input is a few chunks; its outputs come back as
 *  1000 + id bytes.
 *
 *  Like tests/helpers.h, it fails the running cmocka test (fail_msg,
 *  assert_*) instead of returning an error: a core that refuses an event,
 *  a tree that stalls, a run with no end, a task not recorded once.
 */
#ifndef TF_TESTS_VCLOCK_H
#define TF_TESTS_VCLOCK_H

#include <stdint.h>

#include "node/core.h"
#include "overlay/config.h"

#define VCLOCK_LATENCY 1e-4          /* one way, virtual seconds */
#define VCLOCK_MAX_EVENTS 5000000    /* a run that takes more is stuck */
#define VCLOCK_SAMPLE_S 1e-3         /* with interference: how often a busy
                                        engine's speed is taken again from
                                        the metered rates, virtual s */
#define VCLOCK_MIN_SPEED 0.01        /* an engine never stops outright */

typedef struct vclock vclock_t;

/*  What a test chooses about a run. */
typedef struct {
    double latency;          /* one way, virtual seconds */
    int bad_node;            /* commands always fail there (-1: none) */
    uint64_t hopeless;       /* commands below this id fail everywhere */
    int interference;        /* emulate interference as a run does
                                (node/emulate.h): a synthetic task's
                                engine runs at the speed its node's own
                                transfers leave it, sampled every
                                VCLOCK_SAMPLE_S; 0: at full speed */
} vclock_opts_t;

/*  What a run counted, over every node. */
typedef struct {
    uint64_t retries;        /* RETRY actions */
    uint64_t results;        /* RESULT events sent up to a parent */
    uint64_t bad_failures;   /* RETRY actions of commands failed at bad_node */
    int max_sending;         /* the most transfers one node had in flight */
    int max_port;            /* the most holding one node's port at once
                                (paced: until delivered) */
    int max_computing;       /* the most tasks one node computed at once */
} vclock_counts_t;

/*  The defaults: VCLOCK_LATENCY, no bad node, no hopeless command. */
vclock_opts_t vclock_opts_default (void);

/*  A driver for cfg with every node's core built (setup_opts_default,
 *  command tasks' input bundles of a few chunks), nothing started yet.
 *  opts NULL means the defaults. cfg is borrowed and must outlive the
 *  driver. Fails the test if a core cannot be built. */
vclock_t *vclock_new (const config_t *cfg, const vclock_opts_t *opts);

/*  Free the driver, its cores and any event still queued; nulls *self_p. */
void vclock_destroy (vclock_t **self_p);

/*  Start every node and run until the root says FINISHED; returns the
 *  virtual makespan in seconds (times cfg's time scale for the
 *  platform's). Call once. Fails the test if the tree stalls, takes more
 *  than VCLOCK_MAX_EVENTS events, or records a task after FINISHED. */
double vclock_run (vclock_t *self);

/*  Check the run: every task recorded exactly once, by a node whose engine
 *  computed it; no core counted a malformed event; the root counted no
 *  duplicate. */
void vclock_check_exactly_once (const vclock_t *self);

/*  The run's counters. */
vclock_counts_t vclock_counts (const vclock_t *self);

/*  Node's core (borrowed; the driver keeps it until destroyed). */
core_t *vclock_core (const vclock_t *self, int node);

/*  The last RECORDED entry the controller heard for task (zeroed if
 *  none); task is below config_bag_size. */
const core_done_t *vclock_last (const vclock_t *self, uint64_t task);

/*  The run's tail: virtual seconds from the record of the task that
 *  left `fraction` of the bag to come (0.05: the last 5%) to the last
 *  record. */
double vclock_tail (const vclock_t *self, double fraction);

/*  How many tasks were RECORDED as computed by node. */
uint64_t vclock_recorded_from (const vclock_t *self, int node);

#endif
