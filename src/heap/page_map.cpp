// heap/page_map.cpp — the radix tree from an address to its span, and the
// pool that span metadata comes from (mmap through the os core, never malloc).
//
// 48-bit addresses in 64 KiB engine pages: 2^32 pages, split into a static
// root of 2^16 leaf pointers (512 KiB of BSS, touched sparsely) and leaves of
// 2^16 entries (512 KiB each, mmap'd on first use, each covering 4 GiB).
#include <sys/mman.h>

#include <new>

#include "heap/internal.hpp"

namespace numaware::heap::detail {

PageEntry* g_page_root[kRootEntries];

namespace {
Span* g_span_free = nullptr;     // recycled Span records, guarded by meta_lock
char* g_meta_bump = nullptr;
char* g_meta_end = nullptr;
constexpr std::size_t kMetaSlab = std::size_t{1} << 20;

PageEntry* leaf_for(std::uintptr_t page) noexcept {
    PageEntry*& slot = g_page_root[page >> kLeafBits];
    PageEntry* leaf = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
    if (leaf != nullptr) return leaf;
    LockGuard g(g_engine.meta_lock);
    leaf = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
    if (leaf != nullptr) return leaf;
    void* m = nullptr;
    if (os::sys::map_anonymous(kLeafEntries * sizeof(PageEntry), m, MAP_NORESERVE) != 0) return nullptr;
    leaf = static_cast<PageEntry*>(m);
    __atomic_store_n(&slot, leaf, __ATOMIC_RELEASE);
    return leaf;
}
}  // namespace

bool page_map_set(const void* start, std::size_t bytes, Span* s) noexcept {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(start) >> kPageShift;
    const std::uintptr_t last = (reinterpret_cast<std::uintptr_t>(start) + bytes - 1) >> kPageShift;
    if (last >= kRootEntries * kLeafEntries) return false;
    const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(s);
    if (((addr >> 3) & ~kEntrySpanMask) != 0 || (addr & 7) != 0) return false;   // not encodable
    const PageEntry e = addr >> 3;
    for (std::uintptr_t p = first; p <= last; ++p) {
        PageEntry* leaf = leaf_for(p);
        if (leaf == nullptr) return false;
        __atomic_store_n(&leaf[p & (kLeafEntries - 1)], e, __ATOMIC_RELEASE);
    }
    return true;
}

void page_map_mark(const Span* s, unsigned cls, std::uint32_t tag) noexcept {
    const PageEntry e = (reinterpret_cast<std::uintptr_t>(s) >> 3) | (PageEntry{cls} << kEntryClassShift) |
                        (PageEntry{tag} << kEntryTagShift);
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(s->start) >> kPageShift;
    const std::uintptr_t last = (reinterpret_cast<std::uintptr_t>(s->start) + s->bytes - 1) >> kPageShift;
    for (std::uintptr_t p = first; p <= last; ++p) {
        // The leaves exist: page_map_set mapped these pages to s.
        PageEntry* leaf = __atomic_load_n(&g_page_root[p >> kLeafBits], __ATOMIC_ACQUIRE);
        NW_DEBUG_ASSERT(leaf != nullptr && entry_span(__atomic_load_n(&leaf[p & (kLeafEntries - 1)], __ATOMIC_RELAXED)) == s);
        __atomic_store_n(&leaf[p & (kLeafEntries - 1)], e, __ATOMIC_RELEASE);
    }
}

Span* span_new() noexcept {
    LockGuard g(g_engine.meta_lock);
    Span* s = g_span_free;
    if (s != nullptr) {
        g_span_free = s->next;
    } else {
        if (g_meta_bump == nullptr || g_meta_end - g_meta_bump < static_cast<std::ptrdiff_t>(sizeof(Span))) {
            void* m = nullptr;
            if (os::sys::map_anonymous(kMetaSlab, m) != 0) return nullptr;
            g_meta_bump = static_cast<char*>(m);
            g_meta_end = g_meta_bump + kMetaSlab;
        }
        s = reinterpret_cast<Span*>(g_meta_bump);
        g_meta_bump += sizeof(Span);
    }
    return new (s) Span{};
}

void span_delete(Span* s) noexcept {
    LockGuard g(g_engine.meta_lock);
    s->next = g_span_free;
    g_span_free = s;
}

}  // namespace numaware::heap::detail
