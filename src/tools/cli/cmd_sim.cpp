// tools/cli/cmd_sim.cpp — `numaware sim`: the task-level simulator.
//
// `numaware sim machine` shows the timed machine the simulator would use:
// a named model of a published machine or any machine spec, with the
// latency and bandwidth figures filled in and every rule that filled them.
//
// `numaware sim tasks` replays the task graphs of the applications under
// scheduler policies on a timed machine: makespan, speedup against a named
// baseline policy of the same run, cross-node bytes, load balance and
// partitioning overhead, every figure labelled with the machine model.
// --trace writes each run's Chrome trace (tasks::ChromeTrace, simulated
// time) for Perfetto or chrome://tracing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "apps/catalog.hpp"
#include "numaware/error.hpp"
#include "numaware/observer.hpp"
#include "numaware/sim.hpp"
#include "numaware/team.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {

namespace {

struct SimMachineOptions {
    std::string machine = "live";
    bool json = false;
};

nlohmann::json to_json(const sim::TimedMachine& t) {
    nlohmann::json nodes = nlohmann::json::array();
    for (std::size_t i = 0; i < t.machine.nodes.size(); ++i)
        nodes.push_back({{"os_index", t.machine.nodes[i].os_index},
                         {"cpus", t.machine.nodes[i].cpus.size()},
                         {"memory_gbps", t.memory_gbps[i]}});
    return {{"name", t.name},       {"simulated", true},         {"nodes", nodes},
            {"latency_ns", t.latency_ns}, {"link_gbps", t.link_gbps}, {"rules", t.rules},
            {"source", t.source}};
}

void print_matrix(const sim::TimedMachine& t, const NodeMatrix<double>& m, const std::string& title) {
    fmt::print("\n{}\n{:>6}", title, "node");
    for (const Node& n : t.machine.nodes) fmt::print(" {:>8}", n.os_index);
    fmt::print("\n");
    for (std::size_t r = 0; r < m.size(); ++r) {
        fmt::print("{:>6}", t.machine.nodes[r].os_index);
        for (double v : m[r]) fmt::print(" {:>8}", v == 0.0 ? std::string("-") : fmt::format("{:.4g}", v));
        fmt::print("\n");
    }
}

void show(const sim::TimedMachine& t) {
    fmt::print("timed machine (simulated): {}\n", t.name);
    fmt::print("{} nodes, {} CPUs\n\n{:>6} {:>6} {:>12}\n", t.machine.node_count(), t.machine.cpu_count(), "node",
               "cpus", "memory GB/s");
    for (std::size_t i = 0; i < t.machine.nodes.size(); ++i)
        fmt::print("{:>6} {:>6} {:>12.4g}\n", t.machine.nodes[i].os_index, t.machine.nodes[i].cpus.size(),
                   t.memory_gbps[i]);
    print_matrix(t, t.latency_ns, "latency (ns; row = reader node, column = home node)");
    print_matrix(t, t.link_gbps, "link bandwidth (GB/s; home -> reader; - = local)");
    fmt::print("\nrules:\n");
    for (const std::string& r : t.rules) fmt::print("  {}\n", r);
    fmt::print("source: {}\n", t.source);
}

// ---- sim tasks ----

struct SimTasksOptions {
    std::string machine = "bullion-s16";
    unsigned sockets = 0;
    std::string app = "jacobi";
    std::string policy = "dep,rip-dep";
    std::string baseline;   // empty: the first policy listed
    std::string size = "sim";
    std::string halos = "rows";
    unsigned threads = 0;
    std::string mapping = "contiguous";
    std::string contention = "snapshot";
    std::uint64_t seed = 1;
    double steal_delay_tasks = -1;   // < 0: the policies' default
    std::size_t window = tasks::PolicyOptions{}.window;
    std::size_t intersection = tasks::PolicyOptions{}.intersection;
    bool json = false;
    std::string trace;   // empty: no trace
};

// "a,b,c" -> {"a", "b", "c"}; empty items are an error naming `field`.
template <class Names>
std::string join(const Names& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

std::vector<std::string> pick_policies(const std::string& text, const tasks::PolicyOptions& options) {
    std::vector<std::string> policies = numaware::apps::parse_policy_list(text, "--policy");
    for (const std::string& p : policies) (void)tasks::make_policy(p, options);   // settings out of range fail here
    return policies;
}

// The machine: a named model cut to --sockets, or any spec.
sim::TimedMachine pick_machine(const SimTasksOptions& o) {
    if (o.sockets == 0) return sim::timed_from_spec(o.machine);
    const auto names = sim::model_names();
    if (std::find(names.begin(), names.end(), o.machine) == names.end())
        throw Error("--sockets", fmt::format("cuts a named model ({}); '{}' is not one", join(names),
                                             o.machine));
    return sim::model(o.machine, o.sockets);
}

// Where the trace of one run goes: `path` itself when the command makes one
// run; otherwise `path` with ".APP" (several apps) and ".POLICY" (several
// policies) inserted before its extension: trace.json -> trace.dep.json.
std::string trace_path(const std::string& path, const std::string& app, const std::string& policy, bool many_apps,
                       bool many_policies) {
    std::string insert;
    if (many_apps) insert += "." + app;
    if (many_policies) insert += "." + policy;
    const std::size_t slash = path.find_last_of('/');
    const std::size_t dot = path.find_last_of('.');
    const bool has_ext = dot != std::string::npos && dot > (slash == std::string::npos ? 0 : slash + 1);
    return has_ext ? path.substr(0, dot) + insert + path.substr(dot) : path + insert;
}

struct AppRuns {
    std::string app;
    std::string graph;
    std::vector<sim::SimReport> reports;   // in policy order, baseline included
    std::size_t baseline = 0;              // index into reports
};

std::optional<double> ratio(double num, double den) {
    if (den == 0 || !std::isfinite(num / den)) return std::nullopt;
    return num / den;
}

std::string fmt_ratio(std::optional<double> r) { return r ? fmt::format("{:.2f}", *r) : std::string("-"); }

void print_tables(const sim::TimedMachine& t, const std::vector<AppRuns>& all, const std::string& baseline) {
    bool first = true;
    for (const AppRuns& a : all) {
        if (!first) fmt::print("\n");
        first = false;
        const sim::SimReport& base = a.reports[a.baseline];
        fmt::print("simulated on {} — {}\n", t.name, a.graph);
        fmt::print("{} tasks, {} workers, contention {}\n", base.run.tasks, base.workers, base.contention);
        const std::string speed = fmt::format("speedup vs {}", baseline);
        const std::string cross_ratio = fmt::format("cross ÷ {}", baseline);
        fmt::print("{:<8} {:>12} {:>{}} {:>14} {:>{}} {:>20} {:>15} {:>13} {:>10}\n", "policy", "makespan ms", speed,
                   speed.size(), "cross-node MB", cross_ratio, cross_ratio.size() - 1, "stolen across (b/o)",
                   "load balance %", "partition %", "host s");
        for (const sim::SimReport& r : a.reports)
            fmt::print("{:<8} {:>12.3f} {:>{}} {:>14.2f} {:>{}} {:>20} {:>15.1f} {:>13.2f} {:>10.3f}\n",
                       r.run.policy,
                       r.run.makespan_s * 1e3, fmt_ratio(ratio(base.run.makespan_s, r.run.makespan_s)), speed.size(),
                       static_cast<double>(r.run.cross_node_bytes) / 1e6,
                       fmt_ratio(ratio(static_cast<double>(r.run.cross_node_bytes),
                                       static_cast<double>(base.run.cross_node_bytes))),
                       cross_ratio.size() - 1,
                       fmt::format("{} ({}/{})", r.run.cross_node_steals, r.run.cross_node_steals_backlog,
                                   r.run.cross_node_steals_occupied),
                       r.run.load_balance_pct,
                       r.run.partition_overhead_pct, r.host_s);
    }
    fmt::print("\nspeedup = makespan({0}) / makespan(policy); cross ÷ {0} = cross-node bytes(policy) / "
               "cross-node bytes({0}); MB = 10^6 bytes; stolen across = tasks taken from another node's queues (b/o: of them, taken before the thief's steal delay by the backlog rule / the occupied rule); "
               "partition % = simulated partitioning time / (workers × makespan); host s = this host's time to simulate (the only figure not simulated).\n",
               baseline);
}

nlohmann::ordered_json runs_json(const sim::TimedMachine& t, const std::vector<AppRuns>& all,
                                 const std::string& baseline) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const AppRuns& a : all) {
        const sim::SimReport& base = a.reports[a.baseline];
        for (const sim::SimReport& r : a.reports) {
            nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.to_json());
            j["app"] = a.app;
            j["baseline"] = baseline;
            const auto speedup = ratio(base.run.makespan_s, r.run.makespan_s);
            j["speedup_vs_baseline"] = speedup ? nlohmann::ordered_json(*speedup) : nlohmann::ordered_json();
            const auto cross = ratio(static_cast<double>(r.run.cross_node_bytes),
                                     static_cast<double>(base.run.cross_node_bytes));
            j["cross_node_bytes_vs_baseline"] = cross ? nlohmann::ordered_json(*cross) : nlohmann::ordered_json();
            runs.push_back(std::move(j));
        }
    }
    return {{"label", "simulated on " + t.name}, {"machine", t.name}, {"simulated", true},
            {"baseline", baseline},            {"runs", runs}};
}

void sim_tasks(const SimTasksOptions& o) {
    // Everything is checked before the first (possibly long) simulation.
    tasks::PolicyOptions policy_options;
    policy_options.seed = o.seed;
    policy_options.window = o.window;
    policy_options.intersection = o.intersection;
    policy_options.steal_delay_tasks = tasks::steal_delay_setting(o.steal_delay_tasks);
    std::vector<std::string> policies = pick_policies(o.policy, policy_options);
    const std::string baseline = o.baseline.empty() ? policies.front() : o.baseline;
    if (std::find(policies.begin(), policies.end(), baseline) == policies.end()) {
        const auto names = tasks::policy_names();
        if (std::find(names.begin(), names.end(), baseline) == names.end())
            throw Error("--baseline", fmt::format("unknown policy '{}'; one of {}", baseline, join(names)));
        (void)tasks::make_policy(baseline, policy_options);
        policies.insert(policies.begin(), baseline);   // run it too: speedups come from the same run
    }
    const std::vector<std::string> apps = numaware::apps::parse_app_list(o.app, "--app");
    std::vector<numaware::apps::AppSize> shapes;
    const numaware::apps::Halos halos = numaware::apps::parse_halos(o.halos, "--halos");
    for (const std::string& a : apps) {
        shapes.push_back(numaware::apps::parse_app_size(o.size, a, "--size"));
        shapes.back().halos = halos;
    }
    const sim::TimedMachine t = pick_machine(o);

    sim::SimOptions options;
    options.mapping.threads = o.threads;
    options.mapping.kind = parse_mapping_kind(o.mapping, "--mapping");
    options.policy = policy_options;
    options.contention = sim::parse_contention(o.contention);
    const std::vector<unsigned> nodes = sim::worker_node_set(t.machine, options.mapping);

    const auto traced = [&](const std::string& app, const std::string& policy) {
        return trace_path(o.trace, app, policy, apps.size() > 1, policies.size() > 1);
    };
    if (!o.trace.empty())   // an unwritable path fails now, not after the simulations
        for (const std::string& a : apps)
            for (const std::string& p : policies)
                if (!std::ofstream(traced(a, p)))
                    throw Error("--trace", fmt::format("cannot open '{}' for writing", traced(a, p)));

    std::vector<AppRuns> all;
    for (std::size_t i = 0; i < apps.size(); ++i) {
        const sim::Graph graph = numaware::apps::build_graph(apps[i], shapes[i], t.machine, nodes);
        AppRuns a{apps[i], graph.name, {}, 0};
        for (const std::string& p : policies) {
            if (p == baseline) a.baseline = a.reports.size();
            if (o.trace.empty()) {
                a.reports.push_back(sim::simulate(t, graph, p, options));
                continue;
            }
            tasks::ChromeTrace trace;
            sim::SimOptions traced_options = options;
            traced_options.observer = &trace;
            a.reports.push_back(sim::simulate(t, graph, p, traced_options));
            try {
                trace.write(traced(apps[i], p));
            } catch (const Error&) {
                throw Error("--trace", fmt::format("cannot write '{}'", traced(apps[i], p)));
            }
        }
        all.push_back(std::move(a));
    }
    if (o.json)
        fmt::print("{}\n", runs_json(t, all, baseline).dump(2));
    else
        print_tables(t, all, baseline);
}

}  // namespace

void add_sim_command(CLI::App& app) {
    CLI::App* sim_cmd = app.add_subcommand(
        "sim", "The simulators (results labelled simulated): timed machine models, task graphs under the scheduler "
               "policies, workloads on a cache hierarchy under prefetchers");
    sim_cmd->require_subcommand(1);
    sim_cmd->footer(
        "Examples: numaware sim tasks --machine bullion-s16 --sockets 8 --app jacobi --policy dep,rip-dep\n"
        "          numaware sim memory --preset thesis-4s --workload cg --prefetch stride:8,nasp:8:64");
    auto opts = std::make_shared<SimMachineOptions>();
    CLI::App* cmd = sim_cmd->add_subcommand("machine", "Show the timed machine: latency and bandwidth as simulated");
    cmd->add_option("--machine", opts->machine,
                    "A named model (bullion-s16, bullion-s16:8, altix-uv100, sim-4socket, skylake-sp-2s, "
                    "epyc-nps4-2s, sandybridge-ep-4s) or any machine SPEC as `numaware topo` takes it")
        ->capture_default_str();
    cmd->add_flag("--json", opts->json, "Print the timed machine as JSON");
    cmd->footer("Example: numaware sim machine --machine bullion-s16:8");
    cmd->callback([opts] {
        const sim::TimedMachine t = sim::timed_from_spec(opts->machine);
        if (opts->json)
            fmt::print("{}\n", to_json(t).dump(2));
        else
            show(t);
    });

    auto topts = std::make_shared<SimTasksOptions>();
    CLI::App* tcmd = sim_cmd->add_subcommand(
        "tasks", "Simulate the applications' task graphs under scheduler policies on a timed machine");
    tcmd->add_option("--machine", topts->machine, "A named model (bullion-s16, altix-uv100, ...) or any machine SPEC")
        ->capture_default_str();
    tcmd->add_option("--sockets", topts->sockets, "Cut the named model to its first N sockets (0: the whole model)")
        ->capture_default_str();
    tcmd->add_option("--app", topts->app,
                     "Application(s), comma list or all: jacobi, gauss-seidel, red-black, nstream, cg, "
                     "integral-histogram, qr, inversion")
        ->capture_default_str();
    tcmd->add_option("--policy", topts->policy, "Policies, comma list or all: dfifo, lq, dep, sa, rip-dep, rip-mw")
        ->capture_default_str();
    tcmd->add_option("--baseline", topts->baseline,
                     "Policy every speedup is relative to (default: the first policy listed; run too if not listed)");
    tcmd->add_option("--size", topts->size, "test, sim, or N,BLOCK,ITERATIONS for every app")->capture_default_str();
    tcmd->add_option("--halos", topts->halos,
                     "Stencil halos: rows (the rows a task reads) or whole-blocks (whole neighbour blocks)")
        ->capture_default_str();
    tcmd->add_option("--threads", topts->threads, "Simulated workers (0: one per CPU of the machine)")
        ->capture_default_str();
    tcmd->add_option("--mapping", topts->mapping, "contiguous|scatter")->capture_default_str();
    tcmd->add_option("--contention", topts->contention, "snapshot|exact")->capture_default_str();
    tcmd->add_option("--seed", topts->seed, "Seed of the policies")->capture_default_str();
    tcmd->add_option("--steal-delay-tasks", topts->steal_delay_tasks,
                     "LQ, DEP, RIP: idle time, in mean task durations, before each wider ring of nodes is searched "
                     "(0: all at once; negative: the default, 32)")
        ->capture_default_str();
    tcmd->add_option("--window", topts->window, "RIP-DEP, RIP-MW: tasks per partitioned window (raised to the graph's initial part: its initialisation and first step)")
        ->capture_default_str();
    tcmd->add_option("--intersection", topts->intersection,
                     "RIP-MW: tasks of the previous window kept as fixed vertices (< --window)")
        ->capture_default_str();
    tcmd->add_flag("--json", topts->json, "Print one JSON document: label, machine, runs");
    tcmd->add_option("--trace", topts->trace,
                     "Write each run's Chrome trace-event JSON (simulated time; opens in Perfetto or "
                     "chrome://tracing) to FILE; with several policies (or apps) one file per run, the policy "
                     "(app) name inserted before the extension: FILE=t.json, --policy dep,rip-dep -> t.dep.json, "
                     "t.rip-dep.json")
        ->type_name("FILE");
    tcmd->footer("Example: numaware sim tasks --machine bullion-s16 --sockets 8 --app jacobi --policy dep,rip-dep");
    tcmd->callback([topts] { sim_tasks(*topts); });
    add_sim_memory_command(*sim_cmd);
}

}  // namespace numaware::cli
