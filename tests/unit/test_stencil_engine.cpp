// Unit tests of the stencil engine (skeletons/engine.hpp): placed arrays,
// place() per mode through the fake kernel, merge, balancing scope, timed
// phases, streaming stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <sys/mman.h>
#include <cerrno>
#include <cstring>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"
#include "os/recording_os.hpp"
#include "skeletons/engine.hpp"
#include "support.hpp"

namespace numaware::stencil::detail {
namespace {

constexpr std::size_t kPage = 4096;

Machine two_nodes() {
    return Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10");
}

struct Rig {
    Rig() : machine(two_nodes()), fake(machine), team(machine, {.threads = 2, .kind = MappingKind::scatter}, fake) {}
    Machine machine;
    os::RecordingOs fake;
    Team team;
};

// Rank 0 owns pages [0, 3), rank 1 pages [3, 8).
const std::vector<ByteRange> kOwned{{0, 3 * kPage}, {3 * kPage, 8 * kPage}};

struct InitLog {
    std::vector<std::vector<ByteRange>> by_rank = std::vector<std::vector<ByteRange>>(2);
    std::function<void(unsigned, std::size_t, std::size_t)> fn(PlacedArray& a) {
        return [this, &a](unsigned rank, std::size_t lo, std::size_t hi) {
            by_rank[rank].emplace_back(lo, hi);
            for (std::size_t b = lo; b < hi; b += sizeof(double)) a.data()[b / sizeof(double)] = 1.0 + rank;
        };
    }
};

TEST(StencilEngine, PlacedArrayMapsUntouchedPagesAndMoves) {
    os::RecordingOs fake(two_nodes());
    PlacedArray a(5 * kPage);
    ASSERT_NE(a.data(), nullptr);
    EXPECT_EQ(a.bytes(), 5 * kPage);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % kPage, 0u);
    EXPECT_EQ(a.page_nodes(fake), (std::vector<int>(5, -1))) << "nothing touched by the constructor";
    fake.touch(a.data(), 2 * kPage, /*cpu=*/1);
    EXPECT_EQ(a.page_nodes(fake), (std::vector<int>{1, 1, -1, -1, -1}));
    PlacedArray b(std::move(a));
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.bytes(), 5 * kPage);
    b.data()[0] = 3.0;   // really mapped
    EXPECT_EQ(b.data()[0], 3.0);
    const Error e = test::expect_error([] { PlacedArray zero(0); });
    EXPECT_EQ(e.field(), "grid");
}

TEST(StencilEngine, ParallelFirstTouchPopulatesOnEachRankThenInits) {
    Rig rig;
    PlacedArray a(8 * kPage);
    InitLog log;
    const PlacementReport r =
        place(rig.team, a, PagePlacement::parallel_first_touch, std::nullopt, kOwned, log.fn(a), true, rig.fake);
    EXPECT_EQ(log.by_rank[0], (std::vector<ByteRange>{kOwned[0]}));
    EXPECT_EQ(log.by_rank[1], (std::vector<ByteRange>{kOwned[1]}));
    EXPECT_EQ(a.page_nodes(rig.fake), (std::vector<int>{0, 0, 0, 1, 1, 1, 1, 1}));
    EXPECT_EQ(a.data()[0], 1.0);
    EXPECT_EQ(a.data()[7 * kPage / 8], 2.0);
    EXPECT_EQ(r.mode, "parallel-first-touch");
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.pages, 8u);
    EXPECT_EQ(r.pages_as_intended, 8u);
    EXPECT_EQ(r.pages_per_node, (std::map<unsigned, std::size_t>{{0, 3}, {1, 5}}));
    bool populated = false, nohuge = false;
    for (const auto& c : rig.fake.calls(os::CallKind::madvise)) {
        populated |= c.advice == os::madv_populate_write;
        nohuge |= c.advice == MADV_NOHUGEPAGE && c.len == 8 * kPage;
    }
    EXPECT_TRUE(populated);
    EXPECT_TRUE(nohuge);
    EXPECT_TRUE(rig.fake.calls(os::CallKind::mbind).empty());
}

TEST(StencilEngine, SerialFirstTouchInitialisesEverythingOnRankZero) {
    Rig rig;
    PlacedArray a(8 * kPage);
    InitLog log;
    const PlacementReport r =
        place(rig.team, a, PagePlacement::serial_first_touch, std::nullopt, kOwned, log.fn(a), true, rig.fake);
    EXPECT_EQ(log.by_rank[0].size() + log.by_rank[1].size(), 2u);
    EXPECT_EQ(a.page_nodes(rig.fake), std::vector<int>(8, 0));
    EXPECT_EQ(r.pages_as_intended, 8u);
    EXPECT_TRUE(test::contains(r.realisation, "rank 0")) << r.realisation;
}

TEST(StencilEngine, StencilAwareBindsOwnedBlocksWithAPageMap) {
    Rig rig;
    PlacedArray a(8 * kPage);
    InitLog log;
    const PlacementReport r =
        place(rig.team, a, PagePlacement::stencil_aware, std::nullopt, kOwned, log.fn(a), true, rig.fake);
    EXPECT_EQ(a.page_nodes(rig.fake), (std::vector<int>{0, 0, 0, 1, 1, 1, 1, 1}));
    EXPECT_EQ(r.pages_as_intended, 8u);
    EXPECT_EQ(rig.fake.policy_of_page(a.data()).mode, os::PolicyMode::bind);
    EXPECT_EQ(rig.fake.policy_of_page(reinterpret_cast<char*>(a.data()) + 5 * kPage).nodes, NodeSet{1});
    EXPECT_EQ(log.by_rank[1], (std::vector<ByteRange>{kOwned[1]})) << "each rank inits its own block";
    EXPECT_EQ(a.data()[7 * kPage / 8], 2.0);
}

TEST(StencilEngine, InterleaveAndExplicitFollowThePlan) {
    Rig rig;
    {
        PlacedArray a(8 * kPage);
        InitLog log;
        const PlacementReport r =
            place(rig.team, a, PagePlacement::interleave, std::nullopt, kOwned, log.fn(a), true, rig.fake);
        const auto pn = a.page_nodes(rig.fake);
        for (std::size_t p = 1; p < pn.size(); ++p) EXPECT_NE(pn[p], pn[p - 1]);
        EXPECT_EQ(r.pages_as_intended, 8u);
        EXPECT_EQ(r.pages_per_node, (std::map<unsigned, std::size_t>{{0, 4}, {1, 4}}));
    }
    {
        PlacedArray a(8 * kPage);
        InitLog log;
        const PlacementReport r = place(rig.team, a, PagePlacement::explicit_plan, PlacementPolicy::bind(NodeSet{1}),
                                        kOwned, log.fn(a), true, rig.fake);
        EXPECT_EQ(a.page_nodes(rig.fake), std::vector<int>(8, 1));
        EXPECT_EQ(r.pages_as_intended, 8u);
        EXPECT_EQ(r.mode, "explicit");
    }
    {
        // Explicit without a policy, and a policy the machine cannot honour.
        PlacedArray a(8 * kPage);
        InitLog log;
        Error e = test::expect_error(
            [&] { place(rig.team, a, PagePlacement::explicit_plan, std::nullopt, kOwned, log.fn(a), true, rig.fake); });
        EXPECT_EQ(e.field(), "explicit_policy");
        e = test::expect_error([&] {
            place(rig.team, a, PagePlacement::explicit_plan, PlacementPolicy::bind(NodeSet{5}), kOwned, log.fn(a), true,
                  rig.fake);
        });
        EXPECT_EQ(e.field(), "explicit_policy");
        EXPECT_TRUE(log.by_rank[0].empty()) << "nothing initialised after a failed placement";
    }
}

TEST(StencilEngine, UnverifiedPlacementSaysSoAndMergeAdds) {
    Rig rig;
    PlacedArray a(8 * kPage), b(8 * kPage);
    InitLog la, lb;
    const PlacementReport ra =
        place(rig.team, a, PagePlacement::stencil_aware, std::nullopt, kOwned, la.fn(a), false, rig.fake);
    EXPECT_FALSE(ra.verified);
    EXPECT_EQ(ra.pages_as_intended, 0u);
    EXPECT_TRUE(test::contains(ra.summary, "not verified")) << ra.summary;
    const PlacementReport rb =
        place(rig.team, b, PagePlacement::stencil_aware, std::nullopt, kOwned, lb.fn(b), true, rig.fake);
    PlacementReport m;
    merge(m, rb);
    merge(m, rb);
    EXPECT_EQ(m.pages, 16u);
    EXPECT_EQ(m.pages_as_intended, 16u);
    EXPECT_EQ(m.pages_per_node, (std::map<unsigned, std::size_t>{{0, 6}, {1, 10}}));
    EXPECT_TRUE(m.verified);
    merge(m, ra);
    EXPECT_FALSE(m.verified);
    EXPECT_EQ(m.pages, 24u);
}

// Hints that balancing set before it was switched off would still move a
// page on its next fault (to the faulting thread's node, under the default
// policy): hold_still resolves them where the pages are.
TEST(StencilEngine, BalancingScopeHoldsHintedPagesStill) {
    os::RecordingOs fake(two_nodes());
    fake.set_numa_balancing(1);
    const std::size_t page = fake.page_size();
    PlacedArray a(4 * page);
    fake.touch(a.data(), a.bytes(), 0);   // on node 0
    fake.hint_balancing(a.data(), a.bytes());
    fake.set_current_cpu(1);              // the scope's thread is on node 1
    {
        BalancingScope off(false, fake);
        off.hold_still(a);
        EXPECT_TRUE(fake.calls(os::CallKind::madvise).empty()) << "balancing left on: nothing to hold";
    }
    {
        BalancingScope s(true, fake);
        s.hold_still(a);
        const auto advice = fake.calls(os::CallKind::madvise);
        ASSERT_EQ(advice.size(), 1u);
        EXPECT_EQ(advice[0].advice, os::madv_populate_read);
        EXPECT_EQ(advice[0].len, a.bytes());
        EXPECT_EQ(fake.thread_policy().mode, os::PolicyMode::default_) << "the thread's policy is put back";
    }
    // A rank on node 1 now reads every page: none moves.
    fake.touch(a.data(), a.bytes(), 1);
    EXPECT_EQ(fake.pages_per_node(a.data(), a.bytes()), (std::map<unsigned, std::size_t>{{0, 4}}));

    // Control: without hold_still, that read moves the hinted pages.
    fake.hint_balancing(a.data(), a.bytes());
    fake.touch(a.data(), a.bytes(), 1);
    EXPECT_EQ(fake.pages_per_node(a.data(), a.bytes()), (std::map<unsigned, std::size_t>{{1, 4}}));
}

TEST(StencilEngine, BalancingScopeSwitchesOffAndRestores) {
    os::RecordingOs fake(two_nodes());
    fake.set_numa_balancing(3);
    {
        BalancingScope s(true, fake);
        EXPECT_EQ(fake.numa_balancing(), 0);
        EXPECT_TRUE(s.report().switched_off);
        EXPECT_EQ(s.report().before, "normal+memory-tiering");
        const BalancingReport r = s.finish();
        EXPECT_TRUE(r.restored);
        EXPECT_EQ(fake.numa_balancing(), 3);
        EXPECT_TRUE(s.finish().restored) << "finish twice is harmless";
    }
    EXPECT_EQ(fake.calls(os::CallKind::write_numa_balancing).size(), 2u);
    {
        BalancingScope s(true, fake);   // restored by the destructor
        EXPECT_EQ(fake.numa_balancing(), 0);
    }
    EXPECT_EQ(fake.numa_balancing(), 3);
    fake.set_balancing_write_error(EACCES);
    {
        BalancingScope s(true, fake);
        EXPECT_FALSE(s.report().switched_off);
        EXPECT_TRUE(test::contains(s.report().note, "(EACCES)")) << s.report().note;
    }
    fake.set_balancing_write_error(0);
    fake.fail_call(os::CallKind::write_numa_balancing, EIO, 2);   // the restore fails
    {
        BalancingScope s(true, fake);
        const BalancingReport r = s.finish();
        EXPECT_FALSE(r.restored);
        EXPECT_TRUE(test::contains(r.note, "could not restore")) << r.note;
    }
}

TEST(StencilEngine, RunPhasesTimesBodiesAndCallsOnPhaseBetweenBarriers) {
    Rig rig;
    std::atomic<int> in_body{0};
    std::vector<std::size_t> phases_seen;
    std::vector<int> bodies_done_at_phase;
    std::atomic<int> done{0};
    const Timing t = run_phases(
        rig.team, 4,
        [&](TeamContext&, std::size_t) {
            in_body.fetch_add(1);
            volatile double x = 0;
            for (int i = 0; i < 20000; ++i) x = x + 1.0;
            done.fetch_add(1);
        },
        [&](std::size_t p) {
            phases_seen.push_back(p);
            bodies_done_at_phase.push_back(done.load());
        });
    EXPECT_EQ(phases_seen, (std::vector<std::size_t>{0, 1, 2, 3}));
    EXPECT_EQ(bodies_done_at_phase, (std::vector<int>{2, 4, 6, 8})) << "every rank finished the phase first";
    ASSERT_EQ(t.busy_seconds.size(), 2u);
    EXPECT_GT(t.busy_seconds[0], 0.0);
    EXPECT_GT(t.busy_seconds[1], 0.0);
    EXPECT_GE(t.seconds, 0.0);
    EXPECT_EQ(rank_nodes(rig.team), (std::vector<unsigned>{0, 1}));
    // Without on_phase the phases still run.
    done = 0;
    run_phases(rig.team, 3, [&](TeamContext&, std::size_t) { done.fetch_add(1); }, nullptr);
    EXPECT_EQ(done.load(), 6);
}

TEST(StencilEngine, StreamStoreCopiesEveryAlignmentAndLength) {
    std::vector<double> src(64), dst(70);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = 0.5 + static_cast<double>(i);
    for (std::size_t off = 0; off < 3; ++off)
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}}) {
            std::fill(dst.begin(), dst.end(), -1.0);
            stream_store(dst.data() + off, src.data(), n);
            stream_fence();
            for (std::size_t i = 0; i < dst.size(); ++i) {
                const double want = i >= off && i < off + n ? src[i - off] : -1.0;
                EXPECT_EQ(dst[i], want) << "off " << off << " n " << n << " i " << i;
            }
        }
}

}  // namespace
}  // namespace numaware::stencil::detail
