// os/node_files.hpp — the kernel's node lists and node distances, read from
// sysfs without allocating.
//
// The heap engine starts up inside malloc, before it can use the machine
// layer (hwloc allocates), so it reads these files through here; everything
// else learns the machine from numaware::Machine.
#pragma once

#include <cstdint>

namespace numaware::os::sys {

// A node list file ("0-3,6\n": /sys/devices/system/node/possible,
// has_memory, ...) as a bit mask of the nodes below `limit` (at most 64).
// Returns the highest listed node + 1, capped at `limit`; 0 when the file
// cannot be read or lists nothing.
unsigned read_node_mask(const char* path, std::uint64_t& mask, unsigned limit) noexcept;

// The memory nodes this process may use (its cpuset's mems: the
// Mems_allowed_list line of /proc/self/status) as a mask of the nodes below
// `limit` (at most 64). False when it cannot be read.
bool read_mems_allowed(std::uint64_t& mask, unsigned limit) noexcept;

// One row of the SLIT (/sys/devices/system/node/nodeN/distance,
// "10 21 31 ..."): distance[to] for the first nodes, at most `max` of them.
// Returns how many were read; 0 when the file cannot be read.
unsigned read_node_distances(unsigned node, unsigned* distance, unsigned max) noexcept;

}  // namespace numaware::os::sys
