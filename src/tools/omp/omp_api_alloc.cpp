// tools/omp/omp_api_alloc.cpp — the OpenMP memory allocators (omp_alloc
// and the rest, GOMP_alloc/GOMP_free for the `allocate` clause and
// directive), carried out on numaware: allocators.hpp decides where a
// block goes; a node's blocks come from the partitioned heap (psm_alloc),
// interleaved and blocked ones (and pinned ones) from a mapping of their
// own placed by the placement layer, and the process's own allocation
// (malloc) serves the `environment` partition of the default space.
//
// Every block starts with a header just below the pointer returned: where
// it came from, so that omp_free and omp_realloc need no lookup.
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include <fmt/format.h>

#include "numaware/heap.hpp"
#include "numaware/placement.hpp"
#include "os/os.hpp"
#include "tools/omp/allocators.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {
namespace {

struct Allocator {
    AllocatorSpec spec;
    std::uintptr_t handle = 0;
    std::atomic<std::uint64_t> used{0};   // bytes live, for pool_size
    // Live blocks, plus one until omp_destroy_allocator: whoever drops the
    // last deletes a made allocator (its blocks point at it).
    std::atomic<std::uint64_t> refs{1};
};

void unref(Allocator* a) {
    if (a->refs.fetch_sub(1, std::memory_order_acq_rel) == 1 && a->handle > 8) delete a;
}

// The predefined allocators, by handle 1..8.
Allocator* predefined() {
    static Allocator table[9];
    static const bool ready = [] {
        for (std::uintptr_t h = 1; h <= 8; ++h) {
            table[h].spec = *predefined_allocator(h);
            table[h].handle = h;
        }
        return true;
    }();
    (void)ready;
    return table;
}

// Allocators made by omp_init_allocator, live until omp_destroy_allocator.
std::mutex g_made_mutex;
std::set<std::uintptr_t>& made() {
    static auto* s = new std::set<std::uintptr_t>;   // never destroyed: blocks may be freed at exit
    return *s;
}

Allocator* find(std::uintptr_t handle) {
    if (handle >= 1 && handle <= 8) return &predefined()[handle];
    std::lock_guard g(g_made_mutex);
    return made().count(handle) != 0 ? reinterpret_cast<Allocator*>(handle) : nullptr;
}

// def-allocator-var: OMP_ALLOCATOR, then omp_set_default_allocator (per thread).
thread_local std::uintptr_t t_default = 0;
std::uintptr_t default_handle() { return t_default != 0 ? t_default : settings().default_allocator; }

enum class Source : std::uint32_t { malloc_ = 1, heap = 2, mapping = 3 };
constexpr std::uint32_t header_magic = 0x6e776f61;   // "nwoa"

struct alignas(16) Header {
    void* base;              // what to give back
    std::size_t bytes;       // asked for
    std::size_t mapped;      // a mapping's length (Source::mapping)
    Allocator* by;
    Source source;
    std::uint32_t magic;
};

Header* header_of(void* p) { return reinterpret_cast<Header*>(static_cast<char*>(p) - sizeof(Header)); }

// The calling thread's node; -1 when the kernel's CPU is not in the model.
int calling_node() {
    const int cpu = sched_getcpu();
    if (cpu < 0) return -1;
    try {
        return static_cast<int>(team_machine().node_of_cpu(static_cast<unsigned>(cpu)));
    } catch (const Error&) {
        return -1;
    }
}

// A fresh mapping of `bytes`, placed by `policy` (first touch: none); null
// when the kernel refuses (the caller takes the fallback).
void* placed_mapping(std::size_t bytes, const PlacementPolicy* policy, bool pinned) {
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    // A page-by-page plan wants small pages; asked for at once, so that the
    // mapping is not merged with the next one malloc makes (plan() makes
    // some), whose faults could otherwise put a transparent huge page over
    // this one's first pages, on one node (placement.hpp, apply()).
    if (policy != nullptr && policy->fine_grained()) (void)madvise(m, bytes, MADV_NOHUGEPAGE);
    try {
        if (policy != nullptr) {
            const PlacementPlan p = plan(*policy, m, bytes, team_machine());
            const PlacementResult r = apply(m, bytes, p);
            if (!r.ok()) throw Error("placement", r.summary());
        }
    } catch (const Error&) {
        munmap(m, bytes);
        return nullptr;
    }
    if (pinned && mlock(m, bytes) != 0) {
        munmap(m, bytes);
        return nullptr;
    }
    return m;
}

// One attempt with allocator `a` (no fallback): the block, or null.
void* try_allocate(Allocator& a, std::size_t alignment, std::size_t bytes, bool zero) {
    const std::size_t align = std::max({alignment, a.spec.alignment, alignof(Header)});
    if (bytes > SIZE_MAX / 2 || align > SIZE_MAX / 4) return nullptr;
    const std::size_t total = bytes + align + sizeof(Header);
    if (a.spec.pool_size != 0) {
        const std::uint64_t before = a.used.fetch_add(bytes, std::memory_order_relaxed);
        if (before + bytes > a.spec.pool_size) {
            a.used.fetch_sub(bytes, std::memory_order_relaxed);
            return nullptr;
        }
    }
    const AllocPlace where = place_allocation(a.spec, team_machine(), calling_node());
    void* base = nullptr;
    std::size_t mapped = 0;
    Source source = Source::malloc_;
    try {
        const bool own_mapping = a.spec.pinned || where.kind == AllocPlace::Kind::interleave ||
                                 where.kind == AllocPlace::Kind::block;
        if (where.kind == AllocPlace::Kind::none) {
            base = nullptr;
        } else if (own_mapping) {
            const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
            mapped = (total + page - 1) / page * page;
            std::optional<PlacementPolicy> policy;
            if (where.kind == AllocPlace::Kind::interleave)
                policy = PlacementPolicy::interleave(NodeSet(where.nodes));
            else if (where.kind == AllocPlace::Kind::block)
                policy = PlacementPolicy::block_even(NodeSet(where.nodes));
            else if (where.kind == AllocPlace::Kind::node)
                policy = PlacementPolicy::bind(NodeSet(std::vector<unsigned>{where.node}));
            base = placed_mapping(mapped, policy ? &*policy : nullptr, a.spec.pinned);
            source = Source::mapping;
            zero = false;   // fresh pages are zero
        } else if (where.kind == AllocPlace::Kind::node) {
            base = psm_alloc(total, HeapOwner::node(where.node));
            source = Source::heap;
        } else {
            base = std::malloc(total);
        }
    } catch (const Error&) {
        base = nullptr;
    }
    if (base == nullptr) {
        if (a.spec.pool_size != 0) a.used.fetch_sub(bytes, std::memory_order_relaxed);
        return nullptr;
    }
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base) + sizeof(Header);
    auto* p = reinterpret_cast<char*>((first + align - 1) / align * align);
    Header* h = header_of(p);
    *h = Header{base, bytes, mapped, &a, source, header_magic};
    a.refs.fetch_add(1, std::memory_order_relaxed);
    if (zero) std::memset(p, 0, bytes);
    return p;
}

bool is_default_memory(const Allocator& a) {
    return a.spec.space == MemSpace::default_ && a.spec.partition == Partition::environment && !a.spec.pinned &&
           a.spec.pool_size == 0;
}

void* allocate(std::size_t alignment, std::size_t bytes, std::uintptr_t handle, bool zero, const char* who) {
    if (bytes == 0) return nullptr;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        errno = EINVAL;
        return nullptr;
    }
    if (handle == 0) handle = default_handle();
    Allocator* a = find(handle);
    // allocator_fb chains end after a few steps (a cycle would not).
    for (int step = 0; a != nullptr && step < 8; ++step) {
        if (void* p = try_allocate(*a, alignment, bytes, zero)) return p;
        switch (a->spec.fallback) {
        case Fallback::null: errno = ENOMEM; return nullptr;
        case Fallback::abort:
            fatal(fmt::format("{}: {} bytes from allocator {:#x}: no memory in its memory space or pool; its "
                              "fallback is abort_fb",
                              who, bytes, a->handle));
        case Fallback::allocator: a = find(a->spec.fb_data); break;
        case Fallback::default_mem:
            if (is_default_memory(*a)) {
                errno = ENOMEM;
                return nullptr;
            }
            a = &predefined()[1];
            break;
        }
    }
    errno = a == nullptr ? EINVAL : ENOMEM;
    return nullptr;
}

void release(void* p, const char* who) {
    if (p == nullptr) return;
    Header* h = header_of(p);
    if (h->magic != header_magic)
        fatal(fmt::format("{}: {} was not allocated by omp_alloc or its kin (or was freed already)", who, p));
    h->magic = 0;
    const Header block = *h;   // the header goes with the block
    if (block.by->spec.pool_size != 0) block.by->used.fetch_sub(block.bytes, std::memory_order_relaxed);
    switch (block.source) {
    case Source::malloc_: std::free(block.base); break;
    case Source::heap: psm_free(block.base); break;
    case Source::mapping: munmap(block.base, block.mapped); break;
    }
    unref(block.by);
}

}  // namespace
}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

omp_allocator_handle_t omp_init_allocator(omp_memspace_handle_t space, int ntraits, const omp_alloctrait_t traits[]) {
    if (ntraits < 0 || (ntraits > 0 && traits == nullptr)) return omp_null_allocator;
    std::vector<AllocTrait> t;
    for (int i = 0; i < ntraits; ++i)
        t.push_back(AllocTrait{static_cast<std::uintptr_t>(traits[i].key), traits[i].value});
    const std::optional<AllocatorSpec> spec = read_allocator(static_cast<std::uintptr_t>(space), t);
    if (!spec) return omp_null_allocator;
    if (spec->fallback == Fallback::allocator && find(spec->fb_data) == nullptr) return omp_null_allocator;
    auto* a = new (std::nothrow) Allocator;
    if (a == nullptr) return omp_null_allocator;
    a->spec = *spec;
    a->handle = reinterpret_cast<std::uintptr_t>(a);
    std::lock_guard g(g_made_mutex);
    made().insert(a->handle);
    return static_cast<omp_allocator_handle_t>(a->handle);
}

void omp_destroy_allocator(omp_allocator_handle_t allocator) {
    const auto h = static_cast<std::uintptr_t>(allocator);
    {
        std::lock_guard g(g_made_mutex);
        if (made().erase(h) == 0) return;   // a predefined allocator or none: nothing to destroy
    }
    unref(reinterpret_cast<Allocator*>(h));   // deleted now, or with its last block
}

void omp_set_default_allocator(omp_allocator_handle_t allocator) {
    const auto h = static_cast<std::uintptr_t>(allocator);
    if (find(h) != nullptr) t_default = h;
}

omp_allocator_handle_t omp_get_default_allocator(void) { return static_cast<omp_allocator_handle_t>(default_handle()); }

void* omp_alloc(size_t size, omp_allocator_handle_t allocator) {
    return allocate(1, size, static_cast<std::uintptr_t>(allocator), false, "omp_alloc");
}
void* omp_aligned_alloc(size_t alignment, size_t size, omp_allocator_handle_t allocator) {
    return allocate(alignment, size, static_cast<std::uintptr_t>(allocator), false, "omp_aligned_alloc");
}
void* omp_calloc(size_t n, size_t size, omp_allocator_handle_t allocator) {
    if (size != 0 && n > SIZE_MAX / size) return nullptr;
    return allocate(1, n * size, static_cast<std::uintptr_t>(allocator), true, "omp_calloc");
}
void* omp_aligned_calloc(size_t alignment, size_t n, size_t size, omp_allocator_handle_t allocator) {
    if (size != 0 && n > SIZE_MAX / size) return nullptr;
    return allocate(alignment, n * size, static_cast<std::uintptr_t>(allocator), true, "omp_aligned_calloc");
}
void omp_free(void* ptr, omp_allocator_handle_t) { release(ptr, "omp_free"); }

void* omp_realloc(void* ptr, size_t size, omp_allocator_handle_t allocator, omp_allocator_handle_t free_allocator) {
    if (ptr == nullptr) return omp_alloc(size, allocator != omp_null_allocator ? allocator : free_allocator);
    Header* h = header_of(ptr);
    if (h->magic != header_magic)
        fatal(fmt::format("omp_realloc: {} was not allocated by omp_alloc or its kin (or was freed already)", ptr));
    if (size == 0) {
        release(ptr, "omp_realloc");
        return nullptr;
    }
    std::uintptr_t to = static_cast<std::uintptr_t>(allocator);
    if (to == 0) to = free_allocator != omp_null_allocator ? static_cast<std::uintptr_t>(free_allocator) : h->by->handle;
    void* fresh = allocate(1, size, to, false, "omp_realloc");
    if (fresh == nullptr) return nullptr;   // the old block stays valid
    std::memcpy(fresh, ptr, std::min(size, h->bytes));
    release(ptr, "omp_realloc");
    return fresh;
}

// GCC's lowering of the `allocate` clause and directive.
void* GOMP_alloc(size_t alignment, size_t size, uintptr_t allocator) {
    return allocate(alignment, size, allocator, false, "GOMP_alloc");
}
void GOMP_free(void* ptr, uintptr_t) { release(ptr, "GOMP_free"); }

}  // extern "C"
#pragma GCC visibility pop
