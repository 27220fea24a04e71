// sim/memory/integral_histogram_kernel.cpp — the integral histogram's two
// scans, the task application's kernel (apps/integral_histogram) as
// parallel loops.
//
// Source of the algorithm: F. Porikli, "Integral histogram: a fast way to
// extract histograms in Cartesian spaces", CVPR 2005: entry (y, x, b)
// counts the pixels of bin b in the rectangle from (0, 0) to (y, x), and
// is computed by a cumulative scan along every row, then one along every
// column. The layout is the application's: row-major, the bins innermost
// (16 bins of 4-byte counters: one 64-byte line a pixel), an n × n image
// of one byte a pixel.
//
// Modelled: the row scan cuts the rows statically (static_block), and per
// pixel loads its image byte and stores its 16 counters as one 64-byte
// vector (the running sums stay in a vector register, as a vectorised scan
// keeps them). The column scan cuts the columns statically, and each thread
// walks down its block of columns row by row: per pixel, a 64-byte load of
// the row above's counters and of its own, an add and a 64-byte store. Each
// thread first touches its rows of the histogram and of the image
// (unmeasured "init"), as a parallel initialisation by rows does. So the
// two scans want opposite pages: the row scan reads what its own thread
// touched first, while the column scan reads a slice of every row, most of
// them on other nodes; a page mapping serves one scan or the other.
// Left out: the binning's arithmetic beyond one instruction gap, writing
// the result anywhere.
#include "sim/memory/integral_histogram_kernel.hpp"

#include <cmath>
#include <string>

#include "numaware/machine.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"

namespace numaware::sim::memory::detail {

namespace {

constexpr std::uint32_t pc_fill = 1, pc_image = 2, pc_row_store = 3, pc_above = 4, pc_own = 5, pc_col_store = 6;

class IntegralHistogram final : public LoopKernel {
public:
    IntegralHistogram(std::uint64_t n, std::uint64_t bytes) : LoopKernel("ihist:" + format_size(bytes)) {
        const std::uint64_t h = base_of(0), image = base_of(1);
        const std::uint64_t line = integral_histogram_pixel_bytes;
        const auto at = [h, n, line](std::uint64_t y, std::uint64_t x) { return h + (y * n + x) * line; };
        add_loop("init", false, [n, h, image, line](unsigned rank, unsigned threads) {
            const Range rows = static_block(n, threads, rank);
            if (rows.empty()) return Share{};
            std::vector<Share> parts;
            parts.push_back(fill_bytes(h + rows.begin * n * line, h + rows.end * n * line, pc_fill));
            parts.push_back(fill_bytes(image + rows.begin * n, image + rows.end * n, pc_fill));
            return concat(std::move(parts));
        });
        add_loop("rows", true, [n, image, at](unsigned rank, unsigned threads) {
            return each(static_block(n, threads, rank), 1, [n, image, at](std::uint64_t y, Emitter& e) {
                for (std::uint64_t x = 0; x < n; ++x) {
                    e.load(image + y * n + x, pc_image, 2, 1);
                    e.store(at(y, x), pc_row_store, 2, integral_histogram_pixel_bytes);
                }
            });
        });
        add_loop("columns", true, [n, at](unsigned rank, unsigned threads) {
            const Range cols = static_block(n, threads, rank);
            if (cols.empty()) return Share{};
            return each(Range{1, n}, 1, [cols, at](std::uint64_t y, Emitter& e) {
                for (std::uint64_t x = cols.begin; x < cols.end; ++x) {
                    e.load(at(y - 1, x), pc_above, 1, integral_histogram_pixel_bytes);
                    e.load(at(y, x), pc_own, 0, integral_histogram_pixel_bytes);
                    e.store(at(y, x), pc_col_store, 1, integral_histogram_pixel_bytes);
                }
            });
        });
    }
};

}  // namespace

std::uint64_t integral_histogram_side(std::uint64_t histogram_bytes) {
    return static_cast<std::uint64_t>(
        std::sqrt(static_cast<double>(histogram_bytes / integral_histogram_pixel_bytes)));
}

std::unique_ptr<Workload> make_integral_histogram(std::uint64_t histogram_bytes) {
    return std::make_unique<IntegralHistogram>(integral_histogram_side(histogram_bytes), histogram_bytes);
}

}  // namespace numaware::sim::memory::detail
