// bench/sim/bench_sim.cpp — numaware_bench_sim: the task-level simulator's
// own speed, and the direction of the published results on the bullion S16
// model (include/numaware/sim.hpp).
//
//   numaware_bench_sim speed [--tasks 1000000] [--app jacobi] [--sockets 16]
//       builds an application graph of about --tasks tasks and simulates it
//       under DFIFO, DEP, RIP-DEP and RIP-MW on every core of the model:
//       simulated tasks per second of host time (target: 2 M for DFIFO and
//       DEP; RIP-DEP and RIP-MW include their real partitioning time).
//   numaware_bench_sim directions [--sockets 4,8,16] [--size sim]
//       for each socket count, the applications under DFIFO, DEP, RIP-DEP and
//       RIP-MW: makespan, speedup against DEP, cross-node bytes, DEP ÷
//       RIP-DEP cross-node bytes and its geometric mean over the
//       applications, partitioning overhead; Markdown tables.
//
//   numaware_bench_sim partition-cost [--sockets 4,8,16] [--size sim]
//       runs every RIP-DEP and RIP-MW window of the applications through the
//       real partitioner on this host and fits the simulator's partitioning
//       cost model, seconds = (a * vertices + b * edges) * log2(parts), by
//       least squares: the measurement behind sim::PartitionCostModel's
//       defaults (docs/SIMULATOR.md).
//
// All take --json (one JSON document instead of the tables) and
// --json-file FILE (the document written there as well). Exit status 2 for
// bad arguments (one line on stderr).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "apps/catalog.hpp"
#include "common/stats.hpp"
#include "numaware/error.hpp"
#include "numaware/sim.hpp"
#include "numaware/team.hpp"

namespace {

using numaware::bench::median;

using numaware::Error;
namespace apps = numaware::apps;
namespace sim = numaware::sim;
namespace tasks = numaware::tasks;

constexpr double kTargetTasksPerHostS = 2e6;   // issue 6, "Speed", for DFIFO and DEP

std::vector<std::string> split(const std::string& text, const std::string& field) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (true) {
        const std::size_t comma = text.find(',', begin);
        out.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
        if (out.back().empty()) throw Error(field, fmt::format("empty item in the list '{}'", text));
        if (comma == std::string::npos) return out;
        begin = comma + 1;
    }
}

unsigned to_unsigned(const std::string& text, const std::string& field) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
        if (!text.empty() && text.front() != '-') v = std::stoul(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || v == 0 || v > 0xffffffffUL)
        throw Error(field, fmt::format("expected a positive integer, got '{}'", text));
    return static_cast<unsigned>(v);
}

// "test", "sim" or "N,BLOCK,ITERATIONS".
std::vector<std::string> pick_policies(const std::string& text) {
    std::vector<std::string> policies = apps::parse_policy_list(text, "--policy");
    for (const std::string& p : policies) (void)tasks::make_policy(p);   // Error("policy", ...) names the choices
    return policies;
}

// CPU time of the whole process (every thread, user + system): less
// sensitive than wall time to other work on a busy host.
double process_cpu_s() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// num / den; infinity for x / 0 with x > 0 (e.g. a policy that moves no
// cross-node bytes at all), nullopt for 0 / 0.
std::optional<double> ratio(double num, double den) {
    if (num < 0 || den < 0 || (num == 0 && den == 0)) return std::nullopt;
    if (den == 0) return std::numeric_limits<double>::infinity();
    return num / den;
}

std::string show(std::optional<double> v, int digits = 2) {
    if (!v) return "-";
    if (std::isinf(*v)) return "∞";
    return fmt::format("{:.{}f}", *v, digits);
}

// JSON has no infinity: "inf".
nlohmann::json json_or_null(std::optional<double> v) {
    if (!v) return nullptr;
    if (std::isinf(*v)) return "inf";
    return *v;
}

// Geometric mean; nullopt if a value is undefined or 0 (or none given),
// infinity if one is infinite.
std::optional<double> geomean(const std::vector<std::optional<double>>& values) {
    if (values.empty()) return std::nullopt;
    double log_sum = 0;
    bool infinite = false;
    for (const auto& v : values) {
        if (!v || *v <= 0) return std::nullopt;
        if (std::isinf(*v))
            infinite = true;
        else
            log_sum += std::log(*v);
    }
    if (infinite) return std::numeric_limits<double>::infinity();
    return std::exp(log_sum / static_cast<double>(values.size()));
}

void emit(const nlohmann::json& doc, bool json, const std::string& json_file) {
    if (json) fmt::print("{}\n", doc.dump(2));
    if (!json_file.empty()) {
        std::ofstream out(json_file);
        out << doc.dump(2) << "\n";
        if (!out) throw Error("--json-file", fmt::format("cannot write '{}'", json_file));
    }
}

// ---------------------------------------------------------------- speed

struct SpeedArgs {
    std::uint64_t tasks = 1000000;
    std::string app = "jacobi";
    std::string size;   // empty: scale the app's sim shape's iterations to --tasks
    std::string policy = "dfifo,dep,rip-dep,rip-mw";
    std::string machine = "bullion-s16";
    unsigned sockets = 16;
    std::string contention = "snapshot";
    double spawn_s = sim::SimOptions{}.spawn_s;
    std::string halos = "whole-blocks";   // the published graphs
    unsigned reps = 3;                    // simulations per policy; the median host time is reported
    bool json = false;
    std::string json_file;
};

// The app's simulation shape with its iterations set so the graph has about
// `target` tasks (tasks grow linearly with iterations in every builder; the
// two probe graphs measure the slope).
apps::AppSize scaled_shape(const std::string& app, std::uint64_t target, const numaware::Machine& machine,
                           std::span<const unsigned> nodes, apps::Halos halos) {
    apps::AppSize shape = apps::find_app(app).sim_size;
    shape.halos = halos;
    shape.iterations = 1;
    const double one = static_cast<double>(apps::build_graph(app, shape, machine, nodes).size());
    shape.iterations = 2;
    const double two = static_cast<double>(apps::build_graph(app, shape, machine, nodes).size());
    const double per_iteration = two - one;
    if (per_iteration <= 0)
        throw Error("--app", fmt::format("{}: the graph does not grow with iterations; give --size", app));
    const double iterations = std::max(1.0, std::round((static_cast<double>(target) - (one - per_iteration)) /
                                                       per_iteration));
    shape.iterations = static_cast<unsigned>(std::min(iterations, 1e6));
    return shape;
}

// The reference beside the simulator's speed: the graph traversed once in
// an order its dependencies allow (a FIFO of ready tasks), with successor
// lists built and each task's dependencies and successors read as the
// simulator builds and reads them; no policy, no clock, no memory model:
// the part of any simulation of this graph that no model can avoid. It is
// timed beside each simulation, in the same minutes, because this host's
// speed changes by up to 2x from one process to the next: the simulator
// ÷ reference ratio compares across such periods where host seconds do not.
struct ReferencePass {
    double host_s = 0;
    std::uint64_t bytes = 0;   // the dependencies' bytes, read (and checked) so the pass cannot be skipped
};

ReferencePass reference_pass(const sim::Graph& g) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = g.size();
    const auto counts = g.successor_counts();
    std::vector<std::uint32_t> begin(n + 1, 0), succs(g.preds().size()), waiting(n);
    for (std::size_t i = 0; i < n; ++i) begin[i + 1] = begin[i] + counts[i];
    std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
    std::vector<std::uint32_t> ready;
    ready.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto preds = g.preds_of(g.tasks()[i]);
        for (const tasks::Edge& e : preds) succs[fill[e.from]++] = i;
        waiting[i] = static_cast<std::uint32_t>(preds.size());
        if (preds.empty()) ready.push_back(i);
    }
    ReferencePass r;
    for (std::size_t head = 0; head < ready.size(); ++head) {
        const std::uint32_t i = ready[head];
        for (const sim::GraphDep& d : g.deps_of(g.tasks()[i])) r.bytes += g.regions()[d.region].bytes;
        for (std::uint32_t k = begin[i]; k < begin[i + 1]; ++k)
            if (--waiting[succs[k]] == 0) ready.push_back(succs[k]);
    }
    r.host_s = seconds_since(t0);
    if (ready.size() != n || r.bytes != g.dep_bytes())
        throw Error("reference", fmt::format("the traversal reached {} of {} tasks and {} of {} dependency bytes",
                                             ready.size(), n, r.bytes, g.dep_bytes()));
    return r;
}

int speed_command(const SpeedArgs& a) {
    const std::vector<std::string> policies = pick_policies(a.policy);
    const std::vector<std::string> models = sim::model_names();
    if (std::find(models.begin(), models.end(), a.machine) == models.end())
        throw Error("--machine", fmt::format("'{}' is not a named model", a.machine));
    const sim::TimedMachine t = sim::model(a.machine, a.sockets);
    sim::SimOptions options;
    options.contention = sim::parse_contention(a.contention);
    if (!(a.spawn_s >= 0) || !std::isfinite(a.spawn_s))
        throw Error("--spawn-s", fmt::format("must be finite and >= 0 seconds, got {}", a.spawn_s));
    options.spawn_s = a.spawn_s;
    const std::vector<unsigned> nodes = sim::worker_node_set(t.machine, options.mapping);
    if (a.app != "all") (void)apps::parse_app_list(a.app, "--app");
    const apps::Halos halos = apps::parse_halos(a.halos, "--halos");
    apps::AppSize shape = a.size.empty() ? scaled_shape(a.app, a.tasks, t.machine, nodes, halos)
                                         : apps::parse_app_size(a.size, a.app, "--size");
    shape.halos = halos;

    const auto t0 = std::chrono::steady_clock::now();
    const sim::Graph graph = apps::build_graph(a.app, shape, t.machine, nodes);
    const double build_s = seconds_since(t0);

    const std::string label = "simulated on " + t.name;
    nlohmann::json runs = nlohmann::json::array();
    if (!a.json) {
        fmt::print("## Simulator speed: {} — {}\n\n", label, graph.name);
        fmt::print("{} tasks, {} dependencies, {} regions; graph built in {:.3f} host s. Contention {}, one "
                   "task submitted every {} s. Host time on one core of this host; makespan simulated.\n\n",
                   graph.size(), graph.deps().size(), graph.regions().size(), build_s, a.contention, a.spawn_s);
        fmt::print("Reference: the same graph traversed once in dependency order, successor lists built and read, "
                   "no policy and no time model (the part no simulation avoids), timed before each simulation; "
                   "÷ reference: simulator host s ÷ reference host s, the two medians, which varies less than host "
                   "seconds as this host's speed changes.\n\n");
        fmt::print("| policy | workers | host s, median of {} (min-max) | M simulated tasks / host s | target | CPU s | "
                   "M tasks / CPU s | partition host s | simulated makespan ms | reference host s | ÷ reference "
                   "|\n|---|---|---|---|---|---|---|---|---|---|---|\n",
                   a.reps);
        std::fflush(stdout);
    }
    for (const std::string& p : policies) {
        // The same simulation `reps` times: the host's speed swings between
        // minutes, so one run says little. The median host time decides the
        // target; every repetition must simulate the same makespan.
        std::vector<double> host, cpu, reference;
        sim::SimReport r;
        for (unsigned k = 0; k < a.reps; ++k) {
            reference.push_back(reference_pass(graph).host_s);
            const double cpu0 = process_cpu_s();
            sim::SimReport rk = sim::simulate(t, graph, p, options);
            cpu.push_back(process_cpu_s() - cpu0);
            host.push_back(rk.host_s);
            if (k > 0 && rk.run.makespan_s != r.run.makespan_s)
                throw Error("simulate", fmt::format("{}: repetition {} simulated {} s, the first {} s: a simulated "
                                                    "result must depend only on its inputs",
                                                    p, k + 1, rk.run.makespan_s, r.run.makespan_s));
            if (k == 0) r = std::move(rk);
        }
        const double host_s = median(host), cpu_s = median(cpu), reference_s = median(reference);
        const double tasks_per_host_s = host_s > 0 ? static_cast<double>(r.run.tasks) / host_s : 0;
        const auto [host_min, host_max] = std::minmax_element(host.begin(), host.end());
        const bool has_target = p == "dfifo" || p == "dep";
        const bool met = tasks_per_host_s >= kTargetTasksPerHostS;
        if (!a.json) {
            fmt::print("| {} | {} | {:.3f} ({:.3f}-{:.3f}) | {:.2f} | {} | {:.3f} | {:.2f} | {:.3f} | {:.3f} | {:.4f} | {:.1f} |\n",
                       p, r.workers, host_s, *host_min, *host_max, tasks_per_host_s / 1e6,
                       has_target ? (met ? "≥ 2 M: met" : "≥ 2 M: MISSED") : "includes partitioning", cpu_s,
                       static_cast<double>(r.run.tasks) / cpu_s / 1e6, r.partition_host_s, r.run.makespan_s * 1e3,
                       reference_s, host_s / reference_s);
            std::fflush(stdout);
        }
        runs.push_back({{"policy", p},
                        {"workers", r.workers},
                        {"tasks", r.run.tasks},
                        {"reps", a.reps},
                        {"host_s", host_s},
                        {"host_s_each", host},
                        {"tasks_per_host_s", tasks_per_host_s},
                        {"process_cpu_s", cpu_s},
                        {"reference_host_s", reference_s},
                        {"reference_host_s_each", reference},
                        {"host_s_over_reference", host_s / reference_s},
                        {"partition_host_s", r.partition_host_s},
                        {"partition_jobs", r.partition_jobs},
                        {"makespan_s", r.run.makespan_s},
                        {"target_tasks_per_host_s",
                         has_target ? nlohmann::json(kTargetTasksPerHostS) : nlohmann::json()},
                        {"meets_target", has_target ? nlohmann::json(met) : nlohmann::json()}});
    }
    if (!a.json) fmt::print("\n");
    emit({{"label", label},
          {"machine", t.name},
          {"graph", graph.name},
          {"tasks", graph.size()},
          {"build_host_s", build_s},
          {"contention", a.contention},
          {"runs", runs}},
         a.json, a.json_file);
    return 0;
}

// ---------------------------------------------------------------- directions

struct DirectionArgs {
    std::string sockets = "4,8,16";
    std::string app = "jacobi,gauss-seidel,red-black,nstream";
    std::string policy = "dfifo,dep,sa,rip-dep,rip-mw";
    std::string size = "sim";
    std::string halos = "whole-blocks";   // the published graphs
    std::string contention = "snapshot";
    std::size_t window = tasks::PolicyOptions{}.window;
    std::uint64_t seed = 1;
    double steal_delay_tasks = -1;   // < 0: the policies' default
    bool rip_first_touch = false;
    double partition_s_per_task = 0;
    bool json = false;
    std::string json_file;
};

int directions_command(const DirectionArgs& a) {
    std::vector<unsigned> socket_counts;
    for (const std::string& s : split(a.sockets, "--sockets")) socket_counts.push_back(to_unsigned(s, "--sockets"));
    const std::vector<std::string> selected = apps::parse_app_list(a.app, "--app");
    std::vector<std::string> policies = pick_policies(a.policy);
    for (const char* needed : {"dep", "rip-dep"})
        if (std::find(policies.begin(), policies.end(), needed) == policies.end())
            throw Error("--policy", fmt::format("the direction tables need dep and rip-dep, got '{}'", a.policy));
    for (const std::string& app : selected) (void)apps::parse_app_size(a.size, app, "--size");
    const apps::Halos halos = apps::parse_halos(a.halos, "--halos");
    std::vector<sim::TimedMachine> machines;
    for (unsigned s : socket_counts) machines.push_back(sim::model("bullion-s16", s));   // bad counts fail first

    sim::SimOptions options;
    options.contention = sim::parse_contention(a.contention);
    options.policy.window = a.window;
    options.policy.seed = a.seed;
    if (a.steal_delay_tasks >= 0) options.policy.steal_delay_tasks = a.steal_delay_tasks;
    options.policy.rip_balance_first_touch = a.rip_first_touch;
    options.partition_s_per_task = a.partition_s_per_task;

    nlohmann::json per_sockets = nlohmann::json::array();
    struct Summary {
        unsigned sockets;
        std::string machine;
        std::optional<double> cross_geomean, dfifo_slowdown, rip_speedup;
        double rip_mw_partition_pct = 0;   // mean over the apps
        unsigned rip_dep_wins = 0;
        std::size_t apps = 0;
    };
    std::vector<Summary> summaries;

    for (const sim::TimedMachine& t : machines) {
        const unsigned sockets = static_cast<unsigned>(t.machine.node_count());
        const std::vector<unsigned> nodes = sim::worker_node_set(t.machine, options.mapping);
        const std::string label = "simulated on " + t.name;
        if (!a.json) {
            fmt::print("## {}\n\n", label);
            fmt::print("| app | tasks | policy | makespan ms | speedup vs dep | cross-node MB | dep ÷ policy cross "
                       "bytes | load balance % | window | partitioner busy % | host s |\n"
                       "|---|---|---|---|---|---|---|---|---|---|---|\n");
            std::fflush(stdout);
        }
        Summary sum{sockets, t.name, {}, {}, {}, 0, 0, 0};
        std::vector<std::optional<double>> cross_ratios, dfifo_ratios, rip_speedups;
        std::vector<double> mw_pct;
        struct PerPolicy {
            std::vector<std::optional<double>> speedup;
            double balance = 0, overhead = 0, busy = 0;
        };
        std::map<std::string, PerPolicy> per_policy;
        nlohmann::json app_runs = nlohmann::json::array();
        for (const std::string& app : selected) {
            apps::AppSize shape = apps::parse_app_size(a.size, app, "--size");
            shape.halos = halos;
            const sim::Graph graph = apps::build_graph(app, shape, t.machine, nodes);
            std::map<std::string, sim::SimReport> by;
            for (const std::string& p : policies) by.emplace(p, sim::simulate(t, graph, p, options));
            const sim::SimReport& dep = by.at("dep");
            for (const std::string& p : policies) {
                const sim::SimReport& r = by.at(p);
                const auto speedup = ratio(dep.run.makespan_s, r.run.makespan_s);
                const auto cross = ratio(static_cast<double>(dep.run.cross_node_bytes),
                                         static_cast<double>(r.run.cross_node_bytes));
                if (!a.json) {
                    fmt::print("| {} | {} | {} | {:.3f} | {} | {:.1f} | {} | {:.1f} | {} | {:.2f} | {:.2f} |\n", app,
                               r.run.tasks, p, r.run.makespan_s * 1e3, show(speedup),
                               static_cast<double>(r.run.cross_node_bytes) / 1e6, show(cross), r.run.load_balance_pct,
                               r.window > 0 ? std::to_string(r.window) : std::string("–"), r.partition_busy_pct,
                               r.host_s);
                    std::fflush(stdout);
                }
                PerPolicy& pp = per_policy[p];
                pp.speedup.push_back(speedup);
                pp.balance += r.run.load_balance_pct / static_cast<double>(selected.size());
                pp.overhead += r.run.partition_overhead_pct / static_cast<double>(selected.size());
                pp.busy += r.partition_busy_pct / static_cast<double>(selected.size());
                nlohmann::json j = nlohmann::json::parse(r.to_json());
                j["app"] = app;
                j["speedup_vs_dep"] = json_or_null(speedup);
                j["dep_over_policy_cross_bytes"] = json_or_null(cross);
                app_runs.push_back(std::move(j));
            }
            const sim::SimReport& rip = by.at("rip-dep");
            // Each side at least one byte, as SimDirections counts it: a
            // policy that moves nothing on one application (NStream) would
            // otherwise make the mean infinite or undefined.
            cross_ratios.push_back(ratio(std::max(static_cast<double>(dep.run.cross_node_bytes), 1.0),
                                         std::max(static_cast<double>(rip.run.cross_node_bytes), 1.0)));
            rip_speedups.push_back(ratio(dep.run.makespan_s, rip.run.makespan_s));
            if (rip.run.makespan_s < dep.run.makespan_s) ++sum.rip_dep_wins;
            if (by.count("dfifo")) dfifo_ratios.push_back(ratio(by.at("dfifo").run.makespan_s, dep.run.makespan_s));
            if (by.count("rip-mw")) mw_pct.push_back(by.at("rip-mw").partition_busy_pct);
        }
        sum.apps = selected.size();
        sum.cross_geomean = geomean(cross_ratios);
        sum.dfifo_slowdown = geomean(dfifo_ratios);
        sum.rip_speedup = geomean(rip_speedups);
        for (double v : mw_pct) sum.rip_mw_partition_pct += v / static_cast<double>(mw_pct.size());
        nlohmann::json policy_summary = nlohmann::json::array();
        for (const std::string& p : policies) {
            const PerPolicy& pp = per_policy.at(p);
            policy_summary.push_back({{"policy", p},
                                      {"geomean_speedup_vs_dep", json_or_null(geomean(pp.speedup))},
                                      {"mean_load_balance_pct", pp.balance},
                                      {"mean_partition_overhead_pct", pp.overhead},
                                      {"mean_partitioner_busy_pct", pp.busy}});
        }
        if (!a.json) {
            fmt::print("\n{}: geometric mean over {} apps of dep ÷ rip-dep cross-node bytes = {}; of rip-dep speedup "
                       "vs dep = {}; of dfifo ÷ dep makespan = {}; rip-dep beats dep on {} of {} apps.\n\n",
                       label, selected.size(), show(sum.cross_geomean), show(sum.rip_speedup), show(sum.dfifo_slowdown),
                       sum.rip_dep_wins, selected.size());
            fmt::print("| policy | speedup vs dep (geometric mean) | load balance % (mean) | partitioning overhead % "
                       "of worker time (mean) | partitioner busy % of makespan (mean) |\n|---|---|---|---|---|\n");
            for (const std::string& p : policies) {
                const PerPolicy& pp = per_policy.at(p);
                fmt::print("| {} | {} | {:.1f} | {:.3f} | {:.2f} |\n", p, show(geomean(pp.speedup)), pp.balance,
                           pp.overhead, pp.busy);
            }
            fmt::print("\n");
            std::fflush(stdout);
        }
        per_sockets.push_back({{"label", label},
                               {"machine", t.name},
                               {"sockets", sockets},
                               {"runs", app_runs},
                               {"geomean_dep_over_rip_dep_cross_bytes", json_or_null(sum.cross_geomean)},
                               {"geomean_rip_dep_speedup_vs_dep", json_or_null(sum.rip_speedup)},
                               {"geomean_dfifo_over_dep_makespan", json_or_null(sum.dfifo_slowdown)},
                               {"rip_dep_beats_dep", sum.rip_dep_wins},
                               {"per_policy", policy_summary},
                               {"rip_mw_partitioner_busy_pct_mean",
                                mw_pct.empty() ? nlohmann::json() : nlohmann::json(sum.rip_mw_partition_pct)}});
        summaries.push_back(sum);
    }

    if (!a.json) {
        std::string app_list;
        for (const std::string& app : selected) app_list += (app_list.empty() ? "" : ", ") + app;
        fmt::print("## Directions, simulated on bullion-s16 (geometric means over: {})\n\n", app_list);
        fmt::print("| machine model | dfifo ÷ dep makespan | rip-dep speedup vs dep | rip-dep beats dep | "
                   "dep ÷ rip-dep cross bytes | rip-mw partitioner busy % (mean) |\n|---|---|---|---|---|---|\n");
        for (const Summary& s : summaries)
            fmt::print("| simulated on {} | {} | {} | {} of {} | {} | {:.3f} |\n", s.machine, show(s.dfifo_slowdown),
                       show(s.rip_speedup), s.rip_dep_wins, s.apps, show(s.cross_geomean), s.rip_mw_partition_pct);
        fmt::print("\nSize {}, contention {}, RIP window max({} tasks, the graph's initial part), seed {}, "
                   "partitioning {}. Partitioner busy % = simulated partitioning time / makespan. Cross bytes: each "
                   "application's ratio with both sides counted as at least one byte.\n",
                   a.size, a.contention,
                   a.window, a.seed,
                   a.partition_s_per_task > 0 ? fmt::format("{} s per task (fixed)", a.partition_s_per_task)
                                              : std::string("modelled from the window's size (sim::PartitionCostModel)"));
    }
    emit({{"label", "simulated on bullion-s16"},
          {"size", a.size},
          {"contention", a.contention},
          {"window", a.window},
          {"seed", a.seed},
          {"partition_s_per_task", a.partition_s_per_task},
          {"sockets", per_sockets}},
         a.json, a.json_file);
    return 0;
}

// ---------------------------------------------------------------- partition-cost

struct CostArgs {
    std::string sockets = "4,8,16";
    std::string app = "all";
    std::string size = "sim";
    bool json = false;
    std::string json_file;
};

int partition_cost_command(const CostArgs& a) {
    std::vector<unsigned> socket_counts;
    for (const std::string& s : split(a.sockets, "--sockets")) socket_counts.push_back(to_unsigned(s, "--sockets"));
    const std::vector<std::string> selected = apps::parse_app_list(a.app, "--app");
    for (const std::string& app : selected) (void)apps::parse_app_size(a.size, app, "--size");
    std::vector<sim::TimedMachine> machines;
    for (unsigned s : socket_counts) machines.push_back(sim::model("bullion-s16", s));

    struct Sample {
        std::string app, policy;
        tasks::PartitionSize size;
        double host_s;
    };
    std::vector<Sample> samples;
    sim::SimOptions options;
    options.partition_s_per_task = 1e-9;   // the simulated time does not matter here
    for (const sim::TimedMachine& t : machines) {
        const std::vector<unsigned> nodes = sim::worker_node_set(t.machine, options.mapping);
        for (const std::string& app : selected) {
            const sim::Graph graph =
                apps::build_graph(app, apps::parse_app_size(a.size, app, "--size"), t.machine, nodes);
            for (const char* policy : {"rip-dep", "rip-mw"}) {
                const sim::SimReport r = sim::simulate(t, graph, policy, options);
                for (const sim::PartitionRecord& p : r.partitions)
                    if (p.size.parts > 1) samples.push_back({app, policy, p.size, p.host_s});
            }
        }
    }
    if (samples.empty()) throw Error("--sockets", "no window was partitioned into more than one part");
    // Least squares, no intercept: host_s ~ a * x1 + b * x2 with
    // x1 = vertices * log2(parts), x2 = edges * log2(parts); each sample
    // weighted by 1 / host_s^2 so that the relative error is minimised (the
    // small windows of RIP-MW would otherwise not count).
    double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
    for (const Sample& x : samples) {
        const double l = std::log2(static_cast<double>(x.size.parts));
        const double x1 = static_cast<double>(x.size.vertices) * l, x2 = static_cast<double>(x.size.edges) * l;
        const double w = 1 / std::max(1e-12, x.host_s * x.host_s);
        s11 += w * x1 * x1;
        s12 += w * x1 * x2;
        s22 += w * x2 * x2;
        s1y += w * x1 * x.host_s;
        s2y += w * x2 * x.host_s;
    }
    double av = 0, be = 0;
    const double det = s11 * s22 - s12 * s12;
    if (det > 0) {
        av = (s1y * s22 - s2y * s12) / det;
        be = (s2y * s11 - s1y * s12) / det;
    }
    if (!(det > 0) || av < 0 || be < 0) {   // one term alone, the better of the two
        const double a_only = s1y / s11, b_only = s2y / s22;
        double err_a = 0, err_b = 0;
        for (const Sample& x : samples) {
            const double l = std::log2(static_cast<double>(x.size.parts));
            err_a += std::pow(a_only * static_cast<double>(x.size.vertices) * l / x.host_s - 1, 2);
            err_b += std::pow(b_only * static_cast<double>(x.size.edges) * l / x.host_s - 1, 2);
        }
        av = err_a <= err_b ? a_only : 0;
        be = err_a <= err_b ? 0 : b_only;
    }
    const sim::PartitionCostModel fitted{av, be};
    const sim::PartitionCostModel current{};
    std::vector<double> rel;
    nlohmann::json jobs = nlohmann::json::array();
    if (!a.json)
        fmt::print("| app | policy | parts | vertices | edges | host s | fitted model s | model ÷ host | "
                   "default model s |\n|---|---|---|---|---|---|---|---|---|\n");
    for (const Sample& x : samples) {
        const double m = fitted.seconds(x.size);
        rel.push_back(m / x.host_s);
        if (!a.json && (x.policy == "rip-dep" || x.size.vertices >= 1024))
            fmt::print("| {} | {} | {} | {} | {} | {:.5f} | {:.5f} | {:.2f} | {:.5f} |\n", x.app, x.policy,
                       x.size.parts, x.size.vertices, x.size.edges, x.host_s, m, m / x.host_s,
                       current.seconds(x.size));
        jobs.push_back({{"app", x.app},
                        {"policy", x.policy},
                        {"parts", x.size.parts},
                        {"vertices", x.size.vertices},
                        {"edges", x.size.edges},
                        {"host_s", x.host_s},
                        {"fitted_s", m}});
    }
    std::sort(rel.begin(), rel.end());
    const double median = rel[rel.size() / 2], lo = rel.front(), hi = rel.back();
    if (!a.json)
        fmt::print("\n{} windows (RIP-MW windows under 1,024 tasks not listed). Fitted on this host: s_per_vertex = "
                   "{:.4g} s, s_per_edge = {:.4g} s; model ÷ host time: median {:.2f}, range {:.2f}–{:.2f}. "
                   "Defaults in sim::PartitionCostModel: s_per_vertex = {:.4g} s, s_per_edge = {:.4g} s.\n",
                   samples.size(), av, be, median, lo, hi, current.s_per_vertex, current.s_per_edge);
    emit({{"label", "host time of the real partitioner on windows simulated on bullion-s16"},
          {"size", a.size},
          {"jobs", jobs},
          {"s_per_vertex", av},
          {"s_per_edge", be},
          {"model_over_host_median", median},
          {"model_over_host_min", lo},
          {"model_over_host_max", hi}},
         a.json, a.json_file);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{"numaware task-level simulator benchmarks: speed (simulated tasks per host second) and directions "
                 "(the published results' tables on the bullion S16 model)"};
    cli.require_subcommand(1);

    SpeedArgs s;
    CLI::App* speed = cli.add_subcommand("speed", "Simulated tasks per host second on a ~1 M-task graph");
    speed->add_option("--tasks", s.tasks, "Approximate graph size (the app's iterations are scaled to it)")
        ->capture_default_str();
    speed->add_option("--app", s.app, "Application whose graph is simulated")->capture_default_str();
    speed->add_option("--size", s.size, "test, sim or N,BLOCK,ITERATIONS instead of --tasks");
    speed->add_option("--policy", s.policy, "Policies, comma list")->capture_default_str();
    speed->add_option("--machine", s.machine, "Named machine model")->capture_default_str();
    speed->add_option("--sockets", s.sockets, "Sockets of the model (0: all)")->capture_default_str();
    speed->add_option("--contention", s.contention, "snapshot|exact")->capture_default_str();
    speed->add_option("--spawn-s", s.spawn_s, "Seconds between two submissions of the spawning thread")
        ->capture_default_str();
    speed->add_option("--halos", s.halos, "Stencil halos: whole-blocks (published) or rows")->capture_default_str();
    speed->add_option("--reps", s.reps, "Simulations per policy; the median host time is reported")
        ->check(CLI::Range(1u, 100u))
        ->capture_default_str();
    speed->add_flag("--json", s.json, "Print one JSON document instead of the table");
    speed->add_option("--json-file", s.json_file, "Also write the JSON document to this file");

    DirectionArgs d;
    CLI::App* dir = cli.add_subcommand("directions", "The published-direction tables on bullion-s16");
    dir->add_option("--sockets", d.sockets, "Socket counts, comma list (4, 8, 16)")->capture_default_str();
    dir->add_option("--app", d.app, "Applications, comma list or all")->capture_default_str();
    dir->add_option("--policy", d.policy, "Policies, comma list (must include dep and rip-dep)")
        ->capture_default_str();
    dir->add_option("--size", d.size, "test, sim or N,BLOCK,ITERATIONS")->capture_default_str();
    dir->add_option("--halos", d.halos, "Stencil halos: whole-blocks (published) or rows")->capture_default_str();
    dir->add_option("--contention", d.contention, "snapshot|exact")->capture_default_str();
    dir->add_option("--window", d.window, "RIP: tasks per partitioned window (raised to the graph's initial part)")->capture_default_str();
    dir->add_option("--seed", d.seed, "Seed of the policies")->capture_default_str();
    dir->add_option("--steal-delay-tasks", d.steal_delay_tasks,
                    "LQ, DEP, RIP: idle time, in mean task durations, before each wider ring of nodes is searched (0: "
                    "all at once; negative: the default, 32)")
        ->capture_default_str();
    dir->add_option("--partition-s-per-task", d.partition_s_per_task,
                    "Simulated partitioning seconds per window task (0: the cost model)")
        ->capture_default_str();
    dir->add_flag("--rip-first-touch", d.rip_first_touch,
                  "RIP: balance the bytes each task writes first too (METIS, two constraints)");
    dir->add_flag("--json", d.json, "Print one JSON document instead of the tables");
    dir->add_option("--json-file", d.json_file, "Also write the JSON document to this file");

    CostArgs c;
    CLI::App* cost = cli.add_subcommand("partition-cost",
                                        "Fit the simulator's partitioning cost model to the real partitioner's host time");
    cost->add_option("--sockets", c.sockets, "Socket counts, comma list")->capture_default_str();
    cost->add_option("--app", c.app, "Applications, comma list or all")->capture_default_str();
    cost->add_option("--size", c.size, "test, sim or N,BLOCK,ITERATIONS")->capture_default_str();
    cost->add_flag("--json", c.json, "Print one JSON document instead of the table");
    cost->add_option("--json-file", c.json_file, "Also write the JSON document to this file");

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = cli.exit(e);
        return rc == 0 ? 0 : 2;
    }
    try {
        if (speed->parsed()) return speed_command(s);
        if (cost->parsed()) return partition_cost_command(c);
        return directions_command(d);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "numaware_bench_sim: %s\n", e.what());
        return 2;
    }
}
