// Unit tests for Team: pinning through the os layer, run(), the barrier,
// exceptions and clean-up. Written to be meaningful under ThreadSanitizer:
// ranks exchange plain (non-atomic) data across barriers, so a barrier that
// failed to order memory would be reported as a data race.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "numaware/error.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"
#include "os/recording_os.hpp"

namespace numaware {
namespace {

std::size_t live_thread_count() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}

// The count once exited threads are gone. pthread_join returns when the
// kernel clears the thread's tid, a moment before the task leaves
// /proc/self/task, so poll (for at most two seconds) until the count is
// `expected`; a thread really left running keeps it above for good.
std::size_t thread_count_settled_to(std::size_t expected) {
    std::size_t n = live_thread_count();
    for (int i = 0; i < 200 && n != expected; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        n = live_thread_count();
    }
    return n;
}

// The count to compare against. ThreadSanitizer starts a background thread
// of its own when the process first creates one, so create and join one
// thread before counting; otherwise that runtime thread looks like a leak.
std::size_t thread_baseline() {
    std::thread([] {}).join();
    // Let the joined thread leave /proc/self/task before counting.
    std::size_t n = live_thread_count();
    for (int i = 0; i < 200; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const std::size_t again = live_thread_count();
        if (again == n) break;
        n = again;
    }
    return n;
}

// A one-node machine made of the CPUs this process may run on, so the
// real-pinning tests hold on any host or CI container.
Machine allowed_cpus_machine() {
    std::vector<unsigned> cpus;
    EXPECT_EQ(os::linux_os().get_affinity(0, cpus), 0);
    Machine m;
    m.name = "allowed CPUs";
    Node n;
    n.memory_bytes = 1u << 30;
    n.cpus = cpus;
    m.nodes.push_back(n);
    m.distances = {{10}};
    return m;
}

TEST(Team, EveryRankRunsOnItsOwnThreadPinnedToItsPlannedCpu) {
    os::RecordingOs fake(4, 2);
    Machine m;
    for (unsigned i = 0; i < 4; ++i) {
        Node n;
        n.os_index = i;
        n.memory_bytes = 1u << 30;
        n.cpus = {2 * i, 2 * i + 1};
        m.nodes.push_back(n);
    }
    m.distances = {{10, 20, 20, 20}, {20, 10, 20, 20}, {20, 20, 10, 20}, {20, 20, 20, 10}};

    Team team(m, {.threads = 8, .kind = MappingKind::scatter}, fake);
    ASSERT_EQ(team.size(), 8u);
    EXPECT_EQ(team.layout(), plan_team(m, {.threads = 8, .kind = MappingKind::scatter}));

    // One set_affinity per rank, each to exactly one CPU, covering the plan.
    std::multiset<unsigned> pinned;
    for (const os::Call& c : fake.calls(os::CallKind::set_affinity)) {
        EXPECT_EQ(c.pid, 0);
        ASSERT_EQ(c.cpus.size(), 1u);
        pinned.insert(c.cpus[0]);
    }
    EXPECT_EQ(pinned, (std::multiset<unsigned>{0, 1, 2, 3, 4, 5, 6, 7}));

    std::vector<std::vector<unsigned>> affinity(8);
    std::vector<pid_t> tid(8), tid_again(8);
    std::vector<unsigned> node(8);
    team.run([&](TeamContext& ctx) {
        affinity[ctx.rank()] = fake.affinity(0);   // the calling thread's, per the fake
        tid[ctx.rank()] = ::gettid();
        node[ctx.rank()] = ctx.node();
        EXPECT_EQ(ctx.size(), 8u);
    });
    team.run([&](TeamContext& ctx) { tid_again[ctx.rank()] = ::gettid(); });
    for (unsigned r = 0; r < 8; ++r) {
        EXPECT_EQ(affinity[r], (std::vector<unsigned>{team.layout().ranks[r].cpu})) << "rank " << r;
        EXPECT_EQ(node[r], r % 4) << "scatter puts rank r on node r mod 4";
    }
    EXPECT_EQ(std::set<pid_t>(tid.begin(), tid.end()).size(), 8u) << "one thread per rank";
    EXPECT_EQ(tid, tid_again) << "a rank keeps its thread (and so its pin) across runs";
    EXPECT_EQ(fake.calls(os::CallKind::set_affinity).size(), 8u) << "placement is taken once";
}

TEST(Team, BarrierIsReusableAndOrdersMemoryAcrossManyRuns) {
    os::RecordingOs fake(2, 2);
    Machine m;
    for (unsigned i = 0; i < 2; ++i) {
        Node n;
        n.os_index = i;
        n.memory_bytes = 1u << 30;
        n.cpus = {2 * i, 2 * i + 1};
        m.nodes.push_back(n);
    }
    m.distances = {{10, 20}, {20, 10}};
    Team team(m, {.threads = 4, .kind = MappingKind::contiguous}, fake);

    // Plain ints on purpose: only the barrier orders these writes and reads.
    std::vector<int> slot(4, -1);
    std::vector<int> seen_sum(4, 0);
    int mismatches = 0;   // written by rank 0 only
    constexpr int rounds = 150;
    constexpr int phases = 4;
    for (int round = 0; round < rounds; ++round) {
        team.run([&](TeamContext& ctx) {
            const unsigned me = ctx.rank();
            for (int phase = 0; phase < phases; ++phase) {
                const int value = round * phases + phase;
                slot[me] = value + static_cast<int>(me);
                ctx.barrier();
                int sum = 0;
                for (unsigned r = 0; r < 4; ++r) sum += slot[r] - static_cast<int>(r);
                seen_sum[me] = sum;
                ctx.barrier();   // nobody overwrites a slot until all have read it
                if (me == 0)
                    for (unsigned r = 0; r < 4; ++r) mismatches += seen_sum[r] != 4 * value;
                ctx.barrier();
            }
        });
    }
    EXPECT_EQ(mismatches, 0);
}

TEST(Team, FirstExceptionIsRethrownAndWaitingRanksAreReleased) {
    os::RecordingOs fake(1, 4);
    Machine m;
    Node n;
    n.memory_bytes = 1u << 30;
    n.cpus = {0, 1, 2, 3};
    m.nodes.push_back(n);
    m.distances = {{10}};
    Team team(m, {.threads = 4}, fake);

    for (int attempt = 0; attempt < 20; ++attempt) {
        std::atomic<int> passed_barrier{0};
        try {
            team.run([&](TeamContext& ctx) {
                // Ranks other than 2 wait at the barrier; rank 2 never
                // arrives. Without the barrier breaking, run() would hang.
                if (ctx.rank() == 2) throw std::runtime_error("rank 2 failed");
                ctx.barrier();
                ++passed_barrier;
            });
            ADD_FAILURE() << "run() swallowed the exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "rank 2 failed");
        }
        EXPECT_EQ(passed_barrier.load(), 0);

        // The team is whole again: a clean run with barriers completes.
        std::vector<int> ranks(4, 0);
        team.run([&](TeamContext& ctx) {
            ctx.barrier();
            ranks[ctx.rank()] = 1;
            ctx.barrier();
        });
        EXPECT_EQ(ranks, (std::vector<int>{1, 1, 1, 1}));
    }

    // Every rank throws: exactly one of their exceptions comes back.
    try {
        team.run([](TeamContext& ctx) { throw std::out_of_range("rank " + std::to_string(ctx.rank())); });
        ADD_FAILURE();
    } catch (const std::out_of_range& e) {
        EXPECT_EQ(std::string(e.what()).rfind("rank ", 0), 0u);
    }
}

TEST(Team, NestedRunIsRefused) {
    os::RecordingOs fake(1, 2);
    Machine m;
    Node n;
    n.memory_bytes = 1u << 30;
    n.cpus = {0, 1};
    m.nodes.push_back(n);
    m.distances = {{10}};
    Team team(m, {.threads = 2}, fake);
    try {
        team.run([&](TeamContext&) { team.run([](TeamContext&) {}); });
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "run");
        EXPECT_NE(std::string(e.what()).find("inside this team's own work"), std::string::npos);
    }
}

TEST(Team, FailedPinThrowsNamingTheCpuAndLeavesNoThreads) {
    os::RecordingOs fake(2, 4);   // CPUs 0-3 on node 0, 4-7 on node 1
    Machine m;
    for (unsigned i = 0; i < 2; ++i) {
        Node n;
        n.os_index = i;
        n.memory_bytes = 1u << 30;
        for (unsigned c = 0; c < 4; ++c) n.cpus.push_back(4 * i + c);
        m.nodes.push_back(n);
    }
    m.distances = {{10, 20}, {20, 10}};
    const std::size_t before = thread_baseline();
    // Every set_affinity from the 1st on fails: rank 0 (CPU 0) is the one
    // reported, whichever thread happened to call first.
    fake.fail_call(os::CallKind::set_affinity, EINVAL, 1, 0);
    try {
        Team team(m, {.threads = 6, .kind = MappingKind::scatter}, fake);
        ADD_FAILURE() << "constructor succeeded although pinning failed";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "cpu 0");
        EXPECT_EQ(e.code(), EINVAL);
        EXPECT_NE(std::string(e.what()).find("cannot pin rank 0 to CPU 0 (node 0)"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(thread_count_settled_to(before), before) << "threads left behind by a failed constructor";

    // Only the third pin fails: the error names that rank's CPU.
    fake.clear_failures();
    fake.fail_call(os::CallKind::set_affinity, EPERM, 3, 1);
    try {
        Team team(m, {.cpus = {5, 6, 7}}, fake);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), EPERM);
        EXPECT_EQ(e.field().rfind("cpu ", 0), 0u) << e.field();
    }
    EXPECT_EQ(thread_count_settled_to(before), before);
}

TEST(Team, DestructorJoinsEveryThread) {
    const Machine m = allowed_cpus_machine();
    const std::size_t before = thread_baseline();
    for (int i = 0; i < 10; ++i) {
        Team team(m, {.threads = static_cast<unsigned>(m.cpu_count())});
        EXPECT_EQ(thread_count_settled_to(before + team.size()), before + team.size());
    }
    EXPECT_EQ(thread_count_settled_to(before), before);
}

TEST(Team, RealPinningOnThisHost) {
    const Machine m = allowed_cpus_machine();
    for (MappingKind kind : {MappingKind::contiguous, MappingKind::scatter}) {
        Team team(m, {.threads = static_cast<unsigned>(m.cpu_count()), .kind = kind});
        std::vector<int> wrong(team.size(), 0);
        for (int round = 0; round < 20; ++round) {
            team.run([&](TeamContext& ctx) {
                if (os::linux_os().current_cpu() != static_cast<int>(ctx.cpu())) ++wrong[ctx.rank()];
                std::vector<unsigned> aff;
                if (os::linux_os().get_affinity(0, aff) != 0 || aff != std::vector<unsigned>{ctx.cpu()})
                    ++wrong[ctx.rank()];
                ctx.barrier();
            });
        }
        EXPECT_EQ(wrong, std::vector<int>(team.size(), 0));
    }
}

}  // namespace
}  // namespace numaware
