// tests/vm/os_guest_test.cpp — the os layer against a real multi-node kernel.
//
// Runs inside an emulated NUMA guest (`numaware vm`). The node count and
// which nodes have memory come from the guest's sysfs, never assumed.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "os/os.hpp"

namespace numaware::os {
namespace {

NodeSet read_node_list(const std::string& path) {
    std::ifstream in(path);
    std::string text;
    std::getline(in, text);
    return text.empty() ? NodeSet{} : NodeSet::parse(text, path);
}

// Nodes the guest kernel reports as having memory (CPU-less ones included).
NodeSet memory_nodes() { return read_node_list("/sys/devices/system/node/has_memory"); }

unsigned sysfs_node_count() {
    unsigned count = 0;
    DIR* dir = opendir("/sys/devices/system/node");
    if (dir == nullptr) return 0;
    while (dirent* e = readdir(dir)) {
        const std::string name = e->d_name;
        if (name.size() > 4 && name.compare(0, 4, "node") == 0 &&
            name.find_first_not_of("0123456789", 4) == std::string::npos)
            ++count;
    }
    closedir(dir);
    return count;
}

// An anonymous mapping of small pages (no THP), unmapped on scope exit.
struct Mapping {
    explicit Mapping(std::size_t pages_) : pages(pages_), len(pages_ * linux_os().page_size()) {
        addr = static_cast<char*>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (addr == MAP_FAILED) addr = nullptr;
        if (addr != nullptr) linux_os().madvise(addr, len, MADV_NOHUGEPAGE);
    }
    ~Mapping() {
        if (addr != nullptr) munmap(addr, len);
    }
    void touch() const {
        for (std::size_t i = 0; i < pages; ++i) addr[i * linux_os().page_size()] = 1;
    }
    std::vector<int> query() const {
        std::vector<void*> ptrs(pages);
        for (std::size_t i = 0; i < pages; ++i) ptrs[i] = addr + i * linux_os().page_size();
        std::vector<int> status(pages, -12345);
        int rc = linux_os().move_pages(0, pages, ptrs.data(), nullptr, status.data(), 0);
        EXPECT_EQ(rc, 0) << std::strerror(rc);
        return status;
    }
    std::size_t pages;
    std::size_t len;
    char* addr = nullptr;
};

TEST(OsGuest, GuestHasSeveralNodes) {
    const unsigned count = sysfs_node_count();
    EXPECT_GE(count, 2u) << "guest tests need an emulated multi-node machine";
    EXPECT_GE(memory_nodes().size(), 2u);
    EXPECT_LE(memory_nodes().size(), count);
}

TEST(OsGuest, BindThenTouchPlacesEveryPageOnTheBoundNode) {
    for (unsigned node : memory_nodes().to_vector()) {
        Mapping m(32);
        ASSERT_NE(m.addr, nullptr);
        ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{node}, mf_move | mf_strict), 0);
        m.touch();
        for (int s : m.query()) EXPECT_EQ(s, static_cast<int>(node));
        PolicyQuery q;
        ASSERT_EQ(linux_os().get_mempolicy(m.addr, q), 0);
        EXPECT_EQ(q.mode, PolicyMode::bind);
        EXPECT_EQ(q.nodes, NodeSet{node});
    }
}

TEST(OsGuest, UntouchedPagesAreReportedAbsent) {
    Mapping m(4);
    ASSERT_NE(m.addr, nullptr);
    for (int s : m.query()) EXPECT_EQ(s, -ENOENT);
}

TEST(OsGuest, InterleaveFollowsThePageIndexRule) {
    // The rule RecordingOs simulates: node = set[(addr / page) % |set|].
    const std::vector<unsigned> set = memory_nodes().to_vector();
    Mapping m(64);
    ASSERT_NE(m.addr, nullptr);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::interleave, memory_nodes(), mf_move | mf_strict), 0);
    m.touch();
    const auto status = m.query();
    const std::size_t page = linux_os().page_size();
    for (std::size_t i = 0; i < m.pages; ++i) {
        const auto index = reinterpret_cast<std::uintptr_t>(m.addr + i * page) / page;
        EXPECT_EQ(status[i], static_cast<int>(set[index % set.size()])) << "page " << i;
    }
}

TEST(OsGuest, MovePagesMigratesAndReportsTheNewNode) {
    const std::vector<unsigned> set = memory_nodes().to_vector();
    Mapping m(16);
    ASSERT_NE(m.addr, nullptr);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{set.front()}, 0), 0);
    m.touch();
    std::vector<void*> ptrs(m.pages);
    std::vector<int> targets(m.pages, static_cast<int>(set.back()));
    std::vector<int> status(m.pages, -12345);
    for (std::size_t i = 0; i < m.pages; ++i) ptrs[i] = m.addr + i * linux_os().page_size();
    ASSERT_EQ(linux_os().move_pages(0, m.pages, ptrs.data(), targets.data(), status.data(), mf_move), 0);
    for (int s : status) EXPECT_EQ(s, static_cast<int>(set.back()));
    for (int s : m.query()) EXPECT_EQ(s, static_cast<int>(set.back()));
}

TEST(OsGuest, MovePagesToANodeWithoutMemoryFailsWithENODEV) {
    Mapping m(1);
    ASSERT_NE(m.addr, nullptr);
    m.touch();
    void* p = m.addr;
    int target = static_cast<int>(NodeSet::max_nodes - 1);   // never a memory node in a guest
    int status = 0;
    EXPECT_EQ(linux_os().move_pages(0, 1, &p, &target, &status, mf_move), ENODEV);
}

TEST(OsGuest, StrictWithoutMoveRefusesMisplacedPages) {
    const std::vector<unsigned> set = memory_nodes().to_vector();
    Mapping m(8);
    ASSERT_NE(m.addr, nullptr);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{set.front()}, 0), 0);
    m.touch();
    EXPECT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{set.back()}, mf_strict), EIO);
    for (int s : m.query()) EXPECT_EQ(s, static_cast<int>(set.front()));
}

TEST(OsGuest, WeightedInterleaveFollowsWeightsOrIsRefused) {
    const std::vector<unsigned> set = memory_nodes().to_vector();
    Mapping m(64);
    ASSERT_NE(m.addr, nullptr);
    if (!linux_os().has_weighted_interleave()) {
        // Before 6.9 the kernel does not know the mode at all.
        EXPECT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::weighted_interleave, memory_nodes(), 0), EINVAL);
        EXPECT_EQ(std::getenv("NUMAWARE_EXPECT_WEIGHTED"), nullptr) << "kernel lacks weighted interleave";
        return;
    }
    std::vector<unsigned> old(set.size());
    for (std::size_t i = 0; i < set.size(); ++i) ASSERT_EQ(linux_os().read_interleave_weight(set[i], old[i]), 0);
    std::vector<unsigned> weights(set.size(), 1);
    weights[0] = 3;
    for (std::size_t i = 0; i < set.size(); ++i) ASSERT_EQ(linux_os().write_interleave_weight(set[i], weights[i]), 0);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::weighted_interleave, memory_nodes(), mf_move | mf_strict), 0);
    m.touch();
    const auto status = m.query();
    unsigned total = 0;
    for (unsigned w : weights) total += w;
    const std::size_t page = linux_os().page_size();
    for (std::size_t i = 0; i < m.pages; ++i) {
        // The rule RecordingOs simulates: walk the set by weight at (addr/page) % total.
        auto target = reinterpret_cast<std::uintptr_t>(m.addr + i * page) / page % total;
        std::size_t k = 0;
        while (target >= weights[k]) target -= weights[k++];
        EXPECT_EQ(status[i], static_cast<int>(set[k])) << "page " << i;
    }
    for (std::size_t i = 0; i < set.size(); ++i) EXPECT_EQ(linux_os().write_interleave_weight(set[i], old[i]), 0);
}

TEST(OsGuest, AffinityMovesTheThreadToEachCpu) {
    std::vector<unsigned> all;
    ASSERT_EQ(linux_os().get_affinity(0, all), 0);
    ASSERT_FALSE(all.empty());
    for (unsigned cpu : all) {
        ASSERT_EQ(linux_os().set_affinity(0, {cpu}), 0);
        EXPECT_EQ(linux_os().current_cpu(), static_cast<int>(cpu));
        std::vector<unsigned> now;
        ASSERT_EQ(linux_os().get_affinity(0, now), 0);
        EXPECT_EQ(now, std::vector<unsigned>{cpu});
    }
    ASSERT_EQ(linux_os().set_affinity(0, all), 0);
}

TEST(OsGuest, ThreadPolicyRoundTrips) {
    const NodeSet nodes = memory_nodes();
    ASSERT_EQ(linux_os().set_mempolicy(PolicyMode::interleave, nodes), 0);
    PolicyQuery q;
    ASSERT_EQ(linux_os().get_mempolicy(nullptr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::interleave);
    EXPECT_EQ(q.nodes, nodes);
    ASSERT_EQ(linux_os().set_mempolicy(PolicyMode::default_, NodeSet{}), 0);
    ASSERT_EQ(linux_os().get_mempolicy(nullptr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::default_);
}

TEST(OsGuest, PhysicalFrameOfATouchedPage) {
    Mapping m(2);
    ASSERT_NE(m.addr, nullptr);
    m.addr[0] = 1;
    std::uint64_t pfn = 0;
    const int rc = linux_os().physical_frame(m.addr, pfn);
    if (geteuid() == 0) {
        EXPECT_EQ(rc, 0);
        EXPECT_NE(pfn, 0u);
    } else {
        EXPECT_EQ(rc, EPERM);
    }
    EXPECT_EQ(linux_os().physical_frame(m.addr + linux_os().page_size(), pfn), ENOENT);
}

}  // namespace
}  // namespace numaware::os
