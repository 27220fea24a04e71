// A process restricted to part of the machine (issue 17): inside a cgroup
// cpuset, or under numactl --cpunodebind, on a real kernel. The expected
// sets come from the kernel (/proc/self/status, /sys), never from the test's
// own knowledge of the guest; tests/vm/restricted_check.sh runs these in a
// cpuset and under numactl, and checks that they were restricted at all.
// Unrestricted (the other guest batches) they hold as well: nothing is
// left out there.
#include <sched.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/error.hpp"
#include "numaware/heap.hpp"
#include "numaware/machine.hpp"
#include "numaware/nodeset.hpp"
#include "numaware/placement.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"

namespace numaware {
namespace {

std::string status_list(const std::string& key) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key + ":", 0) == 0) {
            std::string v = line.substr(key.size() + 1);
            while (!v.empty() && (v.front() == '\t' || v.front() == ' ')) v.erase(v.begin());
            return v;
        }
    return {};
}

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    std::string s;
    std::getline(in, s);
    return s;
}

std::set<unsigned> index_set(const std::string& list, const char* what) {
    std::set<unsigned> out;
    if (list.empty()) return out;
    for (unsigned i : parse_index_list(list, what, what, 1u << 20)) out.insert(i);
    return out;
}

// The CPU affinity the process started with (numactl, taskset): read at
// load, before other tests of this binary bind the main thread, as the
// machine layer reads it.
const std::string start_cpus = status_list("Cpus_allowed_list");

// Nodes with memory (the kernel's view of the hardware).
std::set<unsigned> nodes_with_memory() { return index_set(file_text("/sys/devices/system/node/has_memory"), "node"); }

TEST(RestrictedGuest, TheLiveMachineIsWhatTheKernelAllowsAndSaysWhatItLeftOut) {
    const Machine m = Machine::from_live();
    const std::set<unsigned> cpus = index_set(start_cpus, "CPU");
    const std::set<unsigned> mems = index_set(status_list("Mems_allowed_list"), "node");
    const std::set<unsigned> online = index_set(file_text("/sys/devices/system/cpu/online"), "CPU");
    ASSERT_FALSE(cpus.empty());
    ASSERT_FALSE(mems.empty());
    std::set<unsigned> kept;
    for (const Node& n : m.nodes) {
        kept.insert(n.cpus.begin(), n.cpus.end());
        // A node is there for an allowed CPU or for allowed memory.
        EXPECT_TRUE(n.has_cpus() || mems.count(n.os_index)) << "node " << n.os_index;
        // A node without memory has none to allow (cpusets list only nodes
        // with memory): it stays memory_allowed and holds no pages.
        if (n.memory_bytes > 0) {
            EXPECT_EQ(n.memory_allowed, mems.count(n.os_index) == 1) << "node " << n.os_index;
        }
        EXPECT_EQ(n.holds_pages(), mems.count(n.os_index) == 1) << "node " << n.os_index;
    }
    std::set<unsigned> expected;
    for (unsigned c : online)
        if (cpus.count(c)) expected.insert(c);
    EXPECT_EQ(kept, expected) << "the machine's CPUs are the allowed online CPUs";
    for (unsigned c : m.left_out.cpus) {
        EXPECT_FALSE(cpus.count(c)) << "CPU " << c << " is allowed but was left out";
        EXPECT_THROW((void)m.node_of_cpu(c), Error);
    }
    EXPECT_EQ(kept.size() + m.left_out.cpus.size(), online.size()) << "every online CPU is kept or left out";
    for (unsigned n : m.left_out.nodes.to_vector()) EXPECT_FALSE(mems.count(n)) << "node " << n;
    const bool restricted = expected.size() < online.size() || mems.size() < nodes_with_memory().size();
    EXPECT_EQ(!m.left_out.empty(), restricted);
    if (restricted) {
        // Who restricts, named alone (restricted_check.sh knows which it set up).
        const char* by = std::getenv("RESTRICTED_EXPECT_BY");
        ASSERT_NE(by, nullptr) << "RESTRICTED_EXPECT_BY is not set (restricted_check.sh sets it)";
        EXPECT_EQ(m.left_out.by, by);
        EXPECT_FALSE(m.left_out.describe().empty());
    }
    std::printf("@@ restricted machine: CPUs %s, memory nodes %s; left out: %s\n",
                format_index_list(std::vector<unsigned>(kept.begin(), kept.end())).c_str(),
                m.memory_nodes().to_string().c_str(),
                m.left_out.empty() ? "nothing" : m.left_out.describe().front().c_str());
}

TEST(RestrictedGuest, ATeamOnEveryAllowedCpuRunsWhereItWasPlanned) {
    const Machine m = Machine::from_live();
    Team team{m, TeamMapping{.threads = static_cast<unsigned>(m.cpu_count()), .kind = MappingKind::contiguous}};
    std::vector<int> ran(team.size(), -1);
    team.run([&](TeamContext& ctx) { ran[ctx.rank()] = sched_getcpu(); });
    for (std::size_t r = 0; r < team.size(); ++r)
        EXPECT_EQ(ran[r], static_cast<int>(team.layout().ranks[r].cpu)) << "rank " << r;
    // A CPU outside the cpuset: refused, naming who restricts.
    for (unsigned c : m.left_out.cpus) {
        try {
            Team bad{m, TeamMapping{.cpus = {c}}};
            ADD_FAILURE() << "a team on left-out CPU " << c << " was built";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("is not allowed"), std::string::npos) << e.what();
        }
        break;
    }
}

// The task runtime on every allowed CPU, its dependencies homed on every
// node whose memory is allowed; a region on a node whose memory is not is
// refused, naming the cpuset.
TEST(RestrictedGuest, TheTaskRuntimeRunsOnTheAllowedPart) {
    const Machine m = Machine::from_live();
    Team team{m, TeamMapping{.threads = static_cast<unsigned>(m.cpu_count()), .kind = MappingKind::scatter}};
    tasks::Runtime rt{team, "dep"};
    const std::vector<unsigned> homes = m.memory_nodes().to_vector();
    ASSERT_FALSE(homes.empty());
    std::vector<std::vector<double>> data(homes.size(), std::vector<double>(512, 0.0));
    for (std::size_t h = 0; h < homes.size(); ++h)
        rt.register_region(data[h].data(), data[h].size() * sizeof(double), homes[h]);
    std::vector<int> ran_on(homes.size() * 8, -1);
    for (std::size_t h = 0; h < homes.size(); ++h)
        for (int k = 0; k < 8; ++k)
            rt.spawn([&, h, k] {
                data[h][static_cast<std::size_t>(k)] += 1.0;
                ran_on[h * 8 + static_cast<std::size_t>(k)] = sched_getcpu();
            }, {tasks::inout(data[h].data(), 64)});
    rt.barrier();
    std::set<unsigned> allowed;
    for (const Node& n : m.nodes) allowed.insert(n.cpus.begin(), n.cpus.end());
    for (int cpu : ran_on) EXPECT_TRUE(cpu >= 0 && allowed.count(static_cast<unsigned>(cpu))) << "a task ran on CPU " << cpu;
    EXPECT_EQ(rt.report().tasks, homes.size() * 8);
    for (const Node& n : m.nodes) {
        if (n.memory_allowed || n.memory_bytes == 0) continue;
        static double other[64];
        try {
            rt.register_region(other, sizeof other, n.os_index);
            ADD_FAILURE() << "a region homed on node " << n.os_index << " was accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("this process's cpuset"), std::string::npos) << e.what();
        }
    }
}

// Pages per node of [p, p + bytes).
std::vector<int> page_nodes(const void* p, std::size_t bytes) {
    os::Os& os = os::linux_os();
    const std::size_t page = os.page_size();
    std::vector<void*> pages;
    for (std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p) / page * page;
         a < reinterpret_cast<std::uintptr_t>(p) + bytes; a += page)
        pages.push_back(reinterpret_cast<void*>(a));
    std::vector<int> status(pages.size(), -1);
    EXPECT_EQ(os.move_pages(0, pages.size(), pages.data(), nullptr, status.data(), 0), 0);
    return status;
}

TEST(RestrictedGuest, TheHeapServesAllowedNodesAndRefusesTheOthersNamingTheCpuset) {
    const Machine m = Machine::from_live();
    constexpr std::size_t bytes = std::size_t{4} << 20;
    unsigned checked = 0;
    for (const Node& n : m.nodes) {
        if (!n.holds_pages()) continue;
        void* b = psm_alloc(bytes, HeapOwner::node(n.os_index));
        std::memset(b, 0x2a, bytes);
        for (int s : page_nodes(b, bytes)) ASSERT_EQ(s, static_cast<int>(n.os_index)) << "node " << n.os_index;
        psm_free(b);
        ++checked;
    }
    EXPECT_GE(checked, 1u);
    for (const Node& n : m.nodes) {
        if (n.memory_allowed || n.memory_bytes == 0) continue;
        try {
            (void)psm_alloc(bytes, HeapOwner::node(n.os_index));
            ADD_FAILURE() << "psm_alloc on node " << n.os_index << ", whose memory is not allowed, succeeded";
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "owner");
            EXPECT_NE(std::string(e.what()).find("cpuset"), std::string::npos) << e.what();
        }
        // Placement refuses it too, and says who restricts.
        try {
            m.check_placement_target(n.os_index, "nodes");
            ADD_FAILURE() << "node " << n.os_index << " accepted as a placement target";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("this process's cpuset"), std::string::npos) << e.what();
        }
        // A thread on its CPUs gets its pages from the nearest allowed node.
        if (!n.has_cpus()) continue;
        const unsigned near = m.memory_node_near(n.os_index);
        std::vector<int> where;
        std::thread t([&] {
            ASSERT_EQ(os::linux_os().set_affinity(0, {n.cpus.front()}), 0);
            void* p = psm_alloc(bytes, HeapOwner::node(near));
            std::memset(p, 0x11, bytes);
            where = page_nodes(p, bytes);
            psm_free(p);
            // What the kernel does on its own for a first touch from here.
            std::vector<char> touched(bytes, 1);
            const std::vector<int> first = page_nodes(touched.data(), bytes);
            for (int s : first) EXPECT_TRUE(m.memory_nodes().contains(static_cast<unsigned>(s))) << s;
        });
        t.join();
        for (int s : where) EXPECT_EQ(s, static_cast<int>(near));
    }
}

}  // namespace
}  // namespace numaware
