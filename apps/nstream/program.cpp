// apps/nstream/program.cpp — NStream: independent triads over blocks.
//
// Size: n = elements per array, block = elements per block, iterations =
// repetitions. There are `streams` = 7 independent streams, each with three
// arrays a, b, c of n doubles (the a arrays of all streams share one
// mapping, as do the b and c arrays; stream s's array is the s-th run of n
// elements). As in the Parallel Research Kernels' nstream, every repetition
// does a[j] += b[j] + scalar * c[j] with scalar = 3.
//
// Decomposition: each array is cut into n / block blocks of `block`
// elements; block * 8 must be a multiple of the page size (and n a
// multiple of block), so each block is whole pages with one home.
//   init(s, k):      out(a[s][k]), out(b[s][k]), out(c[s][k])   — first touch
//   triad(s, k, t):  inout(a[s][k]), in(b[s][k]), in(c[s][k])
// Hint (SA): both tasks of block k go to owner_node(rt, k, blocks) — each
// array is dealt out in contiguous blocks over the nodes, the same way for
// every stream — so a block's three arrays live and are updated on one node.
// Blocks never interact: each (s, k) is a chain of `iterations` triads, so
// locality is everything and there is plenty of parallelism. The
// reference does the same per-element arithmetic serially: tolerance 0,
// bit-exact.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/task_program.hpp"
#include "apps/nstream/nstream.hpp"
#include "apps/nstream/reference.hpp"

namespace numaware::apps::nstream {

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize s = checked_size(given, page_size());
    const std::size_t n = s.n, block = s.block, blocks = n / block, block_bytes = block * sizeof(double);
    const std::size_t total = checked_mul(streams, n, "n");
    PageArray<double> a_all(total), b_all(total), c_all(total);

    AppRun out;
    Stopwatch clock;
    run_graph(rt, [&] {
        for (std::size_t st = 0; st < streams; ++st) {
            double* a = a_all.data() + st * n;
            double* b = b_all.data() + st * n;
            double* c = c_all.data() + st * n;
            for (std::size_t k = 0; k < blocks; ++k) {
                const std::size_t j0 = k * block;
                rt.spawn_on(owner_node(rt, k, blocks), [a, b, c, j0, block] { init_block(a, b, c, j0, j0 + block); },
                            {tasks::out(a + j0, block_bytes), tasks::out(b + j0, block_bytes),
                             tasks::out(c + j0, block_bytes)});
                ++out.tasks;
            }
        }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (std::size_t st = 0; st < streams; ++st) {
                double* a = a_all.data() + st * n;
                const double* b = b_all.data() + st * n;
                const double* c = c_all.data() + st * n;
                for (std::size_t k = 0; k < blocks; ++k) {
                    const std::size_t j0 = k * block;
                    rt.spawn_on(owner_node(rt, k, blocks), [a, b, c, j0, block] { triad(a, b, c, j0, j0 + block); },
                                {tasks::inout(a + j0, block_bytes), tasks::in(b + j0, block_bytes),
                                 tasks::in(c + j0, block_bytes)});
                    ++out.tasks;
                }
            }
    });
    out.seconds = clock.seconds();

    const StreamArrays ref = reference(n, s.iterations);   // every stream is the same
    double worst = 0;
    for (std::size_t st = 0; st < streams; ++st) {
        worst = std::max(worst, max_abs_diff(std::span<const double>(a_all.data() + st * n, n), ref.a));
        worst = std::max(worst, max_abs_diff(std::span<const double>(b_all.data() + st * n, n), ref.b));
        worst = std::max(worst, max_abs_diff(std::span<const double>(c_all.data() + st * n, n), ref.c));
    }
    out.max_error = worst;
    out.matches = out.max_error == 0.0;
    out.detail = fmt::format(
        "n={0} doubles per array, {1} streams x 3 arrays ({2} KiB each), block={3} doubles ({4} blocks of {5} KiB "
        "per array), iterations={6}, a += b + 3*c, tolerance 0 (bit-exact)",
        n, streams, n * sizeof(double) / 1024, block, blocks, block_bytes / 1024, s.iterations);
    return out;
}

}  // namespace numaware::apps::nstream
