// sim/memory/qr_kernel.cpp — the tiled QR factorisation A = QR (apps/qr:
// PLASMA's GEQRT, UNMQR, TSQRT and TSMQR tile tasks, flat reduction tree)
// as a fork-join kernel.
//
// Layout and first touch are the application's: nt × nt tiles of b × b
// doubles (b = 64, 32 KiB), each contiguous and page-aligned, in row-major
// tile order; a T-factor tile of ib × b doubles (ib = 32, 16 KiB) per
// tile, in a second array in the same order. Tiles are dealt out one
// contiguous static block of the nt² tile indices a thread (a band of tile
// rows: the rule of the application's SA hints until 2026-12-07, which are
// block-cyclic since, apps/common/owners.hpp; this kernel keeps the bands),
// and each thread first touches its tiles of A and of T (unmeasured "init").
//
// Step k, for m, n = k+1 .. nt-1:
//   GEQRT(k)       inout A(k,k); out T(k,k)
//   TSQRT(m,k)     inout A(k,k), A(m,k); out T(m,k)
//   UNMQR(k,n)     in A(k,k), T(k,k); inout A(k,n)
//   TSMQR(m,n,k)   in A(m,k), T(m,k); inout A(k,n), A(m,n)
// Every TSQRT of a step updates A(k,k), and every TSMQR of a column n
// updates A(k,n): both are chains, in the order of m. A fork-join code
// runs them as such:
//   step{k}:panel   one thread (the owner of A(k,k), as an OpenMP
//                   `single`) runs GEQRT(k) and TSQRT(k+1..nt-1, k);
//   step{k}:update  a parallel loop over the columns n > k (static
//                   schedule): a thread runs UNMQR(k,n), then the chain
//                   TSMQR(k+1..nt-1, n, k), keeping A(k,n) in its cache.
// So the update does not compute where its tiles live: a thread's columns
// cross every other thread's band of rows, and which thread takes column n
// changes with k as the trailing matrix shrinks. The advisor's regions
// group the steps: `panel` (serial) and `update`.
//
// Each tile operation is emit_tile_op's (tile_ops.hpp), with PLASMA's
// operation counts for b × b tiles (Buttari et al., "A class of parallel
// tiled linear algebra algorithms for multicore architectures", Parallel
// Computing 35, 2009; the same as apps/qr/graph.cpp's): GEQRT 4b³/3
// flops, TSQRT 2b³, UNMQR 2b³, TSMQR 4b³, which sum to a dense QR's
// 4n³/3. Left out: the task runtime's overlap of a step's panel with the
// previous update and of the chains with each other (the task-level
// simulator, `numaware sim`, models the schedulers), and the inner
// blocking's extra arithmetic.
#include "sim/memory/qr_kernel.hpp"

#include <string>

#include <fmt/core.h>

#include "numaware/machine.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/tile_ops.hpp"

namespace numaware::sim::memory::detail {

namespace {

constexpr std::uint64_t tile_side = 64;
constexpr std::uint64_t tile_bytes = tile_side * tile_side * 8;
constexpr std::uint64_t t_bytes = 32 * tile_side * 8;
constexpr std::uint64_t b3 = tile_side * tile_side * tile_side;
constexpr std::uint32_t pc_fill_a = 1, pc_fill_t = 2, pc_geqrt = 10, pc_tsqrt = 30, pc_unmqr = 50, pc_tsmqr = 70;

struct Tiles {
    std::uint64_t a = 0, t = 0, nt = 0;
    TileOperand A(std::uint64_t m, std::uint64_t n) const { return {a + (m * nt + n) * tile_bytes, tile_bytes / 64}; }
    TileOperand T(std::uint64_t m, std::uint64_t n) const { return {t + (m * nt + n) * t_bytes, t_bytes / 64}; }
};

class Qr final : public LoopKernel {
public:
    Qr(std::uint64_t nt, std::uint64_t bytes) : LoopKernel("qr:" + format_size(bytes)) {
        const Tiles x{base_of(0), base_of(1), nt};
        const std::uint64_t count = nt * nt;
        add_loop("init", false, [x, count](unsigned rank, unsigned threads) {
            const Range mine = static_block(count, threads, rank);
            if (mine.empty()) return Share{};
            return concat({fill_bytes(x.a + mine.begin * tile_bytes, x.a + mine.end * tile_bytes, pc_fill_a),
                           fill_bytes(x.t + mine.begin * t_bytes, x.t + mine.end * t_bytes, pc_fill_t)});
        });
        for (std::uint64_t k = 0; k < nt; ++k) {
            // One segment a tile of column k, all on the owner of A(k, k).
            add_loop(fmt::format("step{}:panel", k), true, [x, count, nt, k](unsigned rank, unsigned threads) {
                const Range mine = static_block(count, threads, rank);
                if (!mine.contains(k * nt + k)) return Share{};
                return each(Range{k, nt}, 1, [x, k](std::uint64_t m, Emitter& e) {
                    if (m == k) emit_tile_op(e, 4 * b3 / 3, {}, {x.A(k, k), x.T(k, k)}, pc_geqrt);
                    else emit_tile_op(e, 2 * b3, {}, {x.A(k, k), x.A(m, k), x.T(m, k)}, pc_tsqrt);
                });
            });
            if (k + 1 == nt) break;   // the last step has no trailing matrix
            // One segment a column n of the trailing matrix.
            add_loop(fmt::format("step{}:update", k), true, [x, nt, k](unsigned rank, unsigned threads) {
                const Range cols = static_block(nt - k - 1, threads, rank);
                return each(Range{k + 1 + cols.begin, k + 1 + cols.end}, 1, [x, nt, k](std::uint64_t n, Emitter& e) {
                    emit_tile_op(e, 2 * b3, {x.A(k, k), x.T(k, k)}, {x.A(k, n)}, pc_unmqr);
                    for (std::uint64_t m = k + 1; m < nt; ++m)
                        emit_tile_op(e, 4 * b3, {x.A(m, k), x.T(m, k)}, {x.A(k, n), x.A(m, n)}, pc_tsmqr);
                });
            });
        }
    }
};

}  // namespace

std::uint64_t qr_tiles_per_side(std::uint64_t bytes) {
    const std::uint64_t tiles = bytes / tile_bytes;
    std::uint64_t nt = 0;
    while ((nt + 1) * (nt + 1) <= tiles) ++nt;
    return nt;
}

std::unique_ptr<Workload> make_qr(std::uint64_t bytes) {
    return std::make_unique<Qr>(qr_tiles_per_side(bytes), bytes);
}

}  // namespace numaware::sim::memory::detail
