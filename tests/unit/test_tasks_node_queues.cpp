// Unit tests of the executor's queues and of waking the workers of the node
// a task is pushed to (src/tasks/node_queues.hpp, src/tasks/executor.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/observer.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"
#include "tasks/node_queues.hpp"
#include "tasks/sync.hpp"

namespace numaware::tasks {
namespace {

// Each queue knows the node whose workers it wakes: a worker's queue its
// worker's node, a node's queue that node (positions in the sorted list of
// nodes with workers).
TEST(TasksNodeQueues, EveryQueueNamesTheNodeWhoseWorkersItWakes) {
    detail::NodeQueues q;
    q.init({0, 2, 5}, {5, 0, 2, 2});
    EXPECT_EQ(q.queue_for(Destination::to_worker(0)).node, 2u);
    EXPECT_EQ(q.queue_for(Destination::to_worker(1)).node, 0u);
    EXPECT_EQ(q.queue_for(Destination::to_worker(2)).node, 1u);
    EXPECT_EQ(q.queue_for(Destination::to_worker(3)).node, 1u);
    EXPECT_EQ(q.queue_for(Destination::to_node(0)).node, 0u);
    EXPECT_EQ(q.queue_for(Destination::to_node(2)).node, 1u);
    EXPECT_EQ(q.queue_for(Destination::to_node(5)).node, 2u);
    // Outside the team (a policy bug): the first node's queue, still runnable.
    EXPECT_EQ(&q.queue_for(Destination::to_node(3)), &q.queue_for(Destination::to_node(0)));
    EXPECT_EQ(&q.queue_for(Destination::to_worker(9)), &q.queue_for(Destination::to_node(0)));
}

// A push wakes the sleepers of its queue's node, or everyone when that
// node's workers are all busy. Rounds in which every worker has gone to
// sleep, then one task is spawned from outside onto one node (the SA
// policy's hint): each must start without anyone waiting for it, or the
// push lost its wake-up. Every policy that queues per node is covered, so
// both worker queues (DFIFO) and node queues are pushed to.
TEST(TasksNodeQueues, ATaskSpawnedWhileEveryWorkerSleepsRunsOnItsNode) {
    // One worker per node (this host has 2 CPUs to pin them to).
    const Machine machine = Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10");
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    for (const char* policy : {"sa", "lq", "dep", "dfifo"}) {
        Runtime rt{team, policy};
        std::atomic<int> ran{0};
        for (unsigned round = 0; round < 40; ++round) {
            // Long enough for the workers' spin (256 short pauses) to end.
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            const unsigned node = round % 2;
            const int before = ran.load();
            rt.spawn_on(node, [&ran] { ran.fetch_add(1, std::memory_order_release); });
            // Not taskwait(): a waiter wakes every worker itself. The push
            // alone must wake a worker.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (ran.load(std::memory_order_acquire) == before && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            ASSERT_EQ(ran.load(), before + 1) << policy << ": the task of round " << round << " on node " << node
                                              << " did not run within 5 s";
            rt.taskwait();
        }
        EXPECT_EQ(ran.load(), 40) << policy;
        const RunReport r = rt.report();
        EXPECT_EQ(r.tasks, 40u) << policy;
        if (std::string_view(policy) == "sa") {
            // SA never steals: each node ran exactly its own half.
            ASSERT_EQ(r.tasks_per_node.size(), 2u);
            EXPECT_EQ(r.tasks_per_node[0], 20u);
            EXPECT_EQ(r.tasks_per_node[1], 20u);
        }
    }
}

// The fallback: a push to a node none of whose workers sleeps (all busy)
// wakes everyone, so a farther worker can take the task (here by the
// occupied rule, its node's only worker being stuck in a long task). LQ
// places tasks without dependencies round robin by id over the nodes.
TEST(TasksNodeQueues, APushToABusyNodeWakesTheOtherNodes) {
    struct Where : Observer {
        std::atomic<int> node_of[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        void on_task_started(TaskId task, unsigned, unsigned node, double) override {
            if (task < 8) node_of[task].store(static_cast<int>(node));
        }
    } where;
    const Machine machine = Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10");
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    RuntimeOptions ro;
    ro.observer = &where;
    Runtime rt{team, "lq", PolicyOptions{}, ro};
    // Tasks 0-3: a mean task duration, so steal rounds have a length.
    for (int k = 0; k < 4; ++k) rt.spawn([] {});
    rt.taskwait();
    // Both workers asleep (their spin is far shorter), so only node 0's
    // wakes for task 4 (node 0), which holds it until released.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::atomic<bool> started{false}, release{false};
    rt.spawn([&] {
        started.store(true);
        while (!release.load()) std::this_thread::yield();
    });
    const auto wait_for = [](const auto& cond) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!cond() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        return cond();
    };
    ASSERT_TRUE(wait_for([&] { return started.load(); }));
    ASSERT_EQ(where.node_of[4].load(), 0) << "task 4 did not start on node 0: the test needs it there";
    // Task 5 (node 1) wakes node 1's worker, which runs it and sleeps again.
    std::atomic<int> ran{0};
    rt.spawn([&] { ran.fetch_add(1); });
    ASSERT_TRUE(wait_for([&] { return ran.load() == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Task 6 (node 0): node 0's worker is busy, so only the fallback wakes
    // node 1's worker; it must run the task while task 4 still holds node 0.
    rt.spawn([&] { ran.fetch_add(1); });
    const bool ran_while_held = wait_for([&] { return ran.load() == 2; });
    release.store(true);
    rt.taskwait();
    EXPECT_TRUE(ran_while_held) << "task 6 waited for node 0's worker: nobody woke node 1's";
    EXPECT_EQ(where.node_of[6].load(), 1);
}

// Two nodes of two workers each, node queues watched by their workers'
// running_since, and worker 0's (node 0's) search order for round 0 under
// LQ with `o`: what the searches below test their rules on.
struct TwoNodesOfTwo {
    explicit TwoNodesOfTwo(const PolicyOptions& o)
        : machine(Machine::from_spec("nodes=2 cpus-per-node=2 mem-per-node=512M distances=10,21/21,10")),
          policy(make_policy("lq", o)) {
        policy->attach(PolicyContext{&machine, {0, 0, 1, 1}, {0, 1}, 1});
        q.init({0, 1}, {0, 0, 1, 1});
        for (unsigned w = 0; w < 4; ++w) q.watch(w / 2, &running[w], &within[w]);
        policy->steal_order(0, 0, order.round0);   // node 0's queue, then node 1's when listed
    }
    Machine machine;
    std::unique_ptr<Policy> policy;
    detail::NodeQueues q;
    std::atomic<std::uint64_t> running[4] = {0, 0, 0, 0};
    detail::StealOrder order;
    std::atomic<const detail::Task*> within[4] = {nullptr, nullptr, nullptr, nullptr};   // helping_within
};

// A search says by which rule it took a task from another node's queue
// that a later round lists (the run report counts them): none while the
// thief's delay runs and that node's busy workers will start the task
// soon; the backlog rule when the queue holds more than they start in
// the delay; the occupied rule when both have run their tasks for longer
// than the delay; and in order once the thief's delay has passed.
TEST(TasksNodeQueues, ASearchSaysWhyItTookAFartherNodesTask) {
    TwoNodesOfTwo f2{PolicyOptions{}};   // the default delay, 32 mean tasks
    auto& [machine, policy, q, running, order, within] = f2;
    for (const QueueListing& l : queue_listings(*policy, 0))
        if (l.first_round != 0 && l.queue.kind == QueueRef::Kind::node)
            order.later.push_back({l.queue.index, l.first_round, backlog_limit(2, l.first_round)});
    ASSERT_EQ(order.later.size(), 1u);
    const std::uint64_t delay_round = order.later[0].first_round;
    const std::size_t limit = order.later[0].backlog;
    ASSERT_GT(delay_round, 0u);
    // Rounds of a second: the delay (512 rounds) outlasts the test.
    const auto ticks_per_round = static_cast<std::uint64_t>(1.0 / detail::Ticks::seconds_per_tick());
    std::vector<detail::Task> tasks(limit + 1);
    auto push = [&](detail::Task* t) { q.queue_for(Destination::to_node(1)).queue.push(t); };
    auto take = [&](std::uint64_t round) { return q.find(0, 0, round, ticks_per_round, *policy, order); };
    auto drain = [&] {
        while (q.queue_for(Destination::to_node(1)).queue.pop_front() != nullptr) {
        }
    };

    // Node 1's workers have just started their tasks: one queued task waits for them.
    running[2] = running[3] = detail::Ticks::now();
    push(&tasks[0]);
    EXPECT_FALSE(take(0));
    // More than they start in the delay: the backlog rule.
    for (std::size_t k = 1; k <= limit; ++k) push(&tasks[k]);
    detail::Found f = take(0);
    ASSERT_TRUE(f);
    EXPECT_TRUE(f.across);
    EXPECT_EQ(f.rule, TakeRule::backlog);
    drain();
    // Both running for longer than the delay: the occupied rule. (Rounds
    // of 1,000 ticks here: four delays of rounds of a second, 2,048 s,
    // would go back past the tick clock's start on a host up for less.)
    constexpr std::uint64_t short_round = 1000;
    running[2] = running[3] = detail::Ticks::now() - 4 * delay_round * short_round;
    push(&tasks[0]);
    f = q.find(0, 0, 0, short_round, *policy, order);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.rule, TakeRule::occupied);
    // The thief's delay has passed: in its order.
    running[2] = running[3] = detail::Ticks::now();
    push(&tasks[0]);
    EXPECT_FALSE(take(delay_round - 1));
    f = take(delay_round);
    ASSERT_TRUE(f);
    EXPECT_TRUE(f.across);
    EXPECT_EQ(f.rule, TakeRule::in_order);
}


// A worker of another node leaves a node's queued tasks to that node's
// idle workers, as many as they are (NodeQueues::leaves_to_own_node), a
// worker helping in a wait counting as idle for that wait's task's
// descendants; it takes them when that node's workers run tasks, help in
// a wait of another branch or are hosted seats outside the runtime, and
// the surplus over the idle ones. Its own node's queue it always takes from.
TEST(TasksNodeQueues, AThiefLeavesANodesTasksToItsIdleWorkers) {
    PolicyOptions o;
    o.steal_delay_tasks = 0;   // every node at once: only the rule under test holds a task back
    TwoNodesOfTwo f2{o};
    auto& [machine, policy, q, running, order, within] = f2;
    detail::Task a, b, c;
    auto push = [&](unsigned node, detail::Task* t) { q.queue_for(Destination::to_node(node)).queue.push(t); };
    auto take = [&] { return q.find(0, 0, 0, 0, *policy, order); };

    // Node 1's two workers idle: its two tasks are left to them.
    push(1, &a);
    push(1, &b);
    EXPECT_FALSE(take());
    // A third is more than they are: the thief takes the oldest.
    push(1, &c);
    detail::Found f = take();
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &a);
    EXPECT_TRUE(f.across);
    EXPECT_FALSE(take());
    // One of them runs a task, the other waits inside task w of depth 2:
    // neither takes b or c (depth 1, not w's descendants), so the thief does.
    detail::Task w, mid, other, other_mid, d;
    w.depth = other.depth = 2;
    running[2] = detail::Ticks::now();
    running[3] = detail::seat_helping(2);
    within[3] = &w;
    f = take();
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &b);
    // c a grandchild of w: left to the helper. A hosted seat outside the
    // runtime takes nothing.
    mid.depth = 3;
    mid.parent = &w;
    c.depth = 4;
    c.parent = &mid;
    EXPECT_FALSE(take());
    running[3] = detail::seat_takes_no_task;
    f = take();
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &c);
    // As deep as c but of another branch: the helper would not take it
    // (it could not, were it a lock that w holds), so the thief does.
    running[3] = detail::seat_helping(2);
    other_mid.depth = 3;
    other_mid.parent = &other;
    d.depth = 4;
    d.parent = &other_mid;
    push(1, &d);
    f = take();
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &d);
    // One idle again: a last task is left to it.
    running[3] = 0;
    push(1, &c);
    EXPECT_FALSE(take());
    ASSERT_EQ(q.queue_for(Destination::to_node(1)).queue.pop_front(), &c);
    // Its own node's queue the worker takes from whoever else is idle there.
    push(0, &a);
    f = take();
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &a);
    EXPECT_FALSE(f.across);
    // A helper or a seat that takes no task does not count as occupied.
    running[3] = detail::Ticks::now() - 1000;
    for (std::uint64_t mark : {detail::seat_takes_no_task, detail::seat_helping(4)}) {
        running[2] = mark;
        EXPECT_FALSE(q.occupied(1, 1));
    }
    running[2] = detail::Ticks::now() - 1000;
    EXPECT_TRUE(q.occupied(1, 1));
}

// Children kept with their spawner (NodeQueues::near_spawner): a child
// bound for its spawner's own node's queue waits in the spawner's kept
// queue, one bound elsewhere (another node, a worker's queue) where its
// policy put it. The spawner takes its kept children first, newest first;
// a helper only its wait's task's descendants. A node mate takes them
// oldest first, after the node's own queue; another node's thief under the rules of a node
// queue: left to the node's idle workers, taken when they are busy, by the
// occupied rule before its delay.
TEST(TasksNodeQueues, ChildrenKeptWithTheirSpawnerRunThereFirstAndStayReachable) {
    PolicyOptions o;
    o.steal_delay_tasks = 0;   // every node listed at once
    TwoNodesOfTwo f2{o};
    auto& [machine, policy, q, running, order, within] = f2;
    detail::QueueSlot& node0 = q.queue_for(Destination::to_node(0));
    detail::QueueSlot& node1 = q.queue_for(Destination::to_node(1));
    detail::QueueSlot& worker1 = q.queue_for(Destination::to_worker(1));
    detail::QueueSlot* kept0 = q.near_spawner(node0, 0);
    ASSERT_NE(kept0, &node0);
    EXPECT_EQ(kept0->node, node0.node);   // its pushes wake node 0's workers
    EXPECT_EQ(q.near_spawner(node0, 1), q.near_spawner(node0, 1));
    EXPECT_NE(q.near_spawner(node0, 1), kept0);
    EXPECT_EQ(q.near_spawner(node1, 0), &node1);       // another node's queue
    EXPECT_EQ(q.near_spawner(worker1, 0), &worker1);   // a placement on a worker
    EXPECT_EQ(q.near_spawner(node0, 9), &node0);       // no such worker

    std::vector<detail::Task> t(6);
    auto mine = [&](unsigned w, unsigned node, detail::StealOrder& ord, const detail::Task* within_task = nullptr) {
        return q.find(w, node, 0, 0, *policy, ord, within_task);
    };
    // The spawner: newest first, before its node's queue.
    kept0->queue.push(&t[0]);
    kept0->queue.push(&t[1]);
    node0.queue.push(&t[2]);
    detail::Found f = mine(0, 0, order);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &t[1]);
    EXPECT_FALSE(f.stolen);
    // Helping in a wait inside task w (depth 1): only its descendants, so
    // the kept t[0] (depth 1) stays and the node's t[2], w's child, is
    // taken; a child of another task as deep as w is not.
    detail::Task w, v;
    t[0].depth = 1;
    t[2].depth = 2;
    t[2].parent = &w;
    f = mine(0, 0, order, &w);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &t[2]) << "a kept child at the helper's own depth was taken";
    t[2].parent = &v;
    node0.queue.push(&t[2]);
    EXPECT_FALSE(mine(0, 0, order, &w)) << "another branch's child was taken in w's wait";
    ASSERT_EQ(node0.queue.pop_front(), &t[2]);
    t[2].parent = nullptr;
    // A node mate: the node's queue first, then the spawner's oldest.
    detail::StealOrder mate;
    policy->steal_order(1, 0, mate.round0);
    node0.queue.push(&t[3]);
    kept0->queue.push(&t[4]);
    f = mine(1, 0, mate);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &t[3]);
    f = mine(1, 0, mate);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &t[0]);
    EXPECT_TRUE(f.stolen);
    EXPECT_FALSE(f.across);
    EXPECT_EQ(kept0->queue.pop_front(), &t[4]);
    EXPECT_FALSE(q.any_queued(mate.round0));

    // Another node's thief (worker 2): node 0's worker 1 is idle, so one
    // kept child is left to it; with both of node 0's workers running
    // tasks the thief takes it.
    detail::StealOrder thief;
    policy->steal_order(2, 0, thief.round0);
    kept0->queue.push(&t[5]);
    EXPECT_TRUE(q.any_queued(thief.round0));
    running[0] = detail::Ticks::now();
    running[1] = 0;
    EXPECT_FALSE(mine(2, 1, thief));
    running[1] = detail::Ticks::now();
    f = mine(2, 1, thief);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &t[5]);
    EXPECT_TRUE(f.across);

    // Before the thief's delay: the occupied rule reaches kept children
    // too, once node 0's workers have run their tasks for longer.
    TwoNodesOfTwo late{PolicyOptions{}};
    for (const QueueListing& l : queue_listings(*late.policy, 2))
        if (l.first_round != 0 && l.queue.kind == QueueRef::Kind::node)
            late.order.later.push_back({l.queue.index, l.first_round, backlog_limit(2, l.first_round)});
    late.order.round0.clear();
    late.policy->steal_order(2, 0, late.order.round0);
    ASSERT_EQ(late.order.later.size(), 1u);
    // Rounds of a millisecond: the delay (512 rounds) outlasts a slow
    // (sanitized, preempted) step from now() to find(), and four delays
    // back stay after the tick clock's start.
    const auto short_round = static_cast<std::uint64_t>(1e-3 / detail::Ticks::seconds_per_tick());
    detail::QueueSlot* late_kept = late.q.near_spawner(late.q.queue_for(Destination::to_node(0)), 0);
    late_kept->queue.push(&t[1]);
    late.running[0] = late.running[1] = detail::Ticks::now();
    EXPECT_FALSE(late.q.find(2, 1, 0, short_round, *late.policy, late.order));
    late.running[0] = late.running[1] = detail::Ticks::now() - 4 * late.order.later[0].first_round * short_round;
    f = late.q.find(2, 1, 0, short_round, *late.policy, late.order);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.task, &t[1]);
    EXPECT_EQ(f.rule, TakeRule::occupied);
}

// pop_first_if takes the first task that the filter accepts, from either
// end, and leaves the others in order, wherever the match sits and
// however the ring has wrapped: the gap is closed from the nearer end
// (sync.hpp), both branches covered by every position of a 7-task queue.
TEST(TasksNodeQueues, TakingTheFirstAcceptedTaskLeavesTheOthersInOrder) {
    for (bool from_back : {false, true}) {
        for (int pick = 0; pick < 7; ++pick) {
            for (int wrap = 0; wrap < 64; wrap += 13) {
                detail::TaskQueue<int> q;
                std::vector<int> values(7 + static_cast<std::size_t>(wrap));
                for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<int>(k);
                // Push and pop `wrap` first, so that the head sits at `wrap`.
                for (int k = 0; k < wrap; ++k) q.push(&values[static_cast<std::size_t>(k)]);
                for (int k = 0; k < wrap; ++k) ASSERT_NE(q.pop_front(), nullptr);
                std::vector<int> expected;
                for (int k = 0; k < 7; ++k) {
                    q.push(&values[static_cast<std::size_t>(wrap + k)]);
                    if (k != pick) expected.push_back(wrap + k);
                }
                // Accept only the picked value: every task before it (in
                // the search order) is passed over.
                const int* got = q.pop_first_if(from_back, [&](const int* v) { return *v == wrap + pick; });
                ASSERT_NE(got, nullptr);
                EXPECT_EQ(*got, wrap + pick);
                ASSERT_EQ(q.size(), 6u);
                std::vector<int> rest;
                while (const int* v = q.pop_front()) rest.push_back(*v);
                EXPECT_EQ(rest, expected) << "from_back " << from_back << ", pick " << pick << ", wrap " << wrap;
            }
        }
    }
    // Nothing accepted: nothing taken, the order kept.
    detail::TaskQueue<int> q;
    int a = 1, b = 2;
    q.push(&a);
    q.push(&b);
    EXPECT_EQ(q.pop_first_if(false, [](const int*) { return false; }), nullptr);
    EXPECT_EQ(q.pop_front(), &a);
    EXPECT_EQ(q.pop_front(), &b);
}
}  // namespace
}  // namespace numaware::tasks
