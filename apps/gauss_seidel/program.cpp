// apps/gauss_seidel/program.cpp — 2-D 5-point Gauss-Seidel, in place,
// tiled wavefront.
//
// Size: n = grid side (n x n doubles), block = tile side, iterations = sweeps.
//
// Decomposition: the grid is stored tile-major (common/stencil_kernels.hpp): tile (i, j)
// is one contiguous region of block * block doubles, a whole number of
// pages (block * block * 8 must be a multiple of the page size, e.g. 32 or
// 64 with 4 KiB pages), so each tile has one home.
//   init(i, j):      out(T[i][j])                         — first touch
//   sweep(i, j, t):  inout(T[i][j]), in(T[i-1][j]), in(T[i][j-1]),
//                    in(T[i+1][j]), in(T[i][j+1])          (those that exist)
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
    run_graph(rt, [&] {
        for (std::size_t i = 0; i < tps; ++i)
            for (std::size_t j = 0; j < tps; ++j) {
                rt.spawn_on(tile_owner_node(rt, i, j, tps, tps),
                            [g, tps, tile, i, j] { kernels::gs_init_tile(g, tps, tile, i, j); },
                            {tasks::out(at(i, j), tile_bytes)});
                ++out.tasks;
            }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (std::size_t i = 0; i < tps; ++i)
                for (std::size_t j = 0; j < tps; ++j) {
                    std::array<tasks::Dep, 5> deps;
                    std::size_t d = 0;
                    deps[d++] = tasks::inout(at(i, j), tile_bytes);
                    if (i > 0) deps[d++] = tasks::in(at(i - 1, j), tile_bytes);
                    if (j > 0) deps[d++] = tasks::in(at(i, j - 1), tile_bytes);
                    if (i + 1 < tps) deps[d++] = tasks::in(at(i + 1, j), tile_bytes);
                    if (j + 1 < tps) deps[d++] = tasks::in(at(i, j + 1), tile_bytes);
                    rt.spawn_on(tile_owner_node(rt, i, j, tps, tps),
                                [g, tps, tile, i, j] { kernels::gs_tile(g, tps, tile, i, j); },
                                std::span<const tasks::Dep>(deps.data(), d));
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
        "tolerance 0 (bit-exact vs natural-order Gauss-Seidel)",
        n, tile, tps, tile_bytes / 1024, s.iterations);
    return out;
}

}  // namespace numaware::apps::gauss_seidel
