// Unit tests of hosted runtimes (the caller's threads take the workers'
// seats, as libnumaware_omp.so's OpenMP threads do) and of dependency
// scopes (Dep::scope), on a 2-node synthetic machine, for every policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"
#include "support.hpp"

namespace numaware::tasks {
namespace {

using numaware::test::expect_error;

Machine two_nodes() { return Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10"); }

TeamLayout two_ranks() { return TeamLayout{{RankPlace{0, 0, 0}, RankPlace{1, 1, 1}}}; }


std::unique_ptr<Policy> policy(const std::string& name) {
    PolicyOptions o;
    o.window = 16;
    o.intersection = 4;
    return make_policy(name, o);
}

bool counter_reached(void* p) {
    auto* c = static_cast<std::pair<std::atomic<int>*, int>*>(p);
    return c->first->load() >= c->second;
}
bool flag_set(void* p) { return static_cast<std::atomic<bool>*>(p)->load(); }
bool all_done(void* p) { return static_cast<Runtime*>(p)->quiescent(); }

class HostedRuntime : public ::testing::TestWithParam<std::string> {
protected:
    Machine machine = two_nodes();
};

// Two threads of the test's own take the seats; tasks run only while they
// wait, and the chain's order holds.
TEST_P(HostedRuntime, SeatedThreadsRunTheTasksInDependencyOrder) {
    Runtime rt{machine, two_ranks(), policy(GetParam())};
    EXPECT_EQ(rt.workers(), 2u);
    std::vector<int> seen;
    int token = 0;
    std::atomic<int> ran{0};
    std::atomic<bool> spawned{false};
    std::thread helper([&] {
        rt.host(1);
        rt.run_until(flag_set, &spawned);
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        rt.unhost();
    });
    rt.host(0);
    for (int i = 0; i < 300; ++i)
        rt.spawn(
            [&seen, &ran, i] {
                seen.push_back(i);
                ran.fetch_add(1);
            },
            {inout(&token, sizeof token)});
    spawned.store(true);
    rt.wake();
    std::pair<std::atomic<int>*, int> c{&ran, 300};
    rt.run_until(counter_reached, &c, Runtime::Sleep::never);
    rt.run_until(all_done, &rt, Runtime::Sleep::never);
    rt.unhost();
    helper.join();
    ASSERT_EQ(seen.size(), 300u);
    for (int i = 0; i < 300; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
    EXPECT_TRUE(rt.quiescent());
    EXPECT_EQ(rt.report().tasks, 300u);
}

// unfinished() counts the tasks spawned and not completed: in a hosted
// runtime nothing runs until a seated thread waits, so 40 spawns (half of
// them chained by a dependency) are all unfinished, and none once waited
// for. libnumaware_omp.so's task throttle reads it.
TEST(HostedRuntimeCounts, UnfinishedCountsTasksUntilTheyComplete) {
    const Machine machine = two_nodes();
    for (const char* name : {"dfifo", "dep", "rip-dep"}) {
        Runtime rt{machine, two_ranks(), policy(name)};
        rt.host(0);
        EXPECT_EQ(rt.unfinished(), 0u) << name;
        int token = 0;
        std::atomic<int> ran{0};
        for (int i = 0; i < 40; ++i) {
            if (i % 2 == 0) rt.spawn([&ran] { ran.fetch_add(1); });
            else rt.spawn([&ran] { ran.fetch_add(1); }, {inout(&token, sizeof token)});
        }
        EXPECT_EQ(ran.load(), 0) << name;
        EXPECT_EQ(rt.unfinished(), 40u) << name;
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        EXPECT_EQ(ran.load(), 40) << name;
        EXPECT_EQ(rt.unfinished(), 0u) << name;
        rt.unhost();
    }
}

// A sleeping waiter wakes for a condition made true outside the tasks.
TEST_P(HostedRuntime, WakeReachesASleepingWaiter) {
    Runtime rt{machine, two_ranks(), policy(GetParam())};
    std::atomic<bool> go{false};
    std::thread waiter([&] {
        rt.host(1);
        rt.run_until(flag_set, &go);   // nothing to run: it sleeps
        rt.unhost();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    go.store(true);
    rt.wake();
    waiter.join();
    SUCCEED();
}

// A seat's queue has no thread while the seat is empty (in the OpenMP
// shim: its thread runs other code, or sleeps outside the runtime). Before
// any task has finished, the steal rounds have no length; a waiter on the
// other node must still take the task instead of waiting for ever. SA is
// the exception by design: its tasks run only on their hinted node.
struct Deadline {
    std::atomic<bool>* flag;
    std::chrono::steady_clock::time_point until;
};
bool flag_or_deadline(void* p) {
    auto* d = static_cast<Deadline*>(p);
    return d->flag->load() || std::chrono::steady_clock::now() >= d->until;
}

TEST_P(HostedRuntime, AWaiterTakesTasksQueuedForAnEmptySeatBeforeAnyTaskFinished) {
    const bool hints_bind = GetParam() == "sa";
    Runtime rt{machine, two_ranks(), policy(GetParam())};
    int x = 0;
    std::atomic<bool> ran{false};
    rt.host(1);   // node 1's seat only; seat 0 (node 0) stays empty
    // Task 0 goes to node 0 under every node-queue policy: LQ and SA by
    // task id round-robin or hint, DEP at random, DFIFO to worker 0.
    rt.spawn_on(0, [&] { ran.store(true); }, {out(&x, sizeof x)});
    Deadline d{&ran, std::chrono::steady_clock::now() + std::chrono::milliseconds(hints_bind ? 200 : 10000)};
    rt.run_until(flag_or_deadline, &d);   // may sleep: it must not while the task is queued
    if (hints_bind) {
        EXPECT_FALSE(ran.load()) << "SA ran a task hinted to node 0 on node 1";
        std::thread seat0([&] {
            rt.host(0);
            rt.run_until(flag_set, &ran);
            rt.unhost();
        });
        seat0.join();
    }
    EXPECT_TRUE(ran.load());
    rt.run_until(all_done, &rt, Runtime::Sleep::never);
    rt.unhost();
}

// Tasks of different scopes never depend on each other: a task of scope B
// naming the address that an unfinished task of scope A writes runs at once.
TEST_P(HostedRuntime, ScopesSeparateDependencies) {
    Runtime rt{machine, two_ranks(), policy(GetParam())};
    const std::uint16_t a = rt.open_scope(), b = rt.open_scope();
    EXPECT_NE(a, b);
    EXPECT_NE(a, 0);
    int x = 0;
    std::atomic<bool> release{false}, other_ran{false}, same_ran{false}, writer_started{false};
    // A few finished tasks first: the node-queue policies steal across
    // nodes only after a delay measured in mean task durations.
    rt.host(0);
    for (int i = 0; i < 8; ++i) rt.spawn_on(0, [] {});
    rt.run_until(all_done, &rt, Runtime::Sleep::never);
    rt.unhost();
    // The writer runs on the helper, the only seated thread when it is
    // spawned, and holds its worker until released.
    std::thread helper([&] {
        rt.host(1);
        rt.spawn_on(
            1,
            [&] {
                writer_started.store(true);
                while (!release.load()) std::this_thread::yield();
            },
            {Dep{&x, sizeof x, AccessMode::inout, a}});
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        rt.unhost();
    });
    while (!writer_started.load()) std::this_thread::yield();
    rt.host(0);
    // On node 0 (SA takes tasks only from their hinted node).
    rt.spawn_on(0, [&] { same_ran.store(true); }, {Dep{&x, sizeof x, AccessMode::in, a}});
    rt.spawn_on(0, [&] { other_ran.store(true); }, {Dep{&x, sizeof x, AccessMode::in, b}});
    rt.run_until(flag_set, &other_ran, Runtime::Sleep::never);   // would never hold if scope b waited for scope a's writer
    EXPECT_FALSE(same_ran.load());        // its own scope's reader still waits
    release.store(true);
    rt.run_until(all_done, &rt, Runtime::Sleep::never);
    EXPECT_TRUE(same_ran.load());
    rt.close_scope(a);
    rt.close_scope(b);
    EXPECT_EQ(rt.open_scope(), a);   // reused, oldest first
    rt.unhost();
    helper.join();
}

// Both seats spawn at once, from outside tasks and from inside them, tasks
// with and without dependencies: a task without dependencies of a policy
// that places concurrently takes no lock (Executor::submit), so this is
// where two spawners race for ids and queues. Every task runs once, every
// id is given once, and the runtime is quiescent with every task counted.
TEST_P(HostedRuntime, SeatsSpawningAtOnceGetDistinctIdsAndEveryTaskRunsOnce) {
    Runtime rt{machine, two_ranks(), policy(GetParam())};
    constexpr int per_seat = 3000;   // each spawns a child: 2 tasks per spawn
    std::atomic<int> ran{0};
    std::atomic<int> started{0};
    int tokens[2] = {0, 0};
    std::vector<TaskId> ids[2];
    const auto spawner = [&](unsigned seat) {
        rt.host(seat);
        started.fetch_add(1);
        while (started.load() < 2) std::this_thread::yield();
        ids[seat].reserve(per_seat);
        for (int i = 0; i < per_seat; ++i) {
            const auto body = [&rt, &ran] {
                ran.fetch_add(1);
                rt.spawn([&ran] { ran.fetch_add(1); });
                rt.taskwait();
            };
            if (i % 10 == 0) ids[seat].push_back(rt.spawn(body, {inout(&tokens[seat], sizeof(int))}));
            else ids[seat].push_back(rt.spawn(body));
        }
        std::pair<std::atomic<int>*, int> c{&ran, 4 * per_seat};
        rt.run_until(counter_reached, &c, Runtime::Sleep::never);
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        rt.unhost();
    };
    std::thread other(spawner, 1u);
    spawner(0);
    other.join();
    EXPECT_EQ(ran.load(), 4 * per_seat);
    std::vector<TaskId> all(ids[0]);
    all.insert(all.end(), ids[1].begin(), ids[1].end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "an id was given twice";
    EXPECT_EQ(all.size(), static_cast<std::size_t>(2 * per_seat));
    EXPECT_TRUE(rt.quiescent());
    EXPECT_EQ(rt.unfinished(), 0u);
    EXPECT_EQ(rt.report().tasks, static_cast<std::uint64_t>(4 * per_seat));
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, HostedRuntime, ::testing::ValuesIn(numaware::test::all_policy_names()),
                         numaware::test::param_name);

// RIP's windows in a hosted runtime. One thread submits (the OpenMP
// `single` that spawns); the others wait at the barrier meanwhile and run
// dry. A waiter that cut the window whenever its search failed made RIP-DEP
// partition window 0 in fragments and then fall back to DEP: the omp
// locality check on 8 emulated nodes measured RIP-DEP moving as many
// cross-node bytes as DEP in one run of three.
struct PartitionSizes : Observer {
    std::mutex mutex;
    std::vector<std::size_t> sizes;
    void on_partition_done(std::size_t tasks, double, double) override {
        std::lock_guard g(mutex);
        sizes.push_back(tasks);
    }
    std::vector<std::size_t> get() {
        std::lock_guard g(mutex);
        return sizes;
    }
};

// Two sweeps over 16 blocks: the first writes each block, the second
// updates it. Window 0 (16 tasks here) ends where the second sweep starts.
// A pause between spawns (far below held_stall) gives a waiter that would
// cut the window time to do it.
void spawn_two_sweeps(Runtime& rt, std::vector<double>& blocks, std::atomic<int>& ran) {
    for (int sweep = 0; sweep < 2; ++sweep)
        for (double& b : blocks) {
            rt.spawn([&ran] { ran.fetch_add(1); }, {sweep == 0 ? out(&b, sizeof b) : inout(&b, sizeof b)});
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
}

// Window 0's size when a seated waiter (asleep in run_until() or searching
// all along) waits while the test's thread spawns two sweeps into `rt`.
std::size_t first_window(Runtime& rt, PartitionSizes& seen, Runtime::Sleep waiter_sleeps) {
    std::vector<double> blocks(16);
    std::atomic<int> ran{0};
    std::atomic<bool> seated{false};
    std::pair<std::atomic<int>*, int> all{&ran, 32};
    std::thread waiter([&] {
        rt.host(1);
        seated.store(true);
        rt.run_until(counter_reached, &all, waiter_sleeps);
        rt.unhost();
    });
    rt.host(0);
    while (!seated.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));   // searching, or asleep
    spawn_two_sweeps(rt, blocks, ran);
    rt.run_until(counter_reached, &all, Runtime::Sleep::never);
    rt.unhost();
    waiter.join();
    const std::vector<std::size_t> sizes = seen.get();
    return sizes.empty() ? 0 : sizes.front();
}

TEST(HostedRuntimeWindows, AWaiterLeavesTheWindowAnotherThreadIsFillingToBeFilled) {
    PartitionSizes seen;
    RuntimeOptions o;
    o.observer = &seen;
    o.held_stall = std::chrono::seconds(60);   // only the submitter may cut
    Runtime rt{two_nodes(), two_ranks(), policy("rip-dep"), o};
    EXPECT_EQ(first_window(rt, seen, Runtime::Sleep::never), 16u)
        << "window 0 was cut while its submitter was still filling it";
}

// A submitter that stops before its window is full and does not wait (it
// computes, or spins on a flag that a held task sets) must not leave the
// held tasks to sleep: a sleeping waiter is woken by the first held task
// and cuts the window once no task has been submitted for held_stall.
TEST(HostedRuntimeWindows, AWaiterCutsAWindowItsSubmitterLeftUnfilled) {
    RuntimeOptions o;
    o.held_stall = std::chrono::milliseconds(2);
    Runtime rt{two_nodes(), two_ranks(), policy("rip-dep"), o};
    std::vector<double> blocks(3);
    std::atomic<int> ran{0};
    std::pair<std::atomic<int>*, int> three{&ran, 3};
    std::thread waiter([&] {
        rt.host(1);
        rt.run_until(counter_reached, &three);   // asleep before anything is spawned
        rt.unhost();
    });
    rt.host(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (double& b : blocks) rt.spawn([&ran] { ran.fetch_add(1); }, {out(&b, sizeof b)});
    // Not a wait of the runtime's: only the waiter can run the tasks.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (ran.load() < 3 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(ran.load(), 3) << "the held tasks stayed held while the submitter did not wait";
    rt.run_until(all_done, &rt, Runtime::Sleep::never);
    rt.unhost();
    waiter.join();
}

// RIP-DEP whose first submission takes `first` (on_submit() runs under the
// scheduler lock, as the tracker's and the page homes' first chunks do: in
// the emulated 8-node guest that took 18-140 ms).
class SlowFirstSubmission final : public Policy {
public:
    explicit SlowFirstSubmission(std::chrono::milliseconds first) : first_(first), rip_(policy("rip-dep")) {}
    std::string_view name() const override { return "slow-first-rip-dep"; }
    void attach(const PolicyContext& ctx) override { rip_->attach(ctx); }
    void on_submit(const TaskView& t) override {
        if (!slowed_) {
            slowed_ = true;
            std::this_thread::sleep_for(first_);
        }
        rip_->on_submit(t);
    }
    bool uses_submissions() const override { return rip_->uses_submissions(); }
    Destination place(const TaskView& t) override { return rip_->place(t); }
    void steal_order(unsigned worker, std::uint64_t round, std::vector<QueueRef>& order) const override {
        rip_->steal_order(worker, round, order);
    }
    std::unique_ptr<PartitionJob> take_job() override { return rip_->take_job(); }
    void finish_job(std::unique_ptr<PartitionJob> job, std::vector<Released>& released) override {
        rip_->finish_job(std::move(job), released);
    }
    bool flush(std::vector<Released>& released) override { return rip_->flush(released); }

private:
    std::chrono::milliseconds first_;
    bool slowed_ = false;   // under the scheduler lock
    std::unique_ptr<Policy> rip_;
};

// The stall that lets a waiter cut a window counts from the end of the last
// submission: one slower than held_stall is the producer at work, not
// stopped. Counted from its start, the waiter that the first held task
// wakes found the stall already over and cut window 0 after that one task
// (the omp locality check on 8 emulated nodes: RIP-DEP's cross-node
// dependences 279-322 in the runs cut so, 96 in the others).
TEST(HostedRuntimeWindows, ASlowSubmissionIsNotAStall) {
    PartitionSizes seen;
    RuntimeOptions o;
    o.observer = &seen;
    o.held_stall = std::chrono::milliseconds(200);
    Runtime rt{two_nodes(), two_ranks(), std::make_unique<SlowFirstSubmission>(std::chrono::milliseconds(400)), o};
    EXPECT_EQ(first_window(rt, seen, Runtime::Sleep::allowed), 16u)
        << "window 0 was cut after a slow submission, as if its producer had stopped";
}

// DEP whose place() can be made to wait, holding the scheduler lock (the
// executor calls place() under it), until the test lets it go or for at
// most `longest`.
class GatedDep final : public Policy {
public:
    struct Gate {
        std::atomic<bool> armed{false};
        std::atomic<bool> inside{false};
        std::atomic<bool> open{false};
        std::chrono::milliseconds longest{200};
    };
    explicit GatedDep(Gate& gate) : gate_(gate), dep_(make_policy("dep")) {}
    std::string_view name() const override { return "gated-dep"; }
    void attach(const PolicyContext& ctx) override { dep_->attach(ctx); }
    void on_submit(const TaskView& t) override { dep_->on_submit(t); }
    bool uses_submissions() const override { return dep_->uses_submissions(); }
    Destination place(const TaskView& t) override {
        if (gate_.armed.exchange(false)) {
            gate_.inside.store(true);
            const auto until = std::chrono::steady_clock::now() + gate_.longest;
            while (!gate_.open.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        }
        return dep_->place(t);
    }
    void steal_order(unsigned worker, std::uint64_t round, std::vector<QueueRef>& order) const override {
        dep_->steal_order(worker, round, order);
    }

private:
    Gate& gate_;
    std::unique_ptr<Policy> dep_;
};

// A thread that leaves run_until() may leave its seat empty for as long as
// it likes (an OpenMP thread past its barrier), so it leaves no completion
// behind: a task it ran while another thread held the scheduler lock is
// completed before run_until() returns. (A deferred one stayed unfinished
// until the thread came back, and a wait elsewhere for quiescence spun on:
// the ASan build hung in AWaiterCutsAWindowItsSubmitterLeftUnfilled.)
// Here run_until() waits for the lock, which the gate gives back after
// 200 ms; a waiter that left at once would open it.
TEST(HostedRuntime, LeavingRunUntilCompletesTheTasksItRan) {
    GatedDep::Gate gate;
    Runtime rt{two_nodes(), two_ranks(), std::make_unique<GatedDep>(gate)};
    double x = 0, y = 0;
    std::atomic<int> ran{0};
    std::pair<std::atomic<int>*, int> one{&ran, 1};
    std::atomic<bool> left{false}, checked{false};
    rt.host(0);
    rt.spawn([&ran] { ran.fetch_add(1); }, {out(&x, sizeof x)});   // A: ready, queued
    std::thread waiter([&] {
        rt.host(1);
        while (!gate.inside.load()) std::this_thread::yield();   // B's spawn holds the lock
        rt.run_until(counter_reached, &one, Runtime::Sleep::never);   // runs A; its completion finds the lock held
        left.store(true);
        gate.open.store(true);
        while (!checked.load()) std::this_thread::yield();
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        rt.unhost();
    });
    gate.armed.store(true);
    rt.spawn([&ran] { ran.fetch_add(1); }, {out(&y, sizeof y)});   // B: waits in place() meanwhile
    while (!left.load()) std::this_thread::yield();
    // Nobody runs tasks now: A is finished, B is not.
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(rt.unfinished(), 1u) << "the task the waiter ran is still unfinished after it left run_until";
    checked.store(true);
    rt.run_until(all_done, &rt, Runtime::Sleep::never);
    rt.unhost();
    waiter.join();
    EXPECT_EQ(ran.load(), 2);
}

// Nested parallelism (the OpenMP shim's nested teams): a thread inside a
// task of one runtime sets its seat aside, works in another runtime, and
// takes the seat back with its task still current.
TEST(HostedRuntime, ASeatSetAsideInsideATaskComesBackWithItsTask) {
    EXPECT_FALSE(Runtime::set_seat_aside()) << "a thread without a seat sets nothing aside";
    Runtime::restore_seat(Runtime::SetAside{});   // nothing to restore: no-op
    Runtime outer{two_nodes(), two_ranks(), make_policy("dfifo")};
    Runtime inner{two_nodes(), TeamLayout{{RankPlace{0, 1, 1}}}, make_policy("dep")};
    std::vector<int> order;
    bool restored_in_task = false, refused_while_seated = false;
    outer.host(0);
    outer.spawn([&] {
        const Runtime::SetAside aside = Runtime::set_seat_aside();
        if (!aside) return;
        inner.host(0);
        double v = 0;
        for (int k = 0; k < 5; ++k) inner.spawn([&order, k] { order.push_back(k); }, {inout(&v, sizeof v)});
        inner.run_until(all_done, &inner, Runtime::Sleep::never);
        try {
            Runtime::restore_seat(aside);   // still seated in `inner`
        } catch (const Error& e) {
            refused_while_seated = std::string(e.what()).find("restore_seat") != std::string::npos;
        }
        inner.unhost();
        Runtime::restore_seat(aside);
        // Back inside the outer task: leaving the seat now is refused.
        try {
            outer.unhost();
        } catch (const Error& e) {
            restored_in_task = std::string(e.what()).find("inside a task") != std::string::npos;
        }
    });
    outer.run_until(all_done, &outer, Runtime::Sleep::never);
    outer.unhost();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(refused_while_seated);
    EXPECT_TRUE(restored_in_task) << "the outer task was not current again after restore_seat";
}

// help(): a seated thread runs ready tasks itself only where its policy
// holds no window; it stops at max_tasks, and at the first search that
// finds none (a task waiting for a predecessor is not ready; under the
// node-queue policies a task queued on the other node is not the helper's
// to take before its steal delay).
TEST(HostedRuntime, ASpawnerHelpsWhereItsPolicyHoldsNoWindow) {
    const Machine machine = two_nodes();   // 2 CPUs
    const TeamLayout four{{RankPlace{0, 0, 0}, RankPlace{1, 1, 1}, RankPlace{2, 0, 0}, RankPlace{3, 1, 1}}};
    {   // DFIFO: one queue for all.
        Runtime rt{machine, four, policy("dfifo")};
        rt.host(0);
        std::atomic<int> ran{0};
        for (int i = 0; i < 10; ++i) rt.spawn([&ran] { ran.fetch_add(1); });
        EXPECT_EQ(rt.help(4), 4u);
        EXPECT_EQ(ran.load(), 4);
        EXPECT_EQ(rt.help(0), 0u);
        EXPECT_EQ(rt.help(100), 6u) << "it stops when none is left";
        EXPECT_EQ(ran.load(), 10);
        EXPECT_EQ(rt.unfinished(), 0u) << "the tasks it ran are completed when it returns";
        // A chain: each task is ready once the one before has run.
        double x = 0;
        std::vector<int> order;
        for (int i = 0; i < 3; ++i) rt.spawn([&order, i] { order.push_back(i); }, {inout(&x, sizeof x)});
        EXPECT_EQ(rt.help(100), 3u);
        EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
        rt.unhost();
    }
    for (const char* name : {"lq", "dep"}) {   // what it ran is what it counts, and its node's tasks
        SCOPED_TRACE(name);
        Runtime rt{machine, four, policy(name)};
        rt.host(0);
        std::atomic<int> ran{0};
        for (int i = 0; i < 10; ++i) rt.spawn([&ran] { ran.fetch_add(1); });
        const std::size_t first = rt.help(100);
        EXPECT_GT(first, 0u) << "worker 0's node has tasks queued";
        EXPECT_EQ(static_cast<std::size_t>(ran.load()), first);
        EXPECT_EQ(rt.unfinished(), 10u - first);
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        EXPECT_EQ(ran.load(), 10);
        rt.unhost();
    }
    {   // RIP holds a window that the spawner's wait would cut.
        Runtime rt{machine, four, policy("rip-dep")};
        rt.host(0);
        std::atomic<int> ran{0};
        double x = 0;
        for (int i = 0; i < 4; ++i) rt.spawn([&ran] { ran.fetch_add(1); }, {inout(&x, sizeof x)});
        EXPECT_EQ(rt.help(100), 0u);
        EXPECT_EQ(ran.load(), 0);
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        EXPECT_EQ(ran.load(), 4);
        rt.unhost();
    }
    {   // As many workers as CPUs: it helps too (every thread may be
        // creating tasks, and then nobody else runs them).
        Runtime rt{machine, two_ranks(), policy("dfifo")};
        rt.host(0);
        std::atomic<int> ran{0};
        for (int i = 0; i < 4; ++i) rt.spawn([&ran] { ran.fetch_add(1); });
        EXPECT_EQ(rt.help(100), 4u);
        EXPECT_EQ(ran.load(), 4);
        rt.run_until(all_done, &rt, Runtime::Sleep::never);
        rt.unhost();
    }
}

TEST(HostedRuntimeBadInput, IsRejectedNamingTheLimit) {
    Machine machine = two_nodes();
    expect_error([&] { Runtime rt(machine, TeamLayout{}, make_policy("dfifo")); }, "layout", "no ranks");
    expect_error([&] { Runtime rt(machine, TeamLayout{{RankPlace{0, 0, 7}}}, make_policy("dfifo")); }, "layout",
                 "node 7");
    expect_error([&] { Runtime rt(machine, two_ranks(), nullptr); }, "policy", "null");
    Runtime rt{machine, two_ranks(), make_policy("dfifo")};
    expect_error(
        [&] {
            RuntimeOptions o;
            o.held_stall = std::chrono::microseconds(-1);
            Runtime r(machine, two_ranks(), make_policy("rip-dep"), o);
        },
        "held_stall", "negative");
    expect_error([&] { rt.host(2); }, "worker", "0 to 1");
    expect_error([&] { rt.run_until(flag_set, nullptr); }, "run_until", "host() first");
    expect_error([&] { rt.help(1); }, "help", "host() first");
    expect_error([&] { rt.close_scope(9); }, "scope", "never opened");
    rt.host(0);
    const std::uint16_t s = rt.open_scope();
    const auto* high = reinterpret_cast<const void*>(std::uintptr_t{1} << 48);
    expect_error([&] { rt.spawn([] {}, {Dep{high, 8, AccessMode::in, s}}); }, "deps[0]", "2^48");
    // The failed spawn left nothing behind.
    EXPECT_TRUE(rt.quiescent());
    rt.unhost();
    Team team{machine, TeamMapping{.threads = 1}};
    Runtime threaded{team, "dfifo"};
    expect_error([&] { threaded.host(0); }, "host", "team's threads");
    expect_error([&] { threaded.help(1); }, "help", "team's threads");
}

}  // namespace
}  // namespace numaware::tasks
