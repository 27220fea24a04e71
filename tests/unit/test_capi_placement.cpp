// The C face of placement (nw_range_* and nw_thread_set_mempolicy) and the
// `numaware place` command, on this machine's real kernel: whatever its node
// count, node 0 exists and bind:0 / interleave:all must place every page
// where the plan says.
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/c/error.h"
#include "numaware/c/machine.h"
#include "numaware/c/placement.h"
#include "numaware/placement.hpp"

namespace {

constexpr std::size_t kBytes = 64 * 4096;

struct Mapping {
    void* addr = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ~Mapping() { ::munmap(addr, kBytes); }
};

TEST(PlacementCApi, PlaceVerifyAndMigrateOnThisMachine) {
    Mapping m;
    ASSERT_NE(m.addr, MAP_FAILED);
    nw_place_report r{};
    ASSERT_EQ(nw_range_place(m.addr, kBytes, "bind:0", &r), 0) << nw_error_message();
    EXPECT_EQ(r.pages, 64u);
    EXPECT_EQ(r.matched, 64u);
    EXPECT_EQ(r.intended[0], 64u);
    EXPECT_EQ(r.actual[0], 64u);
    EXPECT_EQ(r.mismatched + r.unplaced, 0u);
    EXPECT_NE(std::string(r.realisation).find("mbind(bind, 0)"), std::string::npos) << r.realisation;
    EXPECT_EQ(nw_range_verify(m.addr, kBytes, "bind:0", &r), 0) << nw_error_message();
    EXPECT_EQ(nw_range_migrate(m.addr, kBytes, "interleave:all", &r), 0) << nw_error_message();
    EXPECT_EQ(r.matched, 64u);
}

// A bound range is remembered (numaware/placement.hpp, placed_bytes) until
// nw_range_forget; bad input leaves the record as it was.
TEST(PlacementCApi, ForgetDropsWhatPlaceRemembered) {
    Mapping m;
    ASSERT_NE(m.addr, MAP_FAILED);
    ASSERT_EQ(nw_range_place(m.addr, kBytes, "bind:0", nullptr), 0) << nw_error_message();
    ASSERT_TRUE(numaware::placed_bytes(m.addr, kBytes));
    errno = 0;
    EXPECT_EQ(nw_range_forget(nullptr, kBytes), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("addr"), std::string::npos) << nw_error_message();
    EXPECT_EQ(nw_range_forget(m.addr, SIZE_MAX), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("wrap"), std::string::npos) << nw_error_message();
    EXPECT_TRUE(numaware::placed_bytes(m.addr, kBytes));
    EXPECT_EQ(nw_range_forget(m.addr, kBytes), 0) << nw_error_message();
    EXPECT_FALSE(numaware::placed_bytes(m.addr, kBytes));
    EXPECT_EQ(nw_range_forget(nullptr, 0), 0);   // nothing named, nothing to forget
}

TEST(PlacementCApi, VerifyReportsAbsentPages) {
    Mapping m;
    ASSERT_NE(m.addr, MAP_FAILED);
    nw_place_report r{};
    // Nothing touched yet: every page is reported, as not present.
    EXPECT_EQ(nw_range_verify(m.addr, kBytes, "first-touch", &r), 1);
    EXPECT_EQ(r.unplaced, 64u);
}

TEST(PlacementCApi, BadInputIsMinusOneWithErrnoAndMessage) {
    Mapping m;
    ASSERT_NE(m.addr, MAP_FAILED);
    errno = 0;
    EXPECT_EQ(nw_range_place(m.addr, kBytes, "bind:999", nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("policy 'bind:999': node 999"), std::string::npos) << nw_error_message();
    EXPECT_EQ(nw_range_place(m.addr, kBytes, nullptr, nullptr), -1);
    EXPECT_NE(std::string(nw_error_message()).find("policy_spec"), std::string::npos) << nw_error_message();
    EXPECT_EQ(nw_range_place(static_cast<char*>(m.addr) + 1, kBytes, "bind:0", nullptr), -1);
    EXPECT_NE(std::string(nw_error_message()).find("not aligned"), std::string::npos) << nw_error_message();
    EXPECT_EQ(nw_thread_set_mempolicy("cyclic:0"), -1);
    EXPECT_NE(std::string(nw_error_message()).find("cannot be a process policy"), std::string::npos) << nw_error_message();
}

TEST(PlacementCApi, PlanOnASyntheticMachine) {
    nw_machine_t* machine = nullptr;
    ASSERT_EQ(nw_machine_load("nodes=4 cpus=1,1,1,0 mem-per-node=256M "
                              "distances=10,21,31,31/21,10,21,31/31,21,10,21/31,31,21,10",
                              &machine),
              0)
        << nw_error_message();
    const void* base = reinterpret_cast<const void*>(0x10000000);   // page number divisible by 4
    std::vector<int> nodes(6, -2);
    EXPECT_EQ(nw_range_plan(machine, base, 6 * 4096, "interleave:all", -1, nodes.data(), nodes.size()), 6);
    EXPECT_EQ(nodes, (std::vector<int>{0, 1, 2, 3, 0, 1}));
    EXPECT_EQ(nw_range_plan(machine, base, 6 * 4096, "remote", 3 - 1, nodes.data(), 2), 6);   // cpu 2 on node 2
    EXPECT_EQ(nodes[0], 1);   // 2->1 and 2->3 both 21: the lower index
    EXPECT_EQ(nw_range_plan(machine, base, 4096, "local:node=3", -1, nodes.data(), 1), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("node 3 has no CPUs"), std::string::npos) << nw_error_message();
    nw_machine_destroy(machine);
}

int run(const std::string& command, std::string& out) {
    out.clear();
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return -1;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    const int status = ::pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PlaceCommand, ShowsPlanAndKernelAndChecks) {
    std::string out;
    ASSERT_EQ(run(std::string(NUMAWARE_CLI) + " place --size 1M --policy bind:0 --policy interleave:all", out), 0) << out;
    EXPECT_NE(out.find("bind:0"), std::string::npos) << out;
    EXPECT_NE(out.find("MADV_NOHUGEPAGE"), std::string::npos) << out;
    EXPECT_NE(out.find("✓"), std::string::npos) << out;
    EXPECT_NE(out.find("2 of 2 policies placed every page"), std::string::npos) << out;

    ASSERT_EQ(run(std::string(NUMAWARE_CLI) + " place --size 1M --policy bind:0 --json", out), 0) << out;
    EXPECT_NE(out.find("\"ok\": true"), std::string::npos) << out;
    EXPECT_NE(out.find("\"matched\": 256"), std::string::npos) << out;

    // A policy that cannot be placed fails the row and the exit status.
    EXPECT_EQ(run(std::string(NUMAWARE_CLI) + " place --size 1M --policy bind:999", out), 1) << out;
    EXPECT_NE(out.find("policy 'bind:999': node 999 is not in this machine"), std::string::npos) << out;
    EXPECT_NE(run(std::string(NUMAWARE_CLI) + " place --size 0 --policy bind:0", out), 0) << out;
    EXPECT_NE(out.find("--size"), std::string::npos) << out;
}

}  // namespace
