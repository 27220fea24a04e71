// heap/engine.cpp — the process-wide engine: start-up, arenas, statistics
// and fork safety.
//
// Start-up happens on the first slow-path call. It reads the node lists from
// sysfs (os/node_files.hpp, no allocation), creates one arena per node with memory (metadata
// from mmap), registers the thread-exit key and the fork handlers. A call
// that reenters while start-up runs (pthread_atfork may allocate) is served
// from a static bootstrap region whose blocks are never reused.
#include <sys/rseq.h>

#include <cerrno>
#include <new>
#include <sched.h>

#include "heap/internal.hpp"
#include "os/node_files.hpp"
#include "os/os.hpp"

namespace numaware::heap {

namespace detail {

constinit Engine g_engine;   // constant-initialised: malloc may run before any constructor
void register_thread_exit_key() noexcept;

namespace {

thread_local bool tl_initialising __attribute__((tls_model("initial-exec"))) = false;

constexpr std::size_t kBootstrapBytes = std::size_t{1} << 20;
alignas(64) char g_bootstrap[kBootstrapBytes];
std::atomic<std::size_t> g_bootstrap_used{0};

Arena* new_arena(ArenaId id, unsigned node, std::uint32_t owner_tag) noexcept {
    const std::size_t bytes = (sizeof(Arena) + kOsPage - 1) & ~(kOsPage - 1);
    void* m = nullptr;
    if (os::sys::map_anonymous(bytes, m) != 0) return nullptr;
    Arena* a = new (m) Arena{};
    a->id = id;
    a->node = node;
    a->owner_tag = owner_tag;
    return a;
}

// The nearest node with memory to `node` by SLIT distance (ties: lower
// index); `fallback` when the distances cannot be read.
unsigned nearest_memory_node(unsigned node, const os::sys::NodeBits& memory_nodes, unsigned fallback) noexcept {
    unsigned distance[max_nodes];
    const unsigned count = os::sys::read_node_distances(node, distance, max_nodes);
    unsigned best = fallback;
    unsigned best_distance = ~0u;
    for (unsigned to = 0; to < count; ++to) {
        if (memory_nodes[to] && distance[to] < best_distance) {
            best = to;
            best_distance = distance[to];
        }
    }
    return best;
}

// Every lock, in one fixed order, so the forking thread holds them all and
// the child gets consistent lists.
void fork_prepare() noexcept {
    g_engine.arena_lock.lock();
    const unsigned n = g_engine.arena_count.load(std::memory_order_acquire);
    for (unsigned i = 0; i < n; ++i) {
        Arena* a = g_engine.arenas[i].load(std::memory_order_acquire);
        if (a == nullptr) continue;
        for (unsigned c = 1; c < kClassCount; ++c) a->central[c].lock.lock();
        a->heap_lock.lock();
        a->large.lock.lock();
    }
    g_engine.meta_lock.lock();
    g_engine.registry_lock.lock();
}

void fork_release() noexcept {
    g_engine.registry_lock.unlock();
    g_engine.meta_lock.unlock();
    const unsigned n = g_engine.arena_count.load(std::memory_order_acquire);
    for (unsigned i = n; i-- > 0;) {
        Arena* a = g_engine.arenas[i].load(std::memory_order_acquire);
        if (a == nullptr) continue;
        a->large.lock.unlock();
        a->heap_lock.unlock();
        for (unsigned c = kClassCount; c-- > 1;) a->central[c].lock.unlock();
    }
    g_engine.arena_lock.unlock();
}

void fork_child() noexcept {
    registry_after_fork_child();
    fork_release();
    // Forked while another thread was initialising the engine: that thread
    // does not exist in the child, so start-up would never finish there.
    // Start over (what the other thread had built is leaked, a bounded
    // amount); the fork handlers stay registered.
    if (g_engine.state.load(std::memory_order_acquire) == 1 && !tl_initialising) {
        for (unsigned i = 0; i < max_arenas; ++i) g_engine.arenas[i].store(nullptr, std::memory_order_relaxed);
        g_engine.arena_count.store(0, std::memory_order_relaxed);
        g_engine.state.store(0, std::memory_order_release);
    }
}

NW_NOINLINE bool init_slow() noexcept {
    int expected = 0;
    if (!g_engine.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        if (tl_initialising) return false;
        while (g_engine.state.load(std::memory_order_acquire) != 2) sched_yield();
        return true;
    }
    tl_initialising = true;
    // The fork handlers come first: a fork by another thread while the
    // arenas are being built must find every lock taken by fork_prepare.
    if (!g_engine.fork_handlers) {
        pthread_atfork(fork_prepare, fork_release, fork_child);
        g_engine.fork_handlers = true;
    }
    g_engine.os = &os::linux_os();
    (void)g_engine.os->page_size();   // its function-local static, outside any lock
    // Every node the kernel knows, up to its MAX_NUMNODES: a machine of
    // more than 64 nodes (a large SGI UV or Superdome, CXL memory, numa=fake)
    // has a heap on each, not node 0's for the nodes past the 64th.
    os::sys::NodeBits possible, online, mem, allowed;
    g_engine.nodes = os::sys::read_node_mask("/sys/devices/system/node/possible", possible);
    if (g_engine.nodes == 0) {
        g_engine.nodes = 1;
        possible.reset();
        possible[0] = true;
    }
    if (os::sys::read_node_mask("/sys/devices/system/node/online", online) == 0 || online.none()) online = possible;
    g_engine.online_nodes = online;
    if (os::sys::read_node_mask("/sys/devices/system/node/has_memory", mem) == 0 || mem.none()) mem = possible;
    // In a cpuset (a container, a batch job) only its memory nodes may hold
    // pages: the others get no arena, and their threads are served by the
    // nearest allowed node, as the kernel serves their faults.
    if (os::sys::read_mems_allowed(allowed) && (mem & allowed).any()) {
        g_engine.disallowed_memory = mem & ~allowed;
        mem &= allowed;
    }
    g_engine.memory_nodes = mem;
    g_engine.fallback_node = static_cast<unsigned>(mem._Find_first());
    for (unsigned n = 0; n < g_engine.nodes; ++n)
        g_engine.home[n] =
            static_cast<std::uint16_t>(mem[n] ? n : nearest_memory_node(n, mem, g_engine.fallback_node));
    g_engine.rseq = __rseq_size > 0 && static_cast<int>(
        reinterpret_cast<struct rseq*>(static_cast<char*>(__builtin_thread_pointer()) + __rseq_offset)->cpu_id) >= 0;
    // Arena id n is node n's arena; nodes without memory have none.
    for (unsigned n = 0; n < g_engine.nodes; ++n)
        if (mem[n]) g_engine.arenas[n].store(new_arena(static_cast<ArenaId>(n), n, n), std::memory_order_release);
    g_engine.arena_count.store(g_engine.nodes, std::memory_order_release);
    register_thread_exit_key();
    tl_initialising = false;
    g_engine.state.store(2, std::memory_order_release);
    return true;
}

}  // namespace

bool ensure_init() noexcept {
    if (NW_LIKELY(g_engine.state.load(std::memory_order_acquire) == 2)) return true;
    return init_slow();
}

namespace {
// Start-up runs when the library is loaded, before the program can start
// threads, so no fork can catch another thread half way through it (the
// fork handlers are registered there). Lazy start-up stays as the fallback
// for calls made before this constructor runs.
__attribute__((constructor)) void init_at_load() { (void)ensure_init(); }
}  // namespace

void* bootstrap_allocate(std::size_t bytes) noexcept {
    // 16-byte header with the size, for realloc of such a block.
    const std::size_t need = ((bytes + 15) & ~std::size_t{15}) + 16;
    const std::size_t at = g_bootstrap_used.fetch_add(need, std::memory_order_relaxed);
    if (at + need > kBootstrapBytes) {
        errno = ENOMEM;
        return nullptr;
    }
    *reinterpret_cast<std::size_t*>(g_bootstrap + at) = bytes;
    return g_bootstrap + at + 16;
}

bool is_bootstrap(const void* p) noexcept {
    const char* c = static_cast<const char*>(p);
    return c >= g_bootstrap && c < g_bootstrap + kBootstrapBytes;
}

std::size_t bootstrap_size(const void* p) noexcept {
    return *reinterpret_cast<const std::size_t*>(static_cast<const char*>(p) - 16);
}

Arena* arena_of(ArenaId id) noexcept {
    if (id >= max_arenas) return nullptr;
    return g_engine.arenas[id].load(std::memory_order_acquire);
}

ArenaId arena_for_node(unsigned node) noexcept {
    // A node without memory is served by its nearest node with memory; an
    // unknown one by the first node with memory.
    if (node >= g_engine.nodes) return static_cast<ArenaId>(g_engine.fallback_node);
    return static_cast<ArenaId>(g_engine.home[node]);
}

}  // namespace detail

using namespace detail;

unsigned node_count() noexcept {
    ensure_init();
    return g_engine.nodes;
}

ArenaId node_arena(unsigned node) noexcept {
    if (!ensure_init()) return no_arena;
    if (node >= g_engine.nodes || !g_engine.memory_nodes[node]) {
        errno = EINVAL;
        return no_arena;
    }
    return static_cast<ArenaId>(node);
}

unsigned serving_node(unsigned node) noexcept {
    if (!ensure_init()) return max_nodes;
    if (node >= g_engine.nodes || !g_engine.online_nodes[node]) {
        errno = EINVAL;
        return max_nodes;
    }
    return g_engine.home[node];
}

bool memory_disallowed(unsigned node) noexcept {
    if (!ensure_init()) return false;
    return node < max_nodes && g_engine.disallowed_memory[node];
}

ArenaId create_arena(unsigned node, std::uint32_t owner_tag) noexcept {
    if (!ensure_init()) return no_arena;
    if (node >= g_engine.nodes || !g_engine.memory_nodes[node]) {
        errno = EINVAL;
        return no_arena;
    }
    LockGuard g(g_engine.arena_lock);
    const unsigned id = g_engine.arena_count.load(std::memory_order_relaxed);
    if (id >= max_arenas) {
        errno = ENOSPC;
        return no_arena;
    }
    Arena* a = new_arena(static_cast<ArenaId>(id), node, owner_tag);
    if (a == nullptr) {
        errno = ENOMEM;
        return no_arena;
    }
    g_engine.arenas[id].store(a, std::memory_order_release);
    g_engine.arena_count.store(id + 1, std::memory_order_release);
    return static_cast<ArenaId>(id);
}

std::size_t release_free_memory() noexcept {
    if (g_engine.state.load(std::memory_order_acquire) != 2) return 0;
    std::size_t released = 0;
    const unsigned n = g_engine.arena_count.load(std::memory_order_acquire);
    for (unsigned i = 0; i < n; ++i)
        if (Arena* a = g_engine.arenas[i].load(std::memory_order_acquire)) {
            released += large_release(*a);
            released += page_heap_release(*a);
        }
    return released;
}

bool check_heap() noexcept {
    if (g_engine.state.load(std::memory_order_acquire) != 2) return true;
    const unsigned n = g_engine.arena_count.load(std::memory_order_acquire);
    for (unsigned i = 0; i < n; ++i)
        if (Arena* a = g_engine.arenas[i].load(std::memory_order_acquire))
            if (a->id != i || !central_check(*a) || !large_check(*a)) return false;
    return true;
}

bool node_stats(unsigned node, NodeStats& out) noexcept {
    if (!ensure_init() || node >= g_engine.nodes) {
        errno = EINVAL;
        return false;
    }
    std::int64_t in_use = 0;
    std::int64_t mapped = 0;
    const unsigned n = g_engine.arena_count.load(std::memory_order_acquire);
    LockGuard g(g_engine.registry_lock);
    for (unsigned i = 0; i < n; ++i) {
        const Arena* a = arena_of(static_cast<ArenaId>(i));
        if (a == nullptr || a->node != node) continue;
        // Blocks out of the central lists, minus those parked in caches.
        in_use += a->out_bytes.load(std::memory_order_relaxed) -
                  static_cast<std::int64_t>(cached_bytes_of_arena(a->id)) +
                  a->large_bytes.load(std::memory_order_relaxed);
        mapped += a->mapped_bytes.load(std::memory_order_relaxed);
    }
    if (in_use < 0) in_use = 0;
    out.bytes_in_use = static_cast<std::uint64_t>(in_use);
    out.bytes_cached = mapped > in_use ? static_cast<std::uint64_t>(mapped - in_use) : 0;
    out.pages_mapped = static_cast<std::uint64_t>(mapped) / kOsPage;
    out.fragmentation = in_use > 0 ? static_cast<double>(mapped) / static_cast<double>(in_use) : 0.0;
    return true;
}

void set_foreign_free(void (*hook)(void*)) noexcept { g_engine.foreign_free = hook; }

}  // namespace numaware::heap
