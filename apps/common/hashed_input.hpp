// apps/common/hashed_input.hpp — deterministic input values from indices,
// so an application's tasks and its serial reference generate the same
// input (a matrix, an image) without sharing any state.
#pragma once

#include <cstdint>

namespace numaware::apps {

// A value in [-0.5, 0.5) from two indices (splitmix64's finaliser).
inline double hashed_unit(std::uint64_t i, std::uint64_t j) {
    std::uint64_t z = i * 0x9E3779B97F4A7C15ULL + j * 0xC2B2AE3D27D4EB4FULL + 0x165667B19E3779F9ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
}

}  // namespace numaware::apps
