// Unit tests of the task executor (numaware/tasks.hpp), run for every
// built-in policy on a 2-node synthetic team (rank 0 on CPU 0 / node 0,
// rank 1 on CPU 1 / node 1).
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
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

using numaware::test::contains;
using numaware::test::expect_error;

Machine two_nodes() { return Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10"); }


class TasksRuntime : public ::testing::TestWithParam<std::string> {
protected:
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    PolicyOptions small_windows() const {
        PolicyOptions o;
        o.window = 16;
        o.intersection = 4;
        return o;
    }
};

TEST_P(TasksRuntime, ChainRunsInOrder) {
    Runtime rt{team, GetParam(), small_windows()};
    std::vector<int> seen;
    int token = 0;
    for (int i = 0; i < 200; ++i) rt.spawn([&seen, i] { seen.push_back(i); }, {inout(&token, sizeof token)});
    rt.taskwait();
    ASSERT_EQ(seen.size(), 200u);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
    EXPECT_EQ(rt.report().tasks, 200u);
}

// A recursive program waits at every level (fib with a dependency on each
// result, then a taskwait): every policy computes it, and RIP partitions
// no more windows than fill up, plus window 0, not one per taskwait (a
// window cut short by a wait after window 0 is placed by DEP, and tasks
// are held only while a job is out).
struct JobCount : Observer {
    std::atomic<int> jobs{0};
    void on_partition_done(std::size_t, double, double) override { jobs.fetch_add(1); }
};

long fib_with_deps(Runtime& rt, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    rt.spawn([&rt, &x, n] { x = fib_with_deps(rt, n - 1); }, {out(&x, sizeof x)});
    rt.spawn([&rt, &y, n] { y = fib_with_deps(rt, n - 2); }, {out(&y, sizeof y)});
    rt.taskwait();
    return x + y;
}

TEST_P(TasksRuntime, RecursiveTasksWithDependenciesWaitAtEveryLevel) {
    JobCount count;
    RuntimeOptions o;
    o.observer = &count;
    const PolicyOptions windows = small_windows();
    Runtime rt{team, make_policy(GetParam(), windows), o};
    long result = 0;
    rt.spawn([&] { result = fib_with_deps(rt, 14); });
    rt.taskwait();
    EXPECT_EQ(result, 377);
    const std::uint64_t tasks = rt.report().tasks;
    EXPECT_EQ(tasks, 1219u);   // the outer task and two per call of fib(n >= 2)
    EXPECT_LE(static_cast<std::uint64_t>(count.jobs.load()), tasks / windows.window + 1)
        << "(" << tasks << " tasks, windows of " << windows.window << ")";
}

// A worker waiting inside a task runs only that task's descendants
// (OpenMP's scheduling constraint for tied tasks): tasks that hold a lock
// across their taskwait, beside other branches' tasks that take it, never
// find their own thread holding it. Running any deeper task there took
// the lock on the thread of the suspended task that held it (under DFIFO:
// a deadlock in the OpenMP shim, tests/omp/tasks_recursive.c).
TEST_P(TasksRuntime, AWaiterRunsOnlyItsOwnDescendants) {
    Runtime rt{team, GetParam(), small_windows()};
    std::atomic<std::thread::id> owner{};
    std::atomic<int> own_thread_held{0}, taken{0};
    auto acquire = [&] {
        const std::thread::id me = std::this_thread::get_id();
        for (std::thread::id none{}; !owner.compare_exchange_weak(none, me); none = std::thread::id{}) {
            if (none == me) {   // held by a task suspended on this very thread
                own_thread_held.fetch_add(1);
                return false;
            }
            std::this_thread::yield();
        }
        return true;
    };
    rt.spawn([&] {
        for (int i = 0; i < 400; ++i) {
            if (i % 2 == 0)
                rt.spawn([&] {
                    if (!acquire()) return;
                    rt.spawn([] {
                        volatile int x = 0;
                        for (int k = 0; k < 2000; ++k) x = x + k;
                    });
                    rt.taskwait();
                    taken.fetch_add(1);
                    owner.store(std::thread::id{});
                });
            else
                rt.spawn([&] {
                    rt.spawn([&] {
                        if (!acquire()) return;
                        taken.fetch_add(1);
                        owner.store(std::thread::id{});
                    });
                    rt.taskwait();
                });
        }
    });
    rt.taskwait();
    EXPECT_EQ(own_thread_held.load(), 0) << "a waiter ran another branch's task";
    EXPECT_EQ(taken.load(), 400);
}

TEST_P(TasksRuntime, DiamondSeesBothBranches) {
    Runtime rt{team, GetParam(), small_windows()};
    for (int round = 0; round < 20; ++round) {
        long x = 0, y = 0, z = 0, w = 0;
        rt.spawn([&] { x = 3; }, {out(&x, sizeof x)});
        rt.spawn([&] { y = x * 2; }, {in(&x, sizeof x), out(&y, sizeof y)});
        rt.spawn([&] { z = x + 10; }, {in(&x, sizeof x), out(&z, sizeof z)});
        rt.spawn([&] { w = y * 100 + z; }, {in(&y, sizeof y), in(&z, sizeof z), out(&w, sizeof w)});
        rt.taskwait();
        EXPECT_EQ(w, 613);
    }
}

TEST_P(TasksRuntime, IndependentTasksRunExactlyOnce) {
    Runtime rt{team, GetParam()};
    constexpr int n = 5000;
    std::vector<std::atomic<int>> hits(n);
    for (int i = 0; i < n; ++i) rt.spawn([&hits, i] { hits[static_cast<std::size_t>(i)].fetch_add(1); });
    rt.barrier();
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << "task " << i;
    const RunReport r = rt.report();
    EXPECT_EQ(r.tasks, static_cast<std::uint64_t>(n));
    ASSERT_EQ(r.nodes, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(r.tasks_per_node[0] + r.tasks_per_node[1], static_cast<std::uint64_t>(n));
    EXPECT_GT(r.makespan_s, 0.0);
    EXPECT_GE(r.load_balance_pct, 0.0);
    EXPECT_LE(r.load_balance_pct, 100.0 + 1e-9);
    EXPECT_EQ(r.policy, GetParam());
}

TEST_P(TasksRuntime, WavefrontComputesBinomials) {
    Runtime rt{team, GetParam(), small_windows()};
    constexpr int n = 24;
    std::vector<std::uint64_t> cell(n * n, 0);
    auto at = [&](int i, int j) -> std::uint64_t& { return cell[static_cast<std::size_t>(i * n + j)]; };
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            std::uint64_t* c = &at(i, j);
            const std::uint64_t* up = i > 0 ? &at(i - 1, j) : nullptr;
            const std::uint64_t* left = j > 0 ? &at(i, j - 1) : nullptr;
            auto body = [c, up, left] { *c = (up || left) ? (up ? *up : 0) + (left ? *left : 0) : 1; };
            if (up && left)
                rt.spawn(body, {in(up, 8), in(left, 8), out(c, 8)});
            else if (up)
                rt.spawn(body, {in(up, 8), out(c, 8)});
            else if (left)
                rt.spawn(body, {in(left, 8), out(c, 8)});
            else
                rt.spawn(body, {out(c, 8)});
        }
    rt.taskwait();
    // cell(i, j) = C(i + j, i)
    std::vector<std::uint64_t> expect(n * n, 1);
    for (int i = 1; i < n; ++i)
        for (int j = 1; j < n; ++j)
            expect[static_cast<std::size_t>(i * n + j)] =
                expect[static_cast<std::size_t>((i - 1) * n + j)] + expect[static_cast<std::size_t>(i * n + j - 1)];
    EXPECT_EQ(cell, expect);
    EXPECT_EQ(rt.report().dep_bytes, static_cast<std::uint64_t>((3 * (n - 1) * (n - 1) + 2 * 2 * (n - 1) + 1) * 8));
}

int fib(Runtime& rt, int k) {
    if (k < 2) return k;
    int a = 0, b = 0;
    rt.spawn([&] { a = fib(rt, k - 1); });
    rt.spawn([&] { b = fib(rt, k - 2); });
    rt.taskwait();
    return a + b;
}

// Tens of thousands of small regions: the tracker forgets the idle ones
// in batches and the region homes drop their entries (kernel homes, the
// default) and reuse them for the next phase's regions, while other tasks
// run; results, dependency bytes and the cross-node count stay right.
TEST_P(TasksRuntime, RegionsForgottenOnTheWayKeepResultsAndBytesRight) {
    Runtime rt{team, GetParam(), small_windows()};
    constexpr std::size_t n = 12000;
    std::vector<double> a(n), b(n), c(n);
    for (std::size_t i = 0; i < n; ++i) rt.spawn([&a, i] { a[i] = static_cast<double>(i); }, {out(&a[i], sizeof(double))});
    for (std::size_t i = 0; i < n; ++i)
        rt.spawn([&a, &b, i] { b[i] = 2 * a[i]; }, {in(&a[i], sizeof(double)), out(&b[i], sizeof(double))});
    rt.taskwait();
    for (std::size_t i = 0; i < n; ++i)
        rt.spawn([&b, &c, i] { c[i] = b[i] + 1; }, {in(&b[i], sizeof(double)), out(&c[i], sizeof(double))});
    rt.taskwait();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 2.0 * static_cast<double>(i) + 1) << i;
    const RunReport r = rt.report();
    EXPECT_EQ(r.tasks, 3 * n);
    EXPECT_EQ(r.dep_bytes, 5 * n * sizeof(double));
    EXPECT_LE(r.cross_node_bytes, r.dep_bytes);
}

TEST_P(TasksRuntime, NestedSpawnAndTaskwaitInsideTasks) {
    Runtime rt{team, GetParam(), small_windows()};
    int result = -1;
    rt.spawn([&] { result = fib(rt, 13); });
    rt.taskwait();
    EXPECT_EQ(result, 233);

    // Children with dependencies between them, waited for by their parent.
    std::vector<int> order;
    bool saw_all = false;
    rt.spawn([&] {
        int token = 0;
        for (int i = 0; i < 30; ++i) rt.spawn([&order, i] { order.push_back(i); }, {inout(&token, sizeof token)});
        rt.taskwait();
        saw_all = order.size() == 30;
    });
    rt.taskwait();
    EXPECT_TRUE(saw_all);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST_P(TasksRuntime, ParentsWaitForManyChildrenRunOnBothWorkers) {
    // Children finishing on the other worker drop their parent's reference
    // in batches; every wait must still see all of them.
    Runtime rt{team, GetParam(), small_windows()};
    std::atomic<int> leaves{0};
    std::vector<int> seen(4, -1);
    for (int p = 0; p < 4; ++p)
        rt.spawn([&, p] {
            std::atomic<int> mine{0};
            for (int i = 0; i < 200; ++i) rt.spawn([&] {
                mine.fetch_add(1);
                leaves.fetch_add(1);
            });
            rt.taskwait();
            seen[static_cast<std::size_t>(p)] = mine.load();
        });
    rt.taskwait();
    EXPECT_EQ(leaves.load(), 800);
    for (int v : seen) EXPECT_EQ(v, 200);
    // Grandchildren: the middle tasks do not wait, the top one does.
    std::atomic<int> deep{0};
    bool top_saw_all = false;
    rt.spawn([&] {
        for (int i = 0; i < 10; ++i)
            rt.spawn([&] {
                for (int j = 0; j < 30; ++j) rt.spawn([&] { deep.fetch_add(1); });
            });
        rt.taskwait();
        top_saw_all = deep.load() == 300;
    });
    rt.taskwait();
    EXPECT_TRUE(top_saw_all);
    rt.barrier();
    EXPECT_EQ(rt.report().tasks, 804u + 1u + 10u + 300u);
}

// A parent counts its children without an atomic operation per spawn
// (Task::children); finishing children count down a separate number. Every
// child may finish before the body ends, or before the next spawn: the
// parent must stay alive and its waits must count exactly the children
// spawned so far.
TEST_P(TasksRuntime, ChildrenThatFinishBeforeTheNextSpawnKeepTheParentAndItsWaitsRight) {
    Runtime rt{team, GetParam(), small_windows()};
    std::atomic<int> done{0};
    std::vector<int> after_wait;
    rt.spawn([&] {
        for (int round = 1; round <= 40; ++round) {
            const int before = done.load();
            for (int i = 0; i < round % 5; ++i) rt.spawn([&] { done.fetch_add(1); });
            // Every child of this round finishes while the body still runs;
            // nothing is waited for yet (a spin, not a wait: the other worker
            // takes the children). RIP's policies hold them until the wait
            // below, so the spin gives up after a while.
            const auto t0 = std::chrono::steady_clock::now();
            while (done.load() < before + round % 5 &&
                   std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50))
                std::this_thread::yield();
            rt.spawn([&] { done.fetch_add(1); });
            rt.taskwait();
            after_wait.push_back(done.load() - before);
        }
    });
    rt.taskwait();
    ASSERT_EQ(after_wait.size(), 40u);
    for (std::size_t r = 0; r < 40; ++r) EXPECT_EQ(after_wait[r], static_cast<int>((r + 1) % 5) + 1) << "round " << r + 1;
    rt.barrier();
    EXPECT_EQ(rt.report().tasks, 1u + static_cast<std::uint64_t>(done.load()));
}

// A worker that runs children of a task batches their releases of the
// parent; the batch must not outlive the work. quiescent() turns true with no
// wait under way, soon after the last task, and a wait that starts later
// ends. (A version that kept the batch while the worker only spun and no
// wait inside the runtime was under way left an outside taskwait after
// nested spawns waiting for the worker's whole spin phase: 32 to 220-400 us;
// BENCHMARKS.md, 2026-12-03.)
// (RIP's policies hold a window's tasks until it fills or a wait comes,
// HeldTasksAreFlushedByWaits: their last tasks do not run without a wait.)
TEST(TasksRuntimeQuiescence, ArrivesWithoutAnyWait) {
    const Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    for (const char* policy : {"dfifo", "lq", "dep", "sa"}) {
        SCOPED_TRACE(policy);
        Runtime rt{team, policy};
        std::atomic<int> leaves{0};
        std::atomic<bool> parent_done{false};
        rt.spawn([&] {
            for (int i = 0; i < 300; ++i) rt.spawn([&] { leaves.fetch_add(1); });
            parent_done.store(true);
        });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while ((leaves.load() != 300 || !parent_done.load()) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        ASSERT_EQ(leaves.load(), 300);
        bool quiet = false;
        while (!(quiet = rt.quiescent()) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        EXPECT_TRUE(quiet) << "the runtime was still not quiescent 20 s after its tasks ran";
        rt.taskwait();
        EXPECT_EQ(rt.report().tasks, 301u);
    }
}

TEST_P(TasksRuntime, ExceptionOfAChildOfAnUnwaitingParentReachesTheOutsideWait) {
    // The parent never waits, so its children's exception is forwarded when
    // the parent is disposed of, after its last child; the outside wait
    // must see it every time.
    Runtime rt{team, GetParam(), small_windows()};
    for (int round = 0; round < 10; ++round) {
        rt.spawn([&rt, round] {
            for (int i = 0; i < 32; ++i)
                rt.spawn([i, round] {
                    if (i == 31 - round) throw std::runtime_error("late child");
                });
        });
        try {
            rt.taskwait();
            ADD_FAILURE() << "round " << round << ": taskwait did not rethrow";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "late child");
        }
    }
}

TEST_P(TasksRuntime, GroupsWaitForTheirOwnTasks) {
    Runtime rt{team, GetParam(), small_windows()};
    std::atomic<int> in_group{0};
    {
        TaskGroup g{rt};
        for (int i = 0; i < 100; ++i) g.spawn([&] { in_group.fetch_add(1); });
        g.wait();
        EXPECT_EQ(in_group.load(), 100);
    }
    // A group used inside a task.
    std::atomic<int> inner{0};
    int seen = -1;
    rt.spawn([&] {
        TaskGroup g{rt};
        for (int i = 0; i < 20; ++i) g.spawn([&] { inner.fetch_add(1); });
        g.wait();
        seen = inner.load();
    });
    rt.taskwait();
    EXPECT_EQ(seen, 20);
}

TEST_P(TasksRuntime, ExceptionsPropagateToTheWaiter) {
    Runtime rt{team, GetParam(), small_windows()};
    std::atomic<int> ran{0};
    for (int i = 0; i < 10; ++i)
        rt.spawn([&, i] {
            ran.fetch_add(1);
            if (i == 4) throw std::runtime_error("task four failed");
        });
    try {
        rt.taskwait();
        ADD_FAILURE() << "taskwait did not rethrow";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "task four failed");
    }
    EXPECT_EQ(ran.load(), 10);
    rt.taskwait();   // reported once

    // Inside a task, the parent's taskwait sees its child's exception.
    std::string caught;
    rt.spawn([&] {
        rt.spawn([] { throw std::logic_error("child"); });
        try {
            rt.taskwait();
        } catch (const std::logic_error& e) {
            caught = e.what();
        }
    });
    rt.barrier();
    EXPECT_EQ(caught, "child");

    TaskGroup g{rt};
    g.spawn([] { throw std::runtime_error("in group"); });
    EXPECT_THROW(g.wait(), std::runtime_error);
    rt.barrier();   // the group's exception is not the runtime's
}

TEST_P(TasksRuntime, BadInputIsRejectedAndTheRuntimeStillWorks) {
    Runtime rt{team, GetParam()};
    EXPECT_EQ(expect_error([&] { rt.spawn_on(7, [] {}); }).field(), "node");
    long a[4] = {};
    const Error e = expect_error([&] { rt.spawn([] {}, {in(&a[0], 16), in(&a[1], 16)}); });
    EXPECT_EQ(e.field(), "deps[1]");
    rt.spawn([] {}, {out(&a[0], 16)});
    const Error e2 = expect_error([&] { rt.spawn([] {}, {in(&a[1], 16)}); });
    EXPECT_TRUE(contains(e2.what(), "partially overlaps")) << e2.what();
    EXPECT_EQ(expect_error([&] { rt.spawn([] {}, {in(nullptr, 8)}); }).field(), "deps[0]");
    EXPECT_EQ(expect_error([&] { rt.spawn([] {}, {in(&a[2], 0)}); }).field(), "deps[0]");
    std::atomic<int> ran{0};
    rt.spawn([&] { ran.fetch_add(1); }, {in(&a[0], 16)});
    rt.spawn_on(1, [&] { ran.fetch_add(1); }, {inout(&a[2], 16)});
    rt.barrier();
    EXPECT_EQ(ran.load(), 2);
    EXPECT_EQ(rt.report().tasks, 3u);
}

TEST_P(TasksRuntime, BarrierInsideATaskIsAnError) {
    Runtime rt{team, GetParam()};
    std::string field;
    int worker = -2;
    rt.spawn([&] {
        worker = Runtime::current_worker();
        try {
            rt.barrier();
        } catch (const Error& e) {
            field = e.field();
        }
    });
    rt.barrier();
    EXPECT_EQ(field, "barrier");
    EXPECT_TRUE(worker == 0 || worker == 1) << worker;
    EXPECT_EQ(Runtime::current_worker(), -1);
    EXPECT_EQ(rt.workers(), 2u);
    EXPECT_EQ(rt.policy_name(), GetParam());
}

TEST_P(TasksRuntime, CrossNodeBytesFollowHomes) {
    Runtime rt{team, GetParam(), small_windows(), RuntimeOptions{.kernel_homes = false}};
    static std::array<char, 4096> shared{};
    rt.register_region(shared.data(), shared.size(), 0);
    constexpr int n = 40;
    // A page each: without kernel homes a region inside one page belongs
    // to its page (see PagesOfSmallRegionsAreFirstWrittenOnce).
    struct alignas(4096) Own {
        std::array<char, 64> b;
        char* data() { return b.data(); }
    };
    std::vector<Own> own(n);
    std::vector<int> runner(n, -1);
    for (int i = 0; i < n; ++i)
        rt.spawn([&runner, i] { runner[static_cast<std::size_t>(i)] = Runtime::current_worker(); },
                 {in(shared.data(), shared.size()), out(own[static_cast<std::size_t>(i)].data(), 64)});
    rt.barrier();
    // Worker w is on node w. Reads of `shared` from node 1 cross; the
    // first writes of the unallocated `own` regions never do.
    std::uint64_t on_node1 = 0;
    for (int r : runner) {
        ASSERT_TRUE(r == 0 || r == 1);
        on_node1 += r == 1 ? 1 : 0;
    }
    RunReport rep = rt.report();
    EXPECT_EQ(rep.dep_bytes, n * (4096u + 64u));
    EXPECT_EQ(rep.cross_node_bytes, on_node1 * 4096u);
    EXPECT_EQ(rep.tasks_per_node[1], on_node1);

    // After the first write, an `own` region lives on its writer's node.
    rt.reset_metrics();
    std::vector<int> reader(n, -1);
    for (int i = 0; i < n; ++i)
        rt.spawn([&reader, i] { reader[static_cast<std::size_t>(i)] = Runtime::current_worker(); },
                 {in(own[static_cast<std::size_t>(i)].data(), 64)});
    rt.barrier();
    std::uint64_t expect_cross = 0;
    for (int i = 0; i < n; ++i) expect_cross += reader[static_cast<std::size_t>(i)] != runner[static_cast<std::size_t>(i)] ? 64 : 0;
    rep = rt.report();
    EXPECT_EQ(rep.tasks, static_cast<std::uint64_t>(n));
    EXPECT_EQ(rep.dep_bytes, n * 64u);
    EXPECT_EQ(rep.cross_node_bytes, expect_cross);

    EXPECT_EQ(expect_error([&] { rt.register_region(shared.data(), 64, 5); }).field(), "node");
    EXPECT_EQ(expect_error([&] { rt.register_region(nullptr, 64, 0); }).field(), "addr");
    EXPECT_EQ(expect_error([&] { rt.register_region(shared.data(), 0, 0); }).field(), "bytes");
}

// A worker that takes the tasks of another node's queue counts them as
// cross-node steals, with their cross-node bytes.
TEST(TasksRuntimeSteals, TasksTakenFromAnotherNodesQueueAreCountedWithTheirBytes) {
    const Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};   // worker w on node w
    Runtime rt{team, "dep", PolicyOptions{}, RuntimeOptions{.kernel_homes = false}};
    constexpr int n = 12;
    static std::array<std::array<char, 64>, n> data0{}, data1{};
    rt.register_region(data0.data(), sizeof data0, 0);
    rt.register_region(data1.data(), sizeof data1, 1);
    std::atomic<int> warm{0}, done{0};
    std::array<std::atomic<int>, n> runner{};
    int spawner = -1;
    bool timed_out = false;
    rt.spawn([&] {
        spawner = Runtime::current_worker();
        auto& mine = spawner == 0 ? data0 : data1;
        auto& other = spawner == 0 ? data1 : data0;
        const auto spin_until = [&](const std::atomic<int>& v, int want) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (v.load() < want)
                if (std::chrono::steady_clock::now() > deadline) return false;
            return true;
        };
        // The other node's worker runs one task of its own first, so the
        // run has a mean task duration and its steal delay starts to count.
        rt.spawn([&warm] { warm.store(1); }, {inout(other[0].data(), 64)});
        timed_out |= !spin_until(warm, 1);
        // Tasks homed here, while this worker stays busy: the other node
        // must take them from this node's queue.
        for (int i = 0; i < n; ++i)
            rt.spawn([&, i] {
                runner[static_cast<std::size_t>(i)].store(Runtime::current_worker());
                done.fetch_add(1);
            }, {inout(mine[static_cast<std::size_t>(i)].data(), 64)});
        timed_out |= !spin_until(done, n);
    });
    rt.barrier();
    ASSERT_FALSE(timed_out) << "the other node's worker did not take the tasks within 10 s";
    ASSERT_TRUE(spawner == 0 || spawner == 1);
    for (const auto& r : runner) EXPECT_EQ(r.load(), 1 - spawner);
    const RunReport rep = rt.report();
    EXPECT_EQ(rep.tasks, n + 2u);
    EXPECT_EQ(rep.cross_node_steals, static_cast<std::uint64_t>(n));
    EXPECT_EQ(rep.cross_node_bytes, n * 64u);
    EXPECT_EQ(rep.cross_node_steal_bytes, n * 64u);
}

// While only another node's queue holds tasks, and its steal delay has not
// passed, an idle worker pauses a round at a time (Worker::pause_ticks())
// instead of spinning: where workers outnumber CPUs, the spin took the CPU
// from the workers running those tasks. Tasks of 2 ms (sleeps, so the
// bodies use no CPU) make a round of 125 us, above the timer slack.
TEST(TasksRuntimeSteals, AWorkerWaitingOutItsStealDelayPausesInsteadOfSpinning) {
    const Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};   // worker w on node w
    PolicyOptions never;
    never.steal_delay_tasks = 1e6;   // no steal within the test
    Runtime rt{team, "dep", never, RuntimeOptions{.kernel_homes = false}};
    constexpr int n = 40;
    static std::array<std::array<char, 64>, n> data0{}, data1{};
    rt.register_region(data0.data(), sizeof data0, 0);
    rt.register_region(data1.data(), sizeof data1, 1);
    const auto body = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
    const auto thread_cpu = [](clockid_t c) {
        timespec ts{};
        clock_gettime(c, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    };
    const auto wall = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
    std::atomic<int> warm{0}, done{0};
    std::array<std::atomic<int>, n> runner{};
    clockid_t other_cpu{};
    int spawner = -1;
    double c0 = 0, t0 = 0, c1 = 0, t1 = 0;
    rt.spawn([&] {
        spawner = Runtime::current_worker();
        auto& mine = spawner == 0 ? data0 : data1;
        auto& other = spawner == 0 ? data1 : data0;
        // The other node's worker runs a task of its own first: the run's
        // mean task duration, and that worker's CPU clock.
        rt.spawn([&] {
            body();
            pthread_getcpuclockid(pthread_self(), &other_cpu);
            warm.store(1);
        }, {inout(other[0].data(), 64)});
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (warm.load() == 0 && std::chrono::steady_clock::now() < deadline) {}
        for (int i = 0; i < n; ++i)
            rt.spawn([&, i] {
                body();
                runner[static_cast<std::size_t>(i)].store(Runtime::current_worker());
                if (done.fetch_add(1) + 1 == n) {
                    c1 = thread_cpu(other_cpu);
                    t1 = wall();
                }
            }, {inout(mine[static_cast<std::size_t>(i)].data(), 64)});
        c0 = thread_cpu(other_cpu);
        t0 = wall();
    });
    rt.barrier();
    ASSERT_EQ(warm.load(), 1) << "the other node's worker did not run its task within 10 s";
    for (const auto& r : runner) EXPECT_EQ(r.load(), spawner);
    EXPECT_EQ(rt.report().cross_node_steals, 0u);
    ASSERT_GT(t1 - t0, 0.0);
    // Spinning, the other worker used its CPU for the whole phase (~1 of
    // the wall time when it has a CPU); pausing, a search per round.
#if defined(__SANITIZE_THREAD__)
    // Under ThreadSanitizer every load and store of that search is
    // instrumented, so the search itself costs several times its CPU and
    // the share measures TSan, not the pause (above 0.25 in 4 of 50 runs
    // on one host, 0.22 to 0.29 on another, 2026-12-03; the uninstrumented
    // build passed 30 of 30). This build runs the test for its races; the
    // uninstrumented unit build, also in `make test`, asserts the share.
    std::printf("[   NOTE   ] CPU share of the idle worker not asserted under ThreadSanitizer: %.3f\n",
                (c1 - c0) / (t1 - t0));
#else
    EXPECT_LT((c1 - c0) / (t1 - t0), 0.25) << "the idle worker used " << (c1 - c0) << " s of CPU in "
                                           << (t1 - t0) << " s of waiting for another node's tasks";
#endif
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, TasksRuntime, ::testing::ValuesIn(numaware::test::all_policy_names()),
                         numaware::test::param_name);

// ---- not per policy -----------------------------------------------------------

TEST(TasksRuntimeSetup, NullOrUnknownPolicyIsRejected) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    EXPECT_EQ(expect_error([&] { Runtime rt(team, std::unique_ptr<Policy>{}); }).field(), "policy");
    EXPECT_EQ(expect_error([&] { Runtime rt(team, "no-such-policy"); }).field(), "policy");
    Runtime ok{team, "dfifo"};
    int x = 0;
    ok.spawn([&] { x = 1; });
    ok.taskwait();
    EXPECT_EQ(x, 1);
}

TEST(TasksRuntimeSetup, RecordedGraphHasEdgesAndRoundTrips) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    Runtime rt{team, "dep", {}, RuntimeOptions{.kernel_homes = false, .record_graph = true}};
    double a = 0, b = 0;
    rt.spawn([&] { a = 1; }, {out(&a, sizeof a)});
    rt.spawn([&] { b = a + 1; }, {in(&a, sizeof a), out(&b, sizeof b)});
    rt.spawn_on(1, [&] { a = b; }, {out(&a, sizeof a), in(&b, sizeof b)});
    rt.barrier();
    const TaskGraph& g = rt.graph();
    ASSERT_EQ(g.tasks.size(), 3u);
    EXPECT_EQ(g.tasks[2].hint, 1);
    EXPECT_EQ(g.tasks[2].deps.size(), 2u);
    // Task 1 reads a (written by 0); task 2 writes a (read by 1) and reads b (written by 1).
    // Edges go only to tasks unfinished at spawn time, so check what they carry when present.
    for (const RecordedTask& t : g.tasks) {
        EXPECT_LE(t.worker, 1u);
        EXPECT_GE(t.seconds, 0.0);
        for (const Edge& e : t.preds) EXPECT_LT(e.from, t.id);
    }
    const TaskGraph back = TaskGraph::from_json(g.to_json());
    ASSERT_EQ(back.tasks.size(), 3u);
    EXPECT_EQ(back.tasks[1].deps[0].region, g.tasks[1].deps[0].region);
    EXPECT_EQ(back.tasks[2].preds.size(), g.tasks[2].preds.size());
    EXPECT_EQ(back.to_json(), g.to_json());
    EXPECT_EQ(expect_error([] { TaskGraph::from_json(R"({"tasks":[{"id":0,"deps":[{"region":1,"bytes":8,"access":"up"}],"preds":[]}]})"); }).field(),
              "tasks[0].deps[0].access");
    EXPECT_EQ(expect_error([] { TaskGraph::from_json("[1"); }).field(), "json");

    const std::string j = rt.report().to_json();
    EXPECT_TRUE(contains(j, "\"policy\":\"dep\"")) << j;
    EXPECT_TRUE(contains(j, "\"tasks\":3")) << j;
}

// A test-local policy that holds every task until flush(): waits must flush.
class HoldAll final : public Policy {
public:
    std::string_view name() const override { return "hold-all"; }
    void attach(const PolicyContext& ctx) override { workers_ = ctx.worker_node.size(); }
    // uses_submissions() is left to its default: the runtime must call this.
    void on_submit(const TaskView&) override { ++submitted; }
    Destination place(const TaskView& t) override {
        held_.push_back(t.id);
        return Destination::held();
    }
    void steal_order(unsigned worker, std::uint64_t, std::vector<QueueRef>& order) const override {
        order.clear();
        order.push_back({QueueRef::Kind::worker, worker});
        for (unsigned w = 0; w < workers_; ++w)
            if (w != worker) order.push_back({QueueRef::Kind::worker, w});
    }
    bool flush(std::vector<Released>& released) override {
        for (TaskId id : held_) released.push_back({id, Destination::to_worker(static_cast<unsigned>(id % workers_))});
        held_.clear();
        ++flushes;
        return false;
    }
    int flushes = 0;
    int submitted = 0;

private:
    std::size_t workers_ = 1;
    std::vector<TaskId> held_;
};

// A policy sees the homes the executor knows, unless it says that it
// never reads them (Policy::reads_homes()): then every home is unallocated.
class SeesHomes final : public Policy {
public:
    explicit SeesHomes(bool reads) : reads_(reads) {}
    std::string_view name() const override { return "sees-homes"; }
    void attach(const PolicyContext&) override {}
    bool uses_submissions() const override { return false; }
    bool reads_homes() const override { return reads_; }
    Destination place(const TaskView& t) override {
        for (const DepInfo& d : t.deps) seen.push_back(d.home);
        return Destination::to_worker(0);
    }
    void steal_order(unsigned worker, std::uint64_t, std::vector<QueueRef>& order) const override {
        order.assign({QueueRef{QueueRef::Kind::worker, worker}});
    }
    std::vector<int> seen;

private:
    bool reads_;
};

TEST(TasksRuntimeSetup, APolicyThatReadsNoHomesIsGivenNone) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 1}};
    for (const bool reads : {true, false}) {
        auto policy = std::make_unique<SeesHomes>(reads);
        SeesHomes* p = policy.get();
        Runtime rt{team, std::move(policy), RuntimeOptions{.kernel_homes = false}};
        std::vector<double> data(4);
        rt.register_region(data.data(), sizeof(double) * data.size(), 1);
        rt.spawn([] {}, {in(&data[0], sizeof(double)), out(&data[1], sizeof(double))});
        rt.taskwait();
        EXPECT_EQ(p->seen, (reads ? std::vector<int>{1, 1} : std::vector<int>{unallocated, unallocated}))
            << "reads_homes " << reads;
    }
}

// place() at submission learns the spawning worker's node: -1 from outside
// the workers, the node of the worker whose task spawned it otherwise, and
// -1 again for a task that a predecessor made ready later.
class SeesSpawner final : public Policy {
public:
    std::string_view name() const override { return "sees-spawner"; }
    void attach(const PolicyContext& ctx) override { worker_node_ = ctx.worker_node; }
    bool uses_submissions() const override { return false; }
    Destination place(const TaskView& t) override {
        std::lock_guard g(mutex);
        seen.push_back(t.spawner_node);
        return Destination::to_worker(next_++ % 2);
    }
    void steal_order(unsigned worker, std::uint64_t, std::vector<QueueRef>& order) const override {
        order.assign({QueueRef{QueueRef::Kind::worker, worker}});
    }
    std::mutex mutex;
    std::vector<int> seen;
    std::vector<unsigned> worker_node_;

private:
    unsigned next_ = 1;
};

TEST(TasksRuntimeSetup, PlacementAtSubmissionKnowsTheSpawnersNode) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    auto policy = std::make_unique<SeesSpawner>();
    SeesSpawner* p = policy.get();
    Runtime rt{team, std::move(policy), RuntimeOptions{.kernel_homes = false}};
    std::atomic<int> ran_on{-1};
    double x = 0;
    rt.register_region(&x, sizeof x, 0);
    // Task 0 from outside goes to worker 1 (the policy's turn), on node 1
    // (scatter), and no worker steals (its steal order); there it spawns
    // task 1, ready at once, and task 2, which waits for task 1's write
    // unless task 1 has finished already.
    rt.spawn([&] {
        ran_on = static_cast<int>(p->worker_node_.at(static_cast<std::size_t>(Runtime::current_worker())));
        rt.spawn([&] { x = 1; }, {out(&x, sizeof x)});
        rt.spawn([&] { x += 1; }, {inout(&x, sizeof x)});
        rt.taskwait();
    });
    rt.taskwait();
    ASSERT_EQ(ran_on.load(), 1);
    std::lock_guard g(p->mutex);
    ASSERT_EQ(p->seen.size(), 3u);
    EXPECT_EQ(p->seen[0], -1) << "spawned from outside the workers";
    EXPECT_EQ(p->seen[1], 1) << "spawned by a task on node 1";
    // Placed at its submission (task 1 done) or by task 1's worker later.
    EXPECT_TRUE(p->seen[2] == -1 || p->seen[2] == 1) << p->seen[2];
    EXPECT_EQ(x, 2.0);
}

TEST(TasksRuntimeSetup, HeldTasksAreFlushedByWaits) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    auto policy = std::make_unique<HoldAll>();
    HoldAll* p = policy.get();
    Runtime rt{team, std::move(policy)};
    std::atomic<int> n{0};
    int child_sum = -1;
    for (int i = 0; i < 10; ++i) rt.spawn([&] { n.fetch_add(1); });
    rt.spawn([&] {
        std::atomic<int> c{0};
        for (int i = 0; i < 5; ++i) rt.spawn([&] { c.fetch_add(1); });
        rt.taskwait();   // children are held: the waiting task must get them flushed
        child_sum = c.load();
    });
    rt.taskwait();
    EXPECT_EQ(n.load(), 10);
    EXPECT_EQ(child_sum, 5);
    EXPECT_GE(p->flushes, 1);
    EXPECT_EQ(p->submitted, 16);   // a policy that does not say it ignores submissions sees every one
}

}  // namespace
}  // namespace numaware::tasks
