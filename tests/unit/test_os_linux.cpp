// The real os layer on this (possibly single-node) host: node 0 always
// exists, so binding to it, querying and moving to it must work here.
#include <gtest/gtest.h>

#include <cerrno>
#include <sys/mman.h>
#include <unistd.h>

#include "os/os.hpp"

namespace numaware::os {
namespace {

struct Pages {
    explicit Pages(std::size_t n) : count(n), len(n * linux_os().page_size()) {
        addr = static_cast<char*>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    }
    ~Pages() { munmap(addr, len); }
    void* page(std::size_t i) const { return addr + i * linux_os().page_size(); }
    std::size_t count, len;
    char* addr;
};

TEST(OsLinux, PageSizeMatchesSysconf) {
    EXPECT_EQ(linux_os().page_size(), static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
}

TEST(OsLinux, BindToNodeZeroThenQueryWithMovePages) {
    Pages p(8);
    ASSERT_NE(p.addr, MAP_FAILED);
    ASSERT_EQ(linux_os().madvise(p.addr, p.len, MADV_NOHUGEPAGE), 0);
    ASSERT_EQ(linux_os().mbind(p.addr, p.len, PolicyMode::bind, NodeSet{0}, mf_move | mf_strict), 0);
    std::vector<void*> ptrs;
    for (std::size_t i = 0; i < p.count; ++i) ptrs.push_back(p.page(i));
    std::vector<int> status(p.count, 77);
    ASSERT_EQ(linux_os().move_pages(0, p.count, ptrs.data(), nullptr, status.data(), 0), 0);
    for (int s : status) EXPECT_TRUE(is_absent_status(s)) << s;   // not touched yet
    for (std::size_t i = 0; i < p.count; ++i) p.addr[i * linux_os().page_size()] = 1;
    ASSERT_EQ(linux_os().move_pages(0, p.count, ptrs.data(), nullptr, status.data(), 0), 0);
    for (int s : status) EXPECT_EQ(s, 0);
    std::vector<int> targets(p.count, 0);
    ASSERT_EQ(linux_os().move_pages(0, p.count, ptrs.data(), targets.data(), status.data(), mf_move), 0);
    for (int s : status) EXPECT_EQ(s, 0);
    PolicyQuery q;
    ASSERT_EQ(linux_os().get_mempolicy(p.addr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::bind);
    EXPECT_EQ(q.nodes, NodeSet{0});
    EXPECT_EQ(q.mode_flags, 0u);
}

TEST(OsLinux, KernelErrorsComeBackAsPositiveErrno) {
    Pages p(1);
    EXPECT_EQ(linux_os().mbind(p.addr + 1, p.len, PolicyMode::bind, NodeSet{0}, 0), EINVAL);
    EXPECT_EQ(linux_os().mbind(p.addr, p.len, PolicyMode::bind, NodeSet{}, 0), EINVAL);
    EXPECT_EQ(linux_os().mbind(p.addr, p.len, PolicyMode::bind, NodeSet{NodeSet::max_nodes - 1}, 0), EINVAL);
    EXPECT_EQ(linux_os().set_mempolicy(static_cast<PolicyMode>(99), NodeSet{0}), EINVAL);
    EXPECT_EQ(linux_os().madvise(p.addr + 1, 1, MADV_NORMAL), EINVAL);
    p.addr[0] = 1;
    void* page = p.addr;
    int target = static_cast<int>(NodeSet::max_nodes - 1);
    int status = 0;
    EXPECT_EQ(linux_os().move_pages(0, 1, &page, &target, &status, mf_move), ENODEV);
    EXPECT_EQ(linux_os().set_affinity(0, {100000}), EINVAL);
}

TEST(OsLinux, ThreadPolicyRoundTrip) {
    ASSERT_EQ(linux_os().set_mempolicy(PolicyMode::preferred, NodeSet{0}), 0);
    PolicyQuery q;
    ASSERT_EQ(linux_os().get_mempolicy(nullptr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::preferred);
    EXPECT_EQ(q.nodes, NodeSet{0});
    ASSERT_EQ(linux_os().set_mempolicy(PolicyMode::default_, NodeSet{}), 0);
    ASSERT_EQ(linux_os().get_mempolicy(nullptr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::default_);
    EXPECT_TRUE(q.nodes.empty());
}

TEST(OsLinux, AffinityRoundTripAndCurrentCpu) {
    std::vector<unsigned> all;
    ASSERT_EQ(linux_os().get_affinity(0, all), 0);
    ASSERT_FALSE(all.empty());
    ASSERT_EQ(linux_os().set_affinity(0, {all.back()}), 0);
    EXPECT_EQ(linux_os().current_cpu(), static_cast<int>(all.back()));
    std::vector<unsigned> now;
    ASSERT_EQ(linux_os().get_affinity(0, now), 0);
    EXPECT_EQ(now, std::vector<unsigned>{all.back()});
    ASSERT_EQ(linux_os().set_affinity(0, all), 0);
}

TEST(OsLinux, NumaBalancingReadsAValidState) {
    int v = -1;
    const int rc = linux_os().read_numa_balancing(v);
    if (rc == ENOENT) {
        EXPECT_NE(access("/proc/sys/kernel/numa_balancing", F_OK), 0);
    } else {
        ASSERT_EQ(rc, 0);
        EXPECT_GE(v, 0);
        EXPECT_LE(v, 3);
    }
}

TEST(OsLinux, NumaMapsOfSelfListsAMappingWeBound) {
    Pages p(4);
    ASSERT_EQ(linux_os().mbind(p.addr, p.len, PolicyMode::bind, NodeSet{0}, 0), 0);
    p.addr[0] = 1;
    std::string text;
    ASSERT_EQ(linux_os().read_numa_maps(0, text), 0);
    char start[32];
    std::snprintf(start, sizeof start, "%lx bind:0", reinterpret_cast<unsigned long>(p.addr));
    EXPECT_NE(text.find(start), std::string::npos) << text;
    EXPECT_EQ(linux_os().read_numa_maps(999999999, text), ENOENT);
}

TEST(OsLinux, PhysicalFrameNeedsAPresentPage) {
    Pages p(2);
    p.addr[0] = 1;
    std::uint64_t pfn = 0;
    const int rc = linux_os().physical_frame(p.addr, pfn);
    if (geteuid() == 0) {
        EXPECT_EQ(rc, 0);
        EXPECT_NE(pfn, 0u);
    } else {
        EXPECT_EQ(rc, EPERM);
    }
    EXPECT_EQ(linux_os().physical_frame(p.page(1), pfn), ENOENT);
}

TEST(OsLinux, WeightedInterleaveDetection) {
    const bool has = linux_os().has_weighted_interleave();
    EXPECT_EQ(has, access("/sys/kernel/mm/mempolicy/weighted_interleave", F_OK) == 0);
    if (has) {
        unsigned w = 0;
        ASSERT_EQ(linux_os().read_interleave_weight(0, w), 0);
        EXPECT_GE(w, 1u);
        EXPECT_EQ(linux_os().read_interleave_weight(NodeSet::max_nodes - 1, w), ENOENT);
    }
}

}  // namespace
}  // namespace numaware::os
