// apps/nstream/reference.hpp — what NStream's tasks and its serial
// reference share: the input values and the per-element arithmetic
// (a[j] += b[j] + scalar * c[j]), and the reference itself (reference.cpp).
#pragma once

#include <cstddef>
#include <vector>

namespace numaware::apps::nstream {

inline constexpr double scalar = 3.0;

inline double b_value(std::size_t j) { return 1.0 + static_cast<double>(j % 7) * 0.25; }
inline double c_value(std::size_t j) { return 2.0 - static_cast<double>(j % 5) * 0.125; }
inline double a_value(std::size_t j) { return static_cast<double>(j % 3); }

// Initialises elements [begin, end) of one stream (j is the index inside the stream).
inline void init_block(double* a, double* b, double* c, std::size_t begin, std::size_t end) {
    for (std::size_t j = begin; j < end; ++j) {
        a[j] = a_value(j);
        b[j] = b_value(j);
        c[j] = c_value(j);
    }
}

inline void triad(double* a, const double* b, const double* c, std::size_t begin, std::size_t end) {
    for (std::size_t j = begin; j < end; ++j) a[j] += b[j] + scalar * c[j];
}

// One stream's arrays.
struct StreamArrays {
    std::vector<double> a, b, c;
};

// One stream of n elements after `iterations` triads, computed serially
// with the same per-element arithmetic as the tasks (every stream is the
// same).
StreamArrays reference(std::size_t n, unsigned iterations);

}  // namespace numaware::apps::nstream
