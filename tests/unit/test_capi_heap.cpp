// The heap's C API: NULL/-1/0 + errno + nw_error_message() for every bad input,
// and the same owners, sizes and statistics as the C++ API.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "numaware/numaware.h"
#include "support.hpp"

namespace {

using numaware::test::contains;

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

// Checks the failure a C call just reported.
void expect_failure(int expected_errno, const std::string& text) {
    EXPECT_EQ(errno, expected_errno) << nw_error_message();
    EXPECT_TRUE(contains(nw_error_message(), text)) << nw_error_message() << " lacks " << text;
}

TEST(HeapCapi, OwnerHelpers) {
    const nw_owner_t n = nw_owner_node(3);
    const nw_owner_t r = nw_owner_rank(5);
    EXPECT_EQ(n.kind, NW_OWNER_NODE);
    EXPECT_EQ(n.id, 3u);
    EXPECT_EQ(r.kind, NW_OWNER_RANK);
    EXPECT_EQ(r.id, 5u);
}

TEST(HeapCapi, AllocFreeOwnerOfOnNode0) {
    void* p = nw_psm_alloc(1000, nw_owner_node(0));
    ASSERT_NE(p, nullptr) << nw_error_message();
    nw_psm_owner_info info{};
    ASSERT_EQ(nw_psm_owner_of(p, &info), 0) << nw_error_message();
    EXPECT_EQ(info.node, 0u);
    EXPECT_EQ(info.owner.kind, NW_OWNER_NODE);
    EXPECT_EQ(info.owner.id, 0u);
    EXPECT_EQ(info.large, 0);
    EXPECT_GE(info.usable_size, 1000u);
    EXPECT_EQ(nw_psm_usable_size(p), info.usable_size);
    EXPECT_EQ(nw_psm_free(p), 0);
    EXPECT_EQ(nw_psm_free(nullptr), 0);
}

TEST(HeapCapi, BadOwnersFailWithEinval) {
    errno = 0;
    EXPECT_EQ(nw_psm_alloc(64, nw_owner_node(1)), nullptr);
    expect_failure(EINVAL, "owner: node 1 has no heap");
    EXPECT_EQ(nw_psm_alloc(64, nw_owner_rank(900)), nullptr);
    expect_failure(EINVAL, "rank 900 is not registered");
    nw_owner_t odd{};
    odd.kind = 7;
    EXPECT_EQ(nw_psm_alloc(64, odd), nullptr);
    expect_failure(EINVAL, "owner.kind: is 7");
    EXPECT_EQ(nw_psm_calloc(2, 2, odd), nullptr);
    expect_failure(EINVAL, "owner.kind");
    EXPECT_EQ(nw_psm_aligned_alloc(64, 64, odd), nullptr);
    expect_failure(EINVAL, "owner.kind");
}

TEST(HeapCapi, OutOfMemoryFailsWithEnomem) {
    EXPECT_EQ(nw_psm_alloc(size_max / 2, nw_owner_node(0)), nullptr);
    expect_failure(ENOMEM, std::to_string(size_max / 2) + " bytes for node 0");
}

TEST(HeapCapi, CallocReallocAligned) {
    auto* z = static_cast<unsigned char*>(nw_psm_calloc(100, 10, nw_owner_node(0)));
    ASSERT_NE(z, nullptr) << nw_error_message();
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(z[i], 0);
    z[999] = 9;
    z = static_cast<unsigned char*>(nw_psm_realloc(z, 100000));
    ASSERT_NE(z, nullptr) << nw_error_message();
    EXPECT_EQ(z[999], 9);
    EXPECT_GE(nw_psm_usable_size(z), 100000u);
    EXPECT_EQ(nw_psm_free(z), 0);

    EXPECT_EQ(nw_psm_calloc(size_max / 2 + 1, 2, nw_owner_node(0)), nullptr);
    expect_failure(EINVAL, "n * size");
    EXPECT_EQ(nw_psm_realloc(nullptr, 8), nullptr);
    expect_failure(EINVAL, "p: is NULL");

    void* a = nw_psm_aligned_alloc(8192, 10, nw_owner_node(0));
    ASSERT_NE(a, nullptr) << nw_error_message();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 8192, 0u);
    EXPECT_EQ(nw_psm_free(a), 0);
    EXPECT_EQ(nw_psm_aligned_alloc(24, 10, nw_owner_node(0)), nullptr);
    expect_failure(EINVAL, "alignment: is 24; it must be a power of two");
}

TEST(HeapCapi, ForeignPointersFail) {
    int local = 0;
    EXPECT_EQ(nw_psm_free(&local), -1);
    expect_failure(EINVAL, "not a live block");
    errno = 0;
    EXPECT_EQ(nw_psm_usable_size(&local), 0u);
    expect_failure(EINVAL, "not a live block");
    nw_psm_owner_info info{};
    EXPECT_EQ(nw_psm_owner_of(&local, &info), -1);
    expect_failure(EINVAL, "not a live block");
    void* p = nw_psm_alloc(8, nw_owner_node(0));
    EXPECT_EQ(nw_psm_owner_of(p, nullptr), -1);
    expect_failure(EINVAL, "out: is NULL");
    EXPECT_EQ(nw_psm_free(p), 0);
}

TEST(HeapCapi, NodeStats) {
    nw_psm_stats before{};
    ASSERT_EQ(nw_psm_node_stats(0, &before), 0) << nw_error_message();
    void* p = nw_psm_alloc(std::size_t{8} << 20, nw_owner_node(0));
    ASSERT_NE(p, nullptr);
    nw_psm_stats during{};
    ASSERT_EQ(nw_psm_node_stats(0, &during), 0);
    EXPECT_EQ(during.bytes_in_use, before.bytes_in_use + nw_psm_usable_size(p));
    EXPECT_EQ(nw_psm_free(p), 0);
    EXPECT_EQ(nw_psm_node_stats(1, &during), -1);
    expect_failure(EINVAL, "node: node 1 has no heap");
    EXPECT_EQ(nw_psm_node_stats(0, nullptr), -1);
    expect_failure(EINVAL, "out: is NULL");
}

TEST(HeapCapi, RegisterTeamGivesItsRanksOwners) {
    EXPECT_EQ(nw_psm_register_team(nullptr), -1);
    expect_failure(EINVAL, "team: is NULL");

    nw_machine_t* machine = nullptr;
    ASSERT_EQ(nw_machine_load("live", &machine), 0) << nw_error_message();
    nw_team_mapping map{};
    map.threads = 1;
    map.kind = NW_TEAM_CONTIGUOUS;
    nw_team_t* team = nullptr;
    ASSERT_EQ(nw_team_create(machine, &map, &team), 0) << nw_error_message();
    ASSERT_EQ(nw_psm_register_team(team), 0) << nw_error_message();
    unsigned node = 99;
    ASSERT_EQ(nw_team_rank_place(team, 0, nullptr, &node), 0);

    void* p = nw_psm_alloc(256, nw_owner_rank(0));
    ASSERT_NE(p, nullptr) << nw_error_message();
    nw_psm_owner_info info{};
    ASSERT_EQ(nw_psm_owner_of(p, &info), 0);
    EXPECT_EQ(info.owner.kind, NW_OWNER_RANK);
    EXPECT_EQ(info.owner.id, 0u);
    EXPECT_EQ(info.node, node);
    EXPECT_EQ(nw_psm_free(p), 0);
    nw_team_destroy(team);
    nw_machine_destroy(machine);
}

}  // namespace
