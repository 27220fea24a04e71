// heap/poison.hpp — free memory poisoned for AddressSanitizer.
//
// In an AddressSanitizer build (the asan preset, a user's -fsanitize=address
// build of numaware) the engine tells ASan which of its bytes are free, as
// mimalloc does. A new small span and a new large region start poisoned; a
// small block not handed out (never carved, or freed) is poisoned but for
// its first word (the engine's free-list link), a free large extent
// entirely. A program that touches a freed block, or runs past its block
// into a free neighbour, gets ASan's report (use-after-poison); freeing a
// small block twice is reported and stops. A block is unpoisoned when it is
// handed out, a small span when it goes back to the page heap (its next
// class lays blocks out anew), and every range before it is unmapped. In
// every other build these are empty.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define NW_HEAP_POISON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NW_HEAP_POISON 1
#endif
#endif

#ifdef NW_HEAP_POISON
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <unistd.h>

#include <cstdint>
#endif

namespace numaware::heap::detail {

#ifdef NW_HEAP_POISON
inline constexpr bool kPoison = true;
inline void poison(const void* p, std::size_t bytes) noexcept { ASAN_POISON_MEMORY_REGION(p, bytes); }
inline void unpoison(const void* p, std::size_t bytes) noexcept { ASAN_UNPOISON_MEMORY_REGION(p, bytes); }
// A small block of `bytes` (>= 16) freed: all but its link word.
inline void poison_free_block(void* p, std::size_t bytes) noexcept {
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(p) + sizeof(void*), bytes - sizeof(void*));
}
// A small block freed while free already (poisoned past its link word):
// says so with the stack, without allocating, and stops.
inline void check_not_free(const void* p) noexcept {
    if (__asan_address_is_poisoned(static_cast<const char*>(p) + sizeof(void*)) == 0) return;
    char line[] = "numaware heap: block 0x0000000000000000 freed twice\n";
    constexpr std::size_t last_digit = sizeof("numaware heap: block 0x0000000000000000") - 2;
    auto v = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = 0; i < 16; ++i, v >>= 4) line[last_digit - i] = "0123456789abcdef"[v & 0xf];
    (void)!::write(2, line, sizeof line - 1);
    __sanitizer_print_stack_trace();
    __builtin_trap();
}
#else
inline constexpr bool kPoison = false;
inline void poison(const void*, std::size_t) noexcept {}
inline void unpoison(const void*, std::size_t) noexcept {}
inline void poison_free_block(void*, std::size_t) noexcept {}
inline void check_not_free(const void*) noexcept {}
#endif

}  // namespace numaware::heap::detail
