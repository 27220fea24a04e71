// Tests for the Rodinia-like kernels of the memory-hierarchy simulator
// (sim/memory/rodinia_kernels.hpp): at class S on thesis-4s with 16
// threads, each kernel runs with its named phases, its access count is the
// count its sizes (and, for the drawn inputs, the graph, mesh or plan the
// header exposes) give, its init phase first-touches each thread's share
// (the homes spread over the four sockets), and one property of its
// pattern holds. No published figure is asserted.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "sim_memory_census.hpp"
#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "numaware/team.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/rodinia_kernels.hpp"

namespace mem = numaware::sim::memory;
namespace rod = numaware::sim::memory::rodinia;
using mem::detail::array_of;
using mem::detail::base_of;
using numaware::test::expect_error;
using namespace numaware::test::memsim;   // census, share, threads, page (sim_memory_census.hpp)

namespace {

constexpr unsigned sockets = 4;

// Every access of every phase of `w` on thesis-4s, 16 threads, contiguous:
// fn(phase, rank, access), ranks one after the other.
void walk(const mem::Workload& w, const std::function<void(unsigned, unsigned, const mem::Access&)>& fn) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    numaware::TeamMapping tm;
    tm.threads = threads;
    const numaware::TeamLayout layout = numaware::plan_team(p.timed.machine, tm);
    std::vector<mem::Access> buf(4096);
    for (unsigned ph = 0; ph < w.phases(); ++ph) {
        std::vector<mem::ThreadStream> streams = w.streams(ph, p, layout);
        for (unsigned r = 0; r < streams.size(); ++r)
            for (std::size_t n; (n = streams[r].stream->next(buf)) != 0;)
                for (std::size_t i = 0; i < n; ++i) fn(ph, r, buf[i]);
    }
}

// The measured phases' names, in order.
std::vector<std::string> measured_phases(const mem::Workload& w) {
    std::vector<std::string> v;
    for (unsigned ph = 0; ph < w.phases(); ++ph)
        if (w.measured(ph)) v.push_back(w.phase_name(ph));
    return v;
}

// Init first-touches each thread's share: every page the measured phases
// use was touched by init; init's stores land on a page another socket got
// first only where two sockets' shares meet in one page: at most
// sockets - 1 such pages in each of the `ranges` contiguous arrays (or
// array components) init writes, each taking at most a store a line; and
// every socket homes at least an eighth of the pages.
void expect_shares_first_touched(const Census& c, unsigned ranges) {
    EXPECT_GT(c.measured, 0u);
    EXPECT_EQ(c.report.accesses, c.measured);
    EXPECT_EQ(c.unhomed, 0u) << "accesses to pages init did not touch";
    EXPECT_GT(c.init_accesses, 0u);
    EXPECT_LE(c.init_foreign, ranges * (sockets - 1) * (page / 64)) << "of " << c.init_accesses;
    for (unsigned s = 0; s < sockets; ++s) {
        const auto it = c.homes.find(s);
        EXPECT_GE((it == c.homes.end() ? 0 : it->second) * 8, c.pages) << "socket " << s;
    }
}

}  // namespace

// ---- names and sizes ---------------------------------------------------------------

TEST(SimMemoryRodinia, SpecsNameTheClass) {
    for (const char* k : {"bfs", "hotspot", "kmeans", "lud", "nw", "pathfinder", "streamcluster", "cfd"}) {
        EXPECT_EQ(mem::make_workload(std::string(k) + ":S")->name(), std::string(k) + ":S");
        EXPECT_EQ(rod::make_rodinia_kernel(k)->name(), std::string(k) + ":W") << "W is the default";
    }
    EXPECT_EQ(rod::make_rodinia_kernel("cg"), nullptr);
    EXPECT_EQ(rod::make_rodinia_kernel("bfsx"), nullptr);
}

TEST(SimMemoryRodinia, BadSizesNameTheField) {
    expect_error([] { mem::make_workload("bfs:A"); }, "workload",
                 "'bfs:A': SIZE must be a class letter, S (tiny) or W (the default), got 'A'");
    expect_error([] { mem::make_workload("rodinia"); }, "workload",
                 "cg|mg|ft|is|lu|bt|sp|ep[:S|W|A], bfs|hotspot|kmeans|lud|nw|pathfinder|streamcluster|cfd[:S|W]");
    expect_error([] { rod::make_hotspot({100, 128, 2}, "hotspot:x"); }, "workload", "multiples of 16");
    expect_error([] { rod::make_kmeans({1024, 20, 5, 1}, "kmeans:x"); }, "workload", "features must be a multiple of 8");
    expect_error([] { rod::make_lud({256, 16}, "lud:x"); }, "workload", "steps must be 1 to n / 16 - 1");
    expect_error([] { rod::make_nw({100, 16}, "nw:x"); }, "workload", "n must be a multiple of block");
    expect_error([] { rod::make_pathfinder({1022, 8}, "pathfinder:x"); }, "workload", "cols must be a multiple of 4");
    expect_error([] { rod::make_streamcluster({16, 64, 10, 7}, "streamcluster:x"); }, "workload",
                 "centres + candidates at most points");
    expect_error([] { rod::make_cfd({1024, 0}, "cfd:x"); }, "workload", "bandwidth must be 1 to elements");
    expect_error([] { rod::make_bfs({1024, 0}, "bfs:x"); }, "workload", "mean_degree must be 1 to 64");
}

// ---- per kernel at class S -------------------------------------------------------------

// Levels by the test's own search; per level the frontier's edges, the
// unvisited neighbours' cost and flag, the next level's four stores; every
// neighbour gather is marked dependent and reads the visited flag of the
// neighbour the edge load before it read.
TEST(SimMemoryRodinia, BfsExpandsLevelByLevel) {
    const rod::BfsSize s = rod::bfs_size('S');
    const rod::BfsGraph g = rod::bfs_graph(s);
    const std::uint64_t n = s.nodes;
    std::vector<int> level(n, -1);
    level[0] = 0;
    int deepest = 0;
    for (std::deque<std::uint64_t> q{0}; !q.empty(); q.pop_front())
        for (std::uint64_t e = g.first[q.front()]; e < g.first[q.front() + 1]; ++e)
            if (level[g.edges[e]] < 0) {
                level[g.edges[e]] = level[q.front()] + 1;
                deepest = std::max(deepest, level[g.edges[e]]);
                q.push_back(g.edges[e]);
            }
    std::uint64_t want = 0, reached_edges = 0;
    for (int l = 0; l <= deepest; ++l) {
        want += 2 * n;
        for (std::uint64_t i = 0; i < n; ++i) {
            if (level[i] == l + 1) want += 4;
            if (level[i] != l) continue;
            want += 3;
            for (std::uint64_t e = g.first[i]; e < g.first[i + 1]; ++e) want += 2 + (level[g.edges[e]] == l + 1 ? 3 : 0);
            reached_edges += g.first[i + 1] - g.first[i];
        }
    }
    const auto w = mem::make_workload("bfs:S");
    const std::vector<std::string> phases = measured_phases(*w);
    ASSERT_EQ(phases.size(), 2u * static_cast<unsigned>(deepest + 1));
    EXPECT_EQ(phases.front(), "iter1:expand");
    EXPECT_EQ(phases.back(), fmt::format("iter{}:update", deepest + 1));
    const Census& c = census("bfs:S");
    EXPECT_EQ(c.measured, want);
    expect_shares_first_touched(c, 7);
    enum { nodes, edges, mask, updating, visited, cost, stop };
    std::uint64_t gathers = 0, undeclared = 0;
    mem::Access prev;
    walk(*w, [&](unsigned, unsigned, const mem::Access& a) {
        if (array_of(a.addr) == visited && !a.write) {
            ++gathers;
            const bool after_edge = array_of(prev.addr) == edges && !prev.write;
            const std::uint64_t id = after_edge ? g.edges[(prev.addr - base_of(edges)) / 4] : n;
            if (!a.dependent || !after_edge || a.addr != base_of(visited) + id) ++undeclared;
        }
        prev = a;
    });
    EXPECT_EQ(gathers, reached_edges);
    EXPECT_EQ(undeclared, 0u);
    // A socket's nodes are whole pages of the node array: a frontier node's
    // record is local; its neighbours are anywhere.
    EXPECT_EQ(c.of("expand", nodes).remote, 0u);
}

// Per point the power, its own temperature and its four neighbours', one
// store; odd steps read the temperature grid into the result grid, even
// steps the reverse. Sockets own 32 whole rows of pages each: only the
// north and south loads across the 3 socket boundaries are remote.
TEST(SimMemoryRodinia, HotspotReadsFiveNeighboursAPoint) {
    const rod::HotspotSize s = rod::hotspot_size('S');
    const std::uint64_t rows = s.rows, cols = s.cols, points = rows * cols;
    const auto w = mem::make_workload("hotspot:S");
    EXPECT_EQ(measured_phases(*w), (std::vector<std::string>{"iter1:stencil", "iter2:stencil"}));
    const Census& c = census("hotspot:S");
    EXPECT_EQ(c.measured, s.iterations * 7 * points);
    expect_shares_first_touched(c, 3);
    EXPECT_EQ(c.remote, s.iterations * 2 * (sockets - 1) * cols);
    enum { temp, power, result };
    std::map<unsigned, std::map<unsigned, std::uint64_t>> loads, stores;   // [phase][array]
    std::uint64_t interior = 0, five_neighbours = 0;
    std::vector<mem::Access> point;
    walk(*w, [&](unsigned ph, unsigned, const mem::Access& a) {
        ++(a.write ? stores : loads)[ph][array_of(a.addr)];
        if (ph == 0) return;   // init
        point.push_back(a);
        if (point.size() < 7) return;
        // power, centre, then north, south, east, west of the centre.
        const std::uint64_t centre = point[1].addr, cell = (centre - base_of(array_of(centre))) / 8;
        const std::uint64_t y = cell / cols, x = cell % cols;
        if (y > 0 && y + 1 < rows && x > 0 && x + 1 < cols) {
            ++interior;
            const std::int64_t row = static_cast<std::int64_t>(cols * 8);
            const std::int64_t want[] = {-row, row, 8, -8};
            bool ok = true;
            for (unsigned k = 0; k < 4; ++k)
                ok = ok && static_cast<std::int64_t>(point[2 + k].addr - centre) == want[k] && !point[2 + k].write;
            if (ok) ++five_neighbours;
        }
        point.clear();
    });
    EXPECT_EQ(interior, s.iterations * (rows - 2) * (cols - 2));
    EXPECT_EQ(five_neighbours, interior);
    // The ping-pong.
    EXPECT_EQ(loads[1][temp], 5 * points);
    EXPECT_EQ(stores[1][result], points);
    EXPECT_EQ(loads[1][result] + stores[1][temp], 0u);
    EXPECT_EQ(loads[2][result], 5 * points);
    EXPECT_EQ(stores[2][temp], points);
    EXPECT_EQ(loads[2][temp] + stores[2][result], 0u);
    EXPECT_EQ(loads[1][power] + loads[2][power], 2 * points);
}

// Per point: its features against every centre (8 floats a load), its
// membership, one centre's partial count and sums in the thread's own row;
// the reduction is thread 0's. Each thread's points and memberships are
// whole pages of its socket; the centres are thread 0's.
TEST(SimMemoryRodinia, KmeansAssignsEachPointToOneCentre) {
    const rod::KmeansSize s = rod::kmeans_size('S');
    const std::uint64_t n = s.points, k = s.clusters, v = s.features / 8;
    const auto w = mem::make_workload("kmeans:S");
    EXPECT_EQ(measured_phases(*w),
              (std::vector<std::string>{"iter1:assign", "iter1:reduce", "iter2:assign", "iter2:reduce"}));
    const Census& c = census("kmeans:S");
    EXPECT_EQ(c.measured, s.iterations * (n * (2 * k * v + 4 + 3 * v) + threads * k * (4 + 4 * v) + k * (2 + 3 * v)));
    expect_shares_first_touched(c, 7);
    enum { features, membership, centres, partial_len, partial_sums, new_len, new_centres };
    EXPECT_EQ(c.of("assign", features).accesses, s.iterations * n * v * (k + 1));
    EXPECT_EQ(c.of("assign", centres).accesses, s.iterations * n * v * k);
    EXPECT_EQ(c.of("assign", features).remote, 0u);
    EXPECT_EQ(c.of("assign", membership).remote, 0u);
    EXPECT_DOUBLE_EQ(share(c.of("assign", centres)), 0.75);
    EXPECT_EQ(c.stride.at("assign").at(206), 32);   // 8 floats a load, point after point
    // Partial sums: each thread in its own row; the reduction is thread 0's alone.
    const std::uint64_t row_bytes = k * s.features * 4;
    std::uint64_t foreign_rows = 0, reducers = 0;
    walk(*w, [&](unsigned ph, unsigned r, const mem::Access& a) {
        const std::string name = w->phase_name(ph);
        if (name.ends_with(":assign") && array_of(a.addr) == partial_sums && (a.addr - base_of(partial_sums)) / row_bytes != r)
            ++foreign_rows;
        if (name.ends_with(":reduce") && r != 0) ++reducers;
    });
    EXPECT_EQ(foreign_rows, 0u);
    EXPECT_EQ(reducers, 0u);
}

// Block rows of 64 B, one line each; step d works on the trailing matrix
// from block d on and stores each of its m² internal blocks' 16 rows once.
TEST(SimMemoryRodinia, LudStepsWorkOnTheTrailingMatrix) {
    const rod::LudSize s = rod::lud_size('S');
    const std::uint64_t n = s.n, nb = n / 16;
    std::uint64_t want = 0;
    std::vector<std::string> names;
    for (std::uint64_t d = 0; d < s.steps; ++d) {
        const std::uint64_t m = nb - d - 1;
        want += 152 + 80 * m + 64 * m * m;
        for (const char* kind : {"diagonal", "perimeter", "internal"}) names.push_back(fmt::format("iter{}:{}", d + 1, kind));
    }
    const auto w = mem::make_workload("lud:S");
    EXPECT_EQ(measured_phases(*w), names);
    const Census& c = census("lud:S");
    EXPECT_EQ(c.measured, want);
    expect_shares_first_touched(c, 1);
    std::uint64_t misshapen = 0, outside = 0, off_thread = 0;
    std::map<std::string, std::set<std::uint64_t>> stored;   // internal phase -> rows stored
    walk(*w, [&](unsigned ph, unsigned r, const mem::Access& a) {
        if (a.size != 64 || (a.addr - base_of(0)) % 64 != 0) ++misshapen;
        if (ph == 0) return;
        const std::uint64_t d = (ph - 1) / 3, kind = (ph - 1) % 3, cell = (a.addr - base_of(0)) / 4;
        if (cell / n < d * 16 || cell % n < d * 16) ++outside;
        if (kind == 0 && r != 0) ++off_thread;
        if (kind == 2 && a.write) stored[w->phase_name(ph)].insert(cell);
    });
    EXPECT_EQ(misshapen, 0u);
    EXPECT_EQ(outside, 0u);
    EXPECT_EQ(off_thread, 0u) << "the diagonal block is thread 0's";
    for (std::uint64_t d = 0; d < s.steps; ++d) {
        const std::uint64_t m = nb - d - 1;
        EXPECT_EQ(stored[fmt::format("iter{}:internal", d + 1)].size(), m * m * 16) << d;
    }
}

// One phase per anti-diagonal of tiles: phase d stores exactly the cells of
// the tiles whose row and column add up to d, every cell once over the
// run, and loads only cells stored before (in an earlier phase or earlier
// in its own tile) or the gap-penalty row and column.
TEST(SimMemoryRodinia, NwPhasesFollowAntiDiagonals) {
    const rod::NwSize s = rod::nw_size('S');
    const std::uint64_t n = s.n, b = s.block, tiles = n / b, cols = n + 1;
    std::vector<std::string> names;
    for (std::uint64_t d = 0; d + 1 < 2 * tiles; ++d) names.push_back(fmt::format("iter1:wavefront:h{}", d));
    const auto w = mem::make_workload("nw:S");
    EXPECT_EQ(measured_phases(*w), names);
    const Census& c = census("nw:S");
    EXPECT_EQ(c.measured, tiles * tiles * b * (2 + 3 * b));
    expect_shares_first_touched(c, 2);
    enum { score, reference };
    std::vector<int> stored_in(cols * cols, -1);   // the phase that stored each score cell
    std::uint64_t off_diagonal = 0, twice = 0, early = 0;
    walk(*w, [&](unsigned ph, unsigned, const mem::Access& a) {
        if (ph == 0 || array_of(a.addr) != score) return;
        const std::uint64_t cell = (a.addr - base_of(score)) / 4, i = cell / cols, j = cell % cols;
        const int d = static_cast<int>(ph) - 1;
        if (a.write) {
            if ((i - 1) / b + (j - 1) / b != static_cast<std::uint64_t>(d)) ++off_diagonal;
            if (stored_in[cell] >= 0) ++twice;
            stored_in[cell] = d;
        } else if (i > 0 && j > 0 && (stored_in[cell] < 0 || stored_in[cell] > d)) {
            ++early;
        }
    });
    EXPECT_EQ(off_diagonal, 0u);
    EXPECT_EQ(twice, 0u);
    EXPECT_EQ(early, 0u);
    std::uint64_t never = 0;
    for (std::uint64_t i = 1; i <= n; ++i)
        for (std::uint64_t j = 1; j <= n; ++j) never += stored_in[i * cols + j] < 0 ? 1 : 0;
    EXPECT_EQ(never, 0u);
    // A tile's owner changes along the wavefront: no cut of the rows keeps it local.
    EXPECT_GT(share(c.of("wavefront", score)), 0.25);
}

// Row t reads row t of the wall and the buffer row t - 1 went into, and
// writes the other buffer, each of its cells once; sockets own whole
// pages of every row, so only the left-shifted load of each socket's first
// vector (3 boundaries) is remote.
TEST(SimMemoryRodinia, PathfinderRowsPingPong) {
    const rod::PathfinderSize s = rod::pathfinder_size('S');
    const std::uint64_t cols = s.cols, rows = s.rows;
    std::vector<std::string> names;
    for (std::uint64_t t = 1; t < rows; ++t) names.push_back(fmt::format("iter1:dp-row:h{}", t));
    const auto w = mem::make_workload("pathfinder:S");
    EXPECT_EQ(measured_phases(*w), names);
    const Census& c = census("pathfinder:S");
    EXPECT_EQ(c.measured, (rows - 1) * 5 * cols / 4);
    expect_shares_first_touched(c, static_cast<unsigned>(rows) + 2);
    EXPECT_EQ(c.remote, (sockets - 1) * (rows - 1));
    enum { wall, row_a, row_b };
    std::uint64_t wrong_row = 0, wrong_buffer = 0;
    std::map<unsigned, std::set<std::uint64_t>> written;
    walk(*w, [&](unsigned ph, unsigned, const mem::Access& a) {
        if (ph == 0) return;
        const unsigned src = ph % 2 == 1 ? row_a : row_b, dst = ph % 2 == 1 ? row_b : row_a, arr = array_of(a.addr);
        if (arr == wall && (a.addr - base_of(wall)) / (cols * 4) != ph) ++wrong_row;
        if (arr != wall && (a.write ? arr != dst : arr != src)) ++wrong_buffer;
        if (a.write) written[ph].insert(a.addr);
    });
    EXPECT_EQ(wrong_row, 0u);
    EXPECT_EQ(wrong_buffer, 0u);
    for (unsigned t = 1; t < rows; ++t) EXPECT_EQ(written[t].size(), cols / 4) << t;
}

// Per call: the centre-table pass loads every is-centre flag and clears
// every switch flag once; a point that switches stores its flag in gain
// and its cost and centre in switch; the others' savings go through their
// centre's number: centre then number then slot, each address from the
// load before it (dependent).
TEST(SimMemoryRodinia, StreamclusterGainThroughTheCentreTable) {
    const rod::StreamclusterSize s = rod::streamcluster_size('S');
    const std::vector<rod::StreamclusterCall> plan = rod::streamcluster_plan(s);
    const std::uint64_t n = s.points, q = s.dims / 4;
    std::uint64_t want = 0, switching = 0;
    std::vector<std::string> names;
    for (unsigned k = 0; k < plan.size(); ++k) {
        const std::uint64_t K = plan[k].centres.size();
        const std::uint64_t M = static_cast<std::uint64_t>(std::count(plan[k].moves.begin(), plan[k].moves.end(), true));
        EXPECT_EQ(K, s.centres + k);
        switching += M;
        want += threads * (K + 1) + 2 * n + K;                   // centre-table
        want += n * (3 + q) + M + 4 * (n - M);                    // gain
        want += (K + 1) * (threads + 1);                          // reduce
        want += 5 * n + M * (4 + q) + 2 * K + 1;                  // switch
        for (const char* kind : {"centre-table", "gain", "reduce", "switch"}) names.push_back(fmt::format("iter{}:{}", k + 1, kind));
    }
    const auto w = mem::make_workload("streamcluster:S");
    EXPECT_EQ(measured_phases(*w), names);
    const Census& c = census("streamcluster:S");
    EXPECT_EQ(c.measured, want);
    expect_shares_first_touched(c, 7);
    enum { coords, records, is_center, center_table, switch_flags, savings, summed };
    EXPECT_EQ(c.of("centre-table", is_center).accesses, plan.size() * n);
    EXPECT_EQ(c.of("centre-table", switch_flags).accesses, plan.size() * n);
    EXPECT_EQ(c.of("gain", switch_flags).accesses, switching);
    EXPECT_EQ(c.of("switch", switch_flags).accesses, plan.size() * n);
    EXPECT_EQ(c.of("gain", records).remote, 0u) << "a thread's own records";
    std::uint64_t chains = 0, broken = 0;
    mem::Access prev;
    walk(*w, [&](unsigned ph, unsigned, const mem::Access& a) {
        if (w->phase_name(ph).ends_with(":gain") && !a.write && array_of(a.addr) == savings) {
            ++chains;
            if (!a.dependent || array_of(prev.addr) != center_table || !prev.dependent) ++broken;
        }
        prev = a;
    });
    EXPECT_EQ(chains, plan.size() * n - switching);
    EXPECT_EQ(broken, 0u);
}

// The mesh is symmetric; every face to a cell leads to a gather of that
// cell's variables right after the neighbour's load, marked dependent; the
// copy is cut over 5 × cells elements, not the cells' cut, so it reads and
// writes other sockets' cells where the cell loops stay local.
TEST(SimMemoryRodinia, CfdGathersNeighboursThroughTheMesh) {
    const rod::CfdSize s = rod::cfd_size('S');
    const rod::CfdMesh mesh = rod::cfd_mesh(s);
    const std::uint64_t n = s.elements;
    std::uint64_t interior = 0, asymmetric = 0;
    for (std::uint64_t f = 0; f < 4; ++f)
        for (std::uint64_t i = 0; i < n; ++i) {
            const std::int32_t nb = mesh.neighbours[f * n + i];
            if (nb < 0) continue;
            ++interior;
            bool back = false;
            for (std::uint64_t g = 0; g < 4; ++g) back = back || mesh.neighbours[g * n + nb] == static_cast<std::int32_t>(i);
            if (!back) ++asymmetric;
        }
    EXPECT_EQ(asymmetric, 0u);
    EXPECT_GT(interior, 4 * n * 9 / 10);
    std::vector<std::string> names{"iter1:copy", "iter1:step-factor"};
    for (unsigned st = 1; st <= s.rk_stages; ++st)
        for (const char* kind : {"flux", "time-step"}) names.push_back(fmt::format("iter1:rk{}:{}", st, kind));
    const auto w = mem::make_workload("cfd:S");
    EXPECT_EQ(measured_phases(*w), names);
    const Census& c = census("cfd:S");
    EXPECT_EQ(c.measured, s.iterations * (17 * n + s.rk_stages * (42 * n + 5 * interior)));
    expect_shares_first_touched(c, 33);
    enum { variables, saved, fluxes, step_factors, areas, neighbours, normals };
    std::uint64_t gathers = 0, wrong = 0;
    mem::Access prev;
    walk(*w, [&](unsigned, unsigned, const mem::Access& a) {
        if (array_of(prev.addr) == neighbours && !prev.write) {
            const std::int32_t nb = mesh.neighbours[(prev.addr - base_of(neighbours)) / 4];
            if (nb >= 0) {
                ++gathers;
                if (!a.dependent || a.addr != base_of(variables) + static_cast<std::uint64_t>(nb) * 8) ++wrong;
            } else if (a.dependent) {
                ++wrong;
            }
        }
        prev = a;
    });
    EXPECT_EQ(gathers, s.iterations * s.rk_stages * interior);
    EXPECT_EQ(wrong, 0u);
    // Cells: a socket's n / 4 cells are whole pages of every array.
    for (const char* kind : {"step-factor", "rk1:time-step"}) EXPECT_EQ(c.of(kind).remote, 0u) << kind;
    // Copy element e of thread t's share is cell e mod n, homed on that cell's socket.
    std::uint64_t remote = 0;
    for (unsigned t = 0; t < threads; ++t) {
        const mem::detail::Range r = mem::detail::static_block(5 * n, threads, t);
        for (std::uint64_t e = r.begin; e < r.end; ++e) remote += (e % n) / (n / sockets) != t / (threads / sockets) ? 1 : 0;
    }
    EXPECT_EQ(c.of("copy").remote, 2 * remote);
    EXPECT_GT(remote, 0u);
}
