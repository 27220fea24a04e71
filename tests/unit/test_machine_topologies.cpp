// The machine model against the six real topologies in shared/topologies,
// checked against hwloc's own tool: `lstopo-no-graphics -i FILE`.
//
// These files are not committed with numaware; CI has shared/ beside the
// checkout. Where the folder is absent the cases are skipped, saying so.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"

using numaware::Machine;

namespace {

const std::string topology_dir = NUMAWARE_TOPOLOGY_DIR;

std::string run(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return out;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    const int status = ::pclose(pipe);
    EXPECT_EQ(status, 0) << command << "\n" << out;
    return out;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// What lstopo says about a file: node OS index -> local memory (bytes),
// the PU count, and the NUMANode SLIT by OS index (empty when none).
struct LstopoView {
    std::map<unsigned, std::uint64_t> node_memory;
    std::size_t pu_count = 0;
    std::map<std::pair<unsigned, unsigned>, unsigned> distances;
    std::size_t distance_nodes = 0;
};

LstopoView lstopo(const std::string& file) {
    LstopoView v;
    const std::string tool = "lstopo-no-graphics -i '" + file + "' ";
    // "NUMANode(MCDRAM) L#1 (P#7 local=2097152KB total=2097152KB)"
    const std::regex node_re(R"(NUMANode(\([^)]*\))? L#\d+ \(P#(\d+)(?: local=(\d+)KB)?)");
    for (const std::string& line : lines_of(run(tool + "--only NUMANode -v"))) {
        std::smatch m;
        if (std::regex_search(line, m, node_re))
            v.node_memory[static_cast<unsigned>(std::stoul(m[2]))] = m[3].matched ? std::stoull(m[3]) * 1024 : 0;
    }
    for (const std::string& line : lines_of(run(tool + "--only PU -p")))
        if (line.rfind("PU P#", 0) == 0) ++v.pu_count;

    // "Relative latency matrix (name NUMALatency kind 5) between 4 NUMANodes (depth -3) by physical indexes:"
    const auto lines = lines_of(run(tool + "--distances -p"));
    const std::regex header_re(R"(between (\d+) NUMANodes .* by physical indexes)");
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (!std::regex_search(lines[i], m, header_re)) continue;
        EXPECT_EQ(v.distance_nodes, 0u) << "more than one NUMANode matrix in " << file;
        v.distance_nodes = std::stoul(m[1]);
        std::istringstream cols(lines.at(i + 1));
        std::string word;
        cols >> word;   // "index"
        std::vector<unsigned> col_os;
        for (unsigned c; cols >> c;) col_os.push_back(c);
        EXPECT_EQ(col_os.size(), v.distance_nodes);
        for (std::size_t r = 0; r < v.distance_nodes; ++r) {
            std::istringstream row(lines.at(i + 2 + r));
            unsigned from = 0;
            row >> from;
            for (unsigned to : col_os) {
                unsigned value = 0;
                row >> value;
                v.distances[{from, to}] = value;
            }
        }
    }
    return v;
}

bool have_topologies() { return std::filesystem::is_directory(topology_dir); }

// A missing folder fails the case: CI and every developer have shared/
// beside the checkout, so its absence is a broken setup, not a reason to
// pass quietly.
#define REQUIRE_TOPOLOGIES()                                                                          \
    if (!have_topologies())                                                                           \
    FAIL() << "the shared/topologies folder is missing (" << topology_dir                            \
           << "); these cases need the hwloc test topologies of shared/ beside the checkout"

class RealTopology : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTopology, AgreesWithLstopo) {
    REQUIRE_TOPOLOGIES();
    const std::string file = topology_dir + "/" + GetParam();
    ASSERT_TRUE(std::filesystem::exists(file)) << file << " is missing from the topologies folder";
    const Machine m = Machine::from_hwloc_xml(file);
    const LstopoView v = lstopo(file);

    ASSERT_EQ(m.node_count(), v.node_memory.size());
    for (const auto& [os, bytes] : v.node_memory) {
        ASSERT_NO_THROW((void)m.index_of(os)) << "node " << os;
        EXPECT_EQ(m.node(os).memory_bytes, bytes) << "node " << os;
    }
    EXPECT_EQ(m.cpu_count(), v.pu_count);

    // Guard the parser above: a NUMANode matrix in lstopo's output must have been read.
    const bool has_matrix = run("lstopo-no-graphics -i '" + file + "' --distances").find("NUMANodes") != std::string::npos;
    EXPECT_EQ(has_matrix, v.distance_nodes > 0);
    if (v.distance_nodes == 0) {
        // No NUMANode matrix in the file: the model falls back to 10/20.
        for (const auto& a : m.nodes)
            for (const auto& b : m.nodes)
                EXPECT_EQ(m.distance(a.os_index, b.os_index), a.os_index == b.os_index ? 10u : 20u);
    } else {
        EXPECT_EQ(v.distance_nodes, m.node_count());
        EXPECT_EQ(v.distances.size(), m.node_count() * m.node_count());
        for (const auto& [pair, value] : v.distances)
            EXPECT_EQ(m.distance(pair.first, pair.second), value) << pair.first << "->" << pair.second;
    }
}

TEST_P(RealTopology, RoundTripsThroughJson) {
    REQUIRE_TOPOLOGIES();
    const Machine m = Machine::from_hwloc_xml(topology_dir + "/" + GetParam());
    const Machine back = Machine::from_json(m.to_json());
    EXPECT_EQ(back, m);
    EXPECT_EQ(Machine::from_spec(topology_dir + "/" + GetParam()), m);
}

TEST_P(RealTopology, CoresAreLstoposCores) {
    REQUIRE_TOPOLOGIES();
    const std::string file = topology_dir + "/" + GetParam();
    const Machine m = Machine::from_hwloc_xml(file);
    // lstopo's Core objects, one line each ("Core L#0"...), and its PUs; a
    // file without Core objects has a core per PU.
    const auto lines = [&](const char* type) {
        const std::string out = run("lstopo-no-graphics -i '" + file + "' --only " + type);
        return static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
    };
    const std::size_t cores = lines("core"), pus = lines("pu");
    ASSERT_EQ(pus, m.cpu_count());
    const auto ours = m.cores();
    EXPECT_EQ(ours.size(), cores == 0 ? pus : cores);
    std::size_t total = 0;
    for (const auto& c : ours) {
        total += c.size();
        EXPECT_EQ(c.size(), pus / ours.size()) << "every core of these machines has as many threads";
        for (unsigned cpu : c) EXPECT_EQ(m.node_of_cpu(cpu), m.node_of_cpu(c.front())) << "a core on one node";
    }
    EXPECT_EQ(total, m.cpu_count());
}

INSTANTIATE_TEST_SUITE_P(SharedTopologies, RealTopology,
                         ::testing::Values("16amd64-4distances.xml", "16em64t-4s2c2t.xml",
                                           "32em64t-2n8c2t-pci-noio.xml", "64intel64-fakeKNL-SNC4-hybrid.xml",
                                           "8intel64-4n2t-memattrs.xml", "96em64t-4n4d3ca2co-pci.xml"),
                         [](const auto& param_info) {
                             std::string name = param_info.param.substr(0, param_info.param.find('.'));
                             for (char& c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

TEST(RealTopologies, KnlHasFourCpuLessMcdramNodes) {
    REQUIRE_TOPOLOGIES();
    const Machine m = Machine::from_hwloc_xml(topology_dir + "/64intel64-fakeKNL-SNC4-hybrid.xml");
    ASSERT_EQ(m.node_count(), 8u);
    unsigned mcdram = 0;
    for (const auto& n : m.nodes) {
        if (n.kind == "MCDRAM") {
            ++mcdram;
            EXPECT_FALSE(n.has_cpus()) << "MCDRAM node " << n.os_index;
            EXPECT_EQ(n.memory_bytes, 2ULL << 30);
            EXPECT_EQ(n.tier, 0);
        } else {
            EXPECT_EQ(n.kind, "DRAM");
            EXPECT_EQ(n.cpus.size(), 16u) << "DDR node " << n.os_index;
        }
    }
    EXPECT_EQ(mcdram, 4u);
    EXPECT_EQ(m.nodes_with_cpus().to_string(), "0-3");
    EXPECT_EQ(m.cpu_count(), 64u);
    // The file's Bandwidth attribute: 22500 MiB/s to the local DDR node and
    // 90000 MiB/s to the MCDRAM node beside it, from that quadrant's CPUs.
    ASSERT_TRUE(m.bandwidth_gbps.has_value());
    const auto& bw = *m.bandwidth_gbps;
    EXPECT_DOUBLE_EQ(bw[m.index_of(0)][m.index_of(0)], 22500.0 * 1048576.0 / 1e9);
    EXPECT_DOUBLE_EQ(bw[m.index_of(0)][m.index_of(7)], 90000.0 * 1048576.0 / 1e9);
    EXPECT_DOUBLE_EQ(bw[m.index_of(1)][m.index_of(4)], 90000.0 * 1048576.0 / 1e9);
    EXPECT_EQ(bw[m.index_of(0)][m.index_of(1)], 0.0) << "no value for this pair in the file: not known";
    EXPECT_EQ(bw[m.index_of(7)][m.index_of(7)], 0.0) << "a memory-only node initiates nothing";
    // The other half of each quadrant's MCDRAM is a memory-side cache (an
    // L3 of subtype MemorySideCache in this hwloc 1.x file): not one of the
    // CPUs' caches; their L1 and L2 (4 MiB in this file) are.
    std::set<unsigned> levels;
    for (const auto& c : m.caches) {
        levels.insert(c.level);
        if (c.level == 2) {
            EXPECT_EQ(c.size_bytes, 4u << 20);
        }
    }
    EXPECT_EQ(levels, (std::set<unsigned>{1, 2}));
}

TEST(RealTopologies, MemattrsFileGivesMeasuredMatrices) {
    REQUIRE_TOPOLOGIES();
    const Machine m = Machine::from_hwloc_xml(topology_dir + "/8intel64-4n2t-memattrs.xml");
    ASSERT_EQ(m.node_count(), 4u);
    // The file holds one Bandwidth value: 20 MiB/s to node 1 from the whole
    // machine's CPUs, so it applies from every node; other pairs are unknown.
    // Its Latency attribute has no values, so there is no latency matrix.
    ASSERT_TRUE(m.bandwidth_gbps.has_value());
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j)
            EXPECT_DOUBLE_EQ((*m.bandwidth_gbps)[i][j], j == 1 ? 20.0 * 1048576.0 / 1e9 : 0.0) << i << "," << j;
    EXPECT_FALSE(m.latency_ns.has_value());
    EXPECT_EQ(Machine::from_json(m.to_json()), m);
}

TEST(RealTopologies, AmdPicksTheNumaNodeMatrixAmongSeveral) {
    REQUIRE_TOPOLOGIES();
    // The file also has Package, Core and PU matrices with values up to
    // 345600; only the NUMANode one (10/20) is the SLIT.
    const Machine m = Machine::from_hwloc_xml(topology_dir + "/16amd64-4distances.xml");
    ASSERT_EQ(m.node_count(), 8u);
    for (const auto& row : m.distances)
        for (unsigned v : row) EXPECT_TRUE(v == 10 || v == 20) << v;
    EXPECT_EQ(m.node_of_cpu(0), 1u);   // PU 0 sits on NUMA node P#1 in this file
}

TEST(RealTopologies, BadXmlIsNamed) {
    const std::string path = ::testing::TempDir() + "/numaware_not_a_topology.xml";
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("<topology>not really</topology>", f);
    std::fclose(f);
    try {
        (void)Machine::from_spec(path);
        ADD_FAILURE() << "accepted a broken XML file";
    } catch (const numaware::Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
}

// hwloc 2.10 and later name ordinary memory "DRAM" once they find
// heterogeneous memory, and CXL memory "CXL-DRAM": DRAM stays tier 0.
TEST(RealTopologies, DramSubtypeIsTheDefaultTier) {
    REQUIRE_TOPOLOGIES();
    std::ifstream in(topology_dir + "/64intel64-fakeKNL-SNC4-hybrid.xml");
    std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::string& node : {std::string(R"(type="NUMANode" os_index="0")"),
                                    std::string(R"(type="NUMANode" os_index="1")")}) {
        ASSERT_NE(xml.find(node), std::string::npos) << node;
        xml.insert(xml.find(node) + node.size(), R"( subtype="DRAM")");
    }
    const std::string cxl = R"(type="NUMANode" os_index="2")";
    ASSERT_NE(xml.find(cxl), std::string::npos);
    xml.insert(xml.find(cxl) + cxl.size(), R"( subtype="CXL-DRAM")");
    const std::string path = ::testing::TempDir() + "/numaware_dram_subtype.xml";
    std::ofstream(path) << xml;
    const Machine m = Machine::from_spec(path);
    std::remove(path.c_str());
    for (unsigned id : {0u, 1u, 3u}) {
        EXPECT_EQ(m.node(id).kind, "DRAM") << id;
        EXPECT_EQ(m.node(id).tier, 0) << id;
    }
    EXPECT_EQ(m.node(2).kind, "CXL-DRAM");
    EXPECT_EQ(m.node(2).tier, 1);
    EXPECT_EQ(m.node(7).kind, "MCDRAM");
    EXPECT_EQ(m.node(7).tier, 0);
    // A "DRAM" node keeps the CPUs it shares with its MCDRAM node.
    EXPECT_EQ(m.node(0).cpus.size(), 16u);
    EXPECT_FALSE(m.node(7).has_cpus());
}

// A file exported by a newer hwloc (XML format 3, as hwloc's own test files
// now are): hwloc 2 refuses it with EINVAL alone; the error says why.
TEST(RealTopologies, ANewerXmlFormatIsNamedWithWhatToDo) {
    REQUIRE_TOPOLOGIES();
    std::ifstream in(topology_dir + "/16em64t-4s2c2t.xml");
    std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string root = R"(<topology version="2.0">)";
    ASSERT_NE(xml.find(root), std::string::npos);
    xml.replace(xml.find(root), root.size(), R"(<topology version="3.0">)");
    const std::string path = ::testing::TempDir() + "/numaware_format3.xml";
    std::ofstream(path) << xml;
    try {
        (void)Machine::from_spec(path);
        ADD_FAILURE() << "accepted an XML format this hwloc cannot read";
    } catch (const numaware::Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.code(), EINVAL);
        EXPECT_NE(what.find(path), std::string::npos) << what;
        EXPECT_NE(what.find("the file is in hwloc's XML format 3, which the hwloc 2.x loaded here cannot read "
                            "(it reads formats 1 to 2): export it again with hwloc 2.x"),
                  std::string::npos)
            << what;
    }
    std::remove(path.c_str());
}

}  // namespace
