// apps/red_black/size.cpp — the size rules of red-black, shared by its task
// program and its graph builder (the same Error fields and messages).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "apps/red_black/red_black.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::red_black {
namespace {

constexpr std::size_t max_side = 32768;
constexpr unsigned max_iterations = 100000;

}  // namespace

AppSize checked_size(const AppSize& given, std::size_t page_bytes) {
    const AppSize s = resolve(given, test_size);
    if (s.n < 4 || s.n > max_side || s.n % 2 != 0)
        throw Error("n", fmt::format("grid side must be even and in 4..{}, got {}", max_side, s.n));
    if (s.block > s.n || s.n % s.block != 0)
        throw Error("block", fmt::format("rows per block must divide the grid side {}, got {}", s.n, s.block));
    require_page_multiple(s.block * (s.n / 2) * sizeof(double), page_bytes, "block",
                          "a block of " + std::to_string(s.block) + " rows of one colour");
    if (s.iterations > max_iterations)
        throw Error("iterations", fmt::format("must be at most {}, got {}", max_iterations, s.iterations));
    return s;
}

}  // namespace numaware::apps::red_black
