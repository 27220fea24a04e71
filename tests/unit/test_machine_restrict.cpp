// Restricted machines (issue 17): what a process in a cpuset may use.
// Machine::restrict_to, the synthetic allowed-cpus=/allowed-mems= keys,
// hwloc XML files whose allowed cpuset and nodeset are partial (written here
// through hwloc's own API from synthetic topologies), the JSON round trip,
// and the messages that name who restricts.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "support.hpp"

namespace numaware {
namespace {

// Eight nodes of two CPUs, as in hwloc's 8-node AMD test machine with
// partial cpusets: node 0's and nodes 6-7's CPUs are allowed but not their
// memory; nodes 2 and 3 keep one CPU each; nodes 4 and 5 keep their memory
// and none of their CPUs.
constexpr const char* amd_like =
    "nodes=8 cpus-per-node=2 mem-per-node=8G allowed-cpus=0-3,5-6,12-15 allowed-mems=1-5";

std::vector<unsigned> os_indices(const Machine& m) {
    std::vector<unsigned> out;
    for (const Node& n : m.nodes) out.push_back(n.os_index);
    return out;
}

TEST(MachineRestrict, ASyntheticCpusetKeepsTheAllowedPartAndSaysWhatItLeftOut) {
    const Machine m = Machine::from_synthetic(amd_like);
    EXPECT_EQ(os_indices(m), (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(m.cpu_count(), 10u);
    EXPECT_EQ(m.node(0).cpus, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(m.node(2).cpus, (std::vector<unsigned>{5}));
    EXPECT_EQ(m.node(3).cpus, (std::vector<unsigned>{6}));
    EXPECT_TRUE(m.node(4).cpus.empty());
    for (unsigned n : {0u, 6u, 7u}) EXPECT_FALSE(m.node(n).memory_allowed) << n;
    for (unsigned n : {1u, 2u, 3u, 4u, 5u}) EXPECT_TRUE(m.node(n).memory_allowed) << n;
    EXPECT_EQ(m.left_out.cpus, (std::vector<unsigned>{4, 7, 8, 9, 10, 11}));
    EXPECT_TRUE(m.left_out.nodes.empty());
    EXPECT_EQ(m.left_out.memory, (NodeSet{0, 6, 7}));
    EXPECT_EQ(m.left_out.cpuless, (NodeSet{4, 5}));
    EXPECT_EQ(m.memory_nodes(), (NodeSet{1, 2, 3, 4, 5}));
    const std::vector<std::string> lines = m.left_out.describe();
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "CPUs 4,7-11 are left out: not in the allowed-cpus=/allowed-mems= sets");
    EXPECT_EQ(lines[1], "nodes 0,6-7: memory not in the allowed-cpus=/allowed-mems= sets; their allowed CPUs run "
                        "with pages on the nearest allowed node");
    EXPECT_EQ(lines[2], "nodes 4-5: no CPU in the allowed-cpus=/allowed-mems= sets; memory only here");
}

TEST(MachineRestrict, NodesWithNothingAllowedLeaveAndRequestsForThemNameTheRestriction) {
    const Machine m = Machine::from_synthetic(
        "nodes=4 cpus-per-node=2 distances=10,21,31,31/21,10,31,31/31,31,10,21/31,31,21,10 allowed-cpus=0-3 "
        "allowed-mems=0-1");
    EXPECT_EQ(os_indices(m), (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(m.left_out.nodes, (NodeSet{2, 3}));
    EXPECT_EQ(m.left_out.cpus, (std::vector<unsigned>{4, 5, 6, 7}));
    EXPECT_EQ(m.distances, (NodeMatrix<unsigned>{{10, 21}, {21, 10}}));
    EXPECT_EQ(m.left_out.describe().front(),
              "nodes 2-3 are left out: neither their CPUs nor their memory are in the allowed-cpus=/allowed-mems= sets");
    test::expect_error([&] { (void)m.index_of(3); }, "node", "node 3 is not allowed: neither its CPUs nor its memory");
    test::expect_error([&] { (void)m.node_of_cpu(5); }, "cpu",
                       "CPU 5 is not allowed: it is not in the allowed-cpus=/allowed-mems= sets (allowed CPUs: 0-3)");
    test::expect_error([&] { m.check_placement_target(2, "home"); }, "home", "node 2 is not allowed");
    test::expect_error([&] { (void)m.node_of_cpu(9); }, "cpu", "CPU 9 is not in this machine");
}

TEST(MachineRestrict, PlacementRefusesMemoryThatIsNotAllowedAndFindsTheNearestThatIs) {
    const Machine m = Machine::from_synthetic(
        "nodes=4 cpus-per-node=2 distances=10,21,31,31/21,10,31,31/31,31,10,21/31,31,21,10 allowed-mems=1-3");
    EXPECT_EQ(m.cpu_count(), 8u);
    EXPECT_FALSE(m.node(0).memory_allowed);
    test::expect_error([&] { m.check_placement_target(0, "nodes"); }, "nodes",
                       "node 0's memory is not allowed: it is not in the allowed-cpus=/allowed-mems= sets (nodes "
                       "whose memory is allowed: 1-3)");
    m.check_placement_target(1, "nodes");
    EXPECT_EQ(m.memory_node_near(0), 1u);   // 21 beats 31
    EXPECT_EQ(m.memory_node_near(2), 2u);
    EXPECT_EQ(m.node_of_cpu(1), 0u);        // its CPUs stay usable
}

TEST(MachineRestrict, TheJsonFormRoundTripsTheRestriction) {
    const Machine m = Machine::from_synthetic(amd_like);
    const Machine back = Machine::from_json(m.to_json());
    EXPECT_EQ(back, m);
    EXPECT_EQ(back.left_out.by, "the allowed-cpus=/allowed-mems= sets");
    test::expect_error([&] { (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1,"cpus":[0],
        "memory_allowed":"no"}],"distances":[[10]]})"); },
                       "nodes[0].memory_allowed", "expected true or false");
    test::expect_error([&] { (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1,"cpus":[0]}],
        "distances":[[10]],"left_out":{"cpus":[0],"by":"a cpuset"}})"); },
                       "left_out.cpus", "CPU 0 is left out but is a CPU of a node");
    test::expect_error([&] { (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1,"cpus":[0]}],
        "distances":[[10]],"left_out":{"cpus":[3]}})"); },
                       "left_out.by", "names who restricts");
}

TEST(MachineRestrict, BadAllowedSetsAreRefusedNamingTheKeyAndTheLimit) {
    test::expect_error([] { (void)Machine::from_synthetic("nodes=2 cpus-per-node=2 allowed-cpus=0,7"); },
                       "allowed-cpus", "7");
    test::expect_error([] { (void)Machine::from_synthetic("nodes=2 allowed-mems=2"); }, "allowed-mems", "2");
    const Machine two = Machine::from_synthetic("nodes=2 cpus=2,0");
    test::expect_error([&] { (void)two.restrict_to({5}, two.all_nodes(), "a test cpuset"); }, "cpus",
                       "CPU 5 is not a CPU of this machine (CPUs: 0-1)");
    test::expect_error([&] { (void)two.restrict_to({0}, NodeSet{7}, "a test cpuset"); }, "memory nodes",
                       "node 7 is not in this machine (nodes: 0-1)");
    test::expect_error([&] { (void)two.restrict_to({}, two.all_nodes(), "a test cpuset"); }, "cpus",
                       "no CPU of this machine is in a test cpuset (CPUs: 0-1)");
    test::expect_error([&] { (void)two.restrict_to({0}, NodeSet{}, "a test cpuset"); }, "memory nodes",
                       "no node with memory is in a test cpuset (nodes with memory: 0-1)");
    // Without any memory size recorded there is no memory to restrict: the
    // allowed CPUs' nodes stay, as unrestricted.
    Machine unknown = Machine::from_synthetic("nodes=2 cpus=2,2");
    for (Node& n : unknown.nodes) n.memory_bytes = 0;
    const Machine part = unknown.restrict_to({0, 1}, NodeSet{}, "a test cpuset");
    EXPECT_EQ(part.all_nodes(), NodeSet{0});
    EXPECT_EQ(part.left_out.cpus, (std::vector<unsigned>{2, 3}));
}

TEST(MachineRestrict, RestrictingTwiceKeepsBothAndNamesBoth) {
    const Machine once = Machine::from_synthetic("nodes=4 cpus-per-node=2 allowed-cpus=0-5");
    const Machine twice = once.restrict_to({0, 1, 2}, once.all_nodes(), "a job's CPU affinity");
    EXPECT_EQ(twice.left_out.cpus, (std::vector<unsigned>{3, 4, 5, 6, 7}));
    EXPECT_TRUE(twice.left_out.nodes.empty());   // all memory is allowed: nodes 2-3 stay, memory only
    EXPECT_EQ(twice.left_out.cpuless, (NodeSet{2, 3}));
    EXPECT_EQ(twice.left_out.by, "the allowed-cpus=/allowed-mems= sets and a job's CPU affinity");
    // Nothing more left out: nothing more to say.
    EXPECT_EQ(twice.restrict_to({0, 1, 2}, twice.all_nodes(), "again").left_out, twice.left_out);
}

// An hwloc XML file with partial allowed sets, written by hwloc from a
// synthetic topology (caches included), read as a user's file would be.
std::string xml_with_allowed(const char* synthetic, const char* cpus, const char* nodes) {
    hwloc_topology_t t = nullptr;
    EXPECT_EQ(hwloc_topology_init(&t), 0);
    EXPECT_EQ(hwloc_topology_set_synthetic(t, synthetic), 0);
    EXPECT_EQ(hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), 0);
    EXPECT_EQ(hwloc_topology_load(t), 0);
    hwloc_bitmap_t c = hwloc_bitmap_alloc(), n = hwloc_bitmap_alloc();
    EXPECT_EQ(hwloc_bitmap_list_sscanf(c, cpus), 0);
    EXPECT_EQ(hwloc_bitmap_list_sscanf(n, nodes), 0);
    EXPECT_EQ(hwloc_topology_allow(t, c, n, HWLOC_ALLOW_FLAG_CUSTOM), 0);
    char* buffer = nullptr;
    int length = 0;
    EXPECT_EQ(hwloc_topology_export_xmlbuffer(t, &buffer, &length, 0), 0);
    std::string xml(buffer, static_cast<std::size_t>(length > 0 ? length - 1 : 0));
    hwloc_free_xmlbuffer(t, buffer);
    hwloc_bitmap_free(c);
    hwloc_bitmap_free(n);
    hwloc_topology_destroy(t);
    return xml;
}

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              (name + "-" + std::to_string(::getpid()) + ".xml")).string();
    std::ofstream(path) << text;
    return path;
}

TEST(MachineRestrict, AnHwlocFileWithPartialCpusetsLoadsItsAllowedPart) {
    const std::string path = write_temp(
        "partial-cpuset", xml_with_allowed("NUMANode:4 L2:2 Core:1 PU:2", "0-5,8,12-15", "0-1,3"));
    const Machine m = Machine::from_spec(path);
    std::filesystem::remove(path);
    // Node 2 (CPUs 8-11): CPU 8 only, memory not allowed; node 3 (12-15): all.
    EXPECT_EQ(os_indices(m), (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(m.node(1).cpus, (std::vector<unsigned>{4, 5}));
    EXPECT_EQ(m.node(2).cpus, (std::vector<unsigned>{8}));
    EXPECT_FALSE(m.node(2).memory_allowed);
    EXPECT_EQ(m.left_out.cpus, (std::vector<unsigned>{6, 7, 9, 10, 11}));
    EXPECT_EQ(m.left_out.memory, (NodeSet{2}));
    EXPECT_NE(m.left_out.by.find("the allowed sets recorded in partial-cpuset-"), std::string::npos) << m.left_out.by;
    // Caches keep their allowed CPUs: node 1's second L2 (CPUs 6-7) is gone.
    for (const Cache& c : m.caches)
        for (unsigned cpu : c.cpus) EXPECT_NO_THROW((void)m.node_of_cpu(cpu)) << "cache of CPU " << cpu;
    std::size_t l2 = 0;
    for (const Cache& c : m.caches) l2 += c.level == 2 ? 1 : 0;
    EXPECT_EQ(l2, 6u);
}

TEST(MachineRestrict, AnHwlocFileWithEverythingAllowedHasNothingLeftOut) {
    const std::string path =
        write_temp("full-cpuset", xml_with_allowed("NUMANode:2 Core:2 PU:1", "0-3", "0-1"));
    const Machine m = Machine::from_spec(path);
    std::filesystem::remove(path);
    EXPECT_TRUE(m.left_out.empty());
    EXPECT_EQ(m.cpu_count(), 4u);
}

}  // namespace
}  // namespace numaware
