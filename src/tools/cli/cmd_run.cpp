// tools/cli/cmd_run.cpp — `numaware run`: a numactl-like launcher.
//
// Decides everything first (policy, CPU set), so bad input fails before
// anything changes; then sets the process memory policy and the CPU
// affinity, both of which execve() keeps, and execs the command. stdout is
// left entirely to the command: --json reports on stderr.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {
namespace {

struct RunOptions {
    std::optional<unsigned> threads;
    std::string mapping = "contiguous";
    std::optional<unsigned> nodes;
    std::string cpus;
    std::string pages;
    std::string machine = "live";
    bool json = false;
    std::vector<std::string> command;
};

// The CPU set the command gets, or nullopt to leave the affinity alone
// (no CPU option given: like numactl, run then changes only memory).
std::optional<TeamLayout> plan_cpus(const RunOptions& o, const Machine& machine, bool mapping_given) {
    if (!o.cpus.empty()) {
        if (o.nodes || mapping_given)
            throw Error("--cpus", "an explicit CPU list cannot be combined with --nodes or --mapping");
        TeamMapping m;
        m.cpus = parse_cpu_list(o.cpus, "--cpus");
        m.threads = o.threads.value_or(0);
        return plan_team(machine, m);
    }
    if (!o.threads && !o.nodes && !mapping_given) return std::nullopt;
    TeamMapping m;
    m.kind = parse_mapping_kind(o.mapping, "--mapping");
    m.nodes = o.nodes.value_or(0);
    if (o.threads) {
        m.threads = *o.threads;
    } else {
        // No --threads: every CPU of the chosen nodes.
        std::size_t cpus = 0;
        for (unsigned id : team_nodes(machine, m.nodes).to_vector()) cpus += machine.node(id).cpus.size();
        m.threads = static_cast<unsigned>(cpus);
    }
    return plan_team(machine, m);
}

// plan_team names its own inputs ("threads", "cpus[2]"); on the command
// line the user typed --threads and --cpus, so say that.
std::optional<TeamLayout> plan_cpus_for_cli(const RunOptions& o, const Machine& machine, bool mapping_given) {
    try {
        return plan_cpus(o, machine, mapping_given);
    } catch (const Error& e) {
        if (e.field() == "threads" || e.field() == "nodes")
            throw Error("--" + e.field(), std::string(e.what()).substr(e.field().size() + 2), e.code());
        if (e.field().rfind("cpus[", 0) == 0) throw Error("--cpus", e.what(), e.code());
        throw;
    }
}

void run_command(const RunOptions& o, bool mapping_given) {
    const Machine machine = Machine::from_spec(o.machine);
    os::Os& os = os::linux_os();

    const std::optional<TeamLayout> layout = plan_cpus_for_cli(o, machine, mapping_given);
    std::optional<PlacementPolicy> policy;
    if (!o.pages.empty()) policy = parse_policy(o.pages, machine);

    if (o.json) {
        nlohmann::json j;
        j["machine"] = machine.name;
        j["pages"] = policy ? nlohmann::json(policy->to_string()) : nlohmann::json(nullptr);
        if (layout) {
            j["cpus"] = format_cpu_list(layout->cpus());
            j["nodes"] = layout->nodes().to_string();
        } else {
            j["cpus"] = nullptr;
            j["nodes"] = nullptr;
        }
        j["command"] = o.command;
        std::fprintf(stderr, "%s\n", j.dump().c_str());
        std::fflush(stderr);
    }

    // Affinity first: a "local"/"remote" policy is relative to where the
    // command will run, i.e. the first CPU of its set.
    if (layout) {
        const std::vector<unsigned> cpus = layout->cpus();
        if (int err = os.set_affinity(0, cpus))
            throw Error("--cpus", fmt::format("cannot set the CPU affinity to {}: {}",
                                              format_cpu_list(cpus), std::strerror(err)),
                        err);
    }
    if (policy) {
        PlanOptions opts;
        if (layout) {
            opts.thread_cpu = layout->cpus().front();
        } else if (int cpu = os.current_cpu(); cpu >= 0) {
            opts.thread_cpu = static_cast<unsigned>(cpu);
        }
        apply_process_policy(*policy, machine, opts, os);
    }

    std::vector<char*> argv;
    for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(stdout);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    throw Error("command", fmt::format("cannot run '{}': {}", o.command[0], std::strerror(err)), err);
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto opts = std::make_shared<RunOptions>();
    CLI::App* sub = app.add_subcommand(
        "run", "Run a command with a memory policy and a CPU set, like numactl (the policy and the "
               "affinity are inherited across exec)");
    sub->add_option("--threads", opts->threads,
                    "Number of CPUs to run on, laid out by --mapping (default: all CPUs of the chosen nodes)");
    auto* mapping = sub->add_option("--mapping", opts->mapping,
                                    "contiguous (fill a node, then the next) or scatter (round-robin over nodes)");
    sub->add_option("--nodes", opts->nodes, "Use the first K nodes that have CPUs (default: all)");
    sub->add_option("--cpus", opts->cpus, "Explicit CPU list, e.g. 0-3,8 (instead of --threads/--mapping/--nodes)");
    sub->add_option("--pages", opts->pages,
                    "Process memory policy: first-touch, bind:NODES, preferred:N, preferred-many:NODES, "
                    "interleave:NODES|all, weighted:N=W,..., local, remote");
    sub->add_option("--machine", opts->machine, "Machine the mapping is planned on (default: live)");
    sub->add_flag("--json", opts->json,
                  "Print what is applied (pages, cpus, nodes, command) as one JSON line on stderr before exec");
    sub->add_option("command", opts->command, "The command and its arguments, after --")->required();
    sub->footer(
        "Without --threads, --nodes, --mapping or --cpus the CPU affinity is left as it is.\n"
        "Example: numaware run --pages interleave:all --threads 4 --mapping scatter -- cat /proc/self/numa_maps");
    sub->callback([opts, mapping] { run_command(*opts, mapping->count() > 0); });
}

}  // namespace numaware::cli
