// apps/cg/program.cpp — conjugate gradient on the 3-D Poisson problem.
//
// The matrix is the 7-point Laplacian of an n x n x n grid with zero
// Dirichlet boundary (6 on the diagonal, -1 for each of the up to six
// neighbours), applied matrix-free. Right-hand side b = 1, x0 = 0, and a
// fixed number of CG iterations (no early exit).
//
// Decomposition: the grid is cut along z into row blocks of `block` whole
// planes (block * n * n unknowns). Every vector (x, r, p, q) stores block k
// in its own page-aligned slot, so a block is one dependency region and
// lives on one node. Per iteration, per block k:
//   spmv(k)    in p[k-1], p[k], p[k+1]; out q[k]; out pq[k]
//              q = A p on the block, and pq[k] = p[k] . q[k]
//   alpha      in pq[0..], in rr; out alpha          (one reduction task)
//   update(k)  in alpha, p[k], q[k]; inout x[k], r[k]; out rr_part[k]
//              x += alpha p, r -= alpha q, rr_part[k] = r[k] . r[k]
//   beta       in rr_part[0..]; inout rr; out beta  (one reduction task)
//   direction(k) in beta, r[k]; inout p[k]           p = r + beta p
// Initialisation tasks (out x[k], r[k], p[k], q[k], rr_part[k]) first-touch
// every block, so the policy places it.
//
// Hints (SA): every per-block task of block k (init, spmv, update,
// direction) goes to owner_node(rt, k, blocks), the owner of the blocks it
// writes; the three reductions (the initial r.r, alpha, beta) go to the
// first node, rt.nodes().front().
//
// Check: a serial CG that runs the same kernels block by block and sums
// the partial dot products in block order, i.e. the identical sequence of
// floating-point operations, so the tasked x must match bit for bit; the
// tolerance is max|x - x_serial| <= 1e-12 * max|x_serial|. The detail line
// also reports the relative residual ||b - A x|| / ||b|| (an independent
// check that the iteration converges).
//
// Size: n = grid side (2..512), block = planes per row block (must divide
// n), iterations = CG iterations (1..100000).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/task_program.hpp"
#include "apps/cg/blocks.hpp"
#include "apps/cg/cg.hpp"
#include "apps/cg/reference.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::cg {
namespace {

using tasks::in;
using tasks::inout;
using tasks::out;

constexpr double tolerance = 1e-12;

// ---- the tasked solver ---------------------------------------------------

struct Scalars {   // indices into the scalar array, in units of scalar_stride
    static constexpr std::size_t rr = 0, alpha = 1, beta = 2, parts_pq = 3;
};

// Spawns the whole graph (no wait); returns the number of tasks.
std::size_t spawn_graph(tasks::Runtime& rt, const Grid& g, unsigned iterations, double* x, double* r, double* p,
                       double* q, double* s) {
    const std::size_t nb = g.blocks;
    const std::size_t bb = g.block_bytes();
    double* rr = s + Scalars::rr * scalar_stride;
    double* alpha = s + Scalars::alpha * scalar_stride;
    double* beta = s + Scalars::beta * scalar_stride;
    double* pq = s + Scalars::parts_pq * scalar_stride;   // nb partials
    double* rp = pq + nb * scalar_stride;                 // nb partials
    auto blk = [&](double* v, std::size_t k) { return v + k * g.slot; };
    std::size_t spawned = 0;
    std::vector<tasks::Dep> deps;
    auto owner = [&rt, nb](std::size_t k) { return owner_node(rt, k, nb); };
    const unsigned reducer = rt.nodes().front();

    for (std::size_t k = 0; k < nb; ++k) {
        double* part = rp + k * scalar_stride;
        rt.spawn_on(owner(k), [&g, k, x, r, p, q, part] { *part = init_block(g, k, x, r, p, q); },
                    {out(blk(x, k), bb), out(blk(r, k), bb), out(blk(p, k), bb), out(blk(q, k), bb),
                     out(part, sizeof(double))});
        ++spawned;
    }
    deps.clear();
    for (std::size_t k = 0; k < nb; ++k) deps.push_back(in(rp + k * scalar_stride, sizeof(double)));
    deps.push_back(out(rr, sizeof(double)));
    rt.spawn_on(reducer, [rp, nb, rr] { *rr = reduce(rp, nb); }, std::span<const tasks::Dep>(deps));
    ++spawned;

    for (unsigned it = 0; it < iterations; ++it) {
        for (std::size_t k = 0; k < nb; ++k) {
            double* part = pq + k * scalar_stride;
            deps.clear();
            if (k > 0) deps.push_back(in(blk(p, k - 1), bb));
            deps.push_back(in(blk(p, k), bb));
            if (k + 1 < nb) deps.push_back(in(blk(p, k + 1), bb));
            deps.push_back(out(blk(q, k), bb));
            deps.push_back(out(part, sizeof(double)));
            rt.spawn_on(owner(k), [&g, k, p, q, part] { *part = spmv_block(g, k, p, q); },
                        std::span<const tasks::Dep>(deps));
            ++spawned;
        }
        deps.clear();
        for (std::size_t k = 0; k < nb; ++k) deps.push_back(in(pq + k * scalar_stride, sizeof(double)));
        deps.push_back(in(rr, sizeof(double)));
        deps.push_back(out(alpha, sizeof(double)));
        rt.spawn_on(reducer, [pq, nb, rr, alpha] { *alpha = step_length(*rr, reduce(pq, nb)); },
                    std::span<const tasks::Dep>(deps));
        ++spawned;

        for (std::size_t k = 0; k < nb; ++k) {
            double* part = rp + k * scalar_stride;
            rt.spawn_on(owner(k),
                        [&g, k, alpha, p, q, x, r, part] { *part = update_block(g, k, *alpha, p, q, x, r); },
                        {in(alpha, sizeof(double)), in(blk(p, k), bb), in(blk(q, k), bb), inout(blk(x, k), bb),
                         inout(blk(r, k), bb), out(part, sizeof(double))});
            ++spawned;
        }
        deps.clear();
        for (std::size_t k = 0; k < nb; ++k) deps.push_back(in(rp + k * scalar_stride, sizeof(double)));
        deps.push_back(inout(rr, sizeof(double)));
        deps.push_back(out(beta, sizeof(double)));
        rt.spawn_on(
            reducer,
            [rp, nb, rr, beta] {
                const double next = reduce(rp, nb);
                *beta = step_length(next, *rr);
                *rr = next;
            },
            std::span<const tasks::Dep>(deps));
        ++spawned;

        for (std::size_t k = 0; k < nb; ++k) {
            rt.spawn_on(owner(k), [&g, k, beta, r, p] { direction_block(g, k, *beta, r, p); },
                        {in(beta, sizeof(double)), in(blk(r, k), bb), inout(blk(p, k), bb)});
            ++spawned;
        }
    }
    return spawned;
}

}  // namespace

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize size = checked_size(given, page_size());
    Grid g;
    g.n = size.n;
    g.planes = size.block;
    g.blocks = size.n / size.block;
    g.plane = size.n * size.n;
    g.count = g.planes * g.plane;
    g.slot = page_slot<double>(g.count);

    PageArray<double> x(g.total()), r(g.total()), p(g.total()), q(g.total());
    PageArray<double> scalars((Scalars::parts_pq + 2 * g.blocks) * scalar_stride);

    AppRun run;
    Stopwatch clock;
    run.tasks = run_graph(rt, [&] {
        return spawn_graph(rt, g, size.iterations, x.data(), r.data(), p.data(), q.data(), scalars.data());
    });
    run.seconds = clock.seconds();

    const std::vector<double> ref = reference(g, size.iterations);
    double scale = 0;
    for (std::size_t k = 0; k < g.blocks; ++k) {
        for (std::size_t i = 0; i < g.count; ++i) scale = std::max(scale, std::fabs(ref[k * g.slot + i]));
    }
    double diff = 0;
    for (std::size_t k = 0; k < g.blocks; ++k) {
        const std::span<const double> a(x.data() + k * g.slot, g.count);
        const std::span<const double> b(ref.data() + k * g.slot, g.count);
        diff = std::max(diff, max_abs_diff(a, b));
    }
    run.max_error = scale > 0 ? diff / scale : diff;
    run.matches = run.max_error <= tolerance;
    const double residual = relative_residual(g, x.data());
    run.detail = fmt::format(
        "grid {0}x{0}x{0}, {1} row blocks of {2} planes, {3} iterations; relative residual {4:.3e}; "
        "max|x - x_serial| / max|x_serial| tolerance {5:g}",
        g.n, g.blocks, g.planes, size.iterations, residual, tolerance);
    return run;
}

}  // namespace numaware::apps::cg
