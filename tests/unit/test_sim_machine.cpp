// Tests for the timed machine: the derivation rules of timed() on synthetic
// machines, validate() errors, the named models and timed_from_spec().
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/sim.hpp"

using numaware::Error;
using numaware::Machine;
using numaware::sim::TimedMachine;
using numaware::sim::TimingDefaults;
using numaware::test::contains;
using numaware::test::expect_error;

namespace {

const char* three_nodes = "nodes=3 cpus-per-node=2 distances=10,21,31/21,10,21/31,21,10";

bool has_rule(const TimedMachine& t, const std::string& part) {
    return std::any_of(t.rules.begin(), t.rules.end(), [&](const std::string& r) { return contains(r, part); });
}

std::string all_rules(const TimedMachine& t) {
    std::string out;
    for (const auto& r : t.rules) out += r + "\n";
    return out;
}

// The distinct values of latency[r][h] / latency[h][h], rounded to 1e-9.
std::set<long long> latency_ratios(const TimedMachine& t) {
    std::set<long long> out;
    const std::size_t n = t.machine.node_count();
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < n; ++h)
            out.insert(std::llround(t.latency_ns[r][h] / t.latency_ns[h][h] * 1e9));
    return out;
}

long long ratio_key(double ratio) { return std::llround(ratio * 1e9); }

}  // namespace

// ---------------------------------------------------------------------
// timed(): the rules

TEST(SimTimed, SlitOnlyMachineUsesEveryFallbackRule) {
    const Machine m = Machine::from_synthetic(three_nodes);
    const TimedMachine t = numaware::sim::timed(m, TimingDefaults{100.0, 30.0});
    ASSERT_EQ(t.latency_ns.size(), 3u);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][0], 100.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][1], 210.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][2], 310.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[2][1], 210.0);
    EXPECT_EQ(t.memory_gbps, (std::vector<double>{30.0, 30.0, 30.0}));
    EXPECT_EQ(t.link_gbps[1][1], 0.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[0][1], 30.0 * 10 / 21);
    EXPECT_DOUBLE_EQ(t.link_gbps[0][2], 30.0 * 10 / 31);
    // Exactly one line per rule applied: latency, memory and links by
    // fallback, and the core's Little's-law limit.
    EXPECT_EQ(t.rules.size(), 4u) << all_rules(t);
    EXPECT_TRUE(has_rule(t, "one core's bandwidth by Little's law: 10 outstanding 64-byte lines")) << all_rules(t);
    EXPECT_DOUBLE_EQ(t.core_gbps(0, 0), 640.0 / 100);
    EXPECT_DOUBLE_EQ(t.core_gbps(0, 2), 640.0 / 310);
    EXPECT_TRUE(has_rule(t, "latency from SLIT: 100 ns × SLIT[r][h] / SLIT[h][h] (machine has no latency matrix)"))
        << all_rules(t);
    EXPECT_TRUE(has_rule(t, "memory bandwidth: default 30 GB/s per node (machine has no bandwidth matrix)"))
        << all_rules(t);
    EXPECT_TRUE(has_rule(t, "link bandwidth from SLIT")) << all_rules(t);
    EXPECT_NO_THROW(t.validate());
}

TEST(SimTimed, DefaultsAreEightyNanosecondsAndTwentyGigabytes) {
    const TimedMachine t = numaware::sim::timed(Machine::from_synthetic("nodes=2"));
    EXPECT_DOUBLE_EQ(t.latency_ns[1][1], 80.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[1][0], 160.0);   // default SLIT 20
    EXPECT_DOUBLE_EQ(t.memory_gbps[0], 20.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[1][0], 10.0);
}

TEST(SimTimed, LatencyMatrixIsTakenAndZeroEntriesFallBackToSlit) {
    const Machine m = Machine::from_synthetic(std::string(three_nodes) +
                                              " latency=90,0,300/200,95,0/300,210,0");
    const TimedMachine t = numaware::sim::timed(m, TimingDefaults{100.0, 30.0});
    EXPECT_DOUBLE_EQ(t.latency_ns[0][0], 90.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][2], 300.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[1][0], 200.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[1][1], 95.0);
    // The three zero entries follow the SLIT rule with the default local latency.
    EXPECT_DOUBLE_EQ(t.latency_ns[0][1], 210.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[1][2], 210.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[2][2], 100.0);
    EXPECT_TRUE(has_rule(t, "latency from the machine's latency matrix (6 of 9 entries)")) << all_rules(t);
    EXPECT_TRUE(has_rule(t, "for 3 of 9 entries (latency matrix entry 0 = not known)")) << all_rules(t);
}

TEST(SimTimed, FullLatencyMatrixRecordsNoSlitRule) {
    const Machine m = Machine::from_synthetic("nodes=2 latency=70,130/130,70");
    const TimedMachine t = numaware::sim::timed(m);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][1], 130.0);
    EXPECT_TRUE(has_rule(t, "(4 of 4 entries)")) << all_rules(t);
    EXPECT_FALSE(has_rule(t, "latency from SLIT")) << all_rules(t);
}

TEST(SimTimed, BandwidthMatrixWithZeroEntriesFallsBack) {
    // Node 2's memory is unknown (diagonal 0); two links are unknown.
    const Machine m = Machine::from_synthetic(std::string(three_nodes) +
                                              " bandwidth=50,12,0/12,40,8/6,0,0");
    const TimedMachine t = numaware::sim::timed(m, TimingDefaults{100.0, 30.0});
    EXPECT_EQ(t.memory_gbps, (std::vector<double>{50.0, 40.0, 30.0}));
    EXPECT_DOUBLE_EQ(t.link_gbps[0][1], 12.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[1][2], 8.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[2][0], 6.0);
    // Fallbacks use the home's memory bandwidth: memory[h] × SLIT[h][h] / SLIT[r][h].
    EXPECT_DOUBLE_EQ(t.link_gbps[0][2], 30.0 * 10 / 31);   // home 2 has the default memory
    EXPECT_DOUBLE_EQ(t.link_gbps[2][1], 40.0 * 10 / 21);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(t.link_gbps[i][i], 0.0);
    EXPECT_TRUE(has_rule(t, "memory bandwidth from the bandwidth matrix diagonal (2 of 3 nodes)")) << all_rules(t);
    EXPECT_TRUE(has_rule(t, "default 30 GB/s per node for node(s) 2 (bandwidth matrix diagonal 0 = not known)"))
        << all_rules(t);
    EXPECT_TRUE(has_rule(t, "link bandwidth from the bandwidth matrix (4 of 6 node pairs)")) << all_rules(t);
    EXPECT_TRUE(has_rule(t, "for 2 of 6 node pairs (bandwidth matrix entry 0 = not known)")) << all_rules(t);
    EXPECT_EQ(t.rules.size(), 6u) << all_rules(t);
}

TEST(SimTimed, MemoryOnlyNodeRowsAreFilled) {
    const Machine m = Machine::from_synthetic("nodes=3 cpus=2,2,0 distances=10,20,30/20,10,30/30,30,10");
    const TimedMachine t = numaware::sim::timed(m);
    EXPECT_DOUBLE_EQ(t.latency_ns[2][0], 80.0 * 30 / 10);
    EXPECT_DOUBLE_EQ(t.link_gbps[2][1], 20.0 * 10 / 30);
    EXPECT_TRUE(has_rule(t, "memory-only node(s) 2")) << all_rules(t);
    EXPECT_NO_THROW(t.validate());
}

TEST(SimTimed, RejectsBadDefaults) {
    const Machine m = Machine::from_synthetic("nodes=2");
    EXPECT_EQ(expect_error([&] { numaware::sim::timed(m, TimingDefaults{0.0, 20.0}); }).field(), "local_latency_ns");
    EXPECT_EQ(expect_error([&] { numaware::sim::timed(m, TimingDefaults{80.0, -1.0}); }).field(), "memory_gbps");
    EXPECT_EQ(expect_error([&] { numaware::sim::timed(m, TimingDefaults{80.0, NAN}); }).field(), "memory_gbps");
}

// ---------------------------------------------------------------------
// validate()

TEST(SimValidate, NamesTheBadField) {
    const TimedMachine good = numaware::sim::timed(Machine::from_synthetic(three_nodes));
    EXPECT_NO_THROW(good.validate());

    TimedMachine t = good;
    t.latency_ns.pop_back();
    Error e = expect_error([&] { t.validate(); });
    EXPECT_EQ(e.field(), "latency_ns");
    EXPECT_TRUE(contains(e.what(), "3 nodes")) << e.what();

    t = good;
    t.latency_ns[1].push_back(5.0);
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "latency_ns[1]");

    t = good;
    t.latency_ns[2][0] = 0.0;
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "latency_ns[2][0]");

    t = good;
    t.latency_ns[0][0] = INFINITY;
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "latency_ns[0][0]");

    t = good;
    t.memory_gbps.resize(2);
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "memory_gbps");

    t = good;
    t.memory_gbps[1] = -3.0;
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "memory_gbps[1]");

    t = good;
    t.link_gbps[0][2] = 0.0;
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "link_gbps[0][2]");

    t = good;
    t.link_gbps[1][1] = 4.0;
    e = expect_error([&] { t.validate(); });
    EXPECT_EQ(e.field(), "link_gbps[1][1]");
    EXPECT_TRUE(contains(e.what(), "diagonal must be 0")) << e.what();

    t = good;
    t.link_gbps.push_back({1, 1, 1});
    EXPECT_EQ(expect_error([&] { t.validate(); }).field(), "link_gbps");
}

// ---------------------------------------------------------------------
// named models

TEST(SimModels, EveryNamedModelBuildsAndValidates) {
    const auto names = numaware::sim::model_names();
    EXPECT_EQ(names, (std::vector<std::string>{"bullion-s16", "altix-uv100", "sim-4socket", "skylake-sp-2s",
                                               "epyc-nps4-2s", "sandybridge-ep-4s"}));
    for (const auto& name : names) {
        SCOPED_TRACE(name);
        const TimedMachine t = numaware::sim::model(name);
        EXPECT_NO_THROW(t.validate());
        EXPECT_TRUE(contains(t.name, name)) << t.name;
        EXPECT_FALSE(t.source.empty());
        EXPECT_FALSE(t.rules.empty());
        const std::size_t n = t.machine.node_count();
        for (std::size_t r = 0; r < n; ++r)
            for (std::size_t h = 0; h < n; ++h) {
                // Remote is never faster than local, and the SLIT matches the latencies.
                EXPECT_GE(t.latency_ns[r][h], t.latency_ns[h][h]);
                const double slit = 10.0 * t.latency_ns[r][h] / t.latency_ns[h][h];
                EXPECT_EQ(t.machine.distances[r][h], static_cast<unsigned>(std::lround(slit)))
                    << "r=" << r << " h=" << h;
            }
    }
}

TEST(SimModels, BullionHasExactlyThePublishedRatios) {
    const struct {
        unsigned sockets;
        std::set<long long> ratios;
    } cases[] = {
        {4, {ratio_key(1.0), ratio_key(1.79)}},
        {8, {ratio_key(1.0), ratio_key(1.79), ratio_key(3.60)}},
        {16, {ratio_key(1.0), ratio_key(1.79), ratio_key(3.60)}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.sockets);
        const TimedMachine t = numaware::sim::model("bullion-s16", c.sockets);
        ASSERT_EQ(t.machine.node_count(), c.sockets);
        EXPECT_EQ(t.machine.cpu_count(), 18u * c.sockets);
        for (const auto& node : t.machine.nodes) EXPECT_EQ(node.cpus.size(), 18u);
        EXPECT_EQ(latency_ratios(t), c.ratios);
        EXPECT_EQ(t.name, "bullion-s16 (" + std::to_string(c.sockets) + " sockets)");
    }
    // Same module: one QPI hop; other module: through the BCS2.
    const TimedMachine t = numaware::sim::model("bullion-s16");
    ASSERT_EQ(t.machine.node_count(), 16u);
    const double local = t.latency_ns[0][0];
    EXPECT_NEAR(t.latency_ns[0][3] / local, 1.79, 1e-12);
    EXPECT_NEAR(t.latency_ns[0][4] / local, 3.60, 1e-12);
    EXPECT_NEAR(t.latency_ns[15][12] / local, 1.79, 1e-12);
    EXPECT_NEAR(t.latency_ns[5][11] / local, 3.60, 1e-12);
    EXPECT_NEAR(t.latency_ns[0][4], 250.0, 1e-9);   // the BCS2 figure the local latency is derived from
    EXPECT_EQ(t.machine.distances[0][3], 18u);
    EXPECT_EQ(t.machine.distances[0][4], 36u);
    // The latencies come from the model's matrix, not from the SLIT rule.
    EXPECT_FALSE(has_rule(t, "latency from SLIT")) << all_rules(t);
}

TEST(SimModels, SocketCountsOutsideTheModelAreRefused) {
    Error e = expect_error([] { numaware::sim::model("bullion-s16", 5); });
    EXPECT_EQ(e.field(), "sockets");
    EXPECT_EQ(std::string(e.what()), "sockets: bullion-s16 has 4, 8 or 16 sockets, got 5");
    EXPECT_EQ(expect_error([] { numaware::sim::model("bullion-s16", 32); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::model("altix-uv100", 3); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::model("altix-uv100", 14); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::model("sim-4socket", 3); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::model("skylake-sp-2s", 4); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::model("epyc-nps4-2s", 3); }).field(), "sockets");
}

TEST(SimModels, UnknownNameListsTheModels) {
    const Error e = expect_error([] { numaware::sim::model("cray-x1"); });
    EXPECT_EQ(e.field(), "machine");
    for (const auto& name : numaware::sim::model_names()) EXPECT_TRUE(contains(e.what(), name)) << e.what();
    EXPECT_TRUE(contains(e.what(), "cray-x1")) << e.what();
}

TEST(SimModels, Sim4SocketIs80NearAndFar) {
    const TimedMachine t = numaware::sim::model("sim-4socket");
    ASSERT_EQ(t.machine.node_count(), 4u);
    for (std::size_t r = 0; r < 4; ++r)
        for (std::size_t h = 0; h < 4; ++h) {
            const double want = r == h ? 80.0 : (r / 2 == h / 2 ? 160.0 : 240.0);
            EXPECT_DOUBLE_EQ(t.latency_ns[r][h], want) << r << "," << h;
        }
    // No bandwidth figures in the model: memory and links by the rules.
    EXPECT_DOUBLE_EQ(t.memory_gbps[3], 20.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[0][1], 10.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[0][2], 20.0 / 3);
    EXPECT_TRUE(has_rule(t, "link bandwidth from SLIT")) << all_rules(t);
    EXPECT_EQ(numaware::sim::model("sim-4socket", 2).machine.node_count(), 2u);
}

TEST(SimModels, AltixBladesAndRackUnits) {
    const TimedMachine t = numaware::sim::model("altix-uv100");
    ASSERT_EQ(t.machine.node_count(), 12u);
    EXPECT_EQ(t.machine.cpu_count(), 96u);
    const double local = t.latency_ns[0][0];
    EXPECT_NEAR(t.latency_ns[0][1] / local, 1.17, 1e-12);   // same blade
    EXPECT_NEAR(t.latency_ns[0][2] / local, 3.00, 1e-12);   // other blade, same IRU
    EXPECT_NEAR(t.latency_ns[0][5] / local, 3.00, 1e-12);   // adjacent IRU
    EXPECT_NEAR(t.latency_ns[0][9] / local, 3.40, 1e-12);   // farthest: IRU 0 to IRU 2
    EXPECT_NEAR(t.latency_ns[11][3] / local, 3.40, 1e-12);
    EXPECT_GT(t.link_gbps[0][1], t.link_gbps[0][2]);      // QPI within a blade beats NUMAlink
    EXPECT_EQ(numaware::sim::model("altix-uv100", 6).machine.node_count(), 6u);
}

TEST(SimModels, SkylakeRemoteIsLocalPlusSixty) {
    const TimedMachine t = numaware::sim::model("skylake-sp-2s");
    ASSERT_EQ(t.machine.node_count(), 2u);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][1] - t.latency_ns[0][0], 60.0);
    EXPECT_DOUBLE_EQ(t.latency_ns[1][0] - t.latency_ns[1][1], 60.0);
}

TEST(SimModels, EpycNps4HasEightNodesAndSlitLatencies) {
    const TimedMachine t = numaware::sim::model("epyc-nps4-2s");
    ASSERT_EQ(t.machine.node_count(), 8u);
    EXPECT_EQ(t.machine.distances[0][3], 12u);
    EXPECT_EQ(t.machine.distances[0][4], 32u);
    EXPECT_NEAR(t.latency_ns[0][3], t.latency_ns[0][0] * 1.2, 1e-9);
    EXPECT_NEAR(t.latency_ns[0][4], t.latency_ns[0][0] * 3.2, 1e-9);
    EXPECT_TRUE(has_rule(t, "latency from SLIT")) << all_rules(t);
    EXPECT_NEAR(t.link_gbps[0][4], t.memory_gbps[4] * 10 / 32, 1e-9);
    EXPECT_EQ(numaware::sim::model("epyc-nps4-2s", 1).machine.node_count(), 4u);
}

// ---------------------------------------------------------------------
// timed_from_spec()

TEST(SimFromSpec, NamedModelWithSockets) {
    const TimedMachine t = numaware::sim::timed_from_spec("bullion-s16:8");
    EXPECT_EQ(t.machine.node_count(), 8u);
    EXPECT_EQ(t.name, "bullion-s16 (8 sockets)");
    EXPECT_EQ(numaware::sim::timed_from_spec("bullion-s16").machine.node_count(), 16u);
    EXPECT_EQ(expect_error([] { numaware::sim::timed_from_spec("bullion-s16:5"); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::timed_from_spec("bullion-s16:x"); }).field(), "sockets");
    EXPECT_EQ(expect_error([] { numaware::sim::timed_from_spec("bullion-s16:"); }).field(), "sockets");
}

// A word that is no model (a misspelt name) is told so, with the models,
// where the synthetic parser would have asked for key=value words.
TEST(SimFromSpec, AWordThatIsNoModelListsTheModels) {
    for (const char* spec : {"bulion-s16", "bulion-s16:8", "skylake"}) {
        const numaware::Error e = expect_error([&] { numaware::sim::timed_from_spec(spec); });
        EXPECT_EQ(e.field(), "machine") << spec;
        const std::string what = e.what();
        EXPECT_NE(what.find(std::string("'") + spec + "' is not a named model"), std::string::npos) << what;
        for (const std::string& name : numaware::sim::model_names()) EXPECT_NE(what.find(name), std::string::npos) << what;
    }
    // The other forms still reach their own parsers and errors.
    EXPECT_EQ(expect_error([] { numaware::sim::timed_from_spec("nodes=0"); }).field(), "nodes");
    EXPECT_EQ(expect_error([] { numaware::sim::timed_from_spec("hwloc:"); }).field(), "synthetic");
}

TEST(SimFromSpec, SyntheticSpecIsTimedByTheRules) {
    const std::string spec = "nodes=2 cpus-per-node=4 distances=10,30/30,10";
    const TimedMachine t = numaware::sim::timed_from_spec(spec, TimingDefaults{50.0, 10.0});
    EXPECT_EQ(t.machine.node_count(), 2u);
    EXPECT_EQ(t.machine.cpu_count(), 8u);
    EXPECT_EQ(t.name, spec);
    EXPECT_DOUBLE_EQ(t.latency_ns[0][1], 150.0);
    EXPECT_DOUBLE_EQ(t.link_gbps[1][0], 10.0 / 3);
    EXPECT_TRUE(has_rule(t, "latency from SLIT: 50 ns")) << all_rules(t);
    // hwloc synthetic text contains ':' but is no model name.
    EXPECT_EQ(numaware::sim::timed_from_spec("hwloc:NUMANode:2 Core:2 PU:1").machine.node_count(), 2u);
}
