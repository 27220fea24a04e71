// sim/memory/cholesky_kernel.hpp — the tiled Cholesky factorisation, the
// first stage of the task application `inversion`, as parallel loops of
// tile operations (cholesky_kernel.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

// The tile side (apps/inversion's default block: 64 × 64 doubles, 32 KiB,
// eight 4 KiB pages a tile).
inline constexpr std::uint64_t cholesky_tile = 64;

// The tiles a side nt of a lower triangle of at most `bytes`: the largest
// nt with nt(nt+1)/2 tiles of 32 KiB in `bytes`.
std::uint64_t cholesky_tiles_per_side(std::uint64_t bytes);

// "cholesky[:MIB]": the factorisation of a matrix whose lower triangle of
// tiles takes MIB MiB (make_workload takes 1 to 1024; default 16).
std::unique_ptr<Workload> make_cholesky(std::uint64_t bytes);

}  // namespace numaware::sim::memory::detail
