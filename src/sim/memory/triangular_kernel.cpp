// sim/memory/triangular_kernel.cpp — y = L·x, L lower-triangular.
//
// The matrix is n × n doubles in full rows (row-major, the upper part
// unused, as LAPACK's full storage keeps it); x and y are n doubles. The
// rows are cut as OpenMP's schedule(static) cuts them (static_block), one
// contiguous block a thread, and row i reads its i + 1 stored elements, so
// the work grows along the rows: with 16 threads the last four hold 44% of
// the triangle (1 − (3/4)²). Threads placed contiguously put those four on
// the last node, whose memory then streams almost half of the matrix while
// the first node's streams 6%; scattered, the heavy blocks sit on every
// node. Each thread first touches its own rows' triangles and its blocks
// of x and y (unmeasured "init"), as a parallel initialisation does, so
// under first touch every row is local to its reader. The row's dot
// product runs four doubles at a time, as an optimised BLAS or a
// `simd reduction` loop emits it with 256-bit vectors: per four elements a
// 32-byte load of L[i][j..j+3], one of x[j..j+3] and a multiply-add with
// the loop's increment and compare (gaps 1 and 0; the row's last load is
// shorter); per row, one store of y[i].
#include "sim/memory/triangular_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "numaware/machine.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"

namespace numaware::sim::memory::detail {

namespace {

constexpr std::uint32_t pc_fill = 1, pc_l = 2, pc_x = 3, pc_y = 4;
constexpr std::uint64_t simd = 4;   // doubles a 256-bit load holds

class Trmv final : public LoopKernel {
public:
    Trmv(std::uint64_t n, std::uint64_t matrix_bytes) : LoopKernel("trmv:" + format_size(matrix_bytes)) {
        const std::uint64_t l = base_of(0), x = base_of(1), y = base_of(2);
        add_loop("init", false, [n, l, x, y](unsigned rank, unsigned threads) {
            const Range rows = static_block(n, threads, rank);
            std::vector<Share> parts;
            // Each row's stored triangle, one store a line.
            parts.push_back(each(rows, 1, [n, l](std::uint64_t i, Emitter& e) {
                fill_range(e, l + i * n * 8, l + (i * n + i + 1) * 8, pc_fill);
            }));
            if (!rows.empty()) {
                parts.push_back(fill_bytes(x + rows.begin * 8, x + rows.end * 8, pc_fill));
                parts.push_back(fill_bytes(y + rows.begin * 8, y + rows.end * 8, pc_fill));
            }
            return concat(std::move(parts));
        });
        add_loop("trmv", true, [n, l, x, y](unsigned rank, unsigned threads) {
            return each(static_block(n, threads, rank), 1, [n, l, x, y](std::uint64_t i, Emitter& e) {
                for (std::uint64_t j = 0; j <= i; j += simd) {
                    const auto bytes = static_cast<std::uint8_t>(8 * std::min(simd, i + 1 - j));
                    e.load(l + (i * n + j) * 8, pc_l, 1, bytes);
                    e.load(x + j * 8, pc_x, 0, bytes);
                }
                e.store(y + i * 8, pc_y, 2);
            });
        });
    }
};

}  // namespace

std::unique_ptr<Workload> make_trmv(std::uint64_t matrix_bytes) {
    const auto n = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(matrix_bytes / 8)));
    return std::make_unique<Trmv>(n, matrix_bytes);
}

}  // namespace numaware::sim::memory::detail
