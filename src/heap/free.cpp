// heap/free.cpp — the free path.
//
// deallocate is free: one page-map lookup gives the span; if the span's
// arena is the calling thread's cache arena the block is pushed on the
// cache list. Any other case — a block of another node's arena, a large
// block, a thread without a cache — goes out of line, and a small block of
// another arena goes to THAT arena's central list, never into this cache.
#include "heap/fast_path.hpp"

namespace numaware::heap {

using namespace detail;

void deallocate(void* p) noexcept { fast_deallocate(p); }

NW_NOINLINE void detail::free_slow(void* p, Span* s) noexcept {
    if (p == nullptr) return;
    if (s == nullptr) {
        // Not the engine's: the bootstrap region is never reused; anything
        // else goes to the hook the malloc shim installs (or is ignored).
        if (!is_bootstrap(p) && g_engine.foreign_free != nullptr) g_engine.foreign_free(p);
        return;
    }
    if (s->cls == 0) {
        if (s->large && p == s->start) large_free(s);
        return;   // a free span: a double free, ignored
    }
    if (tl_busy) return;   // reentered from an engine OS call: leak rather than lock
    ThreadCache& tc = tl_cache;
    // A thread that only frees (a consumer) starts its cache here, so its
    // frees of local blocks stop taking the central lock one by one.
    if (tc.state == 0 && cache_check_node(tc) &&
        __atomic_load_n(&s->cache_key, __ATOMIC_RELAXED) == tc.key) {
        fast_deallocate(p);
        return;
    }
    auto* f = static_cast<FreeBlock*>(p);
    check_not_free(p);
    poison_free_block(p, kClasses.size[s->cls]);
    f->next = nullptr;
    central_return(*arena_of(s->arena), s->cls, f, 1);
}

}  // namespace numaware::heap
