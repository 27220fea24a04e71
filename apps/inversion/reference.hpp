// apps/inversion/reference.hpp — what the tiled inversion's tasks and its
// serial reference share: the input matrix, and the reference
// (reference.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "apps/common/hashed_input.hpp"

namespace numaware::apps::inversion {

// Entry (i, j) of the n x n input matrix: symmetric, uniform in
// [-0.5, 0.5) off the diagonal and n on it, so strictly diagonally dominant
// (SPD, condition number below 3).
inline double entry(std::size_t i, std::size_t j, std::size_t n) {
    if (i == j) return static_cast<double>(n);
    return hashed_unit(std::min(i, j), std::max(i, j));
}

// LAPACKE_dpotrf then LAPACKE_dpotri of the input matrix, serial,
// column-major: the inverse in the lower triangle.
std::vector<double> reference(std::size_t n);

}  // namespace numaware::apps::inversion
