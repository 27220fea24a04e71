// The balancing calls of the C API (numaware/c/balancing.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>
#include <cstdio>
#include <sys/mman.h>
#include <unistd.h>

#include "numaware/c/balancing.h"
#include "numaware/c/error.h"
#include "os/os.hpp"

namespace numaware {
namespace {

TEST(BalancingC, GetMatchesTheSysctl) {
    int state = -1;
    FILE* f = std::fopen("/proc/sys/kernel/numa_balancing", "r");
    if (f == nullptr) {
        errno = 0;
        EXPECT_EQ(nw_balancing_get(&state), -1);
        EXPECT_EQ(errno, ENOENT);
        return;
    }
    int expect = -1;
    ASSERT_EQ(std::fscanf(f, "%d", &expect), 1);
    std::fclose(f);
    ASSERT_EQ(nw_balancing_get(&state), 0) << nw_error_message();
    EXPECT_EQ(state, expect);
}

TEST(BalancingC, BadInputIsEINVALWithText) {
    errno = 0;
    EXPECT_EQ(nw_balancing_get(nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(std::string(nw_error_message()), "state: is NULL");
    errno = 0;
    EXPECT_EQ(nw_balancing_set(7), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(nw_error_message()).find("7 is not a NUMA balancing state"), std::string::npos);
    EXPECT_EQ(nw_balancing_exempt_ranges(0, nullptr, nullptr, 4), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST(BalancingC, SettingTheCurrentStateSucceedsOrSaysWhyNot) {
    int state = -1;
    if (nw_balancing_get(&state) != 0) GTEST_FAIL() << "cannot read: " << nw_error_message();
    // Writing the value it already has changes nothing on this shared host.
    if (nw_balancing_set(state) == 0) return;
    EXPECT_TRUE(errno == EPERM || errno == EACCES || errno == EROFS) << errno;
    EXPECT_NE(std::string(nw_error_message()).find("not permitted"), std::string::npos) << nw_error_message();
}

TEST(BalancingC, ExemptRangesListABoundMapping) {
    const std::size_t page = os::linux_os().page_size();
    char* addr = static_cast<char*>(
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(addr, MAP_FAILED);
    ASSERT_EQ(os::linux_os().mbind(addr, 2 * page, os::PolicyMode::bind, NodeSet{0}, 0), 0);
    addr[0] = 1;
    const int total = nw_balancing_exempt_ranges(0, nullptr, nullptr, 0);
    ASSERT_GE(total, 1) << nw_error_message();
    std::vector<uintptr_t> starts(static_cast<std::size_t>(total) + 8);
    std::vector<int> bound(starts.size(), -1);
    const int again = nw_balancing_exempt_ranges(0, starts.data(), bound.data(), starts.size());
    ASSERT_GE(again, 1);
    bool found = false;
    for (int i = 0; i < again && i < static_cast<int>(starts.size()); ++i)
        if (starts[static_cast<std::size_t>(i)] == reinterpret_cast<uintptr_t>(addr)) {
            found = true;
            EXPECT_EQ(bound[static_cast<std::size_t>(i)], 1);
        }
    EXPECT_TRUE(found);
    munmap(addr, 2 * page);
}

}  // namespace
}  // namespace numaware
