// sim/memory/nas_flux.cpp — the shared right-hand side of LU, BT and SP.
#include "sim/memory/nas_flux.hpp"

#include <algorithm>
#include <array>

namespace numaware::sim::memory::nas {

using detail::Emitter;
using detail::interior_block;
using detail::owner_block;
using detail::Share;
using detail::ShareOf;

ShareOf aux_loop(const FluxGrids& g) {
    return [g](unsigned r, unsigned t) {
        return all_rows(g.u.n, owner_block(g.u.n, t, r), [g](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
            for (unsigned m = 0; m < 5; ++m) e.load(g.u.at(i, j, k, m), g.pc + m, 1);
            for (std::size_t a = 0; a < g.aux.size(); ++a)
                e.store(g.aux[a].at(i, j, k), g.pc + 5 + static_cast<std::uint32_t>(a), 2);
        });
    };
}

ShareOf forcing_loop(const FluxGrids& g) {
    return [g](unsigned r, unsigned t) {
        return all_rows(g.u.n, owner_block(g.u.n, t, r), [g](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
            for (unsigned m = 0; m < 5; ++m) {
                e.load(g.forcing.at(i, j, k, m), g.pc + 20 + m, 1);
                e.store(g.rhs.at(i, j, k, m), g.pc + 25 + m, 1);
            }
        });
    };
}

ShareOf flux_loop(const FluxGrids& g, unsigned axis) {
    return [g, axis](unsigned r, unsigned t) {
        const std::int64_t n = g.u.n;
        return interior_rows(g.u.n, interior_block(g.u.n, t, r), [g, axis, n](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
            const std::uint32_t pc = g.pc + 100 * (axis + 1);
            // The cell at offset d along the axis, clamped to the grid.
            const auto cell = [&](std::int64_t d) {
                std::int64_t c[3] = {static_cast<std::int64_t>(i), static_cast<std::int64_t>(j), static_cast<std::int64_t>(k)};
                c[axis] = std::clamp<std::int64_t>(c[axis] + d, 0, n - 1);
                return std::array<std::uint64_t, 3>{static_cast<std::uint64_t>(c[0]), static_cast<std::uint64_t>(c[1]),
                                                    static_cast<std::uint64_t>(c[2])};
            };
            for (std::int64_t d = -2; d <= 2; ++d) {
                const auto c = cell(d);
                for (unsigned m = 0; m < 5; ++m)
                    e.load(g.u.at(c[0], c[1], c[2], m), pc + 5 * static_cast<std::uint32_t>(d + 2) + m, g.gap);
            }
            for (std::int64_t d : {-1, 1}) {
                const auto c = cell(d);
                for (unsigned a : g.flux_aux[axis])
                    e.load(g.aux[a].at(c[0], c[1], c[2]), pc + 25 + 2 * a + (d > 0 ? 1 : 0), g.gap);
            }
            for (unsigned m = 0; m < 5; ++m) {
                e.load(g.rhs.at(i, j, k, m), pc + 45 + m, g.gap);
                e.store(g.rhs.at(i, j, k, m), pc + 50 + m, g.gap);
            }
        });
    };
}

}  // namespace numaware::sim::memory::nas
