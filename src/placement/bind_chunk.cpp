// placement/bind_chunk.cpp — bind one allocator chunk to one node and prove it.
//
// The heap engine runs inside malloc, so this path keeps its working state
// on the stack: fixed-size batches of the page-location query, no containers.
#include "placement/bind_chunk.hpp"

#include <cerrno>
#include <cstdint>

#include "numaware/nodeset.hpp"
#include "os/os.hpp"
#include "placement/page_locations.hpp"

namespace numaware {

namespace {
// Pages per query: large enough that an 8 MiB chunk takes a few calls,
// small enough (2 KiB of status here, 4 KiB of addresses in the query) for
// any thread's stack.
constexpr std::size_t kQueryBatch = 512;
}  // namespace

int bind_range_to_node(void* addr, std::size_t bytes, unsigned node, os::Os& os,
                       ChunkBindReport* out) noexcept {
    ChunkBindReport local;
    ChunkBindReport& r = out != nullptr ? *out : local;
    r = ChunkBindReport{};
    const std::size_t page = os.page_size();
    if (addr == nullptr || bytes == 0 || node >= NodeSet::max_nodes ||
        reinterpret_cast<std::uintptr_t>(addr) % page != 0) {
        r.error = EINVAL;
        return r.error;
    }
    const NodeSet target{node};
    if (int err = os.mbind(addr, bytes, os::PolicyMode::bind, target, os::mf_move | os::mf_strict)) {
        r.error = err;
        return err;
    }
    os::PolicyQuery q;
    if (int err = os.get_mempolicy(addr, q)) {
        r.error = err;
        return err;
    }
    r.mode = q.mode;
    r.policy_is_node = q.mode == os::PolicyMode::bind && q.nodes == target;

    // Pages already present (a chunk reused after a fork, a range the caller
    // touched) must have moved; fresh pages all read "absent".
    int status[kQueryBatch];
    char* const base = static_cast<char*>(addr);
    const std::size_t count = (bytes + page - 1) / page;
    for (std::size_t first = 0; first < count; first += kQueryBatch) {
        const std::size_t n = count - first < kQueryBatch ? count - first : kQueryBatch;
        if (int err = locate_range(os, base + first * page, n, status, PagesExpected::maybe_absent)) {
            r.error = err;
            return err;
        }
        r.pages_checked += n;
        for (std::size_t i = 0; i < n; ++i) {
            if (os::is_absent_status(status[i])) continue;
            ++r.pages_present;
            if (status[i] != static_cast<int>(node)) ++r.pages_misplaced;
        }
    }
    if (!r.policy_is_node || r.pages_misplaced != 0) r.error = EIO;
    return r.error;
}

}  // namespace numaware
