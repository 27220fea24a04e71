// `numaware sim machine` end to end: the built CLI shows the timed machine.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "numaware/sim.hpp"
#include "support.hpp"

using numaware::test::contains;
using numaware::test::run_cli;

TEST(SimCli, JsonIsTheTimedModel) {
    const auto r = run_cli("sim machine --machine bullion-s16:8 --json", false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const numaware::sim::TimedMachine t = numaware::sim::model("bullion-s16", 8);
    EXPECT_EQ(j["name"], t.name);
    EXPECT_TRUE(j["simulated"].get<bool>());
    ASSERT_EQ(j["nodes"].size(), 8u);
    EXPECT_EQ(j["nodes"][3]["cpus"], 18u);
    EXPECT_EQ(j["latency_ns"].get<numaware::NodeMatrix<double>>(), t.latency_ns);
    EXPECT_EQ(j["link_gbps"].get<numaware::NodeMatrix<double>>(), t.link_gbps);
    EXPECT_EQ(j["rules"].size(), t.rules.size());
}

TEST(SimCli, TextNamesTheRulesForASyntheticMachine) {
    const auto r = run_cli("sim machine --machine 'nodes=2 cpus-per-node=1 mem-per-node=256M distances=10,21/21,10'");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "simulated")) << r.out;
    EXPECT_TRUE(contains(r.out, "latency from SLIT")) << r.out;
    EXPECT_TRUE(contains(r.out, "168")) << "80 ns x 21/10 = 168 ns remote\n" << r.out;
}

TEST(SimCli, BadInputIsOneLineAndNonZero) {
    const auto r = run_cli("sim machine --machine bullion-s16:5");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "numaware: sockets: bullion-s16 has 4, 8 or 16 sockets, got 5\n");
    const auto none = run_cli("sim");
    EXPECT_NE(none.status, 0);
}
