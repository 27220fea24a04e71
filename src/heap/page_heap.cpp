// heap/page_heap.cpp — per-arena page heap of small-block spans, and the
// bound mappings every arena's memory comes from.
//
// An arena gets memory in 8 MiB chunks (kChunkBytes), each bound to the
// arena's node and verified (placement's bind_range_to_node) before any
// block is carved from it. Spans are carved from the current chunk in
// 64 KiB engine pages; free spans wait in lists by page count and are reused
// whole or split. There is no coalescing: span sizes come from a small set
// (size_classes.hpp), so exact and split reuse covers the common cases.
//
// Release policy: an arena keeps up to kRetainBytes (16 MiB) of free spans
// whose pages are touched; every span freed beyond that is handed back with
// madvise(MADV_DONTNEED). The range keeps its bind policy, so a later reuse
// refaults its pages on the same node.
//
// Large blocks (above kMaxSmall = 256 KiB) live in large_cache.cpp; their
// regions come from map_bound here.
#include <sys/mman.h>

#include <cerrno>

#include "heap/internal.hpp"
#include "os/os.hpp"
#include "placement/bind_chunk.hpp"

namespace numaware::heap::detail {

void unmap(void* p, std::size_t bytes) noexcept {
    unpoison(p, bytes);   // the address range may be mapped again by anyone
    (void)os::sys::unmap(p, bytes);
}

namespace {

// Binds a fresh mapping to `node` and proves it; 0 or an errno. A refused
// binding (EPERM, ENOSYS) counts as done on one node, and on several in
// the drop-in malloc's engine (NUMAWARE_HEAP_FIRST_TOUCH_WHEN_REFUSED): the
// mapping is kept as it is, unbound or bound but unproven.
int bind_to_node(void* p, std::size_t bytes, unsigned node) noexcept {
    // The os layer may allocate inside mbind; tl_busy sends such reentrant
    // allocations to the bootstrap region instead of our held locks.
    const bool was = tl_busy;
    tl_busy = true;
    const int err = bind_range_to_node(p, bytes, node, *g_engine.os, nullptr);
    tl_busy = was;
    if (err != ENOSYS && err != EPERM) return err;
    // A kernel without NUMA support cannot misplace pages on a one-node
    // machine; anywhere else an unbound chunk would break the promise,
    // unless the caller chose first touch over failing (the drop-in malloc).
    if (g_engine.nodes == 1) return 0;
#if defined(NUMAWARE_HEAP_FIRST_TOUCH_WHEN_REFUSED)
    if (!g_engine.refusal_noticed.exchange(true, std::memory_order_relaxed)) binding_refused_notice(err);
    return 0;
#else
    return err;
#endif
}

}  // namespace

void* map_bound(std::size_t bytes, std::size_t alignment, unsigned node) noexcept {
    void* m = nullptr;
    if (os::sys::map_anonymous_aligned(bytes, alignment, m) != 0) return nullptr;
    if (bind_to_node(m, bytes, node) != 0) {
        unmap(m, bytes);
        return nullptr;
    }
    return m;
}

namespace {

Span* make_span(Arena& a, char* start, unsigned pages, bool released) noexcept {
    Span* s = span_new();
    if (s == nullptr) return nullptr;
    s->arena = a.id;
    s->start = start;
    s->bytes = std::size_t{pages} * kPageBytes;
    s->released = released;
    if (!page_map_set(start, s->bytes, s)) {
        span_delete(s);
        return nullptr;
    }
    return s;
}

void push_free(Arena& a, Span* s) noexcept {
    const unsigned pages = static_cast<unsigned>(s->bytes / kPageBytes);
    s->next = a.free_spans[pages];
    a.free_spans[pages] = s;
}

// A free span leaves the page heap: account for pages that come back.
Span* reuse(Arena& a, Span* s) noexcept {
    if (s->released) a.mapped_bytes.fetch_add(static_cast<std::int64_t>(s->bytes), std::memory_order_relaxed);
    else a.free_touched_bytes -= s->bytes;
    s->released = false;
    return s;
}

NW_NOINLINE bool grow(Arena& a) noexcept {
    // The tail of the old chunk was never touched: a released free span.
    if (a.chunk_bump != nullptr && a.chunk_end > a.chunk_bump) {
        const unsigned tail = static_cast<unsigned>((a.chunk_end - a.chunk_bump) / static_cast<std::ptrdiff_t>(kPageBytes));
        if (Span* t = make_span(a, a.chunk_bump, tail, true)) push_free(a, t);
    }
    a.chunk_bump = a.chunk_end = nullptr;
    // Aligned to 2 MiB so transparent huge pages can back whole chunks.
    void* m = map_bound(kChunkBytes, kHugePage, a.node);
    if (m == nullptr) return false;
    a.chunk_bump = static_cast<char*>(m);
    a.chunk_end = a.chunk_bump + kChunkBytes;
    return true;
}

}  // namespace

Span* page_heap_take(Arena& a, unsigned pages) noexcept {
    NW_DEBUG_ASSERT(pages >= 1 && pages <= kChunkPages);
    LockGuard g(a.heap_lock);
    if (Span* s = a.free_spans[pages]) {
        a.free_spans[pages] = s->next;
        return reuse(a, s);
    }
    const std::size_t want = std::size_t{pages} * kPageBytes;
    if (a.chunk_bump == nullptr || static_cast<std::size_t>(a.chunk_end - a.chunk_bump) < want) {
        // Split a larger free span before mapping more.
        for (unsigned m = pages + 1; m <= kChunkPages; ++m) {
            Span* big = a.free_spans[m];
            if (big == nullptr) continue;
            Span* rest = make_span(a, big->start + want, m - pages, big->released);
            if (rest == nullptr) return nullptr;
            a.free_spans[m] = big->next;
            if (!big->released) {
                // Only the taken part leaves the touched pool.
                a.free_touched_bytes -= want;
                big->bytes = want;
                push_free(a, rest);
                return big;
            }
            big->bytes = want;
            push_free(a, rest);
            return reuse(a, big);
        }
        if (!grow(a)) return nullptr;
    }
    Span* s = make_span(a, a.chunk_bump, pages, false);
    if (s == nullptr) return nullptr;
    a.chunk_bump += want;
    a.mapped_bytes.fetch_add(static_cast<std::int64_t>(want), std::memory_order_relaxed);
    return s;
}

void page_heap_give(Arena& a, Span* s) noexcept {
    NW_DEBUG_ASSERT(s->live == 0 && !s->large && !s->cached && s->arena == a.id);
    __atomic_store_n(&s->cache_key, kSpanNoKey, __ATOMIC_RELAXED);
    page_map_mark(s, 0, 0);
    s->cls = 0;
    s->free = nullptr;
    s->bump = nullptr;
    s->live = s->capacity = 0;
    s->in_list = false;
    s->prev = nullptr;
    LockGuard g(a.heap_lock);
    if (a.free_touched_bytes + s->bytes > kRetainBytes &&
        g_engine.os->madvise(s->start, s->bytes, MADV_DONTNEED) == 0) {
        s->released = true;
        a.mapped_bytes.fetch_sub(static_cast<std::int64_t>(s->bytes), std::memory_order_relaxed);
    } else {
        s->released = false;
        a.free_touched_bytes += s->bytes;
    }
    push_free(a, s);
}

std::size_t page_heap_release(Arena& a) noexcept {
    LockGuard g(a.heap_lock);
    std::size_t released = 0;
    for (unsigned pages = 1; pages <= kChunkPages; ++pages)
        for (Span* s = a.free_spans[pages]; s != nullptr; s = s->next) {
            if (s->released || g_engine.os->madvise(s->start, s->bytes, MADV_DONTNEED) != 0) continue;
            s->released = true;
            a.free_touched_bytes -= s->bytes;
            a.mapped_bytes.fetch_sub(static_cast<std::int64_t>(s->bytes), std::memory_order_relaxed);
            released += s->bytes;
        }
    return released;
}

}  // namespace numaware::heap::detail
