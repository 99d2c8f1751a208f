/*  wait — waiting for the first of a node's receives, with a timeout.
 *
 *  SimGrid 3.32's C sg_comm_wait_any_for releases every comm it was
 *  given when the timeout comes first, though none of them is finished
 *  (and sg_comm_wait_for cancels its comm on a timeout): a receive under
 *  way would be lost. This is the s4u call behind it, which leaves the
 *  caller's references alone; the one C++ file of the project.
 */
#ifndef TF_SIM_WAIT_H
#define TF_SIM_WAIT_H

#include <simgrid/comm.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  The index of the first of comms[0..count) to finish within timeout
 *  seconds (< 0: no timeout), or -1 when none did. The caller keeps its
 *  reference to each comm, the finished one's included (sg_comm_unref). */
ssize_t sim_wait_any_for (sg_comm_t *comms, size_t count, double timeout);

#ifdef __cplusplus
}
#endif

#endif
