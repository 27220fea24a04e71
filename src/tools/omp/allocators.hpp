// tools/omp/allocators.hpp — the OpenMP memory allocators (OpenMP 5.0,
// 2.11 and 3.7) as pure data: an allocator's memory space and traits read
// from omp_init_allocator's arguments, the nodes a memory space means on
// the machine model, and where one allocation goes. omp_api_alloc.cpp
// carries the decision out on numaware's heap and placement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "numaware/machine.hpp"

namespace numaware::omp {

// The numbers are omp.h's.
enum class MemSpace : std::uintptr_t { default_ = 0, large_cap = 1, const_ = 2, high_bw = 3, low_lat = 4 };
enum class Fallback { default_mem, null, abort, allocator };
enum class Partition { environment, nearest, blocked, interleaved };

struct AllocatorSpec {
    MemSpace space = MemSpace::default_;
    std::size_t alignment = 1;            // a power of two
    std::uint64_t pool_size = 0;          // bytes live at once; 0: no limit
    Fallback fallback = Fallback::default_mem;
    std::uintptr_t fb_data = 0;           // allocator_fb's allocator handle
    bool pinned = false;
    Partition partition = Partition::environment;
};

// One (key, value) pair of omp_alloctrait_t, numbered as omp.h numbers them.
struct AllocTrait {
    std::uintptr_t key = 0;
    std::uintptr_t value = 0;
};

// The allocator that omp_init_allocator(space, traits) makes, or nullopt
// (it returns omp_null_allocator) for an unknown memory space, key or
// value, an alignment that is not a power of two, or allocator_fb without
// fb_data (the standard requires it; libgomp accepts it); fb_data with
// another fallback is ignored. `why` names the first problem.
std::optional<AllocatorSpec> read_allocator(std::uintptr_t space, std::span<const AllocTrait> traits,
                                            std::string* why = nullptr);

// The predefined allocators 1..8 (omp_default_mem_alloc ... 
// omp_thread_mem_alloc): their memory space and default traits; nullopt
// for any other handle.
std::optional<AllocatorSpec> predefined_allocator(std::uintptr_t handle);

// The nodes (OS indices, ascending) whose memory a memory space is:
//   default, const, low_lat  every node with memory of the lowest tier
//                            (DRAM, or whatever the machine's fastest is);
//   large_cap                the nodes of the highest tier when there are
//                            several tiers (CXL, NVM), else as default;
//   high_bw                  the nodes of kind HBM or MCDRAM; none on a
//                            machine without them (allocations take the
//                            fallback, as the standard says for an
//                            unavailable memory space).
std::vector<unsigned> memspace_nodes(const Machine& machine, MemSpace space);

// Where one allocation goes.
struct AllocPlace {
    enum class Kind {
        none,          // the memory space has no node: take the fallback
        environment,   // the process's own allocation (first touch)
        node,          // one node's heap arena (`node`)
        interleave,    // a mapping of its own, pages round robin over `nodes`
        block,         // a mapping of its own, one contiguous part per node of `nodes`
    };
    Kind kind = Kind::environment;
    unsigned node = 0;
    std::vector<unsigned> nodes;
    bool operator==(const AllocPlace&) const = default;
};

// The decision for an allocator of `spec` called from a thread on node
// `thread_node` (-1: not known): environment keeps the process's policy in
// the default memory space and takes the nearest node of any other;
// nearest takes the space's node nearest the thread (by SLIT distance,
// ties to the lower index; the first node when the thread's is unknown);
// interleaved and blocked spread a mapping over the space's nodes (one
// node: that node's arena).
AllocPlace place_allocation(const AllocatorSpec& spec, const Machine& machine, int thread_node);

}  // namespace numaware::omp
