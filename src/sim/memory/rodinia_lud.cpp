// sim/memory/rodinia_lud.cpp — LUD: blocked LU decomposition of a dense
// matrix, the pattern of Rodinia's LUD.
//
// Source of the algorithm: the right-looking blocked LU factorisation
// without pivoting (G. H. Golub, C. F. Van Loan, "Matrix Computations",
// 3rd ed., 1996, section 3.2.10), as Rodinia (Che et al., IISWC 2009)
// organises it: per block step, the diagonal block is factorised (one
// thread), then the perimeter (the blocks right of it in its block row and
// below it in its block column: a triangular solve each against the
// diagonal block) in one parallel loop, then the internal blocks (every
// block of the trailing matrix: a block = block - left × top product) in
// another, each loop's blocks cut statically across threads.
//
// Modelled: an n × n float matrix, row-major, 16 × 16 blocks, so that a
// block's row is 64 bytes: one line. The kernel works a block row at a
// time: one 64-byte access per block row, the vector arithmetic inside it
// as the instruction gap (16 floats: two 8-wide vectors; an internal
// block's row takes 16 broadcasts and 32 fused multiply-adds against the
// top block, about 80 instructions). Per step s, one phase each:
// diagonal (thread 0: each row after loading the rows above it), perimeter
// (per chunk j: the diagonal block's 16 rows, then the top block's rows
// and the left block's rows, each loaded and stored), internal (per block:
// the 16 rows of its left and its top perimeter block, then its own rows
// loaded and stored). Only the first `steps` block steps are simulated:
// they touch the whole trailing matrix, the later ones ever smaller
// corners of it. Init: the blocks cut with static_block in row-major
// order, each thread writing its blocks a row at a time, as close to the
// first internal phase's cut as one cut of every block can be.
// Left out: the steps after `steps` (and the last diagonal block); the
// local copies of the perimeter blocks the internal loop makes (L1 hits,
// inside the gap); reading the input and the verification.
// Accesses per step s (m = n / 16 - s - 1 blocks after the diagonal):
// 152 + 80 × m + 64 × m².
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
using detail::Range;
using detail::require;
using detail::Share;
using detail::static_block;

LudSize lud_size(char cls) {
    LudSize s;
    // W: 3584² × 4 B = 49 MiB. Two steps touch the whole trailing matrix
    // twice; a third would add 40% to a run under nasp:8:64 (7 s of host
    // time: the 14 KiB stride down a block makes 64 far predictions a row).
    s.n = cls == 'S' ? 256 : 3584;
    s.steps = 2;
    return s;
}

namespace {

enum Pc : std::uint32_t { pc_init = 100, pc_diagonal = 200, pc_perimeter = 300, pc_internal = 400 };
constexpr std::uint8_t row_bytes = lud_block * 4;

class Lud final : public detail::LoopKernel {
public:
    Lud(const LudSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::uint64_t n = s.n, nb = n / lud_block;
        // Row r of block (bi, bj): 16 floats, one line.
        const auto row = [n](std::uint64_t bi, std::uint64_t bj, std::uint64_t r) {
            return base_of(0) + ((bi * lud_block + r) * n + bj * lud_block) * 4;
        };
        add_loop("init", false, [row, nb](unsigned r, unsigned t) {
            return each(static_block(nb * nb, t, r), 16, [row, nb](std::uint64_t b, Emitter& e) {
                for (std::uint64_t i = 0; i < lud_block; ++i) e.store(row(b / nb, b % nb, i), pc_init, 1, row_bytes);
            });
        });
        for (std::uint64_t d = 0; d < s.steps; ++d) {
            const std::string pre = fmt::format("iter{}:", d + 1);
            const std::uint64_t m = nb - d - 1;
            add_loop(pre + "diagonal", true, [row, d](unsigned r, unsigned) {
                if (r != 0) return Share{};
                return each(Range{0, lud_block}, lud_block, [row, d](std::uint64_t i, Emitter& e) {
                    e.load(row(d, d, i), pc_diagonal, 2, row_bytes);
                    for (std::uint64_t k = 0; k < i; ++k) e.load(row(d, d, k), pc_diagonal + 1, 16, row_bytes);
                    e.store(row(d, d, i), pc_diagonal + 2, 8, row_bytes);
                });
            });
            // Chunk j: the top block (d, d+1+j) and the left block (d+1+j, d).
            add_loop(pre + "perimeter", true, [row, d, m](unsigned r, unsigned t) {
                return each(static_block(m, t, r), 1, [row, d](std::uint64_t j, Emitter& e) {
                    const std::uint64_t b = d + 1 + j;
                    for (std::uint64_t i = 0; i < lud_block; ++i) e.load(row(d, d, i), pc_perimeter, 1, row_bytes);
                    for (std::uint64_t i = 0; i < lud_block; ++i) {
                        e.load(row(d, b, i), pc_perimeter + 1, 2, row_bytes);
                        e.store(row(d, b, i), pc_perimeter + 2, static_cast<std::uint32_t>(3 * i + 2), row_bytes);
                    }
                    for (std::uint64_t i = 0; i < lud_block; ++i) {
                        e.load(row(b, d, i), pc_perimeter + 3, 2, row_bytes);
                        e.store(row(b, d, i), pc_perimeter + 4, 152, row_bytes);
                    }
                });
            });
            // Block (d+1+q/m, d+1+q%m) of the trailing matrix, row-major.
            add_loop(pre + "internal", true, [row, d, m](unsigned r, unsigned t) {
                return each(static_block(m * m, t, r), 1, [row, d, m](std::uint64_t q, Emitter& e) {
                    const std::uint64_t bi = d + 1 + q / m, bj = d + 1 + q % m;
                    for (std::uint64_t i = 0; i < lud_block; ++i) e.load(row(bi, d, i), pc_internal, 1, row_bytes);
                    for (std::uint64_t i = 0; i < lud_block; ++i) e.load(row(d, bj, i), pc_internal + 1, 1, row_bytes);
                    for (std::uint64_t i = 0; i < lud_block; ++i) {
                        e.load(row(bi, bj, i), pc_internal + 2, 2, row_bytes);
                        e.store(row(bi, bj, i), pc_internal + 3, 80, row_bytes);
                    }
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_lud(const LudSize& s, std::string name) {
    require(s.n % lud_block == 0 && s.n >= 2 * lud_block && s.n <= 16384, name,
            "n must be a multiple of 16, 32 to 16384");
    require(s.steps >= 1 && s.steps < s.n / lud_block, name, "steps must be 1 to n / 16 - 1");
    return std::make_unique<Lud>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
