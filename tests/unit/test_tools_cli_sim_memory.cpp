// `numaware sim memory` end to end: the JSON document the scripts read, the
// CSV, and bad input as one line with a non-zero status.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

using numaware::test::contains;
using numaware::test::run_cli;

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
    EXPECT_EQ(r.out, "numaware: preset: unknown preset 'gem5-4s'; known: thesis-4s, thesis-4s-nonuma, skylake-sp-2s\n");
    r = run_cli("sim memory --workload stream --threads 17");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(contains(r.out, "17 threads on thesis-4s with 16 cores")) << r.out;
    r = run_cli("sim memory --mapping bind:9");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(contains(r.out, "bind:9: the preset has nodes 0..3")) << r.out;
}
