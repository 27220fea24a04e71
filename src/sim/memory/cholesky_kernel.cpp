// sim/memory/cholesky_kernel.cpp — the tiled Cholesky factorisation A = L·Lᵀ
// (apps/inversion's first stage: POTRF, TRSM, SYRK and GEMM tile tasks) as
// parallel loops of tile operations.
//
// Layout and placement are the application's: only the nt(nt+1)/2 tiles of
// the lower triangle exist, each b × b doubles (b = 64), contiguous and
// page-aligned, in row-major order over the triangle (tile (m, n), m ≥ n,
// is slot m(m+1)/2 + n). Tile slots are dealt out as its locality hint
// (SA) deals them to nodes: one contiguous static block of slots a thread,
// so each thread owns a band of tile rows. Each thread first touches its
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
// A tile operation at 64-byte lines: every line of its input tiles once,
// then every line of its output tile loaded and stored, with its
// arithmetic as instruction gaps spread evenly over those accesses. The
// arithmetic (LAPACK's operation counts for a b × b tile): POTRF b³/3
// flops, TRSM b³, SYRK b³, GEMM 2b³, at 8 flops an instruction (a 4-wide
// double fused multiply-add, AVX2). This is the traffic of a tile kernel
// whose tiles stay in the L2 while it computes (three 32 KiB tiles in
// thesis-4s's 256 KiB), not the order of a BLAS micro-kernel's loads:
// the kernel re-reads its tiles from the L1 and L2 many times, which a
// line-level model leaves out.
// Left out: the task runtime's dynamic scheduling across the barriers (the
// task graph lets the next step's panel start before the update ends; the
// task-level simulator, `numaware sim`, models that), the inverse's two
// later stages (TRTRI and LAUUM, tile operations of the same kinds).
#include "sim/memory/cholesky_kernel.hpp"

#include <string>
#include <vector>

#include <fmt/core.h>

#include "numaware/machine.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"

namespace numaware::sim::memory::detail {

namespace {

constexpr std::uint64_t tile_bytes = cholesky_tile * cholesky_tile * 8;
constexpr std::uint64_t tile_lines = tile_bytes / 64;
constexpr std::uint64_t b3 = cholesky_tile * cholesky_tile * cholesky_tile;
constexpr std::uint64_t flops_per_instruction = 8;

enum Pc : std::uint32_t { pc_fill = 1, pc_input = 10, pc_output_load = 20, pc_output_store = 21 };
enum Op : unsigned { potrf, trsm, syrk, gemm };
constexpr std::uint64_t op_flops[] = {b3 / 3, b3, b3, 2 * b3};

std::uint64_t slot(std::uint64_t m, std::uint64_t n) { return m * (m + 1) / 2 + n; }

// The rank of `threads` whose static block of `count` slots holds slot s
// (static_block's rule: the first count mod threads blocks one longer).
unsigned owner(std::uint64_t s, std::uint64_t count, unsigned threads) {
    const std::uint64_t q = count / threads, rem = count % threads;
    if (s < rem * (q + 1)) return static_cast<unsigned>(s / (q + 1));
    return static_cast<unsigned>(rem + (s - rem * (q + 1)) / q);
}

// One tile operation: the inputs' lines, then the output's lines loaded
// and stored; the arithmetic's instructions spread over the accesses.
void tile_op(Emitter& e, Op op, std::uint64_t base, std::vector<std::uint64_t> inputs, std::uint64_t output) {
    const std::uint64_t accesses = (inputs.size() + 2) * tile_lines;
    const auto gap = static_cast<std::uint32_t>(op_flops[op] / flops_per_instruction / accesses);
    for (std::size_t i = 0; i < inputs.size(); ++i)
        for (std::uint64_t l = 0; l < tile_lines; ++l)
            e.load(base + inputs[i] * tile_bytes + l * 64, pc_input + static_cast<std::uint32_t>(i), gap, 64);
    for (std::uint64_t l = 0; l < tile_lines; ++l) {
        e.load(base + output * tile_bytes + l * 64, pc_output_load, gap, 64);
        e.store(base + output * tile_bytes + l * 64, pc_output_store, gap, 64);
    }
}

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
                return each(Range{k, nt}, 1, [=](std::uint64_t m, Emitter& e) {
                    if (owner(slot(m, k), count, threads) != rank) return;
                    if (m == k) tile_op(e, potrf, base, {}, slot(k, k));
                    else tile_op(e, trsm, base, {slot(k, k)}, slot(m, k));
                });
            });
            if (k + 1 == nt) break;   // the last step has nothing to update
            // One segment a tile row m of the trailing matrix.
            add_loop(fmt::format("step{}:update", k), true, [base, count, nt, k](unsigned rank, unsigned threads) {
                return each(Range{k + 1, nt}, 1, [=](std::uint64_t m, Emitter& e) {
                    for (std::uint64_t n = k + 1; n <= m; ++n) {
                        if (owner(slot(m, n), count, threads) != rank) continue;
                        if (m == n) tile_op(e, syrk, base, {slot(m, k)}, slot(m, m));
                        else tile_op(e, gemm, base, {slot(m, k), slot(n, k)}, slot(m, n));
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
