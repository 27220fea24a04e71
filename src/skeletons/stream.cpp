// skeletons/stream.cpp — non-temporal row stores for the double-buffered
// update loops: a written row goes to memory without first being read into
// the cache (saves the read-for-ownership, a third of a Jacobi sweep's
// traffic). The update loops hand over whole cache lines; a line written
// partly by ordinary stores would be read first, so heads and tails exist
// only for callers that pass unaligned pieces.
#include <cstdint>

#include "numaware/stencil.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace numaware::stencil::detail {

namespace {

#if defined(__x86_64__)
// One full cache line per instruction where the CPU has AVX-512; chosen at
// run time, the library itself is built for the x86-64 baseline.
__attribute__((target("avx512f"))) void stream_lines_avx512(double* dst, const double* src, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; i += 8) _mm512_stream_pd(dst + i, _mm512_loadu_pd(src + i));
}
const bool has_avx512 = __builtin_cpu_supports("avx512f");
#endif

}  // namespace

void stream_store(double* dst, const double* src, std::size_t n) noexcept {
#if defined(__SSE2__)
    std::size_t i = 0;
    // Scalar head up to a 16-byte boundary (doubles are 8-byte aligned, so
    // at most one).
    while (i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15U) != 0) {
        dst[i] = src[i];
        ++i;
    }
#if defined(__x86_64__)
    if (has_avx512 && (reinterpret_cast<std::uintptr_t>(dst + i) & 63U) == 0) {
        const std::size_t lines = (n - i) / 8 * 8;
        stream_lines_avx512(dst + i, src + i, lines);
        i += lines;
    }
#endif
    for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
    for (; i < n; ++i) dst[i] = src[i];   // scalar tail
#else
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
#endif
}

void stream_fence() noexcept {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

}  // namespace numaware::stencil::detail
