// sim/memory/rodinia_cfd.cpp — CFD: an unstructured finite-volume solver
// of the 3-D Euler equations, the pattern of Rodinia's CFD solver.
//
// Source of the algorithm: A. Corrigan, F. Camelli, R. Löhner, J. Wallin,
// "Running unstructured grid based CFD solvers on modern graphics
// hardware", AIAA 2009-4001, the cell-centred solver Rodinia (Che et al.,
// IISWC 2009) takes: per cell the density, momentum (3) and energy, per
// face the cell behind it (or a wall, or the far field) and its normal;
// each iteration saves the variables, computes a time step per cell, then
// per Runge-Kutta stage accumulates every cell's flux over its faces from
// its own and its neighbours' variables and advances the variables. Every
// step is a parallel loop over the cells, cut statically (the copy over
// every variable of every cell: 5 × cells).
//
// Modelled: a mesh of tetrahedra, 4 faces a cell; the variables, the saved
// variables and the fluxes as 5 arrays of doubles each (variable v of cell
// i at [v × cells + i]), the step factors and areas, the neighbours (4 B)
// and the normals (3 doubles a face) face-major ([f × cells + i],
// [(f × 3 + k) × cells + i]). Phases per iteration: copy (variables into
// the saved ones, 5 × cells elements cut with static_block, not the cells'
// cut), step-factor (a cell's 5 variables and area loaded, its factor
// stored), then per stage flux (a cell's 5 variables, then per face its
// normal's 3 components and its neighbour, and for a neighbouring cell its
// 5 variables, gathered: the first's address is the neighbour just loaded,
// dependent; then the 5 fluxes stored) and time-step (a cell's factor,
// then per variable the saved value and the flux loaded and the variable
// stored). The mesh: cells in an order that keeps neighbours within
// `bandwidth` cells of each other (as a renumbered real mesh), each free
// face paired with a free face of a cell up to `bandwidth` after it, 1 in
// 32 faces a wall or the far field, seeded, symmetric. Init: each thread
// writes its cells of every array, a line at a time.
// Left out: reading the mesh and its normals, the far-field state and the
// boundary faces' own arithmetic (instruction gaps), the output.
// Accesses per iteration: 17 × cells + stages × (42 × cells + 5 × the
// faces between cells (counted from both sides)).
#include <memory>
#include <vector>

#include "sim/memory/arrays.hpp"
#include "sim/memory/kernel_common.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/rodinia_kernels.hpp"

namespace numaware::sim::memory::rodinia {

using detail::base_of;
using detail::concat;
using detail::each;
using detail::Emitter;
using detail::fill_bytes;
using detail::Range;
using detail::require;
using detail::Share;
using detail::static_block;

CfdSize cfd_size(char cls) {
    CfdSize s;
    s.iterations = 1;
    s.rk_stages = 3;
    if (cls == 'S') {
        s.elements = 4096;
        s.bandwidth = 256;
    } else {
        // 2^17 cells × 248 B (15 variables, 2 per-cell doubles, 4
        // neighbours, 12 normal components) = 31 MiB: about twice the L3,
        // and the largest that keeps a run under nasp:8:64 near 5 s of
        // host time (CFD makes 230 accesses a cell an iteration).
        s.elements = std::uint64_t{1} << 17;
        s.bandwidth = 2048;
    }
    return s;
}

CfdMesh cfd_mesh(const CfdSize& s) {
    constexpr int unset = -3;
    const std::uint64_t n = s.elements;
    CfdMesh m;
    m.neighbours.assign(4 * n, unset);
    std::vector<std::uint8_t> used(n, 0);   // faces given so far, in order
    std::mt19937_64 rng(s.seed);
    for (std::uint64_t i = 0; i < n; ++i)
        while (used[i] < 4) {
            std::int32_t nb = cfd_wall;
            const std::uint64_t kind = detail::draw_below(rng, 64);
            if (kind == 1) nb = cfd_far_field;
            for (int attempt = 0; kind > 1 && attempt < 8; ++attempt) {
                const std::uint64_t j = i + 1 + detail::draw_below(rng, s.bandwidth);
                if (j >= n || used[j] == 4) continue;
                m.neighbours[used[j]++ * n + j] = static_cast<std::int32_t>(i);
                nb = static_cast<std::int32_t>(j);
                break;
            }
            m.neighbours[used[i]++ * n + i] = nb;
        }
    return m;
}

namespace {

enum Array : unsigned { variables, saved, fluxes, step_factors, areas, neighbours, normals };
enum Pc : std::uint32_t { pc_init = 100, pc_copy = 200, pc_factor = 300, pc_flux = 400, pc_step = 500 };
constexpr unsigned nvar = 5, faces = 4;

class Cfd final : public detail::LoopKernel {
public:
    Cfd(const CfdSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t n = s.elements;
        const auto mesh = std::make_shared<const CfdMesh>(cfd_mesh(s));
        // Component c of array a for cell i: doubles, except the neighbours (4 B).
        const auto at = [n](Array a, std::uint64_t c, std::uint64_t i) {
            return base_of(a) + (c * n + i) * (a == neighbours ? 4 : 8);
        };
        add_loop("init", false, [at, n](unsigned r, unsigned t) {
            const Range mine = static_block(n, t, r);
            std::vector<Share> parts;
            const std::pair<Array, std::uint64_t> arrays[] = {{variables, nvar}, {saved, nvar},    {fluxes, nvar},
                                                              {step_factors, 1}, {areas, 1},       {neighbours, faces},
                                                              {normals, 3 * faces}};
            for (const auto& [a, comps] : arrays)
                for (std::uint64_t c = 0; c < comps; ++c)
                    parts.push_back(fill_bytes(at(a, c, mine.begin), at(a, c, mine.end), pc_init + unsigned{a}));
            return concat(std::move(parts));
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const std::string pre = fmt::format("iter{}:", it);
            add_loop(pre + "copy", true, [at, n](unsigned r, unsigned t) {
                return each(static_block(nvar * n, t, r), 1024, [at](std::uint64_t q, Emitter& e) {
                    e.load(at(variables, 0, q), pc_copy, 1);
                    e.store(at(saved, 0, q), pc_copy + 1, 0);
                });
            });
            add_loop(pre + "step-factor", true, [at, n](unsigned r, unsigned t) {
                return each(static_block(n, t, r), 256, [at](std::uint64_t i, Emitter& e) {
                    for (unsigned v = 0; v < nvar; ++v) e.load(at(variables, v, i), pc_factor + v, 1);
                    e.load(at(areas, 0, i), pc_factor + 5, 4);
                    e.store(at(step_factors, 0, i), pc_factor + 6, 20);
                });
            });
            for (unsigned stage = 1; stage <= s.rk_stages; ++stage) {
                const std::string st = fmt::format("{}rk{}:", pre, stage);
                add_loop(st + "flux", true, [at, n, mesh](unsigned r, unsigned t) {
                    return each(static_block(n, t, r), 256, [at, n, mesh](std::uint64_t i, Emitter& e) {
                        for (unsigned v = 0; v < nvar; ++v) e.load(at(variables, v, i), pc_flux + v, 1);
                        std::uint32_t pending = 20;   // the cell's velocity, pressure and speed of sound
                        for (unsigned f = 0; f < faces; ++f) {
                            for (unsigned k = 0; k < 3; ++k)
                                e.load(at(normals, f * 3 + k, i), pc_flux + 10 + k, k == 0 ? pending + 2 : 0);
                            const std::int32_t nb = mesh->neighbours[f * n + i];
                            e.load(at(neighbours, f, i), pc_flux + 13, 1, 4);
                            if (nb >= 0) {
                                e.load_indirect(at(variables, 0, static_cast<std::uint64_t>(nb)), pc_flux + 14, 0);
                                for (unsigned v = 1; v < nvar; ++v)
                                    e.load(at(variables, v, static_cast<std::uint64_t>(nb)), pc_flux + 14 + v, 0);
                                pending = 40;   // the face's flux from both cells
                            } else {
                                pending = nb == cfd_wall ? 10 : 30;
                            }
                        }
                        for (unsigned v = 0; v < nvar; ++v) e.store(at(fluxes, v, i), pc_flux + 20 + v, v == 0 ? pending : 0);
                    });
                });
                add_loop(st + "time-step", true, [at, n](unsigned r, unsigned t) {
                    return each(static_block(n, t, r), 256, [at](std::uint64_t i, Emitter& e) {
                        e.load(at(step_factors, 0, i), pc_step, 2);
                        for (unsigned v = 0; v < nvar; ++v) {
                            e.load(at(saved, v, i), pc_step + 1 + v, 1);
                            e.load(at(fluxes, v, i), pc_step + 10 + v, 0);
                            e.store(at(variables, v, i), pc_step + 20 + v, 1);
                        }
                    });
                });
            }
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_cfd(const CfdSize& s, std::string name) {
    require(s.elements >= 2 && s.elements <= (std::uint64_t{1} << 24), name, "elements must be 2 to 2^24");
    require(s.bandwidth >= 1 && s.bandwidth <= s.elements, name, "bandwidth must be 1 to elements");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    require(s.rk_stages >= 1 && s.rk_stages <= 8, name, "rk_stages must be 1 to 8");
    return std::make_unique<Cfd>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
