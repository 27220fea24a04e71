// apps/common/app_size.cpp — the size rules several applications share.
#include "apps/common/app_size.hpp"

#include <string>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::apps {

AppSize resolve(const AppSize& given, const AppSize& defaults) {
    AppSize s = given;
    if (s.n == 0) s.n = defaults.n;
    if (s.block == 0) s.block = defaults.block;
    if (s.iterations == 0) s.iterations = defaults.iterations;
    return s;
}

void require_page_multiple(std::size_t bytes, std::size_t page_bytes, std::string_view field,
                           std::string_view what) {
    if (bytes == 0 || bytes % page_bytes != 0) {
        throw Error(std::string(field), std::string(what) + " is " + std::to_string(bytes) +
                                            " bytes, must be a positive multiple of the page size " +
                                            std::to_string(page_bytes));
    }
}

void check_tiled_size(const AppSize& size, std::size_t max_n) {
    if (size.n < 1 || size.n > max_n) {
        throw Error("n", fmt::format("matrix order must be in [1, {}], got {}", max_n, size.n));
    }
    if (size.block < 1 || size.block > size.n || size.n % size.block != 0) {
        throw Error("block", fmt::format("tile side must divide the matrix order {}, got {}", size.n, size.block));
    }
}

}  // namespace numaware::apps
