// Tests for the fork-join stencil graphs (apps/stencil/stencil_graph.hpp):
// the builder's regions, homes, dependencies, pinning and barriers, and —
// through simulate() — the placement modes, thread migration, NUMA-aware
// chunks and the automatic NUMA balancing model.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"
#include "apps/stencil/stencil_graph.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/sim.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"

namespace apps = numaware::apps;
namespace sim = numaware::sim;
namespace st = numaware::stencil;
using numaware::Error;
using numaware::test::contains;
using numaware::test::expect_error;
using PagePlacement = apps::StencilSim::PagePlacement;

namespace {

// Two CPUs of each node of `m`, in node order: thread t on node t / 2
// with a contiguous cut, so threads 2k and 2k+1 share a node.
numaware::TeamMapping two_per_node(const sim::TimedMachine& m) {
    numaware::TeamMapping mapping;
    for (const auto& n : m.machine.nodes) {
        if (n.cpus.size() < 2) continue;
        mapping.cpus.push_back(n.cpus[0]);
        mapping.cpus.push_back(n.cpus[1]);
    }
    return mapping;
}

// 2-D grid whose rows are exactly one page (512 doubles): every slab is a
// page, so halo arithmetic is exact in slabs. Interior rows: 64 per thread.
apps::StencilSim problem(unsigned threads, PagePlacement placement, unsigned sweeps = 4) {
    apps::StencilSim s;
    s.shape = st::Shape::d2(512, 64 * threads + 2);
    s.threads = threads;
    s.sweeps = sweeps;
    s.placement = placement;
    return s;
}

struct Fixture {
    sim::TimedMachine m = sim::model("sim-4socket");
    numaware::TeamMapping mapping = two_per_node(m);
    std::vector<unsigned> workers = sim::worker_nodes(m.machine, mapping);
};

std::uint64_t slab_bytes(const st::Layout& L) { return L.slab_stride * sizeof(double); }

}  // namespace

// ---------------------------------------------------------------------
// The builder alone
// ---------------------------------------------------------------------

TEST(SimStencilBuild, WorkerNodesFollowTheMapping) {
    Fixture f;
    ASSERT_EQ(f.workers.size(), 8u);
    for (unsigned t = 0; t < 8; ++t) EXPECT_EQ(f.workers[t], f.m.machine.nodes[t / 2].os_index) << t;
    // threads = 0: one worker per CPU of every node with CPUs.
    const auto all = sim::worker_nodes(f.m.machine, {});
    std::size_t cpus = 0;
    for (const auto& n : f.m.machine.nodes) cpus += n.cpus.size();
    EXPECT_EQ(all.size(), cpus);
}

TEST(SimStencilBuild, RegionsCoverBothArraysExactly) {
    Fixture f;
    for (PagePlacement p : {PagePlacement::stencil_aware, PagePlacement::serial_first_touch, PagePlacement::interleave}) {
        for (bool numa : {false, true}) {
            auto s = problem(8, p);
            s.numa_chunks = numa;
            const apps::StencilBuild b = apps::build_stencil_plan(f.m, f.workers, s);
            ASSERT_EQ(b.regions.size(), b.graph.regions().size());
            std::uint64_t bytes[2] = {0, 0};
            for (std::size_t i = 0; i < b.regions.size(); ++i) {
                bytes[b.regions[i].array] += b.regions[i].bytes;
                EXPECT_EQ(b.graph.regions()[i].bytes, b.regions[i].bytes);
                EXPECT_EQ(b.graph.regions()[i].home, static_cast<int>(b.regions[i].home));
                // Each region lies within its owner's block (pages follow the cut).
                const st::Block own = b.partition.owned[b.regions[i].owner];
                const std::uint64_t lo = own.lo * slab_bytes(b.layout);
                const std::uint64_t hi = b.regions[i].owner + 1 == s.threads ? b.layout.bytes
                                                                            : own.hi * slab_bytes(b.layout);
                EXPECT_GE(b.regions[i].offset, lo);
                EXPECT_LE(b.regions[i].offset + b.regions[i].part_bytes, hi);
            }
            EXPECT_EQ(bytes[0], b.layout.bytes) << apps::to_string(p) << " numa=" << numa;
            EXPECT_EQ(bytes[1], b.layout.bytes) << apps::to_string(p) << " numa=" << numa;
        }
    }
}

TEST(SimStencilBuild, ThreeDimensionalGridWithBoxStencil) {
    Fixture f;
    // Planes of 34 x 34 doubles, rows padded to 40: 10880 B, padded to 3 pages.
    apps::StencilSim s;
    s.shape = st::Shape::d3(34, 34, 8 * 4 + 2);
    s.neighbourhood = st::Neighbourhood::box(3);
    s.threads = 8;
    s.placement = PagePlacement::interleave;
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    ASSERT_EQ(slab_bytes(b.layout), 3 * 4096u);
    std::uint64_t bytes = 0;
    for (const auto& r : b.regions) bytes += r.bytes;
    EXPECT_EQ(bytes, 2 * b.layout.bytes);
    // Thread 3 reads one plane of each neighbour, whatever nodes hold it.
    std::map<unsigned, std::uint64_t> foreign;
    for (const auto& d : b.graph.deps_of(b.graph.tasks()[3]))
        if (b.regions[d.region].owner != 3) foreign[b.regions[d.region].owner] += b.regions[d.region].bytes;
    const std::map<unsigned, std::uint64_t> expect{{2, slab_bytes(b.layout)}, {4, slab_bytes(b.layout)}};
    EXPECT_EQ(foreign, expect);
    // 27 points per interior cell.
    double total = 0;
    for (const auto& t : b.graph.tasks()) total += t.compute_s;
    EXPECT_NEAR(total, 32.0 * 32 * 32 * 27 / s.compute.flops_per_s, 1e-12);
}

TEST(SimStencilBuild, ThreeRegionsPerInnerBlockTwoAtTheEdges) {
    Fixture f;
    for (unsigned threads : {2u, 5u, 8u}) {
        const auto b = apps::build_stencil_plan(f.m, f.workers, problem(threads, PagePlacement::stencil_aware));
        // Per array: low halo, interior, high halo for inner blocks; the
        // first block has no low halo part, the last no high one.
        EXPECT_EQ(b.graph.regions().size(), 2u * (3 * threads - 2)) << threads;
    }
    // One thread: one region per array.
    auto one = apps::build_stencil_plan(f.m, f.workers, problem(1, PagePlacement::stencil_aware));
    EXPECT_EQ(one.graph.regions().size(), 2u);
}

TEST(SimStencilBuild, HomesFollowThePlacementMode) {
    Fixture f;
    const auto aware = apps::build_stencil_plan(f.m, f.workers, problem(8, PagePlacement::stencil_aware));
    for (const auto& r : aware.regions) EXPECT_EQ(r.home, f.workers[r.owner]);

    const auto serial = apps::build_stencil_plan(f.m, f.workers, problem(8, PagePlacement::serial_first_touch));
    for (const auto& r : serial.regions) EXPECT_EQ(r.home, f.workers[0]);

    // Interleave: page i of each array on the (i mod 4)-th node with memory;
    // count each node's pages independently.
    const auto inter = apps::build_stencil_plan(f.m, f.workers, problem(8, PagePlacement::interleave));
    std::vector<unsigned> mem_nodes;
    for (const auto& n : f.m.machine.nodes)
        if (n.memory_bytes > 0) mem_nodes.push_back(n.os_index);
    ASSERT_EQ(mem_nodes.size(), 4u);
    const std::size_t pages = inter.layout.pages();
    for (unsigned a = 0; a < 2; ++a) {
        std::map<unsigned, std::uint64_t> expect, got;
        for (std::size_t p = 0; p < pages; ++p) expect[mem_nodes[p % 4]] += inter.layout.page_size;
        for (const auto& r : inter.regions)
            if (r.array == a) got[r.home] += r.bytes;
        EXPECT_EQ(got, expect) << "array " << a;
    }
    // Every part is split across nodes: more regions than the aware graph.
    EXPECT_GT(inter.graph.regions().size(), aware.graph.regions().size());
}

TEST(SimStencilBuild, PinnedTasksAndBarriers) {
    Fixture f;
    const unsigned threads = 8, sweeps = 5;
    const auto b = apps::build_stencil_plan(f.m, f.workers, problem(threads, PagePlacement::stencil_aware, sweeps));
    ASSERT_EQ(b.graph.size(), std::size_t{threads} * sweeps);
    for (std::size_t k = 0; k < b.graph.size(); ++k) {
        const auto& t = b.graph.tasks()[k];
        EXPECT_EQ(t.worker, static_cast<int>(k % threads)) << k;
        EXPECT_EQ(t.hint, static_cast<int>(f.workers[k % threads])) << k;
        // The first task of every sweep but the first waits for the barrier.
        EXPECT_EQ(t.after_barrier, k % threads == 0 && k > 0) << k;
    }
}

TEST(SimStencilBuild, DependenciesNameOwnBlockAndNeighbourHalos) {
    Fixture f;
    const unsigned threads = 8, sweeps = 2;
    const auto b = apps::build_stencil_plan(f.m, f.workers, problem(threads, PagePlacement::stencil_aware, sweeps));
    const std::uint64_t halo_bytes = 1 * slab_bytes(b.layout);   // 5-point: one slab each side
    for (std::size_t k = 0; k < b.graph.size(); ++k) {
        const unsigned t = static_cast<unsigned>(k % threads);
        const unsigned src = static_cast<unsigned>(k / threads) % 2;
        std::uint64_t own_read = 0, own_written = 0;
        std::map<unsigned, std::uint64_t> foreign;   // owner -> bytes read
        for (const auto& d : b.graph.deps_of(b.graph.tasks()[k])) {
            const auto& r = b.regions[d.region];
            if (d.access == numaware::tasks::AccessMode::in) {
                EXPECT_EQ(r.array, src) << k;
                (r.owner == t ? own_read : foreign[r.owner]) += r.bytes;
            } else {
                EXPECT_EQ(d.access, numaware::tasks::AccessMode::out);
                EXPECT_EQ(r.array, 1 - src) << k;
                EXPECT_EQ(r.owner, t) << k;
                own_written += r.bytes;
            }
        }
        const st::Block own = b.partition.owned[t];
        const std::uint64_t own_bytes =
            (t + 1 == threads ? b.layout.bytes : own.hi * slab_bytes(b.layout)) - own.lo * slab_bytes(b.layout);
        EXPECT_EQ(own_read, own_bytes) << k;
        EXPECT_EQ(own_written, own_bytes) << k;
        // Exactly the neighbours' halo slabs, nothing else.
        std::map<unsigned, std::uint64_t> expect;
        if (t > 0) expect[t - 1] = halo_bytes;
        if (t + 1 < threads) expect[t + 1] = halo_bytes;
        EXPECT_EQ(foreign, expect) << k;
    }
}

TEST(SimStencilBuild, WiderStencilReadsWiderHalos) {
    Fixture f;
    auto s = problem(4, PagePlacement::stencil_aware, 1);
    s.neighbourhood = st::Neighbourhood::star(2, 3);   // radius 3 along y
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    const auto& t1 = b.graph.tasks()[1];
    std::map<unsigned, std::uint64_t> foreign;
    for (const auto& d : b.graph.deps_of(t1))
        if (d.access == numaware::tasks::AccessMode::in && b.regions[d.region].owner != 1)
            foreign[b.regions[d.region].owner] += b.regions[d.region].bytes;
    const std::map<unsigned, std::uint64_t> expect{{0, 3 * slab_bytes(b.layout)}, {2, 3 * slab_bytes(b.layout)}};
    EXPECT_EQ(foreign, expect);
}

TEST(SimStencilBuild, SmallSlabsRoundHalosToPages) {
    Fixture f;
    // 64 doubles a row = 512 B: 8 rows a page; the halo part is one page.
    apps::StencilSim s;
    s.shape = st::Shape::d2(64, 4 * 64 + 2);
    s.threads = 4;
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    ASSERT_EQ(b.layout.granule, 8u);
    for (const auto& r : b.regions) {
        EXPECT_EQ(r.offset % b.layout.page_size, 0u);
        EXPECT_EQ(r.part_bytes % b.layout.page_size, 0u);
    }
    const auto& t1 = b.graph.tasks()[1];
    for (const auto& d : b.graph.deps_of(t1))
        if (b.regions[d.region].owner != 1) {
            EXPECT_EQ(b.regions[d.region].bytes, b.layout.page_size);
        }
}

TEST(SimStencilBuild, FewerGranulesThanThreadsKeepWholePages) {
    Fixture f;
    // 16 interior rows of 512 B = 2 pages for 8 threads: most blocks are
    // empty, and thread 0 owns only the boundary row. A page belongs to the
    // thread owning its first byte, so no page is split between owners.
    apps::StencilSim s;
    s.shape = st::Shape::d2(64, 18);
    s.threads = 8;
    s.sweeps = 2;
    s.placement = PagePlacement::interleave;
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    ASSERT_EQ(b.partition.owned[0], (st::Block{0, 1}));
    std::uint64_t bytes = 0;
    for (const auto& r : b.regions) {
        bytes += r.bytes;
        EXPECT_EQ(r.offset % 4096, 0u);
        EXPECT_EQ(r.part_bytes % 4096, 0u);
    }
    EXPECT_EQ(bytes, 2 * b.layout.bytes);
    // Threads without work have tasks without dependencies or compute.
    for (unsigned t = 0; t < s.threads; ++t) {
        const auto& task = b.graph.tasks()[t];
        EXPECT_EQ(task.dep_count == 0, b.partition.work[t].size() == 0) << t;
        EXPECT_EQ(task.compute_s == 0, b.partition.work[t].size() == 0) << t;
    }
}

TEST(SimStencilBuild, ComputeFromCellsAndPoints) {
    Fixture f;
    auto s = problem(8, PagePlacement::stencil_aware, 1);
    s.compute.flops_per_s = 1e9;
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    double total = 0;
    for (const auto& t : b.graph.tasks()) total += t.compute_s;
    // Interior: (512 - 2) × 512 cells, 5 flops each.
    EXPECT_NEAR(total, 510.0 * 512.0 * 5.0 / 1e9, 1e-12);
    s.neighbourhood = st::Neighbourhood::box(2);   // 9 points
    const auto b9 = apps::build_stencil_plan(f.m, f.workers, s);
    double total9 = 0;
    for (const auto& t : b9.graph.tasks()) total9 += t.compute_s;
    EXPECT_NEAR(total9, 510.0 * 512.0 * 9.0 / 1e9, 1e-12);
}

TEST(SimStencilBuild, MigratingIsASeededPermutationPerSweep) {
    Fixture f;
    auto s = problem(6, PagePlacement::stencil_aware, 12);   // 6 threads on 8 workers
    s.migrating = true;
    s.seed = 42;
    const auto a = apps::build_stencil_plan(f.m, f.workers, s);
    const auto again = apps::build_stencil_plan(f.m, f.workers, s);
    EXPECT_EQ(a.workers, again.workers);
    bool moved = false;
    for (unsigned sweep = 0; sweep < s.sweeps; ++sweep) {
        const auto& w = a.workers[sweep];
        EXPECT_EQ(std::set<unsigned>(w.begin(), w.end()).size(), w.size()) << sweep;   // no worker twice
        for (unsigned t = 0; t < s.threads; ++t) {
            EXPECT_LT(w[t], f.workers.size());
            EXPECT_EQ(a.graph.tasks()[sweep * s.threads + t].worker, static_cast<int>(w[t]));
            if (w[t] != t) moved = true;
        }
    }
    EXPECT_TRUE(moved);
    s.seed = 43;
    EXPECT_NE(apps::build_stencil_plan(f.m, f.workers, s).workers, a.workers);
    // The pages stay where the nominal placement put them.
    for (const auto& r : a.regions) EXPECT_EQ(r.home, f.workers[r.owner]);
}

TEST(SimStencilBuild, NumaChunksUseTheSkeletonsWeights) {
    Fixture f;
    auto s = problem(8, PagePlacement::stencil_aware);
    s.numa_chunks = true;
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    const auto wp = st::numa_weights(b.layout, s.neighbourhood, b.thread_nodes, f.m.machine);
    EXPECT_EQ(b.partition.weights, wp.weights);
    EXPECT_EQ(b.weight_rule, wp.rule);
    EXPECT_EQ(b.partition.work, st::partition_weighted(b.layout, 1, wp.weights).work);
    // sim-4socket has near and far remote nodes: the inner threads read
    // remote halos and the two edge threads only one, so the cut is not equal.
    EXPECT_NE(b.partition.work, st::partition_equal(b.layout, 1, 8).work);
    const auto eq = apps::build_stencil_plan(f.m, f.workers, problem(8, PagePlacement::stencil_aware));
    EXPECT_EQ(eq.weight_rule, "equal");
}

TEST(SimStencilBuild, BadInputNamesTheField) {
    Fixture f;
    auto s = problem(8, PagePlacement::stencil_aware);
    s.threads = 0;
    EXPECT_EQ(expect_error([&] { apps::build_stencil(f.m, f.workers, s); }).field(), "threads");
    s.threads = 9;
    const Error too_many = expect_error([&] { apps::build_stencil(f.m, f.workers, s); });
    EXPECT_EQ(too_many.field(), "threads");
    EXPECT_TRUE(contains(too_many.what(), "8 workers")) << too_many.what();
    s = problem(8, PagePlacement::stencil_aware);
    s.sweeps = 0;
    EXPECT_EQ(expect_error([&] { apps::build_stencil(f.m, f.workers, s); }).field(), "sweeps");
    s = problem(8, PagePlacement::stencil_aware);
    auto bad = f.workers;
    bad[3] = 17;
    EXPECT_EQ(expect_error([&] { apps::build_stencil(f.m, bad, s); }).field(), "worker_node[3]");
    EXPECT_EQ(expect_error([&] { apps::build_stencil(f.m, {}, s); }).field(), "worker_node");
    s.neighbourhood = st::Neighbourhood::star(3);
    EXPECT_EQ(expect_error([&] { apps::build_stencil(f.m, f.workers, s); }).field(), "grid");
    s = problem(8, PagePlacement::stencil_aware);
    s.compute.flops_per_s = 0;
    EXPECT_EQ(expect_error([&] { apps::build_stencil(f.m, f.workers, s); }).field(), "flops_per_s");
    s = problem(8, PagePlacement::stencil_aware);
    sim::TimedMachine odd_pages = f.m;   // pages come from the machine model, never the host
    odd_pages.machine.page_bytes = 1000;
    EXPECT_EQ(expect_error([&] { apps::build_stencil(odd_pages, f.workers, s); }).field(), "page_bytes");
    EXPECT_EQ(apps::parse_stencil_placement("serial-first-touch"), PagePlacement::serial_first_touch);
    const Error unknown = expect_error([] { apps::parse_stencil_placement("numa", "--placement"); });
    EXPECT_EQ(unknown.field(), "--placement");
    EXPECT_TRUE(contains(unknown.what(), "stencil-aware")) << unknown.what();
}

// ---------------------------------------------------------------------
// Simulated: placement modes, migration, chunks, automatic NUMA balancing
// ---------------------------------------------------------------------

namespace {

sim::SimReport run(const Fixture& f, const apps::StencilSim& s, sim::BalancingModel balancing = {},
                   sim::Contention contention = sim::Contention::snapshot) {
    sim::SimOptions o;
    o.mapping = f.mapping;
    o.balancing = balancing;
    o.contention = contention;
    return sim::simulate(f.m, apps::build_stencil(f.m, f.workers, s), "dfifo", o);
}

void print(const std::string& what, const sim::SimReport& r) {
    std::printf("  %-44s makespan %9.1f us  cross-node %10llu B of %10llu B  migrated %9llu B  faults %6llu  (%s)\n",
                what.c_str(), r.run.makespan_s * 1e6, static_cast<unsigned long long>(r.run.cross_node_bytes),
                static_cast<unsigned long long>(r.run.dep_bytes), static_cast<unsigned long long>(r.migrated_bytes),
                static_cast<unsigned long long>(r.hinting_faults), r.label.c_str());
}

}  // namespace

TEST(SimStencilPlacement, StencilAwareMovesOnlyTheHalosAndIsFastest) {
    Fixture f;
    const unsigned threads = 8, sweeps = 10;
    const auto aware = run(f, problem(threads, PagePlacement::stencil_aware, sweeps));
    const auto serial = run(f, problem(threads, PagePlacement::serial_first_touch, sweeps));
    const auto inter = run(f, problem(threads, PagePlacement::interleave, sweeps));
    print("stencil-aware", aware);
    print("serial-first-touch", serial);
    print("interleave", inter);
    for (const auto* r : {&aware, &serial, &inter}) {
        EXPECT_TRUE(contains(r->label, "simulated")) << r->label;
        EXPECT_TRUE(contains(r->label, f.m.name)) << r->label;
        EXPECT_EQ(r->run.tasks, std::uint64_t{threads} * sweeps);
        EXPECT_EQ(r->run.dep_bytes, aware.run.dep_bytes);   // the same work, only the homes differ
    }
    EXPECT_LT(aware.run.cross_node_bytes, serial.run.cross_node_bytes);
    EXPECT_LT(aware.run.cross_node_bytes, inter.run.cross_node_bytes);
    EXPECT_LT(aware.run.makespan_s, serial.run.makespan_s);
    EXPECT_LT(aware.run.makespan_s, inter.run.makespan_s);

    // Halo arithmetic: a row is one page (512 doubles); each thread reads
    // one halo row from each neighbour, cross-node when the neighbour runs
    // on another node. Nothing else is remote.
    const std::uint64_t row = 512 * sizeof(double);
    std::uint64_t expect = 0;
    for (unsigned t = 0; t + 1 < threads; ++t)
        if (f.workers[t] != f.workers[t + 1]) expect += 2 * row;   // t reads t+1's row and t+1 reads t's
    expect *= sweeps;
    EXPECT_EQ(aware.run.cross_node_bytes, expect);
    EXPECT_EQ(expect, 10u * 3 * 2 * 4096);   // 3 node boundaries in the cut
    // Serial first touch: every byte of the threads off node 0 is remote.
    const auto b = apps::build_stencil_plan(f.m, f.workers, problem(threads, PagePlacement::serial_first_touch, sweeps));
    std::uint64_t off_node = 0;
    for (const auto& t : b.graph.tasks())
        if (f.workers[static_cast<unsigned>(t.worker)] != f.workers[0])
            for (const auto& d : b.graph.deps_of(t)) off_node += b.graph.regions()[d.region].bytes;
    EXPECT_EQ(serial.run.cross_node_bytes, off_node);
}

TEST(SimStencilPlacement, ExactContentionOrdersThePlacementsTheSameWay) {
    Fixture f;
    const auto exact = sim::Contention::exact;
    const auto aware = run(f, problem(8, PagePlacement::stencil_aware, 4), {}, exact);
    const auto serial = run(f, problem(8, PagePlacement::serial_first_touch, 4), {}, exact);
    const auto inter = run(f, problem(8, PagePlacement::interleave, 4), {}, exact);
    print("stencil-aware (exact contention)", aware);
    print("serial-first-touch (exact contention)", serial);
    print("interleave (exact contention)", inter);
    EXPECT_EQ(aware.contention, "exact");
    EXPECT_LT(aware.run.cross_node_bytes, serial.run.cross_node_bytes);
    EXPECT_LT(aware.run.makespan_s, serial.run.makespan_s);
    EXPECT_LT(aware.run.makespan_s, inter.run.makespan_s);
}

TEST(SimStencilMigration, MigratingThreadsAreSlowerThanPinned) {
    Fixture f;
    auto s = problem(8, PagePlacement::stencil_aware, 10);
    const auto pinned = run(f, s);
    s.migrating = true;
    s.seed = 7;
    const auto moving = run(f, s);
    print("stencil-aware, pinned", pinned);
    print("stencil-aware, migrating (seed 7)", moving);
    EXPECT_GT(moving.run.cross_node_bytes, pinned.run.cross_node_bytes);
    EXPECT_GT(moving.run.makespan_s, pinned.run.makespan_s);
}

TEST(SimStencilChunks, NumaChunksAgainstEqualChunks) {
    Fixture f;
    // Radius-3 stencil, few slabs per thread: the remote halos are a large
    // share of the work, so the weighted cut moves whole slabs.
    apps::StencilSim s;
    s.shape = st::Shape::d2(512, 8 * 32 + 6);
    s.neighbourhood = st::Neighbourhood::star(2, 3);
    s.threads = 8;
    s.sweeps = 10;
    const auto eq_plan = apps::build_stencil_plan(f.m, f.workers, s);
    const auto eq = run(f, s);
    s.numa_chunks = true;
    const auto nw_plan = apps::build_stencil_plan(f.m, f.workers, s);
    const auto nw = run(f, s);
    print("stencil-aware, equal chunks", eq);
    print("stencil-aware, NUMA-weighted chunks", nw);
    std::printf("  weights:");
    for (double w : nw_plan.partition.weights) std::printf(" %.3f", w);
    std::printf("\n  %s\n", nw_plan.weight_rule.c_str());
    // What the model guarantees: the weights differ from equal where remote
    // costs differ (edge threads read no remote halo and get more), the cut
    // follows them, and the same cells are updated.
    EXPECT_GT(nw_plan.partition.weights.front(), 1.0);
    EXPECT_GT(nw_plan.partition.weights.back(), 1.0);
    EXPECT_NE(nw_plan.partition.work, eq_plan.partition.work);
    double c_eq = 0, c_nw = 0;
    for (const auto& t : eq_plan.graph.tasks()) c_eq += t.compute_s;
    for (const auto& t : nw_plan.graph.tasks()) c_nw += t.compute_s;
    EXPECT_NEAR(c_eq, c_nw, 1e-12 * c_eq);
    EXPECT_EQ(eq.run.dep_bytes, nw.run.dep_bytes);
}

namespace {

// Nodes whose tasks touch each region of a pinned graph.
std::vector<std::set<unsigned>> users_of(const sim::Graph& g, const std::vector<unsigned>& worker_node) {
    std::vector<std::set<unsigned>> users(g.regions().size());
    for (const auto& t : g.tasks())
        for (const auto& d : g.deps_of(t)) users[d.region].insert(worker_node[static_cast<unsigned>(t.worker)]);
    return users;
}

// A scan period shorter than any sweep (the compute alone of a sweep is
// 64 × 510 × 5 flops / 4 GFLOP/s ≈ 41 us), so every region a sweep
// touches is marked again before the next sweep touches it.
sim::BalancingModel balancing_on() {
    sim::BalancingModel on;
    on.enabled = true;
    on.scan_period_s = 20e-6;
    return on;
}

}  // namespace

TEST(SimStencilBalancing, SerialFirstTouchPagesMoveTowardTheirUsers) {
    Fixture f;
    const auto s = problem(8, PagePlacement::serial_first_touch, 200);
    const auto off = run(f, s);
    const auto bal = run(f, s, balancing_on());
    print("serial-first-touch, balancing off", off);
    print("serial-first-touch, balancing on", bal);
    EXPECT_EQ(off.migrated_bytes, 0u);
    EXPECT_EQ(off.hinting_faults, 0u);
    EXPECT_GT(bal.hinting_faults, 0u);
    EXPECT_LT(bal.run.cross_node_bytes, off.run.cross_node_bytes);
    // A region that only one remote node touches takes two faults in a row
    // from it and must move; a region no remote node touches cannot.
    const auto b = apps::build_stencil_plan(f.m, f.workers, s);
    const auto users = users_of(b.graph, f.workers);
    std::uint64_t must = 0, may = 0;
    for (std::size_t r = 0; r < users.size(); ++r) {
        const unsigned home = b.regions[r].home;
        if (users[r].size() == 1 && *users[r].begin() != home) must += b.regions[r].bytes;
        if (std::any_of(users[r].begin(), users[r].end(), [&](unsigned n) { return n != home; }))
            may += b.regions[r].bytes;
    }
    EXPECT_GT(must, 0u);
    EXPECT_GE(bal.migrated_bytes, must);
    EXPECT_LE(bal.migrated_bytes, may);
}

TEST(SimStencilBalancing, StencilAwareHaloPagesStayPut) {
    Fixture f;
    const auto s = problem(8, PagePlacement::stencil_aware, 200);
    const auto off = run(f, s);
    const auto bal = run(f, s, balancing_on());
    print("stencil-aware, balancing off", off);
    print("stencil-aware, balancing on", bal);
    // Only halo regions are touched from another node. Double-buffered: a
    // halo region is read by owner and neighbour in one sweep and written by
    // its owner alone in the next, so a local fault comes between any two
    // remote ones and the "two in a row from the same remote node" rule
    // never fires: no migration, no ping-pong; only the fault cost remains.
    EXPECT_GT(bal.hinting_faults, 0u);
    EXPECT_EQ(bal.migrated_bytes, 0u);
    EXPECT_EQ(bal.run.cross_node_bytes, off.run.cross_node_bytes);
    EXPECT_GE(bal.run.makespan_s, off.run.makespan_s);
}

TEST(SimStencilBalancing, ExactContentionRunsTheModelToo) {
    Fixture f;
    const auto s = problem(8, PagePlacement::serial_first_touch, 20);
    const auto off = run(f, s, {}, sim::Contention::exact);
    const auto on = run(f, s, balancing_on(), sim::Contention::exact);
    EXPECT_EQ(off.migrated_bytes, 0u);
    EXPECT_GT(on.migrated_bytes, 0u);
    EXPECT_GT(on.hinting_faults, 0u);
    EXPECT_LT(on.run.cross_node_bytes, off.run.cross_node_bytes);
    // Stencil-aware with the scans between flows (a scan event while the
    // network is idle must not move its clock backwards).
    const auto aware = run(f, problem(8, PagePlacement::stencil_aware, 10), balancing_on(), sim::Contention::exact);
    EXPECT_EQ(aware.migrated_bytes, 0u);
    EXPECT_GT(aware.hinting_faults, 0u);
}
