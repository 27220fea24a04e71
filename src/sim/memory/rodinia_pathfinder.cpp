// sim/memory/rodinia_pathfinder.cpp — Pathfinder: the cheapest path down a
// grid by dynamic programming, row after row, the pattern of Rodinia's
// PathFinder.
//
// Source of the algorithm: Rodinia (Che et al., IISWC 2009), PathFinder:
// a rows × cols grid of weights ("the wall"); the cost of reaching cell
// (t, n) is its weight plus the least cost of the three cells above it,
// (t-1, n-1), (t-1, n), (t-1, n+1). Each row is one parallel loop over the
// columns, cut statically; two row buffers take turns as the row read and
// the row written.
//
// Modelled: the wall of rows × cols ints, row-major, and two row buffers
// of cols ints; one phase per row t = 1 .. rows - 1. The column loop is
// vectorised, 4 ints (16 B) a load, and cut with static_block over the
// vectors: per vector, the wall's 4 cells of row t, the previous row's
// cells shifted left, in place and shifted right (unaligned loads; at the
// grid's edges clamped inside the row), two minimums and an add, and the
// store into the other buffer. Odd rows read the first buffer and write
// the second, even rows the reverse (the ping-pong). Init: each thread
// writes its columns of every row of the wall and of both buffers (the
// first buffer holds row 0), a line at a time.
// Left out: reading the wall (Rodinia draws it at random), the output.
// Accesses: (rows - 1) × 5 × cols / 4.
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

PathfinderSize pathfinder_size(char cls) {
    PathfinderSize s;
    if (cls == 'S') {
        s.cols = std::uint64_t{1} << 14;
        s.rows = 9;
    } else {
        // The wall 17 × 2^19 × 4 B = 34 MiB, the buffers 2 × 2 MiB.
        s.cols = std::uint64_t{1} << 19;
        s.rows = 17;
    }
    return s;
}

namespace {

enum Array : unsigned { wall, row_a, row_b };
enum Pc : std::uint32_t { pc_init = 100, pc_row = 200 };
constexpr std::uint64_t lanes = 4;   // ints a vector

class Pathfinder final : public detail::LoopKernel {
public:
    Pathfinder(const PathfinderSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t cols = s.cols, rows = s.rows, vectors = cols / lanes;
        const auto cell = [cols](std::uint64_t t, std::uint64_t n) { return base_of(wall) + (t * cols + n) * 4; };
        add_loop("init", false, [cell, rows, vectors](unsigned r, unsigned t) {
            const Range mine = static_block(vectors, t, r);
            std::vector<Share> parts;
            for (std::uint64_t y = 0; y < rows; ++y)
                parts.push_back(fill_bytes(cell(y, mine.begin * lanes), cell(y, mine.end * lanes), pc_init));
            for (Array a : {row_a, row_b})
                parts.push_back(fill_bytes(base_of(a) + mine.begin * lanes * 4, base_of(a) + mine.end * lanes * 4, pc_init + unsigned{a}));
            return concat(std::move(parts));
        });
        for (std::uint64_t y = 1; y < rows; ++y) {
            const std::uint64_t src = base_of(y % 2 == 1 ? row_a : row_b), dst = base_of(y % 2 == 1 ? row_b : row_a);
            add_loop(fmt::format("iter1:dp-row:h{}", y), true, [cell, cols, vectors, y, src, dst](unsigned r, unsigned t) {
                return each(static_block(vectors, t, r), 256, [cell, cols, y, src, dst](std::uint64_t v, Emitter& e) {
                    const std::uint64_t n = v * lanes;
                    const std::uint64_t left = n == 0 ? 0 : n - 1, right = n + lanes == cols ? n : n + 1;
                    e.load(cell(y, n), pc_row, 1, 16);
                    e.load(src + left * 4, pc_row + 1, 0, 16);
                    e.load(src + n * 4, pc_row + 2, 0, 16);
                    e.load(src + right * 4, pc_row + 3, 0, 16);
                    e.store(dst + n * 4, pc_row + 4, 3, 16);
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_pathfinder(const PathfinderSize& s, std::string name) {
    require(s.cols % lanes == 0 && s.cols >= lanes && s.cols <= (std::uint64_t{1} << 26), name,
            "cols must be a multiple of 4, 4 to 2^26");
    require(s.rows >= 2 && s.rows <= 4096, name, "rows must be 2 to 4096");
    return std::make_unique<Pathfinder>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
