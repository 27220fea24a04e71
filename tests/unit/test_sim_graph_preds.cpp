// tests/unit/test_sim_graph_preds.cpp — Graph::preds_of(), the edges a
// graph keeps as it is built, against the runtime's dependency tracker
// (tasks/deps.hpp): the simulator orders tasks by the former, the runtime
// by the latter. For every application's graph and for random graphs, and
// whatever has finished when a task is submitted, the tracker must link
// exactly the graph's predecessors that have not finished, in the graph's
// order with the graph's bytes, and a completion must make ready exactly
// the submitted tasks whose last unfinished graph predecessor it was.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/catalog.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/sim.hpp"
#include "tasks/deps.hpp"

namespace numaware::sim {
namespace {

using tasks::AccessMode;
using tasks::Edge;
using tasks::TaskId;

const Machine& four_nodes() {
    static const Machine m = Machine::from_spec("nodes=4 cpus-per-node=2 mem-per-node=512M");
    return m;
}

// Submits g's tasks in order to a real tracker. Before each submission it
// finishes ready tasks, chosen at random, while a coin with P(heads) =
// finish_p comes up heads; at the end it finishes everything. Returns the
// graph edges that the tracker linked and those it left out, their
// predecessor having finished.
struct EdgeCounts {
    std::size_t linked = 0;
    std::size_t left_out = 0;
};
EdgeCounts expect_tracker_agrees(const Graph& g, std::uint64_t seed, double finish_p) {
    SCOPED_TRACE(::testing::Message() << g.name << ", seed " << seed << ", finish_p " << finish_p);
    const std::size_t n = g.size();
    // The graph's successors, from its predecessors.
    std::vector<std::vector<std::uint32_t>> succs(n);
    for (std::uint32_t i = 0; i < n; ++i)
        for (const Edge& e : g.preds_of(g.tasks()[i])) {
            EXPECT_LT(e.from, i) << "a predecessor comes before its task";
            succs[e.from].push_back(i);
        }

    tasks::detail::DepTracker tracker;
    std::vector<std::unique_ptr<tasks::detail::DepNode>> nodes(n);
    std::vector<bool> finished(n, false);
    std::vector<std::uint32_t> waiting(n, 0);
    std::vector<std::uint32_t> ready;   // submitted, all predecessors finished, not yet finished
    std::mt19937_64 rng(seed);
    std::bernoulli_distribution coin(finish_p);
    std::size_t submitted = 0;
    EdgeCounts counts;

    const auto finish_one = [&] {
        std::uniform_int_distribution<std::size_t> pick(0, ready.size() - 1);
        const std::size_t at = pick(rng);
        const std::uint32_t t = ready[at];
        ready[at] = ready.back();
        ready.pop_back();
        finished[t] = true;
        std::vector<tasks::detail::ReadyNode> made;
        tracker.complete(*nodes[t], made);
        std::vector<TaskId> got, want;
        for (const auto& r : made) got.push_back(r.id);
        for (const std::uint32_t s : succs[t])
            if (s < submitted && --waiting[s] == 0) {
                want.push_back(s);
                ready.push_back(s);
            }
        EXPECT_EQ(got, want) << "completing task " << t;
    };

    std::vector<tasks::Dep> deps;
    for (std::uint32_t i = 0; i < n; ++i) {
        while (!ready.empty() && coin(rng)) finish_one();
        const GraphTask& t = g.tasks()[i];
        deps.clear();
        for (const GraphDep& d : g.deps_of(t)) {
            const GraphRegion& r = g.regions()[d.region];
            deps.push_back(tasks::Dep{reinterpret_cast<const void*>(r.start), r.bytes, d.access});
        }
        auto node = std::make_unique<tasks::detail::DepNode>();
        node->id = i;
        tracker.prepare(deps, node->deps);
        tracker.add(*node);
        std::vector<std::pair<TaskId, std::uint64_t>> got, want;
        for (const Edge& e : tracker.preds()) got.emplace_back(e.from, e.bytes);
        for (const Edge& e : g.preds_of(t))
            if (!finished[e.from]) want.emplace_back(e.from, e.bytes);
        EXPECT_EQ(got, want) << "submitting task " << i;
        counts.linked += want.size();
        counts.left_out += t.pred_count - want.size();
        const bool is_ready = tracker.commit(*node);
        EXPECT_EQ(is_ready, want.empty()) << "task " << i;
        waiting[i] = static_cast<std::uint32_t>(want.size());
        nodes[i] = std::move(node);
        submitted = i + 1;
        if (is_ready) ready.push_back(i);
        if (::testing::Test::HasFailure()) return counts;
    }
    while (!ready.empty()) finish_one();
    for (std::uint32_t i = 0; i < n; ++i) EXPECT_TRUE(finished[i]) << "task " << i << " never became ready";
    return counts;
}

// With nothing finished early every edge is linked; with finishing on,
// some must be left out, or the runs tested only half the rule.
void expect_both_cases(const Graph& g, std::uint64_t seed, std::initializer_list<double> finish_ps) {
    const EdgeCounts none = expect_tracker_agrees(g, seed, 0.0);
    EXPECT_EQ(none.linked, g.preds().size());
    EXPECT_EQ(none.left_out, 0u);
    std::size_t left_out = 0;
    for (const double p : finish_ps) left_out += expect_tracker_agrees(g, seed, p).left_out;
    if (!g.preds().empty()) {
        EXPECT_GT(left_out, 0u);
    }
}

// Graph::successor_counts(), kept as tasks are added, against a count
// over every edge.
void expect_successor_counts(const Graph& g) {
    std::vector<std::uint32_t> counted(g.size(), 0);
    for (const Edge& e : g.preds()) ++counted[e.from];
    const auto kept = g.successor_counts();
    EXPECT_EQ(std::vector<std::uint32_t>(kept.begin(), kept.end()), counted);
}

class GraphPreds : public ::testing::TestWithParam<std::string> {};

TEST_P(GraphPreds, AreTheTrackersForEveryApplication) {
    const std::vector<unsigned> nodes{0, 1, 2, 3};
    for (const apps::Halos halos : {apps::Halos::rows, apps::Halos::whole_blocks}) {
        apps::AppSize size = apps::find_app(GetParam()).test_size;
        size.halos = halos;
        const Graph g = apps::build_graph(GetParam(), size, four_nodes(), nodes);
        ASSERT_GT(g.preds().size(), 0u);
        expect_successor_counts(g);
        expect_both_cases(g, 11, {0.5, 0.9});
    }
}

std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const std::string_view a : apps::app_names()) out.emplace_back(a);
    return out;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& p) {
    std::string s = p.param;
    for (char& c : s)
        if (c == '-') c = '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(Every, GraphPreds, ::testing::ValuesIn(names()), param_name);

// Random graphs: few regions, so that long reader lists, rereads, writes
// after many reads and tasks naming one region twice all occur.
TEST(GraphPredsRandom, AreTheTrackers) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        Graph g;
        g.name = "random";
        const std::uint32_t regions = 3 + static_cast<std::uint32_t>(rng() % 6);
        for (std::uint32_t r = 0; r < regions; ++r) g.add_region(64 + 64 * (rng() % 100));
        std::vector<GraphDep> deps;
        for (int t = 0; t < 400; ++t) {
            deps.clear();
            const int count = static_cast<int>(rng() % 5);   // 0 to 4, duplicates merged by add_task
            for (int k = 0; k < count; ++k) {
                const auto region = static_cast<std::uint32_t>(rng() % regions);
                const auto access = static_cast<AccessMode>(rng() % 3);
                bool clash = false;
                for (const GraphDep& d : deps) clash |= d.region == region && d.access != access;
                if (!clash) deps.push_back(GraphDep{region, access});
            }
            g.add_task(1e-6, deps);
            if (t % 50 == 0) {   // a task refused leaves the counts as they were
                const std::vector<GraphDep> bad{GraphDep{0, AccessMode::in}, GraphDep{regions, AccessMode::in}};
                EXPECT_THROW(g.add_task(1e-6, bad), Error);
                ASSERT_EQ(g.successor_counts().size(), g.size());
            }
        }
        expect_successor_counts(g);
        expect_both_cases(g, seed, {0.3, 0.7, 0.95});
    }
}

// The rule itself on a small graph: a read waits for the last writer, a
// write for every reader since (bytes summed per predecessor), or for the
// writer when no one read.
TEST(GraphPredsRule, ReadAfterWriteWriteAfterReadWriteAfterWrite) {
    Graph g;
    const std::uint32_t a = g.add_region(100), b = g.add_region(200);
    g.add_task(0, {{a, AccessMode::out}});                             // 0
    g.add_task(0, {{a, AccessMode::in}});                              // 1: after 0
    g.add_task(0, {{a, AccessMode::in}, {b, AccessMode::out}});        // 2: after 0
    g.add_task(0, {{a, AccessMode::inout}});                           // 3: after 1 and 2
    g.add_task(0, {{b, AccessMode::inout}});                           // 4: after 2 (write after write)
    g.add_task(0, {{a, AccessMode::in}, {b, AccessMode::in}});         // 5: after 3, then 4
    g.add_task(0, {{a, AccessMode::out}, {b, AccessMode::out}});       // 6: after 5, once, 300 bytes
    const auto preds = [&](std::size_t t) {
        std::vector<std::pair<TaskId, std::uint64_t>> out;
        for (const Edge& e : g.preds_of(g.tasks()[t])) out.emplace_back(e.from, e.bytes);
        return out;
    };
    using P = std::vector<std::pair<TaskId, std::uint64_t>>;
    EXPECT_EQ(preds(0), P{});
    EXPECT_EQ(preds(1), (P{{0, 100}}));
    EXPECT_EQ(preds(2), (P{{0, 100}}));
    EXPECT_EQ(preds(3), (P{{1, 100}, {2, 100}}));
    EXPECT_EQ(preds(4), (P{{2, 200}}));
    EXPECT_EQ(preds(5), (P{{3, 100}, {4, 200}}));
    EXPECT_EQ(preds(6), (P{{5, 300}}));
    EXPECT_EQ(g.preds().size(), 8u);
    const auto succ = g.successor_counts();
    EXPECT_EQ(std::vector<std::uint32_t>(succ.begin(), succ.end()), (std::vector<std::uint32_t>{2, 1, 2, 1, 1, 1, 0}));
}

// A write after many reads waits for every reader, once each, in order;
// a reader named twice by one task (here through two regions) is one edge.
TEST(GraphPredsRule, AWriteAfterManyReadsWaitsForEachReaderOnce) {
    Graph g;
    const std::uint32_t a = g.add_region(64), b = g.add_region(32);
    constexpr std::uint32_t readers = 100000;
    for (std::uint32_t i = 0; i < readers; ++i) g.add_task(0, {{a, AccessMode::in}, {b, AccessMode::in}});
    g.add_task(0, {{a, AccessMode::out}, {b, AccessMode::inout}});
    const auto preds = g.preds_of(g.tasks().back());
    ASSERT_EQ(preds.size(), readers);
    for (std::uint32_t i = 0; i < readers; ++i) {
        EXPECT_EQ(preds[i].from, i);
        EXPECT_EQ(preds[i].bytes, 96u);
    }
}

}  // namespace
}  // namespace numaware::sim
