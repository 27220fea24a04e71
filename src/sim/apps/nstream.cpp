// src/sim/apps/nstream.cpp — the task graph of the NStream application:
// 8 independent streams of a += b + 3 c triads over blocks.
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

#include "numaware/error.hpp"
#include "sim/apps/builders.hpp"

namespace numaware::sim::app_builders {

const AppShape nstream_test{16384, 2048, 4};
// 8 streams x 256 blocks of 512 KiB per array: 2048 independent triads per repetition.
const AppShape nstream_sim{std::size_t{1} << 24, 65536, 20};

namespace {

constexpr std::size_t streams = 8;
constexpr std::size_t max_elements = std::size_t{1} << 30;
constexpr unsigned max_iterations = 100000;


}  // namespace

AppShape check_nstream(const AppShape& given) {
    const AppShape s = resolve(given, nstream_test);
    if (s.n > max_elements)
        throw Error("n", fmt::format("elements per array must be at most {}, got {}", max_elements, s.n));
    if (s.block > s.n || s.n % s.block != 0)
        throw Error("block", fmt::format("elements per block must divide the array length {}, got {}", s.n, s.block));
    require_page_multiple(s.block * sizeof(double), "block", "a block of " + std::to_string(s.block) + " doubles");
    if (s.iterations > max_iterations)
        throw Error("iterations", fmt::format("must be at most {}, got {}", max_iterations, s.iterations));
    return s;
}

void build_nstream(Context& ctx, const AppShape& shape) {
    const AppShape s = check_nstream(shape);
    const std::size_t block = s.block, blocks = s.n / block;
    const std::uint64_t block_bytes = block * sizeof(double);
    const std::uint64_t chains = streams * std::uint64_t{blocks};
    reserve(ctx, chains * (std::uint64_t{s.iterations} + 1), 3 * chains * (std::uint64_t{s.iterations} + 1),
            3 * chains);
    Graph& g = ctx.graph;
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

}  // namespace numaware::sim::app_builders
