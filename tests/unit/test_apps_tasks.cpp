// tests/unit/test_tasks_apps.cpp — the task-runtime applications
// (apps/<name>/program.cpp) against their serial references, under every policy, on a
// 2-node synthetic team; plus their size checks and shared helpers.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apps/programs.hpp"
#include "apps/common/task_program.hpp"
#include "apps/common/stencil_kernels.hpp"
#include "apps/nstream/nstream.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"
#include "support.hpp"

namespace numaware::apps {
namespace {

using numaware::test::contains;
using numaware::test::expect_error;

// Rank 0 on CPU 0 (node 0), rank 1 on CPU 1 (node 1): works on any host
// with two CPUs, and the policies see two nodes.
const Machine& two_nodes() {
    static const Machine m = Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10");
    return m;
}

std::unique_ptr<Team> two_node_team() {
    return std::make_unique<Team>(two_nodes(), TeamMapping{.threads = 2, .kind = MappingKind::scatter});
}

std::unique_ptr<tasks::Runtime> runtime(Team& team, std::string_view policy) {
    // Homes follow the writer's synthetic node, not this host's one node.
    return std::make_unique<tasks::Runtime>(team, policy, tasks::PolicyOptions{.seed = 7},
                                            tasks::RuntimeOptions{.kernel_homes = false});
}

// ---- every app x every policy ------------------------------------------

struct Case {
    std::string app;
    std::string policy;
};

std::vector<Case> all_cases() {
    std::vector<Case> cases;
    for (const App& app : all_apps())
        for (std::string_view policy : tasks::policy_names())
            cases.push_back({std::string(app.name), std::string(policy)});
    return cases;
}

class AppUnderPolicy : public ::testing::TestWithParam<Case> {};

TEST_P(AppUnderPolicy, MatchesSerialReference) {
    const App& app = find_app(GetParam().app);
    auto team = two_node_team();
    auto rt = runtime(*team, GetParam().policy);
    const AppRun run = run_app(app, *rt, app.test_size);
    EXPECT_TRUE(run.matches) << app.name << " under " << GetParam().policy << ": max_error " << run.max_error
                             << " (" << run.detail << ")";
    EXPECT_GT(run.tasks, 0u);
    EXPECT_FALSE(run.detail.empty());
    EXPECT_GE(run.seconds, 0.0);
    const tasks::RunReport report = rt->report();
    EXPECT_EQ(report.tasks, run.tasks);
    EXPECT_GT(report.dep_bytes, 0u);
    EXPECT_EQ(report.nodes, (std::vector<unsigned>{0, 1}));
}

INSTANTIATE_TEST_SUITE_P(AllApps, AppUnderPolicy, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                             std::string name = param_info.param.app + "_" + param_info.param.policy;
                             for (char& c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

// ---- SA hints: owner-node placement ------------------------------------------

TEST(TasksApps, OwnerNodeDealsBlocksOutContiguously) {
    auto team = two_node_team();
    auto rt = runtime(*team, "sa");
    std::vector<unsigned> got;
    for (std::size_t b = 0; b < 8; ++b) got.push_back(owner_node(*rt, b, 8));
    EXPECT_EQ(got, (std::vector<unsigned>{0, 0, 0, 0, 1, 1, 1, 1}));
    got.clear();
    for (std::size_t b = 0; b < 3; ++b) got.push_back(owner_node(*rt, b, 3));
    EXPECT_EQ(got, (std::vector<unsigned>{0, 0, 1}));
    EXPECT_EQ(owner_node(*rt, 0, 1), 0u);
    EXPECT_EQ(owner_node(*rt, 9, 8), 1u);   // past the end: the last block's owner
    EXPECT_EQ(owner_node(*rt, 0, 0), 0u);
    // 4 x 4 tiles: tile rows 0-1 on node 0, rows 2-3 on node 1.
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j)
            EXPECT_EQ(tile_owner_node(*rt, i, j, 4, 4), i < 2 ? 0u : 1u) << i << "," << j;
}

// The dense factorisations' rule: a P x Q grid of the nodes, P the largest
// divisor of K with P * P <= K, tiles dealt out cyclically in both directions.
TEST(TasksApps, BlockCyclicOwnersUseANearSquareGridOfTheNodes) {
    const std::pair<std::size_t, NodeGrid> grids[] = {{1, {1, 1}}, {2, {1, 2}}, {4, {2, 2}}, {6, {2, 3}},
                                                      {7, {1, 7}}, {8, {2, 4}}, {9, {3, 3}}, {16, {4, 4}}};
    for (const auto& [k, want] : grids) {
        const NodeGrid g = node_grid(k);
        EXPECT_EQ(g.rows, want.rows) << k << " nodes";
        EXPECT_EQ(g.cols, want.cols) << k << " nodes";
    }
    // 4 nodes, 2 x 2: tile (r, c) on node 2 (r mod 2) + c mod 2.
    std::vector<std::size_t> row0, row1;
    for (std::size_t c = 0; c < 4; ++c) {
        row0.push_back(block_cyclic_owner_index(0, c, 4));
        row1.push_back(block_cyclic_owner_index(5, c, 4));
    }
    EXPECT_EQ(row0, (std::vector<std::size_t>{0, 1, 0, 1}));
    EXPECT_EQ(row1, (std::vector<std::size_t>{2, 3, 2, 3}));
    // Every node owns a quarter of any 2 x 2 block of tiles, so of every
    // trailing matrix whose side is even: the share that bands lose.
    for (std::size_t start = 0; start < 6; ++start) {
        std::vector<unsigned> per_node(4, 0);
        for (std::size_t r = start; r < 8; ++r)
            for (std::size_t c = start; c < 8; ++c) ++per_node[block_cyclic_owner_index(r, c, 4)];
        const std::size_t side = 8 - start;
        if (side % 2 == 0) {
            EXPECT_EQ(per_node, std::vector<unsigned>(4, static_cast<unsigned>(side * side / 4)));
        }
        for (unsigned n : per_node) EXPECT_GT(n, 0u) << "trailing matrix from " << start;
    }
    // On a runtime, the index picks from its nodes.
    auto team = two_node_team();
    auto rt = runtime(*team, "sa");
    for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t c = 0; c < 3; ++c)
            EXPECT_EQ(cyclic_tile_owner_node(*rt, r, c), rt->nodes()[c % 2]) << r << "," << c;
}

TEST(TasksApps, EveryTaskOfEveryAppCarriesANodeHint) {
    auto team = two_node_team();
    for (const App& app : all_apps()) {
        tasks::Runtime rt{*team, "sa", tasks::PolicyOptions{.seed = 7},
                          tasks::RuntimeOptions{.kernel_homes = false, .record_graph = true}};
        const AppRun run = run_app(app, rt, app.test_size);
        EXPECT_TRUE(run.matches) << app.name << ": " << run.detail;
        const tasks::TaskGraph& graph = rt.graph();
        ASSERT_EQ(graph.tasks.size(), run.tasks) << app.name;
        std::size_t on_node[2] = {0, 0};
        for (const tasks::RecordedTask& t : graph.tasks) {
            ASSERT_TRUE(t.hint == 0 || t.hint == 1) << app.name << " task " << t.id << " hint " << t.hint;
            ++on_node[t.hint];
        }
        // The static distribution uses both nodes.
        EXPECT_GT(on_node[0], 0u) << app.name;
        EXPECT_GT(on_node[1], 0u) << app.name;
    }
}

// A built-in policy with stealing turned off: every worker takes tasks only
// from the first queue of its steal order (its own node's queue for SA, its
// own queue for DFIFO), so tasks run exactly where the policy places them.
// Cross-node bytes then measure the placement rule alone, free of the
// timing noise of steals (with stealing, an idle worker takes an init task
// hinted to the other node and the block is first touched on the wrong node).
class WithoutSteals final : public tasks::Policy {
public:
    explicit WithoutSteals(std::string_view name) : inner_(tasks::make_policy(name, tasks::PolicyOptions{.seed = 7})) {}
    std::string_view name() const override { return inner_->name(); }
    void attach(const tasks::PolicyContext& ctx) override { inner_->attach(ctx); }
    void on_submit(const tasks::TaskView& task) override { inner_->on_submit(task); }
    tasks::Destination place(const tasks::TaskView& task) override { return inner_->place(task); }
    void steal_order(unsigned worker, std::uint64_t round, std::vector<tasks::QueueRef>& order) const override {
        inner_->steal_order(worker, round, order);
        if (order.size() > 1) order.resize(1);
    }

private:
    std::unique_ptr<tasks::Policy> inner_;
};

tasks::RunReport run_without_steals(Team& team, std::string_view policy, std::string_view app_name,
                                    Halos halos = Halos::rows) {
    tasks::Runtime rt{team, std::make_unique<WithoutSteals>(policy), tasks::RuntimeOptions{.kernel_homes = false}};
    const App& app = find_app(app_name);
    AppSize size = app.test_size;
    size.halos = halos;
    const AppRun run = run_app(app, rt, size);
    EXPECT_TRUE(run.matches) << app_name << " under " << policy << ": " << run.detail;
    return rt.report();
}

// With SA's placement, each block is first touched on its owner node and
// updated there: jacobi moves only the halos at the one node boundary (a
// row each way per sweep, or a whole block each way when halos are declared
// as whole blocks), nstream (blocks never interact) moves nothing; DFIFO's
// round-robin placement moves far more for jacobi.
TEST(TasksApps, SaHintsLeaveOnlyHaloTrafficAcrossNodes) {
    auto team = two_node_team();
    const App& jacobi = find_app("jacobi");
    const std::size_t n = jacobi.test_size.n, rows = jacobi.test_size.block;
    ASSERT_EQ(n / rows, 8u);   // row blocks 0-3 on node 0, 4-7 on node 1
    // Per sweep, block 3 reads the first row of block 4 of the source grid
    // and block 4 reads the last row of block 3.
    const std::uint64_t halo_rows = 2 * n * sizeof(double) * jacobi.test_size.iterations;
    const std::uint64_t halo_blocks = 2 * rows * n * sizeof(double) * jacobi.test_size.iterations;

    const tasks::RunReport jacobi_sa = run_without_steals(*team, "sa", "jacobi");
    const tasks::RunReport jacobi_dfifo = run_without_steals(*team, "dfifo", "jacobi");
    EXPECT_EQ(jacobi_sa.cross_node_bytes, halo_rows);
    EXPECT_LT(jacobi_sa.cross_node_bytes, jacobi_dfifo.cross_node_bytes);
    EXPECT_EQ(jacobi_sa.tasks_per_node, (std::vector<std::uint64_t>{20, 20}));
    const tasks::RunReport whole_sa = run_without_steals(*team, "sa", "jacobi", Halos::whole_blocks);
    EXPECT_EQ(whole_sa.cross_node_bytes, halo_blocks);
    // The same data is named either way: own blocks whole, neighbours' rows or blocks.
    EXPECT_LT(jacobi_sa.dep_bytes, whole_sa.dep_bytes);

    const tasks::RunReport nstream_sa = run_without_steals(*team, "sa", "nstream");
    EXPECT_EQ(nstream_sa.cross_node_bytes, 0u);
    EXPECT_GT(nstream_sa.dep_bytes, 0u);
    EXPECT_EQ(nstream_sa.tasks_per_node, (std::vector<std::uint64_t>{140, 140}));
}

// Row halos: a block's first row, the rows between and its last row, as
// many as exist; whole blocks: one region. A bad name is refused by field.
TEST(TasksApps, RowBlockPartsCoverTheBlockOnce) {
    for (std::size_t rows : {1u, 2u, 3u, 32u})
        for (Halos h : {Halos::rows, Halos::whole_blocks}) {
            const RowBlockParts p = row_block_parts(rows, 10, h);
            std::size_t next = 0;
            for (unsigned i = 0; i < p.count; ++i) {
                EXPECT_EQ(p.part[i].offset, next);
                next += p.part[i].elems;
            }
            EXPECT_EQ(next, rows * 10);
            if (h == Halos::whole_blocks || rows == 1) {
                EXPECT_EQ(p.count, 1u);
            } else {
                EXPECT_EQ(p.count, rows == 2 ? 2u : 3u);
                EXPECT_EQ(p.part[p.top].elems, 10u);
                EXPECT_EQ(p.part[p.bottom].elems, 10u);
                EXPECT_EQ(p.part[p.bottom].offset, (rows - 1) * 10);
            }
        }
    EXPECT_EQ(parse_halos("rows"), Halos::rows);
    EXPECT_EQ(parse_halos(halos_name(Halos::whole_blocks)), Halos::whole_blocks);
    const Error e = expect_error([] { (void)parse_halos("columns", "--halos"); });
    EXPECT_EQ(e.field(), "--halos");
    EXPECT_TRUE(contains(e.what(), "'columns'")) << e.what();
}

// ---- catalog -------------------------------------------------------------

TEST(TasksApps, RegistryListsEveryAppOnceInOrder) {
    const std::vector<std::string> expected{"jacobi", "gauss-seidel", "red-black", "nstream",
                                            "cg",     "integral-histogram", "qr", "inversion"};
    ASSERT_EQ(all_apps().size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(all_apps()[i].name, expected[i]);
        EXPECT_EQ(&find_app(expected[i]), &all_apps()[i]);
        EXPECT_FALSE(all_apps()[i].description.empty());
        EXPECT_TRUE(static_cast<bool>(all_apps()[i].emit_graph));
    }
}

// Every catalog entry has a real program (MatchesSerialReference runs them
// all); an App that is not the catalog's is refused by name.
TEST(TasksApps, RunAppRefusesAnAppWithoutProgram) {
    App stranger = all_apps()[0];
    stranger.name = "jacobi3d";
    auto team = two_node_team();
    auto rt = runtime(*team, "dfifo");
    const Error e = expect_error([&] { (void)run_app(stranger, *rt, stranger.test_size); });
    EXPECT_EQ(e.field(), "app");
    EXPECT_TRUE(contains(e.what(), "jacobi3d"));
}

TEST(TasksApps, UnknownAppNamesTheKnownOnes) {
    const Error e = expect_error([] { (void)find_app("jacobi3d"); });
    EXPECT_EQ(e.field(), "app");
    EXPECT_TRUE(contains(e.what(), "jacobi3d"));
    EXPECT_TRUE(contains(e.what(), "gauss-seidel"));
    EXPECT_TRUE(contains(e.what(), "nstream"));
}

// ---- bad sizes: Error naming the field, nothing spawned -------------------

struct BadSize {
    std::string app;
    AppSize size;
    std::string field;
};

TEST(TasksApps, BadSizesThrowNamingTheFieldAndSpawnNothing) {
    const std::size_t doubles_per_page = page_size() / sizeof(double);
    const std::vector<BadSize> bad{
        {"jacobi", {2, 1, 1}, "n"},
        {"jacobi", {256, 24, 1}, "block"},     // does not divide 256
        {"jacobi", {256, 1, 1}, "block"},      // one row of 2 KiB: not whole pages
        {"jacobi", {256, 32, 200000}, "iterations"},
        {"gauss-seidel", {256, 16, 1}, "block"},   // 16x16 tile = 2 KiB
        {"gauss-seidel", {200, 40, 1}, "block"},   // 40x40x8 = 12800 bytes: not whole pages
        {"gauss-seidel", {100000, 0, 1}, "n"},
        {"red-black", {255, 0, 1}, "n"},            // odd
        {"red-black", {256, 2, 1}, "block"},        // 2 rows x 128 x 8 = 2 KiB
        {"red-black", {256, 48, 1}, "block"},
        {"nstream", {16384, 100, 1}, "block"},
        {"nstream", {doubles_per_page * 3, doubles_per_page * 2, 1}, "block"},   // does not divide n
        {"nstream", {std::size_t{1} << 31, 0, 1}, "n"},
    };
    auto team = two_node_team();
    auto rt = runtime(*team, "dfifo");
    for (const BadSize& b : bad) {
        const App& app = find_app(b.app);
        const Error e = expect_error([&] { (void)run_app(app, *rt, b.size); });
        EXPECT_EQ(e.field(), b.field) << b.app << " n=" << b.size.n << " block=" << b.size.block << ": " << e.what();
    }
    rt->barrier();
    EXPECT_EQ(rt->report().tasks, 0u);
}

TEST(TasksApps, ZeroFieldsMeanTheTestDefaults) {
    auto team = two_node_team();
    auto rt = runtime(*team, "lq");
    const App& app = find_app("jacobi");
    const AppRun a = run_app(app, *rt, AppSize{});
    const AppRun b = run_app(app, *rt, app.test_size);
    EXPECT_TRUE(a.matches);
    EXPECT_EQ(a.tasks, b.tasks);
    EXPECT_EQ(a.detail, b.detail);
}

TEST(TasksApps, ReportedErrorIsExactForStencils) {
    // Non-default sizes: odd tile counts, a single block, one iteration.
    // A fresh runtime per app: the runtime remembers regions past a
    // barrier, and a new app's blocks may reuse the old mappings' addresses
    // with other lengths.
    auto team = two_node_team();
    const std::size_t d = page_size() / sizeof(double);   // doubles per page
    auto run_fresh = [&](std::string_view name, const AppSize& size) {
        auto rt = runtime(*team, "dep");
        return run_app(find_app(name), *rt, size);
    };
    const AppRun j = run_fresh("jacobi", {d, 8, 3});            // 8 one-page rows per block
    const AppRun g = run_fresh("gauss-seidel", {3 * 32, 32, 2});   // 3x3 tiles
    const AppRun r = run_fresh("red-black", {2 * d, 2 * d, 1});    // one block
    const AppRun s = run_fresh("nstream", {d, d, 1});
    for (const AppRun* run : {&j, &g, &r, &s}) {
        EXPECT_TRUE(run->matches) << run->detail;
        EXPECT_EQ(run->max_error, 0.0) << run->detail;
    }
    EXPECT_EQ(j.tasks, d / 8 + 3 * (d / 8));
    EXPECT_EQ(g.tasks, 9u + 2 * 9u);
    EXPECT_EQ(r.tasks, 1u + 2u);
    EXPECT_EQ(s.tasks, 2 * nstream::streams);   // one block: init and one triad per stream
}

// ---- kernels and helpers ---------------------------------------------------

TEST(TasksApps, GaussSeidelTileOrderEqualsNaturalOrder) {
    const std::size_t tile = 4, tps = 3, n = tile * tps;
    std::vector<double> tiled(n * n), plain(n * n);
    for (std::size_t i = 0; i < tps; ++i)
        for (std::size_t j = 0; j < tps; ++j) kernels::gs_init_tile(tiled.data(), tps, tile, i, j);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) plain[r * n + c] = kernels::initial_value(r, c, n);
    for (int sweep = 0; sweep < 2; ++sweep) {
        for (std::size_t i = 0; i < tps; ++i)
            for (std::size_t j = 0; j < tps; ++j) kernels::gs_tile(tiled.data(), tps, tile, i, j);
        for (std::size_t r = 1; r + 1 < n; ++r)
            for (std::size_t c = 1; c + 1 < n; ++c)
                plain[r * n + c] = 0.25 * (((plain[(r - 1) * n + c] + plain[(r + 1) * n + c]) + plain[r * n + c - 1]) +
                                           plain[r * n + c + 1]);
    }
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c)
            ASSERT_EQ(tiled[kernels::gs_index(tps, tile, r, c)], plain[r * n + c]) << r << "," << c;
    // A sweep changed something (the test would pass vacuously otherwise).
    EXPECT_NE(plain[n + 1], kernels::initial_value(1, 1, n));
}

TEST(TasksApps, JacobiRowsKeepsBoundaryAndAverages) {
    const std::size_t n = 5;
    std::vector<double> src(n * n), dst(n * n, -1.0);
    for (std::size_t i = 0; i < n * n; ++i) src[i] = static_cast<double>(i);
    kernels::jacobi_rows(src.data(), dst.data(), n, n, 0, 2);   // rows 0 and 1 only
    for (std::size_t c = 0; c < n; ++c) EXPECT_EQ(dst[c], src[c]);
    EXPECT_EQ(dst[5], 5.0);
    EXPECT_EQ(dst[6], 0.25 * (((1.0 + 11.0) + 5.0) + 7.0));
    EXPECT_EQ(dst[9], 9.0);
    EXPECT_EQ(dst[10], -1.0);   // row 2 untouched
}

TEST(TasksApps, PageArrayIsAlignedRoundedAndZeroed) {
    PageArray<double> a(1000);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % page_size(), 0u);
    EXPECT_EQ(a.size(), 1000u);
    EXPECT_EQ(a.bytes(), 8000u);
    EXPECT_EQ(a.mapped_bytes() % page_size(), 0u);
    EXPECT_GE(a.mapped_bytes(), 8000u);
    EXPECT_LT(a.mapped_bytes(), 8000u + page_size());
    EXPECT_EQ(a[999], 0.0);
    PageArray<double> b = std::move(a);
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.size(), 1000u);
    EXPECT_EQ(expect_error([] { PageArray<double> z(0, "length"); }).field(), "length");
    EXPECT_EQ(expect_error([] { PageArray<double> z(SIZE_MAX / 4, "length"); }).field(), "length");
}

TEST(TasksApps, RunGraphWaitsForSpawnedTasksWhenSpawningFails) {
    auto team = two_node_team();
    auto rt = runtime(*team, "dfifo");
    PageArray<double> a(page_size() / sizeof(double));
    std::atomic<bool> done{false};
    const Error e = expect_error([&] {
        run_graph(*rt, [&] {
            double* p = a.data();
            rt->spawn([p, &done] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                p[0] = 1.0;
                done = true;
            },
                      {tasks::out(p, a.bytes())});
            // A dependency with a null address: always rejected.
            rt->spawn([] {}, {tasks::in(nullptr, 8)});
        });
    });
    EXPECT_TRUE(contains(e.what(), "null")) << e.what();
    EXPECT_TRUE(done);   // the first task finished before run_graph unwound
    EXPECT_EQ(a[0], 1.0);
}

TEST(TasksApps, BlockRangesCoverEvenly) {
    std::size_t next = 0;
    for (std::size_t b = 0; b < 4; ++b) {
        const Range r = block_range(10, 4, b);
        EXPECT_EQ(r.begin, next);
        EXPECT_EQ(r.size(), b < 2 ? 3u : 2u);
        next = r.end;
    }
    EXPECT_EQ(next, 10u);
    EXPECT_EQ(max_abs_diff(std::vector<double>{1, 2}, std::vector<double>{1, 2.5}), 0.5);
    EXPECT_TRUE(std::isinf(max_abs_diff(std::vector<double>{1}, std::vector<double>{1, 2})));
}

}  // namespace
}  // namespace numaware::apps
