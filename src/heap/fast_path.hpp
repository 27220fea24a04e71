// heap/fast_path.hpp — malloc's and free's fast paths, inline so the malloc
// shim compiles them into malloc/free themselves (no call, no spills).
// engine.hpp's allocate_local/deallocate are these same functions out of
// line.
#pragma once

#include "heap/internal.hpp"

namespace numaware::heap::detail {

void* allocate_large_local(std::size_t bytes, std::size_t alignment) noexcept;

inline void* fast_allocate_local(std::size_t bytes) noexcept {
    if (NW_UNLIKELY(bytes > kMaxSmall)) return allocate_large_local(bytes, kPageBytes);
    const unsigned cls = size_class_of(bytes);
    ThreadCache& tc = tl_cache;
    // Moved to another CPU, or no cache yet (cpu_word then points to a
    // word no CPU id equals): let the slow path pick the arena.
    if (NW_UNLIKELY(*tc.cpu_word != tc.cpu)) return local_slow(cls);
    FreeBlock* f = bin_pop(tc.bins[cls]);
    if (NW_UNLIKELY(f == nullptr)) return local_slow(cls);
    return f;
}

inline void fast_deallocate(void* p) noexcept {
    Span* s = span_of(p);
    ThreadCache& tc = tl_cache;
    // One comparison covers "not ours", "large", "free span" and "other
    // arena": those spans' keys never equal a live cache's key.
    if (NW_LIKELY(s != nullptr && __atomic_load_n(&s->cache_key, __ATOMIC_RELAXED) == tc.key)) {
        const unsigned cls = s->cls;
        Bin& b = tc.bins[cls];
        auto* f = static_cast<FreeBlock*>(p);
        f->next = b.head;
        b.head = f;
        const std::uint32_t count = b.count + 1;   // a local: no reload after the atomic store
        set_count(b, count);
        if (NW_UNLIKELY(count > cache_limit(cls))) cache_release(tc, cls);
        return;
    }
    free_slow(p, s);
}

}  // namespace numaware::heap::detail
