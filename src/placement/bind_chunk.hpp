// placement/bind_chunk.hpp — binding an allocator's chunk to one node and
// proving it. Internal: the heap engine is its one user.
#pragma once

#include <cstddef>

#include "numaware/mempolicy.hpp"

namespace numaware::os {
class Os;
}

namespace numaware {

// What bind_range_to_node() found: the policy the kernel reports for the
// range after the bind, and how many present pages sit on another node.
struct ChunkBindReport {
    int error = 0;                   // 0, or the errno of the failed step
    MemoryPolicyMode mode = MemoryPolicyMode::default_;   // get_mempolicy(MPOL_F_ADDR) at addr
    bool policy_is_node = false;     // mode == bind and the node set is exactly {node}
    std::size_t pages_checked = 0;   // pages queried with move_pages
    std::size_t pages_present = 0;   // of those, present in memory
    std::size_t pages_misplaced = 0; // present on a node other than `node`
};

// Binds [addr, addr+bytes) to `node` (mbind MPOL_BIND with MOVE|STRICT),
// then proves it: the policy read back with get_mempolicy(MPOL_F_ADDR) must
// be bind:{node}, and every present page (locate_range, maybe absent, in
// fixed-size stack batches) must be on `node`. Returns 0 or an errno (EIO
// when the proof fails). Never throws; apart from what the Os
// implementation does inside mbind it makes no heap allocation, so an
// allocator can call it. `addr` must be page-aligned. `out` may be nullptr.
int bind_range_to_node(void* addr, std::size_t bytes, unsigned node, os::Os& os,
                       ChunkBindReport* out) noexcept;

}  // namespace numaware
