// apps/gauss_seidel/size.cpp — the size rules of gauss-seidel, shared by its task
// program and its graph builder (the same Error fields and messages).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "apps/gauss_seidel/gauss_seidel.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::gauss_seidel {
namespace {

constexpr std::size_t max_side = 32768;
constexpr unsigned max_iterations = 100000;

}  // namespace

AppSize checked_size(const AppSize& given, std::size_t page_bytes) {
    const AppSize s = resolve(given, test_size);
    if (s.n < 3 || s.n > max_side)
        throw Error("n", fmt::format("grid side must be in 3..{}, got {}", max_side, s.n));
    if (s.block < 2 || s.block > s.n || s.n % s.block != 0)
        throw Error("block", fmt::format("tile side must be at least 2 and divide the grid side {}, got {}", s.n,
                                         s.block));
    require_page_multiple(s.block * s.block * sizeof(double), page_bytes, "block",
                          fmt::format("a {0}x{0} tile", s.block));
    if (s.iterations > max_iterations)
        throw Error("iterations", fmt::format("must be at most {}, got {}", max_iterations, s.iterations));
    return s;
}

}  // namespace numaware::apps::gauss_seidel
