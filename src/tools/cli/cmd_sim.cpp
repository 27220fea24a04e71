// tools/cli/cmd_sim.cpp — `numaware sim`: the task-level simulator.
//
// `numaware sim machine` shows the timed machine the simulator would use:
// a named model of a published machine or any machine spec, with the
// latency and bandwidth figures filled in and every rule that filled them.
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "numaware/sim.hpp"
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

}  // namespace

void add_sim_command(CLI::App& app) {
    CLI::App* sim_cmd = app.add_subcommand("sim", "The task-level NUMA machine simulator (timed machine models)");
    sim_cmd->require_subcommand(1);
    auto opts = std::make_shared<SimMachineOptions>();
    CLI::App* cmd = sim_cmd->add_subcommand("machine", "Show the timed machine: latency and bandwidth as simulated");
    cmd->add_option("--machine", opts->machine,
                    "A named model (bullion-s16, bullion-s16:8, altix-uv100, sim-4socket, skylake-sp-2s, "
                    "epyc-nps4-2s) or any machine SPEC as `numaware topo` takes it")
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
}

}  // namespace numaware::cli
