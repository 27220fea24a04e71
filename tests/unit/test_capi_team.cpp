// Tests for the C API of teams (numaware/c/team.h): the same behaviour as
// the C++ Team, errors as -1 + errno + nw_error_message().
#include <gtest/gtest.h>

#include <sched.h>

#include <cerrno>
#include <string>
#include <vector>

#include "numaware/c/error.h"
#include "numaware/c/machine.h"
#include "numaware/c/team.h"

namespace {

struct Seen {
    std::vector<int> cpu_ok;
    std::vector<unsigned> node;
    std::vector<int> after_barrier;   // plain ints: ordered only by the barrier
    int barrier_rc = 0;
};

void record(const nw_team_ctx* ctx, void* arg) {
    auto* seen = static_cast<Seen*>(arg);
    seen->cpu_ok[ctx->rank] = ::sched_getcpu() == static_cast<int>(ctx->cpu);
    seen->node[ctx->rank] = ctx->node;
    seen->after_barrier[ctx->rank] = 1;
    if (nw_team_barrier(ctx) != 0) seen->barrier_rc = -1;
    // After the barrier every rank's write above is visible.
    int sum = 0;
    for (unsigned r = 0; r < ctx->size; ++r) sum += seen->after_barrier[r];
    if (nw_team_barrier(ctx) != 0) seen->barrier_rc = -1;
    seen->after_barrier[ctx->rank] = sum;
}

class TeamCapi : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(nw_machine_load("live", &machine), 0) << nw_error_message(); }
    void TearDown() override { nw_machine_destroy(machine); }
    nw_machine_t* machine = nullptr;
};

TEST_F(TeamCapi, RunsPinnedRanksWithABarrier) {
    const int node0 = nw_machine_node_os_index(machine, 0);
    const int cpus = nw_machine_node_cpu_count(machine, static_cast<unsigned>(node0));
    ASSERT_GT(cpus, 0);
    nw_team_mapping map{};
    map.threads = static_cast<unsigned>(cpus);
    map.kind = NW_TEAM_SCATTER;
    nw_team_t* team = nullptr;
    ASSERT_EQ(nw_team_create(machine, &map, &team), 0) << nw_error_message();
    ASSERT_EQ(nw_team_size(team), cpus);
    for (int round = 0; round < 20; ++round) {
        Seen seen{std::vector<int>(cpus, 0), std::vector<unsigned>(cpus, 99), std::vector<int>(cpus, 0), 0};
        ASSERT_EQ(nw_team_run(team, record, &seen), 0) << nw_error_message();
        EXPECT_EQ(seen.barrier_rc, 0);
        EXPECT_EQ(seen.cpu_ok, std::vector<int>(cpus, 1));
        EXPECT_EQ(seen.after_barrier, std::vector<int>(cpus, cpus));
        for (unsigned r = 0; r < static_cast<unsigned>(cpus); ++r) {
            unsigned cpu = 0, node = 0;
            ASSERT_EQ(nw_team_rank_place(team, r, &cpu, &node), 0);
            EXPECT_EQ(seen.node[r], node);
        }
    }
    EXPECT_EQ(nw_team_rank_place(team, static_cast<unsigned>(cpus), nullptr, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    nw_team_destroy(team);
    nw_team_destroy(nullptr);
}

TEST_F(TeamCapi, ExplicitCpuList) {
    unsigned first = 0;
    const int node0 = nw_machine_node_os_index(machine, 0);
    ASSERT_EQ(nw_machine_node_cpus(machine, static_cast<unsigned>(node0), &first, 1) > 0, true);
    nw_team_mapping map{};
    map.cpus = &first;
    map.cpu_count = 1;
    nw_team_t* team = nullptr;
    ASSERT_EQ(nw_team_create(machine, &map, &team), 0) << nw_error_message();
    unsigned cpu = 99;
    ASSERT_EQ(nw_team_rank_place(team, 0, &cpu, nullptr), 0);
    EXPECT_EQ(cpu, first);
    nw_team_destroy(team);
}

TEST_F(TeamCapi, BadInputIsMinusOneWithErrnoAndAMessage) {
    nw_team_t* team = reinterpret_cast<nw_team_t*>(0x1);   // must stay untouched on failure
    nw_team_mapping map{};
    auto expect_einval = [&](const char* text) {
        errno = 0;
        EXPECT_EQ(nw_team_create(machine, &map, &team), -1) << text;
        EXPECT_EQ(errno, EINVAL) << text;
        EXPECT_NE(std::string(nw_error_message()).find(text), std::string::npos) << nw_error_message();
        EXPECT_EQ(team, reinterpret_cast<nw_team_t*>(0x1));
    };
    map.threads = 0;
    expect_einval("threads=0");
    map.threads = 100000;
    expect_einval("threads=100000 exceeds");
    map.threads = 1;
    map.kind = 7;
    expect_einval("mapping.kind: is 7");
    map.kind = NW_TEAM_CONTIGUOUS;
    map.nodes = 1000;
    expect_einval("nodes=1000 exceeds");
    map.nodes = 0;
    const unsigned bogus[] = {100000};
    map.cpus = bogus;
    map.cpu_count = 1;
    map.threads = 0;
    expect_einval("cpus[0]: CPU 100000 is not in this machine");
    map.cpus = nullptr;
    expect_einval("mapping.cpus: is NULL");

    EXPECT_EQ(nw_team_create(nullptr, &map, &team), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(nw_team_run(nullptr, record, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(nw_team_size(nullptr), -1);
    EXPECT_EQ(nw_team_barrier(nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
}

}  // namespace
