// heap/internal.hpp — the engine's shared internals: spans, arenas, thread
// caches, the page map and the few process-wide globals.
//
// Where things live: size classes (size_classes.hpp), span metadata and the
// page map (page_map.cpp), the
// per-arena page heap (page_heap.cpp), large blocks (large_cache.cpp), central free lists
// (central.cpp), thread caches (thread_cache.cpp), the allocation path
// (alloc.cpp), the free path (free.cpp), arenas, statistics and fork
// (engine.cpp). Every system call goes through the os layer's
// allocation-free core (os/syscalls.hpp); chunks are bound through the
// placement layer (placement/bind_chunk.hpp).
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heap/engine.hpp"
#include "heap/poison.hpp"
#include "heap/size_classes.hpp"
#include "os/node_files.hpp"
#include "os/syscalls.hpp"
#include "util/debug_assert.hpp"

namespace numaware::os {
class Os;
}

namespace numaware::heap::detail {

#define NW_LIKELY(x) __builtin_expect(!!(x), 1)
#define NW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NW_NOINLINE __attribute__((noinline))

struct FreeBlock {
    FreeBlock* next;
};

// A spin lock that yields the CPU when spinning does not help. Not a
// pthread mutex: fork_prepare holds every engine lock at once (one per
// arena and size class), more than a sanitizer's lock tracker accepts, and
// critical sections here are short. Acquire/release atomics make it visible
// to TSan as synchronisation.
struct Lock {
    std::atomic<bool> held{false};
    void lock() noexcept {
        if (NW_LIKELY(!held.exchange(true, std::memory_order_acquire))) return;
        lock_contended();
    }
    void unlock() noexcept { held.store(false, std::memory_order_release); }
    NW_NOINLINE void lock_contended() noexcept {
        for (unsigned spins = 0;; ++spins) {
            if (!held.load(std::memory_order_relaxed) && !held.exchange(true, std::memory_order_acquire)) return;
            if (spins < 100) __builtin_ia32_pause();
            else sched_yield();
        }
    }
};
struct LockGuard {
    Lock& l;
    explicit LockGuard(Lock& lock) noexcept : l(lock) { l.lock(); }
    ~LockGuard() { l.unlock(); }
    LockGuard(const LockGuard&) = delete;
    LockGuard& operator=(const LockGuard&) = delete;
};

// cache_key of spans that are not small spans in use, and of thread caches
// that have no arena: the two never compare equal, so the free fast path
// needs one comparison.
inline constexpr std::uint32_t kSpanNoKey = 0xffffffffu;
inline constexpr std::uint32_t kCacheNoKey = 0xfffffffeu;

inline constexpr std::size_t kChunkBytes = std::size_t{8} << 20;   // page heap growth step
inline constexpr unsigned kChunkPages = static_cast<unsigned>(kChunkBytes / kPageBytes);
inline constexpr std::size_t kRetainBytes = std::size_t{16} << 20; // free spans kept per arena
inline constexpr std::size_t kOsPage = 4096;

// Large blocks (large_cache.cpp).
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;         // regions are aligned to it
inline constexpr std::size_t kLargeRegionFirst = std::size_t{8} << 20;  // an arena's first region
inline constexpr std::size_t kLargeRegionMax = std::size_t{256} << 20;   // regions double up to this
inline constexpr std::uint64_t kLargeDecayNs = 1'000'000'000;          // a dirty extent is purged after 1 s free
inline constexpr std::size_t kLargeDirtyFloor = kRetainBytes;          // dirty bytes always allowed
inline constexpr unsigned kLargeDirtySixteenths = 3;                   // live + dirty stay within (1 + 4/16) x peak live
inline constexpr unsigned kLargeBins = 132;                            // bins by page count (large_cache.cpp)

// A run of engine pages: a small-block span of one class, a free span in
// the page heap, a live large block, or a free extent in the large cache.
struct Span {
    std::uint32_t cache_key = kSpanNoKey;   // the arena id while a small span is in use
    std::uint8_t cls = 0;                   // 0: large or free
    bool large = false;                     // a live large block
    bool released = false;                  // page heap: pages not counted as mapped
    bool in_list = false;                   // on a central non-full list
    bool cached = false;                    // a free extent in the arena's large cache
    bool dirty = false;                     // cached: its pages may be resident
    ArenaId arena = no_arena;
    char* start = nullptr;
    std::size_t bytes = 0;                  // span or extent bytes
    // Large blocks and cached extents, guarded by the arena's large lock.
    char* region = nullptr;                 // the region (one mapping) the extent lies in
    char* region_end = nullptr;
    std::uint64_t freed_ns = 0;             // cached: when it was freed (coarse_now_ns())
    Span* older = nullptr;                  // cached: the age list of its state
    Span* newer = nullptr;
    // Small spans, guarded by the central list's lock.
    FreeBlock* free = nullptr;
    char* bump = nullptr;                   // never-used part starts here
    std::uint32_t live = 0;
    std::uint32_t capacity = 0;
    Span* next = nullptr;
    Span* prev = nullptr;
};

struct CentralList {
    Lock lock;
    Span* nonfull = nullptr;   // spans with a free block, doubly linked
};

struct Arena {
    ArenaId id = no_arena;
    unsigned node = 0;
    std::uint32_t owner_tag = 0;
    CentralList central[kClassCount];
    // Page heap.
    Lock heap_lock;
    Span* free_spans[kChunkPages + 1] = {};   // by engine pages, singly linked via next
    char* chunk_bump = nullptr;
    char* chunk_end = nullptr;
    std::size_t free_touched_bytes = 0;       // free spans not released
    // Large cache: free extents of this arena's regions, by state (clean:
    // no resident pages; dirty: maybe resident) and size, and by age.
    struct LargeCache {
        Lock lock;
        Span* bins[2][kLargeBins] = {};                 // doubly linked via next/prev
        std::uint64_t nonempty[2][(kLargeBins + 63) / 64] = {};
        Span* oldest[2] = {};                           // age lists via older/newer
        Span* newest[2] = {};
        std::size_t bytes[2] = {};
        Span* spare = nullptr;                          // the one whole clean region kept
        std::size_t edge_bytes = 0;                     // clean bytes sharing a huge page with other memory
        std::size_t next_region = kLargeRegionFirst;    // size of the next region mapped
        std::size_t peak_live = 0;                      // highest live large bytes since peak_ns
        std::uint64_t peak_ns = 0;
    } large;
    // Statistics (relaxed atomics: written under different locks).
    std::atomic<std::int64_t> out_bytes{0};    // small blocks out of central lists
    std::atomic<std::int64_t> large_bytes{0};  // usable bytes of live large blocks
    std::atomic<std::int64_t> mapped_bytes{0}; // carved spans + live and dirty large extents - released
};

// One per thread, initial-exec TLS, zero/constant-initialised so reaching
// it is one %fs-relative access with no init wrapper.
struct Bin {
    FreeBlock* head;
    std::uint32_t count;   // written with relaxed atomic stores: stats read it from other threads
    std::uint32_t limit;   // cache_limit(class) while the cache has an arena: free compares it
};
static_assert(sizeof(Bin) == 16, "free computes a bin's offset as class << 4");
struct ThreadCache {
    Bin bins[kClassCount];
    const volatile std::uint32_t* cpu_word;   // rseq cpu_id, or a constant
    std::uint32_t cpu;                        // the CPU the arena was chosen on
    std::uint32_t key;                        // arena id, or kCacheNoKey
    std::uint32_t map_tag;                    // entry_tag(key), or kCacheNoTag: what free compares
    std::uint8_t state;                       // 0 new, 1 live, 2 after thread exit
    ThreadCache* next;
    ThreadCache* prev;
};

extern const std::uint32_t g_no_cpu_word;   // a word no CPU id equals before the cache starts
extern constinit thread_local ThreadCache tl_cache __attribute__((tls_model("initial-exec")));
// Set while this thread is inside an OS call the engine makes under its
// locks; allocations reentering then come from the bootstrap region.
extern constinit thread_local bool tl_busy __attribute__((tls_model("initial-exec")));

struct Engine {
    std::atomic<int> state{0};   // 0 new, 1 initialising, 2 ready
    bool fork_handlers = false;  // pthread_atfork done (a child inherits it)
    unsigned nodes = 1;
    os::sys::NodeBits online_nodes{1};   // nodes the kernel has online: with CPUs, memory or both
    os::sys::NodeBits memory_nodes{1};   // nodes with memory this process may use
    os::sys::NodeBits disallowed_memory;   // nodes with memory outside its cpuset
    unsigned fallback_node = 0;       // first node with memory
    std::uint16_t home[max_nodes] = {};   // node -> node whose arena serves it (nearest with memory)
    bool rseq = false;
    os::Os* os = nullptr;
    std::atomic<Arena*> arenas[max_arenas] = {};
    std::atomic<unsigned> arena_count{0};
    Lock arena_lock;
    Lock meta_lock;
    Lock registry_lock;
    ThreadCache* registry = nullptr;
    pthread_key_t key{};
    void (*foreign_free)(void*) = nullptr;   // free of a pointer the engine does not own
    std::atomic<bool> refusal_noticed{false};   // binding_refused_notice() was called (page_heap.cpp)
};
extern Engine g_engine;

#if defined(NUMAWARE_HEAP_FIRST_TOUCH_WHEN_REFUSED)
// The engine of the drop-in malloc (CMakeLists.txt defines the macro for
// libnumaware_malloc.so alone): where the system refuses to bind memory to
// a node on a machine of several nodes (EPERM, as under a container's
// default seccomp profile without CAP_SYS_NICE, or ENOSYS), a chunk is kept
// unbound and the kernel places its pages where they are first touched,
// instead of failing the allocation as the heap API does; this is called
// once per process with the errno (malloc_shim.cpp; it must not allocate).
void binding_refused_notice(int err) noexcept;
#endif

// ---- engine.cpp ----
bool ensure_init() noexcept;                // false while initialising (reentrant call)
void* bootstrap_allocate(std::size_t bytes) noexcept;
bool is_bootstrap(const void* p) noexcept;
std::size_t bootstrap_size(const void* p) noexcept;
Arena* arena_of(ArenaId id) noexcept;
ArenaId arena_for_node(unsigned node) noexcept;   // fallback node for memoryless nodes

// The node (and CPU) the calling thread runs on; node 0 should getcpu fail.
inline unsigned current_node(unsigned* cpu) noexcept {
    unsigned c = 0;
    unsigned node = 0;
    if (os::sys::getcpu(&c, &node) != 0) node = 0;
    if (cpu != nullptr) *cpu = c;
    return node;
}

// ---- page_map.cpp: address -> span in O(1), and span metadata ----
inline constexpr unsigned kLeafBits = 16;
inline constexpr std::size_t kLeafEntries = std::size_t{1} << kLeafBits;
inline constexpr std::size_t kRootEntries = std::size_t{1} << (48 - kPageShift - kLeafBits);

// A page-map entry is one word, so free learns a block's size class and
// whether it belongs to the calling thread's cache arena from the leaf
// alone, without loading the span:
//   bits 63..53  tag: arena id + 1 while the span is a small span in use, else 0
//   bits 52..46  size class (0 for large and free spans)
//   bits 43..0   span address >> 3 (Span records are 8-aligned, below 2^47)
// 0 is "no span". The tag and class mirror Span::cache_key and Span::cls and
// change together with them (central.cpp new_span, page_heap_give).
using PageEntry = std::uint64_t;
inline constexpr unsigned kEntryTagShift = 53;
inline constexpr unsigned kEntryClassShift = 46;
inline constexpr PageEntry kEntrySpanMask = (PageEntry{1} << 44) - 1;
inline constexpr std::uint32_t kCacheNoTag = 0xffffffffu;   // above every 11-bit tag
static_assert(kClassCount <= 128, "size class must fit 7 entry bits");
static_assert(max_arenas + 1 < 2048, "arena tag must fit 11 entry bits");
static_assert(max_nodes == os::sys::NodeBits().size(), "a node list read from sysfs holds every node the engine serves");
static_assert(alignof(Span) >= 8, "span address is stored >> 3");
inline constexpr std::uint32_t entry_tag(std::uint32_t arena) noexcept { return arena + 1; }
extern PageEntry* g_page_root[kRootEntries];

// Two dependent loads; relaxed/acquire loads are plain moves on x86.
inline PageEntry page_entry(const void* p) noexcept {
    const std::uintptr_t page = reinterpret_cast<std::uintptr_t>(p) >> kPageShift;
    if (NW_UNLIKELY(page >= kRootEntries * kLeafEntries)) return 0;
    PageEntry* leaf = __atomic_load_n(&g_page_root[page >> kLeafBits], __ATOMIC_ACQUIRE);
    if (NW_UNLIKELY(leaf == nullptr)) return 0;
    return __atomic_load_n(&leaf[page & (kLeafEntries - 1)], __ATOMIC_ACQUIRE);
}
inline Span* entry_span(PageEntry e) noexcept {
    return reinterpret_cast<Span*>(static_cast<std::uintptr_t>((e & kEntrySpanMask) << 3));
}
inline Span* span_of(const void* p) noexcept { return entry_span(page_entry(p)); }
// Maps [start, start+bytes) to s with tag 0 and class 0 (s == nullptr: unmaps).
bool page_map_set(const void* start, std::size_t bytes, Span* s) noexcept;
// Rewrites the entries of s's pages (already mapped to s) with class cls and
// tag `tag` (entry_tag(arena) for a small span in use, 0 otherwise).
void page_map_mark(const Span* s, unsigned cls, std::uint32_t tag) noexcept;
Span* span_new() noexcept;
void span_delete(Span* s) noexcept;

// ---- page_heap.cpp ----
Span* page_heap_take(Arena& a, unsigned pages) noexcept;
void page_heap_give(Arena& a, Span* s) noexcept;
// A fresh anonymous mapping aligned to `alignment`, bound to node `node` and
// verified; nullptr on failure (nothing stays mapped).
void* map_bound(std::size_t bytes, std::size_t alignment, unsigned node) noexcept;
// Hands every touched free span back to the kernel; the bytes released.
std::size_t page_heap_release(Arena& a) noexcept;
void unmap(void* p, std::size_t bytes) noexcept;

// ---- large_cache.cpp ----
// A large block of at least `bytes`, aligned to `alignment`; nullptr with
// errno ENOMEM. *zeroed (if given) tells whether its pages are known to be
// fresh from the kernel, so all zero.
void* large_allocate(Arena& a, std::size_t bytes, std::size_t alignment, bool* zeroed = nullptr) noexcept;
void large_free(Span* s) noexcept;
// Grows or shrinks a live large block where it is; false if it cannot grow.
bool large_resize(Span* s, std::size_t bytes) noexcept;
// Purges every dirty extent now; the bytes released.
std::size_t large_release(Arena& a) noexcept;
// Checks the arena's large cache: bins, states, ages, regions, page map.
bool large_check(Arena& a) noexcept;

// ---- central.cpp ----
// Takes up to `want` blocks of class cls; returns how many (0: out of memory).
unsigned central_fetch(Arena& a, unsigned cls, unsigned want, FreeBlock** head) noexcept;
// Returns a null-terminated list of n blocks of class cls, all from arena a.
void central_return(Arena& a, unsigned cls, FreeBlock* list, unsigned n) noexcept;
// Checks the arena's central lists: span, class and page-map tag agree,
// free blocks on block boundaries of their span.
bool central_check(Arena& a) noexcept;

// ---- thread_cache.cpp ----
void* local_slow(unsigned cls) noexcept;
bool cache_check_node(ThreadCache& tc) noexcept;   // starts the cache or follows the thread's node
void* cache_refill(ThreadCache& tc, unsigned cls) noexcept;
void cache_release(ThreadCache& tc, unsigned cls) noexcept;
void cache_flush(ThreadCache& tc) noexcept;
std::uint64_t cached_bytes_of_arena(ArenaId id) noexcept;   // caller holds registry_lock
void registry_after_fork_child() noexcept;

// ---- alloc.cpp / free.cpp ----
void* allocate_class(ArenaId arena, unsigned cls) noexcept;
void free_slow(void* p, Span* s) noexcept;

inline std::uint32_t cache_limit(unsigned cls) noexcept { return 2 * kClasses.batch[cls]; }
// The one way to change a thread cache's arena key.
inline void set_cache_key(ThreadCache& tc, std::uint32_t key) noexcept {
    for (unsigned cls = 1; cls < kClassCount; ++cls) tc.bins[cls].limit = cache_limit(cls);
    __atomic_store_n(&tc.key, key, __ATOMIC_RELAXED);
    tc.map_tag = key == kCacheNoKey ? kCacheNoTag : entry_tag(key);
}
// The calling thread's cache. The empty asm keeps its address in one
// register: without it the compiler re-reads the TLS base for every use.
inline ThreadCache& this_cache() noexcept {
    ThreadCache* t = &tl_cache;
    asm("" : "+r"(t));
    return *t;
}
inline void set_count(Bin& b, std::uint32_t v) noexcept { __atomic_store_n(&b.count, v, __ATOMIC_RELAXED); }
// The one way to take a block from a thread-cache bin; nullptr when empty.
inline FreeBlock* bin_pop(Bin& b) noexcept {
    FreeBlock* f = b.head;
    if (NW_LIKELY(f != nullptr)) {
        b.head = f->next;
        set_count(b, b.count - 1);
        if constexpr (kPoison) unpoison(f, kClasses.size[span_of(f)->cls]);
    }
    return f;
}

}  // namespace numaware::heap::detail
