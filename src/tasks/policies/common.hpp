// src/tasks/policies/common.hpp — helpers shared by the built-in policies.
//
// Everything here is pure: hashing for reproducible randomness, the
// nearest-first order of nodes on a Machine, and the checks every policy
// runs on its PolicyContext.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/task_policy.hpp"

namespace numaware::tasks::policy_detail {

// The splitmix64 finaliser: a bijective 64-bit mixer.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// A hash of several words, order sensitive.
constexpr std::uint64_t hash_words(std::initializer_list<std::uint64_t> words) {
    std::uint64_t h = 0x6a09e667f3bcc908ULL;
    for (std::uint64_t w : words) h = splitmix64(h ^ splitmix64(w));
    return h;
}

// A small deterministic generator: the splitmix64 sequence from a state.
class SplitMix {
public:
    explicit constexpr SplitMix(std::uint64_t state) : state_(state) {}
    constexpr std::uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n), n > 0 (rejection sampling: no modulo bias).
    constexpr std::uint64_t below(std::uint64_t n) {
        const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
        std::uint64_t v = next();
        while (v >= limit) v = next();
        return v % n;
    }

private:
    std::uint64_t state_;
};

// What every policy derives from its PolicyContext in attach().
struct Topology {
    const Machine* machine = nullptr;
    std::vector<unsigned> worker_node;   // node OS index per worker
    std::vector<unsigned> nodes;         // worker nodes, ascending OS index
    // For each worker node (parallel to `nodes`): all worker nodes,
    // nearest first by machine distance, ties by OS index; the node itself first.
    std::vector<std::vector<unsigned>> nearest;
    // For each worker node: ring_end[slot][r] is how many entries of
    // nearest[slot] lie within distance ring r (ring 0: the node itself;
    // ring r: the r-th smallest distinct distance to another worker node).
    std::vector<std::vector<std::size_t>> ring_end;
    // By OS index, up to the machine's largest: the position in `nodes` of
    // the worker node nearest to that node (itself when it has workers; ties
    // by OS index), or -1 for an index the machine does not have. One load
    // per dependency when a policy counts bytes per node.
    std::vector<int> serving_slot_of;
    // For each worker node (parallel to `nodes`) without memory of its own
    // (a CPU-only node: some multi-die servers, cloud VMs): the position of
    // the worker node that serves its nearest memory node (Machine::
    // memory_node_near), whose tasks are as near to its workers as any
    // task's data can be; -1 for a node with memory, or none to name.
    std::vector<int> memory_slot;
    std::uint64_t seed = 1;

    std::size_t node_slot(unsigned os_index) const;   // position in `nodes`; nodes.size() if absent
    // The position in `nodes` of the worker node that takes work whose data
    // lives on `home`; -1 for `unallocated` or a home the machine does not have.
    int serving_slot(int home) const {
        const auto at = static_cast<std::size_t>(home);
        return home >= 0 && at < serving_slot_of.size() ? serving_slot_of[at] : -1;
    }
    // That worker node's OS index, or -1.
    int serving(int home) const {
        const int slot = serving_slot(home);
        return slot < 0 ? -1 : static_cast<int>(nodes[static_cast<std::size_t>(slot)]);
    }
};

// Validates the context and builds the topology. `policy_seed` is the seed
// from PolicyOptions; it is mixed with ctx.seed. Throws Error("machine"),
// Error("workers"), Error("worker_node[i]") or Error("nodes").
Topology make_topology(const PolicyContext& ctx, std::uint64_t policy_seed);

// Writes the steal order of a node-queue policy after `round` rounds of
// idleness: its own node's queue (and, on a node without memory, the queue
// of the node serving its nearest memory: no policy places a task by data
// on a node that holds none), then the other worker nodes nearest
// first, one distance ring more every `delay_rounds` rounds (0: every ring
// at once). Stealing late and near keeps a task near its data while the
// queues of its own node still have work (PolicyOptions::steal_delay_tasks).
void node_steal_order(const Topology& topo, unsigned worker, std::uint64_t round, std::uint64_t delay_rounds,
                      std::vector<QueueRef>& order);

// Room for one placement's bytes per worker node: on the stack for up to
// inline_nodes nodes, so that a place() that runs on several threads at
// once neither allocates nor shares a buffer.
class NodeByteCounts {
public:
    static constexpr std::size_t inline_nodes = 64;
    explicit NodeByteCounts(std::size_t nodes) : n_(nodes) {
        if (nodes > inline_nodes) heap_.resize(nodes);
    }
    std::span<std::uint64_t> span() { return {heap_.empty() ? inline_ : heap_.data(), n_}; }

private:
    std::size_t n_;
    std::uint64_t inline_[inline_nodes];
    std::vector<std::uint64_t> heap_;
};

// Bytes of a task's dependencies per worker node (parallel to topo.nodes;
// `per_node` has their count), homes on nodes without workers credited to
// the nearest worker node; returns the bytes with no home (`unallocated` or
// not on the machine).
std::uint64_t bytes_per_node(const Topology& topo, std::span<const DepInfo> deps, std::span<std::uint64_t> per_node);

// PolicyOptions::steal_delay_tasks (default default_steal_delay_tasks) in
// rounds of Policy::steal_order().
std::uint64_t steal_delay_rounds(const PolicyOptions& options);

// A task that names no data, spawned by a worker (TaskView::spawner_node):
// the worker node serving the spawner's node, where DEP and LQ put it;
// nullopt for a task with dependencies or without a known spawner.
inline std::optional<Destination> spawner_destination(const Topology& topo, const TaskView& task) {
    const int slot = task.deps.empty() ? topo.serving_slot(task.spawner_node) : -1;
    if (slot < 0) return std::nullopt;
    return Destination::to_node(topo.nodes[static_cast<std::size_t>(slot)]);
}

// Round-robin over the worker nodes by task id.
inline Destination round_robin_node(const Topology& topo, TaskId id) {
    return Destination::to_node(topo.nodes[id % topo.nodes.size()]);
}

// DEP's choice for one task (see dep in simple.cpp). Thread-safe.
Destination dep_place(const Topology& topo, const TaskView& task);

// Factories, one per source file.
std::unique_ptr<Policy> make_dfifo(const PolicyOptions& options);
std::unique_ptr<Policy> make_lq(const PolicyOptions& options);
std::unique_ptr<Policy> make_dep(const PolicyOptions& options);
std::unique_ptr<Policy> make_sa(const PolicyOptions& options);
std::unique_ptr<Policy> make_rip(bool moving_window, const PolicyOptions& options);

}  // namespace numaware::tasks::policy_detail
