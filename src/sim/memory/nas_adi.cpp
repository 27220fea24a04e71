// sim/memory/nas_adi.cpp — BT and SP: alternating-direction implicit (ADI)
// time steps with line solves along x, y and z, the patterns of NPB's BT
// (block-tridiagonal) and SP (scalar pentadiagonal) applications.
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), the BT and SP simulated CFD applications: each time
// step of the 3-D Navier-Stokes solve computes the right-hand side, then
// factors the implicit operator into three one-dimensional ones and solves
// along every grid line in x, then y, then z: BT a block-tridiagonal
// system of 5 × 5 blocks per line, SP, after diagonalisation, scalar
// pentadiagonal systems (three per line, with pointwise transforms of the
// right-hand side before and between the solves), then u += the solution.
// The OpenMP version (NAS-99-011) cuts the x and y solves by z plane and
// the z solve by y row, so the z solve reads every thread's planes.
//
// Modelled: u, rhs and forcing of 5 doubles per cell, the pointwise
// auxiliary grids (rho_i, us, vs, ws, square, qs; SP also speed) and a
// per-thread line-sized scratch array for the eliminated coefficients.
// Phases per time step: the right-hand side (nas_flux), [SP: txinvr], the
// x solve, [SP: ninvr], the y solve, [SP: pinvr], the z solve, [SP: tzetar],
// add. A solve runs along every line of n points whose other two
// coordinates are interior, i ascending (forward elimination) then
// descending (back substitution); the stride between two points of a line
// is 40 B in x, 40n in y and 40n² in z.
//  BT, forward, point q: u at q (5), rhs at q-1 (5, q >= 1), rhs at q (5),
//     the 5 × 5 block left for the back substitution stored to scratch
//     (25), rhs at q stored (5); backward, q = n-2 .. 0: the block (25),
//     rhs at q+1 (5), rhs at q loaded and stored (10). 85n - 45 per line.
//  SP, forward: rho_i, speed and the direction's velocity at q (3), rhs at
//     q-1 and q-2 (5 each where they exist), rhs at q (5), 15 coefficients
//     (3 systems × 5 diagonals) to scratch, rhs at q stored (5); backward:
//     6 coefficients (two upper diagonals × 3 systems), rhs at q+1 and q+2
//     (where it exists), rhs at q loaded and stored. 64n - 46 per line.
//  SP's transforms, per interior point: txinvr and tzetar load the rhs (5)
//     and six auxiliary values and store the rhs (5); ninvr and pinvr load
//     and store the rhs (10).
// Left out: the block and scalar arithmetic (the instruction gaps), NPB's
// separate lhs-forming loops over each line (folded into the forward
// sweep), the boundary conditions, the error norms, the multi-partition
// scheme of the MPI versions.
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

GridSize bt_size(char cls) {
    GridSize s;
    if (cls == 'S') {
        s.n = 16;
        s.iterations = 1;
    } else if (cls == 'W') {
        // NPB class W: 24³ (NPB's 200 steps cut to 1): u, rhs, forcing
        // 3 × 24³ × 40 B = 1.6 MiB, the auxiliary grids 0.6 MiB.
        s.n = 24;
        s.iterations = 1;
    } else {
        // u, rhs, forcing 3 × 48³ × 40 B = 12.7 MiB, the 6 auxiliary grids 5.1 MiB: 18 MiB.
        s.n = 48;
        s.iterations = 1;
    }
    return s;
}

GridSize sp_size(char cls) {
    GridSize s;
    if (cls == 'S') {
        s.n = 16;
        s.iterations = 1;
    } else if (cls == 'W') {
        // NPB class W: 36³ (NPB's 400 steps cut to 1): u, rhs, forcing
        // 3 × 36³ × 40 B = 5.3 MiB, the auxiliary grids 2.5 MiB.
        s.n = 36;
        s.iterations = 1;
    } else {
        // u, rhs, forcing 3 × 52³ × 40 B = 16 MiB, the 7 auxiliary grids 7.5 MiB.
        s.n = 52;
        s.iterations = 1;
    }
    return s;
}

namespace {

enum Array : unsigned { grid_u, grid_rhs, grid_forcing, first_aux, scratch = 20 };
enum Aux : unsigned { rho_i, us, vs, ws, square, qs, speed };
enum Pc : std::uint32_t { pc_init = 100, pc_solve = 200, pc_transform = 400, pc_add = 500, pc_rhs = 1000 };

struct Adi {
    AdiSolver solver;
    unsigned n;
    FluxGrids f;
    unsigned coeffs() const { return solver == AdiSolver::bt ? 25 : 15; }
    std::uint64_t scratch_stride() const {
        const std::uint64_t bytes = std::uint64_t{n} * coeffs() * 8;
        return (bytes + 4095) / 4096 * 4096;
    }
    std::uint64_t scratch_at(unsigned rank, std::uint64_t q, unsigned c) const {
        return base_of(scratch) + rank * scratch_stride() + (q * coeffs() + c) * 8;
    }
};

// Point q of a line: its coordinates.
struct Line {
    std::uint64_t i, j, k;   // the first point (the line's own coordinate 0)
    unsigned axis;
    std::array<std::uint64_t, 3> at(std::uint64_t q) const {
        std::array<std::uint64_t, 3> c{i, j, k};
        c[axis] = q;
        return c;
    }
};

void solve_line(const Adi& a, unsigned rank, const Line& line, Emitter& e) {
    const CellGrid& u = a.f.u;
    const CellGrid& rhs = a.f.rhs;
    const std::uint64_t n = a.n;
    const auto rhs_at = [&](std::uint64_t q, std::uint32_t pc, bool store, std::uint32_t gap) {
        const auto c = line.at(q);
        for (unsigned m = 0; m < 5; ++m) {
            if (store) e.store(rhs.at(c[0], c[1], c[2], m), pc + m, gap);
            else e.load(rhs.at(c[0], c[1], c[2], m), pc + m, gap);
        }
    };
    const std::uint32_t pc = pc_solve;
    if (a.solver == AdiSolver::bt) {
        for (std::uint64_t q = 0; q < n; ++q) {
            const auto c = line.at(q);
            for (unsigned m = 0; m < 5; ++m) e.load(u.at(c[0], c[1], c[2], m), pc + m, 2);
            if (q >= 1) rhs_at(q - 1, pc + 5, false, 2);
            rhs_at(q, pc + 10, false, 2);
            for (unsigned b = 0; b < 25; ++b) e.store(a.scratch_at(rank, q, b), pc + 15, 12);
            rhs_at(q, pc + 20, true, 2);
        }
        for (std::uint64_t q = n - 1; q-- > 0;) {
            for (unsigned b = 0; b < 25; ++b) e.load(a.scratch_at(rank, q, b), pc + 30, 2);
            rhs_at(q + 1, pc + 35, false, 2);
            rhs_at(q, pc + 40, false, 2);
            rhs_at(q, pc + 45, true, 2);
        }
        return;
    }
    const unsigned velocity = us + line.axis;
    for (std::uint64_t q = 0; q < n; ++q) {
        const auto c = line.at(q);
        for (unsigned x : {static_cast<unsigned>(rho_i), static_cast<unsigned>(speed), velocity})
            e.load(a.f.aux[x].at(c[0], c[1], c[2]), pc + 50 + x, 2);
        if (q >= 1) rhs_at(q - 1, pc + 60, false, 2);
        if (q >= 2) rhs_at(q - 2, pc + 65, false, 2);
        rhs_at(q, pc + 70, false, 2);
        for (unsigned b = 0; b < 15; ++b) e.store(a.scratch_at(rank, q, b), pc + 75, 2);
        rhs_at(q, pc + 80, true, 2);
    }
    for (std::uint64_t q = n - 1; q-- > 0;) {
        for (unsigned b = 0; b < 6; ++b) e.load(a.scratch_at(rank, q, 3 + b), pc + 85, 2);
        rhs_at(q + 1, pc + 90, false, 2);
        if (q + 2 < n) rhs_at(q + 2, pc + 95, false, 2);
        rhs_at(q, pc + 100, false, 2);
        rhs_at(q, pc + 105, true, 2);
    }
}

// The solve along `axis`: lines whose other coordinates are interior; x and
// y cut by z plane, z by y row; one line a segment.
detail::ShareOf solve_loop(const Adi& a, unsigned axis) {
    return [a, axis](unsigned r, unsigned t) {
        const std::uint64_t m = a.n - 2;   // interior points per side
        const Range outer = interior_block(a.n, t, r);
        return each(Range{outer.begin * m, outer.end * m}, 1, [a, axis, m, r](std::uint64_t q, Emitter& e) {
            const std::uint64_t o = q / m, in = q % m + 1;   // outer (k, or j for z) and inner (j, i, i) coordinates
            const Line line = axis == 0 ? Line{0, in, o, 0} : (axis == 1 ? Line{in, 0, o, 1} : Line{in, o, 0, 2});
            solve_line(a, r, line, e);
        });
    };
}

// SP's pointwise transforms of the rhs; with_aux: txinvr, tzetar.
detail::ShareOf transform_loop(const Adi& a, bool with_aux, std::uint32_t pc) {
    return [a, with_aux, pc](unsigned r, unsigned t) {
        return interior_rows(a.n, interior_block(a.n, t, r), [a, with_aux, pc](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
            for (unsigned m = 0; m < 5; ++m) e.load(a.f.rhs.at(i, j, k, m), pc + m, 1);
            if (with_aux)
                for (unsigned x : {rho_i, us, vs, ws, qs, speed}) e.load(a.f.aux[x].at(i, j, k), pc + 5 + x, 1);
            for (unsigned m = 0; m < 5; ++m) e.store(a.f.rhs.at(i, j, k, m), pc + 15 + m, 3);
        });
    };
}

class AdiKernel final : public detail::LoopKernel {
public:
    AdiKernel(AdiSolver solver, const GridSize& s, std::string name) : LoopKernel(std::move(name)) {
        const unsigned n = s.n;
        Adi a{solver, n, {}};
        a.f.u = {base_of(grid_u), n, 5};
        a.f.rhs = {base_of(grid_rhs), n, 5};
        a.f.forcing = {base_of(grid_forcing), n, 5};
        const unsigned naux = solver == AdiSolver::bt ? 6 : 7;
        for (unsigned x = 0; x < naux; ++x) a.f.aux.push_back({base_of(first_aux + x), n, 1});
        for (unsigned axis = 0; axis < 3; ++axis) a.f.flux_aux[axis] = {us + axis, square, rho_i};
        a.f.pc = pc_rhs;
        const bool sp = solver == AdiSolver::sp;

        add_loop("init", false, [a, n](unsigned r, unsigned t) {
            std::vector<Share> parts;
            parts.push_back(each(Range{0, n}, 1, [a, r](std::uint64_t q, Emitter& e) {
                for (unsigned c = 0; c < a.coeffs(); ++c) e.store(a.scratch_at(r, q, c), pc_init, 1);
            }));
            parts.push_back(all_rows(n, owner_block(n, t, r), [a](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
                for (const CellGrid* c : {&a.f.u, &a.f.rhs, &a.f.forcing})
                    for (unsigned m = 0; m < 5; ++m) e.store(c->at(i, j, k, m), pc_init + 1, 1);
                for (const CellGrid& x : a.f.aux) e.store(x.at(i, j, k), pc_init + 2, 1);
            }));
            return detail::concat(std::move(parts));
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("step{}:", it);
            add_loop(pre + "rhs:aux", true, aux_loop(a.f));
            add_loop(pre + "rhs:forcing", true, forcing_loop(a.f));
            for (unsigned axis = 0; axis < 3; ++axis)
                add_loop(fmt::format("{}rhs:flux-{}", pre, "xyz"[axis]), true, flux_loop(a.f, axis));
            if (sp) add_loop(pre + "txinvr", true, transform_loop(a, true, pc_transform));
            add_loop(pre + "x-solve", true, solve_loop(a, 0));
            if (sp) add_loop(pre + "ninvr", true, transform_loop(a, false, pc_transform + 20));
            add_loop(pre + "y-solve", true, solve_loop(a, 1));
            if (sp) add_loop(pre + "pinvr", true, transform_loop(a, false, pc_transform + 40));
            add_loop(pre + "z-solve", true, solve_loop(a, 2));
            if (sp) add_loop(pre + "tzetar", true, transform_loop(a, true, pc_transform + 60));
            add_loop(pre + "add", true, [a](unsigned r, unsigned t) {
                return interior_rows(a.n, interior_block(a.n, t, r), [a](std::uint64_t i, std::uint64_t j, std::uint64_t k, Emitter& e) {
                    for (unsigned m = 0; m < 5; ++m) {
                        e.load(a.f.u.at(i, j, k, m), pc_add + m, 1);
                        e.load(a.f.rhs.at(i, j, k, m), pc_add + 5 + m, 0);
                        e.store(a.f.u.at(i, j, k, m), pc_add + 10 + m, 1);
                    }
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_adi(AdiSolver solver, const GridSize& s, std::string name) {
    require(s.n >= 5 && s.n <= 256, name, "n must be 5 to 256");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<AdiKernel>(solver, s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
