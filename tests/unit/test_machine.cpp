// Tests for the machine model: synthetic descriptions, validation errors,
// JSON round trips, sizes and queries. No hwloc files needed here.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "util/cpu_mask.hpp"

using numaware::Error;
using numaware::Machine;

namespace {

const char* four_nodes =
    "nodes=4 cpus-per-node=2 mem-per-node=512M distances=10,21,31,31/21,10,21,31/31,21,10,21/31,31,21,10";

using numaware::test::contains;
using numaware::test::expect_error;

// The CPUs this process may use, read as the library reads them (masks of
// the kernel's size, util/cpu_mask.hpp).
std::vector<unsigned> this_process_cpus() {
    std::vector<unsigned> cpus;
    const auto read = [](std::size_t bytes, cpu_set_t* set) { return ::sched_getaffinity(0, bytes, set) == 0 ? 0 : errno; };
    if (numaware::read_cpu_mask(read, cpus) != 0) ADD_FAILURE() << "sched_getaffinity failed";
    return cpus;
}
bool may_use(const std::vector<unsigned>& cpus, unsigned cpu) {
    return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

}  // namespace

TEST(MachineSynthetic, BuildsTheIssueExample) {
    const Machine m = Machine::from_synthetic(four_nodes);
    ASSERT_EQ(m.node_count(), 4u);
    EXPECT_EQ(m.cpu_count(), 8u);
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(m.nodes[i].os_index, i);
        EXPECT_EQ(m.nodes[i].memory_bytes, 512ULL << 20);
        EXPECT_EQ(m.nodes[i].cpus, (std::vector<unsigned>{2 * i, 2 * i + 1}));
        EXPECT_EQ(m.nodes[i].kind, "DRAM");
        EXPECT_EQ(m.nodes[i].tier, 0);
    }
    EXPECT_EQ(m.distance(0, 3), 31u);
    EXPECT_EQ(m.distance(1, 2), 21u);
    EXPECT_EQ(m.node_of_cpu(5), 2u);
    EXPECT_EQ(m.all_nodes().to_string(), "0-3");
    EXPECT_EQ(m.nodes_with_cpus().to_string(), "0-3");
    EXPECT_FALSE(m.latency_ns.has_value());
}

TEST(MachineSynthetic, MemoryOnlyNodesAndPerNodeLists) {
    const Machine m = Machine::from_synthetic(
        "nodes=3 cpus=2,0,3 mem=1G,256M,1.5G tiers=0,1,0 kinds=DRAM,CXL,DRAM distances=10,20,30/20,10,20/30,20,10");
    EXPECT_EQ(m.nodes[0].cpus, (std::vector<unsigned>{0, 1}));
    EXPECT_TRUE(m.nodes[1].cpus.empty());
    EXPECT_FALSE(m.nodes[1].has_cpus());
    // CPUs are numbered contiguously, skipping the memory-only node.
    EXPECT_EQ(m.nodes[2].cpus, (std::vector<unsigned>{2, 3, 4}));
    EXPECT_EQ(m.nodes[1].kind, "CXL");
    EXPECT_EQ(m.nodes[1].tier, 1);
    EXPECT_EQ(m.nodes[2].memory_bytes, 3ULL << 29);
    EXPECT_EQ(m.nodes_with_cpus().to_string(), "0,2");
    EXPECT_EQ(m.all_nodes().to_string(), "0-2");
}

TEST(MachineSynthetic, DefaultsToKernelDistancesWhenNoneGiven) {
    const Machine m = Machine::from_synthetic("nodes=3");
    EXPECT_EQ(m.distances, (numaware::NodeMatrix<unsigned>{{10, 20, 20}, {20, 10, 20}, {20, 20, 10}}));
    EXPECT_EQ(m.cpu_count(), 3u);
    EXPECT_EQ(m.nodes[0].memory_bytes, 512ULL << 20);
}

TEST(MachineSynthetic, LatencyAndBandwidthMatrices) {
    const Machine m = Machine::from_synthetic(
        "nodes=2 distances=10,21/21,10 latency=85.5,140/141,86 bandwidth=20.25,9.5/9.75,20");
    ASSERT_TRUE(m.latency_ns && m.bandwidth_gbps);
    EXPECT_DOUBLE_EQ((*m.latency_ns)[0][1], 140.0);
    EXPECT_DOUBLE_EQ((*m.latency_ns)[0][0], 85.5);
    EXPECT_DOUBLE_EQ((*m.bandwidth_gbps)[1][0], 9.75);
}

TEST(MachineSynthetic, HwlocSyntaxWithDistances) {
    const Machine m = Machine::from_synthetic("hwloc:Package:2 NUMANode:1 Core:2 PU:1 distances=10,32/32,10");
    ASSERT_EQ(m.node_count(), 2u);
    EXPECT_EQ(m.cpu_count(), 4u);
    EXPECT_EQ(m.nodes[0].cpus, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(m.nodes[1].cpus, (std::vector<unsigned>{2, 3}));
    EXPECT_GT(m.nodes[0].memory_bytes, 0u);
    EXPECT_EQ(m.distance(0, 1), 32u);
    // Without the suffix hwloc has no matrix, so the default applies.
    EXPECT_EQ(Machine::from_synthetic("hwloc:Package:2 NUMANode:1 Core:2 PU:1").distance(1, 0), 20u);
    // An asymmetric matrix through hwloc keeps its directions.
    const Machine a = Machine::from_synthetic("hwloc:NUMANode:2 PU:1 distances=10,20/30,10");
    EXPECT_EQ(a.distance(0, 1), 20u);
    EXPECT_EQ(a.distance(1, 0), 30u);
}

TEST(MachineSynthetic, HwlocSyntaxErrors) {
    Error e = expect_error([] { (void)Machine::from_synthetic("hwloc:Bogus:3"); });
    EXPECT_TRUE(contains(e.what(), "hwloc:Bogus:3")) << e.what();
}

TEST(MachineErrors, MalformedSyntheticNamesTheField) {
    Error e = expect_error([] { (void)Machine::from_synthetic("nodes=2 colour=blue"); });
    EXPECT_EQ(e.field(), "colour");
    EXPECT_TRUE(contains(e.what(), "unknown key")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cpus-per-node")) << "should list the known keys: " << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("nodes=four"); });
    EXPECT_EQ(e.field(), "nodes");
    EXPECT_TRUE(contains(e.what(), "'four' is not a whole number")) << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("nodes=2 mem-per-node=512Q"); });
    EXPECT_EQ(e.field(), "mem-per-node");
    EXPECT_TRUE(contains(e.what(), "unknown size suffix 'Q'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "K, M, G or T")) << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("cpus-per-node=2 mem-per-node=1G"); });
    EXPECT_EQ(e.field(), "nodes");
    EXPECT_TRUE(contains(e.what(), "missing nodes=N")) << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("nodes=0"); });
    EXPECT_TRUE(contains(e.what(), "expected 1..1024")) << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("nodes=3 cpus=1,2"); });
    EXPECT_EQ(e.field(), "cpus");
    EXPECT_TRUE(contains(e.what(), "lists 2 values but nodes=3")) << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("nodes=2 distances=10,x/21,10"); });
    EXPECT_EQ(e.field(), "distances[0][1]");

    e = expect_error([] { (void)Machine::from_synthetic("nodes=2 nodes=3"); });
    EXPECT_TRUE(contains(e.what(), "given twice")) << e.what();

    e = expect_error([] { (void)Machine::from_synthetic("nodes=2 cpus-per-node"); });
    EXPECT_TRUE(contains(e.what(), "expected key=value")) << e.what();
}

TEST(MachineErrors, NonSquareMatrix) {
    Error e = expect_error([] { (void)Machine::from_synthetic("nodes=2 distances=10,21/21,10,5"); });
    EXPECT_EQ(e.field(), "distances[1]");
    EXPECT_TRUE(contains(e.what(), "row has 3 entries")) << e.what();
    EXPECT_TRUE(contains(e.what(), "square (2x2)")) << e.what();
}

TEST(MachineErrors, MatrixSizeDiffersFromNodeCount) {
    Error e = expect_error([] { (void)Machine::from_synthetic("nodes=3 distances=10,21/21,10"); });
    EXPECT_EQ(e.field(), "distances");
    EXPECT_TRUE(contains(e.what(), "2 rows but the machine has 3 nodes")) << e.what();
    e = expect_error([] { (void)Machine::from_synthetic("nodes=2 latency=1,2,3/1,2,3/1,2,3"); });
    EXPECT_TRUE(contains(e.what(), "3 rows but the machine has 2 nodes")) << e.what();
}

// An asymmetric SLIT (firmware may give the two directions of a pair
// different values, and Linux keeps them) loads with its directions:
// distance(from, to) is from's CPUs to to's memory.
TEST(MachineSynthetic, AsymmetricSlitKeepsItsDirections) {
    const Machine m = Machine::from_synthetic("nodes=2 distances=10,21/31,10");
    EXPECT_EQ(m.distance(0, 1), 21u);
    EXPECT_EQ(m.distance(1, 0), 31u);
    EXPECT_EQ(Machine::from_json(m.to_json()), m);
    // The nearest memory is read along the row of the node asking: from
    // node 2, node 1 (12) before node 0 (30), though node 0 reaches node 2
    // at 12 and node 1 at 40.
    const Machine t = Machine::from_synthetic("nodes=3 cpus=1,1,1 mem=1G,1G,0 distances=10,13,12/14,10,40/30,12,10");
    EXPECT_EQ(t.memory_node_near(2), 1u);
    EXPECT_EQ(t.memory_node_near(0), 0u);
}

TEST(MachineErrors, DiagonalNotTheMinimum) {
    Error e = expect_error([] { (void)Machine::from_synthetic("nodes=2 distances=30,21/21,10"); });
    EXPECT_EQ(e.field(), "distances[0][0]");
    EXPECT_TRUE(contains(e.what(), "diagonal entry 30 is not the minimum of row 0")) << e.what();
    EXPECT_TRUE(contains(e.what(), "distances[0][1]=21")) << e.what();
}

TEST(MachineErrors, ZeroMemoryPlacementTarget) {
    const Machine m = Machine::from_synthetic("nodes=4 cpus=1,1,1,0 mem=1G,1G,1G,0");
    EXPECT_NO_THROW(m.check_placement_target(0, "bind"));
    Error e = expect_error([&] { m.check_placement_target(3, "bind nodes"); });
    EXPECT_EQ(e.field(), "bind nodes");
    EXPECT_TRUE(contains(e.what(), "node 3 has zero memory")) << e.what();
    EXPECT_TRUE(contains(e.what(), "nodes with memory: 0-2")) << e.what();
    e = expect_error([&] { m.check_placement_target(9, "bind nodes"); });
    EXPECT_TRUE(contains(e.what(), "node 9 is not in this machine (nodes: 0-3)")) << e.what();
}

TEST(MachineErrors, ValidateCatchesHandBuiltMistakes) {
    Machine m = Machine::from_synthetic("nodes=2 cpus-per-node=2");
    Machine dup = m;
    dup.nodes[1].cpus = {1, 2};
    Error e = expect_error([&] { dup.validate(); });
    EXPECT_TRUE(contains(e.what(), "CPU 1 is listed on two nodes")) << e.what();

    Machine order = m;
    order.nodes[1].os_index = 0;
    e = expect_error([&] { order.validate(); });
    EXPECT_EQ(e.field(), "nodes[1].os_index");

    Machine neg = m;
    neg.latency_ns = numaware::NodeMatrix<double>{{1, -2}, {3, 4}};
    e = expect_error([&] { neg.validate(); });
    EXPECT_EQ(e.field(), "latency_ns[0][1]");

    Machine empty;
    e = expect_error([&] { empty.validate(); });
    EXPECT_TRUE(contains(e.what(), "at least one node")) << e.what();

    // CPU indices stay below Machine::max_cpus (an affinity mask for CPU
    // 4,000,000,000 would be half a gigabyte), on a node and left out.
    Machine far = m;
    far.nodes[1].cpus = {2, Machine::max_cpus};
    e = expect_error([&] { far.validate(); });
    EXPECT_EQ(e.field(), "nodes[1].cpus[1]");
    EXPECT_TRUE(contains(e.what(), "CPU 131072 is out of range (limit 131071)")) << e.what();
    far.nodes[1].cpus = {2, Machine::max_cpus - 1};
    EXPECT_NO_THROW(far.validate());
    Machine far_out = m;
    far_out.left_out.cpus = {4000000000u};
    far_out.left_out.by = "a test";
    e = expect_error([&] { far_out.validate(); });
    EXPECT_EQ(e.field(), "left_out.cpus");
    EXPECT_TRUE(contains(e.what(), "CPU 4000000000 is out of range")) << e.what();
}

TEST(MachineQueries, UnknownNodesAndCpusThrow) {
    const Machine m = Machine::from_synthetic("nodes=2 cpus=1,0");
    EXPECT_EQ(m.node_of_cpu(0), 0u);
    Error e = expect_error([&] { (void)m.node_of_cpu(1); });
    EXPECT_TRUE(contains(e.what(), "CPU 1 is not in this machine")) << e.what();
    EXPECT_THROW((void)m.index_of(7), Error);
    EXPECT_EQ(m.node(1).memory_bytes, 512ULL << 20);
}

TEST(MachineJson, RoundTripsSyntheticMachinesExactly) {
    for (const char* spec :
         {four_nodes, "nodes=3 cpus=2,0,3 mem=1G,256M,1.5G tiers=0,1,0 kinds=DRAM,CXL,DRAM",
          "nodes=2 distances=10,21/21,10 latency=85.5,140.125/141,86.1 bandwidth=20.25,0.1/0.3,19.999999999999",
          "nodes=2 page=64K"}) {
        const Machine m = Machine::from_synthetic(spec);
        const Machine back = Machine::from_json(m.to_json());
        EXPECT_EQ(back, m) << spec;
        EXPECT_EQ(back.to_json(), m.to_json());
        EXPECT_EQ(back.page_bytes, m.page_bytes) << spec;
    }
}

// The largest machine Linux can describe (MAX_NUMNODES = 1024 nodes), in
// both synthetic syntaxes: its million-entry distance matrix survives the
// JSON form. The fuzz harness of synthetic descriptions checks this round
// trip only up to 64 nodes, where an instrumented run stays fast.
TEST(MachineJson, RoundTripsTheLargestMachine) {
    for (const char* spec : {"nodes=1024 cpus-per-node=1", "hwloc:NUMANode:1024 PU:1"}) {
        const Machine m = Machine::from_synthetic(spec);
        ASSERT_EQ(m.nodes.size(), 1024u) << spec;
        EXPECT_EQ(Machine::from_json(m.to_json()), m) << spec;
    }
}

TEST(MachineJson, RoundTripsTheLargestMachineOfCpusAndCaches) {
    // 64 nodes of 128 PUs (Linux's 8,192), each PU with an L1 and an L2.
    const Machine m = Machine::from_synthetic("hwloc:1 64 128 1 1 1");
    ASSERT_EQ(m.cpu_count(), 8192u);
    ASSERT_EQ(m.caches.size(), 16384u);
    EXPECT_EQ(Machine::from_json(m.to_json()), m);
}

TEST(MachinePageSize, ComesFromTheDescriptionWith4KAsDefault) {
    EXPECT_EQ(Machine::from_synthetic("nodes=2").page_bytes, 4096u);
    EXPECT_EQ(Machine::from_synthetic("nodes=2 page=64K").page_bytes, 65536u);
    // JSON written before the field existed still loads, with the default.
    const Machine old = Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1}],"distances":[[10]]})");
    EXPECT_EQ(old.page_bytes, 4096u);
    const Machine big = Machine::from_json(
        R"({"nodes":[{"os_index":0,"memory_bytes":1}],"page_bytes":16384,"distances":[[10]]})");
    EXPECT_EQ(big.page_bytes, 16384u);
    for (const char* bad : {"nodes=1 page=512", "nodes=1 page=6K", "nodes=1 page=0"}) {
        const Error e = expect_error([bad] { (void)Machine::from_synthetic(bad); });
        EXPECT_EQ(e.field(), "page") << bad;
        EXPECT_TRUE(contains(e.what(), "power of two")) << e.what();
    }
    const Error e = expect_error([] {
        (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1}],"page_bytes":3000,"distances":[[10]]})");
    });
    EXPECT_EQ(e.field(), "page_bytes");
    Machine m = Machine::from_synthetic("nodes=1");
    m.page_bytes = 2048 + 1;
    EXPECT_EQ(expect_error([&] { m.validate(); }).field(), "page_bytes");
}

TEST(MachineSmtCores, RoundTripRestrictAndRefuse) {
    const Machine m = Machine::from_synthetic("hwloc:NUMANode:2 Core:2 PU:2");
    // hwloc's Core objects, without any cache in the model.
    EXPECT_TRUE(m.caches.empty());
    EXPECT_EQ(m.smt_cores, (std::vector<std::vector<unsigned>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
    EXPECT_EQ(m.cores(), m.smt_cores);
    EXPECT_EQ(Machine::from_json(m.to_json()), m);
    // A restriction keeps a core's allowed threads; a core left with one
    // is a core of its own, no longer listed.
    const Machine r = m.restrict_to({0, 1, 2, 4, 5}, m.all_nodes(), "a test cpuset");
    EXPECT_EQ(r.smt_cores, (std::vector<std::vector<unsigned>>{{0, 1}, {4, 5}}));
    EXPECT_EQ(r.cores(), (std::vector<std::vector<unsigned>>{{0, 1}, {2}, {4, 5}}));
    // Refused: a core of one CPU, a CPU of no node, a CPU in two cores,
    // cores out of order.
    const auto refused = [&](std::vector<std::vector<unsigned>> cores, const char* what) {
        Machine bad = m;
        bad.smt_cores = std::move(cores);
        const Error e = expect_error([&] { bad.validate(); });
        EXPECT_TRUE(e.field().starts_with("smt_cores[")) << e.field();
        EXPECT_TRUE(contains(e.what(), what)) << e.what();
    };
    refused({{0}}, "at least 2");
    refused({{0, 9}}, "CPU 9 is not a CPU of any node");
    refused({{0, 1}, {1, 2}}, "in another core");
    refused({{2, 3}, {0, 1}}, "out of order");
    refused({{1, 0}}, "ascending");
    const Error e = expect_error([] {
        (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1,"cpus":[0,1]}],"smt_cores":[[0,"x"]],"distances":[[10]]})");
    });
    EXPECT_EQ(e.field(), "smt_cores[0][1]");
}

TEST(MachineJson, ErrorsNameTheField) {
    Error e = expect_error([] { (void)Machine::from_json("{\"nodes\": [}"); });
    EXPECT_TRUE(contains(e.what(), "not valid JSON")) << e.what();
    e = expect_error([] {
        (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":-5}],"distances":[[10]]})");
    });
    EXPECT_EQ(e.field(), "nodes[0].memory_bytes");
    e = expect_error([] {
        (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1,"colour":1}],"distances":[[10]]})");
    });
    EXPECT_EQ(e.field(), "nodes[0].colour");
    e = expect_error([] { (void)Machine::from_json(R"({"nodes":[{"os_index":0,"memory_bytes":1}]})"); });
    EXPECT_EQ(e.field(), "machine.distances");
    e = expect_error([] {
        (void)Machine::from_json(
            R"({"nodes":[{"os_index":0,"memory_bytes":1},{"os_index":1,"memory_bytes":1}],"distances":[[10,20],[5,10]]})");
    });
    EXPECT_TRUE(contains(e.what(), "diagonal entry 10 is not the minimum of row 1: distances[1][0]=5")) << e.what();
}

TEST(MachineSpec, DispatchesAndNamesBadPaths) {
    EXPECT_EQ(Machine::from_spec(four_nodes), Machine::from_synthetic(four_nodes));
    Error e = expect_error([] { (void)Machine::from_spec("/nonexistent/dir/box.xml"); });
    EXPECT_TRUE(contains(e.what(), "/nonexistent/dir/box.xml")) << e.what();
    EXPECT_EQ(e.code(), ENOENT);
    e = expect_error([] { (void)Machine::from_spec("/nonexistent/dir/box.json"); });
    EXPECT_TRUE(contains(e.what(), "/nonexistent/dir/box.json")) << e.what();
    e = expect_error([] { (void)Machine::from_spec("@/nonexistent/spec.txt"); });
    EXPECT_TRUE(contains(e.what(), "/nonexistent/spec.txt")) << e.what();
    EXPECT_THROW((void)Machine::from_spec("   "), Error);
}

TEST(MachineSpec, ReadsJsonAndAtFiles) {
    const Machine m = Machine::from_synthetic("nodes=2 cpus=1,0 latency=80,0/0,0");
    const std::string dir = ::testing::TempDir();
    const std::string json_path = dir + "/numaware_machine_test.json";
    const std::string at_path = dir + "/numaware_machine_test.spec";
    {
        FILE* f = std::fopen(json_path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(m.to_json().c_str(), f);
        std::fclose(f);
        f = std::fopen(at_path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("nodes=2 cpus=1,0 latency=80,0/0,0\n", f);
        std::fclose(f);
    }
    EXPECT_EQ(Machine::from_spec(json_path), m);
    EXPECT_EQ(Machine::from_spec("@" + json_path), m);
    EXPECT_EQ(Machine::from_spec("@" + at_path).nodes, m.nodes);
    std::remove(json_path.c_str());
    std::remove(at_path.c_str());
}

TEST(MachineLive, LoadsThisSystem) {
    // Whatever the host is, it has at least one node with memory and CPUs,
    // and the model round-trips.
    const Machine m = Machine::from_live();
    ASSERT_GE(m.node_count(), 1u);
    EXPECT_GE(m.cpu_count(), 1u);
    EXPECT_FALSE(m.nodes_with_cpus().empty());
    EXPECT_EQ(Machine::from_json(m.to_json()), m);
    EXPECT_EQ(Machine::from_spec("live").nodes, m.nodes);
}

// A sysfs whose node directory lists no node (a container or sandbox
// masked it with an empty directory): hwloc 2.9's Linux backend stops the
// process there (an assertion), so the live machine is one node holding
// the online CPUs that this process may use, and says why. The sysfs is a
// made-up one under HWLOC_FSROOT, the root hwloc itself reads from.
TEST(MachineLive, AnEmptyNodeDirectoryIsOneNode) {
    char dir_template[] = "/tmp/numaware-fsroot-XXXXXX";
    const char* root_c = ::mkdtemp(dir_template);
    ASSERT_NE(root_c, nullptr);
    const std::string root = root_c;
    const std::string system = root + "/sys/devices/system";
    // The CPU directory lists its CPUs (only the node directory is masked).
    for (const std::string& d : {root + "/sys", root + "/sys/devices", system, system + "/node", system + "/cpu",
                                 system + "/cpu/cpu0", system + "/cpu/cpu2", system + "/cpu/cpu3"})
        ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
    // Not a node: the kernel's files beside node0, node1... stay.
    for (const std::string& f : {system + "/node/has_cpu", system + "/node/possible"}) {
        std::FILE* out = std::fopen(f.c_str(), "w");
        ASSERT_NE(out, nullptr);
        std::fclose(out);
    }
    {
        std::FILE* out = std::fopen((system + "/cpu/online").c_str(), "w");
        ASSERT_NE(out, nullptr);
        std::fputs("0,2-3\n", out);
        std::fclose(out);
    }
    const std::vector<unsigned> allowed = this_process_cpus();
    std::vector<unsigned> expected;
    for (unsigned c : {0u, 2u, 3u})
        if (may_use(allowed, c)) expected.push_back(c);
    ASSERT_EQ(::setenv("HWLOC_FSROOT", root.c_str(), 1), 0);
    std::optional<Machine> m;
    std::string error;
    try {
        m = Machine::from_live();
    } catch (const std::exception& e) {
        error = e.what();
    }
    ::unsetenv("HWLOC_FSROOT");
    for (const std::string& f : {system + "/node/has_cpu", system + "/node/possible", system + "/cpu/online"})
        std::remove(f.c_str());
    for (const std::string& d : {system + "/cpu/cpu0", system + "/cpu/cpu2", system + "/cpu/cpu3", system + "/cpu",
                                 system + "/node", system, root + "/sys/devices", root + "/sys", root})
        ::rmdir(d.c_str());
    if (expected.empty()) {
        // This process may use none of CPUs 0, 2 and 3: refused, by name.
        EXPECT_TRUE(contains(error, "cpus")) << error;
        return;
    }
    ASSERT_TRUE(m.has_value()) << error;
    ASSERT_EQ(m->node_count(), 1u);
    EXPECT_EQ(m->nodes[0].os_index, 0u);
    EXPECT_EQ(m->nodes[0].cpus, expected);
    EXPECT_GT(m->nodes[0].memory_bytes, 0u);
    EXPECT_EQ(m->distances, (numaware::NodeMatrix<unsigned>{{10}}));
    EXPECT_TRUE(contains(m->name, "/sys/devices/system/node lists none")) << m->name;
    EXPECT_EQ(m->page_bytes, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
    // The CPUs this process may not use are named as left out, by whom.
    if (expected.size() < 3u) {
        EXPECT_EQ(m->left_out.by, "this process's CPU affinity");
    }
    EXPECT_EQ(Machine::from_json(m->to_json()), *m);
}

// A made-up sysfs under a fresh temporary root, with a masked (empty) CPU
// directory and nodes node0 and node1 given by their cpulist, meminfo and
// distance files; removed again by the destructor.
struct MaskedCpuSysfs {
    std::string root;
    std::vector<std::string> dirs;
    std::vector<std::pair<std::string, std::string>> files;

    explicit MaskedCpuSysfs(const std::vector<std::pair<std::string, std::string>>& node_files) {
        char dir_template[] = "/tmp/numaware-fsroot-XXXXXX";
        const char* root_c = ::mkdtemp(dir_template);
        if (root_c == nullptr) throw std::runtime_error("mkdtemp failed");
        root = root_c;
        const std::string system = root + "/sys/devices/system";
        dirs = {root + "/sys", root + "/sys/devices", system, system + "/cpu",
                system + "/node", system + "/node/node0", system + "/node/node1"};
        for (const std::string& d : dirs)
            if (::mkdir(d.c_str(), 0755) != 0) throw std::runtime_error("mkdir " + d);
        for (const auto& [name, text] : node_files) {
            files.emplace_back(system + "/node/" + name, text);
            std::FILE* out = std::fopen(files.back().first.c_str(), "w");
            if (out == nullptr) throw std::runtime_error("fopen " + files.back().first);
            std::fputs(text.c_str(), out);
            std::fclose(out);
        }
    }
    ~MaskedCpuSysfs() {
        for (const auto& f : files) std::remove(f.first.c_str());
        for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) ::rmdir(d->c_str());
        ::rmdir(root.c_str());
    }
    // Machine::from_live() under HWLOC_FSROOT=root: the machine, or the
    // error it threw; and what it printed on stderr.
    struct Live {
        std::optional<Machine> machine;
        std::string error;
        std::string printed;
    };
    Live load() const {
        Live r;
        if (::setenv("HWLOC_FSROOT", root.c_str(), 1) != 0) throw std::runtime_error("setenv failed");
        ::testing::internal::CaptureStderr();
        try {
            r.machine = Machine::from_live();
        } catch (const std::exception& e) {
            r.error = e.what();
        }
        r.printed = ::testing::internal::GetCapturedStderr();
        ::unsetenv("HWLOC_FSROOT");
        return r;
    }
};

// A sysfs whose CPU directory lists no CPU (a container masked
// /sys/devices/system/cpu) while the node directory is intact: hwloc 2.9
// prints "failed to find sysfs cpu topology directory" on the program's
// stderr and finds no node and no memory, so the live machine comes from
// the node directory, as hwloc would read it: each node's CPUs, MemTotal
// and SLIT row. Nothing is printed. Made-up sysfs under HWLOC_FSROOT.
TEST(MachineLive, AMaskedCpuDirectoryIsReadFromTheNodeDirectory) {
    const MaskedCpuSysfs fs({
        {"possible", "0-1\n"},
        {"node0/cpulist", "0\n"},
        {"node0/meminfo", "Node 0 MemTotal:        1048576 kB\nNode 0 MemFree:  1000 kB\n"},
        {"node0/distance", "10 21\n"},
        {"node1/cpulist", "1\n"},
        {"node1/meminfo", "Node 1 MemTotal:        2097152 kB\n"},
        {"node1/distance", "28 10\n"},   // asymmetric, as some firmware's SLIT: kept
    });
    const std::vector<unsigned> allowed = this_process_cpus();
    const MaskedCpuSysfs::Live r = fs.load();
    const std::optional<Machine>& m = r.machine;
    EXPECT_EQ(r.printed, "");
    if (!may_use(allowed, 0) || !may_use(allowed, 1)) {
        // This process may not use both CPUs: the affinity names what it left out.
        if (m) {
            EXPECT_EQ(m->left_out.by, "this process's CPU affinity");
        }
        return;
    }
    ASSERT_TRUE(m.has_value()) << r.error;
    EXPECT_TRUE(contains(m->name, "from /sys/devices/system/node")) << m->name;
    EXPECT_TRUE(contains(m->name, "/sys/devices/system/cpu lists no CPU")) << m->name;
    ASSERT_EQ(m->node_count(), 2u);
    EXPECT_EQ(m->nodes[0].os_index, 0u);
    EXPECT_EQ(m->nodes[1].os_index, 1u);
    EXPECT_EQ(m->nodes[0].cpus, std::vector<unsigned>{0});
    EXPECT_EQ(m->nodes[1].cpus, std::vector<unsigned>{1});
    EXPECT_EQ(m->nodes[0].memory_bytes, 1ULL << 30);
    EXPECT_EQ(m->nodes[1].memory_bytes, 2ULL << 30);
    EXPECT_EQ(m->distances, (numaware::NodeMatrix<unsigned>{{10, 21}, {28, 10}}));
    EXPECT_EQ(m->page_bytes, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
    EXPECT_EQ(Machine::from_json(m->to_json()), *m);
}

// The same masked CPU directory with distance rows the model refuses (a
// diagonal above the rest) or cannot read: the default distances, as hwloc
// drops a matrix it refuses; the nodes are still the directory's.
TEST(MachineLive, RefusedDistanceRowsOfAMaskedCpuDirectoryGiveTheDefaults) {
    // The nodes hold CPUs this process may use: its first two (the second
    // node has none on a one-CPU affinity, and stays, with its memory).
    std::vector<std::string> lists;
    for (unsigned c : this_process_cpus())
        if (lists.size() < 2) lists.push_back(std::to_string(c) + "\n");
    ASSERT_FALSE(lists.empty());
    if (lists.size() < 2) lists.push_back("\n");
    for (const std::pair<std::string, std::string>& rows : {std::pair<std::string, std::string>{"40 21\n", "21 40\n"},
                                                           {"10 x\n", "21 10\n"},
                                                           {"10\n", "21 10\n"}}) {
        const MaskedCpuSysfs fs({
            {"node0/cpulist", lists[0]},
            {"node0/meminfo", "Node 0 MemTotal: 4 kB\n"},
            {"node0/distance", rows.first},
            {"node1/cpulist", lists[1]},
            {"node1/meminfo", "Node 1 MemTotal: 8 kB\n"},
            {"node1/distance", rows.second},
        });
        const MaskedCpuSysfs::Live r = fs.load();
        ASSERT_TRUE(r.machine.has_value()) << rows.first << ": " << r.error;
        ASSERT_EQ(r.machine->node_count(), 2u);
        EXPECT_EQ(r.machine->nodes[1].memory_bytes, 8192u);
        EXPECT_EQ(r.machine->distances, (numaware::NodeMatrix<unsigned>{{10, 20}, {20, 10}})) << rows.first;   // the defaults
    }
}

TEST(Size, ParsesAndFormats) {
    using numaware::format_size;
    using numaware::parse_size;
    EXPECT_EQ(parse_size("512M", "mem"), 512ULL << 20);
    EXPECT_EQ(parse_size("2G", "mem"), 2ULL << 30);
    EXPECT_EQ(parse_size("4096", "mem"), 4096u);
    EXPECT_EQ(parse_size("1.5G", "mem"), 3ULL << 29);
    EXPECT_EQ(parse_size("64k", "mem"), 64ULL << 10);
    EXPECT_EQ(parse_size("1GiB", "mem"), 1ULL << 30);
    EXPECT_EQ(format_size(512ULL << 20), "512M");
    EXPECT_EQ(format_size(3ULL << 29), "1536M");
    EXPECT_EQ(format_size(4097), "4097");
    EXPECT_EQ(format_size(0), "0");
    for (std::uint64_t v : {1ULL, 1023ULL, 1ULL << 40, 12345ULL << 10})
        EXPECT_EQ(parse_size(format_size(v), "x"), v);
    Error e = expect_error([] { (void)parse_size("", "mem[1]"); });
    EXPECT_EQ(e.field(), "mem[1]");
    e = expect_error([] { (void)parse_size("99999999999T", "mem"); });
    EXPECT_TRUE(contains(e.what(), "too large")) << e.what();
    e = expect_error([] { (void)parse_size("0.3K", "mem"); });
    EXPECT_TRUE(contains(e.what(), "whole number of bytes")) << e.what();
}
