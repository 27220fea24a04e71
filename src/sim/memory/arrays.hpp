// sim/memory/arrays.hpp — where the built-in workloads put their arrays in
// the simulated address space.
//
// Array k starts near its own GiB boundary, so arrays never share a page
// and each may grow to almost 1 GiB; the address alone tells the array
// (array_of). Array k starts k × 12 KiB past its boundary, so that equal
// indices of different arrays fall in different cache sets (as a linker's
// layout would place them), not in one set of every cache.
#pragma once

#include <cstdint>

namespace numaware::sim::memory::detail {

inline constexpr std::uint64_t array_stride = std::uint64_t{1} << 30;

inline std::uint64_t base_of(unsigned array) { return array_stride * (array + 1) + std::uint64_t{array} * 12288; }

// The array an address of base_of(k) + offset belongs to (offset < 1 GiB - 12 KiB × k).
inline unsigned array_of(std::uint64_t addr) { return static_cast<unsigned>(addr / array_stride - 1); }

}  // namespace numaware::sim::memory::detail
