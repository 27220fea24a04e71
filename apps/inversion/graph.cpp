// apps/inversion/graph.cpp — the task graph of the tiled SPD inversion
// application (POTRF, then TRTRI, then LAUUM, as tile tasks).
//
// Regions: the lower tiles A(m, n), m >= n (b x b doubles), in row-major
// order over the lower triangle. Each task is hinted to the owner of the
// one tile it updates, cyclic_tile_owner(m, n) (block-cyclic, as the
// program's cyclic_tile_owner_node()). Tasks, in the application's order:
//   init(m, n)              out A(m,n)                       m >= n, row-major
//   Cholesky, k = 0..nt-1:
//     POTRF(k)              inout A(k,k)
//     TRSM(m,k)             in A(k,k); inout A(m,k)          m > k
//     for m > k: SYRK(m,k)  in A(m,k); inout A(m,m)
//                GEMM(m,n,k) in A(m,k), A(n,k); inout A(m,n) k < n < m
//   Triangular inverse, k = 0..nt-1:
//     TRSM(m,k)             in A(k,k); inout A(m,k)          m > k
//     GEMM(m,n,k)           in A(m,k), A(k,n); inout A(m,n)  m > k, n < k
//     TRSM(k,n)             in A(k,k); inout A(k,n)          n < k
//     TRTRI(k)              inout A(k,k)
//   Product, k = 0..nt-1:
//     for n < k: SYRK(k,n)  in A(k,n); inout A(n,n)
//                GEMM(k,m,n) in A(k,m), A(k,n); inout A(m,n) n < m < k
//     TRMM(k,n)             in A(k,k); inout A(k,n)          n < k
//     LAUUM(k)              inout A(k,k)
//
// Floating-point operations (leading terms of the LAPACK/BLAS counts for
// b x b tiles): init 1 per element (b^2); POTRF, TRTRI, LAUUM b^3/3;
// TRSM, SYRK, TRMM b^3; GEMM 2b^3.
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/inversion/inversion.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::inversion {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t b = s.block, nt = s.n / b;
    const std::uint64_t tb = b * b * sizeof(double);
    const std::uint64_t lower = std::uint64_t{nt} * (nt + 1) / 2;

    std::uint64_t task_count = lower, dep_count = lower;
    for (std::uint64_t k = 0; k < nt; ++k) {
        const std::uint64_t r = nt - k - 1, gemms = r * (r - (r > 0 ? 1 : 0)) / 2;
        task_count += 1 + 2 * r + gemms;               // Cholesky
        dep_count += 1 + 4 * r + 3 * gemms;
        task_count += r + r * k + k + 1;               // triangular inverse
        dep_count += 2 * r + 3 * r * k + 2 * k + 1;
        const std::uint64_t pgemms = k * (k - (k > 0 ? 1 : 0)) / 2;
        task_count += k + pgemms + k + 1;              // product
        dep_count += 2 * k + 3 * pgemms + 2 * k + 1;
    }
    ctx.reserve(task_count, dep_count, lower);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("inversion", s);

    std::vector<std::uint32_t> tiles(lower);
    for (std::uint64_t i = 0; i < lower; ++i) tiles[i] = g.add_region(tb);
    auto A = [&](std::size_t m, std::size_t n) { return tiles[m * (m + 1) / 2 + n]; };
    auto owner = [&](std::size_t m, std::size_t n) { return ctx.cyclic_tile_owner(m, n); };

    const double b3 = static_cast<double>(b) * static_cast<double>(b) * static_cast<double>(b);
    const double init_s = ctx.seconds(static_cast<double>(b) * static_cast<double>(b));
    const double third_s = ctx.seconds(b3 / 3.0);   // POTRF, TRTRI, LAUUM
    const double cube_s = ctx.seconds(b3);          // TRSM, SYRK, TRMM
    const double gemm_s = ctx.seconds(2.0 * b3);

    for (std::size_t m = 0; m < nt; ++m)
        for (std::size_t k = 0; k <= m; ++k) g.add_task(init_s, {out(A(m, k))}, owner(m, k));
    // Cholesky factorisation, lower.
    for (std::size_t k = 0; k < nt; ++k) {
        g.add_task(third_s, {inout(A(k, k))}, owner(k, k));
        for (std::size_t m = k + 1; m < nt; ++m) g.add_task(cube_s, {in(A(k, k)), inout(A(m, k))}, owner(m, k));
        for (std::size_t m = k + 1; m < nt; ++m) {
            g.add_task(cube_s, {in(A(m, k)), inout(A(m, m))}, owner(m, m));
            for (std::size_t n = k + 1; n < m; ++n)
                g.add_task(gemm_s, {in(A(m, k)), in(A(n, k)), inout(A(m, n))}, owner(m, n));
        }
    }
    // Inverse of the triangular factor.
    for (std::size_t k = 0; k < nt; ++k) {
        for (std::size_t m = k + 1; m < nt; ++m) g.add_task(cube_s, {in(A(k, k)), inout(A(m, k))}, owner(m, k));
        for (std::size_t m = k + 1; m < nt; ++m)
            for (std::size_t n = 0; n < k; ++n)
                g.add_task(gemm_s, {in(A(m, k)), in(A(k, n)), inout(A(m, n))}, owner(m, n));
        for (std::size_t n = 0; n < k; ++n) g.add_task(cube_s, {in(A(k, k)), inout(A(k, n))}, owner(k, n));
        g.add_task(third_s, {inout(A(k, k))}, owner(k, k));
    }
    // A^-1 = L^-T L^-1.
    for (std::size_t k = 0; k < nt; ++k) {
        for (std::size_t n = 0; n < k; ++n) {
            g.add_task(cube_s, {in(A(k, n)), inout(A(n, n))}, owner(n, n));
            for (std::size_t m = n + 1; m < k; ++m)
                g.add_task(gemm_s, {in(A(k, m)), in(A(k, n)), inout(A(m, n))}, owner(m, n));
        }
        for (std::size_t n = 0; n < k; ++n) g.add_task(cube_s, {in(A(k, k)), inout(A(k, n))}, owner(k, n));
        g.add_task(third_s, {inout(A(k, k))}, owner(k, k));
    }
}

}  // namespace numaware::apps::inversion
