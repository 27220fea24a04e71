// sim/memory/stencil_kernels.hpp — the task applications' 2-D 5-point
// stencils (apps/jacobi, apps/gauss_seidel, apps/red_black) as parallel
// loops of the memory-hierarchy simulator (stencil_kernels.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

// The tile side of the Gauss-Seidel grid (apps/gauss_seidel's default:
// 32 × 32 doubles, two 4 KiB pages a tile).
inline constexpr std::uint64_t gauss_seidel_tile = 32;

// The grid side n of each kernel for `bytes` of arrays (every array of the
// kernel together): the largest n, a multiple of 8 (whole 64-byte lines a
// row; for Gauss-Seidel a multiple of the tile), whose arrays fit.
//   jacobi:        two n × n grids of doubles (double-buffered);
//   gauss-seidel:  one n × n grid, tile-major;
//   red-black:     two n × n/2 arrays, one a colour.
std::uint64_t jacobi_side(std::uint64_t bytes);
std::uint64_t gauss_seidel_side(std::uint64_t bytes);
std::uint64_t red_black_side(std::uint64_t bytes);

// "jacobi[:MIB]", "gauss-seidel[:MIB]", "red-black[:MIB]": `bytes` of
// arrays (make_workload takes 1 to 1024 MiB; at 1 MiB the sides are 256,
// 352 and 352).
std::unique_ptr<Workload> make_jacobi(std::uint64_t bytes);
std::unique_ptr<Workload> make_gauss_seidel(std::uint64_t bytes);
std::unique_ptr<Workload> make_red_black(std::uint64_t bytes);

}  // namespace numaware::sim::memory::detail
