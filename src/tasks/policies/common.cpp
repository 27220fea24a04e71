// src/tasks/policies/common.cpp — helpers shared by the built-in policies.
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "numaware/error.hpp"

namespace numaware::tasks::policy_detail {

std::size_t Topology::node_slot(unsigned os_index) const {
    const auto it = std::lower_bound(nodes.begin(), nodes.end(), os_index);
    if (it == nodes.end() || *it != os_index) return nodes.size();
    return static_cast<std::size_t>(it - nodes.begin());
}

namespace {

// Nodes of `candidates` ordered nearest first from `from`: `from` itself
// first (the SLIT allows ties on the diagonal), then by distance, then OS index.
std::vector<unsigned> nearest_first(const Machine& machine, unsigned from, std::vector<unsigned> candidates) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](unsigned a, unsigned b) {
        const bool sa = a == from, sb = b == from;
        if (sa != sb) return sa;
        const unsigned da = machine.distance(from, a), db = machine.distance(from, b);
        if (da != db) return da < db;
        return a < b;
    });
    return candidates;
}

}  // namespace

Topology make_topology(const PolicyContext& ctx, std::uint64_t policy_seed) {
    if (ctx.machine == nullptr) throw Error("machine", "is null; a policy needs the machine it schedules on");
    const Machine& machine = *ctx.machine;
    const std::size_t n = machine.node_count();
    if (n == 0) throw Error("machine", "has no nodes");
    if (machine.distances.size() != n)
        throw Error("machine", "has no distance matrix (" + std::to_string(machine.distances.size()) +
                                   " rows for " + std::to_string(n) + " nodes)");
    for (const auto& row : machine.distances)
        if (row.size() != n) throw Error("machine", "distance matrix is not square");
    if (ctx.worker_node.empty()) throw Error("workers", "none; a policy needs at least 1 worker");

    Topology topo;
    topo.machine = ctx.machine;
    topo.worker_node = ctx.worker_node;
    for (std::size_t w = 0; w < ctx.worker_node.size(); ++w) {
        const unsigned node = ctx.worker_node[w];
        const bool known = std::any_of(machine.nodes.begin(), machine.nodes.end(),
                                       [&](const Node& x) { return x.os_index == node; });
        if (!known)
            throw Error("worker_node[" + std::to_string(w) + "]",
                        "node " + std::to_string(node) + " is not in the machine (" + std::to_string(n) + " nodes)");
        topo.nodes.push_back(node);
    }
    std::sort(topo.nodes.begin(), topo.nodes.end());
    topo.nodes.erase(std::unique(topo.nodes.begin(), topo.nodes.end()), topo.nodes.end());
    // ctx.nodes is derived data; an empty list is derived here, any other
    // list must be exactly the workers' nodes, ascending.
    if (!ctx.nodes.empty() && ctx.nodes != topo.nodes)
        throw Error("nodes", "must list the nodes of worker_node, ascending, once each (" +
                                 std::to_string(ctx.nodes.size()) + " given, " + std::to_string(topo.nodes.size()) +
                                 " expected)");

    for (unsigned node : topo.nodes) {
        topo.nearest.push_back(nearest_first(machine, node, topo.nodes));
        const std::vector<unsigned>& near = topo.nearest.back();
        std::vector<std::size_t> rings{1};
        for (std::size_t i = 1; i < near.size(); ++i) {
            if (i > 1 && machine.distance(node, near[i]) != machine.distance(node, near[i - 1])) rings.push_back(i);
        }
        if (near.size() > 1) rings.push_back(near.size());
        topo.ring_end.push_back(std::move(rings));
    }
    unsigned max_os = 0;
    for (const Node& node : machine.nodes) max_os = std::max(max_os, node.os_index);
    topo.serving_slot_of.assign(std::size_t{max_os} + 1, -1);
    for (const Node& node : machine.nodes)
        topo.serving_slot_of[node.os_index] =
            static_cast<int>(topo.node_slot(nearest_first(machine, node.os_index, topo.nodes).front()));
    topo.seed = hash_words({policy_seed, ctx.seed});
    return topo;
}

std::uint64_t steal_delay_rounds(const PolicyOptions& options) {
    return static_cast<std::uint64_t>(std::llround(options.steal_delay_tasks.value_or(default_steal_delay_tasks) *
                                                   static_cast<double>(rounds_per_task)));
}

void node_steal_order(const Topology& topo, unsigned worker, std::uint64_t round, std::uint64_t delay_rounds,
                      std::vector<QueueRef>& order) {
    order.clear();
    if (worker >= topo.worker_node.size()) return;
    const std::size_t slot = topo.node_slot(topo.worker_node[worker]);
    const auto& near = topo.nearest[slot];
    const auto& rings = topo.ring_end[slot];
    const std::uint64_t ring = delay_rounds == 0 ? rings.size() - 1 : std::min<std::uint64_t>(round / delay_rounds, rings.size() - 1);
    for (std::size_t i = 0; i < rings[ring]; ++i) order.push_back(QueueRef{QueueRef::Kind::node, near[i]});
}

std::uint64_t bytes_per_node(const Topology& topo, std::span<const DepInfo> deps, std::span<std::uint64_t> per_node) {
    std::fill(per_node.begin(), per_node.end(), 0);
    std::uint64_t unhomed = 0;
    for (const DepInfo& dep : deps) {
        const int slot = topo.serving_slot(dep.home);
        if (slot < 0)
            unhomed += dep.bytes;
        else
            per_node[static_cast<std::size_t>(slot)] += dep.bytes;
    }
    return unhomed;
}

namespace {

// DEP's usual case, decided from the nodes the dependencies name (the
// others hold 0 bytes) without a pass over every node: one node holds
// more bytes than any other and than the virtual socket. Returns its slot
// in topo.nodes, or -1 for every other case (ties, a winning virtual
// socket, more distinct nodes than it keeps count of).
int dep_single_winner(const Topology& topo, std::span<const DepInfo> deps) {
    constexpr std::size_t kept = 8;
    int slots[kept];
    std::uint64_t bytes[kept];
    std::size_t n = 0;
    std::uint64_t unhomed = 0;
    for (const DepInfo& dep : deps) {
        const int slot = topo.serving_slot(dep.home);
        if (slot < 0) {
            unhomed += dep.bytes;
            continue;
        }
        std::size_t i = 0;
        while (i < n && slots[i] != slot) ++i;
        if (i == n) {
            if (n == kept) return -1;
            slots[n] = slot;
            bytes[n++] = 0;
        }
        bytes[i] += dep.bytes;
    }
    int winner = -1;
    std::uint64_t best = unhomed;
    bool tie = false;
    for (std::size_t i = 0; i < n; ++i) {
        if (bytes[i] > best) {
            best = bytes[i];
            winner = slots[i];
            tie = false;
        } else if (bytes[i] == best) {
            tie = true;
        }
    }
    return tie ? -1 : winner;
}

}  // namespace

Destination dep_place(const Topology& topo, const TaskView& task) {
    if (const int only = dep_single_winner(topo, task.deps); only >= 0)
        return Destination::to_node(topo.nodes[static_cast<std::size_t>(only)]);
    NodeByteCounts room(topo.nodes.size());
    const std::span<std::uint64_t> scratch = room.span();
    const std::uint64_t virtual_bytes = bytes_per_node(topo, task.deps, scratch);
    std::uint64_t best = virtual_bytes;
    for (std::uint64_t b : scratch) best = std::max(best, b);
    std::size_t real_ties = 0;
    for (std::uint64_t b : scratch) real_ties += b == best ? 1 : 0;
    const bool virtual_tie = virtual_bytes == best;
    if (real_ties == 1 && !virtual_tie) {
        const auto it = std::find(scratch.begin(), scratch.end(), best);
        return Destination::to_node(topo.nodes[static_cast<std::size_t>(it - scratch.begin())]);
    }
    // Uniform among the candidates; the virtual socket, as a candidate,
    // stands for "uniformly among all nodes".
    SplitMix rng(hash_words({topo.seed, task.id, 0xde9u}));
    const std::uint64_t pick = rng.below(real_ties + (virtual_tie ? 1 : 0));
    if (pick == real_ties) return Destination::to_node(topo.nodes[rng.below(topo.nodes.size())]);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < scratch.size(); ++i) {
        if (scratch[i] != best) continue;
        if (seen++ == pick) return Destination::to_node(topo.nodes[i]);
    }
    return Destination::to_node(topo.nodes.front());   // not reached
}

}  // namespace numaware::tasks::policy_detail
