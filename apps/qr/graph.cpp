// apps/qr/graph.cpp — the task graph of the tiled QR factorisation
// application (PLASMA-style GEQRT / UNMQR / TSQRT / TSMQR).
//
// Regions: the nt x nt tiles A(m, k) (b x b doubles, row-major tile order),
// then the T-factor tiles T(m, k) (ib x b doubles, ib = min(b, 32)) for
// m >= k, the only ones the application names. Tasks, in the
// application's order, hinted to cyclic_tile_owner(row, col) of the tile
// each updates (block-cyclic, as the program's cyclic_tile_owner_node()):
//   init(m, k)      out A(m,k)                                  all tiles, row-major
//   for k = 0..nt-1:
//     GEQRT(k)      inout A(k,k); out T(k,k)
//     UNMQR(k,n)    in A(k,k), T(k,k); inout A(k,n)             n > k
//     for m > k:
//       TSQRT(m,k)    inout A(k,k), A(m,k); out T(m,k)
//       TSMQR(m,n,k)  in A(m,k), T(m,k); inout A(k,n), A(m,n)   n > k
//
// Floating-point operations (the usual tile-QR weights, leading terms; the
// inner blocking ib adds lower-order work that is ignored):
//   init 1 per element (b^2); GEQRT 4b^3/3; UNMQR 2b^3; TSQRT 2b^3;
//   TSMQR 4b^3 (they sum to the 4n^3/3 of a dense QR).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/qr/qr.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::qr {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t b = s.block, nt = s.n / b, ib = std::min(b, max_inner_block);
    const std::uint64_t ab = b * b * sizeof(double), tb = ib * b * sizeof(double);
    const std::uint64_t t = nt;
    // Tasks: nt^2 inits, nt GEQRT, then per k with r = nt - k - 1 trailing
    // tiles: r UNMQR, r TSQRT, r^2 TSMQR.
    std::uint64_t task_count = t * t + t, dep_count = t * t + 2 * t;
    for (std::uint64_t r = 0; r < t; ++r) {
        task_count += 2 * r + r * r;
        dep_count += 6 * r + 4 * r * r;
    }
    ctx.reserve(task_count, dep_count, t * t + t * (t + 1) / 2);
    sim::Graph& g = ctx.graph;
    g.name = graph_name("qr", s);

    std::vector<std::uint32_t> a(nt * nt), tf(nt * nt);
    for (std::size_t i = 0; i < nt * nt; ++i) a[i] = g.add_region(ab);
    for (std::size_t m = 0; m < nt; ++m)
        for (std::size_t k = 0; k <= m; ++k) tf[m * nt + k] = g.add_region(tb);
    auto A = [&](std::size_t m, std::size_t k) { return a[m * nt + k]; };
    auto T = [&](std::size_t m, std::size_t k) { return tf[m * nt + k]; };
    auto owner = [&](std::size_t m, std::size_t k) { return ctx.cyclic_tile_owner(m, k); };

    const double b3 = static_cast<double>(b) * static_cast<double>(b) * static_cast<double>(b);
    const double init_s = ctx.seconds(static_cast<double>(b) * static_cast<double>(b));
    const double geqrt_s = ctx.seconds(4.0 * b3 / 3.0);
    const double unmqr_s = ctx.seconds(2.0 * b3);
    const double tsqrt_s = ctx.seconds(2.0 * b3);
    const double tsmqr_s = ctx.seconds(4.0 * b3);

    for (std::size_t m = 0; m < nt; ++m)
        for (std::size_t k = 0; k < nt; ++k) g.add_task(init_s, {out(A(m, k))}, owner(m, k));
    for (std::size_t k = 0; k < nt; ++k) {
        g.add_task(geqrt_s, {inout(A(k, k)), out(T(k, k))}, owner(k, k));
        for (std::size_t n = k + 1; n < nt; ++n)
            g.add_task(unmqr_s, {in(A(k, k)), in(T(k, k)), inout(A(k, n))}, owner(k, n));
        for (std::size_t m = k + 1; m < nt; ++m) {
            g.add_task(tsqrt_s, {inout(A(k, k)), inout(A(m, k)), out(T(m, k))}, owner(m, k));
            for (std::size_t n = k + 1; n < nt; ++n)
                g.add_task(tsmqr_s, {in(A(m, k)), in(T(m, k)), inout(A(k, n)), inout(A(m, n))}, owner(m, n));
        }
    }
}

}  // namespace numaware::apps::qr
