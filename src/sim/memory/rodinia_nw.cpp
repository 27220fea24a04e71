// sim/memory/rodinia_nw.cpp — NW: Needleman-Wunsch global alignment, the
// anti-diagonal wavefront of Rodinia's NW.
//
// Source of the algorithm: S. B. Needleman, C. D. Wunsch, "A general
// method applicable to the search for similarities in the amino acid
// sequence of two proteins", J. Mol. Biol. 48(3), 1970: the score of cell
// (i, j) is the best of its north-west neighbour plus the substitution
// score of the two residues (the reference matrix), and its north and
// west neighbours minus the gap penalty. Rodinia (Che et al., IISWC 2009)
// computes the score matrix in square tiles: the tiles of one
// anti-diagonal of tiles are independent, so each anti-diagonal is one
// parallel loop (its tiles cut statically), the upper-left triangle of
// tiles first, then the lower-right.
//
// Modelled: (n+1)² int score and reference matrices, row-major (row 0 and
// column 0 the gap penalties); tiles of block × block cells; one phase per
// anti-diagonal d of tiles (tile row + tile column = d), its tiles in
// order of their column cut with static_block. A tile is computed in
// place, row by row: per row, the north-west and west cells of its first
// cell, then per cell the north cell, the reference cell and the score's
// store (its west and north-west are the previous cell's, in registers).
// Init: the rows cut with static_block, each thread writing its rows of
// both matrices, a line at a time; a tile's owner in the wavefront changes
// from one anti-diagonal to the next, so no cut makes the wavefront local.
// Left out: Rodinia's copies of a tile and its halo into local arrays (L1
// hits), the traceback, reading the sequences and the substitution table.
// Accesses: (n / block)² tiles × block × (2 + 3 × block).
#include <algorithm>
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

NwSize nw_size(char cls) {
    NwSize s;
    if (cls == 'S') {
        s.n = 256;
        s.block = 16;
    } else {
        // Two matrices of 2049² × 4 B: 32 MiB. Tiles of 64 keep the phases
        // (the advisor's regions) at 2 × 32 - 1 = 63 anti-diagonals.
        s.n = 2048;
        s.block = 64;
    }
    return s;
}

namespace {

enum Array : unsigned { score, reference };
enum Pc : std::uint32_t { pc_init = 100, pc_tile = 200 };

class Nw final : public detail::LoopKernel {
public:
    Nw(const NwSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t cols = std::uint64_t{s.n} + 1, b = s.block, tiles = s.n / s.block;
        const auto at = [cols](Array a, std::uint64_t i, std::uint64_t j) { return base_of(a) + (i * cols + j) * 4; };
        add_loop("init", false, [at, cols](unsigned r, unsigned t) {
            const Range rows = static_block(cols, t, r);
            std::vector<Share> parts;
            for (Array a : {score, reference}) parts.push_back(fill_bytes(at(a, rows.begin, 0), at(a, rows.end, 0), pc_init + unsigned{a}));
            return concat(std::move(parts));
        });
        for (std::uint64_t d = 0; d + 1 < 2 * tiles; ++d) {
            // Tile columns lo .. hi on this anti-diagonal; the tile row is d - column.
            const std::uint64_t lo = d < tiles ? 0 : d - tiles + 1, hi = std::min(d, tiles - 1);
            add_loop(fmt::format("iter1:wavefront:h{}", d), true, [at, b, d, lo, hi](unsigned r, unsigned t) {
                const Range mine = static_block(hi - lo + 1, t, r);
                return each(Range{lo + mine.begin, lo + mine.end}, 1, [at, b, d](std::uint64_t tx, Emitter& e) {
                    const std::uint64_t i0 = 1 + (d - tx) * b, j0 = 1 + tx * b;
                    for (std::uint64_t i = i0; i < i0 + b; ++i) {
                        e.load(at(score, i - 1, j0 - 1), pc_tile, 2, 4);
                        e.load(at(score, i, j0 - 1), pc_tile + 1, 0, 4);
                        for (std::uint64_t j = j0; j < j0 + b; ++j) {
                            e.load(at(score, i - 1, j), pc_tile + 2, 1, 4);
                            e.load(at(reference, i, j), pc_tile + 3, 0, 4);
                            e.store(at(score, i, j), pc_tile + 4, 6, 4);
                        }
                    }
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_nw(const NwSize& s, std::string name) {
    require(s.block >= 4 && s.block <= 256, name, "block must be 4 to 256");
    require(s.n % s.block == 0 && s.n >= s.block && s.n <= 16384, name, "n must be a multiple of block, up to 16384");
    return std::make_unique<Nw>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
