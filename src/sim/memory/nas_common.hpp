// sim/memory/nas_common.hpp — what several NAS kernels share: their grids'
// address arithmetic, and (from kernel_common.hpp) seeded draws and the
// size checks.
#pragma once

#include <cstdint>

#include "sim/memory/arrays.hpp"
#include "sim/memory/kernel_common.hpp"

namespace numaware::sim::memory::nas {

using detail::draw_below;
using detail::draw_unit;
using detail::is_pow2;
using detail::log2_of;
using detail::require;

// An n³ grid of cells of `comps` doubles in Fortran order, a(m, i, j, k):
// a cell's components adjacent, then i (x, unit stride), j (y), k (z).
struct CellGrid {
    std::uint64_t base = 0;
    unsigned n = 0;
    unsigned comps = 1;
    std::uint64_t cell_bytes() const { return std::uint64_t{comps} * 8; }
    std::uint64_t at(std::uint64_t i, std::uint64_t j, std::uint64_t k, unsigned m = 0) const {
        return base + ((k * n + j) * n + i) * cell_bytes() + std::uint64_t{m} * 8;
    }
    // Bytes between neighbours along x, y, z.
    std::uint64_t stride(unsigned axis) const {
        return axis == 0 ? cell_bytes() : (axis == 1 ? cell_bytes() * n : cell_bytes() * n * n);
    }
};

}  // namespace numaware::sim::memory::nas
