// bench/apps/app_cg.cpp — conjugate gradient on the 3-D Poisson problem.
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

#include "app_b_common.hpp"
#include "app_common.hpp"
#include "apps.hpp"
#include "numaware/error.hpp"

namespace numaware::apps {
namespace {

using tasks::in;
using tasks::inout;
using tasks::out;

constexpr double tolerance = 1e-12;
// Scalars and per-block partial sums are 8-byte regions, each on its own
// cache line so reductions do not false-share.
constexpr std::size_t scalar_stride = 8;

// The geometry of the blocked vectors.
struct Grid {
    std::size_t n = 0;        // side
    std::size_t planes = 0;   // planes per block
    std::size_t blocks = 0;   // n / planes
    std::size_t plane = 0;    // n * n
    std::size_t count = 0;    // unknowns per block: planes * n * n
    std::size_t slot = 0;     // doubles per block slot (whole pages)

    std::size_t total() const { return blocks * slot; }
    std::size_t block_bytes() const { return count * sizeof(double); }
    // Plane z (global index) of a blocked vector.
    const double* plane_ptr(const double* v, std::size_t z) const {
        return v + (z / planes) * slot + (z % planes) * plane;
    }
};

// ---- kernels (shared by the tasks and the serial reference) --------------

// Sets x = 0, r = p = b = 1, q = 0 on block k and returns r . r.
double init_block(const Grid& g, std::size_t k, double* x, double* r, double* p, double* q) {
    double* xb = x + k * g.slot;
    double* rb = r + k * g.slot;
    double* pb = p + k * g.slot;
    double* qb = q + k * g.slot;
    double sum = 0;
    for (std::size_t i = 0; i < g.count; ++i) {
        xb[i] = 0;
        rb[i] = 1.0;
        pb[i] = 1.0;
        qb[i] = 0;
        sum += rb[i] * rb[i];
    }
    return sum;
}

// q[k] = A p on block k; returns p[k] . q[k]. Reads planes of p from the
// neighbouring blocks (the one below and the one above) only.
double spmv_block(const Grid& g, std::size_t k, const double* p, double* q) {
    const std::size_t n = g.n;
    double sum = 0;
    for (std::size_t lz = 0; lz < g.planes; ++lz) {
        const std::size_t z = k * g.planes + lz;
        const double* c = g.plane_ptr(p, z);
        const double* below = z > 0 ? g.plane_ptr(p, z - 1) : nullptr;
        const double* above = z + 1 < n ? g.plane_ptr(p, z + 1) : nullptr;
        double* qp = q + k * g.slot + lz * g.plane;
        for (std::size_t y = 0; y < n; ++y) {
            for (std::size_t x = 0; x < n; ++x) {
                const std::size_t i = y * n + x;
                double nb = 0;
                if (x > 0) nb += c[i - 1];
                if (x + 1 < n) nb += c[i + 1];
                if (y > 0) nb += c[i - n];
                if (y + 1 < n) nb += c[i + n];
                if (below) nb += below[i];
                if (above) nb += above[i];
                const double v = 6.0 * c[i] - nb;
                qp[i] = v;
                sum += c[i] * v;
            }
        }
    }
    return sum;
}

// Sums partial results in block order.
double reduce(const double* parts, std::size_t blocks) {
    double sum = 0;
    for (std::size_t k = 0; k < blocks; ++k) sum += parts[k * scalar_stride];
    return sum;
}

// x += alpha p, r -= alpha q on block k; returns r[k] . r[k].
double update_block(const Grid& g, std::size_t k, double alpha, const double* p, const double* q, double* x,
                    double* r) {
    const double* pb = p + k * g.slot;
    const double* qb = q + k * g.slot;
    double* xb = x + k * g.slot;
    double* rb = r + k * g.slot;
    double sum = 0;
    for (std::size_t i = 0; i < g.count; ++i) {
        xb[i] += alpha * pb[i];
        rb[i] -= alpha * qb[i];
        sum += rb[i] * rb[i];
    }
    return sum;
}

// p = r + beta p on block k.
void direction_block(const Grid& g, std::size_t k, double beta, const double* r, double* p) {
    const double* rb = r + k * g.slot;
    double* pb = p + k * g.slot;
    for (std::size_t i = 0; i < g.count; ++i) pb[i] = rb[i] + beta * pb[i];
}

// num / den, or 0 once the iteration has converged exactly (den == 0), so
// running past convergence keeps x instead of producing NaN.
double step_length(double num, double den) { return den != 0 ? num / den : 0.0; }

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

// ---- the serial reference: the same kernels, in program order ------------

std::vector<double> run_serial(const Grid& g, unsigned iterations) {
    const std::size_t nb = g.blocks;
    std::vector<double> x(g.total()), r(g.total()), p(g.total()), q(g.total());
    std::vector<double> pq(nb * scalar_stride), rp(nb * scalar_stride);
    for (std::size_t k = 0; k < nb; ++k) {
        rp[k * scalar_stride] = init_block(g, k, x.data(), r.data(), p.data(), q.data());
    }
    double rr = reduce(rp.data(), nb);
    for (unsigned it = 0; it < iterations; ++it) {
        for (std::size_t k = 0; k < nb; ++k) pq[k * scalar_stride] = spmv_block(g, k, p.data(), q.data());
        const double alpha = step_length(rr, reduce(pq.data(), nb));
        for (std::size_t k = 0; k < nb; ++k) {
            rp[k * scalar_stride] = update_block(g, k, alpha, p.data(), q.data(), x.data(), r.data());
        }
        const double next = reduce(rp.data(), nb);
        const double beta = step_length(next, rr);
        rr = next;
        for (std::size_t k = 0; k < nb; ++k) direction_block(g, k, beta, r.data(), p.data());
    }
    return x;
}

// ||b - A x||_2 / ||b||_2 with b = 1, computed directly (not from r).
double relative_residual(const Grid& g, const double* x) {
    std::vector<double> ax(g.total());
    double num = 0;
    for (std::size_t k = 0; k < g.blocks; ++k) {
        spmv_block(g, k, x, ax.data());
        for (std::size_t i = 0; i < g.count; ++i) {
            const double d = 1.0 - ax[k * g.slot + i];
            num += d * d;
        }
    }
    const double unknowns = static_cast<double>(g.n * g.n * g.n);
    return std::sqrt(num / unknowns);
}

AppRun run_cg(tasks::Runtime& rt, const AppSize& given, const AppSize& defaults) {
    const AppSize size = checked_size("cg", given, defaults);
    Grid g;
    g.n = size.n;
    g.planes = size.block;
    g.blocks = size.n / size.block;
    g.plane = size.n * size.n;
    g.count = g.planes * g.plane;
    g.slot = detail_b::page_slot<double>(g.count);

    PageArray<double> x(g.total()), r(g.total()), p(g.total()), q(g.total());
    PageArray<double> scalars((Scalars::parts_pq + 2 * g.blocks) * scalar_stride);

    AppRun run;
    Stopwatch clock;
    run.tasks = detail_b::spawn_and_wait(rt, [&] {
        return spawn_graph(rt, g, size.iterations, x.data(), r.data(), p.data(), q.data(), scalars.data());
    });
    run.seconds = clock.seconds();

    const std::vector<double> ref = run_serial(g, size.iterations);
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

}  // namespace

App make_cg_app() {
    App app;
    app.name = "cg";
    app.description = "conjugate gradient, 3-D 7-point Poisson, row blocks of z-planes";
    app.test_size = {.n = 16, .block = 4, .iterations = 10};
    app.bench_size = {.n = 128, .block = 8, .iterations = 100};
    const AppSize defaults = app.test_size;
    app.run = [defaults](tasks::Runtime& rt, const AppSize& size) { return run_cg(rt, size, defaults); };
    return app;
}

}  // namespace numaware::apps
