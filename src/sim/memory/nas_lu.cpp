// sim/memory/nas_lu.cpp — LU: SSOR iterations with lower and upper
// triangular sweeps in hyperplane order, the pattern of NPB's LU (its
// hyperplane variant, LU-HP).
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), the LU simulated CFD application: a symmetric
// successive over-relaxation (SSOR) solve of the regularised 3-D
// Navier-Stokes system on an n³ grid of 5-component cells; each iteration
// scales the residual, solves the block lower triangular system (point
// (i,j,k) needs (i-1,j,k), (i,j-1,k), (i,j,k-1): 5 × 5 blocks formed from
// u there) and then the block upper triangular one, updates u and computes
// the new right-hand side. The parallel versions (NAS-99-011; NPB 3's
// LU-HP) run each triangular sweep over the hyperplanes i + j + k = l,
// whose points are independent, with a barrier between hyperplanes.
//
// Modelled: u, rsd (the residual, solved in place) and frct of 5 doubles
// per cell, rho_i and qs of one; one phase each: scale (rsd *= dt), one per
// hyperplane of the lower sweep (l ascending) and of the upper sweep
// (l descending), update (u += ω rsd), then the right-hand side (nas_flux:
// aux, forcing, flux-x/y/z). On every hyperplane, as in every other loop,
// a thread works on its interior z planes (interior_block), so it stays on
// the planes it first-touched; within them j ascending (descending in the
// upper sweep) and i = l - j - k. Per point of a sweep: rsd at the three
// neighbour cells (15 loads), u and rho_i, qs at the point and the three
// neighbours (28, what the Jacobian blocks are formed from), rsd at the
// point loaded and stored (10): 53 accesses.
// Left out: the 5 × 5 Jacobian blocks themselves (NPB keeps them in
// plane-sized scratch arrays; their arithmetic is the instruction gaps), the
// pipelined variant (threads in a wavefront over j, point-to-point
// synchronisation), the residual norms, the boundary-value setup.
// Accesses per iteration: 248 (n-2)³ + 17 n³.
#include <memory>

#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/nas_common.hpp"
#include "sim/memory/nas_flux.hpp"
#include "sim/memory/nas_kernels.hpp"

namespace numaware::sim::memory::nas {

using detail::base_of;
using detail::each;
using detail::Emitter;
using detail::interior_block;
using detail::owner_block;
using detail::Range;
using detail::Share;

GridSize lu_size(char cls) {
    GridSize s;
    if (cls == 'S') {
        s.n = 18;
        s.iterations = 1;
    } else if (cls == 'W') {
        // NPB class W: 33³ (NPB's 300 iterations cut to 1): u, rsd, frct
        // 3 × 33³ × 40 B = 4.1 MiB.
        s.n = 33;
        s.iterations = 1;
    } else {
        // u, rsd, frct: 3 × 56³ × 40 B = 20 MiB.
        s.n = 56;
        s.iterations = 1;
    }
    return s;
}

namespace {

enum Array : unsigned { grid_u, grid_rsd, grid_frct, grid_rho_i, grid_qs };
enum Pc : std::uint32_t { pc_init = 100, pc_scale = 200, pc_lower = 300, pc_upper = 400, pc_update = 500, pc_rhs = 1000 };

struct Grids {
    CellGrid u, rsd, frct, rho_i, qs;
};

// One point of a triangular sweep: `dir` -1 (lower: the neighbours before
// it) or +1 (upper: after it).
void sweep_point(const Grids& g, std::uint64_t i, std::uint64_t j, std::uint64_t k, int dir, std::uint32_t pc, Emitter& e) {
    const std::uint64_t nb[3][3] = {{i, j, k + dir}, {i, j + dir, k}, {i + dir, j, k}};   // k±1, j±1, i±1
    for (unsigned c = 0; c < 3; ++c)
        for (unsigned m = 0; m < 5; ++m) e.load(g.rsd.at(nb[c][0], nb[c][1], nb[c][2], m), pc + 5 * c + m, 4);
    for (unsigned c = 0; c < 4; ++c) {
        const std::uint64_t x = c == 0 ? i : nb[c - 1][0], y = c == 0 ? j : nb[c - 1][1], z = c == 0 ? k : nb[c - 1][2];
        for (unsigned m = 0; m < 5; ++m) e.load(g.u.at(x, y, z, m), pc + 20 + 5 * c + m, 10);
        e.load(g.rho_i.at(x, y, z), pc + 40 + 2 * c, 10);
        e.load(g.qs.at(x, y, z), pc + 41 + 2 * c, 10);
    }
    for (unsigned m = 0; m < 5; ++m) e.load(g.rsd.at(i, j, k, m), pc + 50 + m, 4);
    for (unsigned m = 0; m < 5; ++m) e.store(g.rsd.at(i, j, k, m), pc + 55 + m, 4);
}

class Lu final : public detail::LoopKernel {
public:
    Lu(const GridSize& s, std::string name) : LoopKernel(std::move(name)) {
        const unsigned n = s.n;
        const Grids g{{base_of(grid_u), n, 5}, {base_of(grid_rsd), n, 5}, {base_of(grid_frct), n, 5},
                      {base_of(grid_rho_i), n, 1}, {base_of(grid_qs), n, 1}};
        FluxGrids f;
        f.u = g.u;
        f.rhs = g.rsd;
        f.forcing = g.frct;
        f.aux = {g.rho_i, g.qs};
        for (auto& a : f.flux_aux) a = {0, 1};
        f.pc = pc_rhs;

        add_loop("init", false, [g, n](unsigned r, unsigned t) {
            return all_rows(n, owner_block(n, t, r), [g](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
                for (const CellGrid* c : {&g.u, &g.rsd, &g.frct, &g.rho_i, &g.qs})
                    for (unsigned m = 0; m < c->comps; ++m) e.store(c->at(i, j, k, m), pc_init, 1);
            });
        });
        const unsigned first = 3, last = 3 * (n - 2);   // hyperplanes i + j + k = l of interior points
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            add_loop(pre + "scale", true, [g, n](unsigned r, unsigned t) {
                return interior_rows(n, interior_block(n, t, r), [g](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
                    for (unsigned m = 0; m < 5; ++m) {
                        e.load(g.rsd.at(i, j, k, m), pc_scale + m, 1);
                        e.store(g.rsd.at(i, j, k, m), pc_scale + 5 + m, 1);
                    }
                });
            });
            for (unsigned l = first; l <= last; ++l)
                add_loop(fmt::format("{}lower:h{}", pre, l), true, [g, n, l](unsigned r, unsigned t) {
                    return each(interior_block(n, t, r), 1, [g, n, l](std::uint64_t k, Emitter& e) {
                        for (std::uint64_t j = 1; j + 1 < n; ++j)
                            if (l >= j + k + 1 && l - j - k + 1 < n) sweep_point(g, l - j - k, j, k, -1, pc_lower, e);
                    });
                });
            for (unsigned l = last; l >= first; --l)
                add_loop(fmt::format("{}upper:h{}", pre, l), true, [g, n, l](unsigned r, unsigned t) {
                    const Range planes = interior_block(n, t, r);
                    return each(planes, 1, [g, n, l, planes](std::uint64_t q, Emitter& e) {
                        const std::uint64_t k = planes.end - 1 - (q - planes.begin);   // descending
                        for (std::uint64_t j = n - 2; j >= 1; --j)
                            if (l >= j + k + 1 && l - j - k + 1 < n) sweep_point(g, l - j - k, j, k, +1, pc_upper, e);
                    });
                });
            add_loop(pre + "update", true, [g, n](unsigned r, unsigned t) {
                return interior_rows(n, interior_block(n, t, r), [g](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
                    for (unsigned m = 0; m < 5; ++m) {
                        e.load(g.u.at(i, j, k, m), pc_update + m, 1);
                        e.load(g.rsd.at(i, j, k, m), pc_update + 5 + m, 0);
                        e.store(g.u.at(i, j, k, m), pc_update + 10 + m, 1);
                    }
                });
            });
            add_loop(pre + "rhs:aux", true, aux_loop(f));
            add_loop(pre + "rhs:forcing", true, forcing_loop(f));
            for (unsigned axis = 0; axis < 3; ++axis)
                add_loop(fmt::format("{}rhs:flux-{}", pre, "xyz"[axis]), true, flux_loop(f, axis));
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_lu(const GridSize& s, std::string name) {
    require(s.n >= 5 && s.n <= 256, name, "n must be 5 to 256");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Lu>(s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
