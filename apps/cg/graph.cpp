// apps/cg/graph.cpp — the task graph of the conjugate-gradient
// application (3-D 7-point Poisson, row blocks of z-planes).
//
// Regions: the blocks of x, r, p and q (vector by vector, block by block,
// block x n x n doubles each), then the 8-byte scalars in their storage
// order: rr, alpha, beta, pq[0..blocks), rp[0..blocks). Tasks, in the
// application's order (hint owner(k, blocks) for per-block tasks, the
// first node for the reductions):
//   init(k)        out x[k], r[k], p[k], q[k], rp[k]
//   rr             in rp[0..]; out rr
//   per iteration:
//     spmv(k)      in p[k-1], p[k], p[k+1]; out q[k], pq[k]
//     alpha        in pq[0..], rr; out alpha
//     update(k)    in alpha, p[k], q[k]; inout x[k], r[k]; out rp[k]
//     beta         in rp[0..]; inout rr; out beta
//     direction(k) in beta, r[k]; inout p[k]
//
// Floating-point operations (per block of m = block x n x n unknowns):
//   init:       2m (r . r: a multiply and an add per unknown).
//   spmv:       per unknown, one add per existing neighbour (up to 6), a
//               multiply (6 c), a subtraction and the p . q term (2):
//               summed exactly over the block's planes.
//   rr:         blocks adds.  alpha, beta: blocks adds and a division.
//   update:     6m (x += a p, r -= a q, r . r).
//   direction:  2m (p = r + b p).
#include <vector>

#include <fmt/format.h>

#include "apps/common/graph_builder.hpp"
#include "apps/cg/cg.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::cg {
namespace {

constexpr std::uint64_t scalar_bytes = sizeof(double);

}  // namespace

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t n = s.n, planes = s.block, nb = n / planes;
    const std::uint64_t count = std::uint64_t{planes} * n * n;
    const std::uint64_t bb = count * sizeof(double);
    const std::uint64_t it = s.iterations;
    const std::uint64_t task_count = nb + 1 + it * (3 * std::uint64_t{nb} + 2);
    // init 5 per block, rr nb + 1; per iteration spmv 3nb + 2(nb - 1),
    // alpha nb + 2, update 6nb, beta nb + 2, direction 3nb.
    const std::uint64_t dep_count = 6 * std::uint64_t{nb} + 1 + it * (16 * std::uint64_t{nb} + 2);
    ctx.reserve(task_count, dep_count, 4 * std::uint64_t{nb} + 3 + 2 * std::uint64_t{nb});
    sim::Graph& g = ctx.graph;
    g.name = graph_name("cg", s);

    auto block_vector = [&] {
        std::vector<std::uint32_t> v(nb);
        for (std::size_t k = 0; k < nb; ++k) v[k] = g.add_region(bb);
        return v;
    };
    const std::vector<std::uint32_t> x = block_vector(), r = block_vector(), p = block_vector(), q = block_vector();
    // The scalars share one array, 8 doubles apart, as in the app: rr,
    // alpha, beta, then the pq and rp partial sums. Scalars on one page
    // share its home.
    const std::uint32_t first = g.add_strided_regions(3 + 2 * nb, scalar_stride * scalar_bytes, scalar_bytes);
    const std::uint32_t rr = first, alpha = first + 1, beta = first + 2;
    std::vector<std::uint32_t> pq(nb), rp(nb);
    for (std::size_t k = 0; k < nb; ++k) pq[k] = first + 3 + static_cast<std::uint32_t>(k);
    for (std::size_t k = 0; k < nb; ++k) rp[k] = first + 3 + static_cast<std::uint32_t>(nb + k);

    const double m = static_cast<double>(count);
    const double plane = static_cast<double>(n) * static_cast<double>(n);
    // In-plane neighbours of one plane: 2n(n - 1) along x and as many along y.
    const double in_plane = 4.0 * static_cast<double>(n) * static_cast<double>(n - 1);
    std::vector<double> spmv_s(nb);
    for (std::size_t k = 0; k < nb; ++k) {
        double flops = 0;
        for (std::size_t lz = 0; lz < planes; ++lz) {
            const std::size_t z = k * planes + lz;
            const double vertical = plane * static_cast<double>((z > 0 ? 1 : 0) + (z + 1 < n ? 1 : 0));
            flops += in_plane + vertical + 4.0 * plane;
        }
        spmv_s[k] = ctx.seconds(flops);
    }
    const double reduce_s = ctx.seconds(static_cast<double>(nb));
    const double step_s = ctx.seconds(static_cast<double>(nb) + 1.0);
    const int reducer = ctx.first_node();
    std::vector<sim::GraphDep> deps;
    deps.reserve(nb + 2);

    for (std::size_t k = 0; k < nb; ++k)
        g.add_task(ctx.seconds(2.0 * m), {out(x[k]), out(r[k]), out(p[k]), out(q[k]), out(rp[k])}, ctx.owner(k, nb));
    deps.clear();
    for (std::size_t k = 0; k < nb; ++k) deps.push_back(in(rp[k]));
    deps.push_back(out(rr));
    g.add_task(reduce_s, deps, reducer);

    for (unsigned i = 0; i < s.iterations; ++i) {
        for (std::size_t k = 0; k < nb; ++k) {
            deps.clear();
            if (k > 0) deps.push_back(in(p[k - 1]));
            deps.push_back(in(p[k]));
            if (k + 1 < nb) deps.push_back(in(p[k + 1]));
            deps.push_back(out(q[k]));
            deps.push_back(out(pq[k]));
            g.add_task(spmv_s[k], deps, ctx.owner(k, nb));
        }
        deps.clear();
        for (std::size_t k = 0; k < nb; ++k) deps.push_back(in(pq[k]));
        deps.push_back(in(rr));
        deps.push_back(out(alpha));
        g.add_task(step_s, deps, reducer);

        for (std::size_t k = 0; k < nb; ++k)
            g.add_task(ctx.seconds(6.0 * m), {in(alpha), in(p[k]), in(q[k]), inout(x[k]), inout(r[k]), out(rp[k])},
                       ctx.owner(k, nb));
        deps.clear();
        for (std::size_t k = 0; k < nb; ++k) deps.push_back(in(rp[k]));
        deps.push_back(inout(rr));
        deps.push_back(out(beta));
        g.add_task(step_s, deps, reducer);

        for (std::size_t k = 0; k < nb; ++k)
            g.add_task(ctx.seconds(2.0 * m), {in(beta), in(r[k]), inout(p[k])}, ctx.owner(k, nb));
    }
}

}  // namespace numaware::apps::cg
