// Unit tests for plan_team(): the pure rank -> CPU decision.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"

namespace numaware {
namespace {

// Nodes given as (os index, CPU list); an empty list is a memory-only node.
Machine machine_of(const std::vector<std::pair<unsigned, std::vector<unsigned>>>& nodes) {
    Machine m;
    m.name = "test";
    for (const auto& [id, cpus] : nodes) {
        Node n;
        n.os_index = id;
        n.memory_bytes = 256u << 20;
        n.cpus = cpus;
        m.nodes.push_back(n);
    }
    m.distances.assign(nodes.size(), std::vector<unsigned>(nodes.size(), 20));
    for (std::size_t i = 0; i < nodes.size(); ++i) m.distances[i][i] = 10;
    return m;
}

// 4 nodes x 2 CPUs, CPUs numbered like a BIOS that interleaves sockets:
// node 0 holds 0,4; node 1 holds 1,5; ...
Machine four_by_two() { return machine_of({{0, {0, 4}}, {1, {1, 5}}, {2, {2, 6}}, {3, {3, 7}}}); }

std::vector<unsigned> cpus_of(const TeamLayout& l) {
    std::vector<unsigned> v;
    for (const auto& p : l.ranks) v.push_back(p.cpu);
    return v;
}
std::vector<unsigned> nodes_of(const TeamLayout& l) {
    std::vector<unsigned> v;
    for (const auto& p : l.ranks) v.push_back(p.node);
    return v;
}

// Runs plan_team expecting an Error; returns what() and checks field().
std::string plan_error(const Machine& m, const TeamMapping& map, const std::string& field) {
    try {
        plan_team(m, map);
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_EQ(e.code(), EINVAL);
        return e.what();
    }
    ADD_FAILURE() << "plan_team accepted a bad mapping";
    return {};
}

TEST(TeamPlan, ContiguousFillsEachNodeBeforeTheNext) {
    const TeamLayout l = plan_team(four_by_two(), {.threads = 5, .kind = MappingKind::contiguous});
    EXPECT_EQ(cpus_of(l), (std::vector<unsigned>{0, 4, 1, 5, 2}));
    EXPECT_EQ(nodes_of(l), (std::vector<unsigned>{0, 0, 1, 1, 2}));
    for (unsigned r = 0; r < l.size(); ++r) EXPECT_EQ(l.ranks[r].rank, r);
    EXPECT_EQ(l.cpus(), (std::vector<unsigned>{0, 1, 2, 4, 5}));
    EXPECT_EQ(l.nodes(), (NodeSet{0, 1, 2}));
}

TEST(TeamPlan, ScatterDealsRanksRoundRobinOverNodes) {
    const TeamLayout l = plan_team(four_by_two(), {.threads = 6, .kind = MappingKind::scatter});
    EXPECT_EQ(nodes_of(l), (std::vector<unsigned>{0, 1, 2, 3, 0, 1}));
    EXPECT_EQ(cpus_of(l), (std::vector<unsigned>{0, 1, 2, 3, 4, 5}));
}

TEST(TeamPlan, NThreadsOverTheFirstKNodes) {
    const Machine m = four_by_two();
    const TeamLayout s = plan_team(m, {.threads = 4, .kind = MappingKind::scatter, .nodes = 2});
    EXPECT_EQ(nodes_of(s), (std::vector<unsigned>{0, 1, 0, 1}));
    EXPECT_EQ(cpus_of(s), (std::vector<unsigned>{0, 1, 4, 5}));
    const TeamLayout c = plan_team(m, {.threads = 3, .kind = MappingKind::contiguous, .nodes = 3});
    EXPECT_EQ(nodes_of(c), (std::vector<unsigned>{0, 0, 1}));
    // Full use of K nodes is allowed; one more thread is not.
    EXPECT_EQ(plan_team(m, {.threads = 4, .nodes = 2}).size(), 4u);
    const std::string msg = plan_error(m, {.threads = 5, .nodes = 2}, "threads");
    EXPECT_NE(msg.find("threads=5 exceeds the 4 CPUs of nodes 0-1"), std::string::npos) << msg;
}

TEST(TeamPlan, ScatterKeepsGoingWhenANodeRunsOutOfCpus) {
    const Machine m = machine_of({{0, {0}}, {1, {1, 2, 3}}});
    const TeamLayout l = plan_team(m, {.threads = 4, .kind = MappingKind::scatter});
    EXPECT_EQ(cpus_of(l), (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(nodes_of(l), (std::vector<unsigned>{0, 1, 1, 1}));
}

TEST(TeamPlan, MemoryOnlyNodesNeverGetRanksAndDoNotCountForK) {
    // Node 1 and 3 are CPU-less (like KNL MCDRAM or CXL): "the first 2
    // nodes with CPUs" are 0 and 2.
    const Machine m = machine_of({{0, {0, 1}}, {1, {}}, {2, {2, 3}}, {3, {}}});
    const TeamLayout l = plan_team(m, {.threads = 4, .kind = MappingKind::scatter, .nodes = 2});
    EXPECT_EQ(nodes_of(l), (std::vector<unsigned>{0, 2, 0, 2}));
    const TeamLayout all = plan_team(m, {.threads = 4, .kind = MappingKind::contiguous});
    EXPECT_EQ(all.nodes(), (NodeSet{0, 2}));
    const std::string msg = plan_error(m, {.threads = 1, .nodes = 3}, "nodes");
    EXPECT_NE(msg.find("nodes=3 exceeds the 2 nodes with CPUs (limit 2)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("memory-only nodes 1,3"), std::string::npos) << msg;
}

TEST(TeamPlan, ANodeSetUsesTheNamedNodesInIndexOrder) {
    const Machine m = machine_of({{0, {0, 4}}, {1, {1, 5}}, {2, {}}, {3, {3, 7}}});
    const TeamLayout s = plan_team(m, {.threads = 3, .kind = MappingKind::scatter, .node_set = NodeSet{3, 1}});
    EXPECT_EQ(nodes_of(s), (std::vector<unsigned>{1, 3, 1}));
    EXPECT_EQ(cpus_of(s), (std::vector<unsigned>{1, 3, 5}));
    const TeamLayout c = plan_team(m, {.threads = 2, .node_set = NodeSet{3}});
    EXPECT_EQ(cpus_of(c), (std::vector<unsigned>{3, 7}));
    EXPECT_EQ(team_nodes(m, TeamMapping{.node_set = NodeSet{0, 3}}), (NodeSet{0, 3}));
    EXPECT_EQ(team_nodes(m, TeamMapping{.nodes = 2}), (NodeSet{0, 1}));
    std::string msg = plan_error(m, {.threads = 3, .node_set = NodeSet{3}}, "threads");
    EXPECT_NE(msg.find("threads=3 exceeds the 2 CPUs of node 3 (limit 2)"), std::string::npos) << msg;
    msg = plan_error(m, {.threads = 1, .node_set = NodeSet{1, 2}}, "node_set");
    EXPECT_NE(msg.find("node 2 has no CPUs (a memory-only node cannot run threads); the nodes with CPUs are 0-1,3"),
              std::string::npos)
        << msg;
    msg = plan_error(m, {.threads = 1, .node_set = NodeSet{4}}, "node_set");
    EXPECT_NE(msg.find("node 4 is not in this machine (nodes: 0-3)"), std::string::npos) << msg;
    msg = plan_error(m, {.threads = 1, .nodes = 1, .node_set = NodeSet{0}}, "node_set");
    EXPECT_NE(msg.find("node_set=0 cannot be combined with nodes=1"), std::string::npos) << msg;
    msg = plan_error(m, {.cpus = {0}, .node_set = NodeSet{0}}, "node_set");
    EXPECT_NE(msg.find("cannot be combined with an explicit CPU list"), std::string::npos) << msg;
}

TEST(TeamPlan, ExplicitCpuListKeepsRankOrder) {
    const Machine m = four_by_two();
    const TeamLayout l = plan_team(m, {.cpus = {7, 0, 5}});
    EXPECT_EQ(cpus_of(l), (std::vector<unsigned>{7, 0, 5}));
    EXPECT_EQ(nodes_of(l), (std::vector<unsigned>{3, 0, 1}));
    EXPECT_EQ(plan_team(m, {.threads = 3, .cpus = {7, 0, 5}}), l);
}

TEST(TeamPlan, Errors) {
    const Machine m = four_by_two();
    EXPECT_NE(plan_error(m, {.threads = 0}, "threads").find("threads=0"), std::string::npos);
    EXPECT_NE(plan_error(m, {.threads = 9}, "threads").find("exceeds the 8 CPUs of nodes 0-3 (limit 8)"),
              std::string::npos);
    EXPECT_NE(plan_error(m, {.threads = 1, .nodes = 5}, "nodes").find("nodes=5 exceeds the 4 nodes"),
              std::string::npos);
    std::string msg = plan_error(m, {.cpus = {0, 8}}, "cpus[1]");
    EXPECT_NE(msg.find("CPU 8 is not in this machine (its CPUs are 0-7)"), std::string::npos) << msg;
    msg = plan_error(m, {.cpus = {3, 1, 3}}, "cpus[2]");
    EXPECT_NE(msg.find("CPU 3 is listed twice (also cpus[0])"), std::string::npos) << msg;
    msg = plan_error(m, {.threads = 2, .cpus = {0, 1, 2}}, "threads");
    EXPECT_NE(msg.find("threads=2 but the CPU list names 3 CPUs"), std::string::npos) << msg;
    msg = plan_error(m, {.nodes = 1, .cpus = {0}}, "nodes");
    EXPECT_NE(msg.find("cannot be combined"), std::string::npos) << msg;
    const Machine memory_only = machine_of({{0, {}}});
    EXPECT_NE(plan_error(memory_only, {.threads = 1}, "machine").find("no node with CPUs"),
              std::string::npos);
}

TEST(TeamPlan, IsDeterministic) {
    const Machine m = four_by_two();
    const TeamMapping map{.threads = 7, .kind = MappingKind::scatter, .nodes = 4};
    EXPECT_EQ(plan_team(m, map), plan_team(m, map));
}

TEST(TeamPlan, RealTopologiesWithMemoryOnlyNodes) {
    // The fake KNL has 4 nodes with CPUs and 4 MCDRAM nodes without.
    const Machine knl = Machine::from_hwloc_xml(std::string(NUMAWARE_TOPOLOGY_DIR) +
                                                "/64intel64-fakeKNL-SNC4-hybrid.xml");
    const NodeSet with_cpus = knl.nodes_with_cpus();
    ASSERT_LT(with_cpus.size(), knl.node_count());
    const TeamLayout l = plan_team(knl, {.threads = static_cast<unsigned>(with_cpus.size()),
                                         .kind = MappingKind::scatter});
    EXPECT_EQ(l.nodes(), with_cpus);
    for (const RankPlace& p : l.ranks) EXPECT_EQ(knl.node_of_cpu(p.cpu), p.node);
    const TeamLayout full =
        plan_team(knl, {.threads = static_cast<unsigned>(knl.cpu_count()), .kind = MappingKind::contiguous});
    EXPECT_EQ(full.cpus().size(), knl.cpu_count());
    plan_error(knl, {.threads = static_cast<unsigned>(knl.cpu_count()) + 1}, "threads");
    plan_error(knl, {.threads = 1, .nodes = static_cast<unsigned>(with_cpus.size()) + 1}, "nodes");
}

// ---- SMT: a rank per core before a second one on any core ----------------

// The core of each CPU of `l`'s ranks, as Machine::cores() positions.
std::vector<std::size_t> cores_of(const Machine& m, const TeamLayout& l) {
    const auto cores = m.cores();
    std::vector<std::size_t> v;
    for (const RankPlace& p : l.ranks)
        for (std::size_t k = 0; k < cores.size(); ++k)
            if (std::find(cores[k].begin(), cores[k].end(), p.cpu) != cores[k].end()) v.push_back(k);
    return v;
}
bool all_distinct(std::vector<std::size_t> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) == v.end();
}

TEST(TeamPlanSmt, CoresAreTheCpusThatShareAFirstLevelCache) {
    // hwloc's 2 nodes x 8 cores x 2 threads, Linux's numbering: a core's
    // second thread is 16 higher, so node 0 holds 0-7 and 16-23.
    const Machine m = Machine::from_hwloc_xml(std::string(NUMAWARE_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
    const auto cores = m.cores();
    ASSERT_EQ(cores.size(), 16u);
    for (unsigned k = 0; k < 16; ++k) EXPECT_EQ(cores[k], (std::vector<unsigned>{k, k + 16})) << k;
    // Numbered side by side (hwloc's synthetic numbering, QEMU's threads=2).
    const Machine side = Machine::from_synthetic("hwloc:NUMANode:2 L1Cache:4 Core:1 PU:2");
    EXPECT_EQ(side.cores(), (std::vector<std::vector<unsigned>>{
                                {0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
    // Without caches every CPU is a core.
    EXPECT_EQ(four_by_two().cores(),
              (std::vector<std::vector<unsigned>>{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

TEST(TeamPlanSmt, ContiguousTakesEveryCoreOfTheNodesBeforeASecondThread) {
    const Machine m = Machine::from_hwloc_xml(std::string(NUMAWARE_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
    // One rank per core on both nodes (CPUs in index order filled node 0's
    // 16 hardware threads and left node 1 idle).
    const TeamLayout l = plan_team(m, {.threads = 16});
    EXPECT_EQ(cpus_of(l), (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
    EXPECT_EQ(l.nodes().size(), 2u);
    EXPECT_TRUE(all_distinct(cores_of(m, l)));
    // One node: its 8 cores, then their second threads.
    EXPECT_EQ(cpus_of(plan_team(m, {.threads = 10, .nodes = 1})),
              (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7, 16, 17}));
    // More ranks than cores: the second threads in the same order.
    EXPECT_EQ(cpus_of(plan_team(m, {.threads = 18})),
              (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}));
    // Every CPU once when the team fills the machine.
    EXPECT_EQ(plan_team(m, {.threads = 32}).cpus().size(), 32u);

    const Machine side = Machine::from_synthetic("hwloc:NUMANode:2 L1Cache:4 Core:1 PU:2");
    EXPECT_EQ(cpus_of(plan_team(side, {.threads = 4})), (std::vector<unsigned>{0, 2, 4, 6}));
    EXPECT_EQ(cpus_of(plan_team(side, {.threads = 10})),
              (std::vector<unsigned>{0, 2, 4, 6, 8, 10, 12, 14, 1, 3}));
}

TEST(TeamPlanSmt, ScatterDealsCoresToTheNodesBeforeSecondThreads) {
    const Machine m = Machine::from_hwloc_xml(std::string(NUMAWARE_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
    EXPECT_EQ(cpus_of(plan_team(m, {.threads = 4, .kind = MappingKind::scatter})),
              (std::vector<unsigned>{0, 8, 1, 9}));
    const TeamLayout l = plan_team(m, {.threads = 16, .kind = MappingKind::scatter});
    EXPECT_TRUE(all_distinct(cores_of(m, l)));
    EXPECT_EQ(nodes_of(l), (std::vector<unsigned>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}));
    const Machine side = Machine::from_synthetic("hwloc:NUMANode:2 L1Cache:4 Core:1 PU:2");
    EXPECT_EQ(cpus_of(plan_team(side, {.threads = 10, .kind = MappingKind::scatter})),
              (std::vector<unsigned>{0, 8, 2, 10, 4, 12, 6, 14, 1, 9}));
}

TEST(TeamPlanSmt, FourThreadsPerCoreAndMemoryOnlyNodes) {
    // The fake KNL: 4 hardware threads per core, 4 nodes with CPUs.
    const Machine knl = Machine::from_hwloc_xml(std::string(NUMAWARE_TOPOLOGY_DIR) +
                                                "/64intel64-fakeKNL-SNC4-hybrid.xml");
    const auto cores = knl.cores();
    ASSERT_EQ(cores.size(), 16u);
    for (const auto& c : cores) EXPECT_EQ(c.size(), 4u);
    for (const MappingKind kind : {MappingKind::contiguous, MappingKind::scatter}) {
        const TeamLayout l = plan_team(knl, {.threads = 16, .kind = kind});
        EXPECT_TRUE(all_distinct(cores_of(knl, l))) << to_string(kind);
        EXPECT_EQ(l.nodes(), knl.nodes_with_cpus()) << to_string(kind);
        for (const RankPlace& p : l.ranks) EXPECT_EQ(knl.node_of_cpu(p.cpu), p.node);
    }
}

TEST(TeamPlanSmt, OrderCountsOnlyTheCpusGiven) {
    // A launch mask without CPU 0: core {0,1}'s only usable thread is 1,
    // a first thread like 2's.
    const Machine side = Machine::from_synthetic("hwloc:NUMANode:2 L1Cache:4 Core:1 PU:2");
    const std::vector<OrderedCpu> order =
        team_cpu_order(side, {{1, 2, 3, 6}, {9, 10, 11}}, MappingKind::contiguous);
    EXPECT_EQ(order, (std::vector<OrderedCpu>{{1, 0}, {2, 0}, {6, 0}, {9, 1}, {10, 1}, {3, 0}, {11, 1}}));
    EXPECT_EQ(team_cpu_order(side, {{1, 2, 3, 6}, {9, 10, 11}}, MappingKind::scatter),
              (std::vector<OrderedCpu>{{1, 0}, {9, 1}, {2, 0}, {10, 1}, {6, 0}, {3, 0}, {11, 1}}));
    EXPECT_TRUE(team_cpu_order(side, {}, MappingKind::scatter).empty());
}

TEST(TeamPlan, MappingKindAndCpuListText) {
    EXPECT_EQ(parse_mapping_kind("scatter"), MappingKind::scatter);
    EXPECT_EQ(parse_mapping_kind("contiguous"), MappingKind::contiguous);
    try {
        parse_mapping_kind("spread", "--mapping");
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "--mapping");
        EXPECT_NE(std::string(e.what()).find("expected contiguous or scatter"), std::string::npos);
    }
    EXPECT_EQ(parse_cpu_list("3,0-2,8"), (std::vector<unsigned>{3, 0, 1, 2, 8}));
    EXPECT_EQ(format_cpu_list({8, 3, 0, 1, 2, 2}), "0-3,8");
    EXPECT_THROW(parse_cpu_list("1-"), Error);
    EXPECT_THROW(parse_cpu_list("3-1"), Error);
    EXPECT_THROW(parse_cpu_list(""), Error);
    EXPECT_THROW(parse_cpu_list("a"), Error);
}

}  // namespace
}  // namespace numaware
