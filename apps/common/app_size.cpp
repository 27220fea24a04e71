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

std::string_view halos_name(Halos halos) { return halos == Halos::rows ? "rows" : "whole-blocks"; }

Halos parse_halos(std::string_view text, std::string_view field) {
    if (text == "rows") return Halos::rows;
    if (text == "whole-blocks") return Halos::whole_blocks;
    throw Error(std::string(field), fmt::format("expected 'rows' or 'whole-blocks', got '{}'", text));
}

RowBlockParts row_block_parts(std::size_t rows, std::size_t row_elems, Halos halos) {
    RowBlockParts p;
    if (halos == Halos::whole_blocks || rows == 1) {
        p.part[0] = {0, rows * row_elems};
        p.count = 1;
        return p;
    }
    p.part[p.count++] = {0, row_elems};
    if (rows > 2) p.part[p.count++] = {row_elems, (rows - 2) * row_elems};
    p.part[p.count++] = {(rows - 1) * row_elems, row_elems};
    p.bottom = p.count - 1;
    return p;
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
