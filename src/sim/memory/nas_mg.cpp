// sim/memory/nas_mg.cpp — MG: V-cycle multigrid on a 3-D grid hierarchy,
// the pattern of NPB's MG kernel.
//
// Source of the algorithm: Bailey et al., "The NAS Parallel Benchmarks"
// (RNR-91-002, 1991), kernel MG: iterations of r = v - A u, u = u + M r on
// an n³ periodic grid, where M is the V-cycle: restrict the residual down
// to the coarsest grid (P, a 27-point full weighting), smooth there (S),
// then on the way up prolongate (Q, trilinear), take the residual
// r = r - A u and smooth, level after level; A and S are 27-point
// operators. NPB 2 (NAS-95-020) stores each level with a ghost layer; the
// OpenMP version (NAS-99-011) cuts the outermost (z) loop of every grid
// sweep statically.
//
// Modelled: per level a u and an r grid of (n+2)³ doubles (ghost layer
// included), v on the finest; one phase per sweep: rprj3 down the levels,
// zero3 + psinv at the coarsest, then per level zero3 (not the finest),
// interp, resid, psinv, and a last resid on the finest (the norm's), as
// in NPB's iteration. Every sweep cuts its z planes (coarse planes for
// rprj3 and interp) with static_block across threads, the same cut at
// every level; init first-touches each thread's planes of every grid.
// A 27-point sweep (resid, psinv) walks a row (j, k) with unit stride in
// i, loading the nine neighbour lines (j±1, k±1) at i+1 once each (i and
// i-1 are in registers), then the output point i; rprj3 reads the nine
// fine lines at stride 2, interp the four coarse lines and writes four
// fine lines at stride 2.
// Left out: comm3, the periodic ghost update after each sweep (a few
// boundary planes); the scalar work of norm2u3 (reductions); zran3's
// setup of v; NPB's u1/u2 row temporaries (L1-resident).
// Accesses per 27-point sweep of a level of n: n² × (11n + 18).
#include <memory>
#include <vector>

#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/nas_common.hpp"
#include "sim/memory/nas_kernels.hpp"

namespace numaware::sim::memory::nas {

using detail::base_of;
using detail::each;
using detail::Emitter;
using detail::interior_block;
using detail::owner_block;
using detail::Range;
using detail::Share;

MgSize mg_size(char cls) {
    MgSize s;
    if (cls == 'S') {
        s.n = 32;
        s.iterations = 1;
    } else if (cls == 'W') {
        // NPB class W: 128³ (NPB's 4 iterations cut to 1, as class A's):
        // the grids of class A below.
        s.n = 128;
        s.iterations = 1;
    } else {
        // u, r, v on the finest grid: 3 × 130³ × 8 B = 50 MiB, 55 MiB with the coarser grids.
        s.n = 128;
        s.iterations = 1;
    }
    return s;
}

namespace {

// A level's grid with its ghost layer: (n+2)³ doubles.
struct Level {
    std::uint64_t base = 0;
    std::uint64_t n = 0;                       // interior points per side
    std::uint64_t m() const { return n + 2; }  // stored points per side
    std::uint64_t at(std::uint64_t i, std::uint64_t j, std::uint64_t k) const { return base + ((k * m() + j) * m() + i) * 8; }
};

// The rows (j, k) of planes `planes`, j in [j0, j0 + rows), as one range of
// row numbers (segments of one row each).
Range rows_of(Range planes, std::uint64_t rows) { return {planes.begin * rows, planes.end * rows}; }

// PCs: each sweep's code is the same at every level, as in the real kernel.
enum Pc : std::uint32_t { pc_init = 100, pc_zero = 200, pc_resid = 300, pc_psinv = 400, pc_rprj = 500, pc_interp = 600 };

// A 27-point sweep on level g: out(i) = f(in(i), lines(i-1..i+1)) for every
// interior point, row by row. `lines` is the grid the stencil reads, `in`
// the pointwise input, `out` the output (resid: lines u, in v or r, out r;
// psinv: lines r, in u, out u).
Share stencil(Range planes, Level lines, Level in, Level out, std::uint32_t pc) {
    const std::uint64_t n = lines.n, m = lines.m();
    return each(rows_of(planes, n), 1, [=](std::uint64_t row, Emitter& e) {
        const std::uint64_t k = row / n, j = row % n + 1;
        for (std::uint64_t i = 0; i < m; ++i) {
            for (unsigned l = 0; l < 9; ++l) e.load(lines.at(i, j - 1 + l % 3, k - 1 + l / 3), pc + l, 1);
            if (i < 2) continue;
            e.load(in.at(i - 1, j, k), pc + 9, 1);
            e.store(out.at(i - 1, j, k), pc + 10, 8);
        }
    });
}

// Restriction: coarse(ic, jc, kc) from fine 2ic-1..2ic+1 on the nine fine
// lines 2jc-1..2jc+1 × 2kc-1..2kc+1; coarse planes `planes`.
Share restrict_to(Range planes, Level fine, Level coarse) {
    const std::uint64_t nc = coarse.n;
    return each(rows_of(planes, nc), 1, [=](std::uint64_t row, Emitter& e) {
        const std::uint64_t kc = row / nc, jc = row % nc + 1;
        const auto line = [&](unsigned l, std::uint64_t i) { return fine.at(i, 2 * jc - 1 + l % 3, 2 * kc - 1 + l / 3); };
        for (unsigned l = 0; l < 9; ++l) e.load(line(l, 1), pc_rprj + l, 1);
        for (std::uint64_t ic = 1; ic <= nc; ++ic) {
            for (unsigned l = 0; l < 9; ++l) {
                e.load(line(l, 2 * ic), pc_rprj + 10 + l, 1);
                e.load(line(l, 2 * ic + 1), pc_rprj + 20 + l, 1);
            }
            e.store(coarse.at(ic, jc, kc), pc_rprj + 30, 8);
        }
    });
}

// Prolongation: fine += Q coarse. Coarse point (ic, jc, kc) reads the four
// coarse lines jc-1..jc × kc-1..kc at ic (ic-1 is in registers) and updates
// the eight fine points 2ic-1..2ic × 2jc-1..2jc × 2kc-1..2kc.
Share prolongate(Range planes, Level coarse, Level fine) {
    const std::uint64_t nc = coarse.n;
    return each(rows_of(planes, nc), 1, [=](std::uint64_t row, Emitter& e) {
        const std::uint64_t kc = row / nc, jc = row % nc + 1;
        for (unsigned l = 0; l < 4; ++l) e.load(coarse.at(0, jc - 1 + l % 2, kc - 1 + l / 2), pc_interp + l, 1);
        for (std::uint64_t ic = 1; ic <= nc; ++ic) {
            for (unsigned l = 0; l < 4; ++l) e.load(coarse.at(ic, jc - 1 + l % 2, kc - 1 + l / 2), pc_interp + l, 1);
            for (unsigned f = 0; f < 4; ++f)
                for (unsigned a = 0; a < 2; ++a) {
                    const std::uint64_t at = fine.at(2 * ic - 1 + a, 2 * jc - 1 + f % 2, 2 * kc - 1 + f / 2);
                    e.load(at, pc_interp + 10 + 4 * f + 2 * a, 2);
                    e.store(at, pc_interp + 11 + 4 * f + 2 * a, 1);
                }
        }
    });
}

// Every point of the planes, ghosts included, stored once (zero3, init).
Share fill(Range planes, Level g, std::uint32_t pc) {
    const std::uint64_t m = g.m();
    return each(rows_of(planes, m), 1, [=](std::uint64_t row, Emitter& e) {
        const std::uint64_t k = row / m, j = row % m;
        for (std::uint64_t i = 0; i < m; ++i) e.store(g.at(i, j, k), pc, 1);
    });
}

class Mg final : public detail::LoopKernel {
public:
    Mg(const MgSize& s, std::string name) : LoopKernel(std::move(name)) {
        // Level 0 is the finest (n), the last the coarsest (2).
        std::vector<Level> u, r;
        for (std::uint64_t n = s.n, a = 1; n >= 2; n /= 2, a += 2) {
            u.push_back({base_of(static_cast<unsigned>(a)), n});
            r.push_back({base_of(static_cast<unsigned>(a + 1)), n});
        }
        const Level v{base_of(0), s.n};
        const std::size_t coarsest = u.size() - 1;

        // Init: each thread first-touches its planes of every grid.
        add_loop("init", false, [u, r, v](unsigned rk, unsigned t) {
            std::vector<Share> parts;
            for (std::size_t l = 0; l < u.size(); ++l) {
                parts.push_back(fill(owner_block(u[l].m(), t, rk), u[l], pc_init));
                parts.push_back(fill(owner_block(r[l].m(), t, rk), r[l], pc_init + 1));
            }
            parts.push_back(fill(owner_block(v.m(), t, rk), v, pc_init + 2));
            return concat(std::move(parts));
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            const auto lvl = [&](const char* what, std::size_t l) { return fmt::format("{}{}:L{}", pre, what, l); };
            for (std::size_t l = 0; l < coarsest; ++l)
                add_loop(lvl("rprj3", l + 1), true, [f = r[l], c = r[l + 1]](unsigned rk, unsigned t) {
                    return restrict_to(interior_block(c.m(), t, rk), f, c);
                });
            add_loop(lvl("zero3", coarsest), true, [g = u[coarsest]](unsigned rk, unsigned t) {
                return fill(owner_block(g.m(), t, rk), g, pc_zero);
            });
            add_loop(lvl("psinv", coarsest), true, [rg = r[coarsest], ug = u[coarsest]](unsigned rk, unsigned t) {
                return stencil(interior_block(rg.m(), t, rk), rg, ug, ug, pc_psinv);
            });
            for (std::size_t l = coarsest; l-- > 0;) {
                if (l != 0)
                    add_loop(lvl("zero3", l), true, [g = u[l]](unsigned rk, unsigned t) {
                        return fill(owner_block(g.m(), t, rk), g, pc_zero);
                    });
                add_loop(lvl("interp", l), true, [c = u[l + 1], f = u[l]](unsigned rk, unsigned t) {
                    return prolongate(interior_block(c.m(), t, rk), c, f);
                });
                // resid: r = v - A u on the finest, r = r - A u below it.
                const Level in = l == 0 ? v : r[l];
                add_loop(lvl("resid", l), true, [ug = u[l], in, rg = r[l]](unsigned rk, unsigned t) {
                    return stencil(interior_block(ug.m(), t, rk), ug, in, rg, pc_resid);
                });
                add_loop(lvl("psinv", l), true, [rg = r[l], ug = u[l]](unsigned rk, unsigned t) {
                    return stencil(interior_block(rg.m(), t, rk), rg, ug, ug, pc_psinv);
                });
            }
            add_loop(pre + "resid-norm:L0", true, [ug = u[0], v, rg = r[0]](unsigned rk, unsigned t) {
                return stencil(interior_block(ug.m(), t, rk), ug, v, rg, pc_resid);
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_mg(const MgSize& s, std::string name) {
    require(is_pow2(s.n) && s.n >= 4 && s.n <= 512, name, "n must be a power of two, 4 to 512");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Mg>(s, std::move(name));
}

}  // namespace numaware::sim::memory::nas
