// `numaware advise` hands over to the Python package's advisor: the same
// arguments, the package on PYTHONPATH, NUMAWARE_CLI naming the executable.
// A stand-in interpreter (a shell script) shows what it was given.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "numaware/memory_sim.hpp"
#include "support.hpp"

using numaware::test::contains;
using numaware::test::one_line;
using numaware::test::run_cli;

namespace {

// A script that prints its arguments and the variables the advisor reads.
std::string stand_in() {
    char dir[] = "/tmp/numaware-advise-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return "";
    const std::string path = std::string(dir) + "/python3";
    std::ofstream(path) << "#!/bin/sh\necho \"args: $*\"\necho \"cli: $NUMAWARE_CLI\"\necho \"path: $PYTHONPATH\"\n";
    ::chmod(path.c_str(), 0755);
    return path;
}

}  // namespace

TEST(AdviseCli, HandsOverToThePythonAdvisor) {
    const std::string python = stand_in();
    ASSERT_FALSE(python.empty());
    const auto r = run_cli("advise evaluate --preset thesis-4s --size test --json", false, "NUMAWARE_PYTHON=" + python);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "args: -m numaware.advisor evaluate --preset thesis-4s --size test --json")) << r.out;
    EXPECT_TRUE(contains(r.out, "cli: /")) << r.out;   // an absolute path: /proc/self/exe resolved
    EXPECT_TRUE(contains(r.out, "numaware")) << r.out;
    EXPECT_TRUE(contains(r.out, "path: /")) << r.out;
    std::remove(python.c_str());
}

TEST(AdviseCli, AMissingInterpreterIsOneLine) {
    const auto r = run_cli("advise sweep --size test", true, "NUMAWARE_PYTHON=/nonexistent/python3");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "numaware: advise: NUMAWARE_PYTHON='/nonexistent/python3' is not an executable")) << r.out;
}

// The advisor keys stored results by this line: the project's version and
// the memory simulator's model revision.
TEST(AdviseCli, VersionNamesTheSimulatorModel) {
    const auto r = run_cli("--version", false);
    ASSERT_EQ(r.status, 0);
    EXPECT_TRUE(contains(r.out, std::string("+memsim.") + numaware::sim::memory::model_revision)) << r.out;
    EXPECT_TRUE(one_line(r.out)) << r.out;
}

// The whole pipeline through the real simulator at the test size: the
// sweep (3 workloads, 24 configurations) into a store under a temporary
// cache folder, then every model cross-validated; one document, labelled
// simulated, whose figures are consistent with each other.
TEST(AdviseCli, EvaluatesTheTestSizeEndToEnd) {
    char dir[] = "/tmp/numaware-advise-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const auto r = run_cli("advise evaluate --preset thesis-4s --size test --folds 5 --json", false,
                           std::string("XDG_CACHE_HOME=") + dir);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["simulated"].get<bool>());
    EXPECT_EQ(j["preset"], "thesis-4s");
    EXPECT_GE(j["regions"].get<int>(), 8);
    const double oracle = j["oracle_speedup"].get<double>();
    EXPECT_GE(oracle, 1.0);   // the baseline is among the configurations
    EXPECT_LE(j["best_of_2_speedup"].get<double>(), oracle + 1e-12);
    EXPECT_GE(j["coverage_curve"].back().get<double>(), 0.99);
    ASSERT_EQ(j["models"].size(), 6u);
    for (const auto& [name, m] : j["models"].items()) {
        EXPECT_LE(m["speedup"].get<double>(), oracle + 1e-12) << name;
        EXPECT_EQ(m["features"].size(), 2u) << name;
    }
    const auto c = j["characterisation"];
    EXPECT_LE(c["numa_only"].get<double>(), c["coupled"].get<double>() + 1e-12);
    EXPECT_LE(c["greedy"].get<double>(), c["coupled"].get<double>() + 1e-12);
    EXPECT_EQ(std::system((std::string("rm -rf '") + dir + "'").c_str()), 0);
}

// The presets the advisor's configuration space is built from come from
// the simulator itself: every preset, with the shape mem::preset gives.
TEST(AdviseCli, ListsThePresetsTheAdvisorReads) {
    const auto r = run_cli("sim memory --list-presets --json", false);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(one_line(r.out)) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> names;
    for (const auto& p : j["presets"]) {
        const std::string name = p["name"].get<std::string>();
        names.push_back(name);
        const numaware::sim::memory::HierarchyPreset h = numaware::sim::memory::preset(name);
        EXPECT_EQ(p["sockets"].get<unsigned>(), h.sockets()) << name;
        EXPECT_EQ(p["cores_per_socket"].get<unsigned>() * h.sockets(), h.cores()) << name;
        EXPECT_TRUE(p["prefetcher_control"].get<bool>()) << name;
    }
    EXPECT_EQ(names, numaware::sim::memory::preset_names());
}
