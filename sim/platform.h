/*  platform — a config's tree as a SimGrid platform (docs/simulate.md,
 *  "The platform").
 *
 *  Every node is a host whose speed is its compute rate; every link from
 *  a parent is a split-duplex link of its rate and latency; a parent
 *  with a send limit has one shared link that every transfer it sends
 *  crosses first. Nodes only ever talk to their parent and their
 *  children, so the routes are exactly those: node n's zone holds its own
 *  host's zone and one zone per child, with a route each way between
 *  them (n to child c: n's send limit, then c's link down; c to n: c's
 *  link up). Route lookups walk the zones from both ends to their
 *  common ancestor, here always the parent's zone, and the tables are a
 *  few entries per zone: no N x N table however large the tree.
 *
 *  Units are the emulation's (docs/simulate.md, "Time and bytes"): a
 *  simulated second is a second of the emulated run, bytes are the bytes
 *  it moves (platform MB x 2^20 x payload scale), so a host computes
 *  compute x time scale units per second and a link carries its MB/s x
 *  setup_bps_per_mbps bytes per second.
 *
 *  Pure: writes text, needs no SimGrid.
 */
#ifndef TF_SIM_PLATFORM_H
#define TF_SIM_PLATFORM_H

#include <stdio.h>

#include "overlay/config.h"

/*  A message's latency is its link's delay_ms alone: nothing for the
 *  loopback between an emulated run's processes, which delays no paced
 *  transfer there (docs/simulate.md, "What is simulated", Latency). */

/*  cfg may be the cores' view of a run with offered nodes (sim/join.c):
 *  a vacant child slot is a host and a link like a node's, idle until a
 *  node takes it and its link's rate and latency become that node's.
 *
 *  The host, zone and link names of node i: "n<i>", "z<i>" (its zone
 *  with its children's), "h<i>" (its own host's zone), "l<i>" (its
 *  link from its parent), "s<i>" (its send limit). */

/*  Node i's link latency, simulated seconds. */
double sim_platform_latency (const config_t *cfg, int node);

/*  Write cfg's platform as SimGrid XML (version 4.1) to out. Returns 0,
 *  or -1 when a write failed. */
int sim_platform_write (const config_t *cfg, FILE *out);

#endif
