// util/coarse_clock.hpp — a monotonic clock of a few milliseconds'
// resolution (CLOCK_MONOTONIC_COARSE) that costs no system call: for ages
// measured in milliseconds on a hot path (the heap's cached extents, the
// task runtime's remembered page homes). Header-only, no dependencies.
#pragma once

#include <time.h>

#include <cstdint>

namespace numaware {

inline std::uint64_t coarse_now_ns() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace numaware
