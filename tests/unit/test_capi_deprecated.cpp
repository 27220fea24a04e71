// The C names of numaware 0.1, kept for one release: each still links and
// forwards to its nw_<object>_<verb> replacement with the same arguments
// and the same result. Delete with src/capi/deprecated.cpp.
#include <sys/mman.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/numaware.h"

// Calling the old names is the point of this file.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

TEST(DeprecatedCapi, LastErrorIsErrorMessage) {
    EXPECT_EQ(nw_range_place(nullptr, 4096, nullptr, nullptr), -1);
    EXPECT_EQ(nw_last_error(), nw_error_message());
    EXPECT_NE(std::string(nw_last_error()).find("policy_spec"), std::string::npos) << nw_last_error();
}

TEST(DeprecatedCapi, PlacementNamesForwardToRange) {
    nw_machine_t* machine = nullptr;
    ASSERT_EQ(nw_machine_load("nodes=2 cpus-per-node=1 mem-per-node=256M distances=10,21/21,10", &machine), 0)
        << nw_error_message();
    const void* base = reinterpret_cast<const void*>(0x10000000);
    std::vector<int> old_nodes(4, -2);
    std::vector<int> new_nodes(4, -2);
    EXPECT_EQ(nw_place_plan(machine, base, 4 * 4096, "interleave:all", -1, old_nodes.data(), old_nodes.size()), 4);
    EXPECT_EQ(nw_range_plan(machine, base, 4 * 4096, "interleave:all", -1, new_nodes.data(), new_nodes.size()), 4);
    EXPECT_EQ(old_nodes, new_nodes);
    nw_machine_destroy(machine);

    constexpr std::size_t bytes = 8 * 4096;
    void* addr = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(addr, MAP_FAILED);
    nw_place_report r{};
    ASSERT_EQ(nw_place(addr, bytes, "bind:0", &r), 0) << nw_error_message();
    EXPECT_EQ(r.matched, 8u);
    r = nw_place_report{};
    EXPECT_EQ(nw_place_verify(addr, bytes, "bind:0", &r), 0) << nw_error_message();
    EXPECT_EQ(r.matched, 8u);
    r = nw_place_report{};
    EXPECT_EQ(nw_place_migrate(addr, bytes, "bind:0", &r), 0) << nw_error_message();
    EXPECT_EQ(r.matched, 8u);
    ::munmap(addr, bytes);

    // Refused before any system call, so the thread's policy is untouched.
    errno = 0;
    EXPECT_EQ(nw_place_process("cyclic:0"), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("cannot be a process policy"), std::string::npos)
        << nw_error_message();
}

void add_one(void* arg) { ++*static_cast<int*>(arg); }

TEST(DeprecatedCapi, TaskNamesForwardToTaskAndRuntime) {
    nw_machine_t* machine = nullptr;
    ASSERT_EQ(nw_machine_load("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10", &machine), 0)
        << nw_error_message();
    nw_team_mapping map{};
    map.threads = 2;
    map.kind = NW_TEAM_SCATTER;
    nw_team_t* team = nullptr;
    ASSERT_EQ(nw_team_create(machine, &map, &team), 0) << nw_error_message();
    nw_policy_options o = nw_policy_options_default();
    o.kernel_homes = 0;
    nw_runtime_t* rt = nullptr;
    ASSERT_EQ(nw_runtime_create(team, "sa", &o, &rt), 0) << nw_error_message();

    int count = 0;
    const nw_dep dep{&count, sizeof count, NW_INOUT};
    EXPECT_EQ(nw_register_region(rt, &count, sizeof count, 1), 0) << nw_error_message();
    EXPECT_EQ(nw_spawn(rt, add_one, &count, &dep, 1), 0) << nw_error_message();
    EXPECT_EQ(nw_spawn_on(rt, 1, add_one, &count, &dep, 1), 0) << nw_error_message();
    EXPECT_EQ(nw_taskwait(rt), 0) << nw_error_message();
    EXPECT_EQ(count, 2);
    EXPECT_EQ(nw_spawn(rt, add_one, &count, &dep, 1), 0) << nw_error_message();
    EXPECT_EQ(nw_barrier(rt), 0) << nw_error_message();
    EXPECT_EQ(count, 3);
    nw_run_report report{};
    ASSERT_EQ(nw_runtime_report(rt, &report), 0);
    EXPECT_EQ(report.tasks, 3u);

    // Failures forward too: same return, errno and message.
    errno = 0;
    EXPECT_EQ(nw_spawn(rt, nullptr, &count, nullptr, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(nw_spawn_on(rt, 9, add_one, &count, nullptr, 0), -1);
    EXPECT_NE(std::string(nw_error_message()).find("node"), std::string::npos) << nw_error_message();
    EXPECT_EQ(nw_register_region(rt, nullptr, 8, 0), -1);
    EXPECT_EQ(nw_taskwait(nullptr), -1);
    EXPECT_EQ(nw_barrier(nullptr), -1);

    nw_runtime_destroy(rt);
    nw_team_destroy(team);
    nw_machine_destroy(machine);
}

}  // namespace
