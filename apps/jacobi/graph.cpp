// apps/jacobi/graph.cpp — the task graph of the 2-D 5-point Jacobi
// application (double-buffered, row blocks).
//
// Regions: A[0..blocks) then B[0..blocks), each block `block` rows of n
// doubles, as the parts of row_block_parts() (its first row, the rows
// between, its last row; one region with Halos::whole_blocks), part by
// part. Tasks, in the application's order:
//   init(k):       out A[k]                                          hint owner(k)
//   sweep(k, t):   in bottom(S[k-1]), in S[k], in top(S[k+1]), out D[k]
//                                                                    hint owner(k)
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
    const RowBlockParts parts = row_block_parts(rows, n, s.halos);
    const std::uint64_t task_count = blocks * (std::uint64_t{s.iterations} + 1);
    const std::uint64_t dep_count = blocks * parts.count + std::uint64_t{s.iterations} * blocks * (2 * parts.count + 2);
    ctx.reserve(task_count, dep_count, 2 * blocks * parts.count);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("jacobi", s);

    // buf[b][k]: the region of block k's first part; its parts follow.
    std::vector<std::uint32_t> buf[2];
    for (auto& b : buf) {
        b.resize(blocks);
        for (std::size_t k = 0; k < blocks; ++k) {
            b[k] = g.add_region(parts.part[0].elems * sizeof(double));
            for (unsigned i = 1; i < parts.count; ++i) g.add_region(parts.part[i].elems * sizeof(double));
        }
    }
    std::vector<sim::GraphDep> d;
    auto block_deps = [&](std::uint32_t first, tasks::AccessMode mode) {
        for (unsigned i = 0; i < parts.count; ++i) d.push_back({first + i, mode});
    };
    const double init_s = ctx.seconds(static_cast<double>(rows * n));
    for (std::size_t k = 0; k < blocks; ++k) {
        d.clear();
        block_deps(buf[0][k], tasks::AccessMode::out);
        g.add_task(init_s, d, ctx.owner(k, blocks));
    }

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
            d.clear();
            if (k > 0) d.push_back(in(src[k - 1] + parts.bottom));
            block_deps(src[k], tasks::AccessMode::in);
            if (k + 1 < blocks) d.push_back(in(src[k + 1] + parts.top));
            block_deps(dst[k], tasks::AccessMode::out);
            g.add_task(sweep_s[k], d, ctx.owner(k, blocks));
        }
    }
}

}  // namespace numaware::apps::jacobi
