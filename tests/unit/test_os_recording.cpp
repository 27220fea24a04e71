// Unit tests of RecordingOs: the recording, the simulated kernel placement
// rules and failure injection that placement tests rely on.
#include <gtest/gtest.h>

#include <cerrno>
#include <sys/mman.h>
#include <thread>

#include "numaware/machine.hpp"
#include "os/numa_maps.hpp"
#include "os/recording_os.hpp"

namespace numaware::os {
namespace {

constexpr std::size_t kPage = 4096;
void* at(std::uintptr_t a) { return reinterpret_cast<void*>(a); }
const std::uintptr_t kBase = 0x10000000;   // page index 0x10000: divisible by 2 and 4, not 3

TEST(OsRecording, RecordsCallsInOrderWithArguments) {
    RecordingOs fake(4, 2);
    EXPECT_EQ(fake.mbind(at(kBase), 8 * kPage, PolicyMode::interleave, NodeSet{0, 1}, mf_move | mf_strict), 0);
    EXPECT_EQ(fake.set_mempolicy(PolicyMode::bind, NodeSet{2}), 0);
    EXPECT_EQ(fake.madvise(at(kBase), kPage, MADV_NOHUGEPAGE), 0);
    const auto calls = fake.calls();
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[0].kind, CallKind::mbind);
    EXPECT_EQ(calls[0].addr, kBase);
    EXPECT_EQ(calls[0].len, 8 * kPage);
    EXPECT_EQ(calls[0].nodes, (NodeSet{0, 1}));
    EXPECT_EQ(calls[0].flags, mf_move | mf_strict);
    EXPECT_EQ(calls[0].to_string(), "mbind(0x10000000, 32768, interleave, 0-1, MOVE|STRICT) = 0");
    EXPECT_EQ(calls[1].to_string(), "set_mempolicy(bind, 2) = 0");
    EXPECT_EQ(calls[2].kind, CallKind::madvise);
    EXPECT_EQ(fake.calls(CallKind::mbind).size(), 1u);
    fake.clear_calls();
    EXPECT_TRUE(fake.calls().empty());
}

TEST(OsRecording, FirstTouchPlacesOnTheTouchingCpusNode) {
    RecordingOs fake(4, 2);   // cpus 2k, 2k+1 on node k
    fake.touch(at(kBase), 2 * kPage, 5);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 2);
    EXPECT_EQ(fake.node_of_page(at(kBase + kPage)), 2);
    EXPECT_EQ(fake.node_of_page(at(kBase + 2 * kPage)), -1);
    fake.touch(at(kBase), 3 * kPage, 0);   // present pages stay put
    EXPECT_EQ(fake.node_of_page(at(kBase)), 2);
    EXPECT_EQ(fake.node_of_page(at(kBase + 2 * kPage)), 0);
}

TEST(OsRecording, InterleaveUsesThePageIndexWithinTheSet) {
    RecordingOs fake(4, 1);
    const std::uintptr_t base = kBase + kPage;   // page index 0x10001: set position 1 first
    ASSERT_EQ(fake.mbind(at(base), 6 * kPage, PolicyMode::interleave, NodeSet{1, 3}, 0), 0);
    fake.touch(at(base), 6 * kPage, 0);
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(fake.node_of_page(at(base + i * kPage)), (i % 2 == 0) ? 3 : 1) << i;
    EXPECT_EQ(fake.pages_per_node(at(base), 6 * kPage), (std::map<unsigned, std::size_t>{{1, 3}, {3, 3}}));
}

TEST(OsRecording, WeightedInterleaveWalksTheWeights) {
    RecordingOs fake(4, 1);
    ASSERT_EQ(fake.write_interleave_weight(0, 3), 0);
    const std::uintptr_t base = 0x12000000;   // page index 0x12000, a multiple of 6 (the weight total)
    ASSERT_EQ(fake.mbind(at(base), 12 * kPage, PolicyMode::weighted_interleave, NodeSet{0, 1, 2, 3}, 0), 0);
    fake.touch(at(base), 12 * kPage, 0);
    const int expect[] = {0, 0, 0, 1, 2, 3, 0, 0, 0, 1, 2, 3};
    for (int i = 0; i < 12; ++i) EXPECT_EQ(fake.node_of_page(at(base + i * kPage)), expect[i]) << i;
}

TEST(OsRecording, WeightedInterleaveUnavailableIsEINVAL) {
    RecordingOs fake(2, 1);
    fake.set_weighted_interleave_available(false);
    EXPECT_FALSE(fake.has_weighted_interleave());
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::weighted_interleave, NodeSet{0, 1}, 0), EINVAL);
    unsigned w = 0;
    EXPECT_EQ(fake.read_interleave_weight(0, w), ENOENT);
    EXPECT_EQ(fake.policy_of_page(at(kBase)).mode, PolicyMode::default_);
}

TEST(OsRecording, BindPrefersTheLocalNodeThenTheNearest) {
    Machine m;
    for (unsigned n = 0; n < 4; ++n) m.nodes.push_back(Node{n, 1u << 30, {n}, 0, "DRAM"});
    m.distances = {{10, 21, 31, 31}, {21, 10, 21, 31}, {31, 21, 10, 21}, {31, 31, 21, 10}};
    RecordingOs fake(m);
    ASSERT_EQ(fake.mbind(at(kBase), 2 * kPage, PolicyMode::bind, NodeSet{0, 2}, 0), 0);
    fake.touch(at(kBase), kPage, 2);           // local node is in the set
    fake.touch(at(kBase + kPage), kPage, 3);   // node 3: nearest of {0,2} is 2 (21 < 31)
    EXPECT_EQ(fake.node_of_page(at(kBase)), 2);
    EXPECT_EQ(fake.node_of_page(at(kBase + kPage)), 2);
    ASSERT_EQ(fake.mbind(at(kBase + 4 * kPage), kPage, PolicyMode::preferred, NodeSet{3}, 0), 0);
    fake.touch(at(kBase + 4 * kPage), kPage, 0);
    EXPECT_EQ(fake.node_of_page(at(kBase + 4 * kPage)), 3);
}

TEST(OsRecording, ThreadPolicyAppliesWhereNoRangePolicy) {
    RecordingOs fake(3, 1);
    ASSERT_EQ(fake.set_mempolicy(PolicyMode::interleave, NodeSet{0, 1, 2}), 0);
    fake.touch(at(kBase), 6 * kPage, 0);
    // By address, as for a range policy: page index 0x10000 % 3 == 1.
    const int expect[] = {1, 2, 0, 1, 2, 0};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(fake.node_of_page(at(kBase + i * kPage)), expect[i]);
    PolicyQuery q;
    ASSERT_EQ(fake.get_mempolicy(nullptr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::interleave);
    EXPECT_EQ(q.nodes, (NodeSet{0, 1, 2}));
    ASSERT_EQ(fake.mbind(at(kBase + 8 * kPage), kPage, PolicyMode::bind, NodeSet{2}, 0), 0);
    ASSERT_EQ(fake.get_mempolicy(at(kBase + 8 * kPage + 100), q), 0);
    EXPECT_EQ(q.mode, PolicyMode::bind);
    EXPECT_EQ(q.nodes, NodeSet{2});
}

// A fault under a task interleave policy takes its node from the page
// address (guest test ProcessInterleavePolicyPlacesByAddress), so the order
// of faults and the thread that faults do not matter.
TEST(OsRecording, ThreadInterleavePlacesByAddressNotByFaultOrder) {
    RecordingOs fake(4, 1);
    ASSERT_EQ(fake.set_mempolicy(PolicyMode::interleave, NodeSet{0, 1, 2, 3}), 0);
    for (int i = 7; i >= 0; --i) fake.touch(at(kBase + 3 * kPage + static_cast<std::uintptr_t>(i) * kPage), kPage, 0);
    for (int i = 0; i < 8; ++i)   // page index 0x10003 + i
        EXPECT_EQ(fake.node_of_page(at(kBase + 3 * kPage + static_cast<std::uintptr_t>(i) * kPage)), (3 + i) % 4) << i;
    // A second thread with the same policy, touching a range that starts
    // at the same position in the cycle, gets the same pattern: no rotor
    // carries over between faults or threads.
    const std::uintptr_t other = kBase + 64 * kPage;
    std::thread t([&] {
        ASSERT_EQ(fake.set_mempolicy(PolicyMode::interleave, NodeSet{1, 2}), 0);
        fake.touch(at(other + kPage), kPage, 0);
        fake.touch(at(other), kPage, 0);
    });
    t.join();
    EXPECT_EQ(fake.node_of_page(at(other)), 1);
    EXPECT_EQ(fake.node_of_page(at(other + kPage)), 2);

    // Weighted interleave as a task policy walks the weights by address too.
    ASSERT_EQ(fake.write_interleave_weight(0, 3), 0);
    ASSERT_EQ(fake.set_mempolicy(PolicyMode::weighted_interleave, NodeSet{0, 1}), 0);
    const std::uintptr_t base = 0x12000000;   // page index 0x12000, a multiple of 4 (the weight total)
    for (int i = 7; i >= 0; --i) fake.touch(at(base + static_cast<std::uintptr_t>(i) * kPage), kPage, 0);
    const int expect[] = {0, 0, 0, 1, 0, 0, 0, 1};
    for (int i = 0; i < 8; ++i)
        EXPECT_EQ(fake.node_of_page(at(base + static_cast<std::uintptr_t>(i) * kPage)), expect[i]) << i;
}

TEST(OsRecording, PopulateWriteFaultsTheRangeLikeTouch) {
    RecordingOs fake(4, 1);
    // Under a range policy: placed by the policy.
    ASSERT_EQ(fake.mbind(at(kBase), 4 * kPage, PolicyMode::interleave, NodeSet{0, 1, 2, 3}, 0), 0);
    ASSERT_EQ(fake.madvise(at(kBase), 4 * kPage, MADV_POPULATE_WRITE), 0);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(fake.node_of_page(at(kBase + static_cast<std::uintptr_t>(i) * kPage)), i);
    // Without one: first touch on the calling thread's current CPU.
    fake.set_current_cpu(2);
    const std::uintptr_t b2 = kBase + 16 * kPage;
    ASSERT_EQ(fake.madvise(at(b2), 3 * kPage, MADV_POPULATE_WRITE), 0);
    EXPECT_EQ(fake.pages_per_node(at(b2), 3 * kPage), (std::map<unsigned, std::size_t>{{2, 3}}));
    // Present pages stay where they are, as with touch.
    fake.set_current_cpu(3);
    ASSERT_EQ(fake.madvise(at(b2), 4 * kPage, MADV_POPULATE_WRITE), 0);
    EXPECT_EQ(fake.pages_per_node(at(b2), 4 * kPage), (std::map<unsigned, std::size_t>{{2, 3}, {3, 1}}));
    // A read populate of anonymous memory maps the zero page: nothing placed.
    const std::uintptr_t b3 = kBase + 32 * kPage;
    ASSERT_EQ(fake.madvise(at(b3), 2 * kPage, MADV_POPULATE_READ), 0);
    EXPECT_EQ(fake.node_of_page(at(b3)), -1);
    // A failed madvise faults nothing; an unaligned one is EINVAL.
    fake.fail_call(CallKind::madvise, ENOMEM);
    EXPECT_EQ(fake.madvise(at(b3), 2 * kPage, MADV_POPULATE_WRITE), ENOMEM);
    EXPECT_EQ(fake.node_of_page(at(b3)), -1);
    EXPECT_EQ(fake.madvise(at(b3 + 8), kPage, MADV_POPULATE_WRITE), EINVAL);
    EXPECT_EQ(fake.node_of_page(at(b3)), -1);
    EXPECT_EQ(fake.calls(CallKind::madvise).back().advice, MADV_POPULATE_WRITE);
}

TEST(OsRecording, NumaMapsAreMadeFromTheSimulatedState) {
    constexpr std::size_t kHuge = 2u << 20;
    RecordingOs fake(4, 1, kPage, kHuge);
    std::string text;
    EXPECT_EQ(fake.read_numa_maps(0, text), ENOENT);   // nothing simulated yet
    // A first-touch range, an interleaved one (one page left untouched), a
    // policy with no pages yet, a huge-page range and a weighted one.
    fake.touch(at(kBase), 3 * kPage, 1);
    ASSERT_EQ(fake.mbind(at(kBase + 3 * kPage), 5 * kPage, PolicyMode::interleave, NodeSet{0, 2, 3}, 0), 0);
    fake.touch(at(kBase + 3 * kPage), 4 * kPage, 0);
    ASSERT_EQ(fake.mbind(at(kBase + 8 * kPage), 2 * kPage, PolicyMode::preferred_many, NodeSet{1, 2}, 0), 0);
    const std::uintptr_t huge = 0x40000000;
    ASSERT_EQ(fake.madvise(at(huge), 2 * kHuge, MADV_HUGEPAGE), 0);
    ASSERT_EQ(fake.mbind(at(huge), 2 * kHuge, PolicyMode::bind, NodeSet{3}, 0), 0);
    fake.touch(at(huge), kHuge + kPage, 0);
    ASSERT_EQ(fake.write_interleave_weight(1, 2), 0);
    const std::uintptr_t w = 0x50000000;
    ASSERT_EQ(fake.mbind(at(w), 6 * kPage, PolicyMode::weighted_interleave, NodeSet{0, 1}, 0), 0);
    ASSERT_EQ(fake.madvise(at(w), 6 * kPage, MADV_POPULATE_WRITE), 0);

    ASSERT_EQ(fake.read_numa_maps(0, text), 0);
    EXPECT_EQ(text, fake.simulated_numa_maps());
    // Interleave over {0,2,3} at page index 0x10003 + i: 0x10003 % 3 == 1,
    // so pages go to 2, 3, 0, 2; the fifth page has the policy but no page.
    EXPECT_EQ(text,
              "10000000 default anon=3 dirty=3 N1=3 kernelpagesize_kB=4\n"
              "10003000 interleave:0,2-3 anon=4 dirty=4 N0=1 N2=2 N3=1 kernelpagesize_kB=4\n"
              "10008000 prefer (many):1-2\n"
              "40000000 bind:3 anon=1024 dirty=1024 N3=1024 kernelpagesize_kB=4\n"
              "50000000 weighted interleave:0-1 anon=6 dirty=6 N0=2 N1=4 kernelpagesize_kB=4\n")
        << text;
    const auto records = parse_numa_maps(text);
    ASSERT_EQ(records.size(), 5u);
    EXPECT_EQ(records[2].policy_mode, "prefer (many)");
    EXPECT_EQ(records[4].policy_nodes, (NodeSet{0, 1}));

    // Totals of the text agree with the fake's own page counts.
    std::map<unsigned, std::uint64_t> expected;
    for (const auto& [node, pages] : fake.pages_per_node(at(0), ~std::uintptr_t{0})) expected[node] = pages;
    const NumaMapsTotals totals = numa_maps_totals(records);
    EXPECT_EQ(totals.pages_per_node, expected);
    EXPECT_EQ(totals.pages, 3u + 4u + 1024u + 6u);
    EXPECT_EQ(totals.bytes, totals.pages * kPage);

    // Injected text wins; another pid has no file; unmapping empties it.
    EXPECT_EQ(fake.read_numa_maps(77, text), ENOENT);
    fake.release(at(0), ~std::uintptr_t{0});
    EXPECT_EQ(fake.read_numa_maps(0, text), ENOENT);
    fake.set_numa_maps_text(0, "1000 default\n");
    ASSERT_EQ(fake.read_numa_maps(0, text), 0);
    EXPECT_EQ(text, "1000 default\n");
}

TEST(OsRecording, InvalidArgumentsAreRefusedLikeTheKernel) {
    RecordingOs fake(2, 1);
    EXPECT_EQ(fake.mbind(at(kBase + 1), kPage, PolicyMode::bind, NodeSet{0}, 0), EINVAL);        // unaligned
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{}, 0), EINVAL);             // empty set
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{5}, 0), EINVAL);            // no such node
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::default_, NodeSet{0}, 0), EINVAL);        // default takes none
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{0}, 1u << 5), EINVAL);       // bad flag
    EXPECT_EQ(fake.mbind(at(kBase), kPage, static_cast<PolicyMode>(9), NodeSet{0}, 0), EINVAL);  // bad mode
    // Nodes that exist survive the kernel's intersection with N_MEMORY.
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{1, 5}, 0), 0);
    EXPECT_EQ(fake.policy_of_page(at(kBase)).nodes, NodeSet{1});
    EXPECT_EQ(fake.calls().back().nodes, (NodeSet{1, 5}));   // recorded as passed
}

TEST(OsRecording, MemoryOnlyNodesAreTargetsAndZeroMemoryNodesAreNot) {
    Machine m;
    m.nodes.push_back(Node{0, 1u << 30, {0, 1}, 0, "DRAM"});
    m.nodes.push_back(Node{1, 1u << 30, {}, 1, "CXL"});
    m.nodes.push_back(Node{2, 0, {2}, 0, "DRAM"});
    m.distances = {{10, 20, 20}, {20, 10, 20}, {20, 20, 10}};
    RecordingOs fake(m);
    ASSERT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{1}, 0), 0);
    fake.touch(at(kBase), kPage, 0);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 1);
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{2}, 0), EINVAL);
    fake.touch(at(kBase + kPage), kPage, 2);   // CPU 2's node has no memory: nearest with memory
    EXPECT_EQ(fake.node_of_page(at(kBase + kPage)), 0);
}

TEST(OsRecording, StrictWithoutMoveRefusesMisplacedPagesAndInstallsNothing) {
    RecordingOs fake(2, 1);
    fake.touch(at(kBase), 2 * kPage, 0);
    EXPECT_EQ(fake.mbind(at(kBase), 2 * kPage, PolicyMode::bind, NodeSet{1}, mf_strict), EIO);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 0);
    EXPECT_EQ(fake.policy_of_page(at(kBase)).mode, PolicyMode::default_);
    EXPECT_EQ(fake.mbind(at(kBase), 2 * kPage, PolicyMode::bind, NodeSet{0}, mf_strict), 0);
    EXPECT_EQ(fake.policy_of_page(at(kBase)).mode, PolicyMode::bind);
}

TEST(OsRecording, SharedPagesAreSkippedSilentlyLikeTheKernel) {
    RecordingOs fake(2, 1);
    fake.touch(at(kBase), 2 * kPage, 0);
    fake.fail_page(at(kBase + kPage), EACCES);
    EXPECT_EQ(fake.mbind(at(kBase), 2 * kPage, PolicyMode::bind, NodeSet{1}, mf_move | mf_strict), 0);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 1);
    EXPECT_EQ(fake.node_of_page(at(kBase + kPage)), 0);   // only a query reveals it
    void* p = at(kBase + kPage);
    int target = 1;
    int status = 0;
    ASSERT_EQ(fake.move_pages(0, 1, &p, &target, &status, mf_move), 0);
    EXPECT_EQ(status, -EACCES);
}

TEST(OsRecording, AbsentPagesCanReadLikeAnOlderKernel) {
    RecordingOs fake(2, 1);
    fake.set_absent_errno(EFAULT);
    void* p = at(kBase);
    int status = 0;
    ASSERT_EQ(fake.move_pages(0, 1, &p, nullptr, &status, 0), 0);
    EXPECT_EQ(status, -EFAULT);
    EXPECT_TRUE(is_absent_status(status));
}

TEST(OsRecording, MoveMigratesMisplacedPagesToThePolicyNode) {
    RecordingOs fake(4, 1);
    fake.touch(at(kBase), 4 * kPage, 0);
    ASSERT_EQ(fake.mbind(at(kBase), 4 * kPage, PolicyMode::interleave, NodeSet{0, 2, 3}, mf_move | mf_strict), 0);
    // Pages on node 0 conform and stay; the kernel does not re-spread them.
    for (int i = 0; i < 4; ++i) EXPECT_EQ(fake.node_of_page(at(kBase + i * kPage)), 0);
    ASSERT_EQ(fake.mbind(at(kBase), 4 * kPage, PolicyMode::interleave, NodeSet{2, 3}, mf_move | mf_strict), 0);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(fake.node_of_page(at(kBase + i * kPage)), i % 2 == 0 ? 2 : 3);
}

TEST(OsRecording, UnmovablePageMakesMoveStrictFailAfterPartialWork) {
    RecordingOs fake(2, 1);
    fake.touch(at(kBase), 3 * kPage, 0);
    fake.fail_page(at(kBase + kPage), EBUSY);
    EXPECT_EQ(fake.mbind(at(kBase), 3 * kPage, PolicyMode::bind, NodeSet{1}, mf_move | mf_strict), EIO);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 1);
    EXPECT_EQ(fake.node_of_page(at(kBase + kPage)), 0);
    EXPECT_EQ(fake.node_of_page(at(kBase + 2 * kPage)), 1);
    EXPECT_EQ(fake.policy_of_page(at(kBase)).mode, PolicyMode::bind);
    // Without STRICT the same call reports success.
    EXPECT_EQ(fake.mbind(at(kBase), 3 * kPage, PolicyMode::bind, NodeSet{1}, mf_move), 0);
}

TEST(OsRecording, MovePagesQueriesAndMoves) {
    RecordingOs fake(3, 1);
    fake.touch(at(kBase), 2 * kPage, 1);
    void* pages[3] = {at(kBase), at(kBase + kPage + 17), at(kBase + 2 * kPage)};
    int status[3] = {9, 9, 9};
    ASSERT_EQ(fake.move_pages(0, 3, pages, nullptr, status, 0), 0);
    EXPECT_EQ(status[0], 1);
    EXPECT_EQ(status[1], 1);
    EXPECT_EQ(status[2], -ENOENT);
    int targets[3] = {2, 0, 2};
    fake.fail_page(at(kBase + kPage), EBUSY);
    ASSERT_EQ(fake.move_pages(0, 3, pages, targets, status, mf_move), 0);
    EXPECT_EQ(status[0], 2);
    EXPECT_EQ(status[1], -EBUSY);
    EXPECT_EQ(status[2], -ENOENT);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 2);
    EXPECT_EQ(fake.node_of_page(at(kBase + kPage)), 1);
    const Call last = fake.calls().back();
    EXPECT_EQ(last.targets, (std::vector<int>{2, 0, 2}));
    EXPECT_EQ(last.pages.size(), 3u);
    int bad[3] = {0, 7, 0};
    fake.clear_failures();
    EXPECT_EQ(fake.move_pages(0, 3, pages, bad, status, mf_move), ENODEV);
    EXPECT_EQ(fake.node_of_page(at(kBase)), 0);   // handled before the bad target
    EXPECT_EQ(fake.move_pages(999, 1, pages, nullptr, status, 0), ESRCH);
}

TEST(OsRecording, InjectedFailureHitsTheNthCallOnlyAndChangesNothing) {
    RecordingOs fake(2, 1);
    fake.fail_call(CallKind::mbind, ENOMEM, 2);
    EXPECT_EQ(fake.mbind(at(kBase), kPage, PolicyMode::bind, NodeSet{0}, 0), 0);
    EXPECT_EQ(fake.mbind(at(kBase + kPage), kPage, PolicyMode::bind, NodeSet{1}, 0), ENOMEM);
    EXPECT_EQ(fake.policy_of_page(at(kBase + kPage)).mode, PolicyMode::default_);
    EXPECT_EQ(fake.mbind(at(kBase + kPage), kPage, PolicyMode::bind, NodeSet{1}, 0), 0);
    EXPECT_EQ(fake.calls()[1].result, ENOMEM);
    fake.fail_call(CallKind::move_pages, EPERM, 1, 0);   // for ever
    int status = 0;
    void* p = at(kBase);
    EXPECT_EQ(fake.move_pages(0, 1, &p, nullptr, &status, 0), EPERM);
    EXPECT_EQ(fake.move_pages(0, 1, &p, nullptr, &status, 0), EPERM);
    fake.fail_call(CallKind::current_cpu, EINVAL);
    EXPECT_EQ(fake.current_cpu(), -EINVAL);
}

TEST(OsRecording, HugePagesPlaceWholeUnits) {
    constexpr std::size_t kHuge = 2u << 20;
    const std::uintptr_t base = 0x40000000;   // huge-aligned; huge index 512 (even)
    RecordingOs fake(2, 1, kPage, kHuge);
    ASSERT_EQ(fake.madvise(at(base), 2 * kHuge, MADV_HUGEPAGE), 0);
    ASSERT_EQ(fake.mbind(at(base), 2 * kHuge, PolicyMode::interleave, NodeSet{0, 1}, 0), 0);
    fake.touch(at(base), 2 * kHuge, 0);
    EXPECT_EQ(fake.pages_per_node(at(base), kHuge), (std::map<unsigned, std::size_t>{{0, 512}}));
    EXPECT_EQ(fake.pages_per_node(at(base + kHuge), kHuge), (std::map<unsigned, std::size_t>{{1, 512}}));
    // The same with MADV_NOHUGEPAGE spreads page by page.
    const std::uintptr_t b2 = base + 4 * kHuge;
    fake.set_thp_always(true);
    ASSERT_EQ(fake.madvise(at(b2), kHuge, MADV_NOHUGEPAGE), 0);
    ASSERT_EQ(fake.mbind(at(b2), kHuge, PolicyMode::interleave, NodeSet{0, 1}, 0), 0);
    fake.touch(at(b2), kHuge, 0);
    EXPECT_EQ(fake.pages_per_node(at(b2), kHuge), (std::map<unsigned, std::size_t>{{0, 256}, {1, 256}}));
}

TEST(OsRecording, AffinityAndCurrentCpuArePerThread) {
    RecordingOs fake(2, 2);
    EXPECT_EQ(fake.affinity(), (std::vector<unsigned>{0, 1, 2, 3}));
    ASSERT_EQ(fake.set_affinity(0, {3}), 0);
    EXPECT_EQ(fake.current_cpu(), 3);
    EXPECT_EQ(fake.set_affinity(0, {9}), EINVAL);
    EXPECT_EQ(fake.current_cpu(), 3);
    int other_cpu = -1;
    std::thread t([&] { other_cpu = fake.current_cpu(); });
    t.join();
    EXPECT_EQ(other_cpu, 0);   // a fresh thread may run anywhere: its first allowed CPU
    fake.touch(at(kBase), kPage);   // touched by the calling thread on CPU 3 -> node 1
    EXPECT_EQ(fake.node_of_page(at(kBase)), 1);
    std::vector<unsigned> cpus;
    ASSERT_EQ(fake.get_affinity(0, cpus), 0);
    EXPECT_EQ(cpus, std::vector<unsigned>{3});
}

TEST(OsRecording, BalancingSysctlSimulation) {
    RecordingOs fake(2, 1);
    int v = -1;
    ASSERT_EQ(fake.read_numa_balancing(v), 0);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(fake.write_numa_balancing(2), 0);
    EXPECT_EQ(fake.numa_balancing(), 2);
    EXPECT_EQ(fake.write_numa_balancing(4), EINVAL);
    fake.set_balancing_write_error(EPERM);
    EXPECT_EQ(fake.write_numa_balancing(0), EPERM);
    EXPECT_EQ(fake.numa_balancing(), 2);
    fake.set_numa_balancing(std::nullopt);
    EXPECT_EQ(fake.read_numa_balancing(v), ENOENT);
}

TEST(OsRecording, NumaMapsTextAndPhysicalFrames) {
    RecordingOs fake(2, 1);
    std::string text;
    EXPECT_EQ(fake.read_numa_maps(0, text), ENOENT);
    fake.set_numa_maps_text(0, "1000 default anon=1 N0=1 kernelpagesize_kB=4\n");
    ASSERT_EQ(fake.read_numa_maps(0, text), 0);
    EXPECT_EQ(text, "1000 default anon=1 N0=1 kernelpagesize_kB=4\n");
    std::uint64_t pfn = 0;
    EXPECT_EQ(fake.physical_frame(at(kBase), pfn), ENOENT);
    fake.touch(at(kBase), 2 * kPage, 1);
    std::uint64_t pfn2 = 0;
    ASSERT_EQ(fake.physical_frame(at(kBase), pfn), 0);
    ASSERT_EQ(fake.physical_frame(at(kBase + kPage), pfn2), 0);
    EXPECT_NE(pfn, pfn2);
}

}  // namespace
}  // namespace numaware::os
