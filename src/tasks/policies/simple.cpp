// src/tasks/policies/simple.cpp — the policies without graph partitioning:
// DFIFO, LQ, DEP and SA.
//
// DFIFO  per-worker queues; task t goes to worker t mod workers; a worker
//        looks at its own queue, then every other worker's queue in a
//        random cyclic order drawn from hash(seed, worker, round): a
//        uniform start and a step prime to the number of the others.
//        Locality-unaware baseline.
// LQ     locality queues: a task goes to the node queue of the node holding
//        most of its dependency bytes (ties: lowest OS index); a task with
//        no homed bytes goes round-robin over the nodes by task id.
// DEP    weighs every node by the task's dependency bytes homed there, plus
//        the "virtual socket" of unallocated bytes; the heaviest node wins;
//        ties, or a winning virtual socket, are settled uniformly at random
//        by a generator seeded from hash(seed, task id).
// LQ and DEP put a task that names no data at all, spawned by a worker,
//        on that worker's node (TaskView::spawner_node): the children of
//        recursive code (fib, sorts, searches: OpenMP tasks without
//        `depend`) stay beside the parent that wrote their arguments
//        instead of going to a random node (DEP) or the next one (LQ).
// SA     user hints: spawn_on(node) puts the task on that node's queue;
//        without a hint, round-robin over the nodes by task id.
// LQ and DEP steal nearest first: their own node, then the other worker
// nodes ring by ring of machine distance, ties by OS index, one ring more
// every PolicyOptions::steal_delay_tasks mean task durations of idleness
// (default default_steal_delay_tasks; see task_policy.hpp).
// SA never steals across nodes (but for a waiter's own descendants, which
// nobody else there would run: NodeQueues::find).
//
// A home on a node without workers (e.g. a memory-only node) counts for
// the worker node nearest to it; a home the machine does not have counts
// as unallocated. A hint on a node without workers goes to the nearest
// worker node.
#include <algorithm>
#include <numeric>

#include "common.hpp"

namespace numaware::tasks::policy_detail {
namespace {

class Dfifo final : public Policy {
public:
    explicit Dfifo(std::uint64_t seed) : seed_(seed) {}
    std::string_view name() const override { return "dfifo"; }
    void attach(const PolicyContext& ctx) override { topo_ = make_topology(ctx, seed_); }
    Destination place(const TaskView& task) override {
        return Destination::to_worker(static_cast<unsigned>(task.id % topo_.worker_node.size()));
    }
    bool concurrent_place() const override { return true; }
    bool uses_submissions() const override { return false; }
    bool reads_homes() const override { return false; }
    bool places_by_id() const override { return true; }
    void steal_order(unsigned worker, std::uint64_t round, std::vector<QueueRef>& order) const override {
        order.clear();
        const std::size_t n = topo_.worker_node.size();
        if (worker >= n) return;
        order.push_back(QueueRef{QueueRef::Kind::worker, worker});
        // The other workers, numbered 0..others-1 (the worker itself left
        // out), visited from a random start by a random step prime to
        // their count: every one once, the first a uniform draw. Two
        // draws a round, not one per worker: an idle worker of a team of
        // 1,024 drew a permutation of them every round: 71% of the samples
        // of 1,024 threads on 2 CPUs (BENCHMARKS.md, 2026-12-05 23:45).
        const std::size_t others = n - 1;
        if (others == 0) return;
        SplitMix rng(hash_words({topo_.seed, worker, round}));
        std::size_t at = static_cast<std::size_t>(rng.below(others));
        std::size_t step = others == 1 ? 1 : 1 + static_cast<std::size_t>(rng.below(others - 1));   // in [1, others)
        while (std::gcd(step, others) != 1) step = step + 1 == others ? 1 : step + 1;
        for (std::size_t i = 0; i < others; ++i) {
            order.push_back(QueueRef{QueueRef::Kind::worker, static_cast<unsigned>(at < worker ? at : at + 1)});
            at += step;
            if (at >= others) at -= others;
        }
    }

private:
    std::uint64_t seed_;
    Topology topo_;
};

class NodePolicy : public Policy {
public:
    explicit NodePolicy(const PolicyOptions& o) : seed_(o.seed), delay_(steal_delay_rounds(o)) {}
    void attach(const PolicyContext& ctx) override { topo_ = make_topology(ctx, seed_); }
    void steal_order(unsigned worker, std::uint64_t round, std::vector<QueueRef>& order) const override {
        node_steal_order(topo_, worker, round, delay_, order);
    }

    bool concurrent_place() const override { return true; }
    bool uses_submissions() const override { return false; }
    // One worker node: LQ's heaviest node, DEP's (and its ties'), SA's hint
    // or round robin all name it, and a home anywhere else counts for it.
    std::optional<Destination> fixed_destination() const override {
        if (topo_.nodes.size() != 1) return std::nullopt;
        return Destination::to_node(topo_.nodes.front());
    }

protected:
    std::uint64_t seed_;
    std::uint64_t delay_;
    Topology topo_;
};


class Lq final : public NodePolicy {
public:
    using NodePolicy::NodePolicy;
    std::string_view name() const override { return "lq"; }
    Destination place(const TaskView& task) override {
        if (const auto near = spawner_destination(topo_, task)) return *near;   // no data at all
        NodeByteCounts room(topo_.nodes.size());
        const std::span<std::uint64_t> scratch = room.span();
        bytes_per_node(topo_, task.deps, scratch);
        const auto best = std::max_element(scratch.begin(), scratch.end());   // first of ties: lowest OS index
        if (*best == 0) return round_robin_node(topo_, task.id);
        return Destination::to_node(topo_.nodes[static_cast<std::size_t>(best - scratch.begin())]);
    }
};

class Dep final : public NodePolicy {
public:
    using NodePolicy::NodePolicy;
    std::string_view name() const override { return "dep"; }
    Destination place(const TaskView& task) override { return dep_place(topo_, task); }
};

class Sa final : public NodePolicy {
public:
    using NodePolicy::NodePolicy;
    std::string_view name() const override { return "sa"; }
    Destination place(const TaskView& task) override {
        const int node = topo_.serving(task.hint);
        if (node < 0) return round_robin_node(topo_, task.id);
        return Destination::to_node(static_cast<unsigned>(node));
    }
    bool reads_homes() const override { return false; }
    // The programmer's hints are the placement: a worker takes tasks only
    // from its own node's queue. Stealing across nodes would let an idle
    // worker run (and first-touch) the blocks the hints give another node,
    // which is what happens whenever tasks are spawned more slowly than
    // they run. The price is load balance, which the hints own too.
    void steal_order(unsigned worker, std::uint64_t /*round*/, std::vector<QueueRef>& order) const override {
        order.clear();
        if (worker >= topo_.worker_node.size()) return;
        order.push_back(QueueRef{QueueRef::Kind::node, topo_.worker_node[worker]});
    }
};

}  // namespace

std::unique_ptr<Policy> make_dfifo(const PolicyOptions& options) { return std::make_unique<Dfifo>(options.seed); }
std::unique_ptr<Policy> make_lq(const PolicyOptions& options) { return std::make_unique<Lq>(options); }
std::unique_ptr<Policy> make_dep(const PolicyOptions& options) { return std::make_unique<Dep>(options); }
std::unique_ptr<Policy> make_sa(const PolicyOptions& options) { return std::make_unique<Sa>(options); }

}  // namespace numaware::tasks::policy_detail
