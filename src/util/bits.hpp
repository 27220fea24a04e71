// util/bits.hpp — bit arithmetic every layer may use (header-only, no
// dependencies, nothing allocates).
#pragma once

#include <cstddef>

namespace numaware {

// True for 1, 2, 4, ... Not std::has_single_bit: without POPCNT in the
// target ISA, GCC 12 makes that a libgcc call, and the heap's aligned
// allocation path asks this on every call.
constexpr bool is_power_of_two(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace numaware
