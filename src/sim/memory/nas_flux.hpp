// sim/memory/nas_flux.hpp — the right-hand side that NPB's three simulated
// CFD applications (LU, BT, SP) share: the residual of the 3-D compressible
// Navier-Stokes equations on an n³ grid of 5-component cells.
//
// Source: Bailey et al., "The NAS Parallel Benchmarks" (RNR-91-002, 1991),
// section on the simulated CFD applications: the right-hand side is the
// forcing term minus the flux differences in x, y and z, with fourth-order
// artificial dissipation (a five-point stencil along each direction).
// NPB 3 first computes pointwise quantities of u (1/ρ, velocities, q, ...)
// into grids of their own, then the flux loops read them.
//
// Modelled, one phase each, z planes cut across threads (owner_block for
// the loops over every point, interior_block for the interior ones):
//  aux:      every point: load the 5 components of u, store one value in
//            each auxiliary grid;
//  forcing:  every point: load the 5 components of the forcing, store the
//            5 of the right-hand side;
//  flux-x/y/z: every interior point: load u at the five cells p-2e .. p+2e
//            along the direction e (clamped to the grid: NPB's one-sided
//            boundary formulas are left out), the auxiliary grids the
//            direction uses at p±e, then load and store the 5 components of
//            the right-hand side at p.
// Accesses per interior point and direction: 25 + 2 × flux_aux + 10.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/nas_common.hpp"

namespace numaware::sim::memory::nas {

struct FluxGrids {
    CellGrid u, rhs, forcing;               // 5 components each
    std::vector<CellGrid> aux;              // 1 component each: what the aux loop stores
    // For each direction, the auxiliary grids its flux loop reads at p±e
    // (indices into aux), the same count for every direction.
    std::vector<unsigned> flux_aux[3];
    std::uint32_t pc = 0;                   // the first of the loops' PCs (400 of them)
    std::uint32_t gap = 1;                  // instructions between two flux-loop accesses
};

detail::ShareOf aux_loop(const FluxGrids& g);
detail::ShareOf forcing_loop(const FluxGrids& g);
detail::ShareOf flux_loop(const FluxGrids& g, unsigned axis);

// The interior points of z planes `planes` (interior rows and columns), one
// segment per row (j, k): body(i, j, k, emitter).
template <class Body>
detail::Share interior_rows(unsigned n, detail::Range planes, Body body) {
    const std::uint64_t rows = n - 2;
    return detail::each(detail::Range{planes.begin * rows, planes.end * rows}, 1,
                        [n, rows, body](std::uint64_t row, detail::Emitter& e) {
                            const std::uint64_t k = row / rows, j = row % rows + 1;
                            for (std::uint64_t i = 1; i + 1 < n; ++i) body(i, j, k, e);
                        });
}

// Every point of z planes `planes`, one segment per row.
template <class Body>
detail::Share all_rows(unsigned n, detail::Range planes, Body body) {
    return detail::each(detail::Range{planes.begin * n, planes.end * n}, 1, [n, body](std::uint64_t row, detail::Emitter& e) {
        for (std::uint64_t i = 0; i < n; ++i) body(i, row % n, row / n, e);
    });
}

}  // namespace numaware::sim::memory::nas
