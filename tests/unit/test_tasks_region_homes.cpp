// Region homes: every page of a region is asked for, and cross-node bytes
// are counted page by page (tasks/region_homes.hpp), on the recording OS.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "os/recording_os.hpp"
#include "placement/placed_ranges.hpp"
#include "tasks/region_homes.hpp"

namespace numaware::tasks::detail {
namespace {

constexpr std::size_t page = 4096;

struct Buffer {
    explicit Buffer(std::size_t pages)
        : p(static_cast<char*>(std::aligned_alloc(page, pages * page))) {}
    ~Buffer() { std::free(p); }
    std::uint64_t at(std::size_t offset) const { return reinterpret_cast<std::uintptr_t>(p) + offset; }
    char* p;
};

// A kernel that refuses move_pages (a container's seccomp profile): homes
// are learned from first writers, as with kernel homes off, and the
// refusal is kept for the report. A kernel that answers keeps kernel homes.
TEST(RegionHomes, AKernelThatRefusesMovePagesLeavesHomesToFirstWriters) {
    for (const int err : {EPERM, ENOSYS}) {
        os::RecordingOs os(4, 1);
        os.fail_call(os::CallKind::move_pages, err);
        RegionHomes homes(os, true);
        EXPECT_FALSE(homes.kernel_homes());
        EXPECT_EQ(homes.kernel_refusal(), err);
        Buffer b(2);
        HomeEntry& e = homes.add(b.at(0), page);
        EXPECT_EQ(e.home.load(), unallocated);
        homes.first_written(e, 3);
        EXPECT_EQ(e.home.load(), 3);
        EXPECT_EQ(os.calls(os::CallKind::move_pages).size(), 1u);   // the question, once
    }
    os::RecordingOs os(4, 1);
    os.fail_call(os::CallKind::move_pages, EIO);   // not a refusal: asked again later
    RegionHomes asked(os, true);
    EXPECT_TRUE(asked.kernel_homes());
    EXPECT_EQ(asked.kernel_refusal(), 0);
    RegionHomes off(os, false);
    EXPECT_FALSE(off.kernel_homes());
    EXPECT_EQ(off.kernel_refusal(), 0);
}

// CPU c of the recording OS's 4 nodes x 1 CPU is on node c.
TEST(RegionHomes, EveryPageCountsWhereItIs) {
    os::RecordingOs os(4, 1);
    Buffer b(16);
    os.touch(b.p, 12 * page, 0);              // pages 0-11 on node 0
    os.touch(b.p + 12 * page, 3 * page, 2);   // pages 12-14 on node 2; page 15 absent
    RegionHomes homes(os, true);

    // All on node 0: one home, no spread.
    HomeEntry& whole0 = homes.add(b.at(0), 4 * page);
    EXPECT_EQ(whole0.home.load(), 0);
    EXPECT_EQ(whole0.spread.load(), nullptr);
    EXPECT_EQ(cross_node_bytes(whole0, 4 * page, AccessMode::in, 0), 0u);
    EXPECT_EQ(cross_node_bytes(whole0, 4 * page, AccessMode::in, 1), 4 * page);

    // Pages 8-15: 4 on node 0, 3 on node 2, 1 absent. Home: node 0 (most
    // bytes); a reader on node 0 reaches 3 pages on node 2 and the absent
    // one, a writer on node 0 only the 3 on node 2 (it places the absent
    // page itself), a reader on node 2 the 4 on node 0 and the absent one.
    HomeEntry& mixed = homes.add(b.at(8 * page), 8 * page);
    EXPECT_EQ(mixed.home.load(), 0);
    ASSERT_NE(mixed.spread.load(), nullptr);
    EXPECT_EQ(cross_node_bytes(mixed, 8 * page, AccessMode::in, 0), 4 * page);
    EXPECT_EQ(cross_node_bytes(mixed, 8 * page, AccessMode::out, 0), 3 * page);
    EXPECT_EQ(cross_node_bytes(mixed, 8 * page, AccessMode::in, 2), 5 * page);
    EXPECT_EQ(cross_node_bytes(mixed, 8 * page, AccessMode::inout, 3), 7 * page);

    // A region ending inside a page counts only its own bytes of it: the
    // last 100 bytes of page 11 (node 0) and the first 900 of page 12 (node 2).
    HomeEntry& straddle = homes.add(b.at(12 * page - 100), 1000);
    EXPECT_EQ(straddle.home.load(), 2);
    EXPECT_EQ(cross_node_bytes(straddle, 1000, AccessMode::in, 2), 100u);
    EXPECT_EQ(cross_node_bytes(straddle, 1000, AccessMode::in, 0), 900u);

    // Every page was asked for, not a sample: 8 pages of `mixed` in one query.
    bool asked_all = false;
    for (const os::Call& c : os.calls(os::CallKind::move_pages))
        if (c.pages.size() == 8 && c.pages.front() == b.at(8 * page)) asked_all = true;
    EXPECT_TRUE(asked_all);
}

TEST(RegionHomes, AWriterPlacesTheAbsentPagesAndTheSpreadFollows) {
    os::RecordingOs os(2, 1);
    Buffer b(4);
    os.touch(b.p, page, 1);   // page 0 on node 1; pages 1-3 absent
    RegionHomes homes(os, true);
    HomeEntry& e = homes.add(b.at(0), 4 * page);
    EXPECT_EQ(e.home.load(), 1);
    EXPECT_EQ(cross_node_bytes(e, 4 * page, AccessMode::in, 1), 3 * page);
    os.touch(b.p + page, 3 * page, 0);   // the writer, on node 0, first-touches the rest
    homes.first_written(e, 0);
    EXPECT_EQ(e.home.load(), 0);
    EXPECT_EQ(cross_node_bytes(e, 4 * page, AccessMode::in, 0), page);
    EXPECT_EQ(cross_node_bytes(e, 4 * page, AccessMode::in, 1), 3 * page);
}

// A region its finished writer left reading absent is asked again after a
// read fault: automatic NUMA balancing's PROT_NONE hint made Debian 6.1's
// move_pages report present pages absent, and a region read only after
// its writer then kept no home for good (DEP placed its readers at random).
// A region the writer never touched stays unallocated.
TEST(RegionHomes, AWrittenRegionThatReadsAbsentIsAskedAgainAfterAFault) {
    os::RecordingOs os(2, 1);
    os.set_absent_errno(EFAULT);
    Buffer b(2);
    RegionHomes homes(os, true);
    HomeEntry& e = homes.add(b.at(0), page);          // submitted before its writer ran
    HomeEntry& untouched = homes.add(b.at(page), 8);   // named as written, never written
    EXPECT_EQ(e.home.load(), unallocated);
    os.touch(b.p, page, 1);          // the writer, on node 1
    os.hint_balancing(b.p, page);    // and balancing's scan, before the writer's completion asks
    homes.first_written(e, 1);
    EXPECT_EQ(e.home.load(), 1);
    homes.first_written(untouched, 1);
    EXPECT_EQ(untouched.home.load(), unallocated);
    EXPECT_FALSE(homes.written_settled(untouched));
}

// Entries of regions that no unfinished task names are dropped and reused:
// with kernel homes the next add() asks the kernel again; without, what
// first_written() learned stays with the region's first page.
TEST(RegionHomes, ForgottenEntriesAreReusedAndTheirHomesFoundAgain) {
    os::RecordingOs os(4, 1);
    Buffer b(8);
    os.touch(b.p + 4 * page, 4 * page, 1);   // pages 0-3 not touched yet
    RegionHomes homes(os, true);
    HomeEntry& a = homes.add(b.at(0), 4 * page);
    HomeEntry& c = homes.add(b.at(4 * page), 4 * page);
    EXPECT_EQ(a.home.load(), unallocated);
    EXPECT_EQ(homes.size(), 2u);
    void* gone[] = {&a};
    homes.forget(gone);
    EXPECT_EQ(homes.size(), 1u);
    EXPECT_EQ(c.home.load(), 1);   // untouched
    // The pages were placed meanwhile: the region's next add() asks the
    // kernel again, in the freed entry.
    os.touch(b.p, 4 * page, 3);
    HomeEntry& again = homes.add(b.at(0), 4 * page);
    EXPECT_EQ(&again, &a);
    EXPECT_EQ(again.home.load(), 3);
    EXPECT_EQ(homes.size(), 2u);

    RegionHomes learned(os, false);
    HomeEntry& w = learned.add(b.at(0), page);
    HomeEntry& later = learned.add(b.at(page + 64), 64);
    HomeEntry& never = learned.add(b.at(2 * page), 64);
    learned.first_written(w, 2);
    learned.first_written(later, 3);
    void* kept[] = {&w, &later, &never};
    learned.forget(kept);
    EXPECT_EQ(learned.size(), 0u);
    EXPECT_EQ(learned.learned_pages(), 2u);   // the unwritten region taught nothing
    EXPECT_EQ(learned.add(b.at(0), page).home.load(), 2);
    // Another region of a remembered page: where that page's writer put it.
    EXPECT_EQ(learned.add(b.at(page), 64).home.load(), 3);
    EXPECT_EQ(learned.add(b.at(2 * page), 64).home.load(), unallocated);
    // A page keeps its first writer's node: a later region of the page
    // written elsewhere and forgotten does not move it.
    HomeEntry& second = learned.add(b.at(page + 128), 64);
    learned.first_written(second, 1);
    void* next[] = {&second};
    learned.forget(next);
    EXPECT_EQ(learned.add(b.at(page + 192), 64).home.load(), 3);
}

// A run over ever-new addresses without kernel homes keeps as many entries
// as it has regions in use, not one per region ever named (a wavefront of a
// million cells kept a million).
TEST(RegionHomes, AnEverNewRunStaysBoundedWithoutKernelHomes) {
    os::RecordingOs os(4, 1);
    Buffer b(64);
    RegionHomes homes(os, false);
    std::vector<void*> batch;
    for (std::size_t k = 0; k < 64 * page / 64; ++k) {
        HomeEntry& e = homes.add(b.at(k * 64), 64);
        homes.first_written(e, static_cast<unsigned>(k / 64 % 4));
        batch.push_back(&e);
        if (batch.size() == 256) {
            homes.forget(batch);
            batch.clear();
            EXPECT_EQ(homes.size(), 0u);
        }
    }
    EXPECT_EQ(homes.learned_pages(), 64u);
    for (std::size_t p = 0; p < 64; ++p)
        EXPECT_EQ(homes.add(b.at(p * page + 8), 8).home.load(), static_cast<int>(p % 4)) << "page " << p;
}

// Without kernel homes, the regions in use inside one page share the
// page's entry: the first of them to be written places the page, as first
// touch does, and a later writer elsewhere does not move it. A region
// across pages, or in a registered range, keeps its own.
TEST(RegionHomes, PagesOfSmallRegionsAreFirstWrittenOnce) {
    os::RecordingOs os(4, 1);
    Buffer b(4);
    RegionHomes homes(os, false);
    HomeEntry& a = homes.add(b.at(0), 64);
    HomeEntry& c = homes.add(b.at(64), 64);
    HomeEntry& whole = homes.add(b.at(0), page);
    EXPECT_EQ(&a, &c);
    EXPECT_EQ(&a, &whole);
    EXPECT_EQ(homes.size(), 1u);
    EXPECT_EQ(homes.shared_pages(), 1u);
    EXPECT_EQ(a.home.load(), unallocated);
    homes.first_written(c, 2);
    homes.first_written(a, 1);
    EXPECT_EQ(a.home.load(), 2);
    EXPECT_EQ(homes.add(b.at(128), 8).home.load(), 2);
    EXPECT_EQ(cross_node_bytes(a, 64, AccessMode::out, 1), 64u);
    EXPECT_EQ(cross_node_bytes(a, 64, AccessMode::in, 2), 0u);

    HomeEntry& across = homes.add(b.at(page - 32), 64);
    EXPECT_NE(&across, &a);
    EXPECT_FALSE(across.page);
    EXPECT_EQ(across.home.load(), 2);   // where its first page is
    homes.first_written(across, 3);
    EXPECT_EQ(across.home.load(), 2);
    HomeEntry& next = homes.add(b.at(2 * page - 32), 64);   // its first page not written yet
    EXPECT_EQ(next.home.load(), unallocated);
    homes.first_written(next, 3);
    EXPECT_EQ(next.home.load(), 3);
    EXPECT_EQ(a.home.load(), 2);

    // The page's entry goes with its last region; the page is remembered.
    void* some[] = {&a, &c, &whole};
    homes.forget(some);
    EXPECT_EQ(homes.shared_pages(), 1u);   // the region at 128 still names it
    void* last[] = {&a, &across, &next};
    homes.forget(last);
    EXPECT_EQ(homes.shared_pages(), 0u);
    EXPECT_EQ(homes.size(), 0u);
    EXPECT_EQ(homes.learned_pages(), 2u);   // pages 0 and 1 (by the region across them)
    HomeEntry& back = homes.add(b.at(256), 64);
    EXPECT_TRUE(back.page);
    EXPECT_EQ(back.home.load(), 2);

    // A registration covering the whole page takes its entry; one covering
    // part of a page gives the regions inside it their own entries.
    homes.register_range(b.at(0), page, 0);
    EXPECT_EQ(back.home.load(), 0);
    homes.register_range(b.at(page), 128, 1);
    HomeEntry& registered = homes.add(b.at(page + 64), 8);
    EXPECT_FALSE(registered.page);
    EXPECT_EQ(registered.home.load(), 1);
    HomeEntry& beside = homes.add(b.at(page + 256), 8);
    EXPECT_TRUE(beside.page);
    EXPECT_EQ(beside.home.load(), 3);   // what page 1 learned from the region across
}

// Small regions in two pages, named alternately (a wavefront's cells of two
// rows): each page is asked for once while its answer is fresh, and every
// time with the memo off.
TEST(RegionHomes, SmallRegionsShareTheirPagesAnswer) {
    os::RecordingOs os(4, 1);
    Buffer b(2);
    os.touch(b.p, page, 1);          // page 0 on node 1
    os.touch(b.p + page, page, 3);   // page 1 on node 3
    const auto queries = [&] { return os.calls(os::CallKind::move_pages).size(); };

    // An hour: nothing in this test outlives it.
    RegionHomes shared(os, true, 0, std::uint64_t{3600} * 1'000'000'000);
    const std::size_t before = queries();
    for (std::size_t k = 0; k < 64; ++k) {
        EXPECT_EQ(shared.add(b.at(8 * k), 8).home.load(), 1);
        EXPECT_EQ(shared.add(b.at(page + 8 * k), 8).home.load(), 3);
    }
    EXPECT_EQ(queries() - before, 2u);

    RegionHomes each(os, true, 0, 0);
    const std::size_t before_each = queries();
    for (std::size_t k = 0; k < 64; ++k) {
        EXPECT_EQ(each.add(b.at(8 * k), 8).home.load(), 1);
        EXPECT_EQ(each.add(b.at(page + 8 * k), 8).home.load(), 3);
    }
    EXPECT_EQ(queries() - before_each, 128u);

    // An absent page is never remembered: it may be touched next.
    Buffer c(1);
    RegionHomes absent(os, true, 0, std::uint64_t{3600} * 1'000'000'000);
    EXPECT_EQ(absent.add(c.at(0), 8).home.load(), unallocated);
    os.touch(c.p, page, 2);
    EXPECT_EQ(absent.add(c.at(8), 8).home.load(), 2);
}

// With kernel homes, the regions in use inside one page share the page's
// entry: the kernel's answer for the page is theirs, asked when the entry
// is made and again as a region joins (the memo permitting), and written
// to the shared line only when it changed. A region across pages, and
// every region in sampling mode, keeps an entry of its own.
TEST(RegionHomes, RegionsInOnePageShareItsEntryWithKernelHomes) {
    os::RecordingOs os(4, 1);
    Buffer b(3);
    os.touch(b.p, page, 1);   // page 0 on node 1; pages 1 and 2 absent
    RegionHomes homes(os, true, 0, 0);   // no memo: every join asks
    HomeEntry& a = homes.add(b.at(0), 8);
    HomeEntry& a2 = homes.add(b.at(64), 8);
    EXPECT_EQ(&a, &a2);
    EXPECT_EQ(a.home.load(), 1);
    EXPECT_EQ(homes.size(), 1u);
    EXPECT_EQ(homes.shared_pages(), 1u);
    // The page moved (NUMA balancing, say): the next region to join finds
    // it where it is now, and so do the regions already in it.
    void* moved[] = {b.p};
    const int to[] = {3};
    int status[] = {-1};
    ASSERT_EQ(os.move_pages(0, 1, moved, to, status, 0), 0);
    ASSERT_EQ(status[0], 3);
    EXPECT_EQ(&homes.add(b.at(128), 8), &a);
    EXPECT_EQ(a.home.load(), 3);

    // An absent page: unallocated until a writer of any of its regions
    // finishes, then the page's node for all of them.
    HomeEntry& c = homes.add(b.at(page), 8);
    HomeEntry& c2 = homes.add(b.at(page + 8), 8);
    EXPECT_EQ(&c, &c2);
    EXPECT_EQ(c.home.load(), unallocated);
    EXPECT_FALSE(homes.written_settled(c));
    os.touch(b.p + page, page, 2);
    homes.first_written(c, 2);
    EXPECT_EQ(c2.home.load(), 2);

    // Across pages 0 and 1: its own entry, asked page by page.
    HomeEntry& across = homes.add(b.at(page - 8), 16);
    EXPECT_NE(&across, &a);
    EXPECT_NE(&across, &c);
    EXPECT_EQ(homes.size(), 3u);

    // The page's entry goes with its last region.
    void* first[] = {&a, &a2};
    homes.forget(first);
    EXPECT_EQ(homes.size(), 3u);   // the third region of page 0 is still in use
    void* last[] = {&a};
    homes.forget(last);
    EXPECT_EQ(homes.size(), 2u);
    EXPECT_EQ(homes.shared_pages(), 1u);

    // Sampling: an entry per region.
    RegionHomes sampled(os, true, 4);
    EXPECT_NE(&sampled.add(b.at(0), 8), &sampled.add(b.at(64), 8));
    EXPECT_EQ(sampled.shared_pages(), 0u);
}

TEST(RegionHomes, SamplingIsAnExplicitOption) {
    os::RecordingOs os(2, 1);
    Buffer b(64);
    os.touch(b.p, 40 * page, 0);
    os.touch(b.p + 40 * page, 24 * page, 1);
    RegionHomes sampled(os, true, 4);
    HomeEntry& e = sampled.add(b.at(0), 64 * page);
    EXPECT_EQ(e.spread.load(), nullptr);   // a majority, not bytes per node
    EXPECT_EQ(e.home.load(), 0);
    EXPECT_EQ(cross_node_bytes(e, 64 * page, AccessMode::in, 1), 64 * page);
    std::size_t largest = 0;
    for (const os::Call& c : os.calls(os::CallKind::move_pages)) largest = std::max(largest, c.pages.size());
    EXPECT_EQ(largest, 4u);

    RegionHomes exact(os, true);
    HomeEntry& x = exact.add(b.at(0), 64 * page);
    EXPECT_EQ(cross_node_bytes(x, 64 * page, AccessMode::in, 1), 40 * page);
}

// The task runtime's homes come from a range that placement remembers
// before the kernel is asked, even with kernel homes off, page by page. The
// range is real and bound (node 0 of this machine); the nodes remembered for
// it are made up, so the answer can only have come from the record.
TEST(RegionHomes, RememberedPlacementComesBeforeTheKernel) {
    os::Os& live = os::linux_os();
    void* p = ::mmap(nullptr, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    ASSERT_EQ(live.mbind(p, 8 * page, os::PolicyMode::bind, NodeSet{0}, 0), 0);
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    placement_detail::remember_placement(base, page, std::vector<int>{1, 1, 1, 2});
    RegionHomes homes(live, false);
    HomeEntry& all = homes.add(base, 4 * page);
    EXPECT_EQ(all.home.load(), 1);
    ASSERT_NE(all.spread.load(), nullptr);
    EXPECT_EQ(cross_node_bytes(all, 4 * page, AccessMode::in, 1), page);
    EXPECT_EQ(cross_node_bytes(all, 4 * page, AccessMode::in, 2), 3 * page);
    HomeEntry& last = homes.add(base + 3 * page, page);
    EXPECT_EQ(last.home.load(), 2);
    EXPECT_EQ(last.spread.load(), nullptr);
    // Past the remembered pages, with kernel homes off: unallocated.
    EXPECT_EQ(homes.add(base + 5 * page, page).home.load(), unallocated);
    // A fake OS never reads the record.
    os::RecordingOs fake(4, 1);
    RegionHomes fake_homes(fake, false);
    EXPECT_EQ(fake_homes.add(base, 4 * page).home.load(), unallocated);

    // Unmapped and mapped again at the same address: the default policy
    // shows the record is stale; it is forgotten, not believed.
    ASSERT_EQ(::munmap(p, 8 * page), 0);
    void* again = ::mmap(p, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    ASSERT_EQ(again, p);
    RegionHomes fresh(live, false);
    EXPECT_EQ(fresh.add(base, 4 * page).home.load(), unallocated);
    EXPECT_FALSE(placement_detail::placed_bytes(base, 4 * page));
    ::munmap(again, 8 * page);
}

}  // namespace
}  // namespace numaware::tasks::detail
