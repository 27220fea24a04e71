// NUMA balancing: state names, switching through the fake, the guard's
// restore, the error texts, and the exempt-range rule.
#include <gtest/gtest.h>

#include <cerrno>
#include <functional>

#include "numaware/balancing.hpp"
#include "numaware/error.hpp"
#include "os/balancing.hpp"
#include "os/recording_os.hpp"

namespace numaware {
namespace {

TEST(Balancing, StateNamesRoundTrip) {
    EXPECT_EQ(to_string(BalancingState::off), "off");
    EXPECT_EQ(to_string(BalancingState::normal), "normal");
    EXPECT_EQ(to_string(BalancingState::memory_tiering), "memory-tiering");
    EXPECT_EQ(to_string(BalancingState::normal_and_memory_tiering), "normal+memory-tiering");
    for (int v = 0; v <= 3; ++v) {
        const auto s = static_cast<BalancingState>(v);
        EXPECT_EQ(parse_balancing_state(to_string(s)), s);
        EXPECT_EQ(parse_balancing_state(std::to_string(v)), s);
    }
    try {
        parse_balancing_state("4", "--state");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "--state");
        EXPECT_NE(std::string(e.what()).find("expected off, normal"), std::string::npos);
    }
}

TEST(Balancing, ReadsAndWritesThroughTheOsLayer) {
    os::RecordingOs fake(2, 1);
    fake.set_numa_balancing(2);
    EXPECT_EQ(os::read_balancing(fake), BalancingState::memory_tiering);
    os::write_balancing(fake, BalancingState::normal);
    EXPECT_EQ(fake.numa_balancing(), 1);
    EXPECT_EQ(fake.calls().back().to_string(), "write_numa_balancing(1) = 0");
}

TEST(Balancing, GuardSwitchesOffAndRestores) {
    os::RecordingOs fake(2, 1);
    fake.set_numa_balancing(3);
    {
        BalancingGuard guard(BalancingState::off, fake);
        EXPECT_TRUE(guard.changed());
        EXPECT_EQ(guard.previous(), BalancingState::normal_and_memory_tiering);
        EXPECT_EQ(fake.numa_balancing(), 0);
    }
    EXPECT_EQ(fake.numa_balancing(), 3);
}

TEST(Balancing, GuardWritesNothingWhenAlreadyInState) {
    os::RecordingOs fake(2, 1);
    fake.set_numa_balancing(0);
    fake.set_balancing_write_error(EPERM);   // unprivileged: would fail if it wrote
    {
        BalancingGuard guard(BalancingState::off, fake);
        EXPECT_FALSE(guard.changed());
    }
    EXPECT_TRUE(fake.calls(os::CallKind::write_numa_balancing).empty());
}

void expect_balancing_error(const std::function<void()>& fn, int code, const std::string& fragment) {
    try {
        fn();
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "numa_balancing");
        EXPECT_EQ(e.code(), code);
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

TEST(Balancing, PermissionAndMissingKernelSupportGiveClearErrors) {
    os::RecordingOs fake(2, 1);
    fake.set_numa_balancing(1);
    fake.set_balancing_write_error(EPERM);
    expect_balancing_error([&] { BalancingGuard g(BalancingState::off, fake); }, EPERM, "needs root");
    EXPECT_EQ(fake.numa_balancing(), 1);
    fake.set_balancing_write_error(EACCES);
    expect_balancing_error([&] { os::write_balancing(fake, BalancingState::off); }, EACCES, "not permitted");
    fake.set_numa_balancing(std::nullopt);
    expect_balancing_error([&] { os::read_balancing(fake); }, ENOENT, "kernel built without NUMA balancing");
    os::RecordingOs fake2(2, 1);
    fake2.set_numa_balancing(7);
    expect_balancing_error([&] { os::read_balancing(fake2); }, EINVAL, "holds 7");
    fake2.fail_call(os::CallKind::write_numa_balancing, EINVAL);
    expect_balancing_error([&] { os::write_balancing(fake2, BalancingState::memory_tiering); }, EINVAL, "5.18");
}

TEST(Balancing, GuardRestoreFailureDoesNotThrow) {
    os::RecordingOs fake(2, 1);
    fake.set_numa_balancing(1);
    {
        BalancingGuard guard(BalancingState::off, fake);
        fake.set_balancing_write_error(EPERM);
    }
    EXPECT_EQ(fake.numa_balancing(), 0);   // restore was refused; nothing thrown
    EXPECT_EQ(fake.calls().back().result, EPERM);
}

TEST(Balancing, ExemptRangesFollowTheMigrateOnFaultRule) {
    const auto records = os::parse_numa_maps(
        "1000 default anon=1 N0=1 kernelpagesize_kB=4\n"
        "2000 bind:0-1 anon=3 N0=2 N1=1 kernelpagesize_kB=4\n"
        "3000 bind=balancing:1 anon=1 N1=1 kernelpagesize_kB=4\n"
        "4000 interleave:0-3 anon=4 N0=1 N1=1 N2=1 N3=1 kernelpagesize_kB=4\n"
        "5000 prefer (many):1-2\n"
        "6000 default file=/dev/hugepages/a huge N0=1 kernelpagesize_kB=2048\n");
    const auto ex = os::exempt_ranges(records);
    ASSERT_EQ(ex.size(), 4u);
    EXPECT_EQ(ex[0].address, 0x2000u);
    EXPECT_TRUE(ex[0].bound);
    EXPECT_EQ(ex[0].pages, 3u);
    EXPECT_EQ(ex[0].reason, "bound to nodes 0-1 (MPOL_BIND)");
    EXPECT_EQ(ex[1].address, 0x4000u);
    EXPECT_FALSE(ex[1].bound);
    EXPECT_NE(ex[1].reason.find("'interleave'"), std::string::npos);
    EXPECT_EQ(ex[2].policy, "prefer (many):1-2");
    EXPECT_EQ(ex[3].address, 0x6000u);
    EXPECT_NE(ex[3].reason.find("hugetlbfs"), std::string::npos);
}

TEST(Balancing, ExemptRangesOfThisProcessIncludeABoundMapping) {
    os::RecordingOs fake(2, 1);
    EXPECT_THROW(os::exempt_ranges(fake, 0), Error);
    fake.set_numa_maps_text(0, "7f00 bind:1 anon=2 N1=2 kernelpagesize_kB=4\n");
    const auto ex = os::exempt_ranges(fake, 0);
    ASSERT_EQ(ex.size(), 1u);
    EXPECT_TRUE(ex[0].bound);
}

}  // namespace
}  // namespace numaware
