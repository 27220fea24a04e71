// heap/thread_cache.cpp — per-thread caches of the thread's node arena.
//
// A cache holds, per size class, a bounded singly linked list of free
// blocks of ONE arena: the arena of the node the thread runs on. The
// malloc fast path checks that the thread is still on the CPU the arena
// was chosen on by reading the kernel-maintained rseq cpu_id (one load);
// when it moved, the slow path asks getcpu for the node and, if that
// changed, flushes the cache and switches arena. Lists move to and from the
// arena's central lists in batches (kClasses.batch); a list longer than
// twice its batch gives a batch back.
//
// Thread exit: a pthread key destructor flushes the cache and marks it
// dead; allocations after that (other destructors) go to central lists.
#include <sys/rseq.h>

#include <cstring>

#include "heap/internal.hpp"

namespace numaware::heap::detail {

const std::uint32_t g_no_cpu_word = 0;
constinit thread_local ThreadCache tl_cache __attribute__((tls_model("initial-exec"))) = {
    {}, &g_no_cpu_word, 0xffffffffu, kCacheNoKey, kCacheNoTag, 0, nullptr, nullptr};
constinit thread_local bool tl_busy __attribute__((tls_model("initial-exec"))) = false;

namespace {

const volatile std::uint32_t* rseq_cpu_word() noexcept {
    char* tp = static_cast<char*>(__builtin_thread_pointer());
    auto* r = reinterpret_cast<struct rseq*>(tp + __rseq_offset);
    return &r->cpu_id;
}

void thread_exit(void* arg) noexcept {
    auto* tc = static_cast<ThreadCache*>(arg);
    cache_flush(*tc);
    {
        LockGuard g(g_engine.registry_lock);
        if (tc->prev != nullptr) tc->prev->next = tc->next;
        else if (g_engine.registry == tc) g_engine.registry = tc->next;
        if (tc->next != nullptr) tc->next->prev = tc->prev;
        tc->next = tc->prev = nullptr;
    }
    set_cache_key(*tc, kCacheNoKey);
    tc->state = 2;
    // Never equal to a CPU id: every later call takes the slow path.
    tc->cpu_word = &g_no_cpu_word;
    tc->cpu = 0xffffffffu;
}

}  // namespace

// Chooses the arena for the node the thread runs on now. Returns false if
// the cache cannot be used (engine initialising, thread exited).
NW_NOINLINE bool cache_check_node(ThreadCache& tc) noexcept {
    if (tc.state == 2 || !ensure_init()) return false;
    unsigned cpu = 0;
    const unsigned node = current_node(&cpu);
    const ArenaId arena = arena_for_node(node);
    if (arena == no_arena) return false;
    if (tc.state == 0) {
        tc.state = 1;
        set_cache_key(tc, std::uint32_t{arena});
        {
            LockGuard g(g_engine.registry_lock);
            tc.prev = nullptr;
            tc.next = g_engine.registry;
            if (tc.next != nullptr) tc.next->prev = &tc;
            g_engine.registry = &tc;
        }
        // After the cache is usable: pthread_setspecific may call malloc.
        pthread_setspecific(g_engine.key, &tc);
    } else if (tc.key != arena) {
        cache_flush(tc);
        set_cache_key(tc, std::uint32_t{arena});
    }
    if (g_engine.rseq) {
        tc.cpu_word = rseq_cpu_word();
        tc.cpu = cpu;
    } else {
        // No rseq: the node is rechecked on every refill instead.
        tc.cpu_word = &g_no_cpu_word;
        tc.cpu = 0;
    }
    return true;
}

void register_thread_exit_key() noexcept {
    pthread_key_create(&g_engine.key, thread_exit);
}

void* local_slow(unsigned cls) noexcept {
    ThreadCache& tc = tl_cache;
    if (tl_busy) return bootstrap_allocate(kClasses.size[cls]);
    if (!cache_check_node(tc)) {
        if (tc.state != 2) return bootstrap_allocate(kClasses.size[cls]);
        unsigned cpu = 0;
        return allocate_class(arena_for_node(current_node(&cpu)), cls);
    }
    if (FreeBlock* f = bin_pop(tc.bins[cls])) return f;
    return cache_refill(tc, cls);
}

void* cache_refill(ThreadCache& tc, unsigned cls) noexcept {
    if (!g_engine.rseq && !cache_check_node(tc)) return nullptr;
    Arena* a = arena_of(static_cast<ArenaId>(tc.key));
    FreeBlock* list = nullptr;
    const unsigned got = central_fetch(*a, cls, kClasses.batch[cls], &list);
    if (got == 0) {
        errno = ENOMEM;
        return nullptr;
    }
    Bin& b = tc.bins[cls];
    FreeBlock* first = list;
    // The bin is empty here, so the rest of the batch becomes the bin.
    b.head = first->next;
    set_count(b, got - 1);
    unpoison(first, kClasses.size[cls]);
    return first;
}

void cache_release(ThreadCache& tc, unsigned cls) noexcept {
    if (tl_busy) return;   // inside an engine OS call: let the bin run long
    Bin& b = tc.bins[cls];
    const unsigned n = kClasses.batch[cls];
    FreeBlock* list = b.head;
    FreeBlock* last = list;
    for (unsigned i = 1; i < n; ++i) {
        // A cache holds blocks of its own arena and class only.
        NW_DEBUG_ASSERT(span_of(last) != nullptr && span_of(last)->arena == tc.key && span_of(last)->cls == cls);
        last = last->next;
    }
    b.head = last->next;
    last->next = nullptr;
    set_count(b, b.count - n);
    central_return(*arena_of(static_cast<ArenaId>(tc.key)), cls, list, n);
}

void cache_flush(ThreadCache& tc) noexcept {
    if (tc.key == kCacheNoKey) return;
    Arena* a = arena_of(static_cast<ArenaId>(tc.key));
    for (unsigned cls = 1; cls < kClassCount; ++cls) {
        Bin& b = tc.bins[cls];
        if (b.head == nullptr) continue;
        FreeBlock* list = b.head;
        const unsigned n = b.count;
        b.head = nullptr;
        set_count(b, 0);
        central_return(*a, cls, list, n);
    }
}

std::uint64_t cached_bytes_of_arena(ArenaId id) noexcept {
    std::uint64_t total = 0;
    for (ThreadCache* tc = g_engine.registry; tc != nullptr; tc = tc->next) {
        if (__atomic_load_n(&tc->key, __ATOMIC_RELAXED) != id) continue;
        for (unsigned cls = 1; cls < kClassCount; ++cls)
            total += std::uint64_t{__atomic_load_n(&tc->bins[cls].count, __ATOMIC_RELAXED)} * kClasses.size[cls];
    }
    return total;
}

void registry_after_fork_child() noexcept {
    // Only the forking thread survives; the other caches' blocks are lost
    // to the child (a bounded leak), and their TLS is gone.
    ThreadCache& self = tl_cache;
    g_engine.registry = nullptr;
    if (self.state == 1) {
        self.next = self.prev = nullptr;
        g_engine.registry = &self;
    }
}

}  // namespace numaware::heap::detail

void numaware::heap::flush_thread_cache() noexcept {
    detail::cache_flush(detail::tl_cache);
}
