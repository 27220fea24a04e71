// apps/red_black/program.cpp — 2-D 5-point red-black Gauss-Seidel.
//
// Size: n = grid side (even; n x n points), block = rows per block,
// iterations = full iterations (a red half-sweep, then a black one).
//
// Point (r, c) is red when r + c is even, black otherwise; every neighbour
// of a red point is black and vice versa. Storage: the colours are kept in
// two separate row-major arrays of n rows x n/2 points (the point of colour
// k in row r at column ((r + k) % 2) + 2 * idx is at [r * n/2 + idx]). A row
// block of the red array is then only red points, so the tasks of a
// half-sweep are independent of each other, and each block is one
// contiguous range: block * (n/2) * 8 must be a multiple of the page size.
// With Halos::rows (default) each block is three regions, its first row,
// the rows between and its last row (common/app_size.hpp,
// row_block_parts); X[b] is all of them, top / bottom the first / last
// row's region. With Halos::whole_blocks a block is one region.
//   init(b):          out(R[b]), out(K[b])                      — first touch
//   red(b, t):        inout(R[b]), in(bottom(K[b-1])), in(K[b]), in(top(K[b+1]))
//   black(b, t):      inout(K[b]), in(bottom(R[b-1])), in(R[b]), in(top(R[b+1]))
// (R = red array, K = black array; neighbours that exist.) Hint (SA): every
// task of row block b goes to owner_node(rt, b, blocks), so R[b] and K[b]
// live on one node and only halo rows cross nodes. The reference is
// a plain row-major grid updated red points first, then black ones, with
// the same expression order: tolerance 0, bit-exact.
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/stencil_kernels.hpp"
#include "apps/common/task_program.hpp"
#include "apps/red_black/red_black.hpp"
#include "apps/red_black/reference.hpp"

namespace numaware::apps::red_black {
namespace {

// Column of the idx-th point of colour `colour` (0 red, 1 black) in row r.
inline std::size_t column_of(std::size_t r, unsigned colour, std::size_t idx) { return (r + colour) % 2 + 2 * idx; }

void init_rows(double* red, double* black, std::size_t n, std::size_t r0, std::size_t r1) {
    const std::size_t h = n / 2;
    for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t k = 0; k < h; ++k) {
            red[r * h + k] = kernels::initial_value(r, column_of(r, 0, k), n);
            black[r * h + k] = kernels::initial_value(r, column_of(r, 1, k), n);
        }
}

// Updates the points of one colour in rows [r0, r1) of `mine` from the
// other colour's array `other` (rows r0-1 .. r1 are read). Global boundary
// points stay.
void half_sweep(double* mine, const double* other, unsigned colour, std::size_t n, std::size_t r0, std::size_t r1) {
    const std::size_t h = n / 2;
    for (std::size_t r = std::max<std::size_t>(r0, 1); r < std::min(r1, n - 1); ++r) {
        const std::size_t p = (r + colour) % 2;   // column parity of this colour in row r
        const double* up = other + (r - 1) * h;
        const double* mid = other + r * h;
        const double* down = other + (r + 1) * h;
        double* row = mine + r * h;
        for (std::size_t k = 0; k < h; ++k) {
            const std::size_t c = p + 2 * k;
            if (c == 0 || c + 1 == n) continue;
            const double w = p == 0 ? mid[k - 1] : mid[k];
            const double e = p == 0 ? mid[k] : mid[k + 1];
            row[k] = 0.25 * (((up[k] + down[k]) + w) + e);
        }
    }
}

}  // namespace

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize s = checked_size(given, page_size());
    const std::size_t n = s.n, rows = s.block, blocks = n / rows, h = n / 2;
    const std::size_t block_elems = rows * h, block_bytes = block_elems * sizeof(double);
    PageArray<double> red_array(n * h), black_array(n * h);
    double* colours[2] = {red_array.data(), black_array.data()};

    AppRun out;
    Stopwatch clock;
    const RowBlockParts parts = row_block_parts(rows, h, s.halos);
    // Appends the dependencies on block k of colour array `buf`: every part, or one.
    auto block_deps = [&](std::vector<tasks::Dep>& deps, double* buf, std::size_t k, tasks::AccessMode mode) {
        for (unsigned i = 0; i < parts.count; ++i)
            deps.push_back({buf + k * block_elems + parts.part[i].offset, parts.part[i].elems * sizeof(double), mode});
    };
    auto part_dep = [&](std::vector<tasks::Dep>& deps, const double* buf, std::size_t k, unsigned i) {
        deps.push_back(tasks::in(buf + k * block_elems + parts.part[i].offset, parts.part[i].elems * sizeof(double)));
    };
    std::vector<tasks::Dep> deps;
    run_graph(rt, [&] {
        for (std::size_t k = 0; k < blocks; ++k) {
            double* red = colours[0];
            double* black = colours[1];
            deps.clear();
            block_deps(deps, red, k, tasks::AccessMode::out);
            block_deps(deps, black, k, tasks::AccessMode::out);
            rt.spawn_on(owner_node(rt, k, blocks),
                        [red, black, n, k, rows] { init_rows(red, black, n, k * rows, (k + 1) * rows); },
                        std::span<const tasks::Dep>(deps));
            ++out.tasks;
        }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (unsigned colour = 0; colour < 2; ++colour) {
                double* mine = colours[colour];
                double* other = colours[1 - colour];
                for (std::size_t k = 0; k < blocks; ++k) {
                    deps.clear();
                    block_deps(deps, mine, k, tasks::AccessMode::inout);
                    if (k > 0) part_dep(deps, other, k - 1, parts.bottom);
                    block_deps(deps, other, k, tasks::AccessMode::in);
                    if (k + 1 < blocks) part_dep(deps, other, k + 1, parts.top);
                    auto sweep = [mine, other, colour, n, k, rows] {
                        half_sweep(mine, other, colour, n, k * rows, (k + 1) * rows);
                    };
                    rt.spawn_on(owner_node(rt, k, blocks), sweep, std::span<const tasks::Dep>(deps));
                    ++out.tasks;
                }
            }
    });
    out.seconds = clock.seconds();

    const std::vector<double> ref = reference(n, s.iterations);
    std::vector<double> got(n * n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t k = 0; k < h; ++k)
            for (unsigned colour = 0; colour < 2; ++colour)
                got[r * n + column_of(r, colour, k)] = colours[colour][r * h + k];
    out.max_error = max_abs_diff(got, ref);
    out.matches = out.max_error == 0.0;
    out.detail = fmt::format(
        "n={0} ({0}x{0} points, red and black arrays of {0}x{1}), block={2} rows ({3} blocks of {4} KiB per "
        "colour), iterations={5}, halos={6} ({7} B read per neighbour), tolerance 0 (bit-exact)",
        n, h, rows, blocks, block_bytes / 1024, s.iterations, halos_name(s.halos),
        parts.part[parts.top].elems * sizeof(double));
    return out;
}

}  // namespace numaware::apps::red_black
