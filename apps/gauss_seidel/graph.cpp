// apps/gauss_seidel/graph.cpp — the task graph of the 2-D 5-point
// Gauss-Seidel application (in place, tile-major tiled wavefront).
//
// Regions: tile (i, j) of the tps x tps tiles (tps = n / block), row-major
// tile order, block x block doubles each, as the parts of row_block_parts()
// (first row, rows between, last row; one region with Halos::whole_blocks),
// part by part. Tasks, in the application's order:
//   init(i, j):      out T[i][j]
//   sweep(i, j, t):  inout T[i][j], in bottom(T[i-1][j]), in T[i][j-1],
//                    in top(T[i+1][j]), in T[i][j+1]     (those that exist;
//                    the east and west halos are columns: whole tiles)
// sweep by sweep, tiles row-major; every task of tile (i, j) is hinted to
// tile_owner(i, j, tps, tps).
//
// Floating-point operations:
//   init:   1 per element written (block x block).
//   sweep:  4 per point of the tile off the global boundary (3 adds, 1
//           multiply); boundary points are left alone (0).
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/gauss_seidel/gauss_seidel.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::gauss_seidel {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t n = s.n, tile = s.block, tps = n / tile;
    const RowBlockParts parts = row_block_parts(tile, tile, s.halos);
    const std::uint64_t tiles = std::uint64_t{tps} * tps;
    // Per sweep: every part of each tile (inout), of each east or west
    // neighbour, and one edge part per north or south neighbour.
    const std::uint64_t per_sweep_deps = tiles * parts.count + 2 * std::uint64_t{tps} * (tps - 1) * (parts.count + 1);
    ctx.reserve(tiles * (std::uint64_t{s.iterations} + 1), tiles * parts.count + s.iterations * per_sweep_deps,
                tiles * parts.count);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("gauss-seidel", s);

    // reg[t]: the region of tile t's first part; its parts follow.
    std::vector<std::uint32_t> reg(tiles);
    for (std::size_t t = 0; t < tiles; ++t) {
        reg[t] = g.add_region(parts.part[0].elems * sizeof(double));
        for (unsigned p = 1; p < parts.count; ++p) g.add_region(parts.part[p].elems * sizeof(double));
    }
    auto at = [&](std::size_t i, std::size_t j) { return reg[i * tps + j]; };
    std::vector<sim::GraphDep> d;
    auto tile_deps = [&](std::uint32_t first, tasks::AccessMode mode) {
        for (unsigned p = 0; p < parts.count; ++p) d.push_back({first + p, mode});
    };

    const double init_s = ctx.seconds(static_cast<double>(tile * tile));
    for (std::size_t i = 0; i < tps; ++i)
        for (std::size_t j = 0; j < tps; ++j) {
            d.clear();
            tile_deps(at(i, j), tasks::AccessMode::out);
            g.add_task(init_s, d, ctx.tile_owner(i, j, tps, tps));
        }

    // Points of tile (i, j) off the global boundary, as kernels::gs_tile.
    auto sweep_s = [&](std::size_t i, std::size_t j) {
        const std::size_t r0 = i == 0 ? 1 : 0, r1 = i + 1 == tps ? tile - 1 : tile;
        const std::size_t c0 = j == 0 ? 1 : 0, c1 = j + 1 == tps ? tile - 1 : tile;
        const double points = static_cast<double>(r1 > r0 ? r1 - r0 : 0) * static_cast<double>(c1 > c0 ? c1 - c0 : 0);
        return ctx.seconds(4.0 * points);
    };
    for (unsigned t = 0; t < s.iterations; ++t)
        for (std::size_t i = 0; i < tps; ++i)
            for (std::size_t j = 0; j < tps; ++j) {
                d.clear();
                tile_deps(at(i, j), tasks::AccessMode::inout);
                if (i > 0) d.push_back(in(at(i - 1, j) + parts.bottom));
                if (j > 0) tile_deps(at(i, j - 1), tasks::AccessMode::in);
                if (i + 1 < tps) d.push_back(in(at(i + 1, j) + parts.top));
                if (j + 1 < tps) tile_deps(at(i, j + 1), tasks::AccessMode::in);
                g.add_task(sweep_s(i, j), d, ctx.tile_owner(i, j, tps, tps));
            }
}

}  // namespace numaware::apps::gauss_seidel
