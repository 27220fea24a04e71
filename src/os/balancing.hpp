// os/balancing.hpp — NUMA balancing through a given Os (internal side of
// numaware/balancing.hpp, so tests can drive it with RecordingOs).
#pragma once

#include <vector>

#include "numaware/balancing.hpp"
#include "os/numa_maps.hpp"
#include "os/os.hpp"

namespace numaware::os {

BalancingState read_balancing(Os& os);
void write_balancing(Os& os, BalancingState state);
// Pure: the exempt mappings among parsed numa_maps records (rule in
// numaware/balancing.hpp).
std::vector<BalancingExemptRange> exempt_ranges(const std::vector<NumaMapsRecord>& records);
std::vector<BalancingExemptRange> exempt_ranges(Os& os, pid_t pid);

}  // namespace numaware::os
