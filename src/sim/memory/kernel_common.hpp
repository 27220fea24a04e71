// sim/memory/kernel_common.hpp — what every family of built-in kernels
// (the NAS kernels, the Rodinia-like kernels) shares: their size checks,
// class letters and seeded draws.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "numaware/error.hpp"

namespace numaware::sim::memory::detail {

// Error("workload", ...) naming the kernel and the limit unless `ok`.
inline void require(bool ok, const std::string& kernel, std::string_view limit) {
    if (!ok) throw Error("workload", fmt::format("'{}': {}", kernel, limit));
}

inline bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

inline unsigned log2_of(std::uint64_t pow2) {
    unsigned l = 0;
    while ((std::uint64_t{1} << l) < pow2) ++l;
    return l;
}

// The class letter of "NAME:SIZE": `size` must be one of `letters` (in
// increasing size, S the tiny one); `fallback` when the spec has no
// ":SIZE". Error("workload", ...) listing the letters otherwise, e.g.
// "'cg:Q': SIZE must be a class letter, S (tiny), W or A (the default), got 'Q'".
inline char class_letter(std::string_view spec, std::string_view letters, char fallback) {
    const std::size_t colon = spec.find(':');
    if (colon == std::string_view::npos) return fallback;
    const std::string_view size = spec.substr(colon + 1);
    if (size.size() == 1 && letters.find(size[0]) != std::string_view::npos) return size[0];
    std::string list;
    for (std::size_t i = 0; i < letters.size(); ++i) {
        if (i != 0) list += i + 1 == letters.size() ? " or " : ", ";
        list += letters[i];
        if (letters[i] == 'S') list += " (tiny)";
        if (letters[i] == fallback) list += " (the default)";
    }
    throw Error("workload", fmt::format("'{}': SIZE must be a class letter, {}, got '{}'", spec, list, size));
}

// A draw in [0, n) from a seeded generator whose sequence the standard
// fixes (std::uniform_int_distribution's is the library's own, so it is
// not used: the same seed gives the same workload everywhere). The modulo
// bias is below n / 2^64.
inline std::uint64_t draw_below(std::mt19937_64& rng, std::uint64_t n) { return rng() % n; }
// A draw in [0, 1).
inline double draw_unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace numaware::sim::memory::detail
