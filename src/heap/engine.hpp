// heap/engine.hpp — the allocator engine of the partitioned heap.
//
// One engine per process. Memory is partitioned into arenas; every arena is
// bound to one NUMA node and no page ever holds blocks of two arenas, so no
// page is shared across nodes. Arena ids 0..node_count()-1 are the node
// arenas (owner = that node); further arenas are created for other owners
// (a team rank), each bound to its rank's node.
//
// Everything here is noexcept and never calls malloc, so the LD_PRELOAD
// malloc shim can be built on it.
//
// The numbers (details in the file named):
//  - 96 size classes: 16 B steps to 256 B, then 12.5% steps to 256 KiB
//    (size_classes.hpp); blocks above 256 KiB are large: extents of
//    regions of 32 MiB or more, bound and verified, cached when freed,
//    reused best-fit, split and coalesced (large_cache.cpp).
//  - Thread caches hold blocks of the thread's node arena only, at most two
//    batches per class (batch = 32 KiB / size, 8..64 blocks).
//  - Page heaps grow by 8 MiB chunks, each bound (mbind MPOL_BIND) to the
//    arena's node and verified before use; spans are runs of 64 KiB pages.
//  - Release: beyond 16 MiB of touched free spans per arena, freed spans
//    go back with MADV_DONTNEED (their range stays bound). Freed large
//    extents go back after 1 s, or at once where live + freed large bytes
//    would pass 19/16 of the arena's highest live large bytes of the last
//    second (16 MiB are always allowed). release_free_memory (malloc_trim)
//    gives everything back now.
//  - The page map is a 2-level radix tree over 48-bit addresses. The public C++/C API (numaware/heap.hpp,
// numaware/c/heap.h) wraps it and adds errors that name their input.
#pragma once

#include <cstddef>
#include <cstdint>

namespace numaware::heap {

using ArenaId = std::uint16_t;
inline constexpr ArenaId no_arena = 0xffff;
inline constexpr unsigned max_nodes = 1024;    // nodes the engine can serve: NodeSet's, the kernel's MAX_NUMNODES
inline constexpr unsigned max_arenas = 2046;   // node arenas + owner arenas (the page map's 11-bit tag)

// Node count as the kernel reports it (/sys/devices/system/node/possible).
unsigned node_count() noexcept;

// The arena that owns node `node`'s memory; no_arena (errno EINVAL) if the
// node does not exist, has no memory, or its memory is not in this
// process's cpuset.
ArenaId node_arena(unsigned node) noexcept;
// The node whose memory serves the CPUs of node `node`: `node` itself when
// its memory may hold this process's pages, else the nearest node whose
// memory may (SLIT distance, ties to the lower index), as the kernel
// serves the page faults of those CPUs: a node without memory, or one
// whose memory is outside this process's cpuset. max_nodes (errno EINVAL)
// for a node that is not online.
unsigned serving_node(unsigned node) noexcept;
// Whether `node` has memory that this process's cpuset does not allow it
// to use (/proc/self/status Mems_allowed_list at start-up).
bool memory_disallowed(unsigned node) noexcept;
// A new arena for owner `owner_tag` (e.g. a team rank), bound to `node`.
// no_arena with errno EINVAL/ENOSPC on failure.
ArenaId create_arena(unsigned node, std::uint32_t owner_tag) noexcept;

// nullptr with errno ENOMEM (or EINVAL for a bad arena/alignment) on failure.
void* allocate(std::size_t bytes, ArenaId arena) noexcept;
void* allocate_aligned(std::size_t bytes, std::size_t alignment, ArenaId arena) noexcept;
// The arena of the calling thread's current node (what malloc uses).
void* allocate_local(std::size_t bytes) noexcept;
// allocate / allocate_local with every byte zero (calloc). Memory known to
// be fresh from the kernel is not cleared again.
void* allocate_zeroed(std::size_t bytes, ArenaId arena) noexcept;
void* allocate_local_zeroed(std::size_t bytes) noexcept;
void deallocate(void* p) noexcept;                  // p may be nullptr
void* reallocate(void* p, std::size_t bytes) noexcept;   // keeps p's arena
std::size_t usable_size(const void* p) noexcept;    // 0 for a pointer not from the engine

struct BlockInfo {
    ArenaId arena = no_arena;
    unsigned node = 0;
    std::uint32_t owner_tag = 0;   // the node for node arenas
    bool large = false;            // a large block (over 256 KiB, in a region)
    std::size_t usable = 0;
};
// false if p is not a live block of the engine.
bool block_info(const void* p, BlockInfo& out) noexcept;

struct NodeStats {
    std::uint64_t bytes_in_use = 0;    // usable bytes of live blocks
    std::uint64_t bytes_cached = 0;    // free bytes held in thread caches, central lists and page heap
    std::uint64_t pages_mapped = 0;    // OS pages mapped for this node
    double fragmentation = 0;          // bytes mapped / bytes in use (1.0 = none); 0 when nothing is in use
};
bool node_stats(unsigned node, NodeStats& out) noexcept;

// Returns the calling thread's cached blocks to their central lists.
void flush_thread_cache() noexcept;
// Gives every free page the engine still holds resident back to the kernel
// now (malloc_trim), instead of after the decay period; the bytes released.
std::size_t release_free_memory() noexcept;
// Walks every arena's central lists and large cache under their locks and
// checks the engine's invariants (span, class and page-map tags agree, no
// span of one arena in another's lists, free blocks on block boundaries,
// cached extents binned, aged, coalesced and mapped to themselves); false
// at the first that does not hold. Tests call it after stress.
bool check_heap() noexcept;


// Additions for the malloc shim and callers that want the local arena.
// The arena of the calling thread's current node (no_arena while the
// engine starts up).
ArenaId local_arena() noexcept;
// allocate_aligned in the local arena, through the thread cache when the
// alignment is served by a size class (<= 64 KiB).
void* allocate_local_aligned(std::size_t bytes, std::size_t alignment) noexcept;
// What deallocate does with a pointer the engine does not own (default:
// nothing). The malloc shim hands such pointers to glibc.
void set_foreign_free(void (*hook)(void*)) noexcept;

}  // namespace numaware::heap
