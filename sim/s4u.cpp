/*  s4u — see s4u.h. */
#include "sim/s4u.h"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Link.hpp>
#include <vector>

ssize_t
sim_wait_any_for (sg_comm_t *comms, size_t count, double timeout)
{
    std::vector<simgrid::s4u::CommPtr> held;
    held.reserve (count);
    for (size_t i = 0; i < count; i++)
        held.emplace_back (comms[i]);   /* a reference of our own */
    return simgrid::s4u::Comm::wait_any_for (held, timeout);
}

void
sim_comm_cancel (sg_comm_t comm)
{
    comm->cancel ();
}

double
sim_link_usage (const_sg_link_t link)
{
    return link->get_usage ();
}
