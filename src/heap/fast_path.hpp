// heap/fast_path.hpp — malloc's and free's fast paths, inline so the malloc
// shim compiles them into malloc/free themselves (no call, no spills).
// engine.hpp's allocate_local/deallocate are these same functions out of
// line.
#pragma once

#include "heap/internal.hpp"

namespace numaware::heap::detail {

void* allocate_large_local(std::size_t bytes, std::size_t alignment) noexcept;

inline void* fast_allocate_local(std::size_t bytes) noexcept {
    // size_class_of's two tables, small sizes first (the common case).
    unsigned cls;
    if (NW_LIKELY(bytes <= 1024)) cls = kClasses.by_16[(bytes + 15) >> 4];
    else if (NW_LIKELY(bytes <= kMaxSmall)) cls = kClasses.by_128[(bytes + 127) >> 7];
    else return allocate_large_local(bytes, kPageBytes);
    ThreadCache& tc = this_cache();
    // Moved to another CPU, or no cache yet (cpu_word then points to a
    // word no CPU id equals): let the slow path pick the arena.
    if (NW_UNLIKELY(*tc.cpu_word != tc.cpu)) return local_slow(cls);
    FreeBlock* f = bin_pop(tc.bins[cls]);
    if (NW_UNLIKELY(f == nullptr)) return local_slow(cls);
    return f;
}

inline void fast_deallocate(void* p) noexcept {
    const PageEntry e = page_entry(p);
    ThreadCache& tc = this_cache();
    // One comparison of the page-map entry's tag covers "not ours",
    // "large", "free span" and "other arena": those entries' tags never
    // equal a live cache's tag; the span itself is not loaded.
    if (NW_LIKELY((e >> kEntryTagShift) == tc.map_tag)) {
        // class << 4 straight from the entry: the bin's byte offset.
        const std::size_t offset = static_cast<std::size_t>(e >> (kEntryClassShift - 4)) & (std::size_t{0x7f} << 4);
        Bin& b = *reinterpret_cast<Bin*>(reinterpret_cast<char*>(tc.bins) + offset);
        auto* f = static_cast<FreeBlock*>(p);
        if constexpr (kPoison) {
            check_not_free(p);
            poison_free_block(p, kClasses.size[offset >> 4]);
        }
        f->next = b.head;
        b.head = f;
        const std::uint32_t count = b.count + 1;   // a local: no reload after the atomic store
        set_count(b, count);
        if (NW_UNLIKELY(count > b.limit)) cache_release(tc, static_cast<unsigned>(offset / sizeof(Bin)));
        return;
    }
    free_slow(p, entry_span(e));
}

}  // namespace numaware::heap::detail
