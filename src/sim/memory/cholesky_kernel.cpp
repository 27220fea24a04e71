// sim/memory/cholesky_kernel.cpp — the tiled Cholesky factorisation A = L·Lᵀ
// (apps/inversion's first stage: POTRF, TRSM, SYRK and GEMM tile tasks) as
// parallel loops of tile operations.
//
// The layout is the application's: only the nt(nt+1)/2 tiles of the lower
// triangle exist, each b × b doubles (b = 64), contiguous and page-aligned,
// in row-major order over the triangle (tile (m, n), m ≥ n, is slot
// m(m+1)/2 + n). Tile slots are dealt out one contiguous static block of
// slots a thread, so each thread owns a band of tile rows: the rule of the
// application's SA hints until 2026-12-07, which are block-cyclic since
// (apps/common/owners.hpp); this kernel keeps the bands. Each thread first touches its
// tiles (unmeasured "init") and runs the operations that update them:
// owner computes.
//
// Right-looking, one step k at a time, two parallel loops a step (an
// OpenMP `for` each, with its barrier):
//   step{k}:panel   POTRF on tile (k, k), and TRSM on each (m, k), m > k,
//                   reading (k, k);
//   step{k}:update  SYRK on each (m, m) reading (m, k), and GEMM on each
//                   (m, n), k < n < m, reading (m, k) and (n, k).
// The advisor's regions group the steps: `panel` and `update`.
//
// Each tile operation is emit_tile_op's (tile_ops.hpp: the inputs' lines,
// then the output's loaded and stored, the arithmetic as instruction
// gaps), with LAPACK's operation counts for a b × b tile: POTRF b³/3
// flops, TRSM b³, SYRK b³, GEMM 2b³. Three 32 KiB tiles stay in
// thesis-4s's 256 KiB L2 while an operation computes.
// Left out: the task runtime's dynamic scheduling across the barriers (the
// task graph lets the next step's panel start before the update ends; the
// task-level simulator, `numaware sim`, models that), the inverse's two
// later stages (TRTRI and LAUUM, tile operations of the same kinds).
#include "sim/memory/cholesky_kernel.hpp"

#include <string>

#include <fmt/core.h>

#include "numaware/machine.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/tile_ops.hpp"

namespace numaware::sim::memory::detail {

namespace {

constexpr std::uint64_t tile_bytes = cholesky_tile * cholesky_tile * 8;
constexpr std::uint64_t tile_lines = tile_bytes / 64;
constexpr std::uint64_t b3 = cholesky_tile * cholesky_tile * cholesky_tile;

constexpr std::uint32_t pc_fill = 1, pc_tile = 10;
enum Op : unsigned { potrf, trsm, syrk, gemm };
constexpr std::uint64_t op_flops[] = {b3 / 3, b3, b3, 2 * b3};

std::uint64_t slot(std::uint64_t m, std::uint64_t n) { return m * (m + 1) / 2 + n; }

class Cholesky final : public LoopKernel {
public:
    Cholesky(std::uint64_t nt, std::uint64_t bytes) : LoopKernel("cholesky:" + format_size(bytes)) {
        const std::uint64_t base = base_of(0), count = nt * (nt + 1) / 2;
        add_loop("init", false, [base, count](unsigned rank, unsigned threads) {
            const Range mine = static_block(count, threads, rank);
            if (mine.empty()) return Share{};
            return fill_bytes(base + mine.begin * tile_bytes, base + mine.end * tile_bytes, pc_fill);
        });
        for (std::uint64_t k = 0; k < nt; ++k) {
            // One segment a tile of column k; the owner of (m, k) updates it.
            add_loop(fmt::format("step{}:panel", k), true, [base, count, nt, k](unsigned rank, unsigned threads) {
                const Range mine = static_block(count, threads, rank);   // the thread's tile slots
                return each(Range{k, nt}, 1, [=](std::uint64_t m, Emitter& e) {
                    if (!mine.contains(slot(m, k))) return;
                    const auto tile = [base](std::uint64_t s) { return TileOperand{base + s * tile_bytes, tile_lines}; };
                    if (m == k) emit_tile_op(e, op_flops[potrf], {}, {tile(slot(k, k))}, pc_tile);
                    else emit_tile_op(e, op_flops[trsm], {tile(slot(k, k))}, {tile(slot(m, k))}, pc_tile);
                });
            });
            if (k + 1 == nt) break;   // the last step has nothing to update
            // One segment a tile row m of the trailing matrix.
            add_loop(fmt::format("step{}:update", k), true, [base, count, nt, k](unsigned rank, unsigned threads) {
                const Range mine = static_block(count, threads, rank);
                return each(Range{k + 1, nt}, 1, [=](std::uint64_t m, Emitter& e) {
                    const auto tile = [base](std::uint64_t s) { return TileOperand{base + s * tile_bytes, tile_lines}; };
                    for (std::uint64_t n = k + 1; n <= m; ++n) {
                        if (!mine.contains(slot(m, n))) continue;
                        if (m == n) emit_tile_op(e, op_flops[syrk], {tile(slot(m, k))}, {tile(slot(m, m))}, pc_tile);
                        else emit_tile_op(e, op_flops[gemm], {tile(slot(m, k)), tile(slot(n, k))}, {tile(slot(m, n))}, pc_tile);
                    }
                });
            });
        }
    }
};

}  // namespace

std::uint64_t cholesky_tiles_per_side(std::uint64_t bytes) {
    const std::uint64_t tiles = bytes / tile_bytes;
    std::uint64_t nt = 0;
    while ((nt + 1) * (nt + 2) / 2 <= tiles) ++nt;
    return nt;
}

std::unique_ptr<Workload> make_cholesky(std::uint64_t bytes) {
    return std::make_unique<Cholesky>(cholesky_tiles_per_side(bytes), bytes);
}

}  // namespace numaware::sim::memory::detail
