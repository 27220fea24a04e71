// `numaware topo` end to end: runs the built CLI (NUMAWARE_CLI) via popen.
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "numaware/machine.hpp"
#include "support.hpp"

namespace {

using numaware::test::run_cli;
using Result = numaware::test::CliResult;

const char* spec = "nodes=3 cpus=2,2,0 mem=512M,512M,1G kinds=DRAM,DRAM,CXL tiers=0,0,1 "
                   "distances=10,21,31/21,10,21/31,21,10 latency=80,130,250/130,80,240/0,0,0";

}  // namespace

TEST(TopoCommand, JsonIsTheMachineModel) {
    const Result r = run_cli(std::string("topo --json --machine '") + spec + "'", false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["nodes"].size(), 3u);
    EXPECT_EQ(j["nodes"][2]["kind"], "CXL");
    EXPECT_TRUE(j["nodes"][2]["cpus"].empty());
    EXPECT_EQ(j["distances"][0][2], 31);
    EXPECT_EQ(j["latency_ns"][1][2], 240.0);
    EXPECT_FALSE(j.contains("bandwidth_gbps"));
    EXPECT_EQ(numaware::Machine::from_json(r.out), numaware::Machine::from_synthetic(spec));
}

TEST(TopoCommand, TextShowsNodesTiersAndMatrices) {
    const Result r = run_cli(std::string("topo --machine '") + spec + "'", false);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("3 nodes, 4 CPUs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(memory-only)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CXL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("distances (SLIT"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("latency (ns"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("bandwidth"), std::string::npos) << r.out;
}

TEST(TopoCommand, MalformedSpecIsOneLineAndFails) {
    const Result r = run_cli("topo --machine 'nodes=2 colour=blue'", true);
    EXPECT_NE(r.status, 0);
    ASSERT_FALSE(r.out.empty());
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "expected exactly one line:\n" << r.out;
    EXPECT_NE(r.out.find("colour"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("unknown key"), std::string::npos) << r.out;

    const Result diag = run_cli("topo --machine 'nodes=2 distances=10,21/5,10'", true);
    EXPECT_NE(diag.status, 0);
    EXPECT_EQ(diag.out.find('\n'), diag.out.size() - 1) << "expected exactly one line:\n" << diag.out;
    EXPECT_NE(diag.out.find("diagonal entry 10 is not the minimum of row 1: distances[1][0]=5"), std::string::npos)
        << diag.out;
}

// An asymmetric SLIT is shown as given, row by row (from -> to).
TEST(TopoCommand, AsymmetricDistancesShowTheirDirections) {
    const Result r = run_cli("topo --machine 'nodes=2 distances=10,21/31,10'", false);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("     0       10       21\n     1       31       10\n"), std::string::npos) << r.out;
}

// Every command's help ends with an example of that command (a command
// without a footer of its own would show the program's, a `topo` line).
TEST(CliHelp, EveryCommandShowsAnExampleOfItself) {
    for (const std::string cmd : {"topo", "probe", "run", "where", "vm", "place", "latency", "latency measure",
                                  "latency report", "sim", "sim machine", "sim tasks", "sim memory", "trace",
                                  "trace record", "advise"}) {
        const Result r = run_cli(cmd + " --help", false);
        EXPECT_EQ(r.status, 0) << cmd;
        const std::size_t at = r.out.find("Example");
        ASSERT_NE(at, std::string::npos) << cmd << ":\n" << r.out;
        EXPECT_NE(r.out.find("numaware " + cmd + " ", at), std::string::npos) << cmd << ":\n" << r.out.substr(at);
    }
}

TEST(TopoCommand, HelpHasAnExample) {
    const Result r = run_cli("topo --help", false);
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("Example: numaware topo --machine"), std::string::npos) << r.out;
}

// A machine seen from inside a cpuset (issue 17): the allowed part, marked,
// and what was left out, one sentence per fact.
TEST(TopoCommand, ARestrictedMachineShowsItsAllowedPartAndWhatWasLeftOut) {
    const Result r = run_cli("topo --machine 'nodes=8 cpus-per-node=2 mem-per-node=8G "
                             "allowed-cpus=0-3,5-6,12-15 allowed-mems=1-5'",
                             false);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("8 nodes, 10 CPUs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(memory not allowed)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("left out (the allowed-cpus=/allowed-mems= sets):"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  CPUs 4,7-11 are left out: not in the allowed-cpus=/allowed-mems= sets"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  nodes 4-5: no CPU in"), std::string::npos) << r.out;

    const Result bad = run_cli("topo --machine 'nodes=2 allowed-cpus=5'", true);
    EXPECT_NE(bad.status, 0);
    EXPECT_TRUE(numaware::test::one_line(bad.out)) << bad.out;
    EXPECT_NE(bad.out.find("allowed-cpus"), std::string::npos) << bad.out;
}

// `numaware place`: a policy that is malformed, or names what this machine
// does not have, is bad input: one line, before anything is mapped.
TEST(PlaceCommand, ABadPolicyIsOneLineNamingIt) {
    const struct {
        const char* policy;
        const char* expect;
    } cases[] = {
        {"bind:9999", "--policy: policy 'bind:9999': bad node list '9999': node 9999 is out of range (limit 1023)"},
        {"cyclic:0/0", "--policy: policy 'cyclic:0/0': the cyclic unit is 0 pages; it must be at least 1"},
        {"bind:77", "--policy: policy 'bind:77': node 77 is not in this machine"},
        {"spread:0", "--policy: policy 'spread:0'"},
    };
    for (const auto& c : cases) {
        const Result r = run_cli(std::string("place --size 4M --policy first-touch --policy '") + c.policy + "'", true);
        EXPECT_NE(r.status, 0) << c.policy;
        ASSERT_FALSE(r.out.empty()) << c.policy;
        EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "expected exactly one line:\n" << r.out;
        EXPECT_NE(r.out.find(c.expect), std::string::npos) << r.out;
    }
}
