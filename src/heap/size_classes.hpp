// heap/size_classes.hpp — which block size serves a request.
//
// Classes: 16 B steps up to 256 B (16 classes), then 8 classes per power of
// two (12.5% steps) up to kMaxSmall = 256 KiB (80 classes). Class 0 means
// "not a small block" (large, or a free span). Every class size is a
// multiple of 16, and every power of two is a class, so a block whose span
// starts on a 64 KiB boundary is aligned to the largest power of two that
// divides its class size (allocate_aligned relies on that).
//
// A span of a class is one run of 64 KiB engine pages: 64 KiB for classes up
// to 8 KiB (at least 8 blocks), otherwise the smallest multiple of 64 KiB
// holding 8 blocks (at most 2 MiB for 256 KiB blocks).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace numaware::heap {

inline constexpr std::size_t kPageShift = 16;                  // engine page: 64 KiB
inline constexpr std::size_t kPageBytes = std::size_t{1} << kPageShift;
inline constexpr std::size_t kMaxSmall = std::size_t{256} << 10;
inline constexpr unsigned kClassCount = 97;                    // including class 0

struct SizeClassTable {
    std::array<std::uint32_t, kClassCount> size{};
    std::array<std::uint32_t, kClassCount> span_pages{};   // engine pages per span
    std::array<std::uint32_t, kClassCount> batch{};        // blocks moved per cache refill/release
    std::array<std::uint8_t, 65> by_16{};                  // (n + 15) >> 4 for n <= 1024
    std::array<std::uint8_t, 2049> by_128{};               // (n + 127) >> 7 for 1024 < n <= kMaxSmall
};

consteval SizeClassTable make_size_classes() {
    SizeClassTable t;
    unsigned c = 1;
    for (std::uint32_t s = 16; s <= 256; s += 16) t.size[c++] = s;
    for (std::uint32_t base = 256; base < kMaxSmall; base *= 2)
        for (std::uint32_t k = 1; k <= 8; ++k) t.size[c++] = base + k * (base / 8);
    for (unsigned i = 1; i < kClassCount; ++i) {
        const std::size_t s = t.size[i];
        const std::size_t span = s <= 8192 ? kPageBytes : (s * 8 + kPageBytes - 1) / kPageBytes * kPageBytes;
        t.span_pages[i] = static_cast<std::uint32_t>(span / kPageBytes);
        // 32 KiB a batch, and never fewer than 8 blocks: with 16 KiB and 1
        // block, two threads of one node allocating random sizes to 4 KiB
        // spent 64% of their time in the central lists (BENCHMARKS.md,
        // "mixed"); a thread caches at most two batches per class.
        const std::size_t b = 32768 / s;
        t.batch[i] = static_cast<std::uint32_t>(b < 8 ? 8 : (b > 64 ? 64 : b));
    }
    unsigned k = 1;
    for (unsigned i = 0; i <= 64; ++i) {
        while (t.size[k] < i * 16u) ++k;
        t.by_16[i] = static_cast<std::uint8_t>(k);
    }
    k = 1;
    for (unsigned i = 0; i <= 2048; ++i) {
        while (t.size[k] < i * 128u) ++k;
        t.by_128[i] = static_cast<std::uint8_t>(k);
    }
    return t;
}

inline constexpr SizeClassTable kClasses = make_size_classes();
static_assert(kClasses.size[kClassCount - 1] == kMaxSmall);
static_assert(kClasses.size[16] == 256 && kClasses.size[17] == 288);

// The class for n bytes (n <= kMaxSmall): two table reads, no loop, because
// it sits on every malloc.
inline unsigned size_class_of(std::size_t n) noexcept {
    return n <= 1024 ? kClasses.by_16[(n + 15) >> 4] : kClasses.by_128[(n + 127) >> 7];
}

}  // namespace numaware::heap
