// heap/page_map.cpp — the radix tree from an address to its span, and the
// pool that span metadata comes from (mmap, never malloc).
//
// 48-bit addresses in 64 KiB engine pages: 2^32 pages, split into a static
// root of 2^16 leaf pointers (512 KiB of BSS, touched sparsely) and leaves of
// 2^16 entries (512 KiB each, mmap'd on first use, each covering 4 GiB).
#include <sys/mman.h>

#include <new>

#include "heap/internal.hpp"

namespace numaware::heap::detail {

Span** g_page_root[kRootEntries];

namespace {
Span* g_span_free = nullptr;     // recycled Span records, guarded by meta_lock
char* g_meta_bump = nullptr;
char* g_meta_end = nullptr;
constexpr std::size_t kMetaSlab = std::size_t{1} << 20;

Span** leaf_for(std::uintptr_t page) noexcept {
    Span**& slot = g_page_root[page >> kLeafBits];
    Span** leaf = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
    if (leaf != nullptr) return leaf;
    LockGuard g(g_engine.meta_lock);
    leaf = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
    if (leaf != nullptr) return leaf;
    void* m = ::mmap(nullptr, kLeafEntries * sizeof(Span*), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    leaf = static_cast<Span**>(m);
    __atomic_store_n(&slot, leaf, __ATOMIC_RELEASE);
    return leaf;
}
}  // namespace

bool page_map_set(const void* start, std::size_t bytes, Span* s) noexcept {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(start) >> kPageShift;
    const std::uintptr_t last = (reinterpret_cast<std::uintptr_t>(start) + bytes - 1) >> kPageShift;
    if (last >= kRootEntries * kLeafEntries) return false;
    for (std::uintptr_t p = first; p <= last; ++p) {
        Span** leaf = leaf_for(p);
        if (leaf == nullptr) return false;
        __atomic_store_n(&leaf[p & (kLeafEntries - 1)], s, __ATOMIC_RELEASE);
    }
    return true;
}

Span* span_new() noexcept {
    LockGuard g(g_engine.meta_lock);
    Span* s = g_span_free;
    if (s != nullptr) {
        g_span_free = s->next;
    } else {
        if (g_meta_bump == nullptr || g_meta_end - g_meta_bump < static_cast<std::ptrdiff_t>(sizeof(Span))) {
            void* m = ::mmap(nullptr, kMetaSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return nullptr;
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
