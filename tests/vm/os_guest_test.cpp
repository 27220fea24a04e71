// tests/vm/os_guest_test.cpp — the os layer against a real multi-node kernel.
//
// Runs inside an emulated NUMA guest (`numaware vm`). The node count and
// which nodes have memory come from the guest's sysfs, never assumed.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "numaware/balancing.hpp"
#include "os/balancing.hpp"
#include "os/numa_maps.hpp"
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
    for (int s : m.query()) EXPECT_TRUE(is_absent_status(s)) << s;   // -ENOENT, or -EFAULT on 6.1
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
    // Nothing was installed (RecordingOs simulates exactly this).
    PolicyQuery q;
    ASSERT_EQ(linux_os().get_mempolicy(m.addr, q), 0);
    EXPECT_EQ(q.mode, PolicyMode::bind);
    EXPECT_EQ(q.nodes, NodeSet{set.front()});
}

TEST(OsGuest, SharedPagesAreSkippedSilentlyByMoveStrict) {
    // A page still shared with a forked child is not migrated by MOVE, yet
    // mbind(MOVE|STRICT) returns 0 — only the verification query sees it.
    const std::vector<unsigned> set = memory_nodes().to_vector();
    Mapping m(8);
    ASSERT_NE(m.addr, nullptr);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{set.front()}, 0), 0);
    m.touch();
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char c;
        (void)!read(fds[0], &c, 1);
        _exit(0);
    }
    const std::size_t page = linux_os().page_size();
    for (std::size_t i = 0; i < 4; ++i) m.addr[i * page] = 2;   // first half: private again
    const int rc = linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{set.back()}, mf_move | mf_strict);
    const auto status = m.query();
    std::vector<void*> ptrs(m.pages);
    for (std::size_t i = 0; i < m.pages; ++i) ptrs[i] = m.addr + i * page;
    std::vector<int> targets(m.pages, static_cast<int>(set.back()));
    std::vector<int> moved(m.pages, 0);
    const int rc2 = linux_os().move_pages(0, m.pages, ptrs.data(), targets.data(), moved.data(), mf_move);
    (void)!write(fds[1], "x", 1);
    waitpid(child, nullptr, 0);
    EXPECT_EQ(rc, 0);
    for (std::size_t i = 0; i < m.pages; ++i)
        EXPECT_EQ(status[i], static_cast<int>(i < 4 ? set.back() : set.front())) << "page " << i;
    EXPECT_EQ(rc2, 0);
    for (std::size_t i = 4; i < m.pages; ++i) EXPECT_EQ(moved[i], -EACCES) << "page " << i;
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

TEST(OsGuest, BalancingTogglesAndTheGuardRestores) {
    const BalancingState before = balancing_state();   // the guest kernel has the sysctl
    const BalancingState other = before == BalancingState::off ? BalancingState::normal : BalancingState::off;
    {
        BalancingGuard guard(other);
        EXPECT_TRUE(guard.changed());
        EXPECT_EQ(guard.previous(), before);
        EXPECT_EQ(balancing_state(), other);
    }
    EXPECT_EQ(balancing_state(), before);
    set_balancing_state(BalancingState::normal);
    EXPECT_EQ(balancing_state(), BalancingState::normal);
    set_balancing_state(before);
    EXPECT_EQ(balancing_state(), before);
}

TEST(OsGuest, NumaMapsAgreesWithMovePagesForABoundRange) {
    const std::vector<unsigned> set = memory_nodes().to_vector();
    const unsigned node = set.back();
    Mapping m(24);
    ASSERT_NE(m.addr, nullptr);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::bind, NodeSet{node}, mf_move | mf_strict), 0);
    m.touch();
    std::size_t on_node = 0;
    for (int s : m.query()) on_node += s == static_cast<int>(node) ? 1 : 0;
    EXPECT_EQ(on_node, m.pages);
    std::string text;
    ASSERT_EQ(linux_os().read_numa_maps(0, text), 0);
    const auto records = parse_numa_maps(text);
    const NumaMapsRecord* rec = nullptr;
    for (const auto& r : records)
        if (r.address == reinterpret_cast<std::uintptr_t>(m.addr)) rec = &r;
    ASSERT_NE(rec, nullptr) << text;
    EXPECT_EQ(rec->policy_mode, "bind");
    EXPECT_EQ(rec->policy_nodes, NodeSet{node});
    EXPECT_EQ(rec->pages_per_node.size(), 1u);
    EXPECT_EQ(rec->pages_per_node.at(node), on_node);
    // And the range is reported exempt from balancing because it is bound.
    bool exempt = false;
    for (const auto& e : exempt_ranges(records))
        if (e.address == rec->address) exempt = e.bound;
    EXPECT_TRUE(exempt);
}

TEST(OsGuest, NumaMapsShowsInterleaveSpreadLikeMovePages) {
    const NodeSet nodes = memory_nodes();
    Mapping m(40);
    ASSERT_NE(m.addr, nullptr);
    ASSERT_EQ(linux_os().mbind(m.addr, m.len, PolicyMode::interleave, nodes, mf_move | mf_strict), 0);
    m.touch();
    std::map<unsigned, std::uint64_t> counted;
    for (int s : m.query()) {
        ASSERT_GE(s, 0);
        ++counted[static_cast<unsigned>(s)];
    }
    std::string text;
    ASSERT_EQ(linux_os().read_numa_maps(0, text), 0);
    for (const auto& r : parse_numa_maps(text)) {
        if (r.address != reinterpret_cast<std::uintptr_t>(m.addr)) continue;
        EXPECT_EQ(r.policy_mode, "interleave");
        EXPECT_EQ(r.pages_per_node, counted);
        return;
    }
    ADD_FAILURE() << "mapping not in numa_maps";
}

}  // namespace
}  // namespace numaware::os
