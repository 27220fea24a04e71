// Unit tests of the engine's large blocks (src/heap/large_cache.cpp): reuse
// of freed extents where they are, split and coalescing, zeroed memory that
// is not cleared twice, the resident bound, decay, release, and resizing in
// place. Each test works in a fresh owner arena, so what it sees is its own.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "heap/engine.hpp"
#include "support.hpp"
#include "heap/size_classes.hpp"
#include "numaware/placement.hpp"
#include "os/os.hpp"

namespace numaware {
namespace {

using heap::ArenaId;
constexpr std::size_t MiB = std::size_t{1} << 20;


// Resident 4 KiB pages of [p, p + n), from mincore; pages no longer
// mapped (a region given back whole) count as not resident.
std::size_t resident_pages(const void* p, std::size_t n) {
    auto at = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095};
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(p) + n;
    std::size_t count = 0;
    unsigned char v[16];
    for (; at < end; at += sizeof v * 4096) {
        const std::size_t len = std::min<std::size_t>(sizeof v * 4096, (end - at + 4095) & ~std::uintptr_t{4095});
        if (mincore(reinterpret_cast<void*>(at), len, v) != 0) {
            EXPECT_EQ(errno, ENOMEM) << std::strerror(errno);
            continue;
        }
        for (std::size_t i = 0; i < len / 4096; ++i) count += v[i] & 1;
    }
    return count;
}

std::uint64_t mapped_bytes() {
    heap::NodeStats s;
    EXPECT_TRUE(heap::node_stats(0, s));
    return s.pages_mapped * 4096;
}

TEST(HeapLargeBlocks, AFreedBlockIsReusedWhereItWasAndStaysBoundToItsNode) {
    const ArenaId a = test::fresh_heap_arena();
    auto* p = static_cast<char*>(heap::allocate(6 * MiB, a));
    ASSERT_NE(p, nullptr);
    std::memset(p, 3, 6 * MiB);
    heap::deallocate(p);
    heap::BlockInfo info;
    EXPECT_FALSE(heap::block_info(p, info)) << "a freed extent is not a block";
    EXPECT_EQ(heap::usable_size(p), 0u);
    // Its pages are still resident (dirty), and the next block of that size
    // takes them instead of faulting fresh ones.
    EXPECT_GT(resident_pages(p, 6 * MiB), 0u);
    auto* q = static_cast<char*>(heap::allocate(6 * MiB, a));
    EXPECT_EQ(q, p);
    ASSERT_TRUE(heap::block_info(q, info));
    EXPECT_TRUE(info.large);
    EXPECT_EQ(info.arena, a);
    os::PolicyQuery pq;
    ASSERT_EQ(os::linux_os().get_mempolicy(q + 5 * MiB, pq), 0);
    EXPECT_EQ(pq.mode, os::PolicyMode::bind);
    EXPECT_EQ(pq.nodes, NodeSet{info.node});
    heap::deallocate(q);
}

TEST(HeapLargeBlocks, NeighboursCoalesceAndASmallerBlockSplitsAFreeOne) {
    const ArenaId a = test::fresh_heap_arena();
    // Blocks are carved one after another from the arena's first region.
    auto* x = static_cast<char*>(heap::allocate(2 * MiB, a));
    auto* y = static_cast<char*>(heap::allocate(2 * MiB, a));
    auto* z = static_cast<char*>(heap::allocate(1 * MiB, a));
    ASSERT_TRUE(x != nullptr && y != nullptr && z != nullptr);
    ASSERT_EQ(y, x + 2 * MiB);
    ASSERT_EQ(z, y + 2 * MiB);
    std::memset(x, 1, 5 * MiB);
    heap::deallocate(x);
    heap::deallocate(y);
    // x and y became one free extent: a 4 MiB block fits there exactly.
    auto* xy = static_cast<char*>(heap::allocate(4 * MiB, a));
    EXPECT_EQ(xy, x);
    heap::deallocate(xy);
    // A smaller block takes the front of it; the rest stays free.
    auto* small = static_cast<char*>(heap::allocate(1 * MiB + 1, a));
    EXPECT_EQ(small, x);
    EXPECT_EQ(heap::usable_size(small), 1 * MiB + heap::kPageBytes);
    auto* rest = static_cast<char*>(heap::allocate(2 * MiB, a));
    EXPECT_EQ(rest, x + 1 * MiB + heap::kPageBytes);
    heap::deallocate(small);
    heap::deallocate(rest);
    heap::deallocate(z);
}

TEST(HeapLargeBlocks, ZeroedBlocksAreClearedOnlyWhenTheirMemoryWasUsed) {
    const ArenaId a = test::fresh_heap_arena();
    // Fresh from the kernel: zero without a write, so no page is resident.
    auto* fresh = static_cast<unsigned char*>(heap::allocate_zeroed(3 * MiB, a));
    ASSERT_NE(fresh, nullptr);
    EXPECT_EQ(resident_pages(fresh, 3 * MiB), 0u);
    for (std::size_t i = 0; i < 3 * MiB; i += 4096) ASSERT_EQ(fresh[i], 0) << i;
    std::memset(fresh, 0xab, 3 * MiB);
    heap::deallocate(fresh);
    // The same memory again, dirty now: cleared.
    auto* again = static_cast<unsigned char*>(heap::allocate_zeroed(3 * MiB, a));
    ASSERT_EQ(again, fresh);
    for (std::size_t i = 0; i < 3 * MiB; ++i) ASSERT_EQ(again[i], 0) << i;
    heap::deallocate(again);
    // Small blocks are always cleared.
    auto* s = static_cast<unsigned char*>(heap::allocate(1000, a));
    std::memset(s, 0xcd, 1000);
    heap::deallocate(s);
    auto* z = static_cast<unsigned char*>(heap::allocate_zeroed(1000, a));
    for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(z[i], 0) << i;
    heap::deallocate(z);
}

TEST(HeapLargeBlocks, LivePlusDirtyBytesStayWithinTheBoundOfThePeak) {
    // The benchmark's pattern, smaller: 12 buffers of 1-6 MiB, a random one
    // replaced 300 times (new made before old freed). After every step the
    // bytes the engine holds mapped must stay within 19/16 of the highest
    // live bytes so far, plus the 16 MiB floor and the huge-page edges of
    // clean extents (at most 2 MiB per extent; few here).
    const ArenaId a = test::fresh_heap_arena();
    const std::uint64_t base = mapped_bytes();
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::size_t> size(1 * MiB, 6 * MiB);
    std::vector<void*> buf(12, nullptr);
    std::vector<std::size_t> bytes(12, 0);
    std::size_t live = 0, peak = 0, worst_excess = 0;
    for (int step = 0; step < 312; ++step) {
        const std::size_t i = step < 12 ? static_cast<std::size_t>(step) : rng() % 12;
        const std::size_t n = size(rng);
        void* p = heap::allocate(n, a);
        ASSERT_NE(p, nullptr);
        std::memset(p, 1, n);
        live += heap::usable_size(p);
        peak = std::max(peak, live);
        if (buf[i] != nullptr) {
            live -= heap::usable_size(buf[i]);
            heap::deallocate(buf[i]);
        }
        buf[i] = p;
        bytes[i] = n;
        const std::uint64_t held = mapped_bytes() - base;
        const std::uint64_t bound = peak + peak / 16 * 3 + 16 * MiB + 8 * 2 * MiB;
        ASSERT_LE(held, bound) << "step " << step << ": live " << live << ", peak " << peak;
        if (held > live) worst_excess = std::max<std::size_t>(worst_excess, held - live);
    }
    // And the cache is used: something freed was held for reuse.
    EXPECT_GT(worst_excess, 0u);
    for (void* p : buf) heap::deallocate(p);
}

TEST(HeapLargeBlocks, FreedMemoryGoesBackAfterTheDecayPeriodOrAtOnceWhenAsked) {
    const ArenaId a = test::fresh_heap_arena();
    std::vector<char*> v;
    for (int i = 0; i < 48; ++i) {
        auto* p = static_cast<char*>(heap::allocate(1 * MiB, a));
        ASSERT_NE(p, nullptr);
        std::memset(p, 1, 1 * MiB);
        v.push_back(p);
    }
    for (char* p : v) heap::deallocate(p);
    std::size_t kept = 0;
    for (char* p : v) kept += resident_pages(p, 1 * MiB);
    EXPECT_GT(kept, 0u) << "freed memory is cached for a while";
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    // The next large call of the arena purges what decayed.
    void* t = heap::allocate(1 * MiB, a);
    std::size_t left = 0;
    for (char* p : v) left += resident_pages(p, 1 * MiB);
    // The new block may take (and touch) some of the old pages.
    EXPECT_LE(left, resident_pages(t, 1 * MiB) + 2 * MiB / 4096) << "of " << kept << " pages kept";
    heap::deallocate(t);
    // release_free_memory (malloc_trim) does not wait.
    auto* u = static_cast<char*>(heap::allocate(8 * MiB, a));
    std::memset(u, 1, 8 * MiB);
    heap::deallocate(u);
    EXPECT_GT(resident_pages(u, 8 * MiB), 0u);
    EXPECT_GE(heap::release_free_memory(), 8 * MiB);
    EXPECT_EQ(resident_pages(u, 8 * MiB), 0u);
}

TEST(HeapLargeBlocks, ReallocateGrowsAndShrinksALargeBlockInPlace) {
    const ArenaId a = test::fresh_heap_arena();
    auto* p = static_cast<char*>(heap::allocate(1 * MiB, a));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < 1 * MiB; ++i) p[i] = static_cast<char>(i * 7);
    // The region's free memory follows p: growing takes it.
    auto* q = static_cast<char*>(heap::reallocate(p, 3 * MiB));
    ASSERT_EQ(q, p);
    EXPECT_EQ(heap::usable_size(q), 3 * MiB);
    for (std::size_t i = 0; i < 1 * MiB; ++i) ASSERT_EQ(q[i], static_cast<char>(i * 7)) << i;
    std::memset(q + 1 * MiB, 2, 2 * MiB);
    // Shrinking gives the tail back, and a new block can take it.
    auto* r = static_cast<char*>(heap::reallocate(q, 512 * 1024));
    ASSERT_EQ(r, p);
    EXPECT_EQ(heap::usable_size(r), 512u * 1024);
    auto* tail = static_cast<char*>(heap::allocate(2 * MiB, a));
    EXPECT_EQ(tail, p + 512 * 1024);
    // Now p cannot grow: a live block follows it; it moves, contents kept.
    auto* m = static_cast<char*>(heap::reallocate(r, 2 * MiB));
    ASSERT_NE(m, nullptr);
    EXPECT_NE(m, p);
    for (std::size_t i = 0; i < 512 * 1024; ++i) ASSERT_EQ(m[i], static_cast<char>(i * 7)) << i;
    heap::deallocate(m);
    heap::deallocate(tail);
}

TEST(HeapLargeBlocks, AlignedLargeBlocksFromCachedExtentsHonourTheirAlignment) {
    const ArenaId a = test::fresh_heap_arena();
    std::vector<void*> v;
    for (int i = 0; i < 6; ++i) v.push_back(heap::allocate(3 * MiB + 12345, a));
    for (void* p : v) heap::deallocate(p);
    for (std::size_t al = 128 * 1024; al <= 8 * MiB; al *= 2) {
        void* p = heap::allocate_aligned(2 * MiB + 1, al, a);
        ASSERT_NE(p, nullptr) << al;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % al, 0u) << al;
        EXPECT_GE(heap::usable_size(p), 2 * MiB + 1);
        std::memset(p, 5, 2 * MiB + 1);
        heap::deallocate(p);
    }
}

}  // namespace
}  // namespace numaware
