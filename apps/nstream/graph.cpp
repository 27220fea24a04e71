// apps/nstream/graph.cpp — the task graph of the NStream application:
// 7 (`streams`) independent streams of a += b + 3 c triads over blocks.
//
// Regions: the a blocks of every stream (stream by stream, block by
// block), then the b blocks, then the c blocks, each `block` doubles.
// Tasks, in the application's order:
//   init(s, k):      out a[s][k], out b[s][k], out c[s][k]     (s outer)
//   triad(s, k, t):  inout a[s][k], in b[s][k], in c[s][k]     (t, s, k)
// every task of block k is hinted to owner(k, blocks).
//
// Floating-point operations:
//   init:   1 per element written (3 x block).
//   triad:  3 per element (a multiply and two adds).
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/nstream/nstream.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::nstream {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t block = s.block, blocks = s.n / block;
    const std::uint64_t block_bytes = block * sizeof(double);
    const std::uint64_t chains = streams * std::uint64_t{blocks};
    ctx.reserve(chains * (std::uint64_t{s.iterations} + 1), 3 * chains * (std::uint64_t{s.iterations} + 1),
            3 * chains);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("nstream", s);

    // arrays[x][st * blocks + k]: block k of stream st of array a, b or c.
    std::vector<std::uint32_t> arrays[3];
    for (auto& arr : arrays) {
        arr.resize(chains);
        for (std::size_t i = 0; i < chains; ++i) arr[i] = g.add_region(block_bytes);
    }
    const double init_s = ctx.seconds(3.0 * static_cast<double>(block));
    const double triad_s = ctx.seconds(3.0 * static_cast<double>(block));
    for (std::size_t st = 0; st < streams; ++st)
        for (std::size_t k = 0; k < blocks; ++k) {
            const std::size_t i = st * blocks + k;
            g.add_task(init_s, {out(arrays[0][i]), out(arrays[1][i]), out(arrays[2][i])}, ctx.owner(k, blocks));
        }
    for (unsigned t = 0; t < s.iterations; ++t)
        for (std::size_t st = 0; st < streams; ++st)
            for (std::size_t k = 0; k < blocks; ++k) {
                const std::size_t i = st * blocks + k;
                g.add_task(triad_s, {inout(arrays[0][i]), in(arrays[1][i]), in(arrays[2][i])}, ctx.owner(k, blocks));
            }
}

}  // namespace numaware::apps::nstream
