// `numaware latency`: measure, save, report and load through the command.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "os/os.hpp"
#include "support.hpp"

namespace {

using namespace numaware;
using numaware::test::contains;

std::string temp_path(const std::string& name) {
    return ::testing::TempDir() + "nw_latency_cli_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::vector<unsigned> my_cpus() {
    std::vector<unsigned> cpus;
    EXPECT_EQ(os::linux_os().get_affinity(0, cpus), 0);
    return cpus;
}

using numaware::test::CliResult;
using numaware::test::run_cli;

TEST(LatencyCli, MeasuresSavesAndReportsTheSameFigures) {
    const std::string path = temp_path("cli.json");
    const CliResult m = run_cli("latency measure --size 64K --repetitions 3 --loads 4 --validate --json --save " + path);
    ASSERT_EQ(m.status, 0) << m.out;
    const auto measured = nlohmann::json::parse(m.out);
    EXPECT_EQ(measured["blocks"], 1024);
    EXPECT_EQ(measured["cpus"].size(), my_cpus().size());
    for (const auto& c : measured["cpus"]) {
        EXPECT_GT(c["min_ns"].get<double>(), 0.0);
        EXPECT_LE(c["min_ns"].get<double>(), c["median_ns"].get<double>());
        EXPECT_LE(c["median_ns"].get<double>(), c["max_ns"].get<double>());
    }
    ASSERT_EQ(measured["validation"].size(), measured["cpus"].size());
    for (const auto& v : measured["validation"]) {
        // Fast lists exist only when the first pass found non-uniformity;
        // half the blocks stay ordinary either way.
        if (measured["non_uniform"].get<bool>())
            EXPECT_GT(v["fast_list_ns"].get<double>(), 0.0) << v;
        else
            EXPECT_EQ(v["fast_list_ns"].get<double>(), 0.0) << v;
        EXPECT_GT(v["ordinary_ns"].get<double>(), 0.0) << v;
    }
    const CliResult r = run_cli("latency report " + path + " --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto reported = nlohmann::json::parse(r.out);
    EXPECT_EQ(reported["cpus"], measured["cpus"]);
    EXPECT_EQ(reported["non_uniform"], measured["non_uniform"]);

    write_file(path, "{\"format\": \"numaware-latency\"}");
    const CliResult bad = run_cli("latency load " + path);
    EXPECT_EQ(bad.status, 1);
    EXPECT_TRUE(contains(bad.out, path + ": version: missing")) << bad.out;
    std::remove(path.c_str());

    const CliResult help = run_cli("latency measure --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_TRUE(contains(help.out, "Example: numaware latency measure")) << help.out;
}

}  // namespace
