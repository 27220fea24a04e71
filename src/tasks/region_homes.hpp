// tasks/region_homes.hpp — where regions live (their home node).
//
// A region's home is found once and cached, in this order:
//   1. a range given to register_range() that contains the region's start;
//   2. the partitioned heap, for a region starting at a live heap block
//      (heap::block_info, which never throws);
//   3. with kernel homes on, the kernel: up to 16 pages sampled evenly over
//      the region are queried with move_pages; the most frequent node wins
//      (ties to the lower index); no page present -> unallocated.
// Otherwise the region is `unallocated`. After a task that writes an
// unallocated region completes, first_written() re-queries the kernel or,
// with kernel homes off, gives the region the writer's node.
//
// Not thread-safe except HomeEntry::home, which workers may read at any
// time: the caller serialises everything else (the scheduler lock). Entries
// are never erased, so a HomeEntry pointer stays valid for the table's
// life.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "numaware/task_policy.hpp"
#include "os/os.hpp"
#include "tasks/deps.hpp"

namespace numaware::tasks::detail {

struct HomeEntry {
    std::uint64_t start = 0;
    std::uint64_t bytes = 0;
    std::atomic<int> home{unallocated};
    bool registered = false;   // home from register_range(): never re-queried
};

class RegionHomes {
public:
    RegionHomes(os::Os& os, bool kernel_homes) : os_(os), kernel_homes_(kernel_homes) {}

    // The entry of the region starting at `start`, resolved on first use.
    HomeEntry& lookup(std::uint64_t start, std::uint64_t bytes);

    // Every region starting in [start, start+bytes) lives on `node`,
    // including entries already resolved. The caller checks the node.
    void register_range(std::uint64_t start, std::uint64_t bytes, unsigned node);

    // A task running on `runner_node` wrote the region and has finished.
    void first_written(HomeEntry& e, unsigned runner_node);

    // Kernel query of [start, start+bytes): node or unallocated.
    int query_kernel(std::uint64_t start, std::uint64_t bytes) const;

    bool kernel_homes() const { return kernel_homes_; }
    std::size_t size() const { return table_.size(); }

private:
    int resolve(std::uint64_t start, std::uint64_t bytes) const;
    HomeEntry* new_entry();

    os::Os& os_;
    bool kernel_homes_;
    PagedTable<HomeEntry> table_;   // by start address; entries live in chunks and never move
    std::vector<std::unique_ptr<HomeEntry[]>> chunks_;
    std::size_t chunk_used_ = 0;
    // The last kernel query that found a page, for regions inside one page:
    // small regions packed in a page share one move_pages call.
    mutable std::uint64_t memo_page_ = ~std::uint64_t{0};
    mutable int memo_node_ = unallocated;
    struct Range {
        std::uint64_t end;
        unsigned node;
    };
    std::map<std::uint64_t, Range> ranges_;   // registered, disjoint, by start
};

}  // namespace numaware::tasks::detail
