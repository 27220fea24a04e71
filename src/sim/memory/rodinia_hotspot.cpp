// sim/memory/rodinia_hotspot.cpp — Hotspot: a 2-D thermal simulation, the
// 5-point stencil of Rodinia's HotSpot.
//
// Source of the algorithm: W. Huang et al., "HotSpot: a compact thermal
// modeling methodology for early-stage VLSI design", IEEE TVLSI 14(5),
// 2006, the compact model Rodinia (Che et al., IISWC 2009) takes: each
// step, every cell's new temperature from its own temperature, its power
// and the temperatures of its four neighbours (north, south, east, west),
// the result grid and the temperature grid swapping roles after each step.
// The OpenMP version sweeps the grid in square tiles and cuts the list of
// tiles (row-major) statically across threads.
//
// Modelled: temperature, power and result grids of rows × cols doubles,
// row-major; tiles of 16 × 16 cells, the tiles cut with static_block, one
// phase per step. Per cell, row by row inside a tile: load its power, its
// own temperature and its four neighbours' (at the grid's edge, the cell
// itself stands for the missing neighbour), then about a dozen
// floating-point instructions, and store the result. Odd steps read the
// temperature grid and write the result grid, even steps the reverse (the
// ping-pong). Init: each thread writes its tiles of the three grids, a
// line at a time.
// Left out: the boundary conditions' own arithmetic (the edge cells here
// load themselves in place of the missing neighbour), reading the input
// files, writing the output.
// Accesses per step: 7 × rows × cols.
#include <memory>
#include <vector>

#include "sim/memory/arrays.hpp"
#include "sim/memory/kernel_common.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/rodinia_kernels.hpp"

namespace numaware::sim::memory::rodinia {

using detail::base_of;
using detail::each;
using detail::Emitter;
using detail::require;
using detail::static_block;

HotspotSize hotspot_size(char cls) {
    HotspotSize s;
    if (cls == 'S') {
        s.rows = 128;
        s.cols = 128;
    } else {
        // Three grids of 1024 × 1536 × 8 B: 36 MiB.
        s.rows = 1024;
        s.cols = 1536;
    }
    s.iterations = 2;
    return s;
}

namespace {

enum Array : unsigned { grid_temp, grid_power, grid_result };
enum Pc : std::uint32_t { pc_init = 100, pc_stencil = 200 };

class Hotspot final : public detail::LoopKernel {
public:
    Hotspot(const HotspotSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t rows = s.rows, cols = s.cols;
        const std::uint64_t tiles_across = cols / hotspot_tile, tiles = rows / hotspot_tile * tiles_across;
        const auto at = [cols](Array a, std::uint64_t r, std::uint64_t c) { return base_of(a) + (r * cols + c) * 8; };
        add_loop("init", false, [at, tiles, tiles_across](unsigned r, unsigned t) {
            return each(static_block(tiles, t, r), 1, [at, tiles_across](std::uint64_t tile, Emitter& e) {
                const std::uint64_t r0 = tile / tiles_across * hotspot_tile, c0 = tile % tiles_across * hotspot_tile;
                for (std::uint64_t y = r0; y < r0 + hotspot_tile; ++y)
                    for (Array a : {grid_temp, grid_power, grid_result})
                        for (std::uint64_t c = c0; c < c0 + hotspot_tile; c += 8) e.store(at(a, y, c), pc_init + unsigned{a}, 1, 64);
            });
        });
        for (unsigned it = 1; it <= s.iterations; ++it) {
            const Array src = it % 2 == 1 ? grid_temp : grid_result, dst = it % 2 == 1 ? grid_result : grid_temp;
            add_loop(fmt::format("iter{}:stencil", it), true,
                     [at, tiles, tiles_across, rows, cols, src, dst](unsigned r, unsigned t) {
                         return each(static_block(tiles, t, r), 1, [=](std::uint64_t tile, Emitter& e) {
                             const std::uint64_t r0 = tile / tiles_across * hotspot_tile;
                             const std::uint64_t c0 = tile % tiles_across * hotspot_tile;
                             for (std::uint64_t y = r0; y < r0 + hotspot_tile; ++y)
                                 for (std::uint64_t x = c0; x < c0 + hotspot_tile; ++x) {
                                     const std::uint64_t north = y > 0 ? y - 1 : y, south = y + 1 < rows ? y + 1 : y;
                                     const std::uint64_t west = x > 0 ? x - 1 : x, east = x + 1 < cols ? x + 1 : x;
                                     e.load(at(grid_power, y, x), pc_stencil, 2);
                                     e.load(at(src, y, x), pc_stencil + 1, 0);
                                     e.load(at(src, north, x), pc_stencil + 2, 0);
                                     e.load(at(src, south, x), pc_stencil + 3, 0);
                                     e.load(at(src, y, east), pc_stencil + 4, 0);
                                     e.load(at(src, y, west), pc_stencil + 5, 0);
                                     e.store(at(dst, y, x), pc_stencil + 6, 12);
                                 }
                         });
                     });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_hotspot(const HotspotSize& s, std::string name) {
    require(s.rows % hotspot_tile == 0 && s.cols % hotspot_tile == 0 && s.rows >= hotspot_tile &&
                s.cols >= hotspot_tile && s.rows <= 16384 && s.cols <= 16384,
            name, "rows and cols must be multiples of 16, 16 to 16384");
    require(s.iterations >= 1 && s.iterations <= 100, name, "iterations must be 1 to 100");
    return std::make_unique<Hotspot>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
