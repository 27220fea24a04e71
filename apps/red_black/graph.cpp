// apps/red_black/graph.cpp — the task graph of the 2-D 5-point red-black
// Gauss-Seidel application (colours stored apart, row blocks).
//
// Regions: R[0..blocks) (red array) then K[0..blocks) (black array), each
// block `block` rows of n/2 points of one colour, as the parts of
// row_block_parts() (first row, rows between, last row; one region with
// Halos::whole_blocks), part by part. Tasks, in the application's order:
//   init(b):       out R[b], out K[b]
//   red(b, t):     inout R[b], in bottom(K[b-1]), in K[b], in top(K[b+1])
//   black(b, t):   inout K[b], in bottom(R[b-1]), in R[b], in top(R[b+1])
// (neighbours that exist), per iteration all red blocks then all black
// blocks; every task of block b is hinted to owner(b, blocks).
//
// Floating-point operations:
//   init:        1 per element written (2 x block x n/2).
//   half-sweep:  4 per updated point (3 adds, 1 multiply): each row off the
//                global boundary has n/2 - 1 points of a colour off the
//                boundary columns.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/red_black/red_black.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::red_black {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t n = s.n, rows = s.block, blocks = n / rows, h = n / 2;
    const RowBlockParts parts = row_block_parts(rows, h, s.halos);
    const std::uint64_t half_sweep_deps = blocks * (2 * std::uint64_t{parts.count} + 2) - 2;
    ctx.reserve(blocks * (2 * std::uint64_t{s.iterations} + 1),
                2 * blocks * parts.count + 2 * std::uint64_t{s.iterations} * half_sweep_deps,
                2 * blocks * parts.count);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("red-black", s);

    // colours[c][k]: the region of block k's first part; its parts follow.
    std::vector<std::uint32_t> colours[2];
    for (auto& c : colours) {
        c.resize(blocks);
        for (std::size_t k = 0; k < blocks; ++k) {
            c[k] = g.add_region(parts.part[0].elems * sizeof(double));
            for (unsigned i = 1; i < parts.count; ++i) g.add_region(parts.part[i].elems * sizeof(double));
        }
    }
    std::vector<sim::GraphDep> d;
    auto block_deps = [&](std::uint32_t first, tasks::AccessMode mode) {
        for (unsigned i = 0; i < parts.count; ++i) d.push_back({first + i, mode});
    };
    const double init_s = ctx.seconds(static_cast<double>(2 * rows * h));
    for (std::size_t k = 0; k < blocks; ++k) {
        d.clear();
        block_deps(colours[0][k], tasks::AccessMode::out);
        block_deps(colours[1][k], tasks::AccessMode::out);
        g.add_task(init_s, d, ctx.owner(k, blocks));
    }

    std::vector<double> sweep_s(blocks);
    for (std::size_t k = 0; k < blocks; ++k) {
        const std::size_t lo = std::max<std::size_t>(k * rows, 1), hi = std::min((k + 1) * rows, n - 1);
        const std::size_t interior = hi > lo ? hi - lo : 0;
        sweep_s[k] = ctx.seconds(4.0 * static_cast<double>(interior) * static_cast<double>(h - 1));
    }
    for (unsigned t = 0; t < s.iterations; ++t)
        for (unsigned colour = 0; colour < 2; ++colour) {
            const std::vector<std::uint32_t>& mine = colours[colour];
            const std::vector<std::uint32_t>& other = colours[1 - colour];
            for (std::size_t k = 0; k < blocks; ++k) {
                d.clear();
                block_deps(mine[k], tasks::AccessMode::inout);
                if (k > 0) d.push_back(in(other[k - 1] + parts.bottom));
                block_deps(other[k], tasks::AccessMode::in);
                if (k + 1 < blocks) d.push_back(in(other[k + 1] + parts.top));
                g.add_task(sweep_s[k], d, ctx.owner(k, blocks));
            }
        }
}

}  // namespace numaware::apps::red_black
