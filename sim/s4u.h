/*  s4u — the two SimGrid calls the simulator needs that its C API does
 *  not give right, made through its C++ API (s4u); the one C++ file of
 *  the project.
 *
 *  - Waiting for the first of a node's receives with a timeout: SimGrid
 *    3.32's C sg_comm_wait_any_for releases every comm it was given when
 *    the timeout comes first, though none of them is finished (and
 *    sg_comm_wait_for cancels its comm on a timeout): a receive under
 *    way would be lost.
 *  - Cancelling a receive (a vacant child slot's, at the end).
 *  - A link's usage (bytes/s flowing through it now), which the C API
 *    does not have: what a node's transfers cost its computing
 *    (node/emulate.h) is what its links carry.
 */
#ifndef TF_SIM_S4U_H
#define TF_SIM_S4U_H

#include <simgrid/comm.h>
#include <simgrid/link.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  The index of the first of comms[0..count) to finish within timeout
 *  seconds (< 0: no timeout), or -1 when none did. The caller keeps its
 *  reference to each comm, the finished one's included (sg_comm_unref). */
ssize_t sim_wait_any_for (sg_comm_t *comms, size_t count, double timeout);

/*  Cancel comm, a receive no message will come to (the caller keeps its
 *  reference). */
void sim_comm_cancel (sg_comm_t comm);

/*  Bytes per second flowing through link now. */
double sim_link_usage (const_sg_link_t link);

#ifdef __cplusplus
}
#endif

#endif
