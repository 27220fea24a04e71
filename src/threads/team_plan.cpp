// threads/team_plan.cpp — the pure half of the threads layer: which rank
// runs on which CPU. No threads, no system calls; unit-tested on any host.
#include <algorithm>
#include <limits>
#include <charconv>
#include <map>
#include <string>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/team.hpp"

namespace numaware {

MappingKind parse_mapping_kind(std::string_view text, std::string_view field) {
    if (text == "contiguous") return MappingKind::contiguous;
    if (text == "scatter") return MappingKind::scatter;
    throw Error(std::string(field),
                fmt::format("unknown mapping '{}': expected contiguous or scatter", text));
}

std::string_view to_string(MappingKind kind) {
    return kind == MappingKind::scatter ? "scatter" : "contiguous";
}

std::vector<unsigned> parse_cpu_list(std::string_view text, std::string_view field) {
    // CPU numbers have no small kernel limit like nodes do; any unsigned fits.
    return parse_index_list(text, field, "CPU", std::numeric_limits<unsigned>::max());
}

std::string format_cpu_list(std::vector<unsigned> cpus) { return format_index_list(std::move(cpus)); }

std::vector<unsigned> TeamLayout::cpus() const {
    std::vector<unsigned> out;
    out.reserve(ranks.size());
    for (const RankPlace& p : ranks) out.push_back(p.cpu);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

NodeSet TeamLayout::nodes() const {
    NodeSet set;
    for (const RankPlace& p : ranks) set.add(p.node);
    return set;
}

namespace {

TeamLayout plan_explicit(const Machine& machine, const TeamMapping& mapping) {
    if (mapping.nodes != 0)
        throw Error("nodes", fmt::format("nodes={} cannot be combined with an explicit CPU list; "
                                         "the list already says where each rank runs",
                                         mapping.nodes));
    if (!mapping.node_set.empty())
        throw Error("node_set", fmt::format("node_set={} cannot be combined with an explicit CPU list; the list "
                                            "already says where each rank runs",
                                            mapping.node_set.to_string()));
    const std::size_t listed = mapping.cpus.size();
    if (mapping.threads != 0 && mapping.threads != listed)
        throw Error("threads", fmt::format("threads={} but the CPU list names {} CPUs; "
                                           "give one CPU per rank (or threads=0)",
                                           mapping.threads, listed));
    // CPU -> node for the whole machine; built here rather than by repeated
    // node_of_cpu() so the error can list what the machine does have.
    std::map<unsigned, unsigned> node_of;
    for (const Node& n : machine.nodes)
        for (unsigned c : n.cpus) node_of[c] = n.os_index;
    std::map<unsigned, std::size_t> first_seen;
    TeamLayout layout;
    for (std::size_t r = 0; r < listed; ++r) {
        const unsigned cpu = mapping.cpus[r];
        const std::string field = fmt::format("cpus[{}]", r);
        auto it = node_of.find(cpu);
        if (it == node_of.end()) throw Error(field, machine.absent_cpu_reason(cpu));
        auto [seen, fresh] = first_seen.emplace(cpu, r);
        if (!fresh)
            throw Error(field, fmt::format("CPU {} is listed twice (also cpus[{}]); two ranks never "
                                           "share a CPU",
                                           cpu, seen->second));
        layout.ranks.push_back({static_cast<unsigned>(r), cpu, it->second});
    }
    return layout;
}

}  // namespace

NodeSet team_nodes(const Machine& machine, unsigned nodes) {
    std::vector<unsigned> with_cpus, memory_only;
    for (const Node& n : machine.nodes) (n.has_cpus() ? with_cpus : memory_only).push_back(n.os_index);
    if (with_cpus.empty()) throw Error("machine", "has no node with CPUs; a team cannot run on it");
    if (nodes > with_cpus.size()) {
        const std::string why = memory_only.empty()
                                    ? std::string()
                                    : fmt::format("; memory-only nodes {} cannot run threads",
                                                  NodeSet(memory_only).to_string());
        throw Error("nodes", fmt::format("nodes={} exceeds the {} {} with CPUs (limit {}){}", nodes,
                                         with_cpus.size(), with_cpus.size() == 1 ? "node" : "nodes",
                                         with_cpus.size(), why));
    }
    // The first K in OS index order: deterministic and, on the usual
    // firmware numbering, the nodes closest to node 0.
    if (nodes != 0) with_cpus.resize(nodes);
    return NodeSet(with_cpus);
}

NodeSet team_nodes(const Machine& machine, const TeamMapping& mapping) {
    if (mapping.node_set.empty()) return team_nodes(machine, mapping.nodes);
    if (mapping.nodes != 0)
        throw Error("node_set", fmt::format("node_set={} cannot be combined with nodes={}: give the nodes or their "
                                            "count, not both",
                                            mapping.node_set.to_string(), mapping.nodes));
    for (unsigned id : mapping.node_set.to_vector()) {
        if (!machine.all_nodes().contains(id)) throw Error("node_set", machine.absent_node_reason(id));
        if (!machine.node(id).has_cpus())
            throw Error("node_set", fmt::format("node {} has no CPUs (a memory-only node cannot run threads); the "
                                                "nodes with CPUs are {}",
                                                id, machine.nodes_with_cpus().to_string()));
    }
    return mapping.node_set;
}

std::vector<OrderedCpu> team_cpu_order(const Machine& machine, const std::vector<std::vector<unsigned>>& per_node,
                                       MappingKind kind) {
    // Each CPU's core, by CPU index (a CPU the model's cores do not list
    // is a core of its own).
    const std::vector<std::vector<unsigned>> cores = machine.cores();
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    unsigned highest = 0;
    for (const auto& list : per_node)
        for (unsigned c : list) highest = std::max(highest, c);
    std::vector<std::size_t> core_of(std::size_t{highest} + 1, none);
    for (std::size_t k = 0; k < cores.size(); ++k)
        for (unsigned c : cores[k])
            if (c <= highest) core_of[c] = k;
    // rounds[k][node]: the node's CPUs that are the (k+1)-th of their core
    // in `per_node`, ascending, so in the order of their cores.
    std::vector<std::size_t> taken(cores.size(), 0);
    std::vector<std::vector<std::vector<unsigned>>> rounds;
    for (std::size_t n = 0; n < per_node.size(); ++n) {
        std::vector<unsigned> cpus = per_node[n];
        std::sort(cpus.begin(), cpus.end());
        for (unsigned c : cpus) {
            const std::size_t k = core_of[c] == none ? 0 : taken[core_of[c]]++;
            if (rounds.size() <= k) rounds.resize(k + 1, std::vector<std::vector<unsigned>>(per_node.size()));
            rounds[k][n].push_back(c);
        }
    }
    std::vector<OrderedCpu> order;
    for (const auto& round : rounds) {
        if (kind == MappingKind::contiguous) {
            for (std::size_t n = 0; n < round.size(); ++n)
                for (unsigned c : round[n]) order.push_back({c, n});
            continue;
        }
        // Scatter: deal the round like cards; a node whose CPUs of this
        // round are all taken drops out, so uneven nodes still fill up.
        std::size_t left = 0;
        for (const auto& list : round) left += list.size();
        std::vector<std::size_t> next(round.size(), 0);
        for (std::size_t n = 0; left > 0; n = (n + 1) % round.size())
            if (next[n] < round[n].size()) {
                order.push_back({round[n][next[n]++], n});
                --left;
            }
    }
    return order;
}

TeamLayout plan_team(const Machine& machine, const TeamMapping& mapping) {
    if (!mapping.cpus.empty()) return plan_explicit(machine, mapping);

    if (mapping.threads == 0) throw Error("threads", "threads=0: a team needs at least 1 thread");

    const NodeSet chosen_set = team_nodes(machine, mapping);
    std::vector<const Node*> chosen;
    for (unsigned id : chosen_set.to_vector()) chosen.push_back(&machine.node(id));
    std::size_t capacity = 0;
    std::vector<unsigned> chosen_ids;
    for (const Node* n : chosen) {
        capacity += n->cpus.size();
        chosen_ids.push_back(n->os_index);
    }
    if (mapping.threads > capacity)
        throw Error("threads", fmt::format("threads={} exceeds the {} CPUs of {} {} (limit {}); "
                                           "ranks never share a CPU",
                                           mapping.threads, capacity, chosen_ids.size() == 1 ? "node" : "nodes",
                                           NodeSet(chosen_ids).to_string(), capacity));

    std::vector<std::vector<unsigned>> per_node;
    per_node.reserve(chosen.size());
    for (const Node* n : chosen) per_node.push_back(n->cpus);
    const std::vector<OrderedCpu> order = team_cpu_order(machine, per_node, mapping.kind);
    TeamLayout layout;
    layout.ranks.reserve(mapping.threads);
    for (unsigned r = 0; r < mapping.threads; ++r)
        layout.ranks.push_back({r, order[r].cpu, chosen[order[r].node]->os_index});
    return layout;
}

}  // namespace numaware
