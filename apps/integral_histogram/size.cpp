// apps/integral_histogram/size.cpp — the size rules of integral-histogram, shared by its task
// program and its graph builder (the same Error fields and messages).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "apps/integral_histogram/integral_histogram.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::integral_histogram {
namespace {

constexpr std::size_t max_side = 8192;
constexpr unsigned max_bins = 256;
constexpr std::size_t max_hist_bytes = std::size_t{4} << 30;

}  // namespace

AppSize checked_size(const AppSize& given, std::size_t /*page_bytes: blocks are page-padded, not checked*/) {
    const AppSize size = resolve(given, test_size);
    if (size.n < 1 || size.n > max_side) {
        throw Error("n", fmt::format("image side must be in [1, {}], got {}", max_side, size.n));
    }
    if (size.block < 1 || size.block > size.n || size.n % size.block != 0) {
        throw Error("block", fmt::format("tile side must divide the image side {}, got {}", size.n, size.block));
    }
    if (size.iterations < 1 || size.iterations > max_bins) {
        throw Error("iterations", fmt::format("number of bins must be in [1, {}], got {}", max_bins, size.iterations));
    }
    if (size.n * size.n * size.iterations * sizeof(std::uint32_t) > max_hist_bytes) {
        throw Error("n", fmt::format("histogram of {0}x{0} pixels x {1} bins exceeds {2} GiB", size.n,
                                     size.iterations, max_hist_bytes >> 30));
    }
    return size;
}

}  // namespace numaware::apps::integral_histogram
