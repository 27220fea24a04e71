// apps/jacobi/reference.hpp — the serial reference of the Jacobi
// application: the whole n x n grid, row-major, updated in the plain serial
// order with the same arithmetic as the tasks (reference.cpp).
#pragma once

#include <cstddef>
#include <vector>

namespace numaware::apps::jacobi {

// The grid after `iterations` sweeps from kernels::initial_value().
std::vector<double> reference(std::size_t n, unsigned iterations);

}  // namespace numaware::apps::jacobi
