// tasks/region_homes.cpp — region homes (see region_homes.hpp).
#include "tasks/region_homes.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <iterator>

#include "heap/engine.hpp"
#include "numaware/placement.hpp"
#include "placement/page_locations.hpp"
#include "placement/placed_ranges.hpp"
#include "util/coarse_clock.hpp"

namespace numaware::tasks::detail {

namespace {
constexpr std::size_t max_samples = 16;
constexpr unsigned max_node_slots = 256;
constexpr std::size_t chunk_entries = 4096;
}  // namespace

HomeEntry* RegionHomes::new_entry() {
    if (!free_entries_.empty()) {
        HomeEntry* e = free_entries_.back();
        free_entries_.pop_back();
        e->free = false;
        // The next one, asked for now (to write): a finishing worker read
        // or wrote its line last, and the next new entry writes it first.
        if (!free_entries_.empty()) __builtin_prefetch(free_entries_.back(), 1);
        return e;
    }
    if (chunks_.empty() || chunk_used_ == chunk_entries) {
        chunks_.push_back(std::make_unique<HomeEntry[]>(chunk_entries));
        chunk_used_ = 0;
        sharers_.resize(chunks_.size() * chunk_entries, 0);
    }
    HomeEntry* e = &chunks_.back()[chunk_used_];
    e->index = static_cast<std::uint32_t>((chunks_.size() - 1) * chunk_entries + chunk_used_);
    ++chunk_used_;
    return e;
}

HomeEntry& RegionHomes::entry_for(std::uint64_t start, std::uint64_t bytes) {
    HomeEntry& e = *new_entry();
    e.start = start;
    e.bytes = bytes;
    ++in_use_;
    return e;
}

// The sources in the order of the header's list; each is asked once.
HomeEntry& RegionHomes::add(std::uint64_t start, std::uint64_t bytes) {
    const auto r = ranges_.empty() ? ranges_.end() : ranges_.upper_bound(start);
    if (r != ranges_.begin() && start < std::prev(r)->second.end) {
        HomeEntry& e = entry_for(start, bytes);
        e.registered.store(true, std::memory_order_relaxed);
        e.home.store(static_cast<int>(std::prev(r)->second.node), std::memory_order_relaxed);
        return e;
    }
    heap::BlockInfo info;
    if (heap::block_info(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(start)), info)) {
        HomeEntry& e = entry_for(start, bytes);
        e.home.store(static_cast<int>(info.node), std::memory_order_relaxed);
        return e;
    }
    if (auto placed = placed_here(start, bytes)) {
        HomeEntry& e = entry_for(start, bytes);
        set_from_placed(e, *placed);
        return e;
    }
    const std::uint64_t page = os_.page_size();
    const bool one_page = page != 0 && start / page == (start + bytes - 1) / page;
    if (kernel_homes_) {
        // A region inside one page is on that page's node: it shares the
        // page's entry, asked for when the entry is made and asked again
        // (the page memo permitting) as each region joins it, written only
        // when the answer changed. Sampling keeps an entry per region.
        if (one_page && sample_pages_ == 0) {
            HomeEntry& e = page_entry(start / page, page);
            set_from_kernel(e, PagesExpected::maybe_absent);
            return e;
        }
        HomeEntry& e = entry_for(start, bytes);
        set_from_kernel(e, PagesExpected::maybe_absent);
        return e;
    }
    if (one_page) return page_entry(start / page, page);
    HomeEntry& e = entry_for(start, bytes);
    if (page != 0) e.home.store(learned_home(start / page), std::memory_order_relaxed);
    return e;
}

HomeEntry& RegionHomes::page_entry(std::uint64_t number, std::uint64_t page) {
    HomeEntry* e = last_page_entry_;
    if (number != last_page_) {
        const auto it = pages_.find(number);
        if (it != pages_.end()) {
            e = it->second;
        } else {
            e = new_entry();
            e->start = number * page;
            e->bytes = page;
            e->page = true;
            // What a forgotten entry taught (only without kernel homes;
            // with them the caller asks the kernel).
            const auto known = learned_.find(number);
            e->home.store(known != learned_.end() ? known->second : unallocated, std::memory_order_relaxed);
            ++in_use_;
            pages_.emplace(number, e);
        }
        last_page_ = number;
        last_page_entry_ = e;
    }
    ++sharers_[e->index];
    return *e;
}

int RegionHomes::learned_home(std::uint64_t number) {
    if (!pages_.empty()) {
        const auto it = pages_.find(number);
        if (it != pages_.end()) {
            const int home = it->second->home.load(std::memory_order_relaxed);
            if (home != unallocated) return home;
        }
    }
    if (learned_.empty()) return unallocated;
    if (number != asked_page_) {
        const auto it = learned_.find(number);
        asked_page_ = number;
        asked_home_ = it != learned_.end() ? it->second : unallocated;
    }
    return asked_home_;
}

// The node holding most of a spread's placed bytes (ties to the lower
// index; parts ascend by node), or unallocated when none is placed.
namespace {
int majority_home(const std::vector<NodeBytes>& parts) {
    int best = unallocated;
    std::uint64_t best_bytes = 0;
    for (const NodeBytes& p : parts)
        if (p.node != unallocated && p.bytes > best_bytes) {
            best = p.node;
            best_bytes = p.bytes;
        }
    return best;
}
}  // namespace

void RegionHomes::publish_home(HomeEntry& e, int home, PageSpread&& spread) {
    const PageSpread* kept = nullptr;
    if (!spread.parts.empty()) {
        e.spreads.push_back(std::make_unique<PageSpread>(std::move(spread)));
        kept = e.spreads.back().get();
    }
    e.spread.store(kept, std::memory_order_release);
    e.home.store(home, std::memory_order_relaxed);
}

// A region inside ranges that placement remembers: its bytes per node from
// there, page by page, as the kernel reported them when they were placed.
std::optional<std::vector<std::pair<unsigned, std::size_t>>> RegionHomes::placed_here(std::uint64_t start,
                                                                                       std::uint64_t bytes) const {
    if (!placement_detail::anything_placed()) return std::nullopt;   // inline: most processes place nothing
    if (&os_ != &os::linux_os()) return std::nullopt;   // a fake's addresses are not what placement remembers
    return placed_bytes(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(start)), bytes);
}

void RegionHomes::set_from_placed(HomeEntry& e, const std::vector<std::pair<unsigned, std::size_t>>& placed) {
    PageSpread spread;
    for (const auto& [node, bytes] : placed) spread.parts.push_back(NodeBytes{static_cast<int>(node), bytes});
    spread.total = e.bytes;
    const int home = majority_home(spread.parts);
    if (spread.parts.size() == 1) spread.parts.clear();   // every byte at `home`: no spread needed
    set_home(e, home, std::move(spread));
}

void RegionHomes::set_from_kernel(HomeEntry& e, PagesExpected expected) {
    // A page's entry that the page memo answers (the usual case as regions
    // join it): no query, and set_home leaves an unchanged entry alone.
    if (e.page && sample_pages_ == 0) {
        if (const int known = remembered(e.start / e.bytes, coarse_now_ns()); known != no_memo) {
            set_home(e, known, PageSpread{});
            return;
        }
    }
    PageSpread spread;
    const int home = query_kernel(e.start, e.bytes, spread, expected);
    set_home(e, home, std::move(spread));
}

int RegionHomes::kernel_refuses_homes(os::Os& os) {
    const std::uint64_t page = os.page_size();
    if (page == 0) return 0;
    // A page of this thread's stack: present, and ours.
    int here = 0;
    const auto at = reinterpret_cast<std::uintptr_t>(&here) / page * page;
    int status = 0;
    const int err = locate_range(os, reinterpret_cast<const void*>(at), 1, &status, PagesExpected::maybe_absent);
    return err == EPERM || err == ENOSYS ? err : 0;
}

int RegionHomes::query_kernel(std::uint64_t start, std::uint64_t bytes, PageSpread& spread, PagesExpected expected) {
    spread = PageSpread{};
    const std::uint64_t page = os_.page_size();
    if (page == 0 || bytes == 0) return unallocated;
    if (sample_pages_ != 0) return query_sampled(start, bytes, expected);
    const std::uint64_t first = start / page;
    const std::uint64_t last = (start + bytes - 1) / page;
    std::uint64_t now_ns = 0;
    if (first == last && page_memo_ns_ > 0) {
        now_ns = coarse_now_ns();
        if (const int known = remembered(first, now_ns); known != no_memo) return known;
    }
    const std::uint64_t pages = last - first + 1;
    if (pages > (std::uint64_t{1} << 32)) return query_sampled(start, bytes, expected);   // 16 TiB: no table that large
    status_.assign(static_cast<std::size_t>(pages), 0);
    // Untouched memory is an answer here (DEP's virtual socket), not a page
    // in transit: no settling, but for one more question after a writer.
    if (locate_range(os_, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(first * page)),
                     static_cast<std::size_t>(pages), status_.data(), expected) != 0)
        return unallocated;
    // Bytes of [start, start + bytes) on each page, by the page's node.
    std::vector<NodeBytes>& parts = spread.parts;
    for (std::uint64_t i = 0; i < pages; ++i) {
        const std::uint64_t lo = std::max(start, (first + i) * page);
        const std::uint64_t hi = std::min(start + bytes, (first + i + 1) * page);
        const int s = status_[static_cast<std::size_t>(i)];
        const int node = s >= 0 && s < static_cast<int>(max_node_slots) ? s : unallocated;   // absent or an error
        auto it = std::lower_bound(parts.begin(), parts.end(), node,
                                   [](const NodeBytes& a, int n) { return a.node < n; });
        if (it == parts.end() || it->node != node) it = parts.insert(it, NodeBytes{node, 0});
        it->bytes += hi - lo;
    }
    spread.total = bytes;
    const int best = majority_home(parts);
    // One part: every byte is at `best` (or none is placed), no spread needed.
    if (parts.size() == 1) parts.clear();
    // Only a present page is remembered: an absent one may be touched next.
    if (pages == 1 && best != unallocated && page_memo_ns_ > 0) memo_[first % memo_slots] = PageMemo{first, best, now_ns};
    return best;
}

int RegionHomes::query_sampled(std::uint64_t start, std::uint64_t bytes, PagesExpected expected) {
    const std::uint64_t page = os_.page_size();
    const std::uint64_t first = start / page;
    const std::uint64_t last = (start + bytes - 1) / page;
    const std::uint64_t pages = last - first + 1;
    const std::size_t want = sample_pages_ != 0 ? sample_pages_ : max_samples;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(pages, want));
    std::vector<void*> addrs(n);
    status_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        // Evenly spread: the i-th of n samples over `pages` pages.
        const std::uint64_t p = n == 1 ? first : first + (pages - 1) * i / (n - 1);
        addrs[i] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(p * page));
    }
    if (locate_pages(os_, addrs.data(), n, status_.data(), expected) != 0) return unallocated;
    std::array<unsigned, max_node_slots> votes{};
    int best = unallocated;
    for (std::size_t i = 0; i < n; ++i) {
        const int s = status_[i];
        if (s < 0 || s >= static_cast<int>(max_node_slots)) continue;   // absent or an error
        ++votes[static_cast<std::size_t>(s)];
        if (best == unallocated || votes[static_cast<std::size_t>(s)] > votes[static_cast<std::size_t>(best)] ||
            (votes[static_cast<std::size_t>(s)] == votes[static_cast<std::size_t>(best)] && s < best))
            best = s;
    }
    return best;
}

std::uint64_t cross_node_bytes(const HomeEntry& e, std::uint64_t dep_bytes, AccessMode access, unsigned node) {
    const PageSpread* spread = e.spread.load(std::memory_order_acquire);
    if (spread == nullptr) {
        const int home = e.home.load(std::memory_order_relaxed);
        if (home == unallocated && access != AccessMode::in) return 0;   // first touch here
        return home != static_cast<int>(node) ? dep_bytes : 0;
    }
    std::uint64_t remote = 0;
    for (const NodeBytes& p : spread->parts) {
        if (p.node == unallocated) {
            if (access == AccessMode::in) remote += p.bytes;
        } else if (p.node != static_cast<int>(node)) {
            remote += p.bytes;
        }
    }
    if (remote == 0 || spread->total == 0) return 0;
    if (remote >= spread->total || dep_bytes == spread->total) return std::min(remote, dep_bytes);
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(dep_bytes) * static_cast<double>(remote) /
                                                   static_cast<double>(spread->total)));
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
            const bool inside = e.page ? e.start >= start && e.start + e.bytes <= end : e.start >= start && e.start < end;
            if (!e.free && inside) {
                e.registered.store(true, std::memory_order_relaxed);
                e.spread.store(nullptr, std::memory_order_release);
                e.home.store(static_cast<int>(node), std::memory_order_relaxed);
            }
        }
    }
}

void RegionHomes::forget(std::span<void* const> entries) {
    const std::uint64_t page = os_.page_size();
    // Finishing workers read or wrote these lines last: ask for a few
    // ahead (to read: a page's entry is only written once its last region
    // goes).
    constexpr std::size_t ahead = 8;
    for (std::size_t k = 0; k < std::min(ahead, entries.size()); ++k) __builtin_prefetch(entries[k]);
    for (std::size_t k = 0; k < entries.size(); ++k) {
        if (k + ahead < entries.size()) __builtin_prefetch(entries[k + ahead]);
        HomeEntry& e = *static_cast<HomeEntry*>(entries[k]);
        if (e.free) continue;
        if (e.page) {
            if (--sharers_[e.index] != 0) continue;   // other regions of the page are in use
            pages_.erase(e.start / page);
            if (last_page_entry_ == &e) {
                last_page_ = no_page;
                last_page_entry_ = nullptr;
            }
        }
        // Without the kernel to ask again, what the entry learned stays,
        // by page. (No unfinished task names the region: no writer can
        // set its home meanwhile.)
        const int home = e.home.load(std::memory_order_relaxed);
        if (!kernel_homes_ && page != 0 && home != unallocated && !e.registered.load(std::memory_order_relaxed)) {
            const std::uint64_t number = e.start / page;
            if (number != learned_last_page_) {
                learned_last_page_ = number;
                if (learned_.size() >= learned_pages_max && !learned_.contains(number)) learned_.clear();
                if (learned_.emplace(number, home).second) asked_page_ = no_page;   // the page's first writer wins
            }
        }
        e.free = true;
        e.page = false;
        e.start = 0;
        e.bytes = 0;
        e.home.store(unallocated, std::memory_order_relaxed);
        e.spread.store(nullptr, std::memory_order_relaxed);
        e.registered.store(false, std::memory_order_relaxed);
        e.spreads.clear();
        free_entries_.push_back(&e);
        --in_use_;
    }
}

void RegionHomes::first_written(HomeEntry& e, unsigned runner_node) {
    if (e.registered.load(std::memory_order_relaxed)) return;
    if (!kernel_homes_) {
        // The first writer to finish places it; any thread may call this.
        // (Read first: a compare-and-swap takes the line even when it fails.)
        int none = unallocated;
        if (e.home.load(std::memory_order_relaxed) == unallocated)
            e.home.compare_exchange_strong(none, static_cast<int>(runner_node), std::memory_order_relaxed);
        return;
    }
    if (!written_settled(e)) set_from_kernel(e, PagesExpected::written);   // else placed already, every page
}

}  // namespace numaware::tasks::detail
