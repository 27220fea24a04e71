// Guest test: a Team pins every rank where its mapping says, checked with
// sched_getcpu() inside an emulated multi-node machine.
//
// The node of the CPU a rank actually runs on is read two ways: from
// Machine::from_live() (hwloc) and from sysfs (/sys/devices/system/cpu/cpuN/
// nodeM), so the check does not rest on the code under test alone.
#include <gtest/gtest.h>

#include <sched.h>

#include <filesystem>
#include <string>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/team.hpp"

namespace numaware {
namespace {

// Node of `cpu` according to sysfs, or -1.
int sysfs_node_of_cpu(unsigned cpu) {
    const std::filesystem::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("node", 0) == 0 && name.size() > 4) return std::stoi(name.substr(4));
    }
    return -1;
}

struct Misplaced {
    unsigned rank;
    int cpu;
    int hwloc_node;
    int sysfs_node;
};

// Runs `rounds` rounds; in each, every rank checks where it runs, then
// meets the others at a barrier (so ranks are all alive at once and the
// scheduler had every chance to move one).
void expect_pinned(const Machine& live, const TeamMapping& mapping, const char* what) {
    SCOPED_TRACE(what);
    Team team(live, mapping);
    const TeamLayout& layout = team.layout();
    ASSERT_EQ(layout, plan_team(live, mapping));
    std::vector<std::vector<Misplaced>> bad(team.size());
    std::vector<int> runs(team.size(), 0);
    for (int round = 0; round < 30; ++round) {
        team.run([&](TeamContext& ctx) {
            for (int check = 0; check < 2; ++check) {
                const int cpu = ::sched_getcpu();
                const int hw = cpu < 0 ? -1 : static_cast<int>(live.node_of_cpu(static_cast<unsigned>(cpu)));
                const int fs = cpu < 0 ? -1 : sysfs_node_of_cpu(static_cast<unsigned>(cpu));
                if (cpu != static_cast<int>(ctx.cpu()) || hw != static_cast<int>(ctx.node()) ||
                    fs != static_cast<int>(ctx.node()))
                    bad[ctx.rank()].push_back({ctx.rank(), cpu, hw, fs});
                ctx.barrier();
            }
            ++runs[ctx.rank()];
        });
    }
    for (std::size_t r = 0; r < team.size(); ++r) {
        EXPECT_EQ(runs[r], 30) << "rank " << r;
        for (const Misplaced& m : bad[r])
            ADD_FAILURE() << "rank " << m.rank << " planned on CPU " << layout.ranks[r].cpu << " (node "
                          << layout.ranks[r].node << ") ran on CPU " << m.cpu << " (hwloc node "
                          << m.hwloc_node << ", sysfs node " << m.sysfs_node << ")";
    }
}

class TeamGuest : public ::testing::Test {
protected:
    void SetUp() override {
        live = Machine::from_live();
        ASSERT_GE(live.nodes_with_cpus().size(), 2u)
            << "guest tests need an emulated machine with at least 2 nodes with CPUs";
    }
    Machine live;
};

TEST_F(TeamGuest, ContiguousPinsEveryRank) {
    expect_pinned(live, {.threads = static_cast<unsigned>(live.cpu_count()), .kind = MappingKind::contiguous},
                  "contiguous, all CPUs");
}

TEST_F(TeamGuest, ScatterPinsEveryRankRoundRobin) {
    const unsigned k = static_cast<unsigned>(live.nodes_with_cpus().size());
    expect_pinned(live, {.threads = k, .kind = MappingKind::scatter}, "scatter, one per node");
    const TeamLayout l = plan_team(live, {.threads = k, .kind = MappingKind::scatter});
    EXPECT_EQ(l.nodes(), live.nodes_with_cpus()) << "scatter with K ranks puts one on every node";
    expect_pinned(live, {.threads = static_cast<unsigned>(live.cpu_count()), .kind = MappingKind::scatter},
                  "scatter, all CPUs");
}

TEST_F(TeamGuest, NThreadsOverKNodes) {
    const std::vector<unsigned> with_cpus = live.nodes_with_cpus().to_vector();
    const unsigned cpus_of_two = static_cast<unsigned>(live.node(with_cpus[0]).cpus.size() +
                                                       live.node(with_cpus[1]).cpus.size());
    expect_pinned(live, {.threads = cpus_of_two, .kind = MappingKind::contiguous, .nodes = 2},
                  "contiguous over K=2 nodes");
    expect_pinned(live, {.threads = 2, .kind = MappingKind::scatter, .nodes = 2}, "2 threads scattered over K=2");
}

TEST_F(TeamGuest, ExplicitCpuList) {
    // All CPUs, highest first, so rank r is not simply on CPU r.
    std::vector<unsigned> cpus;
    for (const Node& n : live.nodes) cpus.insert(cpus.end(), n.cpus.begin(), n.cpus.end());
    std::vector<unsigned> reversed(cpus.rbegin(), cpus.rend());
    expect_pinned(live, {.cpus = reversed}, "explicit, reversed CPU list");
}

}  // namespace
}  // namespace numaware
