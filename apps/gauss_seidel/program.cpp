// apps/gauss_seidel/program.cpp — 2-D 5-point Gauss-Seidel, in place,
// tiled wavefront.
//
// Size: n = grid side (n x n doubles), block = tile side, iterations = sweeps.
//
// Decomposition: the grid is stored tile-major (common/stencil_kernels.hpp): tile (i, j)
// is one contiguous region of block * block doubles, a whole number of
// pages (block * block * 8 must be a multiple of the page size, e.g. 32 or
// 64 with 4 KiB pages), so each tile has one home.
// With Halos::rows (default) each tile is three regions, its first row,
// the rows between and its last row (common/app_size.hpp, row_block_parts);
// T[i][j] is all of them, top / bottom the first / last row's region. The
// east and west halos are columns, strided through the tile, so they stay
// whole tiles. With Halos::whole_blocks a tile is one region.
//   init(i, j):      out(T[i][j])                         — first touch
//   sweep(i, j, t):  inout(T[i][j]), in(bottom(T[i-1][j])), in(T[i][j-1]),
//                    in(top(T[i+1][j])), in(T[i][j+1])     (those that exist)
// spawned sweep by sweep, tiles in row-major order. The runtime's
// sequential semantics then give each tile its north and west neighbours of
// this sweep and its south and east neighbours of the previous sweep: a
// wavefront along the anti-diagonals, overlapping consecutive sweeps.
// Hint (SA): every task of tile (i, j) goes to tile_owner_node(rt, i, j,
// tps, tps) (the tile's row-major index dealt out evenly: each node owns a
// band of tile rows when the node count divides tps), so only the halo
// tiles at band edges cross nodes.
// The reference is a plain natural-order (row-major) Gauss-Seidel over a
// row-major grid; for the 5-point stencil that is the same sequence of
// updates as the tile order (see kernels::gs_tile), so tolerance 0,
// bit-exact.
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/stencil_kernels.hpp"
#include "apps/common/task_program.hpp"
#include "apps/gauss_seidel/gauss_seidel.hpp"
#include "apps/gauss_seidel/reference.hpp"

namespace numaware::apps::gauss_seidel {
namespace {

}  // namespace

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize s = checked_size(given, page_size());
    const std::size_t n = s.n, tile = s.block, tps = n / tile;
    const std::size_t tile_elems = tile * tile, tile_bytes = tile_elems * sizeof(double);
    PageArray<double> grid(n * n);
    double* g = grid.data();
    auto at = [g, tps, tile](std::size_t i, std::size_t j) { return g + kernels::gs_tile_offset(tps, tile, i, j); };

    AppRun out;
    Stopwatch clock;
    const RowBlockParts parts = row_block_parts(tile, tile, s.halos);
    // Appends the dependencies on every part of tile (i, j).
    auto tile_deps = [&](std::vector<tasks::Dep>& deps, std::size_t i, std::size_t j, tasks::AccessMode mode) {
        for (unsigned p = 0; p < parts.count; ++p)
            deps.push_back({at(i, j) + parts.part[p].offset, parts.part[p].elems * sizeof(double), mode});
    };
    auto part_dep = [&](std::vector<tasks::Dep>& deps, std::size_t i, std::size_t j, unsigned p) {
        deps.push_back(tasks::in(at(i, j) + parts.part[p].offset, parts.part[p].elems * sizeof(double)));
    };
    std::vector<tasks::Dep> deps;
    run_graph(rt, [&] {
        for (std::size_t i = 0; i < tps; ++i)
            for (std::size_t j = 0; j < tps; ++j) {
                deps.clear();
                tile_deps(deps, i, j, tasks::AccessMode::out);
                rt.spawn_on(tile_owner_node(rt, i, j, tps, tps),
                            [g, tps, tile, i, j] { kernels::gs_init_tile(g, tps, tile, i, j); },
                            std::span<const tasks::Dep>(deps));
                ++out.tasks;
            }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (std::size_t i = 0; i < tps; ++i)
                for (std::size_t j = 0; j < tps; ++j) {
                    deps.clear();
                    tile_deps(deps, i, j, tasks::AccessMode::inout);
                    if (i > 0) part_dep(deps, i - 1, j, parts.bottom);
                    if (j > 0) tile_deps(deps, i, j - 1, tasks::AccessMode::in);
                    if (i + 1 < tps) part_dep(deps, i + 1, j, parts.top);
                    if (j + 1 < tps) tile_deps(deps, i, j + 1, tasks::AccessMode::in);
                    rt.spawn_on(tile_owner_node(rt, i, j, tps, tps),
                                [g, tps, tile, i, j] { kernels::gs_tile(g, tps, tile, i, j); },
                                std::span<const tasks::Dep>(deps));
                    ++out.tasks;
                }
    });
    out.seconds = clock.seconds();

    const std::vector<double> ref = reference(n, s.iterations);
    std::vector<double> got(n * n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) got[r * n + c] = g[kernels::gs_index(tps, tile, r, c)];
    out.max_error = max_abs_diff(got, ref);
    out.matches = out.max_error == 0.0;
    out.detail = fmt::format(
        "n={0} ({0}x{0} doubles, tile-major), block={1} ({2}x{2} tiles of {3} KiB), iterations={4}, "
        "halos={5} ({6} B read per north or south neighbour), tolerance 0 (bit-exact vs natural-order Gauss-Seidel)",
        n, tile, tps, tile_bytes / 1024, s.iterations, halos_name(s.halos),
        parts.part[parts.top].elems * sizeof(double));
    return out;
}

}  // namespace numaware::apps::gauss_seidel
