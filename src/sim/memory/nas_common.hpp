// sim/memory/nas_common.hpp — what several NAS kernels share: their grids'
// address arithmetic, seeded draws and the size checks.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "sim/memory/arrays.hpp"

namespace numaware::sim::memory::nas {

// Error("workload", ...) naming the kernel and the limit unless `ok`.
inline void require(bool ok, const std::string& kernel, std::string_view limit) {
    if (!ok) throw Error("workload", fmt::format("'{}': {}", kernel, limit));
}

inline bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

inline unsigned log2_of(std::uint64_t pow2) {
    unsigned l = 0;
    while ((std::uint64_t{1} << l) < pow2) ++l;
    return l;
}

// A draw in [0, n) from a seeded generator whose sequence the standard
// fixes (std::uniform_int_distribution's is the library's own, so it is
// not used: the same seed gives the same workload everywhere). The modulo
// bias is below n / 2^64.
inline std::uint64_t draw_below(std::mt19937_64& rng, std::uint64_t n) { return rng() % n; }
// A draw in [0, 1).
inline double draw_unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

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
