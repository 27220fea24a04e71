// sim/memory/triangular_kernel.hpp — a lower-triangular matrix-vector
// product cut OpenMP-static-style: the pattern where a contiguous team's
// last node carries most of the traffic (triangular_kernel.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

// "trmv[:MIB]": y = L·x for the lower triangle of an n × n matrix of
// doubles stored in full rows, n the largest with n·n·8 bytes ≤ MIB MiB
// (default 128, 1 to 4096).
std::unique_ptr<Workload> make_trmv(std::uint64_t matrix_bytes);

}  // namespace numaware::sim::memory::detail
