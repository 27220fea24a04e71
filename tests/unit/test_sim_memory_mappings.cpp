// The memory-hierarchy simulator's team-dependent page mappings (local,
// remote, locality, balance), their plans, pages placed before a run, the
// team on K nodes, and the per-phase counters.
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "numaware/memory_sim.hpp"
#include "sim/memory/page_plans.hpp"
#include "support.hpp"

namespace mem = numaware::sim::memory;
using mem::detail::PagePlan;
using mem::detail::PageProfile;
using numaware::test::expect_error;

namespace {

mem::WorkloadResult run(const std::string& workload, const std::string& mapping, unsigned threads, unsigned nodes,
                        numaware::MappingKind kind = numaware::MappingKind::scatter,
                        const std::string& prefetch = "none") {
    mem::RunOptions o;
    o.mapping = mem::parse_page_mapping(mapping);
    o.threads = threads;
    o.nodes = nodes;
    o.thread_mapping = kind;
    o.prefetch = mem::parse_prefetch(prefetch);
    return mem::run_workload(*mem::make_workload(workload), mem::preset("thesis-4s"), o);
}

}  // namespace

TEST(SimMemoryPlans, LocalityTakesTheNodeThatAccessesMost) {
    PageProfile p;
    p.nodes = 3;
    p.pages = {10, 11, 12};
    p.counts = {5, 1, 0,     // page 10: node 0
                0, 2, 9,     // page 11: node 2
                4, 4, 0};    // page 12: a tie, the lowest node
    EXPECT_EQ(mem::detail::plan_locality(p), (PagePlan{{10, 0}, {11, 2}, {12, 0}}));
}

TEST(SimMemoryPlans, BalanceKeepsTheHottestPagesAndSpreadsTheRest) {
    // Four pages all accessed from node 0; a team on nodes 0 and 1: the
    // share is half the accesses, so node 0 keeps the hottest page and the
    // rest goes to the least loaded node.
    PageProfile p;
    p.nodes = 2;
    p.pages = {1, 2, 3, 4};
    p.counts = {10, 0, 40, 0, 20, 0, 30, 0};
    const PagePlan plan = mem::detail::plan_balance(p, {0, 1});
    // Order by accesses: 2 (40), 4 (30), 3 (20), 1 (10); share 50.
    EXPECT_EQ(plan, (PagePlan{{2, 0}, {4, 1}, {3, 1}, {1, 0}}));
    // One node: balance is locality.
    EXPECT_EQ(mem::detail::plan_balance(p, {0}).size(), 4u);
    for (const auto& [page, node] : mem::detail::plan_balance(p, {0})) EXPECT_EQ(node, 0u) << page;
    expect_error([&] { mem::detail::plan_balance(p, {}); }, "team", "at least one node");
    expect_error([&] { mem::detail::plan_balance(p, {2}); }, "team", "nodes 0..1");
    PageProfile bad = p;
    bad.counts.pop_back();
    expect_error([&] { mem::detail::plan_locality(bad); }, "profile", "7 counts for 4 pages on 2 nodes");
}

TEST(SimMemoryMappings, ParsesTheTeamDependentNames) {
    EXPECT_EQ(mem::parse_page_mapping("local").kind, mem::PageMapping::Kind::local);
    EXPECT_EQ(mem::parse_page_mapping("remote").kind, mem::PageMapping::Kind::remote);
    EXPECT_EQ(mem::parse_page_mapping("locality").kind, mem::PageMapping::Kind::locality);
    EXPECT_EQ(mem::parse_page_mapping("balance").kind, mem::PageMapping::Kind::balance);
    expect_error([] { mem::parse_page_mapping("nearest"); }, "mapping", "local, remote, locality, balance");
    // MemorySim alone applies rules; the team-dependent ones need the team.
    expect_error([] { mem::MemorySim(mem::preset("thesis-4s"), {}, mem::parse_page_mapping("local")); }, "mapping",
                 "run_workload resolves it");
}

// STREAM (3 × 8 MiB, more than 2 nodes' L3s) with 8 threads scattered over
// 2 nodes: every thread works on its own block, so first touch and
// locality keep DRAM traffic local, remote makes all of it remote, and
// local binds it all to the first thread's node (half of the threads are
// on the other one).
TEST(SimMemoryMappings, StreamUnderEachMapping) {
    const auto bytes = [](const mem::WorkloadResult& r) {
        return std::pair{r.report.dram_local_bytes, r.report.dram_remote_bytes};
    };
    const auto ft = bytes(run("stream:8", "first-touch", 8, 2));
    EXPECT_GT(ft.first, 0u);
    EXPECT_EQ(ft.second, 0u);
    EXPECT_EQ(bytes(run("stream:8", "locality", 8, 2)), ft);
    EXPECT_EQ(bytes(run("stream:8", "balance", 8, 2)), ft);
    const auto remote = bytes(run("stream:8", "remote", 8, 2));
    EXPECT_EQ(remote.first, 0u);
    EXPECT_EQ(remote.second, ft.first);
    const auto local = bytes(run("stream:8", "local", 8, 2));
    EXPECT_EQ(local.first, local.second);   // 4 threads on each node
    EXPECT_EQ(local.first + local.second, ft.first);
    EXPECT_EQ(run("stream:8", "local", 8, 2).report.mapping, "local (bind:0)");
    EXPECT_EQ(run("stream:8", "remote", 4, 1).report.mapping, "remote (bind:1)");
}

TEST(SimMemoryMappings, RemoteNeedsANodeWithoutThreads) {
    expect_error([] { run("stream:1", "remote", 16, 0); }, "mapping", "the team uses every node of thesis-4s");
    expect_error([] { run("stream:1", "first-touch", 4, 5); }, "nodes", "5 nodes on thesis-4s with 4 sockets");
}

// 8 threads on the first 2 nodes (either order of filling): the lowest
// node without threads is 2, and all traffic under `remote` goes there.
TEST(SimMemoryMappings, TeamOnTheFirstKNodes) {
    for (const auto kind : {numaware::MappingKind::contiguous, numaware::MappingKind::scatter}) {
        const mem::WorkloadResult r = run("stream:1", "remote", 8, 2, kind);
        EXPECT_EQ(r.report.mapping, "remote (bind:2)");
        EXPECT_EQ(r.report.dram_local_bytes, 0u);
    }
    // All four nodes: remote has nowhere to go.
    expect_error([] { run("stream:1", "remote", 8, 4); }, "mapping", "the team uses every node");
}

TEST(SimMemoryMappings, PlaceBeforeTheRun) {
    mem::MemorySim sim(mem::preset("thesis-4s"), {}, {});
    sim.place(5, 3);
    EXPECT_EQ(sim.home_of(5 * 4096 + 100), 3);
    expect_error([&] { sim.place(5, 2); }, "page", "already lives on node 3");
    expect_error([&] { sim.place(6, 4); }, "node", "nodes 0..3");
}

// The measured phases' own counters add up to the run's.
TEST(SimMemoryMappings, PhaseCountersAddUpToTheRun) {
    const mem::WorkloadResult r = run("cg:S", "first-touch", 16, 0, numaware::MappingKind::contiguous, "stride:8");
    std::uint64_t accesses = 0, misses = 0, issued = 0, remote = 0;
    double s = 0;
    unsigned measured = 0;
    for (const mem::PhaseResult& ph : r.phases) {
        if (!ph.measured) {
            EXPECT_EQ(ph.report.accesses, 0u) << ph.name;
            continue;
        }
        ++measured;
        EXPECT_NEAR(ph.report.simulated_s, ph.simulated_s, 1e-15) << ph.name;
        accesses += ph.report.accesses;
        misses += ph.report.l1.demand_misses;
        issued += ph.report.prefetch_counts.issued();
        remote += ph.report.dram_remote_bytes;
        s += ph.report.simulated_s;
        EXPECT_GT(ph.report.energy_j(), 0.0) << ph.name;
    }
    EXPECT_GT(measured, 2u);
    EXPECT_EQ(accesses, r.report.accesses);
    EXPECT_EQ(misses, r.report.l1.demand_misses);
    EXPECT_EQ(issued, r.report.prefetch_counts.issued());
    EXPECT_EQ(remote, r.report.dram_remote_bytes);
    EXPECT_NEAR(s, r.measured_s, 1e-12);
}
