// The one page-location query (placement/page_locations.hpp) against the
// recording fake: what it asks the kernel, and the settling rule.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "os/recording_os.hpp"
#include "placement/page_locations.hpp"

namespace numaware {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::uintptr_t kBase = 0x40000000;

void* at(std::size_t page) { return reinterpret_cast<void*>(kBase + page * kPage); }

TEST(PlacementLocations, MaybeAbsentAsksOnceAndTakesAbsentAsAnAnswer) {
    os::RecordingOs fake(2, 1);
    fake.touch(at(1), kPage, 1);   // page 1 on node 1; pages 0 and 2 never touched
    std::vector<void*> pages = {at(0), at(1), at(2)};
    std::vector<int> status(3, 99);
    ASSERT_EQ(locate_pages(fake, pages.data(), pages.size(), status.data(), PagesExpected::maybe_absent), 0);
    EXPECT_EQ(status, (std::vector<int>{-ENOENT, 1, -ENOENT}));
    EXPECT_EQ(fake.calls(os::CallKind::move_pages).size(), 1u);
    EXPECT_TRUE(fake.calls(os::CallKind::madvise).empty());
}

TEST(PlacementLocations, PresentSettlesPagesThatReadAbsent) {
    os::RecordingOs fake(2, 1);
    fake.set_absent_errno(EFAULT);   // as Debian's 6.1 reads them
    fake.touch(at(1), kPage, 0);
    std::vector<int> status(4, 99);
    ASSERT_EQ(locate_range(fake, at(0), 4, status.data(), PagesExpected::present), 0);
    // Pages 0, 2 and 3 stay absent in the fake (a read fault maps only the
    // zero page), so every attempt asks about them again.
    EXPECT_EQ(status, (std::vector<int>{-EFAULT, 0, -EFAULT, -EFAULT}));
    const auto advice = fake.calls(os::CallKind::madvise);
    ASSERT_EQ(advice.size(), 2u) << "one MADV_POPULATE_READ per run of adjacent pages";
    EXPECT_EQ(advice[0].advice, os::madv_populate_read);
    EXPECT_EQ(advice[0].addr, kBase);
    EXPECT_EQ(advice[0].len, kPage);
    EXPECT_EQ(advice[1].addr, kBase + 2 * kPage);
    EXPECT_EQ(advice[1].len, 2 * kPage);
    const auto queries = fake.calls(os::CallKind::move_pages);
    ASSERT_EQ(queries.size(), 8u) << "the first query and seven settling attempts";
    EXPECT_EQ(queries.back().pages, (std::vector<std::uintptr_t>{kBase, kBase + 2 * kPage, kBase + 3 * kPage}));
}

TEST(PlacementLocations, PresentPagesNeedNoSettling) {
    os::RecordingOs fake(2, 1);
    fake.touch(at(0), 3 * kPage, 1);
    std::vector<int> status(3, 99);
    ASSERT_EQ(locate_range(fake, at(0), 3, status.data(), PagesExpected::present), 0);
    EXPECT_EQ(status, (std::vector<int>{1, 1, 1}));
    EXPECT_EQ(fake.calls(os::CallKind::move_pages).size(), 1u);
    EXPECT_TRUE(fake.calls(os::CallKind::madvise).empty());
}

// After a writer: a page balancing hinted reads absent until a read fault,
// and is found on the second question; a page the writer never touched
// stays absent, with no third question and no wait.
TEST(PlacementLocations, WrittenAsksOnceMoreAfterAReadFault) {
    os::RecordingOs fake(2, 1);
    fake.touch(at(0), kPage, 1);
    fake.hint_balancing(at(0), kPage);   // page 0 present on node 1, PROT_NONE; page 1 never touched
    std::vector<int> status(3, 99);
    fake.touch(at(2), kPage, 0);
    ASSERT_EQ(locate_range(fake, at(0), 3, status.data(), PagesExpected::written), 0);
    EXPECT_EQ(status, (std::vector<int>{1, -ENOENT, 0}));
    const auto advice = fake.calls(os::CallKind::madvise);
    ASSERT_EQ(advice.size(), 1u) << "one MADV_POPULATE_READ of the run of pages that read absent";
    EXPECT_EQ(advice[0].advice, os::madv_populate_read);
    EXPECT_EQ(advice[0].addr, kBase);
    EXPECT_EQ(advice[0].len, 2 * kPage);
    const auto queries = fake.calls(os::CallKind::move_pages);
    ASSERT_EQ(queries.size(), 2u) << "the query and one more";
    EXPECT_EQ(queries.back().pages, (std::vector<std::uintptr_t>{kBase, kBase + kPage}));

}

// maybe_absent: a page that reads absent but is resident (mincore) was
// hinted by balancing, and is settled; a page never touched stays absent,
// with no fault taken on it.
TEST(PlacementLocations, MaybeAbsentSettlesOnlyPagesThatAreResident) {
    os::RecordingOs fake(2, 1);
    fake.set_absent_errno(EFAULT);   // as Debian's 6.1 reads untouched pages
    fake.touch(at(0), kPage, 1);
    fake.hint_balancing(at(0), kPage);   // page 0 present on node 1, PROT_NONE; page 1 never touched
    fake.touch(at(2), kPage, 0);
    fake.set_current_cpu(0);             // asked from node 0
    std::vector<int> status(3, 99);
    ASSERT_EQ(locate_range(fake, at(0), 3, status.data(), PagesExpected::maybe_absent), 0);
    EXPECT_EQ(status, (std::vector<int>{1, -EFAULT, 0}));
    EXPECT_EQ(fake.node_of_page(at(0)), 1) << "the hint is resolved where the page is";
    const auto residency = fake.calls(os::CallKind::mincore);
    ASSERT_EQ(residency.size(), 1u) << "one mincore per run of pages that read absent";
    EXPECT_EQ(residency[0].addr, kBase);
    EXPECT_EQ(residency[0].len, 2 * kPage);
    const auto advice = fake.calls(os::CallKind::madvise);
    ASSERT_EQ(advice.size(), 1u) << "a read fault of the resident page alone";
    EXPECT_EQ(advice[0].advice, os::madv_populate_read);
    EXPECT_EQ(advice[0].addr, kBase);
    EXPECT_EQ(advice[0].len, kPage);
    const auto queries = fake.calls(os::CallKind::move_pages);
    ASSERT_EQ(queries.size(), 2u);
    EXPECT_EQ(queries.back().pages, (std::vector<std::uintptr_t>{kBase}));

    // A failed mincore leaves the pages as they read.
    fake.hint_balancing(at(0), kPage);
    fake.fail_call(os::CallKind::mincore, ENOMEM);
    ASSERT_EQ(locate_range(fake, at(0), 2, status.data(), PagesExpected::maybe_absent), 0);
    EXPECT_EQ(status[0], -EFAULT);
    EXPECT_EQ(status[1], -EFAULT);
}

// The read fault that resolves a balancing hint would move the page to the
// asking thread's node under the default policy (the fake does as the
// kernel does: see the control below). The query takes it under a thread
// policy of "local", which has no migrate-on-fault, and puts the default back.
TEST(PlacementLocations, HintedPagesStayWhereTheyAreWhenAskedFromAnotherNode) {
    os::RecordingOs fake(2, 1);
    fake.touch(at(0), 8 * kPage, 0);       // pages 0-7 on node 0, written from CPU 0
    fake.hint_balancing(at(0), 8 * kPage);
    fake.set_current_cpu(1);               // asked from node 1
    std::vector<int> status(4, 99);
    ASSERT_EQ(locate_range(fake, at(0), 4, status.data(), PagesExpected::present), 0);
    EXPECT_EQ(status, (std::vector<int>{0, 0, 0, 0}));
    for (std::size_t p = 0; p < 4; ++p) EXPECT_EQ(fake.node_of_page(at(p)), 0) << "page " << p;
    const auto policies = fake.calls(os::CallKind::set_mempolicy);
    ASSERT_EQ(policies.size(), 2u);
    EXPECT_EQ(policies[0].mode, os::PolicyMode::local);
    EXPECT_EQ(policies[1].mode, os::PolicyMode::default_);
    EXPECT_EQ(fake.thread_policy().mode, os::PolicyMode::default_);

    // Control: the same fault without the query's care moves the pages.
    ASSERT_EQ(fake.madvise(at(4), 4 * kPage, os::madv_populate_read), 0);
    for (std::size_t p = 4; p < 8; ++p) EXPECT_EQ(fake.node_of_page(at(p)), 1) << "page " << p;
}

// A thread with a policy of its own has no migrate-on-fault: it is left as it is.
TEST(PlacementLocations, AThreadsOwnPolicyIsLeftAlone) {
    os::RecordingOs fake(2, 1);
    fake.touch(at(0), 2 * kPage, 0);
    fake.hint_balancing(at(0), 2 * kPage);
    fake.set_current_cpu(1);
    ASSERT_EQ(fake.set_mempolicy(os::PolicyMode::bind, NodeSet{0, 1}), 0);
    std::vector<int> status(2, 99);
    ASSERT_EQ(locate_range(fake, at(0), 2, status.data(), PagesExpected::written), 0);
    EXPECT_EQ(status, (std::vector<int>{0, 0}));
    EXPECT_EQ(fake.calls(os::CallKind::set_mempolicy).size(), 1u) << "only the test's own";
    EXPECT_EQ(fake.thread_policy().mode, os::PolicyMode::bind);
}

TEST(PlacementLocations, RangesAreAskedInStackBatches) {
    os::RecordingOs fake(2, 1);
    fake.touch(at(0), 1000 * kPage, 0);
    std::vector<int> status(1000, 99);
    ASSERT_EQ(locate_range(fake, at(0), 1000, status.data(), PagesExpected::maybe_absent), 0);
    for (int s : status) ASSERT_EQ(s, 0);
    const auto queries = fake.calls(os::CallKind::move_pages);
    ASSERT_EQ(queries.size(), 2u);
    EXPECT_EQ(queries[0].pages.size(), 512u);
    EXPECT_EQ(queries[1].pages.size(), 488u);
    EXPECT_EQ(queries[1].pages.front(), kBase + 512 * kPage);
}

TEST(PlacementLocations, AFailedQueryReturnsItsErrno) {
    os::RecordingOs fake(2, 1);
    fake.fail_call(os::CallKind::move_pages, EPERM);
    std::vector<int> status(2, 99);
    EXPECT_EQ(locate_range(fake, at(0), 2, status.data(), PagesExpected::present), EPERM);
    EXPECT_TRUE(fake.calls(os::CallKind::madvise).empty());
}

}  // namespace
}  // namespace numaware
