// src/tasks/policies/common.cpp — helpers shared by the built-in policies.
#include "common.hpp"

#include <algorithm>
#include <bit>
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
    const NodeSet memory_nodes = machine.memory_nodes();
    for (unsigned node : topo.nodes) {
        int slot = -1;
        if (!memory_nodes.empty() && !memory_nodes.contains(node)) {
            const int serving = topo.serving_slot(static_cast<int>(machine.memory_node_near(node)));
            if (serving >= 0 && topo.nodes[static_cast<std::size_t>(serving)] != node) slot = serving;
        }
        topo.memory_slot.push_back(slot);
    }
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
    const int memory = topo.memory_slot[slot];
    const unsigned memory_node = memory >= 0 ? topo.nodes[static_cast<std::size_t>(memory)] : 0;
    for (std::size_t i = 0; i < rings[ring]; ++i) {
        if (memory >= 0 && near[i] == memory_node) continue;   // listed second, below
        order.push_back(QueueRef{QueueRef::Kind::node, near[i]});
        if (i == 0 && memory >= 0) order.push_back(QueueRef{QueueRef::Kind::node, memory_node});
    }
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

// The nodes a task's dependencies name, with their bytes, kept in one
// pass: at most `kept` distinct worker nodes (the other nodes hold 0
// bytes), and the bytes with no home (the virtual socket). Slots from 64
// on (machines of more than 64 worker nodes) are not kept: they count as
// an overflow, and the caller counts every node instead.
struct NamedNodes {
    static constexpr std::size_t kept = 8;
    int slots[kept];
    std::uint64_t bytes[kept] = {};   // zero past n: a new entry's count starts there
    std::size_t n = 0;
    std::uint64_t unhomed = 0;
    bool overflow = false;   // more distinct nodes than kept, or a slot from 64 on

    NamedNodes(const Topology& topo, std::span<const DepInfo> deps) {
        // A slot is found through the mask of the slots named so far and
        // each one's entry, with no branch on the data (a search that stops
        // at the match is mispredicted about twice a task). entry_of[s]
        // means something only for a slot in the mask; it is zeroed so
        // that it can be read for any slot.
        std::uint64_t slot_mask = 0;   // the slots named so far, one bit each
        std::uint8_t entry_of[64] = {};
        for (const DepInfo& dep : deps) {
            const int slot = topo.serving_slot(dep.home);
            if (slot < 0) {
                unhomed += dep.bytes;
                continue;
            }
            const auto s = static_cast<unsigned>(slot);
            const bool fresh = (slot_mask >> (s & 63) & 1u) == 0;
            if (s >= 64 || (n == kept && fresh)) {   // almost never, so predicted
                overflow = true;
                return;
            }
            // i = fresh ? n : entry_of[s], by masks: written as a
            // conditional, it became a branch.
            const std::size_t all_if_fresh = std::size_t{0} - static_cast<std::size_t>(fresh);
            const std::size_t i = (n & all_if_fresh) | (std::size_t{entry_of[s]} & ~all_if_fresh);
            slots[i] = slot;
            bytes[i] += dep.bytes;
            n += static_cast<std::size_t>(fresh);
            entry_of[s] = static_cast<std::uint8_t>(i);
            slot_mask |= std::uint64_t{1} << s;
        }
    }
};

// The uniform choice among the candidates: the real ties (`real_ties` of
// them; the pick-th is found by `nth_tie`, in slot order) and the virtual
// socket when it ties, which stands for "uniformly among all nodes".
template <class NthTie>
Destination pick_among_ties(const Topology& topo, const TaskView& task, std::size_t real_ties, bool virtual_tie,
                            NthTie nth_tie) {
    SplitMix rng(hash_words({topo.seed, task.id, 0xde9u}));
    const std::uint64_t pick = rng.below(real_ties + (virtual_tie ? 1 : 0));
    if (pick == real_ties) return Destination::to_node(topo.nodes[rng.below(topo.nodes.size())]);
    return Destination::to_node(topo.nodes[nth_tie(pick)]);
}

}  // namespace

Destination dep_place(const Topology& topo, const TaskView& task) {
    // One worker node: whatever the vote, it is the answer (the tie
    // draws below each cost a hash and 64-bit divisions).
    if (topo.nodes.size() == 1) return Destination::to_node(topo.nodes.front());
    // No dependency: no data to follow. Spawned by a worker, it goes to
    // that worker's node, where the spawner just wrote its arguments (and
    // a running task's child then waits with its parent: NodeQueues::
    // near_spawner); other nodes steal it after their delay. Otherwise only
    // the virtual socket names it, so every node ties with it (what the
    // every-node count below finds, without counting).
    if (task.deps.empty()) {
        if (const auto near = spawner_destination(topo, task)) return *near;
        return pick_among_ties(topo, task, topo.nodes.size(), true,
                               [](std::uint64_t k) { return static_cast<std::size_t>(k); });
    }
    const NamedNodes named(topo, task.deps);
    if (!named.overflow) {
        // The most bytes (the virtual socket's count too), then the named
        // nodes holding that many as a mask of their slots, which lists
        // them in slot order; no branch on the counts (comparisons that
        // were mispredicted as the counts change from task to task).
        std::uint64_t best = named.unhomed;
        for (std::size_t i = 0; i < named.n; ++i) best = std::max(best, named.bytes[i]);
        // With best > 0 the nodes no dependency names (0 bytes) are not
        // candidates, so the named ones are all there is to count.
        if (best > 0) {
            std::uint64_t tied = 0;
            std::size_t real_ties = 0;   // counted here: std::popcount is a library call without POPCNT
            for (std::size_t i = 0; i < named.n; ++i) {
                const bool tie = named.bytes[i] == best;
                tied |= static_cast<std::uint64_t>(tie) << named.slots[i];
                real_ties += static_cast<std::size_t>(tie);
            }
            const bool virtual_tie = named.unhomed == best;
            if (real_ties == 1 && !virtual_tie)
                return Destination::to_node(topo.nodes[static_cast<std::size_t>(std::countr_zero(tied))]);
            return pick_among_ties(topo, task, real_ties, virtual_tie, [tied](std::uint64_t k) {
                std::uint64_t rest = tied;
                for (; k > 0; --k) rest &= rest - 1;   // drop the k lowest
                return static_cast<std::size_t>(std::countr_zero(rest));
            });
        }
    }
    // Every node counted: more distinct nodes than kept, a slot from 64 on,
    // or nothing with bytes (then every node ties).
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
    return pick_among_ties(topo, task, real_ties, virtual_tie, [&](std::uint64_t k) {
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < scratch.size(); ++i)
            if (scratch[i] == best && seen++ == k) return i;
        return std::size_t{0};   // not reached: k < real_ties
    });
}

}  // namespace numaware::tasks::policy_detail
