// apps/cg/reference.hpp — the serial reference of the conjugate-gradient
// application: the same block kernels as the tasks (blocks.hpp), in
// program order, with the partial dot products summed in block order
// (reference.cpp).
#pragma once

#include <vector>

#include "apps/cg/blocks.hpp"

namespace numaware::apps::cg {

// x after `iterations` CG iterations from x0 = 0 with b = 1, in the blocked
// layout of `g` (block k at k * g.slot).
std::vector<double> reference(const Grid& g, unsigned iterations);

// ||b - A x||_2 / ||b||_2 with b = 1, computed directly (not from r).
double relative_residual(const Grid& g, const double* x);

}  // namespace numaware::apps::cg
