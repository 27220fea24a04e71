// `numaware sim memory` end to end: the JSON document the scripts read, the
// CSV, the --plot PNG (through the Python package, python/), and bad input
// as one line with a non-zero status.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

using numaware::test::contains;
using numaware::test::one_line;
using numaware::test::run_cli;

namespace {

// A fresh directory with a space in its name (the CLI hands paths to
// python3 without a shell), removed with its contents at the end.
struct PlotDir {
    std::string path;
    PlotDir() {
        std::string p = ::testing::TempDir() + "nw cli plot.XXXXXX";
        if (::mkdtemp(p.data()) != nullptr) path = p;
    }
    ~PlotDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::size_t entries() const {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path)) ++n;
        return n;
    }
};

bool is_png(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string head(8, '\0');
    in.read(head.data(), 8);
    return in && head == std::string("\x89PNG\r\n\x1a\n", 8);
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

TEST(SimMemoryCli, JsonHasOneRunPerPrefetcher) {
    const auto r = run_cli("sim memory --preset thesis-4s --workload chase:64K --prefetch none,stride:8,nasp:8:64 --json",
                           false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["simulated"].get<bool>());
    EXPECT_TRUE(contains(j["label"].get<std::string>(), "simulated"));
    EXPECT_EQ(j["preset"], "thesis-4s");
    EXPECT_FALSE(j["sources"].empty());
    ASSERT_EQ(j["runs"].size(), 3u);
    EXPECT_EQ(j["runs"][2]["prefetch"], "nasp:8:64");
    for (const auto& run : j["runs"]) {
        EXPECT_TRUE(run["simulated"].get<bool>());
        EXPECT_GT(run["simulated_s"].get<double>(), 0.0);
        EXPECT_TRUE(run.contains("prefetches_issued"));
        for (const char* level : {"l1", "l2", "l3", "dram_local", "dram_remote", "writeback"})
            EXPECT_TRUE(run["bytes"].contains(level)) << level;
        EXPECT_GT(run["energy_j"]["total"].get<double>(), 0.0);
    }
    EXPECT_DOUBLE_EQ(j["runs"][0]["speedup"].get<double>(), 1.0);
}

// The advisor's input: a team on K nodes, a team-dependent page mapping,
// and each measured phase's own counters.
TEST(SimMemoryCli, JsonPhasesCarryTheirCounters) {
    const auto r = run_cli("sim memory --workload cg:S --threads 8 --nodes 2 --thread-mapping scatter --mapping remote "
                           "--prefetch intel:1111,intel:0000 --json",
                           false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["mapping"], "remote");
    EXPECT_EQ(j["mapping_applied"], "remote (bind:2)");
    EXPECT_EQ(j["nodes"], 2);
    ASSERT_EQ(j["runs"].size(), 2u);
    for (const auto& run : j["runs"]) {
        std::uint64_t accesses = 0;
        unsigned measured = 0;
        for (const auto& ph : run["phases"]) {
            EXPECT_EQ(ph.contains("counters"), ph["measured"].get<bool>()) << ph["name"];
            if (!ph["measured"].get<bool>()) continue;
            ++measured;
            accesses += ph["counters"]["accesses"].get<std::uint64_t>();
            EXPECT_EQ(ph["counters"]["bytes"]["dram_local"], 0) << ph["name"];   // every page on node 2
            EXPECT_TRUE(ph["counters"]["levels"]["l3"].contains("mpki"));
        }
        EXPECT_GT(measured, 2u);
        EXPECT_EQ(accesses, run["accesses"].get<std::uint64_t>());
    }
}

TEST(SimMemoryCli, CsvRowPerPrefetcher) {
    const auto r = run_cli("sim memory --workload chase:64K --prefetch none,next-line --csv", false);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "# simulated"));
    EXPECT_TRUE(contains(r.out, "\nprefetch,simulated_s,"));
    EXPECT_TRUE(contains(r.out, "\nnone,"));
    EXPECT_TRUE(contains(r.out, "\nnext-line,"));
}

TEST(SimMemoryCli, BadInputIsOneLineAndNonZero) {
    auto r = run_cli("sim memory --prefetch nasp:64:8");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "numaware: prefetch: 'nasp:64:8': k_rem must be >= k^L1 (8 < 64)\n");
    r = run_cli("sim memory --preset gem5-4s");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "numaware: preset: unknown preset 'gem5-4s'; known: thesis-4s, thesis-4s-nonuma, skylake-sp-2s, "
                     "sandybridge-ep-4s\n");
    r = run_cli("sim memory --workload stream --threads 17");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(contains(r.out, "17 threads on thesis-4s with 16 cores")) << r.out;
    EXPECT_TRUE(contains(r.out, "--machine")) << r.out;   // what lifts the limit
    r = run_cli("sim memory --mapping bind:9");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(contains(r.out, "bind:9: the preset has nodes 0..3")) << r.out;
    r = run_cli("sim memory --workload stream:1 --nodes 5");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "numaware: nodes: 5 nodes on thesis-4s with 4 sockets\n");
    r = run_cli("sim memory --workload stream:1 --mapping remote");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(contains(r.out, "remote: the team uses every node of thesis-4s")) << r.out;
}

TEST(SimMemoryCli, AnotherMachineUnderThePresetsCachesAndItsBadInput) {
    // A named model of the task simulator: 4 sockets x 18 cores.
    auto r = run_cli("sim memory --machine bullion-s16:4 --workload stream:1 --json", false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["preset"].get<std::string>(), "thesis-4s on bullion-s16 (4 sockets)");
    EXPECT_EQ(j["parameters"]["sockets"].get<unsigned>(), 4u);
    EXPECT_EQ(j["parameters"]["cores"].get<unsigned>(), 72u);
    // The preset's 1 MiB of L3 per core, times 18.
    EXPECT_EQ(j["parameters"]["l3"]["bytes"].get<std::uint64_t>(), 18u << 20);
    // A memory-only node: binding to it makes every DRAM byte remote.
    const std::string tiered = "'nodes=3 cpus=2,2,0 mem=1G,1G,2G kinds=DRAM,DRAM,CXL "
                               "latency=80,140,250/140,80,250/250,250,250'";
    r = run_cli("sim memory --machine " + tiered + " --workload stream:8 --mapping bind:2 --json", false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto b = nlohmann::json::parse(r.out)["runs"][0]["bytes"];
    EXPECT_GT(b["dram_remote"].get<std::uint64_t>(), 0u) << b.dump();
    EXPECT_EQ(b["dram_local"].get<std::uint64_t>(), 0u) << b.dump();

    r = run_cli("sim memory --machine 'nodes=2 cpus=0,0' --workload stream:1");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "numaware: machine: nodes=2 cpus=0,0 has no CPUs: nothing to run the workload on\n");
    r = run_cli("sim memory --machine bullion-s16:5 --workload stream:1");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "4, 8 or 16 sockets")) << r.out;
}

TEST(SimMemoryCli, PlotWritesAPng) {
    const PlotDir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::string png = dir.path + "/stream plot.png";
    const auto r = run_cli("sim memory --preset thesis-4s --workload stream:1 --prefetch none,stride:8 --plot " +
                           quoted(png));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "SIMULATED")) << r.out;   // the table is printed as without --plot
    EXPECT_TRUE(is_png(png));
    EXPECT_GT(std::filesystem::file_size(png), 1000u);
    EXPECT_EQ(dir.entries(), 1u);   // the PNG alone: no temporary file left beside it
}

TEST(SimMemoryCli, PlotLeavesTheJsonAloneOnStdout) {
    const PlotDir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::string png = dir.path + "/chase.png";
    const auto r = run_cli("sim memory --workload chase:64K --prefetch none,next-line --json --plot " + quoted(png), false);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["runs"].size(), 2u);
    EXPECT_TRUE(is_png(png));
}

TEST(SimMemoryCli, PlotIntoAnUnwritableDirectoryIsOneLine) {
    const PlotDir dir;
    ASSERT_FALSE(dir.path.empty());
    // Checked before the simulation: nothing else is printed.
    auto r = run_cli("sim memory --workload stream:1 --prefetch none --plot " + quoted(dir.path + "/missing/out.png"));
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(r.out.starts_with("numaware: --plot: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "/missing' does not exist")) << r.out;
    // Not even root may create files in /sys.
    r = run_cli("sim memory --workload stream:1 --prefetch none --plot /sys/out.png");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "cannot write in '/sys'")) << r.out;
    if (::geteuid() != 0) {
        const std::string locked = dir.path + "/locked";
        ASSERT_EQ(::mkdir(locked.c_str(), 0555), 0);
        r = run_cli("sim memory --workload stream:1 --prefetch none --plot " + quoted(locked + "/out.png"));
        EXPECT_NE(r.status, 0);
        EXPECT_TRUE(one_line(r.out)) << r.out;
        EXPECT_TRUE(contains(r.out, "cannot write in")) << r.out;
    }
    r = run_cli("sim memory --workload stream:1 --prefetch none --plot " + quoted(dir.path + "/out.svg"));
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "ending in .png")) << r.out;
}

TEST(SimMemoryCli, PlotWithoutPythonOrMatplotlibIsOneLine) {
    const PlotDir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::string png = dir.path + "/out.png";
    const std::string run = "sim memory --workload stream:1 --prefetch none --plot " + quoted(png);
    auto r = run_cli(run, true, "NUMAWARE_PYTHON=/nonexistent/python3");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "numaware: --plot: NUMAWARE_PYTHON='/nonexistent/python3' is not an executable\n");
    // python3 -S does not read site-packages: a python3 without matplotlib.
    const std::string bare = dir.path + "/python3 without site";
    {
        std::ofstream script(bare);
        script << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
    }
    ASSERT_EQ(::chmod(bare.c_str(), 0755), 0);
    r = run_cli(run, true, "NUMAWARE_PYTHON=" + quoted(bare));
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "matplotlib is not installed")) << r.out;
    EXPECT_TRUE(contains(r.out, "scripts/bootstrap, or apt-get install python3-matplotlib")) << r.out;
    // A package folder that is not one.
    r = run_cli(run, true, "NUMAWARE_PYTHONPATH=" + quoted(dir.path));
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "holds no numaware/__init__.py")) << r.out;
    EXPECT_FALSE(std::filesystem::exists(png));
}
