// heap/alloc.cpp — the allocation path.
//
// allocate_local is malloc: size -> class by table, then pop the thread
// cache's list. Everything else (first call on a thread, CPU moved, empty
// list, large blocks) is out of line so the fast path stays a handful of
// instructions with no spills.
#include <cerrno>
#include <cstring>

#include "heap/fast_path.hpp"
#include "util/bits.hpp"

namespace numaware::heap {

using namespace detail;

NW_NOINLINE void* detail::allocate_large_local(std::size_t bytes, std::size_t alignment) noexcept {
    if (!ensure_init()) return bootstrap_allocate(bytes);
    unsigned cpu = 0;
    Arena* a = arena_of(arena_for_node(current_node(&cpu)));
    if (a == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    return large_allocate(*a, bytes, alignment);
}

namespace {

// The first class >= bytes whose size is a multiple of alignment (<= 64 KiB):
// its blocks are aligned because spans start on 64 KiB boundaries.
unsigned aligned_class(std::size_t bytes, std::size_t alignment) noexcept {
    const std::size_t n = bytes < alignment ? alignment : bytes;
    if (n > kMaxSmall || alignment > kPageBytes) return 0;
    for (unsigned cls = size_class_of(n); cls < kClassCount; ++cls)
        if (kClasses.size[cls] % alignment == 0) return cls;
    return 0;
}

}  // namespace

void* allocate_local(std::size_t bytes) noexcept { return fast_allocate_local(bytes); }

void* detail::allocate_class(ArenaId arena, unsigned cls) noexcept {
    Arena* a = arena_of(arena);
    if (a == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    ThreadCache& tc = tl_cache;
    if (tc.key == arena && !tl_busy) {
        if (FreeBlock* f = bin_pop(tc.bins[cls])) return f;
        return cache_refill(tc, cls);
    }
    // Another arena than the cache's: one block straight from its central list.
    FreeBlock* f = nullptr;
    if (central_fetch(*a, cls, 1, &f) == 0) {
        errno = ENOMEM;
        return nullptr;
    }
    unpoison(f, kClasses.size[cls]);
    return f;
}

void* allocate(std::size_t bytes, ArenaId arena) noexcept {
    if (!ensure_init()) return bootstrap_allocate(bytes);
    if (bytes > kMaxSmall) {
        Arena* a = arena_of(arena);
        if (a == nullptr) {
            errno = EINVAL;
            return nullptr;
        }
        return large_allocate(*a, bytes, kPageBytes);
    }
    return allocate_class(arena, size_class_of(bytes));
}

void* allocate_aligned(std::size_t bytes, std::size_t alignment, ArenaId arena) noexcept {
    if (!is_power_of_two(alignment)) {
        errno = EINVAL;
        return nullptr;
    }
    if (alignment <= 16) return allocate(bytes, arena);
    if (!ensure_init()) return nullptr;
    if (const unsigned cls = aligned_class(bytes, alignment)) return allocate_class(arena, cls);
    Arena* a = arena_of(arena);
    if (a == nullptr) {
        errno = EINVAL;
        return nullptr;
    }
    return large_allocate(*a, bytes, alignment);
}

ArenaId local_arena() noexcept {
    if (!ensure_init()) return no_arena;
    unsigned cpu = 0;
    return arena_for_node(current_node(&cpu));
}

void* allocate_local_aligned(std::size_t bytes, std::size_t alignment) noexcept {
    if (!is_power_of_two(alignment)) {
        errno = EINVAL;
        return nullptr;
    }
    if (alignment <= 16) return allocate_local(bytes);
    if (const unsigned cls = aligned_class(bytes, alignment)) return allocate_local(kClasses.size[cls]);
    return allocate_large_local(bytes, alignment);
}

std::size_t usable_size(const void* p) noexcept {
    const Span* s = span_of(p);
    if (s == nullptr) return 0;
    if (s->cls != 0) return kClasses.size[s->cls];
    return s->large ? s->bytes : 0;
}

void* allocate_zeroed(std::size_t bytes, ArenaId arena) noexcept {
    if (bytes > kMaxSmall && ensure_init()) {
        Arena* a = arena_of(arena);
        if (a == nullptr) {
            errno = EINVAL;
            return nullptr;
        }
        bool zeroed = false;
        void* p = large_allocate(*a, bytes, kPageBytes, &zeroed);
        if (p != nullptr && !zeroed) std::memset(p, 0, bytes);
        return p;
    }
    void* p = allocate(bytes, arena);
    if (p != nullptr) std::memset(p, 0, bytes);
    return p;
}

void* allocate_local_zeroed(std::size_t bytes) noexcept {
    if (bytes > kMaxSmall) {
        // The bootstrap region (start-up) is fresh from mmap, never reused.
        if (!ensure_init()) return bootstrap_allocate(bytes);
        unsigned cpu = 0;
        return allocate_zeroed(bytes, arena_for_node(current_node(&cpu)));
    }
    void* p = fast_allocate_local(bytes);
    if (p != nullptr) std::memset(p, 0, bytes);
    return p;
}

void* reallocate(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return allocate_local(bytes);
    Span* s = span_of(p);
    if (s == nullptr || (s->cls == 0 && !s->large)) {
        errno = EINVAL;
        return nullptr;
    }
    // A large block that stays large grows into the free extent after it,
    // or gives its tail back, where it is.
    if (s->large && bytes > kMaxSmall && large_resize(s, bytes)) return p;
    const std::size_t have = s->cls != 0 ? kClasses.size[s->cls] : s->bytes;
    // Keep a small block if it fits and would not waste more than half of it.
    if (bytes <= have && bytes >= have / 2) return p;
    if (s->cls != 0 && bytes <= have && have <= 16) return p;
    void* q = allocate(bytes, s->arena);
    if (q == nullptr) return nullptr;
    std::memcpy(q, p, bytes < have ? bytes : have);
    deallocate(p);
    return q;
}

bool block_info(const void* p, BlockInfo& out) noexcept {
    const Span* s = span_of(p);
    if (s == nullptr) return false;
    const char* c = static_cast<const char*>(p);
    if (s->cls != 0) {
        // Block starts only, and only in the part of the span ever handed out.
        if (c >= __atomic_load_n(&s->bump, __ATOMIC_RELAXED) || (c - s->start) % kClasses.size[s->cls] != 0) return false;
        out.large = false;
        out.usable = kClasses.size[s->cls];
    } else if (s->large && c == s->start) {
        out.large = true;
        out.usable = s->bytes;
    } else {
        return false;
    }
    const Arena* a = arena_of(s->arena);
    out.arena = s->arena;
    out.node = a->node;
    out.owner_tag = a->owner_tag;
    return true;
}

}  // namespace numaware::heap
