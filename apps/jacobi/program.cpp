// apps/jacobi/program.cpp — 2-D 5-point Jacobi, double-buffered, row blocks.
//
// Size: n = grid side (n x n doubles, row-major), block = rows per block,
// iterations = sweeps.
//
// Decomposition: the grid is cut into n / block blocks of whole rows. A row
// block is one contiguous region (a column block would be n strided
// pieces), so with block * n * 8 a multiple of the page size each block is
// a whole number of pages and has one home. Two buffers A and B.
//   init(b):        out(A[b])                      — first touch of A
//   sweep(b, t):    in(S[b-1]), in(S[b]), in(S[b+1]), out(D[b])
// where S/D are A/B for even t and B/A for odd t. Sweep 0 first-touches B.
// Hint (SA): every task of row block k goes to owner_node(rt, k, blocks),
// so A[k] and B[k] live on one node and only halo rows cross nodes.
// The result is compared with a serial whole-grid Jacobi of the same
// arithmetic (reference.cpp; kernels: common/stencil_kernels.hpp):
// tolerance 0, bit-exact.
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/stencil_kernels.hpp"
#include "apps/common/task_program.hpp"
#include "apps/jacobi/jacobi.hpp"
#include "apps/jacobi/reference.hpp"

namespace numaware::apps::jacobi {
namespace {

}  // namespace

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize s = checked_size(given, page_size());
    const std::size_t n = s.n, rows = s.block, blocks = n / rows;
    const std::size_t block_bytes = rows * n * sizeof(double);
    PageArray<double> a(n * n), b(n * n);
    double* bufs[2] = {a.data(), b.data()};

    AppRun out;
    Stopwatch clock;
    run_graph(rt, [&] {
        for (std::size_t k = 0; k < blocks; ++k) {
            double* p = bufs[0];
            rt.spawn_on(owner_node(rt, k, blocks),
                        [p, n, k, rows] { kernels::jacobi_init_rows(p, n, k * rows, (k + 1) * rows); },
                        {tasks::out(p + k * rows * n, block_bytes)});
            ++out.tasks;
        }
        for (unsigned t = 0; t < s.iterations; ++t) {
            const double* src = bufs[t % 2];
            double* dst = bufs[(t + 1) % 2];
            for (std::size_t k = 0; k < blocks; ++k) {
                std::array<tasks::Dep, 4> deps;
                std::size_t d = 0;
                if (k > 0) deps[d++] = tasks::in(src + (k - 1) * rows * n, block_bytes);
                deps[d++] = tasks::in(src + k * rows * n, block_bytes);
                if (k + 1 < blocks) deps[d++] = tasks::in(src + (k + 1) * rows * n, block_bytes);
                deps[d++] = tasks::out(dst + k * rows * n, block_bytes);
                rt.spawn_on(owner_node(rt, k, blocks),
                            [src, dst, n, k, rows] { kernels::jacobi_rows(src, dst, n, n, k * rows, (k + 1) * rows); },
                            std::span<const tasks::Dep>(deps.data(), d));
                ++out.tasks;
            }
        }
    });
    out.seconds = clock.seconds();

    const std::vector<double> ref = reference(n, s.iterations);
    out.max_error = max_abs_diff(bufs[s.iterations % 2] == a.data() ? a.span() : b.span(), ref);
    out.matches = out.max_error == 0.0;
    out.detail = fmt::format(
        "n={0} ({0}x{0} doubles, row-major), block={1} rows ({2} row blocks of {3} KiB), iterations={4}, "
        "tolerance 0 (bit-exact)",
        n, rows, blocks, block_bytes / 1024, s.iterations);
    return out;
}

}  // namespace numaware::apps::jacobi
