// Unit tests of the task runtime's C API (numaware/c/tasks.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "numaware/numaware.h"
#include "support.hpp"

namespace {

using numaware::test::contains;

struct TasksCapi : ::testing::Test {
    nw_machine_t* machine = nullptr;
    nw_team_t* team = nullptr;
    void SetUp() override {
        ASSERT_EQ(nw_machine_load("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10", &machine), 0)
            << nw_error_message();
        nw_team_mapping map{};
        map.threads = 2;
        map.kind = NW_TEAM_SCATTER;
        ASSERT_EQ(nw_team_create(machine, &map, &team), 0) << nw_error_message();
    }
    void TearDown() override {
        nw_team_destroy(team);
        nw_machine_destroy(machine);
    }
};

struct Chain {
    long value = 0;
    int steps = 0;
};
void step(void* arg) {
    auto* c = static_cast<Chain*>(arg);
    c->value = c->value * 3 + 1;
    ++c->steps;
}

TEST_F(TasksCapi, SmallGraphRunsInDependencyOrder) {
    nw_runtime_t* rt = nullptr;
    nw_policy_options o = nw_policy_options_default();
    o.kernel_homes = 0;
    ASSERT_EQ(nw_runtime_create(team, "dep", &o, &rt), 0) << nw_error_message();
    Chain c;
    const nw_dep dep{&c, sizeof c, NW_INOUT};
    for (int i = 0; i < 5; ++i) ASSERT_EQ(nw_task_spawn(rt, step, &c, &dep, 1), 0) << nw_error_message();
    ASSERT_EQ(nw_task_spawn_on(rt, 1, step, &c, &dep, 1), 0) << nw_error_message();
    ASSERT_EQ(nw_task_wait(rt), 0);
    EXPECT_EQ(c.steps, 6);
    EXPECT_EQ(c.value, 364);   // 0 -> 1 -> 4 -> 13 -> 40 -> 121 -> 364
    ASSERT_EQ(nw_runtime_barrier(rt), 0);
    nw_run_report r{};
    ASSERT_EQ(nw_runtime_report(rt, &r), 0);
    EXPECT_EQ(r.tasks, 6u);
    EXPECT_EQ(r.dep_bytes, 6u * sizeof c);
    ASSERT_EQ(r.node_count, 2u);
    EXPECT_EQ(r.nodes[1], 1u);
    EXPECT_EQ(r.tasks_per_node[0] + r.tasks_per_node[1], 6u);
    nw_runtime_destroy(rt);
    nw_runtime_destroy(nullptr);
}

TEST_F(TasksCapi, ErrorsSetErrnoAndName) {
    nw_runtime_t* rt = nullptr;
    errno = 0;
    EXPECT_EQ(nw_runtime_create(team, "nope", nullptr, &rt), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_TRUE(contains(nw_error_message(), "policy")) << nw_error_message();
    EXPECT_EQ(rt, nullptr);
    EXPECT_EQ(nw_runtime_create(nullptr, "dfifo", nullptr, &rt), -1);
    nw_policy_options o = nw_policy_options_default();
    o.window = 0;
    EXPECT_EQ(nw_runtime_create(team, "rip-dep", &o, &rt), -1);
    EXPECT_TRUE(contains(nw_error_message(), "window")) << nw_error_message();

    ASSERT_EQ(nw_runtime_create(team, "sa", nullptr, &rt), 0) << nw_error_message();
    Chain c;
    EXPECT_EQ(nw_task_spawn(rt, nullptr, &c, nullptr, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(nw_task_spawn(rt, step, &c, nullptr, 1), -1);
    EXPECT_TRUE(contains(nw_error_message(), "deps")) << nw_error_message();
    const nw_dep bad_access{&c, sizeof c, 7};
    EXPECT_EQ(nw_task_spawn(rt, step, &c, &bad_access, 1), -1);
    EXPECT_TRUE(contains(nw_error_message(), "deps[0].access")) << nw_error_message();
    const nw_dep zero{&c, 0, NW_IN};
    EXPECT_EQ(nw_task_spawn(rt, step, &c, &zero, 1), -1);
    EXPECT_TRUE(contains(nw_error_message(), "deps[0]")) << nw_error_message();
    EXPECT_EQ(nw_task_spawn_on(rt, 9, step, &c, nullptr, 0), -1);
    EXPECT_TRUE(contains(nw_error_message(), "node")) << nw_error_message();
    EXPECT_EQ(nw_runtime_register_region(rt, nullptr, 8, 0), -1);
    EXPECT_EQ(nw_runtime_register_region(rt, &c, sizeof c, 0), 0) << nw_error_message();
    EXPECT_EQ(nw_runtime_report(rt, nullptr), -1);
    EXPECT_EQ(nw_task_wait(nullptr), -1);
    // Still usable after the failures.
    EXPECT_EQ(nw_task_spawn(rt, step, &c, nullptr, 0), 0);
    EXPECT_EQ(nw_runtime_barrier(rt), 0);
    EXPECT_EQ(c.steps, 1);
    nw_runtime_destroy(rt);
}

}  // namespace
