// sim/memory/integral_histogram_kernel.hpp — the integral histogram's row
// and column scans: two phases that want opposite page placements
// (integral_histogram_kernel.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

// One pixel's counters: 16 bins of 4 bytes, one cache line.
inline constexpr std::uint64_t integral_histogram_pixel_bytes = 64;

// The image side n of a histogram of at most `histogram_bytes`: the largest
// with n·n·64 bytes ≤ histogram_bytes.
std::uint64_t integral_histogram_side(std::uint64_t histogram_bytes);

// "ihist[:MIB]": the row scan, then the column scan, of an n × n image's
// integral histogram of MIB MiB (default 32, 1 to 1024).
std::unique_ptr<Workload> make_integral_histogram(std::uint64_t histogram_bytes);

}  // namespace numaware::sim::memory::detail
