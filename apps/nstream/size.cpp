// apps/nstream/size.cpp — the size rules of nstream, shared by its task
// program and its graph builder (the same Error fields and messages).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "apps/nstream/nstream.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::nstream {
namespace {

constexpr std::size_t max_elements = std::size_t{1} << 30;
constexpr unsigned max_iterations = 100000;

}  // namespace

AppSize checked_size(const AppSize& given, std::size_t page_bytes) {
    const AppSize s = resolve(given, test_size);
    if (s.n > max_elements)
        throw Error("n", fmt::format("elements per array must be at most {}, got {}", max_elements, s.n));
    if (s.block > s.n || s.n % s.block != 0)
        throw Error("block", fmt::format("elements per block must divide the array length {}, got {}", s.n, s.block));
    require_page_multiple(s.block * sizeof(double), page_bytes, "block",
                          "a block of " + std::to_string(s.block) + " doubles");
    if (s.iterations > max_iterations)
        throw Error("iterations", fmt::format("must be at most {}, got {}", max_iterations, s.iterations));
    return s;
}

}  // namespace numaware::apps::nstream
