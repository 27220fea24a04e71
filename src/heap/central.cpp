// heap/central.cpp — the central free list of one arena and size class.
//
// It holds the arena's spans of that class that still have a free block.
// Thread caches fetch and return blocks in batches under the list's lock;
// a free from a thread of another node returns its block here directly, so
// a block only ever goes back to the arena that owns its page.
#include "heap/internal.hpp"

namespace numaware::heap::detail {

namespace {

void link(CentralList& c, Span* s) noexcept {
    s->prev = nullptr;
    s->next = c.nonfull;
    if (c.nonfull != nullptr) c.nonfull->prev = s;
    c.nonfull = s;
    s->in_list = true;
}

void unlink(CentralList& c, Span* s) noexcept {
    if (s->prev != nullptr) s->prev->next = s->next;
    else c.nonfull = s->next;
    if (s->next != nullptr) s->next->prev = s->prev;
    s->next = s->prev = nullptr;
    s->in_list = false;
}

NW_NOINLINE Span* new_span(Arena& a, unsigned cls) noexcept {
    Span* s = page_heap_take(a, kClasses.span_pages[cls]);
    if (s == nullptr) return nullptr;
    s->cls = static_cast<std::uint8_t>(cls);
    s->bump = s->start;
    s->free = nullptr;
    s->live = 0;
    s->capacity = static_cast<std::uint32_t>(s->bytes / kClasses.size[cls]);
    // Published last: the free fast path compares the page-map tag.
    __atomic_store_n(&s->cache_key, std::uint32_t{a.id}, __ATOMIC_RELEASE);
    page_map_mark(s, cls, entry_tag(a.id));
    return s;
}

}  // namespace

unsigned central_fetch(Arena& a, unsigned cls, unsigned want, FreeBlock** head) noexcept {
    CentralList& c = a.central[cls];
    const std::size_t size = kClasses.size[cls];
    FreeBlock* list = nullptr;
    unsigned got = 0;
    {
        LockGuard g(c.lock);
        while (got < want) {
            Span* s = c.nonfull;
            if (s == nullptr) {
                s = new_span(a, cls);
                if (s == nullptr) break;
                link(c, s);
            }
            while (got < want && s->live < s->capacity) {
                FreeBlock* b = s->free;
                if (b != nullptr) {
                    s->free = b->next;
                } else {
                    // Relaxed atomic: block_info reads bump without the lock.
                    b = reinterpret_cast<FreeBlock*>(s->bump);
                    __atomic_store_n(&s->bump, s->bump + size, __ATOMIC_RELAXED);
                }
                b->next = list;
                list = b;
                ++s->live;
                ++got;
            }
            if (s->live == s->capacity) unlink(c, s);
        }
    }
    a.out_bytes.fetch_add(static_cast<std::int64_t>(got * size), std::memory_order_relaxed);
    *head = list;
    return got;
}

void central_return(Arena& a, unsigned cls, FreeBlock* list, unsigned n) noexcept {
    CentralList& c = a.central[cls];
    {
        LockGuard g(c.lock);
        while (list != nullptr) {
            FreeBlock* b = list;
            list = list->next;
            Span* s = span_of(b);
            NW_HEAP_ASSERT(s != nullptr && s->cls == cls && s->arena == a.id);
            b->next = s->free;
            s->free = b;
            --s->live;
            if (!s->in_list) link(c, s);
            // An empty span goes back to the page heap unless it is the only
            // one left: keeping one avoids mapping churn at a batch boundary.
            if (s->live == 0 && (s->next != nullptr || s->prev != nullptr)) {
                unlink(c, s);
                page_heap_give(a, s);
            }
        }
    }
    a.out_bytes.fetch_sub(static_cast<std::int64_t>(std::size_t{n} * kClasses.size[cls]), std::memory_order_relaxed);
}

}  // namespace numaware::heap::detail
