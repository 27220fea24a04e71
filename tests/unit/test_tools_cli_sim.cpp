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

// ---- numaware sim tasks ----

namespace {
// Lines of `text` (a trailing newline ends the last one).
std::size_t line_count(const std::string& text) {
    std::size_t n = 0;
    for (char c : text) n += c == '\n';
    return n + (!text.empty() && text.back() != '\n');
}
}  // namespace

TEST(SimCli, TasksJsonIsLabelledSimulatedWithSpeedupsAgainstTheBaseline) {
    const auto r = run_cli(
        "sim tasks --machine bullion-s16 --sockets 4 --app jacobi,nstream --policy dep,rip-dep --size test --json",
        false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const std::string name = numaware::sim::model("bullion-s16", 4).name;
    EXPECT_EQ(j["machine"], name);
    EXPECT_EQ(j["label"], "simulated on " + name);
    EXPECT_EQ(j["baseline"], "dep");
    ASSERT_EQ(j["runs"].size(), 4u) << "2 apps x 2 policies";
    for (std::size_t i = 0; i < 4; ++i) {
        const auto& run = j["runs"][i];
        EXPECT_EQ(run["app"], i < 2 ? "jacobi" : "nstream");
        EXPECT_EQ(run["policy"], i % 2 == 0 ? "dep" : "rip-dep");
        EXPECT_TRUE(contains(run["label"].get<std::string>(), "simulated")) << run["label"];
        EXPECT_TRUE(contains(run["label"].get<std::string>(), name)) << run["label"];
        EXPECT_EQ(run["machine"], name);
        EXPECT_GT(run["tasks"].get<std::uint64_t>(), 0u);
        EXPECT_GT(run["makespan_s"].get<double>(), 0.0);
        EXPECT_EQ(run["workers"], 4u * 18u) << "every core of the 4-socket cut";
        const double base = j["runs"][i - i % 2]["makespan_s"].get<double>();
        EXPECT_DOUBLE_EQ(run["speedup_vs_baseline"].get<double>(), base / run["makespan_s"].get<double>());
    }
    EXPECT_DOUBLE_EQ(j["runs"][0]["speedup_vs_baseline"].get<double>(), 1.0);
}

TEST(SimCli, TasksBaselineNotListedIsRunInTheSameInvocation) {
    const auto r = run_cli("sim tasks --machine bullion-s16:4 --app nstream --policy rip-dep --baseline dfifo "
                           "--size test --threads 8 --json",
                           false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["baseline"], "dfifo");
    ASSERT_EQ(j["runs"].size(), 2u);
    EXPECT_EQ(j["runs"][0]["policy"], "dfifo");
    EXPECT_EQ(j["runs"][1]["policy"], "rip-dep");
    EXPECT_EQ(j["runs"][1]["workers"], 8u);
}

TEST(SimCli, TasksTextHasOneTablePerAppWithTheNamedBaseline) {
    const auto r = run_cli("sim tasks --machine bullion-s16 --sockets 8 --app jacobi,red-black --policy dep,dfifo "
                           "--size test",
                           false);
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string name = numaware::sim::model("bullion-s16", 8).name;
    std::size_t headers = 0;
    for (std::size_t at = 0; (at = r.out.find("simulated on " + name + " — ", at)) != std::string::npos; ++at)
        ++headers;
    EXPECT_EQ(headers, 2u) << r.out;
    EXPECT_TRUE(contains(r.out, "— jacobi")) << r.out;
    EXPECT_TRUE(contains(r.out, "— red-black")) << r.out;
    for (const char* column : {"makespan ms", "speedup vs dep", "cross-node MB", "cross ÷ dep", "stolen across",
                               "load balance %", "partition %", "host s"})
        EXPECT_TRUE(contains(r.out, column)) << column << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "\ndep ")) << r.out;
    EXPECT_TRUE(contains(r.out, "\ndfifo ")) << r.out;
}

TEST(SimCli, TasksBadInputIsOneLineNamingTheInput) {
    struct Case {
        const char* args;
        const char* names;   // what the one line must name
    };
    const Case cases[] = {
        {"--policy dep,nope", "nope"},
        {"--policy dep,nope", "--policy"},
        {"--app jacobi,nope", "nope"},
        {"--app jacobi,nope", "--app"},
        {"--sockets 5", "sockets"},
        {"--sockets 5", "got 5"},
        {"--machine 'nodes=2 cpus-per-node=1 mem-per-node=256M distances=10,21/21,10' --sockets 2", "--sockets"},
        {"--size 64,8", "--size"},
        {"--size 64,8,x", "--size"},
        {"--threads 999", "threads"},
        {"--baseline nope", "--baseline"},
        {"--contention maybe", "contention"},
        {"--window 0", "window"},
        // A sign on an unsigned option (CLI11 alone read -1 into a 64-bit
        // one as 2^64 - 1).
        {"--seed -1", "--seed: must be a whole number 0 or more, without a sign; got '-1'"},
        {"--window -5", "--window: must be a whole number 0 or more"},
        {"--threads -1", "--threads: must be a whole number 0 or more"},
        // Negative asks for the default; NaN is not negative and is refused.
        {"--steal-delay-tasks nan", "steal_delay_tasks"},
        {"--steal-delay-tasks nan", "got nan"},
        {"--steal-delay-tasks 2e6", "steal_delay_tasks"},
    };
    for (const Case& c : cases) {
        const std::string args = c.args;
        const auto r = run_cli("sim tasks " + args + (contains(args, "--size") ? "" : " --size test"));
        EXPECT_NE(r.status, 0) << c.args;
        EXPECT_EQ(line_count(r.out), 1u) << c.args << "\n" << r.out;
        EXPECT_TRUE(contains(r.out, c.names)) << c.args << "\n" << r.out;
    }
}
