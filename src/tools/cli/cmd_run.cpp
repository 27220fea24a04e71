// tools/cli/cmd_run.cpp — `numaware run`: a numactl-like launcher.
//
// Decides everything first (policy, CPU set), so bad input fails before
// anything changes; then sets the process memory policy and the CPU
// affinity, both of which execve() keeps, and execs the command. stdout is
// left entirely to the command: --json reports on stderr.
//
// --omp runs an OpenMP program on libnumaware_omp.so (docs/OPENMP.md): the
// library is preloaded, and the planned CPUs become the program's OpenMP
// places, one thread each, in the plan's rank order.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/self_path.hpp"

namespace numaware::cli {
namespace {

struct RunOptions {
    std::optional<unsigned> threads;
    std::string mapping = "contiguous";
    std::optional<unsigned> nodes;
    std::string cpu_nodes;   // --cpu-nodes: a node list
    std::string cpus;
    std::string pages;
    std::string machine = "live";
    bool json = false;
    bool omp = false;
    std::string policy;   // --policy: NUMAWARE_POLICY for --omp
    std::vector<std::string> command;
};

// libnumaware_omp.so: $NUMAWARE_OMP_LIB, else beside the executable in a
// build tree, else in the installed library folder (NUMAWARE_OMP_FROM_INSTALL,
// relative to the executable's folder).
std::string find_omp_library() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("NUMAWARE_OMP_LIB"); env != nullptr && *env != '\0') {
        if (!fs::is_regular_file(env)) throw Error("--omp", fmt::format("NUMAWARE_OMP_LIB='{}' is not a file", env));
        return env;
    }
    const fs::path dir = self_executable("--omp", "set NUMAWARE_OMP_LIB to libnumaware_omp.so").parent_path();
    const fs::path build = dir / "libnumaware_omp.so";
    const fs::path installed = (dir / NUMAWARE_OMP_FROM_INSTALL / "libnumaware_omp.so").lexically_normal();
    if (fs::is_regular_file(build)) return build.string();
    if (fs::is_regular_file(installed)) return installed.string();
    throw Error("--omp", fmt::format("libnumaware_omp.so is in neither {} (build tree) nor {} (installed); build it "
                                     "(cmake --build --preset default) or set NUMAWARE_OMP_LIB",
                                     build.string(), installed.string()));
}

// The environment --omp gives the command.
std::vector<std::pair<std::string, std::string>> omp_environment(const RunOptions& o,
                                                                 const std::optional<TeamLayout>& layout) {
    std::vector<std::pair<std::string, std::string>> env;
    std::string preload = find_omp_library();
    if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0') preload += std::string(":") + old;
    env.emplace_back("LD_PRELOAD", preload);
    if (!o.policy.empty()) env.emplace_back("NUMAWARE_POLICY", o.policy);
    if (layout) {
        std::string places;
        for (const RankPlace& r : layout->ranks) places += (places.empty() ? "{" : ",{") + std::to_string(r.cpu) + "}";
        env.emplace_back("OMP_NUM_THREADS", std::to_string(layout->size()));
        env.emplace_back("OMP_PLACES", places);
        env.emplace_back("OMP_PROC_BIND", "close");
    }
    return env;
}

// The CPU set the command gets, or nullopt to leave the affinity alone
// (no CPU option given: like numactl, run then changes only memory).
std::optional<TeamLayout> plan_cpus(const RunOptions& o, const Machine& machine, bool mapping_given) {
    if (!o.cpus.empty()) {
        if (o.nodes || !o.cpu_nodes.empty() || mapping_given)
            throw Error("--cpus", "an explicit CPU list cannot be combined with --nodes, --cpu-nodes or --mapping");
        TeamMapping m;
        m.cpus = parse_cpu_list(o.cpus, "--cpus");
        m.threads = o.threads.value_or(0);
        return plan_team(machine, m);
    }
    if (!o.threads && !o.nodes && o.cpu_nodes.empty() && !mapping_given) return std::nullopt;
    if (o.nodes && !o.cpu_nodes.empty())
        throw Error("--cpu-nodes", "names the nodes; --nodes counts them: give one of the two");
    TeamMapping m;
    m.kind = parse_mapping_kind(o.mapping, "--mapping");
    m.nodes = o.nodes.value_or(0);
    if (!o.cpu_nodes.empty()) m.node_set = NodeSet::parse(o.cpu_nodes, "--cpu-nodes");
    if (o.threads) {
        m.threads = *o.threads;
    } else {
        // No --threads: every CPU of the chosen nodes.
        std::size_t cpus = 0;
        for (unsigned id : team_nodes(machine, m).to_vector()) cpus += machine.node(id).cpus.size();
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
        if (e.field() == "node_set")
            throw Error("--cpu-nodes", std::string(e.what()).substr(e.field().size() + 2), e.code());
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
    if (!o.policy.empty()) {
        if (!o.omp) throw Error("--policy", "is the task scheduler of --omp; add --omp");
        tasks::check_policy_name(o.policy, "--policy");
    }
    std::vector<std::pair<std::string, std::string>> omp_env;
    if (o.omp) omp_env = omp_environment(o, layout);

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
        if (o.omp) {
            nlohmann::json e = nlohmann::json::object();
            for (const auto& [k, v] : omp_env) e[k] = v;
            j["omp"] = e;
        }
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
        PlanOptions opts = plan_options_for(os);
        if (layout) {
            opts.thread_cpu = layout->cpus().front();
        } else if (int cpu = os.current_cpu(); cpu >= 0) {
            opts.thread_cpu = static_cast<unsigned>(cpu);
        }
        apply_process_policy(*policy, machine, opts, os);
    }

    for (const auto& [k, v] : omp_env)
        if (::setenv(k.c_str(), v.c_str(), 1) != 0)
            throw Error("--omp", fmt::format("cannot set {}: {}", k, std::strerror(errno)), errno);

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
    sub->add_option("--cpu-nodes", opts->cpu_nodes,
                    "Run on the CPUs of these nodes, e.g. 1,3 (numactl --cpunodebind), laid out by --mapping; "
                    "instead of --nodes");
    sub->add_option("--cpus", opts->cpus,
                    "Explicit CPU list, e.g. 0-3,8 (instead of --threads/--mapping/--nodes/--cpu-nodes)");
    sub->add_option("--pages", opts->pages,
                    "Process memory policy: first-touch, bind:NODES, preferred:N, preferred-many:NODES, "
                    "interleave:NODES|all, weighted:N=W,..., local, remote");
    sub->add_option("--machine", opts->machine, "Machine the mapping is planned on (default: live)");
    sub->add_flag("--omp", opts->omp,
                  "Run an OpenMP program (gcc -fopenmp) on libnumaware_omp.so: preloaded, with the planned CPUs as "
                  "its OpenMP places, one thread each (docs/OPENMP.md)");
    sub->add_option("--policy", opts->policy,
                    "With --omp: the task scheduler, dfifo|lq|dep|sa|rip-dep|rip-mw (NUMAWARE_POLICY)");
    sub->add_flag("--json", opts->json,
                  "Print what is applied (pages, cpus, nodes, command) as one JSON line on stderr before exec");
    sub->add_option("command", opts->command, "The command and its arguments, after --")->required();
    sub->footer(
        "Without --threads, --nodes, --cpu-nodes, --mapping or --cpus the CPU affinity is left as it is.\n"
        "Example: numaware run --pages interleave:all --threads 4 --mapping scatter -- cat /proc/self/numa_maps\n"
        "         numaware run --cpu-nodes 1 --pages bind:1 -- ./server   (numactl -N 1 -m 1)\n"
        "         numaware run --omp --threads 8 --mapping scatter -- ./openmp_program");
    sub->callback([opts, mapping] { run_command(*opts, mapping->count() > 0); });
}

}  // namespace numaware::cli
