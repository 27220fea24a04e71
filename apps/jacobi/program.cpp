// apps/jacobi/program.cpp — 2-D 5-point Jacobi, double-buffered, row blocks.
//
// Size: n = grid side (n x n doubles, row-major), block = rows per block,
// iterations = sweeps.
//
// Decomposition: the grid is cut into n / block blocks of whole rows. A row
// block is contiguous (a column block would be n strided pieces), so with
// block * n * 8 a multiple of the page size each block is a whole number of
// pages and has one home. Two buffers A and B. With Halos::rows (default)
// each block is three regions, its first row, the rows between and its
// last row (common/app_size.hpp, row_block_parts); X[b] below is all of
// them, top(X[b]) / bottom(X[b]) the first / last row's region. With
// Halos::whole_blocks each block is one region and top = bottom = all.
//   init(b):        out(A[b])                      — first touch of A
//   sweep(b, t):    in(bottom(S[b-1])), in(S[b]), in(top(S[b+1])), out(D[b])
// where S/D are A/B for even t and B/A for odd t. Sweep 0 first-touches B.
// Hint (SA): every task of row block k goes to owner_node(rt, k, blocks),
// so A[k] and B[k] live on one node and only halo rows cross nodes.
// The result is compared with a serial whole-grid Jacobi of the same
// arithmetic (reference.cpp; kernels: common/stencil_kernels.hpp):
// tolerance 0, bit-exact.
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
    const RowBlockParts parts = row_block_parts(rows, n, s.halos);
    // Appends the dependencies on block k of `buf`: every part, or one.
    auto block_deps = [&](std::vector<tasks::Dep>& deps, double* buf, std::size_t k, tasks::AccessMode mode) {
        for (unsigned i = 0; i < parts.count; ++i)
            deps.push_back({buf + k * rows * n + parts.part[i].offset, parts.part[i].elems * sizeof(double), mode});
    };
    auto part_dep = [&](std::vector<tasks::Dep>& deps, const double* buf, std::size_t k, unsigned i) {
        deps.push_back(tasks::in(buf + k * rows * n + parts.part[i].offset, parts.part[i].elems * sizeof(double)));
    };
    std::vector<tasks::Dep> deps;
    run_graph(rt, [&] {
        for (std::size_t k = 0; k < blocks; ++k) {
            double* p = bufs[0];
            deps.clear();
            block_deps(deps, p, k, tasks::AccessMode::out);
            rt.spawn_on(owner_node(rt, k, blocks),
                        [p, n, k, rows] { kernels::jacobi_init_rows(p, n, k * rows, (k + 1) * rows); },
                        std::span<const tasks::Dep>(deps));
            ++out.tasks;
        }
        for (unsigned t = 0; t < s.iterations; ++t) {
            double* src = bufs[t % 2];
            double* dst = bufs[(t + 1) % 2];
            for (std::size_t k = 0; k < blocks; ++k) {
                deps.clear();
                if (k > 0) part_dep(deps, src, k - 1, parts.bottom);
                block_deps(deps, src, k, tasks::AccessMode::in);
                if (k + 1 < blocks) part_dep(deps, src, k + 1, parts.top);
                block_deps(deps, dst, k, tasks::AccessMode::out);
                rt.spawn_on(owner_node(rt, k, blocks),
                            [src, dst, n, k, rows] { kernels::jacobi_rows(src, dst, n, n, k * rows, (k + 1) * rows); },
                            std::span<const tasks::Dep>(deps));
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
        "halos={5} ({6} B read per neighbour), tolerance 0 (bit-exact)",
        n, rows, blocks, block_bytes / 1024, s.iterations, halos_name(s.halos),
        parts.part[parts.top].elems * sizeof(double));
    return out;
}

}  // namespace numaware::apps::jacobi
