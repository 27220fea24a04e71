// sim/memory/stencil_kernels.cpp — the task applications' 2-D 5-point
// stencils as parallel loops: Jacobi (apps/jacobi), Gauss-Seidel
// (apps/gauss_seidel) and red-black Gauss-Seidel (apps/red_black).
//
// Each kernel keeps its application's layout and its update order
// (apps/common/stencil_kernels.hpp, apps/red_black/program.cpp), and cuts
// the work the way the applications' locality hint (SA) places it: whole
// rows, or whole rows of tiles, statically, one block a thread, so that
// the thread that first touches a block is the one that updates it. Per
// point, the four neighbour loads in the order the expression
// 0.25 · (((N + S) + W) + E) reads them, then the store; the instruction
// gaps stand for its three adds and one multiply. Every kernel first
// touches its arrays in an unmeasured "init" by the same blocks.
//
// jacobi:        grids A and B of n × n doubles, row-major. One measured
//                sweep, A into B: interior points from their four
//                neighbours, boundary points copied (a load and a store).
// gauss-seidel:  one n × n grid stored tile-major (32 × 32 tiles, each
//                contiguous, row-major inside, tiles in row-major order).
//                One measured sweep in place, tile by tile in row-major
//                order, a thread its band of tile rows; the points on the
//                grid's boundary stay. A tile reads the edge row or
//                column of each neighbour tile: the north and south edges
//                are rows (one line each), the west and east edges are
//                columns, one line a point.
// red-black:     the red and the black points in two arrays of n rows of
//                n/2 points (the point of colour k in row r at column
//                ((r + k) mod 2) + 2·idx). Two measured half-sweeps, "red"
//                then "black": each updates its own colour in place from
//                the other colour's rows above, level and below.
//
// Left out: the iterations beyond one sweep (every sweep of these kernels
// makes the same accesses), the convergence check, the task runtime's own
// accesses and its dynamic placement (the simulator's threads are the
// static blocks of an OpenMP `for`; the task-level simulator, `numaware
// sim`, models the schedulers).
#include "sim/memory/stencil_kernels.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "numaware/machine.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"

namespace numaware::sim::memory::detail {

namespace {

constexpr std::uint64_t word = 8;   // a double

// The largest multiple of `unit` whose square times `bytes_per_point` fits
// in `bytes`.
std::uint64_t side_for(std::uint64_t bytes, std::uint64_t bytes_per_point, std::uint64_t unit) {
    const auto n = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(bytes / bytes_per_point)));
    return n / unit * unit;
}

// Per point: the four neighbours, then the store (gaps: the adds and the
// multiply between them).
enum Pc : std::uint32_t { pc_fill = 1, pc_north, pc_south, pc_west, pc_east, pc_store, pc_copy_load, pc_copy_store };

void point(Emitter& e, std::uint64_t north, std::uint64_t south, std::uint64_t west, std::uint64_t east,
           std::uint64_t store) {
    e.load(north, pc_north, 1);
    e.load(south, pc_south, 0);
    e.load(west, pc_west, 1);
    e.load(east, pc_east, 1);
    e.store(store, pc_store, 2);
}

class Jacobi final : public LoopKernel {
public:
    Jacobi(std::uint64_t n, std::uint64_t bytes) : LoopKernel("jacobi:" + format_size(bytes)) {
        const std::uint64_t a = base_of(0), b = base_of(1);
        add_loop("init", false, [n, a, b](unsigned rank, unsigned threads) {
            const Range rows = static_block(n, threads, rank);
            if (rows.empty()) return Share{};
            std::vector<Share> parts;
            for (std::uint64_t grid : {a, b})
                parts.push_back(fill_bytes(grid + rows.begin * n * word, grid + rows.end * n * word, pc_fill));
            return concat(std::move(parts));
        });
        add_loop("sweep", true, [n, a, b](unsigned rank, unsigned threads) {
            return each(static_block(n, threads, rank), 1, [n, a, b](std::uint64_t y, Emitter& e) {
                const auto src = [a, n](std::uint64_t r, std::uint64_t c) { return a + (r * n + c) * word; };
                const auto dst = [b, n](std::uint64_t r, std::uint64_t c) { return b + (r * n + c) * word; };
                const auto copy = [&](std::uint64_t c) {
                    e.load(src(y, c), pc_copy_load, 1);
                    e.store(dst(y, c), pc_copy_store, 0);
                };
                if (y == 0 || y + 1 == n) {
                    for (std::uint64_t c = 0; c < n; ++c) copy(c);
                    return;
                }
                copy(0);
                for (std::uint64_t c = 1; c + 1 < n; ++c)
                    point(e, src(y - 1, c), src(y + 1, c), src(y, c - 1), src(y, c + 1), dst(y, c));
                copy(n - 1);
            });
        });
    }
};

class GaussSeidel final : public LoopKernel {
public:
    GaussSeidel(std::uint64_t n, std::uint64_t bytes) : LoopKernel("gauss-seidel:" + format_size(bytes)) {
        constexpr std::uint64_t tile = gauss_seidel_tile, tt = tile * tile;
        const std::uint64_t tps = n / tile, g = base_of(0);
        // Point (r, c) of tile (ti, tj).
        const auto at = [g, tps](std::uint64_t ti, std::uint64_t tj, std::uint64_t r, std::uint64_t c) {
            return g + ((ti * tps + tj) * tt + r * tile + c) * word;
        };
        add_loop("init", false, [tps, g](unsigned rank, unsigned threads) {
            const Range band = static_block(tps, threads, rank);   // tile rows: one contiguous range
            if (band.empty()) return Share{};
            return fill_bytes(g + band.begin * tps * tt * word, g + band.end * tps * tt * word, pc_fill);
        });
        add_loop("sweep", true, [tps, at](unsigned rank, unsigned threads) {
            const Range band = static_block(tps, threads, rank);
            // One segment a tile, the band's tiles in row-major order.
            return each(Range{band.begin * tps, band.end * tps}, 1, [tps, at](std::uint64_t k, Emitter& e) {
                const std::uint64_t ti = k / tps, tj = k % tps;
                // The rows and columns off the grid's boundary.
                const std::uint64_t r0 = ti == 0 ? 1 : 0, r1 = ti + 1 == tps ? tile - 1 : tile;
                const std::uint64_t c0 = tj == 0 ? 1 : 0, c1 = tj + 1 == tps ? tile - 1 : tile;
                for (std::uint64_t r = r0; r < r1; ++r)
                    for (std::uint64_t c = c0; c < c1; ++c)
                        point(e, r > 0 ? at(ti, tj, r - 1, c) : at(ti - 1, tj, tile - 1, c),
                              r + 1 < tile ? at(ti, tj, r + 1, c) : at(ti + 1, tj, 0, c),
                              c > 0 ? at(ti, tj, r, c - 1) : at(ti, tj - 1, r, tile - 1),
                              c + 1 < tile ? at(ti, tj, r, c + 1) : at(ti, tj + 1, r, 0), at(ti, tj, r, c));
            });
        });
    }
};

class RedBlack final : public LoopKernel {
public:
    RedBlack(std::uint64_t n, std::uint64_t bytes) : LoopKernel("red-black:" + format_size(bytes)) {
        const std::uint64_t h = n / 2;
        const std::uint64_t colour_array[2] = {base_of(0), base_of(1)};   // red, black
        add_loop("init", false, [n, h, colour_array](unsigned rank, unsigned threads) {
            const Range rows = static_block(n, threads, rank);
            if (rows.empty()) return Share{};
            std::vector<Share> parts;
            for (std::uint64_t arr : colour_array)
                parts.push_back(fill_bytes(arr + rows.begin * h * word, arr + rows.end * h * word, pc_fill));
            return concat(std::move(parts));
        });
        for (unsigned colour : {0u, 1u}) {
            const std::uint64_t mine = colour_array[colour], other = colour_array[1 - colour];
            const auto half_sweep = [n, h, colour, mine, other](std::uint64_t r, Emitter& e) {
                if (r == 0 || r + 1 == n) return;   // boundary rows stay
                const std::uint64_t p = (r + colour) % 2;   // this colour's column parity in row r
                const auto of = [h, other](std::uint64_t row, std::uint64_t k) { return other + (row * h + k) * word; };
                for (std::uint64_t k = 0; k < h; ++k) {
                    const std::uint64_t c = p + 2 * k;
                    if (c == 0 || c + 1 == n) continue;   // boundary columns stay
                    const std::uint64_t west = p == 0 ? of(r, k - 1) : of(r, k);
                    const std::uint64_t east = p == 0 ? of(r, k) : of(r, k + 1);
                    point(e, of(r - 1, k), of(r + 1, k), west, east, mine + (r * h + k) * word);
                }
            };
            add_loop(colour == 0 ? "red" : "black", true, [n, half_sweep](unsigned rank, unsigned threads) {
                return each(static_block(n, threads, rank), 1, half_sweep);
            });
        }
    }
};

}  // namespace

std::uint64_t jacobi_side(std::uint64_t bytes) { return side_for(bytes, 2 * word, 8); }
std::uint64_t gauss_seidel_side(std::uint64_t bytes) { return side_for(bytes, word, gauss_seidel_tile); }
std::uint64_t red_black_side(std::uint64_t bytes) { return side_for(bytes, word, 16); }

std::unique_ptr<Workload> make_jacobi(std::uint64_t bytes) {
    return std::make_unique<Jacobi>(jacobi_side(bytes), bytes);
}

std::unique_ptr<Workload> make_gauss_seidel(std::uint64_t bytes) {
    return std::make_unique<GaussSeidel>(gauss_seidel_side(bytes), bytes);
}

std::unique_ptr<Workload> make_red_black(std::uint64_t bytes) {
    return std::make_unique<RedBlack>(red_black_side(bytes), bytes);
}

}  // namespace numaware::sim::memory::detail
