// Detached completion (Runtime::detach / fulfill, OpenMP's `detach`
// clause), for every built-in policy, on a 2-node synthetic team and on a
// hosted runtime: a detached task's successors, its group and barrier()
// wait for fulfill() as well as for its body, whichever thread fulfils
// and whichever comes first.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "numaware/machine.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"
#include "support.hpp"

namespace numaware::tasks {
namespace {

using numaware::test::expect_error;
using namespace std::chrono_literals;

Machine two_nodes() { return Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10"); }

PolicyOptions small_windows() {
    PolicyOptions o;
    o.window = 16;
    o.intersection = 4;
    return o;
}

class TasksDetach : public ::testing::TestWithParam<std::string> {
protected:
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
};

// Fulfilled from outside the runtime after the body: the successor and a
// barrier wait until then, not longer.
TEST_P(TasksDetach, SuccessorsAndBarrierWaitForAFulfilAfterTheBody) {
    Runtime rt{team, GetParam(), small_windows()};
    int x = 0;
    std::atomic<std::uintptr_t> token{0};
    std::atomic<bool> body_done{false}, successor_ran{false};
    rt.spawn(
        [&] {
            token.store(rt.detach());
            body_done.store(true);
        },
        {out(&x, sizeof x)});
    rt.spawn([&] { successor_ran.store(true); }, {in(&x, sizeof x)});
    std::atomic<bool> barrier_returned{false};
    std::thread waiter([&] {
        rt.barrier();
        barrier_returned.store(true);
    });
    while (!body_done.load()) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(successor_ran.load()) << "the successor ran before fulfill()";
    EXPECT_FALSE(barrier_returned.load()) << "barrier() returned before fulfill()";
    rt.fulfill(token.load());
    waiter.join();
    EXPECT_TRUE(successor_ran.load());
    EXPECT_EQ(rt.report().tasks, 2u);
}

// Fulfilled inside the body (before it ends): the body's end completes it.
TEST_P(TasksDetach, AFulfilBeforeTheBodyEndsLeavesTheCompletionToTheBody) {
    Runtime rt{team, GetParam(), small_windows()};
    int x = 0;
    std::atomic<bool> successor_ran{false};
    std::atomic<bool> body_over{false};
    rt.spawn(
        [&] {
            rt.fulfill(rt.detach());
            std::this_thread::sleep_for(20ms);
            EXPECT_FALSE(successor_ran.load());
            body_over.store(true);
        },
        {out(&x, sizeof x)});
    rt.spawn([&] { successor_ran.store(body_over.load()); }, {inout(&x, sizeof x)});
    rt.barrier();
    EXPECT_TRUE(successor_ran.load()) << "the successor ran before the detached task's body ended";
}

// Fulfilled by another task, on a worker: a group's wait covers it.
TEST_P(TasksDetach, AnotherTaskFulfilsAndTheGroupWaits) {
    Runtime rt{team, GetParam(), small_windows()};
    std::atomic<std::uintptr_t> token{0};
    std::atomic<int> order{0};
    int fulfilled_at = -1, group_done_at = -1;
    {
        Runtime::Group g{rt};
        g.spawn([&] { token.store(rt.detach()); });
        rt.spawn([&] {
            while (token.load() == 0) std::this_thread::yield();
            std::this_thread::sleep_for(20ms);
            fulfilled_at = order.fetch_add(1);
            rt.fulfill(token.load());
        });
        g.wait();
        group_done_at = order.fetch_add(1);
    }
    rt.barrier();
    EXPECT_EQ(fulfilled_at, 0);
    EXPECT_EQ(group_done_at, 1) << "the group's wait returned before the fulfilment";
}

bool flag_set(void* p) { return static_cast<std::atomic<bool>*>(p)->load(); }

// A hosted runtime (the OpenMP shim's): a seat's wait completes a task
// fulfilled from a thread without a seat.
TEST_P(TasksDetach, HostedWaitersCompleteATaskFulfilledFromOutside) {
    Runtime rt{machine, TeamLayout{{RankPlace{0, 0, 0}, RankPlace{1, 1, 1}}}, make_policy(GetParam(), small_windows())};
    int x = 0;
    std::atomic<std::uintptr_t> token{0};
    std::atomic<bool> successor_ran{false};
    // Both seats taken: SA runs a task only on its node's seat.
    std::thread seat1([&] {
        rt.host(1);
        rt.run_until(flag_set, &successor_ran);
        rt.unhost();
    });
    rt.host(0);
    rt.spawn([&] { token.store(rt.detach()); }, {out(&x, sizeof x)});
    rt.spawn(
        [&] {
            successor_ran.store(true);
            rt.wake();   // run_until's contract: whoever makes done() true wakes
        },
        {in(&x, sizeof x)});
    std::thread outsider([&] {
        while (token.load() == 0) std::this_thread::sleep_for(1ms);
        std::this_thread::sleep_for(20ms);
        rt.fulfill(token.load());
    });
    rt.run_until(flag_set, &successor_ran);   // may sleep: the fulfilment wakes it
    outsider.join();
    seat1.join();
    EXPECT_TRUE(successor_ran.load());
    rt.run_until([](void* r) { return static_cast<Runtime*>(r)->quiescent(); }, &rt, Runtime::Sleep::never);
    rt.unhost();
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, TasksDetach, ::testing::ValuesIn(numaware::test::all_policy_names()),
                         numaware::test::param_name);

TEST(TasksDetachBadInput, OnlyARunningTaskDetachesItselfOnce) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 1}};
    Runtime rt{team, "dfifo"};
    expect_error([&] { (void)rt.detach(); }, "detach", "outside a task");
    std::atomic<bool> second_refused{false};
    rt.spawn([&] {
        const std::uintptr_t t = rt.detach();
        try {
            (void)rt.detach();
        } catch (const Error& e) {
            second_refused.store(std::string(e.what()).find("detached already") != std::string::npos);
        }
        rt.fulfill(t);
    });
    rt.barrier();
    EXPECT_TRUE(second_refused.load());
}

}  // namespace
}  // namespace numaware::tasks
