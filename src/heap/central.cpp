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
    poison(s->start, s->bytes);   // every block free until carved
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
            NW_DEBUG_ASSERT(s->cls == cls && s->arena == a.id && s->live < s->capacity);
            while (got < want && s->live < s->capacity) {
                FreeBlock* b = s->free;
                if (b != nullptr) {
                    s->free = b->next;
                } else {
                    // Relaxed atomic: block_info reads bump without the lock.
                    b = reinterpret_cast<FreeBlock*>(s->bump);
                    __atomic_store_n(&s->bump, s->bump + size, __ATOMIC_RELAXED);
                    unpoison(b, sizeof(FreeBlock));   // a free block: its link word only
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
            // The block is this arena's, of this class, on a block boundary
            // of the part of its span ever handed out, and the span has it out.
            NW_DEBUG_ASSERT(s != nullptr && s->cls == cls && s->arena == a.id);
            NW_DEBUG_ASSERT(reinterpret_cast<char*>(b) < s->bump &&
                           (reinterpret_cast<char*>(b) - s->start) % kClasses.size[cls] == 0 && s->live > 0);
            b->next = s->free;
            s->free = b;
            --s->live;
            if (!s->in_list) link(c, s);
            // An empty span goes back to the page heap unless it is the only
            // one left: keeping one avoids mapping churn at a batch boundary.
            if (s->live == 0 && (s->next != nullptr || s->prev != nullptr)) {
                unlink(c, s);
                unpoison(s->start, s->bytes);   // its next class lays blocks out anew
                page_heap_give(a, s);
            }
        }
    }
    a.out_bytes.fetch_sub(static_cast<std::int64_t>(std::size_t{n} * kClasses.size[cls]), std::memory_order_relaxed);
}

bool central_check(Arena& a) noexcept {
    for (unsigned cls = 1; cls < kClassCount; ++cls) {
        CentralList& c = a.central[cls];
        LockGuard g(c.lock);
        const std::size_t size = kClasses.size[cls];
        for (Span* s = c.nonfull; s != nullptr; s = s->next) {
            // Span, class and page-map tag agree; the span is this arena's.
            if (s->cls != cls || s->arena != a.id || !s->in_list || s->live >= s->capacity) return false;
            if (s->prev != nullptr && s->prev->next != s) return false;
            const PageEntry e = page_entry(s->start);
            if (entry_span(e) != s || ((e >> kEntryClassShift) & 0x7f) != cls ||
                (e >> kEntryTagShift) != entry_tag(a.id) || __atomic_load_n(&s->cache_key, __ATOMIC_RELAXED) != a.id)
                return false;
            // Free blocks lie in the handed-out part, on block boundaries,
            // and are no more than the span's free count.
            std::uint32_t n = 0;
            for (const FreeBlock* b = s->free; b != nullptr; b = b->next) {
                const char* p = reinterpret_cast<const char*>(b);
                if (p < s->start || p >= s->bump || (p - s->start) % size != 0 || span_of(p) != s) return false;
                if (++n > s->capacity - s->live) return false;
            }
        }
    }
    return true;
}

}  // namespace numaware::heap::detail
