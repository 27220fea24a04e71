// tools/cli/cmd_topo.cpp — `numaware topo`: show a machine model.
//
// It prints exactly what Machine holds, so what the other commands and the
// emulated-machine harness will use is what the user sees; for the live
// machine, a last line when this process may not use memory policies (a
// container's seccomp profile), which every placement would then meet.
#include <cerrno>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "numaware/machine.hpp"
#include "numaware/nodeset.hpp"
#include "numaware/placement.hpp"
#include "os/syscalls.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {

namespace {

struct TopoOptions {
    std::string machine = "live";
    bool json = false;
};

// Same compact range syntax as node lists ("0-3,8"); "-" for none.
std::string cpu_list(const std::vector<unsigned>& cpus) {
    const std::string out = format_index_list(cpus);
    return out.empty() ? "-" : out;
}

template <class T, class Cell>
void print_matrix(const Machine& m, const NodeMatrix<T>& matrix, const std::string& title, Cell cell) {
    fmt::print("\n{}\n{:>6}", title, "node");
    for (const Node& n : m.nodes) fmt::print(" {:>8}", n.os_index);
    fmt::print("\n");
    for (std::size_t i = 0; i < matrix.size(); ++i) {
        fmt::print("{:>6}", m.nodes[i].os_index);
        for (const T& v : matrix[i]) fmt::print(" {:>8}", cell(v));
        fmt::print("\n");
    }
}

std::string measured(double v) { return v == 0.0 ? "-" : fmt::format("{:.4g}", v); }

// Exact when the size is a whole number of MiB, else rounded to 0.1 GiB.
std::string memory(std::uint64_t bytes) {
    if (bytes % (1ULL << 20) == 0) return format_size(bytes);
    return fmt::format("{:.1f}G", static_cast<double>(bytes) / static_cast<double>(1ULL << 30));
}

void show(const Machine& m) {
    fmt::print("machine: {}\n", m.name);
    fmt::print("{} {}, {} {}\n\n", m.node_count(), m.node_count() == 1 ? "node" : "nodes", m.cpu_count(),
               m.cpu_count() == 1 ? "CPU" : "CPUs");
    fmt::print("{:>6} {:>10} {:>5} {:<8} {}\n", "node", "memory", "tier", "kind", "cpus");
    for (const Node& n : m.nodes)
        fmt::print("{:>6} {:>10} {:>5} {:<8} {}{}{}\n", n.os_index, memory(n.memory_bytes), n.tier, n.kind,
                   cpu_list(n.cpus), n.has_cpus() ? "" : "  (memory-only)",
                   n.memory_allowed ? "" : "  (memory not allowed)");
    if (!m.left_out.empty()) {
        fmt::print("\nleft out ({}):\n", m.left_out.by);
        for (const std::string& line : m.left_out.describe()) fmt::print("  {}\n", line);
    }
    print_matrix(m, m.distances, "distances (SLIT, relative; 10 = local)",
                 [](unsigned v) { return std::to_string(v); });
    if (m.latency_ns)
        print_matrix(m, *m.latency_ns, "latency (ns; row = CPUs of node, column = memory node; - = not known)",
                     measured);
    if (m.bandwidth_gbps)
        print_matrix(m, *m.bandwidth_gbps, "bandwidth (GB/s; row = CPUs of node, column = memory node; - = not known)",
                     measured);
}

}  // namespace

void add_topo_command(CLI::App& app) {
    auto opts = std::make_shared<TopoOptions>();
    CLI::App* cmd = app.add_subcommand("topo", "Show a machine's NUMA nodes, CPUs, memory, tiers and distances");
    cmd->add_option("--machine", opts->machine,
                    "Machine SPEC: 'live', a .xml (hwloc) or .json file, '@file', or a synthetic description")
        ->capture_default_str();
    cmd->add_flag("--json", opts->json, "Print the machine model as JSON (the form Machine::from_json reads)");
    cmd->footer(
        "Example: numaware topo --machine 'nodes=4 cpus-per-node=2 mem-per-node=512M "
        "distances=10,21,31,31/21,10,21,31/31,21,10,21/31,31,21,10'");
    cmd->callback([opts] {
        const Machine m = Machine::from_spec(opts->machine);
        if (opts->json) {
            fmt::print("{}\n", m.to_json());
            return;
        }
        show(m);
        if (opts->machine == "live") {
            int mode = 0;
            const int err = os::sys::get_mempolicy(mode, nullptr, 0, nullptr, 0);
            if (err == EPERM || err == ENOSYS)
                fmt::print("\nmemory policies: not available to this process (get_mempolicy: {}); pages go where "
                           "they are first touched (README, \"In a container\")\n",
                           policy_call_error(err));
        }
    });
}

}  // namespace numaware::cli
