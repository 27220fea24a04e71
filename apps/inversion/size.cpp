// apps/inversion/size.cpp — the size rules of inversion, shared by its task
// program and its graph builder (the same Error fields and messages).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "apps/inversion/inversion.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::inversion {
namespace {

constexpr std::size_t max_order = 8192;

}  // namespace

AppSize checked_size(const AppSize& given, std::size_t /*page_bytes: blocks are page-padded, not checked*/) {
    const AppSize s = resolve(given, test_size);
    check_tiled_size(s, max_order);
    return s;
}

}  // namespace numaware::apps::inversion
