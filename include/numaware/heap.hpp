// numaware/heap.hpp — the partitioned shared-memory heap (the `heap` layer).
//
// Every block has an owner: a NUMA node, or a rank of a thread team. The heap
// keeps one sub-heap (arena) per owner, bound to the owner's node, and never
// puts blocks of two owners in one page, so no page is shared across nodes
// ("false page-sharing"). Freeing from any thread returns a block to its
// owner's arena.
//
//     numaware::Team team{machine, {.threads = 8, .kind = numaware::MappingKind::scatter}};
//     numaware::psm_register_team(team.layout());          // rank -> node, once
//     team.run([&](numaware::TeamContext& ctx) {
//         auto* part = static_cast<double*>(
//             numaware::psm_alloc(n * sizeof(double), numaware::HeapOwner::rank(ctx.rank())));
//         ...
//         numaware::psm_free(part);                         // from any thread
//     });
//
//     std::vector<int, numaware::PsmAllocator<int>> v{numaware::PsmAllocator<int>{numaware::HeapOwner::node(1)}};
//
// Errors: every function throws numaware::Error naming the input and the
// limit; code() is EINVAL for bad input and ENOMEM when memory runs out. A
// failed call leaves the heap as it was. All functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <string>

#include "numaware/error.hpp"
#include "numaware/team.hpp"

namespace numaware {

// Who a block belongs to: a node, or a team rank registered with
// psm_register_team(). Plain value; two owners are equal when kind and id are.
class HeapOwner {
public:
    enum class Kind : std::uint8_t { node, rank };

    static constexpr HeapOwner node(unsigned os_index) noexcept { return HeapOwner{Kind::node, os_index}; }
    static constexpr HeapOwner rank(unsigned rank_id) noexcept { return HeapOwner{Kind::rank, rank_id}; }

    constexpr Kind kind() const noexcept { return kind_; }
    constexpr unsigned id() const noexcept { return id_; }   // node OS index or rank
    std::string to_string() const;                            // "node 1", "rank 3"

    friend constexpr bool operator==(HeapOwner, HeapOwner) = default;

private:
    constexpr HeapOwner(Kind kind, unsigned id) noexcept : kind_(kind), id_(id) {}
    Kind kind_;
    unsigned id_;
};

// What psm_owner_of() reports about a live block.
struct HeapBlockInfo {
    unsigned node = 0;              // the node whose memory holds the block
    HeapOwner owner = HeapOwner::node(0);
    bool large = false;             // a large block (over 256 KiB, in a region)
    std::size_t usable_bytes = 0;   // == psm_usable_size()
};

// Per-node figures, as the engine keeps them.
struct HeapNodeStats {
    std::uint64_t bytes_in_use = 0;   // usable bytes of live blocks
    std::uint64_t bytes_cached = 0;   // free bytes held by caches, central lists and page heap
    std::uint64_t pages_mapped = 0;   // OS pages mapped for this node
    double fragmentation = 0;         // bytes mapped / bytes in use; 0 when nothing is in use
};

// Registers rank -> node for every rank of `layout` (as plan_team() or
// Team::layout() give it), giving each rank its own arena on its node. A
// rank on a node whose memory cannot hold its pages (a node without memory,
// or one outside this process's cpuset) gets its arena on the nearest node
// that can (SLIT distance, ties to the lower index): where the kernel puts
// the first touches of that rank's CPU. psm_owner_of() reports that node.
// Registering a rank again with the same node keeps its arena; with another
// node, later allocations for it go to the new node (existing blocks stay
// where they are). Throws Error for an empty layout, a rank listed twice, a
// rank over the limit, or a node that is not online; then no mapping is
// changed.
void psm_register_team(const TeamLayout& layout);

// A block of at least `bytes` bytes (0 is served as 1) in `owner`'s arena,
// aligned to alignof(std::max_align_t). Throws Error("owner") for a node
// without memory or an unregistered rank, Error("bytes", ENOMEM) when memory
// runs out.
void* psm_alloc(std::size_t bytes, HeapOwner owner);

// Returns `p` to its owner's arena, from any thread. nullptr is ignored.
// Throws Error("p") when p is not the start of a block of the heap (a
// foreign or interior pointer, or a large block already freed) and then
// leaves memory untouched. Freeing a small block twice is not detected (the
// page map knows the block's slot, not whether it is free): like free(), it
// is undefined.
void psm_free(void* p);

// n * size zero bytes. Throws Error("n * size") when the product overflows.
void* psm_calloc(std::size_t n, std::size_t size, HeapOwner owner);

// Resizes p, keeping its owner (and node); contents are kept up to the
// smaller size. p must be a live block (nullptr has no owner to keep: use
// psm_alloc). On failure p is left valid and unchanged.
void* psm_realloc(void* p, std::size_t bytes);

// A block aligned to `alignment`, which must be a power of two.
void* psm_aligned_alloc(std::size_t alignment, std::size_t bytes, HeapOwner owner);

// Bytes usable in p (>= what was asked). Throws Error("p") for a pointer that
// is not a live block of the heap.
std::size_t psm_usable_size(const void* p);

// Node, owner and kind of a live block; Error("p") for any other pointer.
HeapBlockInfo psm_owner_of(const void* p);

// Statistics of node `node`; Error("node") for a node without a heap.
HeapNodeStats psm_node_stats(unsigned node);

// A std::pmr::memory_resource whose every block belongs to one owner, e.g.
//     numaware::PsmResource on_node1{numaware::HeapOwner::node(1)};
//     std::pmr::vector<float> v{&on_node1};
// The owner is checked at construction (Error("owner") as psm_alloc).
// Resources are equal when their owners are: a container then keeps its
// memory with the owner it was built for.
class PsmResource : public std::pmr::memory_resource {
public:
    explicit PsmResource(HeapOwner owner);
    HeapOwner owner() const noexcept { return owner_; }

protected:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override;
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override;

private:
    HeapOwner owner_;
};

namespace detail {
void* psm_allocate_array(std::size_t count, std::size_t size, std::size_t alignment, HeapOwner owner);
}

// An STL allocator bound to one owner: every block of the container belongs
// to it. Equal when the owners are equal. Like std::pmr::polymorphic_allocator
// it is not propagated on container assignment or swap: a container's owner
// is fixed when it is built.
template <class T>
class PsmAllocator {
public:
    using value_type = T;

    explicit PsmAllocator(HeapOwner owner) noexcept : owner_(owner) {}
    template <class U>
    PsmAllocator(const PsmAllocator<U>& other) noexcept : owner_(other.owner()) {}

    T* allocate(std::size_t n) {
        return static_cast<T*>(detail::psm_allocate_array(n, sizeof(T), alignof(T), owner_));
    }
    void deallocate(T* p, std::size_t) { psm_free(p); }

    HeapOwner owner() const noexcept { return owner_; }

    template <class U>
    friend bool operator==(const PsmAllocator& a, const PsmAllocator<U>& b) noexcept {
        return a.owner() == b.owner();
    }

private:
    HeapOwner owner_;
};

}  // namespace numaware
