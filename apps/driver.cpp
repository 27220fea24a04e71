// apps/driver.cpp — numaware_bench_apps: runs the task-runtime
// applications under the scheduler policies and reports time, locality and
// whether each result matches its serial reference.
//
//   numaware_bench_apps --app jacobi --policy all --threads 2
//       --machine "nodes=2 cpus-per-node=1 mem-per-node=4G distances=10,21/21,10"
//
// For every (app, policy) pair a fresh Team and Runtime are built, the app
// runs once at its test size (or --bench-size, or --size n,block,iterations;
// 0 in a field means the app's default), and one line (or one JSON object
// with --json) is printed. Homes: with the live machine the runtime asks the
// kernel where pages are; with any other machine (a synthetic one pinned
// onto this host) regions belong to the synthetic node of the task that
// first writes them (RuntimeOptions::kernel_homes = false); --homes
// overrides. The kernel's automatic NUMA balancing is switched off for the
// runs and restored after (--balancing keep leaves it): it migrates pages
// toward whichever thread touches them, behind the policy being measured,
// and its hinting faults stall the workers they hit (in the emulated 8-node
// guest, RIP-DEP's NStream stole tasks from nodes whose workers stalled;
// BENCHMARKS.md, 2026-12-05). The stencil skeleton does the same
// (StencilOptions::balancing_off). Exit status: 0 when every run matches its reference, 1 when
// one does not, 2 for bad arguments or a failed run.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/programs.hpp"
#include "numaware/balancing.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"

namespace {

using namespace numaware;

struct Options {
    std::string app = "all";
    std::string policy = "all";
    std::string machine = "live";
    unsigned threads = 0;
    std::string mapping = "scatter";
    std::string size;
    bool bench_size = false;
    std::uint64_t seed = 1;
    tasks::PolicyOptions rip{};   // window, initial_extra, intersection, imbalance (seed from `seed`)
    std::string homes = "auto";
    std::string halos = "rows";
    double steal_delay_tasks = -1;   // < 0: the policies' default
    std::string balancing = "off";   // automatic NUMA balancing during the runs: off or keep
    bool json = false;
};

// "n,block,iterations"; fields may be empty or 0 for the app's default.
apps::AppSize parse_size(const std::string& text) {
    std::vector<std::string> parts{""};
    for (char c : text) {
        if (c == ',')
            parts.emplace_back();
        else
            parts.back() += c;
    }
    if (parts.size() != 3) throw Error("--size", "expected n,block,iterations, got '" + text + "'");
    auto number = [&](const std::string& p, const char* what) -> unsigned long long {
        if (p.empty()) return 0;
        std::size_t used = 0;
        unsigned long long v = 0;
        try {
            v = std::stoull(p, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != p.size() || p[0] == '-')
            throw Error("--size", fmt::format("{} must be a non-negative integer, got '{}'", what, p));
        return v;
    };
    apps::AppSize s;
    s.n = static_cast<std::size_t>(number(parts[0], "n"));
    s.block = static_cast<std::size_t>(number(parts[1], "block"));
    const unsigned long long it = number(parts[2], "iterations");
    if (it > 1000000) throw Error("--size", fmt::format("iterations must be at most 1000000, got {}", it));
    s.iterations = static_cast<unsigned>(it);
    return s;
}

std::string join(const std::vector<unsigned>& nodes, const std::vector<std::uint64_t>& counts) {
    std::string out;
    for (std::size_t i = 0; i < nodes.size() && i < counts.size(); ++i)
        out += fmt::format("{}{}:{}", i ? " " : "", nodes[i], counts[i]);
    return out;
}

int run(const Options& o, bool size_given) {
    const Machine machine = Machine::from_spec(o.machine);
    TeamMapping mapping;
    mapping.kind = parse_mapping_kind(o.mapping, "--mapping");
    mapping.threads = o.threads != 0 ? o.threads : static_cast<unsigned>(machine.cpu_count());
    bool kernel_homes = o.machine == "live";
    if (o.homes == "kernel")
        kernel_homes = true;
    else if (o.homes == "writer")
        kernel_homes = false;
    else if (o.homes != "auto")
        throw Error("--homes", "must be auto, kernel or writer, got '" + o.homes + "'");

    std::vector<const apps::App*> selected;
    for (const std::string& name : apps::parse_app_list(o.app, "--app")) selected.push_back(&apps::find_app(name));
    const std::vector<std::string> policies = apps::parse_policy_list(o.policy, "--policy");
    const std::optional<apps::AppSize> forced = size_given ? std::optional(parse_size(o.size)) : std::nullopt;
    const apps::Halos halos = apps::parse_halos(o.halos, "--halos");

    tasks::PolicyOptions policy_options = o.rip;
    policy_options.seed = o.seed;
    policy_options.steal_delay_tasks = tasks::steal_delay_setting(o.steal_delay_tasks);
    for (const std::string& p : policies) (void)tasks::make_policy(p, policy_options);   // bad names fail first
    // Balancing off for the runs where the kernel has it and allows it;
    // otherwise the runs go on and the note says why (the state it was
    // left in is "during").
    nlohmann::json balancing{{"requested", o.balancing}};
    std::optional<BalancingGuard> balancing_off;
    try {
        balancing["before"] = std::string(to_string(balancing_state()));
        if (o.balancing == "off") balancing_off.emplace(BalancingState::off);
        balancing["during"] = std::string(to_string(balancing_state()));
    } catch (const Error& e) {
        balancing["note"] = e.what();
        if (!o.json) std::fprintf(stderr, "numaware_bench_apps: automatic NUMA balancing: %s\n", e.what());
    }
    bool all_match = true;
    nlohmann::json results = nlohmann::json::array();
    if (!o.json)
        fmt::print("{:<19} {:<8} {:>9} {:>7} {:>10} {:>7} {:>12} {:>14} {:>12} {:>6} {:>6} {:>6}  {}\n", "app",
                   "policy", "seconds", "matches", "max_error", "tasks", "cross_bytes", "steals (b/o)", "dep_bytes",
                   "lb%", "rt%", "part%", "tasks/node");
    for (const apps::App* app : selected) {
        apps::AppSize size = forced ? *forced : o.bench_size ? app->bench_size : app->test_size;
        size.halos = halos;
        std::string detail;
        for (const std::string& policy : policies) {
            Team team{machine, mapping};
            tasks::Runtime rt{team, policy, policy_options, tasks::RuntimeOptions{.kernel_homes = kernel_homes}};
            const apps::AppRun r = apps::run_app(*app, rt, size);
            const tasks::RunReport rep = rt.report();
            all_match = all_match && r.matches;
            detail = r.detail;
            if (o.json) {
                results.push_back({{"app", app->name},
                                   {"policy", policy},
                                   {"seconds", r.seconds},
                                   {"matches", r.matches},
                                   {"max_error", r.max_error},
                                   {"tasks", r.tasks},
                                   {"detail", r.detail},
                                   {"threads", mapping.threads},
                                   {"mapping", o.mapping},
                                   {"kernel_homes", kernel_homes},
                                   {"report", nlohmann::json::parse(rep.to_json())}});
            } else {
                // Steals across nodes, and of them the ones taken before the
                // thief's delay by the backlog / the occupied rule.
                const std::string steals = fmt::format("{} ({}/{})", rep.cross_node_steals,
                                                       rep.cross_node_steals_backlog, rep.cross_node_steals_occupied);
                fmt::print("{:<19} {:<8} {:>9.4f} {:>7} {:>10.3g} {:>7} {:>12} {:>14} {:>12} {:>6.1f} {:>6.1f} "
                           "{:>6.1f}  {}\n",
                           app->name, policy, r.seconds, r.matches ? "yes" : "NO", r.max_error, r.tasks,
                           rep.cross_node_bytes, steals, rep.dep_bytes, rep.load_balance_pct,
                           rep.runtime_overhead_pct, rep.partition_overhead_pct, join(rep.nodes, rep.tasks_per_node));
                std::fflush(stdout);
            }
        }
        if (!o.json) fmt::print("  {}: {}\n", app->name, detail);
    }
    if (o.json) {
        nlohmann::json doc{{"machine", machine.name},
                           {"threads", mapping.threads},
                           {"mapping", o.mapping},
                           {"seed", o.seed},
                           {"window", o.rip.window},
                           {"initial_extra", o.rip.initial_extra},
                           {"intersection", o.rip.intersection},
                           {"halos", o.halos},
                           {"balancing", balancing},
                           {"all_match", all_match},
                           {"runs", results}};
        fmt::print("{}\n", doc.dump(2));
    }
    return all_match ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{"Runs the task-runtime applications under the scheduler policies and checks them"};
    Options o;
    cli.add_option("--app", o.app, "Applications, comma list or all")->capture_default_str();
    cli.add_option("--policy", o.policy, "Policies, comma list or all (dfifo, lq, dep, sa, rip-dep, rip-mw)")
        ->capture_default_str();
    cli.add_option("--machine", o.machine, "Machine SPEC: live, a .xml/.json file, @file, or a synthetic description")
        ->capture_default_str();
    cli.add_option("--threads", o.threads, "Workers (0: every CPU of the machine)")->capture_default_str();
    cli.add_option("--mapping", o.mapping, "scatter or contiguous")->capture_default_str();
    CLI::Option* size_opt = cli.add_option("--size", o.size, "n,block,iterations (0 or empty: the app's default)");
    CLI::Option* bench_opt =
        cli.add_flag("--bench-size", o.bench_size, "Use each app's bench size instead of its test size");
    size_opt->excludes(bench_opt);
    cli.add_option("--seed", o.seed, "Policy seed")->capture_default_str();
    cli.add_option("--window", o.rip.window, "RIP-DEP / RIP-MW: tasks per partitioned window")->capture_default_str();
    cli.add_option("--initial-extra", o.rip.initial_extra, "RIP: extra tasks in the first window")
        ->capture_default_str();
    cli.add_option("--intersection", o.rip.intersection, "RIP-MW: previous-window tasks kept as fixed vertices")
        ->capture_default_str();
    cli.add_option("--homes", o.homes, "auto (kernel for live, writer otherwise), kernel or writer")
        ->capture_default_str();
    cli.add_option("--steal-delay-tasks", o.steal_delay_tasks,
                   "LQ, DEP, RIP: idle time, in mean task durations, before each wider ring of nodes is searched (0: "
                   "all at once; negative: the default, 32)")
        ->capture_default_str();
    cli.add_option("--halos", o.halos,
                   "Stencil halos: rows (the rows a task reads) or whole-blocks (whole neighbour blocks)")
        ->capture_default_str();
    cli.add_option("--balancing", o.balancing,
                   "Automatic NUMA balancing during the runs: off (switched off, restored after; needs root) or keep")
        ->check(CLI::IsMember({"off", "keep"}))
        ->capture_default_str();
    cli.add_flag("--json", o.json, "Print one JSON document");
    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = cli.exit(e);   // prints help or the error
        return rc == 0 ? 0 : 2;
    }
    try {
        return run(o, size_opt->count() > 0);
    } catch (const numaware::Error& e) {
        std::fprintf(stderr, "numaware_bench_apps: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "numaware_bench_apps: %s\n", e.what());
        return 2;
    }
}
