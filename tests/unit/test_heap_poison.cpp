// The engine's free memory poisoned for AddressSanitizer (src/heap/poison.hpp):
// freed and never handed-out small blocks, free large extents, the tail
// that realloc gives back; a use after free, an overflow into a free
// neighbour and a double free reported. The asan build runs these; in
// every other build poisoning compiles to nothing, and so do they.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "heap/engine.hpp"
#include "support.hpp"
#include "heap/poison.hpp"

#ifdef NW_HEAP_POISON

namespace numaware {
namespace {

using heap::ArenaId;
constexpr std::size_t MiB = std::size_t{1} << 20;


bool poisoned(const void* p, std::size_t offset = 0) {
    return __asan_address_is_poisoned(static_cast<const char*>(p) + offset) != 0;
}

// The first poisoned byte of [p, p + n), or n if none.
std::size_t first_poisoned(const void* p, std::size_t n) {
    const void* at = __asan_region_is_poisoned(const_cast<void*>(p), n);
    return at == nullptr ? n : static_cast<std::size_t>(static_cast<const char*>(at) - static_cast<const char*>(p));
}

TEST(HeapPoison, ASmallBlockIsPoisonedWhileFreeButForItsLinkWord) {
    const ArenaId a = test::fresh_heap_arena();
    auto* p = static_cast<char*>(heap::allocate(64, a));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(first_poisoned(p, 64), 64u) << "a live block is usable to its end";
    EXPECT_TRUE(poisoned(p, 64)) << "the next block of a fresh span was never handed out";
    heap::deallocate(p);
    EXPECT_FALSE(poisoned(p, 0)) << "the link word stays the engine's";
    EXPECT_EQ(first_poisoned(p, 64), sizeof(void*));
    EXPECT_TRUE(poisoned(p, 63));
    // Handed out again (the arena's list is last in, first out): usable.
    auto* q = static_cast<char*>(heap::allocate(64, a));
    ASSERT_EQ(q, p);
    EXPECT_EQ(first_poisoned(q, 64), 64u);
    heap::deallocate(q);
}

TEST(HeapPoison, ALargeBlockIsUsableToItsEndAndFreeExtentsArePoisoned) {
    const ArenaId a = test::fresh_heap_arena();
    auto* p = static_cast<char*>(heap::allocate(MiB, a));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(first_poisoned(p, MiB), MiB);
    EXPECT_TRUE(poisoned(p, MiB)) << "the rest of the new region is free";
    // realloc gives its tail back in place: poisoned; grows into it again: usable.
    ASSERT_EQ(heap::reallocate(p, MiB / 2), p);
    EXPECT_EQ(first_poisoned(p, MiB), MiB / 2);
    ASSERT_EQ(heap::reallocate(p, MiB), p);
    EXPECT_EQ(first_poisoned(p, MiB), MiB);
    heap::deallocate(p);
    EXPECT_EQ(first_poisoned(p, MiB), 0u);
    EXPECT_TRUE(poisoned(p, MiB - 1));
}

using HeapPoisonDeathTest = ::testing::Test;

TEST(HeapPoisonDeathTest, AUseAfterFreeIsReported) {
    const ArenaId a = test::fresh_heap_arena();
    auto* p = static_cast<volatile char*>(heap::allocate(64, a));
    heap::deallocate(const_cast<char*>(p));
    EXPECT_DEATH(p[40] = 1, "use-after-poison");
}

TEST(HeapPoisonDeathTest, AnOverflowIntoAFreeNeighbourIsReported) {
    const ArenaId a = test::fresh_heap_arena();
    auto* small = static_cast<volatile char*>(heap::allocate(48, a));
    EXPECT_DEATH(small[48] = 1, "use-after-poison");
    auto* large = static_cast<volatile char*>(heap::allocate(MiB, a));
    EXPECT_DEATH(large[MiB] = 1, "use-after-poison");
    heap::deallocate(const_cast<char*>(small));
    heap::deallocate(const_cast<char*>(large));
}

TEST(HeapPoisonDeathTest, ADoubleFreeIsReported) {
    const ArenaId a = test::fresh_heap_arena();
    void* p = heap::allocate(64, a);
    heap::deallocate(p);
    EXPECT_DEATH(heap::deallocate(p), "numaware heap: block 0x[0-9a-f]{16} freed twice");
}

}  // namespace
}  // namespace numaware

#endif  // NW_HEAP_POISON
