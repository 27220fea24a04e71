// tasks/region_homes.cpp — region homes (see region_homes.hpp).
#include "tasks/region_homes.hpp"

#include <algorithm>
#include <array>
#include <iterator>

#include "heap/engine.hpp"
#include "placement/page_locations.hpp"

namespace numaware::tasks::detail {

namespace {
constexpr std::size_t max_samples = 16;
constexpr unsigned max_node_slots = 256;
constexpr std::size_t chunk_entries = 4096;
}  // namespace

HomeEntry* RegionHomes::new_entry() {
    if (chunks_.empty() || chunk_used_ == chunk_entries) {
        chunks_.push_back(std::make_unique<HomeEntry[]>(chunk_entries));
        chunk_used_ = 0;
    }
    return &chunks_.back()[chunk_used_++];
}

HomeEntry& RegionHomes::lookup(std::uint64_t start, std::uint64_t bytes) {
    if (HomeEntry* found = table_.find(start)) {
        // The same start named with another size after the first region
        // was forgotten by the tracker: keep the larger extent for queries.
        if (found->bytes != bytes) found->bytes = std::max(found->bytes, bytes);
        return *found;
    }
    HomeEntry& e = *new_entry();
    e.start = start;
    e.bytes = bytes;
    table_.insert(&e);
    auto r = ranges_.empty() ? ranges_.end() : ranges_.upper_bound(start);
    if (r != ranges_.begin() && start < std::prev(r)->second.end) {
        e.registered = true;
        e.home.store(static_cast<int>(std::prev(r)->second.node), std::memory_order_relaxed);
    } else {
        e.home.store(resolve(start, bytes), std::memory_order_relaxed);
    }
    return e;
}

int RegionHomes::resolve(std::uint64_t start, std::uint64_t bytes) const {
    heap::BlockInfo info;
    if (heap::block_info(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(start)), info))
        return static_cast<int>(info.node);
    if (kernel_homes_) return query_kernel(start, bytes);
    return unallocated;
}

int RegionHomes::query_kernel(std::uint64_t start, std::uint64_t bytes) const {
    const std::uint64_t page = os_.page_size();
    if (page == 0 || bytes == 0) return unallocated;
    const std::uint64_t first = start / page;
    const std::uint64_t last = (start + bytes - 1) / page;
    if (first == last && first == memo_page_) return memo_node_;
    const std::uint64_t pages = last - first + 1;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(pages, max_samples));
    std::array<void*, max_samples> addrs{};
    std::array<int, max_samples> status{};
    for (std::size_t i = 0; i < n; ++i) {
        // Evenly spread: the i-th of n samples over `pages` pages.
        const std::uint64_t p = n == 1 ? first : first + (pages - 1) * i / (n - 1);
        addrs[i] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(p * page));
    }
    // Untouched memory is an answer here (DEP's virtual socket), not a page
    // in transit: no settling.
    if (locate_pages(os_, addrs.data(), n, status.data(), PagesExpected::maybe_absent) != 0) return unallocated;
    std::array<unsigned, max_node_slots> votes{};
    int best = unallocated;
    for (std::size_t i = 0; i < n; ++i) {
        const int s = status[i];
        if (s < 0 || s >= static_cast<int>(max_node_slots)) continue;   // absent or an error
        ++votes[static_cast<std::size_t>(s)];
        if (best == unallocated || votes[static_cast<std::size_t>(s)] > votes[static_cast<std::size_t>(best)] ||
            (votes[static_cast<std::size_t>(s)] == votes[static_cast<std::size_t>(best)] && s < best))
            best = s;
    }
    // Only a present page is remembered: an absent one may be touched next.
    if (n == 1 && best != unallocated) {
        memo_page_ = first;
        memo_node_ = best;
    }
    return best;
}

void RegionHomes::register_range(std::uint64_t start, std::uint64_t bytes, unsigned node) {
    const std::uint64_t end = start + bytes;
    // Registered ranges stay disjoint: the newest registration wins, and the
    // parts of older ranges outside it are kept.
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin()) --it;
    while (it != ranges_.end() && it->first < end) {
        const std::uint64_t s = it->first;
        const Range r = it->second;
        if (r.end <= start) {
            ++it;
            continue;
        }
        it = ranges_.erase(it);
        if (s < start) ranges_.emplace(s, Range{start, r.node});
        if (r.end > end) it = ranges_.emplace(end, Range{r.end, r.node}).first;
    }
    ranges_.emplace(start, Range{end, node});
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
        const std::size_t used = c + 1 == chunks_.size() ? chunk_used_ : chunk_entries;
        for (std::size_t k = 0; k < used; ++k) {
            HomeEntry& e = chunks_[c][k];
            if (e.start >= start && e.start < end) {
                e.registered = true;
                e.home.store(static_cast<int>(node), std::memory_order_relaxed);
            }
        }
    }
}

void RegionHomes::first_written(HomeEntry& e, unsigned runner_node) {
    if (e.registered || e.home.load(std::memory_order_relaxed) != unallocated) return;
    const int home = kernel_homes_ ? query_kernel(e.start, e.bytes) : static_cast<int>(runner_node);
    e.home.store(home, std::memory_order_relaxed);
}

}  // namespace numaware::tasks::detail
