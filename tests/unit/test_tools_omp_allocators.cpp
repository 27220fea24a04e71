// The OpenMP shim's allocator decisions (tools/omp/allocators.hpp): traits
// read as omp_init_allocator receives them, memory spaces on machines with
// tiers and HBM, and where an allocation goes. The allocators themselves
// run under real OpenMP programs in the `omp.constructs` test
// (tests/omp/allocators.c) and, for placement, in the emulated guests.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/machine.hpp"
#include "tools/omp/allocators.hpp"

namespace omp = numaware::omp;
using numaware::Machine;

namespace {

constexpr std::uintptr_t atv_default = ~std::uintptr_t{0};

std::optional<omp::AllocatorSpec> read(std::uintptr_t space, std::vector<omp::AllocTrait> traits,
                                       std::string* why = nullptr) {
    return omp::read_allocator(space, traits, why);
}

TEST(OmpAllocators, TraitsAreReadAsOmpHNumbersThem) {
    const auto s = read(0, {{2, 64}, {4, 1 << 20}, {5, 12}, {7, 1}, {8, 18}, {1, 3}, {3, 8}});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->space, omp::MemSpace::default_);
    EXPECT_EQ(s->alignment, 64u);
    EXPECT_EQ(s->pool_size, 1u << 20);
    EXPECT_EQ(s->fallback, omp::Fallback::null);
    EXPECT_TRUE(s->pinned);
    EXPECT_EQ(s->partition, omp::Partition::interleaved);
    const auto d = read(3, {{2, atv_default}, {5, atv_default}, {8, atv_default}});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->space, omp::MemSpace::high_bw);
    EXPECT_EQ(d->alignment, 1u);
    EXPECT_EQ(d->fallback, omp::Fallback::default_mem);
    EXPECT_EQ(d->partition, omp::Partition::environment);
    const auto fb = read(0, {{5, 14}, {6, 1}});
    ASSERT_TRUE(fb);
    EXPECT_EQ(fb->fallback, omp::Fallback::allocator);
    EXPECT_EQ(fb->fb_data, 1u);
}

TEST(OmpAllocators, BadTraitsAreRefusedNamingTheProblem) {
    std::string why;
    EXPECT_FALSE(read(5, {}, &why));
    EXPECT_EQ(why, "memory space 5 is not one of OpenMP 5.0's (0 to 4)");
    EXPECT_FALSE(read(0, {{2, 48}}, &why));
    EXPECT_EQ(why, "alignment 48 is not a power of two");
    EXPECT_FALSE(read(0, {{2, 0}}, &why));
    EXPECT_FALSE(read(0, {{9, 1}}, &why));
    EXPECT_EQ(why, "trait key 9 is not one of OpenMP 5.0's (1 to 8)");
    EXPECT_FALSE(read(0, {{8, 12}}, &why));
    EXPECT_NE(why.find("partition value 12"), std::string::npos);
    EXPECT_FALSE(read(0, {{5, 14}}, &why));
    EXPECT_EQ(why, "fallback allocator_fb needs an fb_data allocator");
    EXPECT_EQ(read(0, {{6, 1}})->fallback, omp::Fallback::default_mem);   // fb_data alone: ignored
    EXPECT_FALSE(read(0, {{7, 2}}, &why));
    EXPECT_FALSE(read(0, {{3, 2}}, &why));
    EXPECT_FALSE(read(0, {{1, 0}}, &why));
}

TEST(OmpAllocators, PredefinedAllocatorsAndTheirSpaces) {
    EXPECT_EQ(omp::predefined_allocator(1)->space, omp::MemSpace::default_);
    EXPECT_EQ(omp::predefined_allocator(2)->space, omp::MemSpace::large_cap);
    EXPECT_EQ(omp::predefined_allocator(4)->space, omp::MemSpace::high_bw);
    EXPECT_EQ(omp::predefined_allocator(8)->space, omp::MemSpace::low_lat);
    EXPECT_FALSE(omp::predefined_allocator(0));
    EXPECT_FALSE(omp::predefined_allocator(9));
}

// Nodes 0-1 DRAM with CPUs, 2 HBM, 3 CXL (tier 1, no CPUs).
Machine tiered() {
    return Machine::from_spec("nodes=4 cpus=2,2,0,0 mem=512M,512M,128M,1G tiers=0,0,0,1 kinds=DRAM,DRAM,HBM,CXL "
                              "distances=10,20,15,30/20,10,25,30/15,25,10,35/30,30,35,10");
}

TEST(OmpAllocators, MemorySpacesFollowTiersAndKinds) {
    const Machine m = tiered();
    using V = std::vector<unsigned>;
    EXPECT_EQ(omp::memspace_nodes(m, omp::MemSpace::default_), (V{0, 1}));
    EXPECT_EQ(omp::memspace_nodes(m, omp::MemSpace::low_lat), (V{0, 1}));
    EXPECT_EQ(omp::memspace_nodes(m, omp::MemSpace::high_bw), (V{2}));
    EXPECT_EQ(omp::memspace_nodes(m, omp::MemSpace::large_cap), (V{3}));
    const Machine flat = Machine::from_spec("nodes=2 cpus-per-node=1");
    EXPECT_EQ(omp::memspace_nodes(flat, omp::MemSpace::large_cap), (V{0, 1}));
    EXPECT_EQ(omp::memspace_nodes(flat, omp::MemSpace::high_bw), V{});
}

TEST(OmpAllocators, WhereAnAllocationGoes) {
    const Machine m = tiered();
    using K = omp::AllocPlace::Kind;
    omp::AllocatorSpec s;
    EXPECT_EQ(omp::place_allocation(s, m, 1).kind, K::environment);
    s.partition = omp::Partition::nearest;
    EXPECT_EQ(omp::place_allocation(s, m, 1), (omp::AllocPlace{K::node, 1, {}}));
    EXPECT_EQ(omp::place_allocation(s, m, -1), (omp::AllocPlace{K::node, 0, {}}));
    s.partition = omp::Partition::interleaved;
    EXPECT_EQ(omp::place_allocation(s, m, 0), (omp::AllocPlace{K::interleave, 0, {0, 1}}));
    s.partition = omp::Partition::blocked;
    EXPECT_EQ(omp::place_allocation(s, m, 0), (omp::AllocPlace{K::block, 0, {0, 1}}));
    // One node in the space: that node's arena, whatever the partition.
    s.space = omp::MemSpace::high_bw;
    EXPECT_EQ(omp::place_allocation(s, m, 1), (omp::AllocPlace{K::node, 2, {}}));
    s.partition = omp::Partition::environment;   // outside the default space: the nearest node of it
    EXPECT_EQ(omp::place_allocation(s, m, 1), (omp::AllocPlace{K::node, 2, {}}));
    // No HBM at all: the fallback's business.
    EXPECT_EQ(omp::place_allocation(s, Machine::from_spec("nodes=2"), 0).kind, K::none);
    // The nearest of several by distance: from node 1, CXL node 3 is the only large_cap one.
    s.space = omp::MemSpace::large_cap;
    s.partition = omp::Partition::nearest;
    EXPECT_EQ(omp::place_allocation(s, m, 1), (omp::AllocPlace{K::node, 3, {}}));
    // From node 1 the default space's nearest is node 1 itself, from node 0 node 0.
    s.space = omp::MemSpace::default_;
    EXPECT_EQ(omp::place_allocation(s, m, 0).node, 0u);
}

}  // namespace
