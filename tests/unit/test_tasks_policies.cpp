// tests/unit/test_task_policies.cpp — the built-in scheduler policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/task_policy.hpp"
#include "support.hpp"
#include "tasks/policies/common.hpp"
#include "tasks/policies/partition.hpp"

namespace numaware::tasks {
namespace {

using test::contains;
using test::expect_error;

const char* const two_nodes = "nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10";
const char* const four_nodes =
    "nodes=4 cpus-per-node=2 mem-per-node=512M distances=10,21,31,31/21,10,31,31/31,31,10,21/31,31,21,10";

struct Fixture {
    Machine machine;
    PolicyContext ctx;
    explicit Fixture(const char* spec, unsigned workers_per_node = 1, std::uint64_t seed = 1)
        : machine(Machine::from_spec(spec)) {
        ctx.machine = &machine;
        for (const Node& n : machine.nodes) {
            if (!n.has_cpus()) continue;
            for (unsigned i = 0; i < workers_per_node; ++i) ctx.worker_node.push_back(n.os_index);
            ctx.nodes.push_back(n.os_index);
        }
        ctx.seed = seed;
    }
    std::unique_ptr<Policy> attach(std::string_view name, const PolicyOptions& o = {}) const {
        auto p = make_policy(name, o);
        p->attach(ctx);
        return p;
    }
};

Destination place(Policy& p, TaskId id, std::vector<DepInfo> deps = {}, int hint = -1) {
    return p.place(TaskView{id, deps, {}, hint});
}

std::vector<unsigned> node_order(const Policy& p, unsigned worker, std::uint64_t round = 0) {
    std::vector<QueueRef> order;
    p.steal_order(worker, round, order);
    std::vector<unsigned> out;
    for (const QueueRef& q : order) {
        // RIP's workers also search their own node's worker queues, where
        // first touches wait (RipFirstTouchesStayOnTheirNode).
        if (q.kind == QueueRef::Kind::worker && p.name().starts_with("rip-")) continue;
        EXPECT_EQ(q.kind, QueueRef::Kind::node);
        out.push_back(q.index);
    }
    return out;
}

// The node a placement puts a task on: a node queue's, or the node of
// the worker whose queue it names.
unsigned node_of(const Fixture& f, const Destination& d) {
    EXPECT_NE(d.kind, Destination::Kind::hold);
    if (d.kind != Destination::Kind::worker) return d.index;
    EXPECT_LT(d.index, f.ctx.worker_node.size());
    return d.index < f.ctx.worker_node.size() ? f.ctx.worker_node[d.index] : ~0u;
}

// ---- registry and validation ------------------------------------------

TEST(TaskPolicies, NamesAndFactory) {
    const auto names = policy_names();
    const std::vector<std::string_view> expected{"dfifo", "lq", "dep", "sa", "rip-dep", "rip-mw"};
    ASSERT_EQ(std::vector<std::string_view>(names.begin(), names.end()), expected);
    for (auto n : names) EXPECT_EQ(make_policy(n)->name(), n);
    // Only the partitioning policies use on_submit() and take_job().
    for (auto n : names) EXPECT_EQ(make_policy(n)->uses_submissions(), n.starts_with("rip-")) << n;
}

TEST(TaskPolicies, BadOptionsNameFieldAndLimit) {
    auto e = expect_error([] { make_policy("fifo"); });
    EXPECT_EQ(e.field(), "policy");
    EXPECT_TRUE(contains(e.what(), "unknown policy 'fifo'; expected one of dfifo, lq, dep, sa, rip-dep, rip-mw"))
        << e.what();

    PolicyOptions o;
    o.window = 0;
    e = expect_error([&] { make_policy("rip-dep", o); });
    EXPECT_EQ(e.field(), "window");
    EXPECT_TRUE(contains(e.what(), "must be at least 1, got 0")) << e.what();

    o = {};
    o.window = 8;
    o.intersection = 8;
    e = expect_error([&] { make_policy("rip-mw", o); });
    EXPECT_EQ(e.field(), "intersection");
    EXPECT_TRUE(contains(e.what(), "must be less than the window (8), got 8")) << e.what();
    EXPECT_NO_THROW(make_policy("rip-dep", o));   // RIP-DEP has no intersection
    o.intersection = 7;
    EXPECT_NO_THROW(make_policy("rip-mw", o));

    for (double bad : {-0.01, 1.0, 2.5, std::numeric_limits<double>::quiet_NaN()}) {
        o = {};
        o.imbalance = bad;
        e = expect_error([&] { make_policy("rip-mw", o); });
        EXPECT_EQ(e.field(), "imbalance");
        EXPECT_TRUE(contains(e.what(), "must be in [0, 1)")) << e.what();
    }
    o = {};
    o.imbalance = 0.0;
    EXPECT_NO_THROW(make_policy("rip-mw", o));
}

TEST(TaskPolicies, AttachRejectsBadContext) {
    Fixture f(two_nodes);
    for (auto name : policy_names()) {
        auto p = make_policy(name);
        PolicyContext ctx = f.ctx;
        ctx.worker_node.clear();
        ctx.nodes.clear();
        auto e = expect_error([&] { p->attach(ctx); });
        EXPECT_EQ(e.field(), "workers") << name;
        EXPECT_TRUE(contains(e.what(), "at least 1 worker")) << e.what();

        ctx = f.ctx;
        ctx.worker_node = {0, 5};
        ctx.nodes = {0, 5};
        e = expect_error([&] { p->attach(ctx); });
        EXPECT_EQ(e.field(), "worker_node[1]") << name;
        EXPECT_TRUE(contains(e.what(), "node 5 is not in the machine")) << e.what();

        ctx = f.ctx;
        ctx.machine = nullptr;
        e = expect_error([&] { p->attach(ctx); });
        EXPECT_EQ(e.field(), "machine") << name;

        ctx = f.ctx;
        ctx.nodes = {1};
        e = expect_error([&] { p->attach(ctx); });
        EXPECT_EQ(e.field(), "nodes") << name;
    }
}

// ---- DFIFO ------------------------------------------------------------

TEST(TaskPolicies, DfifoRoundRobinAndStealPermutations) {
    Fixture f(four_nodes, 2);   // 8 workers
    auto p = f.attach("dfifo");
    for (TaskId id = 0; id < 40; ++id) EXPECT_EQ(place(*p, id), Destination::to_worker(static_cast<unsigned>(id % 8)));

    std::set<std::vector<unsigned>> distinct;
    for (unsigned w = 0; w < 8; ++w) {
        for (std::uint64_t round = 0; round < 16; ++round) {
            std::vector<QueueRef> order;
            p->steal_order(w, round, order);
            ASSERT_EQ(order.size(), 8u);
            EXPECT_EQ(order.front(), (QueueRef{QueueRef::Kind::worker, w}));
            std::vector<unsigned> idx;
            for (const auto& q : order) {
                EXPECT_EQ(q.kind, QueueRef::Kind::worker);
                idx.push_back(q.index);
            }
            if (w == 3) distinct.insert(idx);
            std::sort(idx.begin(), idx.end());
            EXPECT_EQ(idx, (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7}));
            std::vector<QueueRef> again;
            p->steal_order(w, round, again);
            EXPECT_EQ(order, again);   // a function of (seed, worker, round)
        }
    }
    EXPECT_GT(distinct.size(), 4u);   // rounds draw different permutations
}

// Teams whose other workers number a prime (11), a composite (12), one and
// none: every round lists each worker once, its own queue first; the first
// victim is drawn over all the others, and so is the order after it (a
// fixed step would make the second victim a function of the first).
TEST(TaskPolicies, DfifoStealOrderCoversEveryWorkerFromARandomStart) {
    for (unsigned workers : {12u, 13u, 2u, 1u}) {
        Fixture f("nodes=1 cpus-per-node=16 mem-per-node=1G", workers);
        auto p = f.attach("dfifo");
        for (unsigned w : {0u, workers / 2, workers - 1}) {
            std::set<unsigned> first;
            std::set<std::pair<unsigned, unsigned>> first_two;
            for (std::uint64_t round = 0; round < 400; ++round) {
                std::vector<QueueRef> order;
                p->steal_order(w, round, order);
                ASSERT_EQ(order.size(), workers) << workers << " workers";
                EXPECT_EQ(order.front(), (QueueRef{QueueRef::Kind::worker, w}));
                std::vector<unsigned> idx;
                for (const auto& q : order) idx.push_back(q.index);
                std::sort(idx.begin(), idx.end());
                for (unsigned i = 0; i < workers; ++i) ASSERT_EQ(idx[i], i) << workers << " workers, round " << round;
                if (workers > 1) first.insert(order[1].index);
                if (workers > 2) first_two.insert({order[1].index, order[2].index});
            }
            EXPECT_EQ(first.size(), workers - 1) << workers << " workers: a first victim never drawn";
            if (workers > 3) {
                EXPECT_GT(first_two.size(), 2 * (workers - 1)) << workers << " workers";
            }
        }
    }
}

// ---- node-queue steal order -------------------------------------------

// Four nodes in two pairs (distance 21 within a pair, 31 across). With
// steal_delay_tasks = 0 every node is searched at once, nearest first.
TEST(TaskPolicies, NodeQueuesStealNearestFirstWithoutDelay) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.steal_delay_tasks = 0;
    for (auto name : {"lq", "dep", "rip-dep", "rip-mw"}) {
        auto p = f.attach(name, o);
        EXPECT_EQ(node_order(*p, 0), (std::vector<unsigned>{0, 1, 2, 3})) << name;
        EXPECT_EQ(node_order(*p, 1), (std::vector<unsigned>{1, 0, 2, 3})) << name;
        EXPECT_EQ(node_order(*p, 2, 5), (std::vector<unsigned>{2, 3, 0, 1})) << name;
        EXPECT_EQ(node_order(*p, 3), (std::vector<unsigned>{3, 2, 0, 1})) << name;
    }
    Fixture g(two_nodes, 2);
    auto p = g.attach("lq", o);
    EXPECT_EQ(node_order(*p, 0), (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(node_order(*p, 3), (std::vector<unsigned>{1, 0}));
}

// A node with CPUs and no memory: no policy places a task by its data there,
// so its workers look first in their own queue and then in the queue of the
// node serving their nearest memory (node 1 here: SLIT 15 against 30), not
// only after the steal delay; its other rings follow as usual.
TEST(TaskPolicies, WorkersOfAMemorylessNodeTakeTheirNearestMemorysTasksFirst) {
    Fixture f("nodes=3 cpus=1,1,1 mem=512M,512M,0 distances=10,21,30/21,10,15/30,15,10");
    ASSERT_EQ(f.ctx.nodes, (std::vector<unsigned>{0, 1, 2}));
    for (auto name : {"lq", "dep", "rip-dep", "rip-mw"}) {
        auto p = f.attach(name);   // the default steal delay
        EXPECT_EQ(node_order(*p, 2), (std::vector<unsigned>{2, 1})) << name;
        EXPECT_EQ(node_order(*p, 2, 1u << 30), (std::vector<unsigned>{2, 1, 0})) << name;
        // Nodes with memory keep their order.
        EXPECT_EQ(node_order(*p, 0), (std::vector<unsigned>{0})) << name;
        EXPECT_EQ(node_order(*p, 1, 1u << 30), (std::vector<unsigned>{1, 2, 0})) << name;
    }
    // Without any memory size in the model there is nothing to be near.
    Fixture g("nodes=2 cpus=1,1 mem=0,0 distances=10,21/21,10");
    EXPECT_EQ(node_order(*g.attach("dep"), 1), (std::vector<unsigned>{1}));
}

// ---- LQ ---------------------------------------------------------------

TEST(TaskPolicies, LqPicksNodeWithMostBytes) {
    Fixture f(four_nodes);
    auto p = f.attach("lq");
    EXPECT_EQ(place(*p, 7, {{1, 100, AccessMode::in, 0}, {2, 300, AccessMode::in, 2}, {3, 250, AccessMode::out, 3}}),
              Destination::to_node(2));
    EXPECT_EQ(place(*p, 7, {{1, 100, AccessMode::in, 1}, {2, 100, AccessMode::in, 1}, {3, 150, AccessMode::out, 3}}),
              Destination::to_node(1));
    // Unallocated bytes do not count while some are homed.
    EXPECT_EQ(place(*p, 7, {{1, 1000, AccessMode::out, unallocated}, {2, 10, AccessMode::in, 3}}), Destination::to_node(3));
    // No homed bytes: round-robin over the nodes by task id.
    for (TaskId id = 0; id < 12; ++id) {
        EXPECT_EQ(place(*p, id), Destination::to_node(static_cast<unsigned>(id % 4)));
        EXPECT_EQ(place(*p, id, {{1, 64, AccessMode::out, unallocated}}), Destination::to_node(static_cast<unsigned>(id % 4)));
    }
}

TEST(TaskPolicies, HomesOnNodesWithoutWorkersGoToNearestWorkerNode) {
    // Node 2 is memory-only, nearer to node 1 than to node 0.
    Fixture f("nodes=3 cpus=1,1,0 mem-per-node=512M distances=10,21,30/21,10,15/30,15,10");
    ASSERT_EQ(f.ctx.nodes, (std::vector<unsigned>{0, 1}));
    auto p = f.attach("lq");
    EXPECT_EQ(place(*p, 0, {{1, 100, AccessMode::in, 2}, {2, 60, AccessMode::in, 0}}), Destination::to_node(1));
    auto sa = f.attach("sa");
    EXPECT_EQ(place(*sa, 0, {}, 2), Destination::to_node(1));
}

// ---- DEP --------------------------------------------------------------

TEST(TaskPolicies, DepPicksHeaviestNode) {
    Fixture f(four_nodes);
    auto p = f.attach("dep");
    EXPECT_EQ(place(*p, 3, {{1, 100, AccessMode::in, 0}, {2, 300, AccessMode::in, 2}, {3, 250, AccessMode::out, unallocated}}),
              Destination::to_node(2));
    EXPECT_EQ(place(*p, 4, {{1, 500, AccessMode::in, 3}, {2, 300, AccessMode::in, 2}}), Destination::to_node(3));
}

// A task without dependencies has only the virtual socket: any node, drawn
// per task (every node of 4 is drawn, the same one again for the same
// task). On a machine of one node every task goes there, whatever its
// dependencies' homes say (the draw is skipped there).
TEST(TaskPolicies, DepSpreadsTasksWithoutDependenciesAndKeepsOneNodeMachinesOnTheirNode) {
    {
        Fixture f("nodes=4 cpus-per-node=1 mem-per-node=64M");
        auto p = f.attach("dep");
        std::vector<int> per_node(4, 0);
        for (TaskId id = 0; id < 400; ++id) {
            const Destination d = place(*p, id);
            ASSERT_EQ(d.kind, Destination::Kind::node);
            ASSERT_LT(d.index, 4u);
            ++per_node[d.index];
            EXPECT_EQ(place(*p, id), d) << "task " << id;
        }
        for (int n : per_node) EXPECT_GT(n, 50) << "a node drawn " << n << " times of 400";
    }
    {
        Fixture f("nodes=1 cpus-per-node=2 mem-per-node=64M");
        auto p = f.attach("dep");
        for (TaskId id = 0; id < 50; ++id) {
            EXPECT_EQ(place(*p, id), Destination::to_node(0));
            EXPECT_EQ(place(*p, id, {{1, 64, AccessMode::in, unallocated}, {2, 64, AccessMode::out, unallocated}}),
                      Destination::to_node(0));
            EXPECT_EQ(place(*p, id, {{1, 64, AccessMode::in, 0}, {2, 128, AccessMode::inout, unallocated}}),
                      Destination::to_node(0));
        }
    }
}

// A task that names no data and was spawned by a worker goes to that
// worker's node under DEP and LQ (TaskView::spawner_node), where its
// arguments were written; a spawner's node without workers counts for the
// nearest worker node. Dependencies, even unallocated ones, decide as
// before: the spawner is not a vote. RIP-DEP after its first window places
// by DEP, and SA and DFIFO do not look at it.
TEST(TaskPolicies, DepAndLqPutATaskWithoutDataOnItsSpawnersNode) {
    Fixture f(four_nodes);
    const auto view = [](TaskId id, std::vector<DepInfo>& deps, int spawner) {
        return TaskView{id, deps, {}, -1, spawner};
    };
    for (const char* name : {"dep", "lq"}) {
        auto p = f.attach(name);
        std::vector<DepInfo> none;
        for (TaskId id = 0; id < 40; ++id)
            for (int node = 0; node < 4; ++node)
                EXPECT_EQ(p->place(view(id, none, node)), Destination::to_node(static_cast<unsigned>(node)))
                    << name << " task " << id;
        // Named data decides, homed or not.
        std::vector<DepInfo> homed{{1, 300, AccessMode::in, 2}, {2, 100, AccessMode::in, 1}};
        EXPECT_EQ(p->place(view(5, homed, 3)), Destination::to_node(2)) << name;
        std::vector<DepInfo> unhomed{{1, 64, AccessMode::out, unallocated}};
        for (TaskId id = 0; id < 8; ++id)
            EXPECT_EQ(p->place(view(id, unhomed, 3)), p->place(view(id, unhomed, -1))) << name << " task " << id;
    }
    // A spawner's node without workers: the nearest worker node's.
    Fixture g("nodes=3 cpus=1,1,0 mem-per-node=512M distances=10,21,30/21,10,15/30,15,10");
    std::vector<DepInfo> none;
    EXPECT_EQ(g.attach("dep")->place(view(0, none, 2)), Destination::to_node(1));
    // Without a spawner, DEP still spreads them (the test above).
    auto dep = f.attach("dep");
    std::vector<int> per_node(4, 0);
    for (TaskId id = 0; id < 400; ++id) ++per_node[dep->place(view(id, none, -1)).index];
    for (int n : per_node) EXPECT_GT(n, 50);
    auto dfifo = f.attach("dfifo");
    EXPECT_EQ(dfifo->place(view(5, none, 3)), dfifo->place(view(5, none, -1)));
}

// A policy's fixed destination (the executor's place() without reading the
// task) only where place() itself sends every task there: the node
// policies when all workers are on one node, memory-only nodes beside it
// included; never DFIFO (per worker) or the RIP policies (they hold tasks).
TEST(TaskPolicies, FixedDestinationOnlyWherePlaceSendsEveryTaskThere) {
    Fixture one("nodes=3 cpus=2,0,0 mem-per-node=64M distances=10,21,31/21,10,21/31,21,10", 2);
    for (const char* name : {"lq", "dep", "sa"}) {
        auto p = one.attach(name);
        const std::optional<Destination> fixed = p->fixed_destination();
        ASSERT_TRUE(fixed.has_value()) << name;
        EXPECT_EQ(*fixed, Destination::to_node(0)) << name;
        std::uint64_t x = 88172645463325252ull;
        for (TaskId id = 0; id < 300; ++id) {
            std::vector<DepInfo> deps;
            for (unsigned k = 0; k < id % 4; ++k) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const int home = static_cast<int>(x % 4) - 1;   // -1 (unallocated), 0, 1 or 2
                deps.push_back({k + 1, 64 + x % 4096, k % 2 ? AccessMode::in : AccessMode::inout,
                                home < 0 ? unallocated : home});
            }
            EXPECT_EQ(place(*p, id, deps, static_cast<int>(id % 4) - 1), *fixed) << name << " task " << id;
        }
    }
    for (const char* name : {"dfifo", "rip-dep", "rip-mw"}) EXPECT_FALSE(one.attach(name)->fixed_destination()) << name;
    Fixture two(two_nodes);
    for (const char* name : {"dfifo", "lq", "dep", "sa", "rip-dep", "rip-mw"})
        EXPECT_FALSE(two.attach(name)->fixed_destination()) << name;
}

// A policy that places by id (the executor then places a ready task
// without reading it) places every task as it does with the task's
// dependencies, homes and hint: DFIFO only. The others read them.
TEST(TaskPolicies, PlacesByIdOnlyWherePlaceReadsNothingElse) {
    Fixture f(four_nodes, 2);
    for (const char* name : {"dfifo", "lq", "dep", "sa", "rip-dep", "rip-mw"}) {
        auto p = f.attach(name);
        EXPECT_EQ(p->places_by_id(), std::string(name) == "dfifo") << name;
        if (!p->places_by_id()) continue;
        std::uint64_t x = 88172645463325252ull;
        for (TaskId id = 0; id < 300; ++id) {
            std::vector<DepInfo> deps;
            for (unsigned k = 0; k < id % 4; ++k) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const int home = static_cast<int>(x % 5) - 1;   // -1 (unallocated), 0 to 3
                deps.push_back({k + 1, 64 + x % 4096, k % 2 ? AccessMode::in : AccessMode::inout,
                                home < 0 ? unallocated : home});
            }
            EXPECT_EQ(place(*p, id, deps, static_cast<int>(id % 5) - 1), p->place(TaskView{id})) << name << " task " << id;
        }
    }
}

// Against the definition, on random tasks: the node holding the most
// bytes wins; among equal nodes (or with the virtual socket, which stands
// for any node) the choice is one of them, and it depends on the task,
// not on the order of its dependencies. Machines of 4, 16 and 70 nodes:
// more than 8 distinct nodes named, and more nodes than one 64-bit mask.
TEST(TaskPolicies, DepChoosesAmongTheHeaviestNodesWhateverTheirCountOrOrder) {
    for (const unsigned nodes : {4u, 16u, 70u}) {
        const std::string spec = "nodes=" + std::to_string(nodes) + " cpus-per-node=1 mem-per-node=64M";
        Fixture f(spec.c_str());
        auto p = f.attach("dep");
        std::mt19937_64 rng(nodes);
        int unique_wins = 0, ties = 0, many_nodes = 0;
        for (TaskId id = 0; id < 3000; ++id) {
            const unsigned named = 1 + static_cast<unsigned>(rng() % std::min(nodes, 16u));   // homes drawn from these
            const std::size_t count = 1 + rng() % 16;
            std::vector<DepInfo> deps;
            std::vector<std::uint64_t> per_node(nodes, 0);
            std::uint64_t unhomed = 0;
            for (std::size_t k = 0; k < count; ++k) {
                const std::uint64_t bytes = 64 * (1 + rng() % 4);   // few values: ties are common
                const int home = rng() % 8 == 0 ? unallocated : static_cast<int>(rng() % named);
                deps.push_back(DepInfo{0x1000 * (k + 1), bytes, AccessMode::in, home});
                (home == unallocated ? unhomed : per_node[static_cast<std::size_t>(home)]) += bytes;
            }
            const Destination d = place(*p, id, deps);
            ASSERT_EQ(d.kind, Destination::Kind::node);
            ASSERT_LT(d.index, nodes);
            const std::uint64_t best = std::max(unhomed, *std::max_element(per_node.begin(), per_node.end()));
            std::size_t tied = 0;
            for (std::uint64_t b : per_node) tied += b == best ? 1 : 0;
            std::size_t distinct = 0;
            for (std::uint64_t b : per_node) distinct += b > 0 ? 1 : 0;
            many_nodes += distinct > 8 ? 1 : 0;
            if (unhomed != best) {
                EXPECT_EQ(per_node[d.index], best) << nodes << " nodes, task " << id;
                ++(tied == 1 ? unique_wins : ties);
            }
            std::shuffle(deps.begin(), deps.end(), rng);
            EXPECT_EQ(place(*p, id, deps), d) << nodes << " nodes, task " << id;
        }
        EXPECT_GT(unique_wins, 500) << nodes;
        EXPECT_GT(ties, 100) << nodes;
        if (nodes > 8) {
            EXPECT_GT(many_nodes, 10) << nodes;
        }
    }
}

TEST(TaskPolicies, DepTiesAndVirtualSocketAreSeededPerTask) {
    Fixture f(four_nodes);
    PolicyOptions seed7;
    seed7.seed = 7;
    auto a = f.attach("dep", seed7);
    auto b = f.attach("dep", seed7);
    PolicyOptions seed8;
    seed8.seed = 8;
    auto c = f.attach("dep", seed8);

    const std::vector<DepInfo> virtual_wins{{1, 4096, AccessMode::out, unallocated}, {2, 100, AccessMode::in, 1}};
    const std::vector<DepInfo> tie13{{1, 200, AccessMode::in, 1}, {2, 200, AccessMode::in, 3}, {3, 50, AccessMode::in, 0}};
    std::map<unsigned, int> virtual_count, tie_count;
    int differ = 0;
    // Reverse order in b: the choice depends on (seed, id) only.
    std::vector<Destination> from_a, from_b(200);
    for (TaskId id = 0; id < 200; ++id) from_a.push_back(place(*a, id, virtual_wins));
    for (TaskId id = 200; id-- > 0;) from_b[id] = place(*b, id, virtual_wins);
    EXPECT_EQ(from_a, from_b);
    for (TaskId id = 0; id < 200; ++id) {
        ++virtual_count[from_a[id].index];
        differ += place(*c, id, virtual_wins) == from_a[id] ? 0 : 1;
        const Destination t = place(*a, id, tie13);
        EXPECT_EQ(t, place(*b, id, tie13));
        ++tie_count[t.index];
    }
    EXPECT_EQ(virtual_count.size(), 4u);   // every node gets some
    for (auto [node, n] : virtual_count) EXPECT_GT(n, 20) << node;
    EXPECT_EQ(tie_count.size(), 2u);   // only the tied nodes
    EXPECT_GT(tie_count[1], 50);
    EXPECT_GT(tie_count[3], 50);
    EXPECT_GT(differ, 50);   // another seed, another draw

    // No dependencies at all: the virtual socket ties with every node.
    std::set<unsigned> none;
    for (TaskId id = 0; id < 64; ++id) none.insert(place(*a, id).index);
    EXPECT_EQ(none.size(), 4u);
}

// ---- SA ---------------------------------------------------------------

TEST(TaskPolicies, SaHonoursHints) {
    Fixture f(four_nodes);
    auto p = f.attach("sa");
    for (TaskId id = 0; id < 8; ++id) {
        EXPECT_EQ(place(*p, id, {{1, 1 << 20, AccessMode::in, 0}}, 2), Destination::to_node(2));
        EXPECT_EQ(place(*p, id, {}, 3), Destination::to_node(3));
        EXPECT_EQ(place(*p, id, {{1, 1 << 20, AccessMode::in, 0}}), Destination::to_node(static_cast<unsigned>(id % 4)));
    }
    // The hints are the placement: a worker never takes another node's tasks.
    for (unsigned w = 0; w < 4; ++w)
        for (std::uint64_t round : {0u, 1u, 100u}) EXPECT_EQ(node_order(*p, w, round), (std::vector<unsigned>{w}));
}

// ---- RIP --------------------------------------------------------------

// Task id = step * chains + chain; each task depends (inout) on its chain's
// region and on the previous task of the chain.
struct ChainGraph {
    unsigned chains, length;
    std::uint64_t bytes = 1 << 20;
    std::vector<std::vector<DepInfo>> deps;
    std::vector<std::vector<Edge>> preds;
    ChainGraph(unsigned c, unsigned l) : chains(c), length(l) {
        for (unsigned s = 0; s < l; ++s)
            for (unsigned k = 0; k < c; ++k) {
                deps.push_back({DepInfo{1000 + k, bytes, AccessMode::inout, unallocated}});
                preds.push_back({});
                if (s > 0) preds.back().push_back(Edge{TaskId{(s - 1) * c + k}, bytes});
            }
    }
    std::size_t size() const { return deps.size(); }
    unsigned chain(TaskId id) const { return static_cast<unsigned>(id % chains); }
    TaskView view(TaskId id) const { return TaskView{id, deps[id], preds[id], -1}; }
};

// Runs any job the policy offers to completion, collecting releases.
bool run_jobs(Policy& p, std::vector<Released>& released) {
    bool ran = false;
    while (auto job = p.take_job()) {
        EXPECT_GT(job->tasks(), 0u);
        job->run();
        p.finish_job(std::move(job), released);
        ran = true;
    }
    return ran;
}

// Submits the whole graph (running jobs as the executor would), placing
// the first task of each chain as soon as it is submitted; returns the
// node of every task.
std::vector<unsigned> schedule(const Fixture& f, Policy& p, const ChainGraph& g) {
    std::vector<int> node(g.size(), -1);
    std::vector<Released> released;
    for (TaskId id = 0; id < g.size(); ++id) {
        p.on_submit(g.view(id));
        if (id < g.chains) {
            const Destination where = p.place(TaskView{id, g.deps[id], {}, -1});
            EXPECT_EQ(where, Destination::held()) << id;   // its window is not full yet
        }
        run_jobs(p, released);
    }
    if (p.flush(released)) run_jobs(p, released);
    for (const Released& r : released) node[r.id] = static_cast<int>(node_of(f, r.where));
    for (TaskId id = g.chains; id < g.size(); ++id) {
        const Destination where = p.place(TaskView{id, g.deps[id], {}, -1});
        EXPECT_NE(where.kind, Destination::Kind::hold) << id;
        node[id] = static_cast<int>(node_of(f, where));
    }
    std::vector<unsigned> out;
    for (int n : node) {
        EXPECT_GE(n, 0);
        out.push_back(static_cast<unsigned>(n));
    }
    return out;
}

void expect_one_node_per_chain(const ChainGraph& g, const std::vector<unsigned>& node) {
    std::vector<std::set<unsigned>> per_chain(g.chains);
    for (TaskId id = 0; id < node.size(); ++id) per_chain[g.chain(id)].insert(node[id]);
    std::set<unsigned> used;
    for (unsigned c = 0; c < g.chains; ++c) {
        EXPECT_EQ(per_chain[c].size(), 1u) << "chain " << c;
        used.insert(*per_chain[c].begin());
    }
    EXPECT_EQ(used.size(), g.chains);
}

// RIP's first window ends after the graph's first two steps (the published
// window: the initialisation and the first iteration) once it holds a task
// per part, however large PolicyOptions::window is: 4 chains on 4 nodes,
// a step being one task of each chain, close at task 8; with the steps'
// rule off, at the window's size. A step of fewer tasks than parts does not
// close it.
TEST(TaskPolicies, RipFirstWindowEndsAfterTheFirstSteps) {
    const auto first_job_tasks = [](const Fixture& f, const ChainGraph& g, unsigned steps) {
        PolicyOptions o;
        o.window = 40;
        o.first_window_steps = steps;
        auto p = f.attach("rip-dep", o);
        for (TaskId id = 0; id < g.size(); ++id) {
            p->on_submit(g.view(id));
            if (auto job = p->take_job()) return job->tasks();
        }
        return std::size_t{0};
    };
    const Fixture four(four_nodes);
    EXPECT_EQ(first_job_tasks(four, ChainGraph(4, 16), 2), 8u);
    EXPECT_EQ(first_job_tasks(four, ChainGraph(4, 16), 3), 12u);
    EXPECT_EQ(first_job_tasks(four, ChainGraph(4, 16), 0), 40u);
    // Steps of 2 tasks on 4 parts: the window waits for 4 tasks (2 steps).
    EXPECT_EQ(first_job_tasks(four, ChainGraph(2, 40), 1), 4u);
}

TEST(TaskPolicies, RipDepPartitionsChainsOntoDistinctNodes) {
    Fixture f(four_nodes);
    const ChainGraph g(4, 16);
    PolicyOptions o;
    o.window = g.size();
    o.first_window_steps = 0;   // one window for the whole graph: no homes here for DEP to follow
    auto p = f.attach("rip-dep", o);
    const auto node = schedule(f, *p, g);
    expect_one_node_per_chain(g, node);
    // The same run again reproduces the partition.
    auto q = f.attach("rip-dep", o);
    EXPECT_EQ(schedule(f, *q, g), node);
}

TEST(TaskPolicies, RipDepUsesDepAfterFirstWindow) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.window = 6;
    o.initial_extra = 2;   // window 0 holds 8 tasks: 8 independent ones, then the step ends
    auto p = f.attach("rip-dep", o);
    std::vector<Released> released;
    for (TaskId id = 0; id < 8; ++id) {
        const std::vector<DepInfo> writes{DepInfo{100 + id, 64, AccessMode::out, unallocated}};
        p->on_submit(TaskView{id, writes, {}, -1});
        EXPECT_EQ(p->take_job(), nullptr) << id;
    }
    EXPECT_EQ(p->take_job(), nullptr);   // full, but the window waits for the end of its step
    // Task 8 rewrites region 100: a new step, so window 0 closes without it,
    // and it and every later task are placed by DEP, never held.
    const std::vector<DepInfo> on2{{1, 4096, AccessMode::in, 2}, {2, 100, AccessMode::in, 0},
                                   {100, 64, AccessMode::inout, unallocated}};
    p->on_submit(TaskView{8, on2, {}, -1});
    auto job = p->take_job();
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->tasks(), 8u);
    EXPECT_EQ(p->take_job(), nullptr);   // one job at a time, and none for later windows
    EXPECT_EQ(place(*p, 8, on2), Destination::to_node(2));
    job->run();
    p->finish_job(std::move(job), released);
    EXPECT_TRUE(released.empty());
    for (TaskId id = 9; id < 40; ++id) {
        const std::vector<DepInfo> on3{{1, 4096, AccessMode::inout, 3}};
        p->on_submit(TaskView{id, on3, {}, -1});
        EXPECT_EQ(p->take_job(), nullptr);
        EXPECT_EQ(place(*p, id, on3), Destination::to_node(3));
    }
    EXPECT_FALSE(p->flush(released));
}

// Window 0 ends at a step boundary at or after `window` tasks (a window
// cut mid-sweep is balanced on tasks but not on data), or at twice
// `window` when no task rewrites a region.
TEST(TaskPolicies, RipFirstWindowEndsAtAStepBoundary) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.window = 6;
    {
        const ChainGraph g(4, 5);   // steps of 4 tasks: the boundary after 6 tasks is at 8
        auto p = f.attach("rip-dep", o);
        for (TaskId id = 0; id < 8; ++id) {
            p->on_submit(g.view(id));
            EXPECT_EQ(p->take_job(), nullptr) << id;
        }
        p->on_submit(g.view(8));
        auto job = p->take_job();
        ASSERT_NE(job, nullptr);
        EXPECT_EQ(job->tasks(), 8u);
    }
    {
        auto p = f.attach("rip-dep", o);   // independent tasks: no step ends
        for (TaskId id = 0; id < 11; ++id) {
            const std::vector<DepInfo> writes{DepInfo{500 + id, 64, AccessMode::out, unallocated}};
            p->on_submit(TaskView{id, writes, {}, -1});
            EXPECT_EQ(p->take_job(), nullptr) << id;
        }
        const std::vector<DepInfo> last{DepInfo{511, 64, AccessMode::out, unallocated}};
        p->on_submit(TaskView{11, last, {}, -1});
        auto job = p->take_job();
        ASSERT_NE(job, nullptr);
        EXPECT_EQ(job->tasks(), 12u);
    }
}

// Task `id` reads a region of its own with no home yet: data for a window
// (a task that names none never joins one), and no write, so that window 0
// closes at `window` tasks.
std::vector<DepInfo> reads_own(TaskId id) { return {DepInfo{7000 + id, 64, AccessMode::in, unallocated}}; }

TEST(TaskPolicies, RipHeldTasksComeBackFromFinishJob) {
    Fixture f(two_nodes);
    PolicyOptions o;
    o.window = 4;
    o.intersection = 1;
    for (auto name : {"rip-dep", "rip-mw"}) {
        auto p = f.attach(name, o);
        std::vector<Released> released;
        std::vector<std::vector<DepInfo>> deps;
        for (TaskId id = 0; id < 4; ++id) deps.push_back(reads_own(id));
        p->on_submit(TaskView{0, deps[0], {}, -1});
        p->on_submit(TaskView{1, deps[1], {}, -1});
        EXPECT_EQ(place(*p, 0), Destination::held()) << name;
        EXPECT_EQ(place(*p, 1), Destination::held()) << name;
        EXPECT_EQ(p->take_job(), nullptr);
        p->on_submit(TaskView{2, deps[2], {}, -1});
        p->on_submit(TaskView{3, deps[3], {}, -1});
        auto job = p->take_job();
        ASSERT_NE(job, nullptr) << name;
        EXPECT_EQ(job->tasks(), 4u);
        EXPECT_TRUE(p->flush(released));   // a job is in flight
        EXPECT_EQ(p->take_job(), nullptr);
        job->run();
        p->finish_job(std::move(job), released);
        ASSERT_EQ(released.size(), 2u) << name;
        std::set<TaskId> ids;
        for (const auto& r : released) {
            ids.insert(r.id);
            EXPECT_EQ(r.where.kind, Destination::Kind::node);
            EXPECT_LT(r.where.index, 2u);
        }
        EXPECT_EQ(ids, (std::set<TaskId>{0, 1}));
        EXPECT_EQ(place(*p, 2).kind, Destination::Kind::node) << name;
        EXPECT_EQ(place(*p, 3).kind, Destination::Kind::node) << name;
        EXPECT_FALSE(p->flush(released)) << name;   // nothing held, nothing pending
    }
}

TEST(TaskPolicies, RipFlushPartitionsPartialWindow) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.window = 100;
    o.intersection = 10;
    for (auto name : {"rip-dep", "rip-mw"}) {
        auto p = f.attach(name, o);
        std::vector<Released> released;
        EXPECT_FALSE(p->flush(released)) << name;   // empty window: nothing to do
        EXPECT_TRUE(released.empty());
        std::vector<std::vector<DepInfo>> deps;
        for (TaskId id = 0; id < 10; ++id) deps.push_back(reads_own(id));
        for (TaskId id = 0; id < 10; ++id) p->on_submit(TaskView{id, deps[id], {}, -1});
        EXPECT_EQ(place(*p, 4), Destination::held());
        EXPECT_EQ(place(*p, 7), Destination::held());
        EXPECT_EQ(p->take_job(), nullptr);
        EXPECT_TRUE(p->flush(released)) << name;
        EXPECT_TRUE(released.empty());
        auto job = p->take_job();
        ASSERT_NE(job, nullptr) << name;
        EXPECT_EQ(job->tasks(), 10u);
        job->run();
        p->finish_job(std::move(job), released);
        ASSERT_EQ(released.size(), 2u);
        EXPECT_EQ(std::min(released[0].id, released[1].id), 4u);
        EXPECT_EQ(std::max(released[0].id, released[1].id), 7u);
        EXPECT_EQ(place(*p, 0).kind, Destination::Kind::node);
        EXPECT_FALSE(p->flush(released)) << name;
    }
    // RIP-MW, a later window cut short by a wait while window 0's job is
    // in flight: no job of its own; its held task is released at once to
    // be placed again (by DEP, on the homes of that moment), and flush()
    // is still true for the running job.
    o.window = 4;
    o.intersection = 2;
    auto p = f.attach("rip-mw", o);
    std::vector<Released> released;
    std::vector<std::vector<DepInfo>> deps;
    for (TaskId id = 0; id < 6; ++id) deps.push_back(reads_own(id));
    for (TaskId id = 0; id < 4; ++id) p->on_submit(TaskView{id, deps[id], {}, -1});
    auto first = p->take_job();
    ASSERT_NE(first, nullptr);
    p->on_submit(TaskView{4, deps[4], {}, -1});
    p->on_submit(TaskView{5, deps[5], {}, -1});
    EXPECT_EQ(place(*p, 5), Destination::held());
    EXPECT_TRUE(p->flush(released));
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0], Released::to_place(5));
    EXPECT_EQ(place(*p, 5, deps[5]).kind, Destination::Kind::node);
    EXPECT_EQ(place(*p, 4, deps[4]).kind, Destination::Kind::node);   // not held when it becomes ready
    released.clear();
    EXPECT_EQ(p->take_job(), nullptr);
    first->run();
    p->finish_job(std::move(first), released);
    EXPECT_TRUE(released.empty());
    EXPECT_EQ(p->take_job(), nullptr);
    EXPECT_FALSE(p->flush(released));
}

// A recursive program waits at every level: a RIP-MW window after the first
// that a wait cuts short is placed by DEP at once, on the homes its tasks'
// data has when they are placed (not when they were submitted), instead of
// waiting for a partition job of a few tasks.
TEST(TaskPolicies, RipMwPlacesAPartialLaterWindowByDep) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.window = 4;
    o.intersection = 1;
    auto p = f.attach("rip-mw", o);
    std::vector<Released> released;
    for (TaskId id = 0; id < 4; ++id) {
        const auto d = reads_own(id);
        p->on_submit(TaskView{id, d, {}, -1});
    }
    EXPECT_TRUE(run_jobs(*p, released));   // window 0 is partitioned
    // Two tasks on data without a home at submission; by the time they are
    // placed a writer has put it on node 2.
    const std::vector<DepInfo> at_submit{{9000, 4096, AccessMode::inout, unallocated}};
    const std::vector<DepInfo> now{{9000, 4096, AccessMode::inout, 2}};
    p->on_submit(TaskView{4, at_submit, {}, -1});
    p->on_submit(TaskView{5, at_submit, {}, -1});
    EXPECT_EQ(place(*p, 4, at_submit), Destination::held());
    EXPECT_FALSE(p->flush(released));   // no job: nothing is pending
    EXPECT_EQ(released, (std::vector<Released>{Released::to_place(4)}));
    EXPECT_EQ(p->take_job(), nullptr);
    EXPECT_EQ(place(*p, 4, now), Destination::to_node(2));
    EXPECT_EQ(place(*p, 5, now), Destination::to_node(2));
    // The next full window is partitioned again.
    released.clear();
    for (TaskId id = 6; id < 10; ++id) {
        const auto d = reads_own(id);
        p->on_submit(TaskView{id, d, {}, -1});
        if (id == 6) {
            EXPECT_EQ(place(*p, 6, d), Destination::held());
        }
    }
    EXPECT_TRUE(run_jobs(*p, released));
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0].id, 6u);
    EXPECT_FALSE(released[0].place_again);
}

// A partition places data: a task that names none is never held, under
// either policy, and makes no job.
TEST(TaskPolicies, RipNeverHoldsATaskWithoutDependencies) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.window = 2;
    o.intersection = 1;
    for (auto name : {"rip-dep", "rip-mw"}) {
        auto p = f.attach(name, o);
        std::vector<Released> released;
        for (TaskId id = 0; id < 8; ++id) {
            p->on_submit(TaskView{id, {}, {}, -1});
            EXPECT_EQ(p->take_job(), nullptr) << name << " " << id;
            EXPECT_EQ(place(*p, id).kind, Destination::Kind::node) << name << " " << id;
        }
        EXPECT_FALSE(p->flush(released)) << name;
        EXPECT_TRUE(released.empty()) << name;
    }
}

TEST(TaskPolicies, RipMwKeepsChainsAcrossWindowsWithFixedVertices) {
    Fixture f(four_nodes);
    // 136 tasks: window 0 of the first two steps (8 tasks), then 4 full
    // windows of 8 steps (a partial last one would be placed by DEP).
    const ChainGraph g(4, 34);
    PolicyOptions o;
    o.window = 32;
    o.intersection = 8;   // the last 2 steps of each chain stay fixed
    auto p = f.attach("rip-mw", o);
    const auto node = schedule(f, *p, g);
    expect_one_node_per_chain(g, node);
}

TEST(TaskPolicies, RipMwWindowsAreIndependentWithoutIntersection) {
    // Without fixed vertices each window is mapped on its own; chains still
    // stay whole inside a window, which checks every window is partitioned.
    Fixture f(four_nodes);
    const ChainGraph g(4, 34);   // windows [0, 8), then four of 32 tasks
    PolicyOptions o;
    o.window = 32;
    o.intersection = 0;
    auto p = f.attach("rip-mw", o);
    const auto node = schedule(f, *p, g);
    const TaskId bounds[] = {0, 8, 40, 72, 104, 136};
    for (std::size_t w = 0; w + 1 < std::size(bounds); ++w) {
        std::vector<std::set<unsigned>> per_chain(4);
        for (TaskId id = bounds[w]; id < bounds[w + 1]; ++id) per_chain[g.chain(id)].insert(node[id]);
        std::set<unsigned> used;
        for (const auto& s : per_chain) {
            EXPECT_EQ(s.size(), 1u) << "window " << w;
            used.insert(*s.begin());
        }
        EXPECT_EQ(used.size(), 4u) << "window " << w;
    }
}

// A task of a partitioned window that touches data first (writes a region
// with no home that no earlier task of its window writes) goes to the
// queue of a worker of its part's node, which only that node's workers
// search: a first touch stolen across nodes homed its data there, and the
// window's later tasks on that data, placed by the partition, all read it
// remotely. Later writers and readers go to the node queue as before.
TEST(TaskPolicies, RipFirstTouchesStayOnTheirNode) {
    Fixture f(four_nodes, 2);   // workers 2n and 2n+1 on node n
    for (auto name : {"rip-dep", "rip-mw"}) {
        PolicyOptions o;
        o.window = 12;
        o.intersection = 2;
        auto p = f.attach(name, o);
        std::vector<std::vector<DepInfo>> deps;
        for (std::uint64_t r = 0; r < 4; ++r) deps.push_back({{100 + r, 4096, AccessMode::out, unallocated}});
        for (std::uint64_t r = 0; r < 4; ++r) deps.push_back({{100 + r, 4096, AccessMode::inout, unallocated}});
        for (int k = 0; k < 4; ++k) deps.push_back({{200, 64, AccessMode::in, 1}});
        std::vector<Released> released;
        for (TaskId id = 0; id < deps.size(); ++id) {
            p->on_submit(TaskView{id, deps[id], {}, -1});
            if (id == 0) {
                EXPECT_EQ(place(*p, 0, deps[0]), Destination::held()) << name;
            }
            run_jobs(*p, released);
        }
        if (p->flush(released)) run_jobs(*p, released);
        ASSERT_EQ(released.size(), 1u) << name;   // task 0, held until its window was partitioned
        EXPECT_EQ(released[0].id, 0u);
        EXPECT_EQ(released[0].where.kind, Destination::Kind::worker) << name;
        EXPECT_EQ(released[0].where.index % 2, 0u) << name;
        for (TaskId id = 1; id < deps.size(); ++id) {
            const Destination where = place(*p, id, deps[id]);
            EXPECT_EQ(where.kind, id < 4 ? Destination::Kind::worker : Destination::Kind::node) << name << " " << id;
            EXPECT_LT(node_of(f, where), 4u);
            // Of its node's workers (2n, 2n+1), the one at id modulo 2.
            if (where.kind == Destination::Kind::worker) {
                EXPECT_EQ(where.index % 2, id % 2) << name << " " << id;
            }
        }
        EXPECT_FALSE(p->flush(released)) << name;
    }
    // Steal order: own queue, own node's, the node's other worker's, then
    // other nodes' queues only, never another node's worker queue.
    auto p = f.attach("rip-dep");
    const std::uint64_t late = 1000 * static_cast<std::uint64_t>(default_steal_delay_tasks) * rounds_per_task;
    for (unsigned w = 0; w < 8; ++w) {
        for (std::uint64_t round : {std::uint64_t{0}, late}) {
            std::vector<QueueRef> order;
            p->steal_order(w, round, order);
            ASSERT_GE(order.size(), 3u);
            EXPECT_EQ(order[0], (QueueRef{QueueRef::Kind::worker, w}));
            EXPECT_EQ(order[1], (QueueRef{QueueRef::Kind::node, w / 2}));
            EXPECT_EQ(order[2], (QueueRef{QueueRef::Kind::worker, w ^ 1u}));
            EXPECT_EQ(order.size(), round == 0 ? 3u : 6u);
            for (std::size_t k = 3; k < order.size(); ++k) {
                EXPECT_EQ(order[k].kind, QueueRef::Kind::node);
                EXPECT_NE(order[k].index, w / 2);
            }
        }
    }
}

// One worker node is one part: nothing is held and no job is made.
TEST(TaskPolicies, RipOnOneNodeNeedsNoScotch) {
    Fixture f("nodes=1 cpus-per-node=2 mem-per-node=512M", 2);
    PolicyOptions o;
    o.window = 3;
    o.intersection = 1;
    for (auto name : {"rip-dep", "rip-mw"}) {
        auto p = f.attach(name, o);
        const ChainGraph g(1, 9);
        std::vector<Released> released;
        for (TaskId id = 0; id < g.size(); ++id) {
            p->on_submit(g.view(id));
            EXPECT_EQ(p->take_job(), nullptr) << name << " " << id;
            EXPECT_EQ(p->place(TaskView{id, g.deps[id], {}, -1}), Destination::to_node(0)) << name << " " << id;
        }
        EXPECT_FALSE(p->flush(released)) << name;
        EXPECT_TRUE(released.empty()) << name;
    }
}

TEST(TaskPolicies, RipRejectsForeignJob) {
    struct Foreign final : PartitionJob {
        void run() override {}
        std::size_t tasks() const override { return 0; }
    };
    Fixture f(two_nodes);
    auto p = f.attach("rip-mw");
    std::vector<Released> released;
    const auto e = expect_error([&] { p->finish_job(std::make_unique<Foreign>(), released); });
    EXPECT_EQ(e.field(), "job");
    EXPECT_TRUE(contains(e.what(), "is not a job of this policy")) << e.what();
    EXPECT_TRUE(released.empty());
}

TEST(TaskPolicies, DfifoStealOrderDependsOnSeed) {
    Fixture f(four_nodes, 2);
    PolicyOptions o;
    o.seed = 1;
    auto a = f.attach("dfifo", o);
    o.seed = 2;
    auto b = f.attach("dfifo", o);
    int differ = 0;
    for (std::uint64_t round = 0; round < 20; ++round) {
        std::vector<QueueRef> x, y;
        a->steal_order(5, round, x);
        b->steal_order(5, round, y);
        differ += x == y ? 0 : 1;
    }
    EXPECT_GT(differ, 10);
}

// The threading contract: a job runs on another thread while the policy
// takes calls and workers read steal orders; jobs of two policies run at
// once and agree (no shared Scotch state). Meaningful under TSan.
TEST(TaskPolicies, RipJobsRunConcurrentlyWithPolicyCalls) {
    Fixture f(four_nodes);
    const ChainGraph g(4, 32);
    PolicyOptions o;
    o.window = 64;
    o.intersection = 8;
    o.first_window_steps = 0;   // window 0 of 64 tasks, whatever its steps
    auto a = f.attach("rip-mw", o);
    auto b = f.attach("rip-mw", o);
    for (TaskId id = 0; id <= 64; ++id) {   // task 64 starts a step: window 0 closes with 64 tasks
        a->on_submit(g.view(id));
        b->on_submit(g.view(id));
    }
    EXPECT_EQ(a->place(TaskView{0, g.deps[0], {}, -1}), Destination::held());
    auto ja = a->take_job();
    auto jb = b->take_job();
    ASSERT_NE(ja, nullptr);
    ASSERT_NE(jb, nullptr);
    std::atomic<bool> done{false};
    std::thread ta([&] { ja->run(); });
    std::thread tb([&] { jb->run(); });
    std::thread thief([&] {
        std::vector<QueueRef> order;
        std::size_t seen = 0;
        for (std::uint64_t round = 0; !done.load() || round < 100; ++round) {
            a->steal_order(static_cast<unsigned>(round % 4), round, order);
            seen += order.size();
        }
        EXPECT_GT(seen, 0u);
    });
    for (TaskId id = 64; id < 128; ++id) {
        a->on_submit(g.view(id));
        EXPECT_EQ(a->take_job(), nullptr);   // one job at a time
    }
    EXPECT_EQ(a->place(TaskView{64, g.deps[64], {}, -1}), Destination::held());
    ta.join();
    tb.join();
    done = true;
    thief.join();
    std::vector<Released> ra, rb;
    a->finish_job(std::move(ja), ra);
    b->finish_job(std::move(jb), rb);
    ASSERT_EQ(ra.size(), 1u);
    EXPECT_EQ(ra[0].id, 0u);
    EXPECT_TRUE(rb.empty());
    for (TaskId id = 1; id < 64; ++id)
        EXPECT_EQ(a->place(TaskView{id, g.deps[id], {}, -1}), b->place(TaskView{id, g.deps[id], {}, -1})) << id;
    EXPECT_TRUE(run_jobs(*a, ra));
    ASSERT_EQ(ra.size(), 2u);
    EXPECT_EQ(ra[1].id, 64u);
    EXPECT_EQ(ra[1].where, ra[0].where);   // same chain, kept by the fixed vertices
}

// ---- RIP partition quality ------------------------------------------------

// A task graph with the edges the executor gives: a reader depends on the
// region's last writer; a writer on the readers since that writer, or else
// on the writer itself (so a writer after readers has no edge to its own
// previous version).
struct TrackedGraph {
    std::vector<std::vector<DepInfo>> deps;
    std::vector<std::vector<Edge>> preds;
    struct Region {
        int writer = -1;
        std::vector<TaskId> readers;
    };
    std::map<std::uint64_t, Region> regions;

    TaskId add(std::vector<DepInfo> d) {
        const TaskId id = deps.size();
        std::vector<Edge> p;
        auto edge = [&](TaskId from, std::uint64_t bytes) {
            for (Edge& e : p)
                if (e.from == from) {
                    e.bytes += bytes;
                    return;
                }
            p.push_back(Edge{from, bytes});
        };
        for (const DepInfo& x : d) {
            Region& r = regions[x.region];
            if (x.access == AccessMode::in) {
                if (r.writer >= 0) edge(static_cast<TaskId>(r.writer), x.bytes);
                r.readers.push_back(id);
            } else {
                if (!r.readers.empty()) {
                    for (TaskId rd : r.readers) edge(rd, x.bytes);
                    r.readers.clear();
                } else if (r.writer >= 0) {
                    edge(static_cast<TaskId>(r.writer), x.bytes);
                }
                r.writer = static_cast<int>(id);
            }
        }
        deps.push_back(std::move(d));
        preds.push_back(std::move(p));
        return id;
    }
    std::size_t size() const { return deps.size(); }
    TaskView view(TaskId id) const { return TaskView{id, deps[id], preds[id], -1}; }
};

// The Gauss-Seidel app's graph: a task writing each tile of a tps x tps
// grid, then `sweeps` sweeps in row-major order, each task updating its
// tile (inout) from its four neighbours (in). Region of tile (i, j): i*tps+j+1.
constexpr std::uint64_t gs_tile_bytes = 8192;
TrackedGraph gauss_seidel_graph(std::uint64_t tps, unsigned sweeps) {
    TrackedGraph g;
    auto tile = [tps](std::uint64_t i, std::uint64_t j) { return i * tps + j + 1; };
    for (std::uint64_t i = 0; i < tps; ++i)
        for (std::uint64_t j = 0; j < tps; ++j) g.add({{tile(i, j), gs_tile_bytes, AccessMode::out, unallocated}});
    for (unsigned t = 0; t < sweeps; ++t)
        for (std::uint64_t i = 0; i < tps; ++i)
            for (std::uint64_t j = 0; j < tps; ++j) {
                std::vector<DepInfo> d{{tile(i, j), gs_tile_bytes, AccessMode::inout, unallocated}};
                if (i > 0) d.push_back({tile(i - 1, j), gs_tile_bytes, AccessMode::in, unallocated});
                if (j > 0) d.push_back({tile(i, j - 1), gs_tile_bytes, AccessMode::in, unallocated});
                if (i + 1 < tps) d.push_back({tile(i + 1, j), gs_tile_bytes, AccessMode::in, unallocated});
                if (j + 1 < tps) d.push_back({tile(i, j + 1), gs_tile_bytes, AccessMode::in, unallocated});
                g.add(std::move(d));
            }
    return g;
}

// Submits every task (running jobs as the executor would) and returns the
// node of each: released by a job, or from place() once its window is done.
std::vector<unsigned> schedule_graph(const Fixture& f, Policy& p, const TrackedGraph& g) {
    std::vector<int> node(g.size(), -1);
    std::vector<Released> released;
    for (TaskId id = 0; id < g.size(); ++id) {
        p.on_submit(g.view(id));
        run_jobs(p, released);
    }
    if (p.flush(released)) run_jobs(p, released);
    for (const Released& r : released) node[r.id] = static_cast<int>(node_of(f, r.where));
    std::vector<unsigned> out;
    for (TaskId id = 0; id < g.size(); ++id) {
        if (node[id] < 0) {
            const Destination where = p.place(TaskView{id, g.deps[id], {}, -1});
            EXPECT_NE(where.kind, Destination::Kind::hold) << id;
            node[id] = static_cast<int>(node_of(f, where));
        }
        out.push_back(static_cast<unsigned>(node[id]));
    }
    return out;
}

// Bytes of dependencies homed on another node than their task's, homes
// following the first writer (the driver's synthetic-machine rule).
std::uint64_t cross_bytes(const TrackedGraph& g, const std::vector<unsigned>& node) {
    std::map<std::uint64_t, unsigned> home;
    std::uint64_t cross = 0;
    for (TaskId id = 0; id < g.size(); ++id)
        for (const DepInfo& d : g.deps[id]) {
            const auto it = home.find(d.region);
            if (it != home.end())
                cross += it->second != node[id] ? d.bytes : 0;
            else if (d.access != AccessMode::in)
                home.emplace(d.region, node[id]);
        }
    return cross;
}

// RIP must place a Gauss-Seidel window about as well as the obvious data
// distribution, one band of tile rows per node, and balance it. With
// dependency edges only, Scotch cut the window across time (early sweeps
// on one node, later ones on the other, the split drifting by columns):
// 3.4x the cross-node bytes of the bands on 2 nodes.
TEST(TaskPolicies, RipPartitionsTileGraphByData) {
    constexpr std::uint64_t tps = 8;
    constexpr unsigned sweeps = 3;
    const TrackedGraph g = gauss_seidel_graph(tps, sweeps);
    for (const char* spec : {two_nodes, four_nodes}) {
        Fixture f(spec);
        const std::vector<unsigned>& nodes = f.ctx.nodes;
        const std::size_t k = nodes.size();
        std::vector<unsigned> bands(g.size());
        for (TaskId id = 0; id < g.size(); ++id) bands[id] = nodes[(id % (tps * tps)) / tps * k / tps];
        const std::uint64_t band_cross = cross_bytes(g, bands);
        for (auto name : {"rip-dep", "rip-mw"}) {
            PolicyOptions o;
            o.window = g.size();
            o.first_window_steps = 0;   // the whole graph in one window
            auto p = f.attach(name, o);
            const std::vector<unsigned> node = schedule_graph(f, *p, g);
            const std::uint64_t cross = cross_bytes(g, node);
            EXPECT_LE(cross, band_cross + band_cross / 4) << name << " on " << k << " nodes";
            // Balance: vertex weights are bytes / 4096, so count tasks by
            // weight; allow the imbalance plus one heaviest task.
            std::map<unsigned, std::uint64_t> load;
            std::uint64_t total = 0;
            for (TaskId id = 0; id < g.size(); ++id) {
                std::uint64_t w = 0;
                for (const DepInfo& d : g.deps[id]) w += d.bytes / 4096;
                load[node[id]] += w;
                total += w;
            }
            EXPECT_EQ(load.size(), k) << name;
            for (const auto& [n, w] : load) {
                EXPECT_LE(static_cast<double>(w), static_cast<double>(total) / static_cast<double>(k) * (1 + o.imbalance) + 10)
                    << name << " node " << n << " on " << k << " nodes";
            }
        }
    }
}

// Fixed vertices must pull the free vertices tied to them: n tasks, each
// tied by three edges to one of two fixed vertices, half to each, split
// with no edge cut. SCOTCH_STRATDEFAULT cut about half of them for every n
// (it balanced the parts and ignored the fixed vertices); with
// SCOTCH_STRATBALANCE, n = 64 came out right but n = 16 and 32 still had
// a quarter to a third cut, which the refinement pass of partition_graph
// repairs. So RIP-MW's later windows did not follow the data earlier
// windows had placed.
TEST(TaskPolicies, PartitionFollowsFixedVertices) {
    using policy_detail::PartitionProblem;
    for (const auto& [n, tail] : {std::pair{64u, 0u}, std::pair{64u, 32u}, std::pair{32u, 0u}, std::pair{16u, 1u}}) {
        PartitionProblem p;
        for (std::uint32_t i = 0; i < tail; ++i) {   // unconnected fixed vertices, like RIP-MW's tail
            p.vertex_weight.push_back(1);
            p.fixed.push_back(static_cast<int>(i % 2));
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            p.vertex_weight.push_back(12);
            p.fixed.push_back(-1);
        }
        const std::uint32_t anchor = tail + n;
        for (int part : {0, 1}) {
            p.vertex_weight.push_back(1);
            p.fixed.push_back(part);
        }
        for (std::uint32_t i = 0; i < n; ++i)
            for (int d = 0; d < 3; ++d) p.edges.push_back({anchor + (i / 8) % 2, tail + i, 16384});
        p.distance = {{10, 21}, {21, 10}};
        const std::vector<unsigned> parts = policy_detail::partition_graph(p);
        ASSERT_EQ(parts.size(), anchor + 2u);
        EXPECT_EQ(parts[anchor], 0u);
        EXPECT_EQ(parts[anchor + 1], 1u);
        std::size_t cut = 0;
        for (const auto& e : p.edges) cut += parts[e.a] != parts[e.b] ? 1 : 0;
        EXPECT_EQ(cut, 0u) << n << " tasks, tail " << tail;
    }
}

// A partition depends only on its problem. Scotch built the target
// architecture with its default, multithreaded context, and about one
// RIP-MW window in 150 (16 parts, 2,000 vertices, a quarter fixed) was
// mapped differently when asked again: simulated RIP-MW makespans differed
// from one repetition to the next (before the fix, this test saw every
// later answer differ from the first). The same problem, asked 60 times
// (interleaved with problems of other shapes, with and without fixed
// vertices and a second constraint), gets the same parts every time.
TEST(TaskPolicies, PartitionDependsOnlyOnItsProblem) {
    using policy_detail::PartitionProblem;
    const auto make = [](std::uint32_t n, unsigned k, std::uint64_t seed, bool fixed, bool second) {
        PartitionProblem p;
        policy_detail::SplitMix rng(seed);
        for (std::uint32_t i = 0; i < n; ++i) {
            p.vertex_weight.push_back(1 + rng.below(3));
            if (second) p.second_weight.push_back(rng.below(100000));
            if (fixed) p.fixed.push_back(i < n / 4 ? static_cast<int>(rng.below(k)) : -1);
            for (int e = 0; e < 3; ++e)
                p.edges.push_back({i, static_cast<std::uint32_t>(rng.below(n)), 4096 * (1 + rng.below(16))});
        }
        p.distance.assign(k, std::vector<unsigned>(k, 21));
        for (unsigned i = 0; i < k; ++i) p.distance[i][i] = 10;
        p.seed = seed;
        return p;
    };
    const PartitionProblem p = make(2000, 16, 7, true, false);
    const std::vector<unsigned> first = policy_detail::partition_graph(p);
    int differed = 0;
    for (int again = 0; again < 60; ++again) {
        if (again % 10 == 0) {
            const auto u = static_cast<unsigned>(again / 10);
            (void)policy_detail::partition_graph(make(300 + 100 * u, 4 + 4 * (u % 3), 11 + u, u % 2 == 0, u % 3 == 1));
        }
        differed += policy_detail::partition_graph(p) == first ? 0 : 1;
    }
    EXPECT_EQ(differed, 0) << "of 60";
}

// An asymmetric SLIT (Machine keeps its directions) partitions as the
// mean of its two directions: Scotch's target graph is undirected and
// refused arcs that do not pair up. Same parts as the symmetric mean, with
// and without a second constraint.
TEST(TaskPolicies, PartitionTakesAnAsymmetricDistanceAsItsMean) {
    using policy_detail::PartitionProblem;
    const auto make = [](const std::vector<std::vector<unsigned>>& distance, bool second) {
        PartitionProblem p;
        policy_detail::SplitMix rng(5);
        const std::uint32_t n = 800;
        for (std::uint32_t i = 0; i < n; ++i) {
            p.vertex_weight.push_back(1 + rng.below(3));
            if (second) p.second_weight.push_back(rng.below(100000));
            for (int e = 0; e < 3; ++e)
                p.edges.push_back({i, static_cast<std::uint32_t>(rng.below(n)), 4096 * (1 + rng.below(16))});
        }
        p.distance = distance;
        p.seed = 5;
        return p;
    };
    const std::vector<std::vector<unsigned>> asymmetric = {
        {10, 16, 30, 32}, {20, 10, 31, 29}, {28, 33, 10, 15}, {30, 31, 19, 10}};
    std::vector<std::vector<unsigned>> mean = asymmetric;
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) mean[i][j] = (asymmetric[i][j] + asymmetric[j][i] + 1) / 2;
    EXPECT_EQ(mean[0][1], 18u);
    for (const bool second : {false, true}) {
        std::vector<unsigned> parts;
        ASSERT_NO_THROW(parts = policy_detail::partition_graph(make(asymmetric, second))) << "second " << second;
        EXPECT_EQ(parts, policy_detail::partition_graph(make(mean, second))) << "second " << second;
        EXPECT_EQ(std::set<unsigned>(parts.begin(), parts.end()).size(), 4u) << "second " << second;
    }
}

// A second balance constraint (the bytes each task writes first): 64
// tasks in a chain, the first 16 heavy writers (1 MB each), the rest
// light (1 KB). Balancing the task count alone, a contiguous cut puts the
// heavy ones in one or two parts; with both constraints every one of 4
// parts gets 16 +- 5% tasks and a quarter of the heavy bytes +- 5%. A
// second weight of the wrong length is named.
TEST(TaskPolicies, PartitionBalancesASecondConstraint) {
    using policy_detail::PartitionProblem;
    PartitionProblem p;
    const std::uint32_t n = 64;
    for (std::uint32_t i = 0; i < n; ++i) {
        p.vertex_weight.push_back(1);
        p.second_weight.push_back(i < 16 ? 1000000 : 1000);
        if (i + 1 < n) p.edges.push_back({i, i + 1, 4096});
    }
    p.distance = {{10, 21, 21, 21}, {21, 10, 21, 21}, {21, 21, 10, 21}, {21, 21, 21, 10}};
    const std::vector<unsigned> parts = policy_detail::partition_graph(p);
    ASSERT_EQ(parts.size(), n);
    std::vector<double> count(4, 0), bytes(4, 0);
    double total = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        ASSERT_LT(parts[i], 4u);
        count[parts[i]] += 1;
        bytes[parts[i]] += static_cast<double>(p.second_weight[i]);
        total += static_cast<double>(p.second_weight[i]);
    }
    for (unsigned q = 0; q < 4; ++q) {
        EXPECT_LE(count[q], 16 * 1.05 + 1) << "part " << q;
        EXPECT_LE(bytes[q], total / 4 * 1.05 + 1000) << "part " << q;
    }
    PartitionProblem bad = p;
    bad.second_weight.pop_back();
    EXPECT_THROW((void)policy_detail::partition_graph(bad), numaware::Error);
}

// RIP-MW: a later window follows the data earlier windows placed, whether
// the executor already knows the home or only the policy's own partition
// does. Window 0 writes 16 pairs of blocks (a, c); window 1 updates each a
// from its c (an nstream): every update must go to its pair's node.
// (Scotch alone misplaced 4 of these 16; the refinement pass fixes them.)
TEST(TaskPolicies, RipMwLaterWindowsFollowEarlierData) {
    Fixture f(two_nodes);
    for (bool homes_known : {false, true}) {
        TrackedGraph g;
        constexpr std::uint64_t blocks = 16, bytes = 16384;
        for (std::uint64_t b = 0; b < blocks; ++b)
            g.add({{b + 1, bytes, AccessMode::out, unallocated}, {b + 1 + blocks, bytes, AccessMode::out, unallocated}});
        PolicyOptions o;
        o.window = blocks;
        o.intersection = 1;
        auto p = f.attach("rip-mw", o);
        std::vector<Released> released;
        for (TaskId id = 0; id < blocks; ++id) {
            p->on_submit(g.view(id));
            run_jobs(*p, released);
        }
        // Window 0 is full but its step (16 first writes) may go on: the
        // executor's flush (end of submission) closes it.
        p->flush(released);
        run_jobs(*p, released);
        ASSERT_EQ(released.size(), 0u);   // nothing was placed yet: node_of_ keeps them
        std::map<std::uint64_t, unsigned> home;
        for (TaskId id = 0; id < blocks; ++id) {
            const Destination where = place(*p, id, g.deps[id]);
            ASSERT_EQ(where.kind, Destination::Kind::worker);   // a first touch: its node's worker
            home[id + 1] = node_of(f, where);
        }
        for (std::uint64_t b = 0; b < blocks; ++b) {
            const int h = homes_known ? static_cast<int>(home[b + 1]) : unallocated;
            g.add({{b + 1, bytes, AccessMode::inout, h}, {b + 1 + blocks, bytes, AccessMode::in, h}});
        }
        for (TaskId id = blocks; id < g.size(); ++id) {
            p->on_submit(g.view(id));
            run_jobs(*p, released);
        }
        for (TaskId id = blocks; id < g.size(); ++id) {
            const Destination where = place(*p, id, g.deps[id]);
            ASSERT_EQ(where.kind, Destination::Kind::node);
            EXPECT_EQ(where.index, home[id - blocks + 1]) << "task " << id << (homes_known ? " (homes known)" : "");
        }
    }
}

// With a steal delay the node-queue policies keep a worker on its own
// node's queue until it has been idle steal_delay_tasks mean task
// durations (rounds_per_task rounds each), so an idle worker does not at
// once take the tasks placed on another node (by the partition, or by
// DEP's vote); then one more distance ring every steal_delay_tasks. The
// default is one mean task duration for LQ, DEP and RIP alike.
TEST(TaskPolicies, NodeQueuesStealLateAndNearFirst) {
    Fixture f(four_nodes);
    PolicyOptions delayed;
    delayed.steal_delay_tasks = 8;
    for (auto name : {"lq", "dep", "rip-dep", "rip-mw"}) {
        for (const PolicyOptions& o : {PolicyOptions{}, delayed}) {
            const std::uint64_t d = static_cast<std::uint64_t>(o.steal_delay_tasks.value_or(default_steal_delay_tasks)) * rounds_per_task;
            auto p = f.attach(name, o);
            EXPECT_EQ(node_order(*p, 0, 0), (std::vector<unsigned>{0})) << name;
            EXPECT_EQ(node_order(*p, 0, 1), (std::vector<unsigned>{0})) << name;
            EXPECT_EQ(node_order(*p, 3, d - 1), (std::vector<unsigned>{3})) << name;
            EXPECT_EQ(node_order(*p, 0, d), (std::vector<unsigned>{0, 1})) << name;
            EXPECT_EQ(node_order(*p, 2, 2 * d - 1), (std::vector<unsigned>{2, 3})) << name;
            EXPECT_EQ(node_order(*p, 0, 2 * d), (std::vector<unsigned>{0, 1, 2, 3})) << name;
            EXPECT_EQ(node_order(*p, 3, 1000 * d), (std::vector<unsigned>{3, 2, 0, 1})) << name;
        }
    }
    PolicyOptions bad;
    bad.steal_delay_tasks = -1;
    const Error e = expect_error([&] { (void)make_policy("dep", bad); });
    EXPECT_EQ(e.field(), "steal_delay_tasks");
    PolicyOptions o;
    o.steal_delay_tasks = 3.0 / rounds_per_task;   // 3 rounds
    auto p = f.attach("dep", o);
    EXPECT_EQ(node_order(*p, 1, 2), (std::vector<unsigned>{1}));
    EXPECT_EQ(node_order(*p, 1, 3), (std::vector<unsigned>{1, 0}));
    EXPECT_EQ(node_order(*p, 1, 6), (std::vector<unsigned>{1, 0, 2, 3}));
}

// queue_listings: every queue a worker ever searches, once, with the first
// round that lists it; what the executor's and the simulator's backlog
// rule is computed from.
TEST(TaskPolicies, QueueListingsGiveTheFirstRoundOfEveryQueue) {
    Fixture f(four_nodes);
    PolicyOptions o;
    o.steal_delay_tasks = 2;
    const std::uint64_t d = 2 * rounds_per_task;
    auto p = f.attach("dep", o);
    const std::vector<QueueListing> l = queue_listings(*p, 3);
    std::vector<std::pair<unsigned, std::uint64_t>> nodes;
    for (const QueueListing& x : l)
        if (x.queue.kind == QueueRef::Kind::node) nodes.emplace_back(x.queue.index, x.first_round);
    EXPECT_EQ(nodes, (std::vector<std::pair<unsigned, std::uint64_t>>{{3, 0}, {2, d}, {0, 2 * d}, {1, 2 * d}}));
    auto sa = f.attach("sa", o);   // never across nodes
    for (const QueueListing& x : queue_listings(*sa, 3)) EXPECT_EQ(x.first_round, 0u);
    auto dfifo = f.attach("dfifo", o);   // every worker at once
    const std::vector<QueueListing> all = queue_listings(*dfifo, 3);
    for (const QueueListing& x : all) EXPECT_EQ(x.first_round, 0u);
    // Each queue once, in the search's order: the worker's own first.
    std::vector<QueueRef> round0;
    dfifo->steal_order(3, 0, round0);
    ASSERT_EQ(all.size(), round0.size());
    for (std::size_t k = 0; k < all.size(); ++k) EXPECT_EQ(all[k].queue, round0[k]);
    for (std::size_t k = 0; k < all.size(); ++k)
        for (std::size_t j = k + 1; j < all.size(); ++j) EXPECT_FALSE(all[k].queue == all[j].queue);
}

}  // namespace
}  // namespace numaware::tasks
