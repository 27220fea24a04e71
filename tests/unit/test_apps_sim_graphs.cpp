// tests/unit/test_sim_apps.cpp — the applications' simulator graph
// builders (apps/<name>/graph.cpp) against the graphs their real task
// programs (apps/<name>/program.cpp) record on a 2-node synthetic team: same tasks, hints,
// dependencies (bytes, access, order) and region identities; plus the
// size checks, the compute model and the simulation sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/programs.hpp"
#include "numaware/machine.hpp"
#include "numaware/sim.hpp"
#include "numaware/team.hpp"
#include "support.hpp"

namespace numaware::sim {
namespace {

using apps::AppSize;
using apps::Halos;
using apps::ComputeModel;

using numaware::test::contains;
using numaware::test::expect_error;

// As test_tasks_apps.cpp: rank 0 on node 0, rank 1 on node 1, runnable on
// any host with two CPUs.
const Machine& two_nodes() {
    static const Machine m = Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10");
    return m;
}

std::unique_ptr<Team> two_node_team() {
    return std::make_unique<Team>(two_nodes(), TeamMapping{.threads = 2, .kind = MappingKind::scatter});
}

std::unique_ptr<tasks::Runtime> recording_runtime(Team& team) {
    return std::make_unique<tasks::Runtime>(team, "dfifo", tasks::PolicyOptions{.seed = 7},
                                            tasks::RuntimeOptions{.kernel_homes = false, .record_graph = true});
}

const std::vector<unsigned> both_nodes{0, 1};

// The builders' graph for the test machine (4096-byte pages, as the host's).
Graph build_app(std::string_view name, const AppSize& size, std::span<const unsigned> nodes,
                const ComputeModel& compute = {}) {
    return apps::build_graph(name, size, two_nodes(), nodes, compute);
}
AppSize app_test_shape(std::string_view name) { return apps::find_app(name).test_size; }
AppSize app_sim_shape(std::string_view name) { return apps::find_app(name).sim_size; }
using apps::app_names;

std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const apps::App& app : apps::all_apps()) out.emplace_back(app.name);
    return out;
}

using numaware::test::param_name;

// ---- the builder's graph is the graph the application records ----------

class SimAppsGraph : public ::testing::TestWithParam<std::string> {};

// A second size per app, with block counts that do not divide evenly over
// two nodes (and, for qr, an inner block ib = 32 smaller than the tile).
apps::AppSize uneven_size(std::string_view app) {
    if (app == "jacobi" || app == "red-black") return {.n = 384, .block = 128, .iterations = 2};
    if (app == "gauss-seidel") return {.n = 96, .block = 32, .iterations = 2};
    if (app == "nstream") return {.n = 2560, .block = 512, .iterations = 2};
    if (app == "cg") return {.n = 15, .block = 5, .iterations = 3};
    if (app == "integral-histogram") return {.n = 96, .block = 32, .iterations = 3};
    return {.n = 120, .block = 40, .iterations = 1};   // qr, inversion
}

// Runs the real application at `size` with a recording runtime and checks
// the builder's graph against the recording, task by task.
void expect_same_graph(const std::string& name, const apps::AppSize& size) {
    SCOPED_TRACE(name + " n=" + std::to_string(size.n) + " block=" + std::to_string(size.block) +
                 " iterations=" + std::to_string(size.iterations));
    const apps::App& app = apps::find_app(name);
    auto team = two_node_team();
    auto rt = recording_runtime(*team);
    ASSERT_EQ(rt->nodes(), both_nodes);
    const apps::AppRun run = run_app(app, *rt, size);
    ASSERT_TRUE(run.matches) << run.detail;
    const tasks::TaskGraph& recorded = rt->graph();

    const Graph built = build_app(name, size, both_nodes);
    ASSERT_EQ(built.size(), recorded.tasks.size());
    ASSERT_EQ(built.size(), run.tasks);
    EXPECT_TRUE(contains(built.name, name + " n=")) << built.name;

    // Region identity: recorded address <-> builder index, one to one.
    std::map<std::uint64_t, std::uint32_t> to_index;
    std::vector<std::optional<std::uint64_t>> to_address(built.regions().size());
    for (std::size_t i = 0; i < built.size(); ++i) {
        const tasks::RecordedTask& rec = recorded.tasks[i];
        const GraphTask& task = built.tasks()[i];
        ASSERT_EQ(rec.id, i);
        ASSERT_EQ(task.hint, rec.hint) << "task " << i;
        EXPECT_EQ(task.worker, -1);
        EXPECT_FALSE(task.after_barrier);
        const auto deps = built.deps_of(task);
        ASSERT_EQ(deps.size(), rec.deps.size()) << "task " << i;
        for (std::size_t j = 0; j < deps.size(); ++j) {
            const tasks::RecordedDep& want = rec.deps[j];
            const GraphDep& got = deps[j];
            ASSERT_LT(got.region, built.regions().size());
            ASSERT_EQ(built.regions()[got.region].bytes, want.bytes) << "task " << i << " dep " << j;
            ASSERT_EQ(got.access, want.access) << "task " << i << " dep " << j;
            const auto [it, fresh] = to_index.emplace(want.region, got.region);
            ASSERT_EQ(it->second, got.region)
                << "task " << i << " dep " << j << ": the recorded block maps to two builder regions";
            if (fresh) {
                ASSERT_FALSE(to_address[got.region].has_value())
                    << "task " << i << " dep " << j << ": builder region " << got.region
                    << " stands for two recorded blocks";
                to_address[got.region] = want.region;
            }
        }
    }
    // Every builder region is a block the application names.
    EXPECT_EQ(to_index.size(), built.regions().size());
    for (const GraphRegion& r : built.regions()) EXPECT_EQ(r.home, tasks::unallocated);
}

TEST_P(SimAppsGraph, MatchesTheRecordedGraph) {
    const std::string& name = GetParam();
    const apps::App& app = apps::find_app(name);
    const AppSize test = app_test_shape(name);
    ASSERT_EQ(test.n, app.test_size.n);
    ASSERT_EQ(test.block, app.test_size.block);
    ASSERT_EQ(test.iterations, app.test_size.iterations);
    expect_same_graph(name, app.test_size);
}

TEST_P(SimAppsGraph, MatchesTheRecordedGraphAtAnUnevenSize) { expect_same_graph(GetParam(), uneven_size(GetParam())); }

TEST_P(SimAppsGraph, HintsFollowTheNodesGiven) {
    // The same graph on nodes {3, 5}: node 0's tasks go to 3, node 1's to 5.
    const std::string& name = GetParam();
    const Graph on01 = build_app(name, app_test_shape(name), both_nodes);
    const std::vector<unsigned> other{3, 5};
    const Graph on35 = build_app(name, app_test_shape(name), other);
    ASSERT_EQ(on01.size(), on35.size());
    std::size_t on_second = 0;
    for (std::size_t i = 0; i < on01.size(); ++i) {
        const int h = on01.tasks()[i].hint;
        ASSERT_TRUE(h == 0 || h == 1) << name << " task " << i;
        EXPECT_EQ(on35.tasks()[i].hint, h == 0 ? 3 : 5) << name << " task " << i;
        on_second += h == 1 ? 1 : 0;
    }
    EXPECT_GT(on_second, 0u) << name << ": no task hinted to the second node";
    // One node: every hint is that node.
    const std::vector<unsigned> single{4};
    const Graph on4 = build_app(name, app_test_shape(name), single);
    for (const GraphTask& t : on4.tasks()) EXPECT_EQ(t.hint, 4);
}

TEST_P(SimAppsGraph, ComputeTimeIsFlopsOverTheRate) {
    const std::string& name = GetParam();
    const Graph slow = build_app(name, app_test_shape(name), both_nodes, ComputeModel{.flops_per_s = 1e9});
    const Graph fast = build_app(name, app_test_shape(name), both_nodes, ComputeModel{.flops_per_s = 4e9});
    ASSERT_EQ(slow.size(), fast.size());
    for (std::size_t i = 0; i < slow.size(); ++i) {
        const double s = slow.tasks()[i].compute_s, f = fast.tasks()[i].compute_s;
        // At the test sizes every task of every app has work to do.
        ASSERT_GT(s, 0.0) << name << " task " << i;
        ASSERT_TRUE(std::isfinite(s));
        EXPECT_NEAR(f * 4.0, s, s * 1e-12) << name << " task " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(SimAppsEvery, SimAppsGraph, ::testing::ValuesIn(names()), param_name);

// The stencils' flops summed over the graph are the whole-grid counts: n^2
// element initialisations plus 4 flops per interior point per sweep
// (red-black: per full iteration, both colours), whatever the blocking.
TEST(SimApps, StencilFlopsSumToTheWholeGridCounts) {
    const double rate = 1e9;
    auto total_flops = [rate](std::string_view name, const AppSize& s) {
        const Graph g = build_app(name, s, both_nodes, ComputeModel{.flops_per_s = rate});
        double sum = 0;
        for (const GraphTask& t : g.tasks()) sum += t.compute_s * rate;
        return sum;
    };
    for (std::string_view name : {"jacobi", "gauss-seidel", "red-black"}) {
        for (const AppSize& s : {app_test_shape(name), AppSize{512, 64, 3}}) {
            const double n = static_cast<double>(s.n), it = s.iterations;
            EXPECT_NEAR(total_flops(name, s), n * n + it * 4 * (n - 2) * (n - 2), 1e-6) << name << " n=" << s.n;
        }
    }
    // nstream: 7 streams x 3 arrays initialised, then 3 flops per element per repetition.
    const AppSize ns = app_test_shape("nstream");
    EXPECT_NEAR(total_flops("nstream", ns), 7.0 * 3 * static_cast<double>(ns.n) * (1 + ns.iterations), 1e-6);
    // QR and inversion at one tile: init + GEQRT, init + POTRF + TRTRI + LAUUM.
    const double b = 64, b3 = b * b * b;
    EXPECT_NEAR(total_flops("qr", AppSize{64, 64, 1}), b * b + 4 * b3 / 3, 1e-6);
    EXPECT_NEAR(total_flops("inversion", AppSize{64, 64, 1}), b * b + b3, 1e-6);
}

// ---- names, shapes, errors ----------------------------------------------

TEST(SimApps, NamesAndTestShapesAreTheApplications) {
    const auto list = app_names();
    ASSERT_EQ(list.size(), apps::all_apps().size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const apps::App& app = apps::all_apps()[i];
        EXPECT_EQ(list[i], app.name);
        const AppSize s = app_test_shape(app.name);
        EXPECT_EQ(s.n, app.test_size.n) << app.name;
        EXPECT_EQ(s.block, app.test_size.block) << app.name;
        EXPECT_EQ(s.iterations, app.test_size.iterations) << app.name;
    }
}

TEST(SimApps, ZeroFieldsMeanTheTestDefaults) {
    for (std::string_view name : app_names()) {
        const Graph defaults = build_app(name, AppSize{}, both_nodes);
        const Graph test = build_app(name, app_test_shape(name), both_nodes);
        EXPECT_EQ(defaults.name, test.name);
        EXPECT_EQ(defaults.size(), test.size()) << name;
        EXPECT_EQ(defaults.deps().size(), test.deps().size()) << name;
    }
    // One field given, the others defaulted.
    const AppSize jt = app_test_shape("jacobi");
    const Graph g = build_app("jacobi", AppSize{.iterations = jt.iterations + 3}, both_nodes);
    const std::size_t blocks = jt.n / jt.block;
    EXPECT_EQ(g.size(), blocks * (jt.iterations + 4));
    EXPECT_EQ(g.name, "jacobi n=" + std::to_string(jt.n) + " block=" + std::to_string(jt.block) +
                          " iterations=" + std::to_string(jt.iterations + 3));
}

TEST(SimApps, UnknownAppListsTheNames) {
    for (auto call : {+[] { (void)build_app("jacobbi", AppSize{}, both_nodes); },
                      +[] { (void)app_test_shape("nope"); }, +[] { (void)app_sim_shape(""); }}) {
        const Error e = expect_error(call);
        EXPECT_EQ(e.field(), "app");
        for (std::string_view name : app_names()) EXPECT_TRUE(contains(e.what(), std::string(name))) << e.what();
    }
}

TEST(SimApps, BadNodesAndRatesAreRefused) {
    EXPECT_EQ(expect_error([] { (void)build_app("jacobi", AppSize{}, std::span<const unsigned>{}); }).field(),
              "nodes");
    for (double rate : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
        const Error e = expect_error([rate] {
            (void)build_app("nstream", AppSize{}, both_nodes, ComputeModel{.flops_per_s = rate});
        });
        EXPECT_EQ(e.field(), "flops_per_s") << rate;
    }
}

struct BadSize {
    std::string app;
    apps::AppSize size;
};

TEST(SimApps, BadSizesGiveTheApplicationsErrors) {
    const std::vector<BadSize> cases{
        {"jacobi", {.n = 2}},
        {"jacobi", {.n = 100}},
        {"jacobi", {.n = 256, .block = 1}},   // a block of 2 KiB: not whole pages
        {"jacobi", {.iterations = 100001}},
        {"gauss-seidel", {.n = 40000}},
        {"gauss-seidel", {.n = 256, .block = 8}},   // 512-byte tiles
        {"gauss-seidel", {.n = 256, .block = 1}},
        {"gauss-seidel", {.iterations = 100001}},
        {"red-black", {.n = 255}},
        {"red-black", {.n = 256, .block = 3}},
        {"red-black", {.n = 256, .block = 1}},
        {"red-black", {.iterations = 100001}},
        {"nstream", {.n = (std::size_t{1} << 30) + 1}},
        {"nstream", {.n = 16384, .block = 1000}},
        {"nstream", {.n = 16384, .block = 16}},
        {"nstream", {.iterations = 100001}},
        {"cg", {.n = 1}},
        {"cg", {.n = 513}},
        {"cg", {.n = 16, .block = 3}},
        {"cg", {.iterations = 100001}},
        {"integral-histogram", {.n = 8193}},
        {"integral-histogram", {.n = 128, .block = 48}},
        {"integral-histogram", {.iterations = 257}},
        {"integral-histogram", {.n = 8192, .block = 64, .iterations = 256}},   // 64 GiB histogram
        {"qr", {.n = 8193}},
        {"qr", {.n = 128, .block = 48}},
        {"qr", {.n = 32, .block = 64}},
        {"inversion", {.n = 9000}},
        {"inversion", {.n = 128, .block = 100}},
    };
    auto team = two_node_team();
    for (const BadSize& c : cases) {
        auto rt = recording_runtime(*team);
        const apps::App& app = apps::find_app(c.app);
        const Error real = expect_error([&] { (void)run_app(app, *rt, c.size); });
        const Error ours = expect_error([&] { (void)build_app(c.app, c.size, both_nodes); });
        EXPECT_FALSE(real.field().empty()) << c.app;
        EXPECT_EQ(ours.field(), real.field()) << c.app << ": " << real.what();
        EXPECT_STREQ(ours.what(), real.what()) << c.app;
    }
}

// ---- simulation sizes -------------------------------------------------------

// Average parallelism of a graph: tasks / the longest chain of dependent
// tasks (sequential semantics per region: a reader waits for the last
// writer, a writer for the last writer and the readers since).
double average_parallelism(const Graph& g) {
    struct State {
        std::uint64_t writer_level = 0;
        std::uint64_t readers_level = 0;   // max level of the readers since the last write
    };
    std::vector<State> state(g.regions().size());
    std::uint64_t longest = 0;
    for (const GraphTask& t : g.tasks()) {
        std::uint64_t before = 0;
        for (const GraphDep& d : g.deps_of(t)) {
            const State& s = state[d.region];
            before = std::max(before, s.writer_level);
            if (d.access != tasks::AccessMode::in) before = std::max(before, s.readers_level);
        }
        const std::uint64_t level = before + 1;
        for (const GraphDep& d : g.deps_of(t)) {
            State& s = state[d.region];
            if (d.access == tasks::AccessMode::in) {
                s.readers_level = std::max(s.readers_level, level);
            } else {
                s.writer_level = level;
                s.readers_level = 0;
            }
        }
        longest = std::max(longest, level);
    }
    return longest == 0 ? 0.0 : static_cast<double>(g.size()) / static_cast<double>(longest);
}

TEST(SimApps, SimulationShapesKeep288CoresBusy) {
    for (std::string_view name : app_names()) {
        const AppSize sim = app_sim_shape(name);
        const Graph big = build_app(name, sim, both_nodes);
        const Graph small = build_app(name, app_test_shape(name), both_nodes);
        EXPECT_GT(big.size(), 10 * small.size()) << name;
        const double parallelism = average_parallelism(big);
        EXPECT_GE(parallelism, 288.0) << name << " (" << big.name << "): " << big.size() << " tasks";
        EXPECT_LT(average_parallelism(small), parallelism) << name;
        for (const GraphTask& t : big.tasks()) ASSERT_TRUE(std::isfinite(t.compute_s) && t.compute_s >= 0) << name;
    }
    // The Jacobi sweep of the simulation shape: at least 288 row blocks.
    const AppSize j = app_sim_shape("jacobi");
    EXPECT_GE(j.n / j.block, 288u);
}

TEST(SimApps, PageSizeComesFromTheMachine) {
    // Gauss-Seidel's 32 x 32 tiles are 8 KiB: whole pages of 4 KiB, not of 64 KiB.
    const Machine big_pages = Machine::from_spec("nodes=2 cpus-per-node=1 page=64K");
    const Error e = expect_error([&] { (void)apps::build_graph("gauss-seidel", AppSize{}, big_pages, both_nodes); });
    EXPECT_EQ(e.field(), "block");
    EXPECT_TRUE(contains(e.what(), "page size 65536")) << e.what();
    // Jacobi's 32 rows of 256 doubles are one 64 KiB page: as one region
    // with whole-block halos, as a first row, 30 rows and a last row with
    // row halos.
    const Graph whole = apps::build_graph("jacobi", AppSize{.n = 256, .block = 32, .halos = Halos::whole_blocks},
                                          big_pages, both_nodes);
    EXPECT_EQ(whole.regions().front().bytes, 65536u);
    const Graph rows = apps::build_graph("jacobi", AppSize{.n = 256, .block = 32}, big_pages, both_nodes);
    ASSERT_GE(rows.regions().size(), 3u);
    EXPECT_EQ(rows.regions()[0].bytes, 2048u);
    EXPECT_EQ(rows.regions()[1].bytes, 30u * 2048u);
    EXPECT_EQ(rows.regions()[2].bytes, 2048u);
    EXPECT_EQ(rows.size(), whole.size());
}

TEST(SimApps, TooLargeGraphsAreRefusedBeforeBuilding) {
    // 32768 / 32 = 1024 x 1024 tiles, 100000 sweeps: ~10^11 tasks.
    const Error e = expect_error(
        [] { (void)build_app("gauss-seidel", AppSize{.n = 32768, .block = 32, .iterations = 100000}, both_nodes); });
    EXPECT_EQ(e.field(), "shape");
    EXPECT_TRUE(contains(e.what(), "tasks")) << e.what();
}

}  // namespace
}  // namespace numaware::sim
