// tasks/region_homes.hpp — where regions live (their home node), page by
// page.
//
// A region's home is found once and cached, in this order:
//   1. a range given to register_range() that contains the region's start;
//   2. the partitioned heap, for a region starting at a live heap block
//      (heap::block_info, which never throws): the block's arena node;
//   3. on the live system, placement's remembered ranges
//      (numaware/placement.hpp, placed_bytes), for a region wholly inside
//      ranges that apply() placed: its bytes per node, page by page, with a
//      PageSpread when they lie on more than one node;
//   4. with kernel homes on, the kernel: every page of the region is asked
//      for with move_pages, in batches (locate_range); a region inside one
//      page shares the page's entry with the other such regions in use
//      there, and the page's answer (see add()). The home is the node
//      holding most of the region's present bytes (ties to the lower index);
//      no page present -> unallocated. When the pages lie on more than one
//      node, or only some are present, the entry also keeps the bytes per
//      node (PageSpread) and cross-node bytes are counted from it. With
//      `sample_pages` > 0 only that many pages, spread evenly, are asked and
//      the majority wins, without a PageSpread (the documented approximate
//      mode of RuntimeOptions::home_sample_pages).
//   5. with kernel homes off, the page's: a region inside one page shares
//      the page's entry with the other regions in use there (see add()),
//      and any region takes the node that a writer gave its first page,
//      in an entry in use or a forgotten one (see forget()).
// Otherwise the region is `unallocated`. After a task that writes an
// unallocated region completes, first_written() asks the kernel again (its
// pages are expected written: PagesExpected::written) or, with kernel homes
// off, gives the region the writer's node.
//
// Not thread-safe except HomeEntry::home and HomeEntry::spread, which
// workers may read at any time, and first_written() without kernel homes,
// which any worker may call for a region its finishing task wrote: the
// caller serialises everything else (the scheduler lock). Entries live in
// chunks and never move; an entry and its spreads are dropped only by
// forget(), once no unfinished task names its region.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numaware/task_policy.hpp"
#include "os/os.hpp"
#include "placement/page_locations.hpp"
#include "tasks/deps.hpp"

namespace numaware::tasks::detail {

// Bytes of a region per node; node `unallocated`: bytes on no page yet.
struct NodeBytes {
    int node = unallocated;
    std::uint64_t bytes = 0;
};
struct PageSpread {
    std::vector<NodeBytes> parts;   // one per node present, ascending
    std::uint64_t total = 0;        // sum of parts: the region's bytes when asked
};

// One cache line: workers write `home` as their tasks finish and the
// scheduler reuses the entry later, so an entry across two lines cost two
// transfers between CPUs where one does.
struct alignas(64) HomeEntry {
    std::uint64_t start = 0;
    std::uint64_t bytes = 0;
    std::atomic<int> home{unallocated};
    std::uint32_t index = 0;   // its place among RegionHomes' entries, fixed when made
    // Null: every byte is at `home` (or none is placed yet).
    std::atomic<const PageSpread*> spread{nullptr};
    std::atomic<bool> registered{false};   // home from register_range(): never re-queried
    bool free = false;   // forgotten, waiting for reuse by another region
    // The page's entry, shared by every region in use inside that page
    // (kernel homes off; see RegionHomes::add): [start, start+bytes) is
    // the page.
    bool page = false;
    // Every spread this entry has pointed to: a worker may still read an
    // older one while the scheduler replaces it, so they go only when the
    // entry is forgotten (no unfinished task names its region then).
    std::vector<std::unique_ptr<PageSpread>> spreads;
};
static_assert(sizeof(HomeEntry) == 64);

// The bytes of a `dep_bytes` dependency on `e` that a task running on
// `node` reaches across nodes: bytes on other nodes, and bytes on no page
// yet when it only reads them (a writer places them by first touch). Exact
// per page when the entry has a PageSpread; a dependency naming fewer bytes
// than the region was asked with gets the same share, rounded.
std::uint64_t cross_node_bytes(const HomeEntry& e, std::uint64_t dep_bytes, AccessMode access, unsigned node);

class RegionHomes {
public:
    // sample_pages: 0 asks the kernel about every page; k > 0 about at most
    // k pages per region (majority, no PageSpread). page_memo_ns: how long
    // the kernel's answer for one page serves the other regions inside
    // that page (0: every region is asked for; see memo_).
    // With kernel_homes, the kernel is asked once here whether it answers
    // move_pages for this process: where it refuses (EPERM from a
    // container's seccomp profile, ENOSYS from a kernel without NUMA),
    // homes are learned from first writers instead, as without
    // kernel_homes, and kernel_refusal() gives the errno.
    RegionHomes(os::Os& os, bool kernel_homes, std::size_t sample_pages = 0,
                std::uint64_t page_memo_ns = default_page_memo_ns)
        : os_(os), kernel_homes_(kernel_homes), sample_pages_(sample_pages), page_memo_ns_(page_memo_ns) {
        if (kernel_homes_) {
            kernel_refusal_ = kernel_refuses_homes(os_);
            kernel_homes_ = kernel_refusal_ == 0;
        }
    }

    // 10 ms: a hundredth of the kernel's shortest default NUMA-balancing
    // scan period (numa_balancing_scan_period_min_ms, 1000 ms), the
    // automatic migration that could move such a page meanwhile.
    static constexpr std::uint64_t default_page_memo_ns = 10'000'000;

    // The entry for the region [start, start+bytes), resolved now, until
    // forget(). A region inside one page that no registration, heap block
    // or placement covers shares its page's entry with the other such
    // regions in use in that page; every other region has its own (regions
    // of two dependency scopes that start at one address are resolved
    // alike). The shared entry's home is the page's: with kernel homes,
    // the kernel's answer for the page, asked when the entry is made and
    // again (the page memo permitting) as each region joins, and written
    // only when it changed; without, the node of the first task to finish
    // writing any of them, as first touch places a page. Sampling
    // (sample_pages > 0) keeps an entry per region. (An entry per region
    // cost a write of a line that the finishing workers read, per region
    // and again per forget: a wavefront of 8-byte cells spent a sixth of
    // its spawning thread there.)
    HomeEntry& add(std::uint64_t start, std::uint64_t bytes);

    // Every region starting in [start, start+bytes) lives on `node`,
    // including entries already resolved (a page's entry when the range
    // covers the whole page). The caller checks the node.
    void register_range(std::uint64_t start, std::uint64_t bytes, unsigned node);

    // A task running on `runner_node` wrote the region and has finished.
    // Thread-safe without kernel homes (the first writer to finish places
    // an unallocated region); with them, serialised like the rest.
    void first_written(HomeEntry& e, unsigned runner_node);
    // True when first_written(e, ...) needs no lock: without kernel homes,
    // or when the region is registered or wholly placed already. Any
    // thread may ask.
    bool written_settled(const HomeEntry& e) const {
        if (!kernel_homes_ || e.registered.load(std::memory_order_relaxed)) return true;
        if (e.home.load(std::memory_order_relaxed) == unallocated) return false;
        const PageSpread* spread = e.spread.load(std::memory_order_acquire);
        return spread == nullptr || spread->parts.front().node != unallocated;
    }

    // The regions of these entries are no longer named by any unfinished
    // task (DepTracker::take_forgotten): they are dropped and reused, so a
    // long run over ever-new addresses keeps as many entries as it has
    // regions in use. A later add() finds the home again: from the kernel, or, with kernel homes
    // off, from what the entry learned, kept per page: the first page of
    // the region is remembered on the entry's home, unless the page is
    // remembered already (the first writer of a page placed it there, as
    // first touch does). So a region smaller than a page, named again
    // after it was forgotten, gets its page's node, which an earlier
    // region in that page may have set. At most learned_pages_max pages
    // are remembered; past that the memory starts over.
    void forget(std::span<void* const> entries);
    static constexpr std::size_t learned_pages_max = std::size_t{1} << 20;   // 4 GiB of 4 KiB pages
    std::size_t learned_pages() const { return learned_.size(); }

    // Kernel query of [start, start+bytes): the home (node or unallocated),
    // and in `spread` the bytes per node when they are not all in one place
    // (left empty otherwise, and always in sampling mode).
    int query_kernel(std::uint64_t start, std::uint64_t bytes, PageSpread& spread,
                     PagesExpected expected = PagesExpected::maybe_absent);

    bool kernel_homes() const { return kernel_homes_; }
    int kernel_refusal() const { return kernel_refusal_; }   // 0, or why kernel homes were given up
    std::size_t sample_pages() const { return sample_pages_; }
    std::size_t size() const { return in_use_; }   // entries not forgotten
    std::size_t shared_pages() const { return pages_.size(); }   // pages' entries in use

private:
    HomeEntry& entry_for(std::uint64_t start, std::uint64_t bytes);   // a region's own, unresolved
    void set_from_kernel(HomeEntry& e, PagesExpected expected);
    // The page memo's answer for page `number` at now_ns, if it holds a
    // fresh one (unanswered: no_memo).
    static constexpr int no_memo = unallocated - 1;
    int remembered(std::uint64_t number, std::uint64_t now_ns) const {
        if (page_memo_ns_ == 0) return no_memo;
        const PageMemo& m = memo_[number % memo_slots];
        return m.page == number && now_ns - m.asked_ns < page_memo_ns_ ? m.node : no_memo;
    }
    std::optional<std::vector<std::pair<unsigned, std::size_t>>> placed_here(std::uint64_t start,
                                                                          std::uint64_t bytes) const;
    void set_from_placed(HomeEntry& e, const std::vector<std::pair<unsigned, std::size_t>>& placed);
    // Publishes a home and, when its parts are given, the spread behind
    // it. Unchanged (the usual answer when a region joins its page's entry
    // or a writer's page was placed already), the line that workers read
    // is left alone: that test is inline, the publishing is not.
    void set_home(HomeEntry& e, int home, PageSpread&& spread) {
        if (spread.parts.empty() && e.spread.load(std::memory_order_relaxed) == nullptr &&
            e.home.load(std::memory_order_relaxed) == home)
            return;
        publish_home(e, home, std::move(spread));
    }
    void publish_home(HomeEntry& e, int home, PageSpread&& spread);
    int query_sampled(std::uint64_t start, std::uint64_t bytes, PagesExpected expected);
    HomeEntry* new_entry();
    // A learned home: the page's entry in use, else what a forgotten one
    // taught (unallocated when neither).
    int learned_home(std::uint64_t page_number);
    // The page's entry, shared by the regions in use inside it.
    HomeEntry& page_entry(std::uint64_t page_number, std::uint64_t page);

    // EPERM or ENOSYS when move_pages on a page of this process fails so
    // (0 when it answers, or fails otherwise).
    static int kernel_refuses_homes(os::Os& os);

    os::Os& os_;
    bool kernel_homes_;
    int kernel_refusal_ = 0;
    std::size_t sample_pages_;
    std::vector<int> status_;                             // scratch of query_kernel
    std::size_t in_use_ = 0;
    std::vector<std::unique_ptr<HomeEntry[]>> chunks_;
    std::size_t chunk_used_ = 0;
    std::vector<HomeEntry*> free_entries_;   // forgotten, for reuse
    // Recent kernel answers for regions inside one page, direct-mapped by
    // page number: small regions packed in a few pages (an OpenMP program's
    // `depend` on array elements) share one move_pages call per page and
    // page_memo_ns_, instead of one per region. Only a present page is
    // remembered (an absent one may be touched next). One entry per page
    // was not enough: a wavefront's new cells alternate between two rows'
    // pages, and asked the kernel 1.26 times a task.
    struct PageMemo {
        std::uint64_t page = ~std::uint64_t{0};
        int node = unallocated;
        std::uint64_t asked_ns = 0;   // coarse_now_ns()
    };
    static constexpr std::size_t memo_slots = 64;
    std::array<PageMemo, memo_slots> memo_{};
    std::uint64_t page_memo_ns_;
    struct Range {
        std::uint64_t end;
        unsigned node;
    };
    std::map<std::uint64_t, Range> ranges_;   // registered, disjoint, by start
    // Kernel homes off: the homes that forgotten entries learned, by page
    // number (forget()), with the last page looked at first (forgotten
    // regions come in runs over one page).
    static constexpr std::uint64_t no_page = ~std::uint64_t{0};
    std::unordered_map<std::uint64_t, int> learned_;
    std::uint64_t learned_last_page_ = no_page;   // forget(): the page remembered last
    std::uint64_t asked_page_ = no_page;          // learned_home(): the page asked for last,
    int asked_home_ = unallocated;                // and its remembered home
    // Kernel homes off: the pages' entries in use, by page number, the
    // last one found first; and per entry (by index) how many regions in
    // use share it. Kept here, not in the entry: workers read the entry's
    // line, and a count there would take it from them at every add and
    // forget.
    std::unordered_map<std::uint64_t, HomeEntry*> pages_;
    std::uint64_t last_page_ = no_page;
    HomeEntry* last_page_entry_ = nullptr;
    std::vector<std::uint32_t> sharers_;
};

}  // namespace numaware::tasks::detail
