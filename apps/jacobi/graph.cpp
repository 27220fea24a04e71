// apps/jacobi/graph.cpp — the task graph of the 2-D 5-point Jacobi
// application (double-buffered, row blocks).
//
// Regions: A[0..blocks) then B[0..blocks), each block `block` rows of n
// doubles. Tasks, in the application's order:
//   init(k):       out A[k]                                     hint owner(k)
//   sweep(k, t):   in S[k-1], in S[k], in S[k+1], out D[k]      hint owner(k)
// (S/D = A/B for even t, B/A for odd t; neighbours that exist.)
//
// Floating-point operations:
//   init:   1 per element written (rows x n).
//   sweep:  4 per interior point ((N + S) + W) + E then x 0.25: 3 adds and
//           1 multiply); boundary rows and columns are copies (0).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/jacobi/jacobi.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::jacobi {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t n = s.n, rows = s.block, blocks = n / rows;
    const std::uint64_t block_bytes = rows * n * sizeof(double);
    const std::uint64_t task_count = blocks * (std::uint64_t{s.iterations} + 1);
    const std::uint64_t dep_count = blocks + std::uint64_t{s.iterations} * (4 * blocks - 2);
    ctx.reserve(task_count, dep_count, 2 * blocks);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("jacobi", s);

    std::vector<std::uint32_t> buf[2];
    for (auto& b : buf) {
        b.resize(blocks);
        for (std::size_t k = 0; k < blocks; ++k) b[k] = g.add_region(block_bytes);
    }
    const double init_s = ctx.seconds(static_cast<double>(rows * n));
    for (std::size_t k = 0; k < blocks; ++k)
        g.add_task(init_s, {out(buf[0][k])}, ctx.owner(k, blocks));

    // Interior rows of block k: rows [k * rows, (k + 1) * rows) within [1, n - 1).
    std::vector<double> sweep_s(blocks);
    for (std::size_t k = 0; k < blocks; ++k) {
        const std::size_t lo = std::max<std::size_t>(k * rows, 1), hi = std::min((k + 1) * rows, n - 1);
        const std::size_t interior = hi > lo ? hi - lo : 0;
        sweep_s[k] = ctx.seconds(4.0 * static_cast<double>(interior) * static_cast<double>(n - 2));
    }
    for (unsigned t = 0; t < s.iterations; ++t) {
        const std::vector<std::uint32_t>& src = buf[t % 2];
        const std::vector<std::uint32_t>& dst = buf[(t + 1) % 2];
        for (std::size_t k = 0; k < blocks; ++k) {
            sim::GraphDep d[4];
            std::uint32_t c = 0;
            if (k > 0) d[c++] = in(src[k - 1]);
            d[c++] = in(src[k]);
            if (k + 1 < blocks) d[c++] = in(src[k + 1]);
            d[c++] = out(dst[k]);
            g.add_task(sweep_s[k], std::span<const sim::GraphDep>(d, c), ctx.owner(k, blocks));
        }
    }
}

}  // namespace numaware::apps::jacobi
