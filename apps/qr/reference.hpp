// apps/qr/reference.hpp — what the tiled QR's tasks and its serial
// reference share: the input matrix, and the reference (reference.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "apps/common/hashed_input.hpp"

namespace numaware::apps::qr {

// Entry (i, j) of the input matrix: uniform in [-0.5, 0.5), full rank with
// probability 1.
inline double entry(std::size_t i, std::size_t j) { return hashed_unit(i, j); }

// LAPACKE_dgeqrf of the n x n input matrix, serial, column-major: R on and
// above the diagonal.
std::vector<double> reference(std::size_t n);

}  // namespace numaware::apps::qr
