// tests/unit/test_sim_tasks.cpp — the discrete-event task simulator:
// the analytic cases (exact), first touch, the runtime's cross-node rule,
// both contention models, the real policies, reproducibility, bad input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/catalog.hpp"
#include "numaware/observer.hpp"
#include "numaware/sim.hpp"
#include "support.hpp"
#include "trace_check.hpp"

namespace numaware::sim {
namespace {

using numaware::test::expect_error;
using tasks::AccessMode;

// 2 nodes x 2 CPUs, SLIT 10/20, by the documented rules: latency 80 ns
// local, 160 ns remote; memory 10 GB/s per node; link 5 GB/s; one core
// streams 10 x 64 B per latency: 8 GB/s local, 4 GB/s remote.
const TimedMachine& two_nodes() {
    static const TimedMachine m = timed(Machine::from_spec("nodes=2 cpus-per-node=2 mem-per-node=1G distances=10,20/20,10"),
                                        TimingDefaults{.local_latency_ns = 80, .memory_gbps = 10});
    return m;
}

// Workers in contiguous order: 0, 1 on node 0; 2, 3 on node 1.
SimOptions opts(Contention c = Contention::snapshot) {
    SimOptions o;
    o.contention = c;
    o.spawn_s = 0;   // the whole graph at time 0: the analytic cases have no spawning cost
    o.mapping = TeamMapping{.threads = 4, .kind = MappingKind::contiguous};
    return o;
}

constexpr std::uint64_t MB = 1000000;

class SimAnalytic : public ::testing::TestWithParam<Contention> {};

TEST_P(SimAnalytic, OneTaskReadingARemoteRegion) {
    Graph g;
    const auto r = g.add_region(8 * MB, /*home=*/1);
    g.add_task(0, {{r, AccessMode::in}}, -1, /*worker=*/0);
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts(GetParam()));
    // latency 160 ns + 8 MB at the core's remote limit, 4 GB/s (< link 5).
    EXPECT_DOUBLE_EQ(two_nodes().core_gbps(0, 1), 4.0);
    const double expected = 160e-9 + 8e6 / 4e9;
    EXPECT_NEAR(rep.run.makespan_s, expected, expected * 1e-9);
    EXPECT_EQ(rep.run.cross_node_bytes, 8 * MB);
    EXPECT_EQ(rep.run.dep_bytes, 8 * MB);
    EXPECT_EQ(rep.link_bytes[0][1], 8 * MB);   // reader 0, home 1
    EXPECT_EQ(rep.link_bytes[1][0], 0u);
    EXPECT_NE(rep.label.find("simulated"), std::string::npos);
}

TEST_P(SimAnalytic, TwoTasksContendForOneMemoryController) {
    Graph g;
    const auto a = g.add_region(10 * MB, 0), b = g.add_region(10 * MB, 0);
    g.add_task(0, {{a, AccessMode::in}}, -1, 0);
    g.add_task(0, {{b, AccessMode::in}}, -1, 1);
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts(GetParam()));
    // Both on node 0's 10 GB/s: 5 GB/s each (< the core's 8).
    const double expected = 80e-9 + 10e6 / 5e9;
    EXPECT_NEAR(rep.run.makespan_s, expected, expected * 1e-9);
    EXPECT_EQ(rep.run.cross_node_bytes, 0u);
    EXPECT_EQ(rep.link_bytes[0][0], 20 * MB);
}

TEST_P(SimAnalytic, AChain) {
    Graph g;
    const auto a = g.add_region(4 * MB, 1);
    g.add_task(1e-3, {{a, AccessMode::inout}});
    g.add_task(2e-3, {{a, AccessMode::inout}});
    g.add_task(3e-3, {{a, AccessMode::in}});
    SimOptions o = opts(GetParam());
    o.mapping = TeamMapping{.threads = 1, .kind = MappingKind::contiguous};   // one worker, node 0
    const SimReport rep = simulate(two_nodes(), g, "dep", o);
    const double per = 160e-9 + 4e6 / 4e9;
    const double expected = 6e-3 + 3 * per;
    EXPECT_NEAR(rep.run.makespan_s, expected, expected * 1e-9);
    EXPECT_EQ(rep.run.tasks, 3u);
    EXPECT_EQ(rep.run.cross_node_bytes, 12 * MB);
    EXPECT_NEAR(rep.run.load_balance_pct, 100.0, 1e-9);
}

TEST_P(SimAnalytic, RemoteReadersShareTheLinkAndTheController) {
    // Two readers on node 0 of node 1's memory: the 5 GB/s link is the
    // bottleneck, 2.5 GB/s each.
    Graph g;
    const auto a = g.add_region(10 * MB, 1), b = g.add_region(10 * MB, 1);
    g.add_task(0, {{a, AccessMode::in}}, -1, 0);
    g.add_task(0, {{b, AccessMode::in}}, -1, 1);
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts(GetParam()));
    const double expected = 160e-9 + 10e6 / 2.5e9;
    EXPECT_NEAR(rep.run.makespan_s, expected, expected * 1e-9);
}

INSTANTIATE_TEST_SUITE_P(BothModels, SimAnalytic, ::testing::Values(Contention::snapshot, Contention::exact),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(SimTasks, ExactModelRevisesSharesWhenATaskEnds) {
    // A 10 MB and a 30 MB read on node 0's 10 GB/s: 5 GB/s each until the
    // small one ends at 2 ms, then the core's 8 GB/s: 2 ms + 20 MB / 8 GB/s.
    Graph g;
    const auto a = g.add_region(10 * MB, 0), b = g.add_region(30 * MB, 0);
    g.add_task(0, {{a, AccessMode::in}}, -1, 0);
    g.add_task(0, {{b, AccessMode::in}}, -1, 1);
    const SimReport exact = simulate(two_nodes(), g, "dfifo", opts(Contention::exact));
    EXPECT_NEAR(exact.run.makespan_s, 80e-9 + 2e-3 + 2.5e-3, 1e-9);
    // The snapshot model keeps the share it started with: 30 MB at 5 GB/s.
    const SimReport snap = simulate(two_nodes(), g, "dfifo", opts(Contention::snapshot));
    EXPECT_NEAR(snap.run.makespan_s, 80e-9 + 6e-3, 1e-9);
}

TEST(SimTasks, FirstTouchByTheFirstWriterAndTheRuntimesCrossNodeRule) {
    Graph g;
    const auto a = g.add_region(1 * MB);   // unallocated
    g.add_task(0, {{a, AccessMode::out}}, -1, /*worker=*/2);   // node 1 writes first
    g.add_task(0, {{a, AccessMode::in}}, -1, /*worker=*/0);    // node 0 reads: remote
    g.add_task(0, {{a, AccessMode::in}}, -1, /*worker=*/3);    // node 1 reads: local
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts());
    EXPECT_EQ(rep.run.dep_bytes, 3 * MB);
    EXPECT_EQ(rep.run.cross_node_bytes, 1 * MB);   // the first write is first touch, not cross
    EXPECT_EQ(rep.link_bytes[0][1], 1 * MB);
    EXPECT_EQ(rep.link_bytes[1][1], 2 * MB);
    EXPECT_EQ(rep.run.tasks_per_node, (std::vector<std::uint64_t>{1, 2}));
}

TEST(SimTasks, RegionsOnOnePageShareItsHome) {
    Graph g;
    const auto first = g.add_strided_regions(100, 64, 8);   // 6400 bytes: two pages
    EXPECT_EQ(g.regions().size(), 100u);
    EXPECT_EQ(g.pages(), 2u);
    EXPECT_EQ(g.regions()[63].page, g.regions()[0].page);
    EXPECT_NE(g.regions()[64].page, g.regions()[0].page);   // byte 4096 starts the second page
    EXPECT_EQ(g.regions()[1].start - g.regions()[0].start, 64u);
    g.add_task(0, {{first + 5, AccessMode::out}}, -1, /*worker=*/2);   // node 1 first-touches the first page
    g.add_task(0, {{first + 7, AccessMode::out}}, -1, /*worker=*/0);   // same page: already on node 1
    g.add_task(0, {{first + 70, AccessMode::out}}, -1, /*worker=*/0);  // second page: first touch on node 0
    g.add_task(0, {{first + 9, AccessMode::in}}, -1, /*worker=*/3);    // node 1 reads its own page
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts());
    EXPECT_EQ(rep.run.cross_node_bytes, 8u);   // only the write of region 7 from node 0
    expect_error([&] { g.add_strided_regions(2, 4, 8); }, "stride", "less than");
    Graph h;
    const auto r = h.add_strided_regions(4, 64, 8);
    h.set_home(r + 2, 1);
    for (std::uint32_t k = 0; k < 4; ++k) EXPECT_EQ(h.regions()[r + k].home, 1) << k;
}

TEST(SimTasks, ReadingUntouchedMemoryCountsAsCrossLikeTheRuntime) {
    Graph g;
    const auto a = g.add_region(1 * MB);
    g.add_task(0, {{a, AccessMode::in}}, -1, 0);
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts());
    EXPECT_EQ(rep.run.cross_node_bytes, 1 * MB);
}

// A row-block Jacobi-like graph: init tasks write blocks, sweeps read
// neighbours. Used for the policy tests below.
Graph blocks_graph(unsigned blocks, unsigned sweeps, std::uint64_t bytes, std::span<const unsigned> nodes) {
    Graph g;
    std::vector<std::uint32_t> a, b;
    for (unsigned k = 0; k < blocks; ++k) a.push_back(g.add_region(bytes));
    for (unsigned k = 0; k < blocks; ++k) b.push_back(g.add_region(bytes));
    auto owner = [&](unsigned k) { return static_cast<int>(nodes[k * nodes.size() / blocks]); };
    for (unsigned k = 0; k < blocks; ++k) g.add_task(1e-5, {{a[k], AccessMode::out}}, owner(k));
    for (unsigned t = 0; t < sweeps; ++t) {
        auto& src = t % 2 ? b : a;
        auto& dst = t % 2 ? a : b;
        for (unsigned k = 0; k < blocks; ++k) {
            std::vector<GraphDep> d;
            if (k > 0) d.push_back({src[k - 1], AccessMode::in});
            d.push_back({src[k], AccessMode::in});
            if (k + 1 < blocks) d.push_back({src[k + 1], AccessMode::in});
            d.push_back({dst[k], AccessMode::out});
            g.add_task(1e-5, d, owner(k));
        }
    }
    g.name = "blocks";
    return g;
}

TEST(SimTasks, EveryTaskRunsOnceUnderEveryPolicyAndSaKeepsItsHints) {
    const unsigned nodes[] = {0, 1};
    const Graph g = blocks_graph(16, 6, 64 * 1024, nodes);
    for (std::string_view p : tasks::policy_names()) {
        SimOptions o = opts();
        o.partition_s_per_task = 1e-7;
        o.policy.window = 16;
        o.policy.intersection = 4;
        const SimReport rep = simulate(two_nodes(), g, p, o);
        EXPECT_EQ(rep.run.tasks, g.size()) << p;
        EXPECT_GT(rep.run.makespan_s, 0) << p;
        EXPECT_EQ(rep.run.tasks_per_node[0] + rep.run.tasks_per_node[1], g.size()) << p;
        if (p == "sa") {
            // Hints: blocks 0-7 on node 0, 8-15 on node 1; only the two halo
            // blocks cross, each sweep: 2 x 64 KiB x 6 sweeps.
            EXPECT_EQ(rep.run.cross_node_bytes, 2u * 64 * 1024 * 6) << p;
            EXPECT_EQ(rep.run.tasks_per_node[0], rep.run.tasks_per_node[1]);
        }
        if (p == "rip-dep" || p == "rip-mw") {
            EXPECT_GT(rep.partition_jobs, 0u) << p;
            EXPECT_GT(rep.partition_s, 0) << p;
        }
    }
}

TEST(SimTasks, SameSeedSameResultAndHintsBeatRoundRobinOnLocality) {
    const unsigned nodes[] = {0, 1};
    const Graph g = blocks_graph(32, 8, 256 * 1024, nodes);
    SimOptions o = opts();
    const SimReport a = simulate(two_nodes(), g, "dep", o);
    const SimReport b = simulate(two_nodes(), g, "dep", o);
    EXPECT_EQ(a.run.makespan_s, b.run.makespan_s);
    EXPECT_EQ(a.run.cross_node_bytes, b.run.cross_node_bytes);
    EXPECT_EQ(a.run.tasks_per_node, b.run.tasks_per_node);
    const SimReport f = simulate(two_nodes(), g, "dfifo", o);
    const SimReport sa = simulate(two_nodes(), g, "sa", o);
    EXPECT_LT(sa.run.cross_node_bytes, f.run.cross_node_bytes);
    EXPECT_LT(sa.run.cross_node_bytes, a.run.cross_node_bytes);
}

TEST(SimTasks, SnapshotAndExactAgreeOnAGraph) {
    const unsigned nodes[] = {0, 1};
    const Graph g = blocks_graph(16, 6, 1024 * 1024, nodes);
    const SimReport s = simulate(two_nodes(), g, "sa", opts(Contention::snapshot));
    const SimReport e = simulate(two_nodes(), g, "sa", opts(Contention::exact));
    EXPECT_EQ(s.run.cross_node_bytes, e.run.cross_node_bytes);   // SA's placement does not depend on timing
    EXPECT_NEAR(s.run.makespan_s / e.run.makespan_s, 1.0, 0.25);
}

// The makespan ends with the last task, not with an idle worker's last
// wake-up: with a steal delay of 10^5 mean task durations the idle
// workers' wake-ups are still pending when the last task finishes.
TEST(SimTasks, MakespanEndsWithTheLastTaskWhateverTheStealDelay) {
    for (double delay : {0.0, 1.0, 1e5}) {
        Graph g;
        for (int i = 0; i < 4; ++i) g.add_task(1e-3, {{g.add_region(64), AccessMode::out}});
        SimOptions o = opts();
        o.policy.steal_delay_tasks = delay;
        const SimReport rep = simulate(two_nodes(), g, "dep", o);
        EXPECT_EQ(rep.run.tasks, 4u);
        EXPECT_GE(rep.run.makespan_s, 1e-3) << delay;
        EXPECT_LT(rep.run.makespan_s, 4.1e-3) << delay;   // at worst the four run one after another
    }
}

// The occupied rule: a node whose workers have all run their tasks for
// longer than the steal delay will not start its queued tasks within it, so
// a farther worker takes them at once. One worker per node; worker 0 runs a
// 5 s task pinned to it while a chain of 20 tasks of 10 ms on data homed on
// node 0 is placed by DEP on node 0, one ready task at a time (never a
// backlog). With the rule the node-1 worker waits out the delay (one mean
// task duration here) once and then runs the whole chain back to back;
// without it, it would wait the delay again before each link (0.25 s each,
// 20 links: past the long task's end).
TEST(SimTasks, AFartherWorkerTakesTheQueueOfAnOccupiedNodeAtOnce) {
    struct ChainEnd : tasks::Observer {
        double last = 0;
        unsigned on_node1 = 0;
        void on_task_finished(tasks::TaskId task, unsigned, unsigned node, double t) override {
            if (task == 0) return;
            last = std::max(last, t);
            on_node1 += node == 1 ? 1 : 0;
        }
    } chain;
    Graph g;
    g.add_task(5.0, {}, -1, /*worker=*/0);
    const auto a = g.add_region(64, /*home=*/0);
    for (int k = 0; k < 20; ++k) g.add_task(10e-3, {{a, AccessMode::inout}});
    SimOptions o = opts();
    o.mapping = TeamMapping{.threads = 2, .kind = MappingKind::scatter};   // worker 0 on node 0, worker 1 on node 1
    o.policy.steal_delay_tasks = 1;   // the delay: the mean task, (5 s + 20 x 10 ms) / 21 = 0.248 s
    o.observer = &chain;
    const SimReport rep = simulate(two_nodes(), g, "dep", o);
    EXPECT_EQ(rep.run.tasks, 21u);
    EXPECT_EQ(chain.on_node1, 20u);
    // Every chain task was taken from node 0's queue by node 1's worker:
    // stolen across nodes, and all the cross-node bytes are theirs.
    EXPECT_EQ(rep.run.cross_node_steals, 20u);
    EXPECT_EQ(rep.run.cross_node_bytes, 20u * 64u);
    EXPECT_EQ(rep.run.cross_node_steal_bytes, rep.run.cross_node_bytes);
    // The first after the worker's delay (in its order), every later one
    // by the occupied rule: the worker had just finished the link before.
    EXPECT_EQ(rep.run.cross_node_steals_occupied, 19u);
    EXPECT_EQ(rep.run.cross_node_steals_backlog, 0u);
    const double delay = 5.2 / 21;
    EXPECT_NEAR(chain.last, delay + 20 * 10e-3, 0.02) << "the chain ended at " << chain.last << " s";
}

// The backlog rule: a node queue holding more tasks than its workers start
// within the delay is searched at once. One worker per node; 40 tasks of
// 1 ms on data homed on node 0 (DEP puts them all in node 0's queue) and a
// delay of 1000 mean tasks: node 0's one worker starts 1000 tasks in the
// delay, so 40 are no backlog and node 1's worker takes none. With a delay
// of 8, node 0's backlog limit is 8 tasks: node 1's worker, not idle long
// enough, takes from it by the backlog rule while more than 8 wait, and
// every steal is counted as such.
TEST(SimTasks, AFartherWorkerTakesABacklogAtOnceAndTheReportSaysWhy) {
    for (const double delay : {1000.0, 8.0}) {
        Graph g;
        const auto a = g.add_region(64, /*home=*/0);
        for (int k = 0; k < 40; ++k) g.add_task(1e-3, {{a, AccessMode::in}});
        SimOptions o = opts();
        o.mapping = TeamMapping{.threads = 2, .kind = MappingKind::scatter};
        o.policy.steal_delay_tasks = delay;
        const SimReport rep = simulate(two_nodes(), g, "dep", o);
        EXPECT_EQ(rep.run.tasks, 40u);
        if (delay > 100) {
            EXPECT_EQ(rep.run.cross_node_steals, 0u) << delay;
            continue;
        }
        EXPECT_GT(rep.run.cross_node_steals, 0u) << delay;
        EXPECT_EQ(rep.run.cross_node_steals_backlog, rep.run.cross_node_steals) << delay;
        EXPECT_EQ(rep.run.cross_node_steals_occupied, 0u) << delay;
        // It stops once 8 or fewer wait: node 0's worker runs at least those.
        EXPECT_GE(rep.run.tasks_per_node[0], 8u) << delay;
    }
}

TEST(SimTasks, InitialPartIsTheInitialisationAndTheFirstStep) {
    const unsigned nodes[] = {0, 1};
    // Double-buffered: 16 init tasks write A, sweep 1 writes B for the first
    // time (the same step), sweeps 2 and 3 write A and B again (the next
    // step), sweep 4 writes A a third time.
    const Graph g = blocks_graph(16, 6, 4096, nodes);
    EXPECT_EQ(initial_part(g), 16u * 4);
    EXPECT_EQ(initial_part(g, 20), 20u);   // the cap
    // In place: 8 init tasks, then sweeps that rewrite every region.
    Graph in_place;
    std::vector<std::uint32_t> r;
    for (int i = 0; i < 8; ++i) r.push_back(in_place.add_region(4096));
    for (int i = 0; i < 8; ++i) in_place.add_task(0, {{r[static_cast<std::size_t>(i)], AccessMode::out}});
    for (int sweep = 0; sweep < 3; ++sweep)
        for (std::size_t i = 0; i < 8; ++i)
            in_place.add_task(0, {{r[(i + 1) % 8], AccessMode::in}, {r[i], AccessMode::inout}});
    EXPECT_EQ(initial_part(in_place), 16u);   // the init tasks and the first sweep
    Graph independent;
    for (int i = 0; i < 5; ++i) independent.add_task(0, {{independent.add_region(64), AccessMode::out}});
    EXPECT_EQ(initial_part(independent), 5u);   // never more than the graph
    const Graph app = apps::build_graph("jacobi", apps::find_app("jacobi").test_size, two_nodes().machine, nodes);
    EXPECT_EQ(app.initial_tasks, initial_part(app));
    EXPECT_GT(app.initial_tasks, 0u);
}

TEST(SimTasks, BarrierHoldsBackTheSpawner) {
    Graph g;
    g.add_task(1e-3, std::initializer_list<GraphDep>{}, -1, 0);
    g.barrier();
    g.add_task(1e-3, std::initializer_list<GraphDep>{}, -1, 2);   // could run at once on another worker
    const SimReport rep = simulate(two_nodes(), g, "dfifo", opts());
    EXPECT_NEAR(rep.run.makespan_s, 2e-3, 1e-12);
    EXPECT_TRUE(g.tasks()[1].after_barrier);
    EXPECT_FALSE(g.tasks()[0].after_barrier);
}

TEST(SimTasks, GraphKeepsItsTotalsAsTasksAreAdded) {
    Graph g;
    EXPECT_EQ(g.max_worker(), -1);
    const std::uint32_t a = g.add_region(4096), b = g.add_region(100);
    g.add_task(1e-3, {GraphDep{a, AccessMode::in}, GraphDep{a, AccessMode::in}, GraphDep{b, AccessMode::out}});
    g.add_task(2e-3, {GraphDep{b, AccessMode::in}}, -1, 3);
    EXPECT_THROW(g.add_task(1.0, {GraphDep{a, AccessMode::in}, GraphDep{a, AccessMode::out}}), Error);
    EXPECT_DOUBLE_EQ(g.compute_s(), 3e-3);
    EXPECT_EQ(g.dep_bytes(), 4096u + 100u + 100u);   // the duplicate merged, the refused task not counted
    EXPECT_EQ(g.max_worker(), 3);
}

TEST(SimTasks, SpawnRateDelaysIndependentTasks) {
    Graph g;
    for (int i = 0; i < 4; ++i) g.add_task(1e-6, std::initializer_list<GraphDep>{});
    SimOptions o = opts();
    o.spawn_s = 1e-6;
    const SimReport rep = simulate(two_nodes(), g, "dfifo", o);
    EXPECT_NEAR(rep.run.makespan_s, 4e-6 + 1e-6, 1e-12);   // the last is submitted at 4 us
}

TEST(SimTasks, BalancingModelMigratesARegionAfterTwoFaultsFromOneNode) {
    Graph g;
    const auto a = g.add_region(1 * MB, 1);
    for (int i = 0; i < 6; ++i) {
        g.add_task(1e-3, {{a, AccessMode::in}}, -1, 0);   // node 0 reads node 1's region, 1 ms apart
        g.barrier();
    }
    SimOptions o = opts();
    o.balancing.enabled = true;
    o.balancing.scan_period_s = 0.5e-3;
    const SimReport rep = simulate(two_nodes(), g, "dfifo", o);
    EXPECT_EQ(rep.migrated_bytes, 1 * MB);
    EXPECT_GE(rep.hinting_faults, 2u);
    EXPECT_LT(rep.run.cross_node_bytes, 6 * MB);   // after the move the reads are local
    EXPECT_GE(rep.run.cross_node_bytes, 2 * MB);
    o.balancing.enabled = false;
    const SimReport off = simulate(two_nodes(), g, "dfifo", o);
    EXPECT_EQ(off.run.cross_node_bytes, 6 * MB);
    EXPECT_EQ(off.migrated_bytes, 0u);
}

TEST(SimTasks, FromRecordedGraph) {
    tasks::TaskGraph rec;
    rec.tasks.push_back({0, -1, {{0x10000, 4096, AccessMode::out}}, {}, 1e-6, 0});
    rec.tasks.push_back({1, 1, {{0x10000, 4096, AccessMode::in}, {0x20000, 8192, AccessMode::out}}, {{0, 4096}}, 2e-6, 1});
    const Graph g = Graph::from_recorded(rec);
    ASSERT_EQ(g.size(), 2u);
    ASSERT_EQ(g.regions().size(), 2u);
    EXPECT_EQ(g.regions()[1].bytes, 8192u);
    EXPECT_EQ(g.tasks()[1].hint, 1);
    EXPECT_EQ(g.deps_of(g.tasks()[1]).size(), 2u);
    EXPECT_DOUBLE_EQ(g.tasks()[1].compute_s, 2e-6);
    rec.tasks.push_back({2, -1, {{0x10800, 4096, AccessMode::in}}, {}, 0, 0});   // overlaps the first
    expect_error([&] { (void)Graph::from_recorded(rec); }, "tasks", "overlap");
}

TEST(SimTasks, BadInput) {
    Graph g;
    expect_error([&] { g.add_region(0); }, "bytes", "0");
    const auto a = g.add_region(4096);
    expect_error([&] { g.add_task(0, {{a + 1, AccessMode::in}}); }, "deps[0]", "does not exist");
    expect_error([&] { g.add_task(0, {{a, AccessMode::in}, {a, AccessMode::out}}); }, "deps[1]", "different access");
    expect_error([&] { g.add_task(-1, std::initializer_list<GraphDep>{}); }, "compute_s", ">= 0");
    EXPECT_EQ(g.size(), 0u);   // failed calls add nothing
    EXPECT_TRUE(g.deps().empty());
    g.add_task(0, {{a, AccessMode::in}, {a, AccessMode::in}});   // exact duplicates merge
    EXPECT_EQ(g.deps().size(), 1u);

    Graph bad_home;
    bad_home.add_region(4096, 5);
    bad_home.add_task(0, {{0, AccessMode::in}});
    expect_error([&] { simulate(two_nodes(), bad_home, "dep", opts()); }, "regions[0].home", "not a node");
    Graph bad_worker;
    bad_worker.add_task(0, std::initializer_list<GraphDep>{}, -1, 9);
    expect_error([&] { simulate(two_nodes(), bad_worker, "dep", opts()); }, "tasks[0].worker", "4 workers");
    expect_error([&] { simulate(two_nodes(), g, "fifo", opts()); }, "policy", "dfifo");
    SimOptions o = opts();
    o.spawn_s = -1;
    expect_error([&] { simulate(two_nodes(), g, "dep", o); }, "spawn_s", ">= 0");
    o = opts();
    o.mapping.threads = 99;
    EXPECT_THROW(simulate(two_nodes(), g, "dep", o), Error);
    expect_error([] { (void)parse_contention("fair"); }, "contention", "snapshot or exact");
}

}  // namespace
}  // namespace numaware::sim

namespace numaware::sim {
namespace {

using apps::app_names;
using apps::parse_app_list;
using apps::parse_policy_list;
using AppShape = apps::AppSize;
AppShape parse_app_shape(std::string_view text, std::string_view app, std::string_view field = "size") {
    return apps::parse_app_size(text, app, field);
}
AppShape app_test_shape(std::string_view app) { return apps::find_app(app).test_size; }

TEST(SimTextForms, AppsPoliciesAndShapes) {
    EXPECT_EQ(parse_app_list("jacobi,nstream,jacobi"), (std::vector<std::string>{"jacobi", "nstream"}));
    EXPECT_EQ(parse_app_list("all").size(), app_names().size());
    EXPECT_EQ(parse_policy_list("dep,rip-dep"), (std::vector<std::string>{"dep", "rip-dep"}));
    EXPECT_EQ(parse_policy_list("all").size(), tasks::policy_names().size());
    const AppShape s = parse_app_shape("256,32,7", "jacobi");
    EXPECT_EQ(s.n, 256u);
    EXPECT_EQ(s.block, 32u);
    EXPECT_EQ(s.iterations, 7u);
    EXPECT_EQ(parse_app_shape("test", "qr").n, app_test_shape("qr").n);
    expect_error([] { (void)parse_app_list("jacobi,lu", "--app"); }, "--app", "unknown application 'lu'");
    expect_error([] { (void)parse_app_list("jacobi,,cg", "--app"); }, "--app", "empty item");
    expect_error([] { (void)parse_policy_list("fifo", "--policy"); }, "--policy", "dfifo");
    expect_error([] { (void)parse_app_shape("256,32", "jacobi", "--size"); }, "--size", "N,BLOCK,ITERATIONS");
    expect_error([] { (void)parse_app_shape("256,-3,2", "jacobi", "--size"); }, "--size", "'256,-3,2'");
    expect_error([] { (void)parse_app_shape("256,32,2000000", "jacobi", "--size"); }, "--size", "at most 1000000");
}

}  // namespace
}  // namespace numaware::sim

// ---- the observer: every hook, in simulated time

namespace numaware::sim {
namespace {

// Counts every hook and checks what each promises.
struct CountingObserver final : tasks::Observer {
    std::vector<unsigned> worker_nodes;
    std::string label;
    std::uint64_t created = 0, ready = 0, started = 0, finished = 0, stolen = 0, partitions = 0;
    std::vector<int> running;   // per worker: its task, or -1
    double last_t = 0;
    bool monotonic = true, consistent = true;

    void at(double t) {
        monotonic &= t >= last_t;
        last_t = t;
    }
    void on_setup(const std::vector<unsigned>& nodes, std::string_view l) override {
        worker_nodes = nodes;
        label = std::string(l);
        running.assign(nodes.size(), -1);
    }
    void on_task_created(tasks::TaskId, double t) override { ++created, at(t); }
    void on_task_ready(tasks::TaskId, double t) override { ++ready, at(t); }
    void on_task_started(tasks::TaskId task, unsigned w, unsigned node, double t) override {
        ++started, at(t);
        consistent &= w < running.size() && running[w] == -1 && worker_nodes[w] == node;
        if (w < running.size()) running[w] = static_cast<int>(task);
    }
    void on_task_finished(tasks::TaskId task, unsigned w, unsigned node, double t) override {
        ++finished, at(t);
        consistent &= w < running.size() && running[w] == static_cast<int>(task) && worker_nodes[w] == node;
        if (w < running.size()) running[w] = -1;
    }
    void on_task_stolen(tasks::TaskId, unsigned w, double t) override {
        ++stolen, at(t);
        consistent &= w < running.size();
    }
    void on_partition_done(std::size_t tasks, double start, double end) override {
        ++partitions;
        consistent &= tasks > 0 && start <= end;
    }
};

TEST(SimTrace, EveryHookInSimulatedTimeAndNoEffectOnTheResult) {
    const TimedMachine m = model("bullion-s16", 4);
    SimOptions o;
    o.partition_s_per_task = 1e-7;   // deterministic partitioning time
    const Graph g = apps::build_graph("jacobi", app_test_shape("jacobi"), m.machine, worker_node_set(m.machine, o.mapping));
    for (const char* policy : {"dep", "rip-dep", "dfifo"}) {
        const SimReport plain = simulate(m, g, policy, o);
        CountingObserver seen;
        SimOptions watched = o;
        watched.observer = &seen;
        const SimReport r = simulate(m, g, policy, watched);
        EXPECT_EQ(r.run.makespan_s, plain.run.makespan_s) << policy;
        EXPECT_EQ(r.run.cross_node_bytes, plain.run.cross_node_bytes) << policy;
        EXPECT_EQ(seen.label, r.label);
        EXPECT_EQ(seen.worker_nodes, worker_nodes(m.machine, o.mapping));
        EXPECT_EQ(seen.created, r.run.tasks) << policy;
        EXPECT_EQ(seen.ready, r.run.tasks) << policy;
        EXPECT_EQ(seen.started, r.run.tasks) << policy;
        EXPECT_EQ(seen.finished, r.run.tasks) << policy;
        EXPECT_EQ(seen.partitions, r.partition_jobs) << policy;
        EXPECT_TRUE(seen.monotonic) << policy;
        EXPECT_TRUE(seen.consistent) << policy;
        EXPECT_LE(seen.last_t, r.run.makespan_s) << policy;   // a partition job may end last
    }
}

TEST(SimTrace, ChromeTraceOfASimulation) {
    const TimedMachine m = model("bullion-s16", 4);
    SimOptions o;
    o.partition_s_per_task = 1e-7;
    const Graph g = apps::build_graph("jacobi", app_test_shape("jacobi"), m.machine, worker_node_set(m.machine, o.mapping));
    tasks::ChromeTrace trace;
    o.observer = &trace;
    const SimReport r = simulate(m, g, "rip-dep", o);
    const auto c = test::check_chrome_trace(trace.to_json());
    EXPECT_EQ(c.begins, r.run.tasks + r.partition_jobs);   // one B/E per task and per partition job
    EXPECT_EQ(c.ends, c.begins);
    EXPECT_GE(c.instants, 2 * r.run.tasks);   // created and ready, then the steals
}

#ifdef NUMAWARE_CLI
std::string slurp(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(SimTrace, CliWritesTheTraceOfA4SocketJacobiRun) {
    const std::string path = ::testing::TempDir() + "nw_sim_trace_" + std::to_string(::getpid()) + ".json";
    const auto r = test::run_cli("sim tasks --machine bullion-s16 --sockets 4 --app jacobi --size test --policy dep "
                                 "--json --trace '" + path + "'", false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["runs"].size(), 1u);
    const auto tasks = j["runs"][0]["tasks"].get<std::uint64_t>();
    const auto c = test::check_chrome_trace(slurp(path));
    EXPECT_GT(tasks, 0u);
    EXPECT_EQ(c.begins, tasks);
    EXPECT_EQ(c.ends, tasks);
    std::remove(path.c_str());
}

TEST(SimTrace, CliWritesOneTracePerPolicy) {
    const std::string base = ::testing::TempDir() + "nw_sim_trace_" + std::to_string(::getpid());
    const auto r = test::run_cli("sim tasks --machine bullion-s16 --sockets 4 --app jacobi --size test "
                                 "--policy dep,dfifo --trace '" + base + ".json'");
    ASSERT_EQ(r.status, 0) << r.out;
    for (const char* policy : {"dep", "dfifo"}) {
        const std::string path = base + "." + policy + ".json";
        const auto c = test::check_chrome_trace(slurp(path));
        EXPECT_GT(c.begins, 0u) << path;
        EXPECT_EQ(c.begins, c.ends) << path;
        std::remove(path.c_str());
    }
    const auto bad = test::run_cli("sim tasks --app jacobi --size test --policy dep --trace /nonexistent/dir/t.json");
    EXPECT_NE(bad.status, 0);
    EXPECT_EQ(bad.out, "numaware: --trace: cannot open '/nonexistent/dir/t.json' for writing\n");
}
#endif

}  // namespace
}  // namespace numaware::sim
