// apps/integral_histogram/reference.hpp — what the integral histogram's
// tasks and its serial reference share: the image and the binning, and the
// reference itself (reference.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/common/hashed_input.hpp"

namespace numaware::apps::integral_histogram {

// Pixel (y, x) of the image: a deterministic value in 0..255.
inline std::uint8_t pixel(std::size_t y, std::size_t x) {
    const double u = hashed_unit(y, x) + 0.5;   // [0, 1)
    return static_cast<std::uint8_t>(std::min(255.0, u * 256.0));
}

inline std::size_t bin_of(std::uint8_t value, std::size_t bins) { return std::size_t{value} * bins / 256; }

// The integral histogram of the n x n image with `bins` bins: row-major,
// bins innermost; entry (y, x, b) counts the pixels of bin b in the
// rectangle from (0, 0) to (y, x) inclusive.
std::vector<std::uint32_t> reference(std::size_t n, std::size_t bins);

}  // namespace numaware::apps::integral_histogram
