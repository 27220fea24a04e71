// os/node_files.hpp — the kernel's node lists and node distances, read from
// sysfs without allocating.
//
// The heap engine starts up inside malloc, before it can use the machine
// layer (hwloc allocates), so it reads these files through here; everything
// else learns the machine from numaware::Machine.
#pragma once

#include <bitset>
#include <cstdint>

#include "numaware/nodeset.hpp"

namespace numaware::os::sys {

// Nodes 0..1023, bit n = node n: as many as a NodeSet (the Debian kernel's
// MAX_NUMNODES), without allocating.
using NodeBits = std::bitset<NodeSet::max_nodes>;

// A node list file ("0-3,6\n": /sys/devices/system/node/possible,
// has_memory, ...) as the set of its nodes. Returns the highest listed
// node + 1; 0 when the file cannot be read or lists nothing.
unsigned read_node_mask(const char* path, NodeBits& mask) noexcept;

// The memory nodes this process may use (its cpuset's mems: the
// Mems_allowed_list line of /proc/self/status). False when it cannot be
// read.
bool read_mems_allowed(NodeBits& mask) noexcept;

// One row of the SLIT (/sys/devices/system/node/nodeN/distance,
// "10 21 31 ..."): distance[to] for the first nodes, at most `max` of them.
// Returns how many were read; 0 when the file cannot be read.
unsigned read_node_distances(unsigned node, unsigned* distance, unsigned max) noexcept;

}  // namespace numaware::os::sys
