// The published directions (issue 13, "Acceptance"), on the bullion S16
// model cut to 4, 8 and 16 sockets, every core a worker, the eight
// applications at their simulation sizes, seed 1:
//   1. DFIFO's makespan >= 1.5x DEP's (geometric mean over the apps);
//   2. RIP-DEP faster than DEP (geometric mean);
//   3. RIP-DEP >= 1.15x DEP on Jacobi and on NStream (16 sockets);
//   4. RIP-DEP's cross-node bytes <= 1/2 of DEP's (geometric mean);
//   5. SA at least as fast as DEP on every app but inversion;
//   6. RIP-MW slower than RIP-DEP (16 sockets);
//   7. RIP-DEP's partitioning overhead (simulated partitioning time /
//      makespan) <= 1% on every app.
// The model is not tuned to these: its machine figures are documented
// (docs/SIMULATOR.md), the partitioning cost is a model measured on the
// host, and the graphs are the applications' own.
//
// Every direction is checked, with the same threshold at every socket
// count. Where the model does not show one, the case is listed in
// kNotReproduced with its cause (BENCHMARKS.md has the figures), and the
// test asserts that it still does not hold: a listed case that starts to
// hold fails the test until it is taken off the list, and a case that
// stops holding fails it as well.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "apps/catalog.hpp"
#include "numaware/sim.hpp"
#include "numaware/team.hpp"

namespace sim = numaware::sim;

namespace {

const unsigned kSockets[] = {4, 8, 16};
const char* const kPolicies[] = {"dfifo", "dep", "sa", "rip-dep", "rip-mw"};

// (direction, socket count, app or "" for a geometric mean): not shown by
// the model, with the cause (the figure measured on 2026-11-25 in the
// comment). BENCHMARKS.md, "Published directions after the first part of issue 13", has the
// experiments behind each cause.
struct Gap {
    std::string direction;
    unsigned sockets;
    std::string app;
    const char* cause;
};
// Within one module (4 sockets) DFIFO's remote accesses ride the QPI links,
// which are not the bottleneck of a memory-bound run, and spread the load
// over more memory controllers.
constexpr const char* kWithinOneModule = "within one module";
// RIP-DEP faster than DEP on the geometric mean of the eight applications.
// With the default steal delay (32 mean task durations) RIP-DEP is 0.90x,
// 1.05x and 0.96x of DEP at 4, 8 and 16 sockets (0.86x, 0.99x and 0.88x
// before the partitioner's refinement pass ran in integers and its cost
// model was measured again, 2026-11-25 evening): the stencils and CG gain,
// but Gauss-Seidel's capped window is partitioned on the critical path
// (0.46x, 0.76x, 0.40x) and inversion's triangular graph leaves nodes idle
// (0.82x, 0.74x, 0.78x). Gauss-Seidel's loss is not only its partition:
// at 40 sweeps instead of 10 (`numaware sim tasks --app gauss-seidel --size
// 16384,128,40 --sockets 4|16 --policy dep,rip-dep --halos whole-blocks`)
// RIP-DEP is still 0.57x and 0.76x of DEP, and at 4 sockets it steals
// 135,127 of its 671,744 tasks across nodes: a partition balanced on task
// counts gives each node its share of the tiles, but the wavefront reaches
// them at different times, so the nodes wait in turn and then steal.
// With a delay of 1 task duration (before the new cost model) stealing
// undid the stencils' partitions as well (0.84x, 0.91x, 0.69x).
// With partitioning made free (`numaware_bench_sim directions --app all
// --partition-s-per-task 1e-15`, 2026-11-25) RIP-DEP is 0.91x, 1.10x and
// 1.07x of DEP (5, 6 and 4 of 8 applications faster; Gauss-Seidel at 16
// sockets 0.82x instead of 0.29x): at 16 sockets the partition cost alone
// takes RIP-DEP below DEP, at 4 sockets it does not.
constexpr const char* kStealingOrBalance = "partition cost (Gauss-Seidel) and balance (inversion)";
// The simulation sizes run few iterations (Jacobi: 20 sweeps, its window
// of the initialisation and the first 3 sweeps is 19% of the graph), so
// the initial partition is a large share of a short run. Jacobi at 16
// sockets with 200 sweeps: 0.60% (before the new cost model). NStream at 16
// sockets: its 3,584-task window's partition is 6.3% of the makespan, and
// RIP-DEP is 1.02x of DEP.
constexpr const char* kFewIterations = "few iterations at the simulation size";
// The initialisation alone fills the capped window (32,768 tasks): the
// partition of Gauss-Seidel's 16,384 tiles and first sweep costs 0.05-0.11 s
// modelled (4 to 16 sockets) against makespans of 0.46-0.88 s; the integral
// histogram's 32,768 independent init tasks 4-9 ms against 73-92 ms.
constexpr const char* kWindowCapped = "window capped at 32,768 tasks";
// SA never steals across nodes (simple.cpp): the hints own the load
// balance, and the wavefront Gauss-Seidel within one module and the
// integral histogram's scans leave nodes idle under their bands of tile
// rows. QR was listed here too (SA 0.57x, 0.62x and 0.69x of DEP at 4, 8
// and 16 sockets) while its hints dealt out bands of tile rows, which the
// shrinking trailing matrix leaves idle; since its hints (and inversion's)
// are block-cyclic, as for a hand-distributed dense factorisation
// (apps/common/owners.hpp), SA is 1.05x, 1.15x and 1.23x of DEP on QR.
// A block-cyclic rule was measured for Gauss-Seidel and the integral
// histogram as well (2026-12-07, BENCHMARKS.md) and not adopted: it puts
// every halo of those stencil and scan sweeps across nodes.
constexpr const char* kSaNeverSteals = "SA never steals";
const std::vector<Gap> kNotReproduced = {
    {"dfifo-1.5x-slower", 4, "", kWithinOneModule},   // DFIFO / DEP makespan 1.130092
    {"rip-dep-faster", 4, "", kStealingOrBalance},   // RIP-DEP speedup over DEP 0.888201
    {"sa-not-slower", 4, "gauss-seidel", kSaNeverSteals},   // SA speedup over DEP 0.819578
    {"rip-dep-partitioning-1pct", 4, "gauss-seidel", kWindowCapped},   // RIP-DEP partitioning 3.783050 % of the makespan
    {"sa-not-slower", 4, "integral-histogram", kSaNeverSteals},   // SA speedup over DEP 0.553344
    {"rip-dep-partitioning-1pct", 4, "integral-histogram", kWindowCapped},   // RIP-DEP partitioning 4.605414 % of the makespan
    {"rip-dep-partitioning-1pct", 8, "gauss-seidel", kWindowCapped},   // RIP-DEP partitioning 9.203752 % of the makespan
    {"sa-not-slower", 8, "integral-histogram", kSaNeverSteals},   // SA speedup over DEP 0.605841
    {"rip-dep-partitioning-1pct", 8, "integral-histogram", kWindowCapped},   // RIP-DEP partitioning 8.348421 % of the makespan
    {"rip-dep-partitioning-1pct", 8, "jacobi", kFewIterations},   // RIP-DEP partitioning 1.051590 % of the makespan
    {"rip-dep-partitioning-1pct", 8, "nstream", kFewIterations},   // RIP-DEP partitioning 2.503682 % of the makespan
    {"rip-dep-faster", 16, "", kStealingOrBalance},   // RIP-DEP speedup over DEP 0.939904
    {"rip-dep-partitioning-1pct", 16, "cg", kFewIterations},   // RIP-DEP partitioning 1.099031 % of the makespan
    {"rip-dep-partitioning-1pct", 16, "gauss-seidel", kWindowCapped},   // RIP-DEP partitioning 14.074440 % of the makespan
    {"sa-not-slower", 16, "integral-histogram", kSaNeverSteals},   // SA speedup over DEP 0.820108
    {"rip-dep-partitioning-1pct", 16, "integral-histogram", kWindowCapped},   // RIP-DEP partitioning 11.774171 % of the makespan
    {"rip-dep-partitioning-1pct", 16, "jacobi", kFewIterations},   // RIP-DEP partitioning 2.671643 % of the makespan
    {"rip-dep-partitioning-1pct", 16, "nstream", kFewIterations},   // RIP-DEP partitioning 6.340471 % of the makespan
    {"rip-dep-partitioning-1pct", 16, "red-black", kFewIterations},   // RIP-DEP partitioning 1.920513 % of the makespan
    {"rip-dep-1.15x", 16, "nstream", kFewIterations},   // RIP-DEP speedup over DEP 1.017018
};

struct Runs {
    std::string machine;
    std::map<std::string, std::map<std::string, sim::SimReport>> by;   // app -> policy -> report
};

const std::map<unsigned, Runs>& results() {
    static const std::map<unsigned, Runs> all = [] {
        std::map<unsigned, Runs> out;
        for (unsigned sockets : kSockets) {
            const sim::TimedMachine t = sim::model("bullion-s16", sockets);
            const sim::SimOptions options;   // the partitioning cost model, seed 1
            const std::vector<unsigned> nodes = sim::worker_node_set(t.machine, options.mapping);
            Runs& runs = out[sockets];
            runs.machine = t.name;
            for (const auto& app : numaware::apps::all_apps()) {
                const std::string name(app.name);
                // The published graphs: halos as whole neighbour blocks.
                numaware::apps::AppSize shape = app.sim_size;
                shape.halos = numaware::apps::Halos::whole_blocks;
                const sim::Graph graph = numaware::apps::build_graph(name, shape, t.machine, nodes);
                for (const char* policy : kPolicies)
                    if (sockets == 16 || std::string(policy) != "rip-mw")   // RIP-MW is checked at 16 only
                        runs.by[name].emplace(policy, sim::simulate(t, graph, policy, options));
            }
        }
        return out;
    }();
    return all;
}

double makespan(const sim::SimReport& r) { return r.run.makespan_s; }
double cross(const sim::SimReport& r) { return static_cast<double>(r.run.cross_node_bytes); }

template <class F>
double geomean(const Runs& runs, F f) {
    double log_sum = 0;
    for (const auto& [app, by] : runs.by) log_sum += std::log(f(by));
    return std::exp(log_sum / static_cast<double>(runs.by.size()));
}

std::string table(const Runs& runs) {
    std::string s;
    for (const auto& [app, by] : runs.by)
        for (const auto& [policy, r] : by)
            s += app + " " + policy + ": makespan " + std::to_string(makespan(r) * 1e3) + " ms, cross " +
                 std::to_string(cross(r) / 1e6) + " MB, load balance " + std::to_string(r.run.load_balance_pct) +
                 " %, partitioning " + std::to_string(r.partition_busy_pct) + " % of the makespan (" +
                 std::to_string(r.partition_s * 1e3) + " ms simulated, " + std::to_string(r.partition_host_s * 1e3) +
                 " ms host)\n";
    return s;
}

struct Check {
    std::string direction;
    unsigned sockets;
    std::string app;   // "" for a geometric mean
    bool holds;
    std::string figure;
};

std::vector<Check> checks() {
    std::vector<Check> out;
    for (const auto& [sockets, runs] : results()) {
        const double slow = geomean(runs, [](const auto& by) { return makespan(by.at("dfifo")) / makespan(by.at("dep")); });
        out.push_back({"dfifo-1.5x-slower", sockets, "", slow >= 1.5, "DFIFO / DEP makespan " + std::to_string(slow)});
        const double speed = geomean(runs, [](const auto& by) { return makespan(by.at("dep")) / makespan(by.at("rip-dep")); });
        out.push_back({"rip-dep-faster", sockets, "", speed > 1.0, "RIP-DEP speedup over DEP " + std::to_string(speed)});
        const double fewer = geomean(runs, [](const auto& by) {
            return std::max(cross(by.at("dep")), 1.0) / std::max(cross(by.at("rip-dep")), 1.0);
        });
        out.push_back({"rip-dep-half-cross-bytes", sockets, "", fewer >= 2.0,
                       "DEP / RIP-DEP cross-node bytes " + std::to_string(fewer)});
        for (const auto& [app, by] : runs.by) {
            const double sa = makespan(by.at("dep")) / makespan(by.at("sa"));
            if (app != "inversion")
                out.push_back({"sa-not-slower", sockets, app, sa >= 1.0, "SA speedup over DEP " + std::to_string(sa)});
            const double pct = by.at("rip-dep").partition_busy_pct;
            out.push_back({"rip-dep-partitioning-1pct", sockets, app, pct <= 1.0,
                           "RIP-DEP partitioning " + std::to_string(pct) + " % of the makespan"});
        }
        if (sockets == 16) {
            for (const char* app : {"jacobi", "nstream"}) {
                const auto& by = runs.by.at(app);
                const double s = makespan(by.at("dep")) / makespan(by.at("rip-dep"));
                out.push_back({"rip-dep-1.15x", sockets, app, s >= 1.15, "RIP-DEP speedup over DEP " + std::to_string(s)});
            }
            const double mw = geomean(runs, [](const auto& by) { return makespan(by.at("rip-mw")) / makespan(by.at("rip-dep")); });
            out.push_back({"rip-mw-slower", sockets, "", mw > 1.0, "RIP-MW / RIP-DEP makespan " + std::to_string(mw)});
        }
    }
    return out;
}

}  // namespace

// One test, so the graphs are simulated once per run of the suite.
TEST(SimDirections, PublishedDirectionsOnTheBullionModel) {
    for (const auto& [sockets, runs] : results()) {
        std::printf("simulated on %s:\n%s", runs.machine.c_str(), table(runs).c_str());
        for (const auto& [app, by] : runs.by)
            for (const auto& [policy, r] : by) {
                EXPECT_EQ(r.label, "simulated on " + runs.machine) << app << " " << policy;
                EXPECT_EQ(r.workers, sockets * 18u);
                EXPECT_EQ(r.run.tasks, by.at("dep").run.tasks) << app << " " << policy;
            }
    }
    std::map<std::pair<std::string, std::string>, std::string> listed;   // -> cause
    for (const Gap& g : kNotReproduced) listed.emplace(std::pair{g.direction + "@" + std::to_string(g.sockets), g.app}, g.cause);
    EXPECT_EQ(listed.size(), kNotReproduced.size()) << "kNotReproduced lists a case twice";
    std::size_t matched = 0;
    for (const Check& c : checks()) {
        const std::string where = c.direction + " at " + std::to_string(c.sockets) + " sockets" +
                                  (c.app.empty() ? std::string(" (geometric mean)") : " on " + c.app);
        const auto gap = listed.find({c.direction + "@" + std::to_string(c.sockets), c.app});
        std::printf("%s: %s: %s%s\n", where.c_str(), c.holds ? "holds" : "does not hold", c.figure.c_str(),
                    gap == listed.end() ? "" : (" (not reproduced: " + gap->second + ")").c_str());
        if (gap != listed.end()) {
            ++matched;
            EXPECT_FALSE(c.holds) << where << " now holds (" << c.figure << "): take it off kNotReproduced";
        } else {
            EXPECT_TRUE(c.holds) << where << ": " << c.figure;
        }
    }
    EXPECT_EQ(matched, kNotReproduced.size()) << "kNotReproduced lists a case that is not checked";
}

// The partitioning cost is a model of the window's size: the same command
// gives the same simulated result whatever the host's load.
TEST(SimDirections, PartitioningTimeIsAModelNotTheHostClock) {
    const sim::TimedMachine t = sim::model("bullion-s16", 16);
    const std::vector<unsigned> nodes = sim::worker_node_set(t.machine, {});
    const sim::Graph graph =
        numaware::apps::build_graph("jacobi", numaware::apps::find_app("jacobi").test_size, t.machine, nodes);
    const sim::SimReport r = sim::simulate(t, graph, "rip-dep", {});
    ASSERT_FALSE(r.partitions.empty());
    const sim::PartitionCostModel model;
    double sum = 0;
    for (const sim::PartitionRecord& p : r.partitions) {
        EXPECT_DOUBLE_EQ(p.simulated_s, model.seconds(p.size));
        EXPECT_GT(p.simulated_s, 0.0);
        EXPECT_EQ(p.size.parts, 16u);
        EXPECT_GT(p.host_s, 0.0);
        sum += p.simulated_s;
    }
    EXPECT_DOUBLE_EQ(r.partition_s, sum);
    const sim::SimReport again = sim::simulate(t, graph, "rip-dep", {});
    EXPECT_EQ(again.run.makespan_s, r.run.makespan_s);
    EXPECT_EQ(again.run.cross_node_bytes, r.run.cross_node_bytes);
    EXPECT_EQ(again.partition_s, r.partition_s);
}
