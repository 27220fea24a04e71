// Placed ranges (numaware/placement.hpp, placement/placed_ranges.hpp): what
// apply() placed is remembered page by page, read back per node, cut by
// later placements and forgotten on request.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "os/recording_os.hpp"
#include "placement/placed_ranges.hpp"

namespace numaware {
namespace {

using Bytes = std::vector<std::pair<unsigned, std::size_t>>;
constexpr std::size_t page = 4096;

// Fake addresses far from anything this process maps: the registry only
// stores numbers, and each test forgets what it remembered.
constexpr std::uintptr_t base = std::uintptr_t{0x7e0000000000};

struct Forget {
    std::uintptr_t start;
    std::size_t bytes;
    ~Forget() { placement_detail::forget_placement(start, bytes); }
};

TEST(PlacementPlaced, BytesPerNodeFollowTheRunsOfPages) {
    const Forget f{base, 64 * page};
    const std::vector<int> nodes{0, 0, 1, 1, 1, 3, 0, 0};
    placement_detail::remember_placement(base, page, nodes);
    EXPECT_EQ(placement_detail::placed_bytes(base, 8 * page), (Bytes{{0, 4 * page}, {1, 3 * page}, {3, page}}));
    // A part that starts and ends inside pages counts only its own bytes.
    EXPECT_EQ(placement_detail::placed_bytes(base + page + 100, 2 * page),
              (Bytes{{0, page - 100}, {1, page + 100}}));
    EXPECT_EQ(placement_detail::placed_bytes(base + 5 * page, 10), (Bytes{{3, 10}}));
    // Past the end, before the start, or empty: not known.
    EXPECT_FALSE(placement_detail::placed_bytes(base + 7 * page, 2 * page));
    EXPECT_FALSE(placement_detail::placed_bytes(base - 1, 2));
    EXPECT_FALSE(placement_detail::placed_bytes(base, 0));
}

TEST(PlacementPlaced, ALaterPlacementReplacesThePagesItCoversAndRangesThatTouchCoverTogether) {
    const Forget f{base, 64 * page};
    placement_detail::remember_placement(base, page, std::vector<int>(8, 0));
    placement_detail::remember_placement(base + 8 * page, page, std::vector<int>(4, 2));   // touches the first
    placement_detail::remember_placement(base + 2 * page, page, std::vector<int>{1, 1});  // inside the first
    EXPECT_EQ(placement_detail::placed_bytes(base, 12 * page), (Bytes{{0, 6 * page}, {1, 2 * page}, {2, 4 * page}}));
    // Forgetting pages 3-4 leaves a hole: a query across it is not known,
    // the parts on either side still are.
    placement_detail::forget_placement(base + 3 * page, 2 * page);
    EXPECT_FALSE(placement_detail::placed_bytes(base, 12 * page));
    EXPECT_EQ(placement_detail::placed_bytes(base, 3 * page), (Bytes{{0, 2 * page}, {1, page}}));
    EXPECT_EQ(placement_detail::placed_bytes(base + 5 * page, 7 * page), (Bytes{{0, 3 * page}, {2, 4 * page}}));
    forget_placement(reinterpret_cast<const void*>(base), 64 * page);
    EXPECT_FALSE(placement_detail::placed_bytes(base + 5 * page, page));
}

// The count that lets a lookup return at once (anything_placed) follows the
// ranges: a placement cut in two by a forget counts twice, and forgetting
// everything brings it back to what it was.
TEST(PlacementPlaced, TheRangeCountFollowsTheRegistry) {
    const Forget f{base, 64 * page};
    const std::size_t before = placement_detail::remembered_ranges.load();
    placement_detail::remember_placement(base, page, std::vector<int>(8, 0));
    EXPECT_TRUE(placement_detail::anything_placed());
    EXPECT_EQ(placement_detail::remembered_ranges.load(), before + 1);
    placement_detail::forget_placement(base + 3 * page, page);   // a hole: two ranges
    EXPECT_EQ(placement_detail::remembered_ranges.load(), before + 2);
    placement_detail::forget_placement(base, 64 * page);
    EXPECT_EQ(placement_detail::remembered_ranges.load(), before);
    EXPECT_EQ(placement_detail::anything_placed(), before != 0);
}

// On the live system: apply() with a binding policy remembers every page
// where the kernel put it; first touch (balancing may move such pages) and
// a fake OS remember nothing.
TEST(PlacementPlaced, ApplyOnTheLiveSystemRemembersABoundRangeOnly) {
    const Machine m = Machine::from_live();
    const unsigned node = m.nodes.at(0).os_index;
    constexpr std::size_t pages = 16;
    void* p = ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    const Forget f{reinterpret_cast<std::uintptr_t>(p), pages * page};

    const PlacementPlan bound = plan(PlacementPolicy::bind(NodeSet{node}), p, pages * page, m);
    ASSERT_TRUE(apply(p, pages * page, bound).ok());
    EXPECT_EQ(placed_bytes(p, pages * page), (Bytes{{node, pages * page}}));

    // Placed again under first touch: forgotten.
    PlanOptions here;
    here.thread_cpu = m.nodes.at(0).cpus.at(0);
    const PlacementPlan touched = plan(PlacementPolicy::first_touch(), p, pages * page, m, here);
    (void)apply(p, pages * page, touched);
    EXPECT_FALSE(placed_bytes(p, pages * page));

    // A fake OS's answers are not this process's memory.
    os::RecordingOs fake(2, 1);
    EXPECT_NO_THROW((void)apply(p, pages * page, bound, fake));
    EXPECT_FALSE(placed_bytes(p, pages * page));
    ::munmap(p, pages * page);
}

}  // namespace
}  // namespace numaware
