// apps/gauss_seidel/graph.cpp — the task graph of the 2-D 5-point
// Gauss-Seidel application (in place, tile-major tiled wavefront).
//
// Regions: tile (i, j) of the tps x tps tiles (tps = n / block), row-major
// tile order, block x block doubles each. Tasks, in the application's order:
//   init(i, j):      out T[i][j]
//   sweep(i, j, t):  inout T[i][j], in T[i-1][j], in T[i][j-1],
//                    in T[i+1][j], in T[i][j+1]     (those that exist)
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
    const std::uint64_t tile_bytes = tile * tile * sizeof(double);
    const std::uint64_t tiles = std::uint64_t{tps} * tps;
    // Per sweep: one inout per tile plus one in per ordered neighbour pair.
    const std::uint64_t per_sweep_deps = tiles + 4 * std::uint64_t{tps} * (tps - 1);
    ctx.reserve(tiles * (std::uint64_t{s.iterations} + 1), tiles + s.iterations * per_sweep_deps, tiles);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("gauss-seidel", s);

    std::vector<std::uint32_t> reg(tiles);
    for (std::size_t t = 0; t < tiles; ++t) reg[t] = g.add_region(tile_bytes);
    auto at = [&](std::size_t i, std::size_t j) { return reg[i * tps + j]; };

    const double init_s = ctx.seconds(static_cast<double>(tile * tile));
    for (std::size_t i = 0; i < tps; ++i)
        for (std::size_t j = 0; j < tps; ++j) g.add_task(init_s, {out(at(i, j))}, ctx.tile_owner(i, j, tps, tps));

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
                sim::GraphDep d[5];
                std::uint32_t c = 0;
                d[c++] = inout(at(i, j));
                if (i > 0) d[c++] = in(at(i - 1, j));
                if (j > 0) d[c++] = in(at(i, j - 1));
                if (i + 1 < tps) d[c++] = in(at(i + 1, j));
                if (j + 1 < tps) d[c++] = in(at(i, j + 1));
                g.add_task(sweep_s(i, j), std::span<const sim::GraphDep>(d, c), ctx.tile_owner(i, j, tps, tps));
            }
}

}  // namespace numaware::apps::gauss_seidel
