// apps/cg/size.cpp — the size rules of cg, shared by its task
// program and its graph builder (the same Error fields and messages).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "apps/cg/cg.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::cg {
namespace {

constexpr std::size_t max_side = 512;
constexpr unsigned max_iterations = 100000;

}  // namespace

AppSize checked_size(const AppSize& given, std::size_t /*page_bytes: blocks are page-padded, not checked*/) {
    const AppSize size = resolve(given, test_size);
    if (size.n < 2 || size.n > max_side) {
        throw Error("n", fmt::format("grid side must be in [2, {}], got {}", max_side, size.n));
    }
    if (size.block < 1 || size.block > size.n || size.n % size.block != 0) {
        throw Error("block", fmt::format("planes per block must divide the grid side {}, got {}", size.n, size.block));
    }
    if (size.iterations < 1 || size.iterations > max_iterations) {
        throw Error("iterations", fmt::format("must be in [1, {}], got {}", max_iterations, size.iterations));
    }
    return size;
}

}  // namespace numaware::apps::cg
