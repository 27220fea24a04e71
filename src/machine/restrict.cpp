// machine/restrict.cpp — the part of a machine a restricted process may
// use (Machine::restrict_to), and what was left out (Restriction).
//
// Rules, stated once (every source that knows allowed sets calls this):
//  * A CPU is kept when it is allowed; the others are left out.
//  * A node is kept when one of its CPUs is allowed, or its memory is (a
//    node without memory goes with its CPUs: cpusets list only nodes with
//    memory). A node kept only for its memory becomes memory-only
//    ("cpuless"); one kept only for its CPUs has memory_allowed false
//    ("memory"): Linux puts each CPU on one node, and a process in a cpuset
//    whose mems exclude that node still runs there, with its pages on other
//    nodes. A node with neither is left out ("nodes").
//  * Caches keep their allowed CPUs; a cache with none left goes. So do
//    the SMT cores, one with a single CPU left going too. The
//    matrices keep the rows and columns of the kept nodes.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"

namespace numaware {

namespace {

template <class T>
NodeMatrix<T> keep(const NodeMatrix<T>& m, const std::vector<std::size_t>& kept) {
    NodeMatrix<T> out(kept.size(), std::vector<T>(kept.size()));
    for (std::size_t i = 0; i < kept.size(); ++i)
        for (std::size_t j = 0; j < kept.size(); ++j) out[i][j] = m[kept[i]][kept[j]];
    return out;
}

NodeSet merged(NodeSet a, const NodeSet& b) {
    for (unsigned n : b.to_vector()) a.add(n);
    return a;
}

std::string nodes_phrase(const NodeSet& s) {
    return (s.size() == 1 ? "node " : "nodes ") + s.to_string();
}

}  // namespace

std::vector<std::string> Restriction::describe() const {
    std::vector<std::string> out;
    const std::string who = by.empty() ? std::string("the allowed sets") : by;
    const auto its = [](const NodeSet& s) { return s.size() == 1 ? std::string("its") : std::string("their"); };
    if (!nodes.empty())
        out.push_back(nodes_phrase(nodes) + (nodes.size() == 1 ? " is" : " are") + " left out: neither " + its(nodes) +
                      " CPUs nor " + its(nodes) + " memory are in " + who);
    if (!cpus.empty())
        out.push_back(std::string(cpus.size() == 1 ? "CPU " : "CPUs ") + format_index_list(cpus) +
                      (cpus.size() == 1 ? " is" : " are") + " left out: not in " + who);
    if (!memory.empty())
        out.push_back(nodes_phrase(memory) + ": memory not in " + who + "; " + its(memory) +
                      " allowed CPUs run with pages on the nearest allowed node");
    if (!cpuless.empty())
        out.push_back(nodes_phrase(cpuless) + ": no CPU in " + who + "; memory only here");
    return out;
}

Machine Machine::restrict_to(const std::vector<unsigned>& cpus, const NodeSet& allowed_memory, std::string_view by) const {
    const std::set<unsigned> allowed(cpus.begin(), cpus.end());
    std::set<unsigned> known;
    for (const Node& n : nodes) known.insert(n.cpus.begin(), n.cpus.end());
    for (unsigned cpu : allowed)
        if (!known.count(cpu))
            throw Error("cpus", "CPU " + std::to_string(cpu) + " is not a CPU of this machine (CPUs: " +
                                    format_index_list(std::vector<unsigned>(known.begin(), known.end())) + ")");
    for (unsigned node : allowed_memory.to_vector())
        if (!all_nodes().contains(node))
            throw Error("memory nodes", "node " + std::to_string(node) + " is not in this machine (nodes: " +
                                            all_nodes().to_string() + ")");

    Machine out = *this;
    out.nodes.clear();
    out.caches.clear();
    Restriction r;
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        Node n = nodes[i];
        std::vector<unsigned> mine;
        for (unsigned cpu : n.cpus) (allowed.count(cpu) ? mine : r.cpus).push_back(cpu);
        // A node without memory has none to allow: cpusets list only
        // nodes with memory, so it stays or goes with its CPUs.
        const bool has_memory = n.memory_bytes > 0;
        const bool memory = n.memory_allowed && allowed_memory.contains(n.os_index);
        if (mine.empty() && !(has_memory && memory)) {
            r.nodes.add(n.os_index);
            continue;
        }
        if (has_memory && n.memory_allowed && !memory) r.memory.add(n.os_index);
        if (mine.empty() && !n.cpus.empty()) r.cpuless.add(n.os_index);
        n.cpus = std::move(mine);
        if (has_memory) n.memory_allowed = memory;
        out.nodes.push_back(std::move(n));
        kept.push_back(i);
    }
    if (out.cpu_count() == 0)
        throw Error("cpus", "no CPU of this machine is in " + std::string(by) + " (CPUs: " +
                                format_index_list(std::vector<unsigned>(known.begin(), known.end())) + ")");
    // A machine whose nodes record no memory size (an hwloc 1.x XML, a
    // synthetic topology) has no memory to restrict: its nodes stay as
    // they are, as they do unrestricted.
    if (out.memory_nodes().empty() && !this->memory_nodes().empty())
        throw Error("memory nodes", "no node with memory is in " + std::string(by) + " (nodes with memory: " +
                                        this->memory_nodes().to_string() + ")");
    for (const Cache& c : caches) {
        Cache k = c;
        k.cpus.clear();
        for (unsigned cpu : c.cpus)
            if (allowed.count(cpu)) k.cpus.push_back(cpu);
        if (!k.cpus.empty()) out.caches.push_back(std::move(k));
    }
    out.smt_cores.clear();
    for (const std::vector<unsigned>& core : smt_cores) {
        std::vector<unsigned> mine;
        for (unsigned cpu : core)
            if (allowed.count(cpu)) mine.push_back(cpu);
        if (mine.size() > 1) out.smt_cores.push_back(std::move(mine));
    }
    out.distances = keep(distances, kept);
    if (latency_ns) out.latency_ns = keep(*latency_ns, kept);
    if (bandwidth_gbps) out.bandwidth_gbps = keep(*bandwidth_gbps, kept);

    // Restricting twice keeps what both left out, and says who did.
    Restriction& acc = out.left_out;
    std::vector<unsigned> all_cpus = acc.cpus;
    all_cpus.insert(all_cpus.end(), r.cpus.begin(), r.cpus.end());
    std::sort(all_cpus.begin(), all_cpus.end());
    all_cpus.erase(std::unique(all_cpus.begin(), all_cpus.end()), all_cpus.end());
    acc.cpus = std::move(all_cpus);
    acc.nodes = merged(acc.nodes, r.nodes);
    acc.memory = merged(acc.memory, r.memory);
    acc.cpuless = merged(acc.cpuless, r.cpuless);
    for (unsigned n : acc.nodes.to_vector()) {   // a node left out now is no longer kept for anything
        acc.memory.remove(n);
        acc.cpuless.remove(n);
    }
    if (!r.empty()) acc.by = acc.by.empty() || acc.by == by ? std::string(by) : acc.by + " and " + std::string(by);
    out.validate();
    return out;
}

}  // namespace numaware
