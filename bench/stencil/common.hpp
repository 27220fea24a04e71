// bench/stencil/common.hpp — what the two subcommands of
// numaware_bench_stencil share: the update functions (one per
// neighbourhood), the initial values, and small readers of /proc.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include "numaware/stencil.hpp"

namespace nwbench {

using numaware::stencil::Access;

// A deterministic hash of a cell's coordinates (splitmix64 finaliser).
inline std::uint64_t cell_hash(std::size_t x, std::size_t y, std::size_t z) {
    std::uint64_t h = x * 0x9E3779B97F4A7C15ULL ^ (y + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL ^
                      (z + 0x165667B19E3779F9ULL) * 0xD6E8FEB86659FD93ULL;
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return h;
}

// Initial grid: the x == 0 face is 1.0, every other cell a hash of its
// coordinates scaled to [0, 1) in steps of 2^-16 (exact in a double).
inline double init_value(std::size_t x, std::size_t y, std::size_t z) {
    if (x == 0) return 1.0;
    return static_cast<double>(cell_hash(x, y, z) & 0xFFFFU) / 65536.0;
}

// ---- update functions, one per neighbourhood -----------------------
// The serial references, the skeleton and the OpenMP peers all call (or
// spell out) exactly these expressions, in this order, so results agree
// bit for bit.

// 2-D 5-point: the mean of the four axis neighbours.
struct Update5 {
    double operator()(const Access& a) const noexcept { return 0.25 * (a(-1, 0) + a(1, 0) + a(0, -1) + a(0, 1)); }
};

// 2-D 9-point: axis neighbours weight 4, diagonal neighbours weight 1, / 20.
struct Update9 {
    double operator()(const Access& a) const noexcept {
        return (4.0 * (a(-1, 0) + a(1, 0) + a(0, -1) + a(0, 1)) + (a(-1, -1) + a(1, -1) + a(-1, 1) + a(1, 1))) / 20.0;
    }
};

// 3-D 7-point: the mean of the six face neighbours.
struct Update7 {
    double operator()(const Access& a) const noexcept {
        return (a(-1, 0, 0) + a(1, 0, 0) + a(0, -1, 0) + a(0, 1, 0) + a(0, 0, -1) + a(0, 0, 1)) / 6.0;
    }
};

// 3-D 27-point: centre 8, faces 4, edges 2, corners 1; weights sum to 64.
struct Update27 {
    double operator()(const Access& a) const noexcept {
        double s = 8.0 * a.centre();
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int far = (dx != 0) + (dy != 0) + (dz != 0);
                    if (far == 0) continue;
                    s += (far == 1 ? 4.0 : far == 2 ? 2.0 : 1.0) * a(dx, dy, dz);
                }
        return s / 64.0;
    }
};

// Variable neighbourhood (bound: box of radius 2): the cell's own bits
// choose an offset d with every component in [-2, 2]; the new value is
// half the centre plus a quarter of the cells at +d and -d.
struct UpdateVariable {
    unsigned dims = 3;
    double operator()(const Access& a) const noexcept {
        const double c = a.centre();
        const auto bits = std::bit_cast<std::uint64_t>(c);
        const auto k = static_cast<unsigned>((bits >> 30) ^ (bits >> 45));
        const int dx = static_cast<int>(k % 5U) - 2;
        const int dy = static_cast<int>((k / 5U) % 5U) - 2;
        const int dz = dims == 3 ? static_cast<int>((k / 25U) % 5U) - 2 : 0;
        return 0.5 * c + 0.25 * (a(dx, dy, dz) + a(-dx, -dy, -dz));
    }
};

// Walsh-Hadamard butterfly: the lower partner gets the sum, the upper the
// difference.
inline double walsh_hadamard(double self, double partner, std::size_t i, unsigned phase) {
    return (i >> phase) & 1U ? partner - self : self + partner;
}

// ---- small readers --------------------------------------------------

// /proc/sys/kernel/numa_balancing as an integer; -1 when absent or unreadable.
int read_numa_balancing();
// The first three fields of /proc/loadavg ("0.52 0.61 0.70"); "" if unreadable.
std::string read_loadavg();
// The CPU model name from /proc/cpuinfo; "" if unknown.
std::string cpu_model();
// Transparent huge pages setting, the bracketed word ("madvise"); "" if unknown.
std::string thp_setting();
// UTC time, ISO 8601.
std::string utc_now();

}  // namespace nwbench
