// Allocator stress under psm_alloc (the engine's public API), the same
// patterns tests/malloc/stress.c runs under the drop-in malloc: a larson-
// like server, neighbouring blocks written by two threads, realloc storms
// across size classes, every alignment to 1 MiB, calloc overflow and
// zeroing, blocks of exited threads, memory given back after a peak. This
// file is built in the ASan and TSan builds too, where the heap's debug
// invariants are on; after each pattern heap::check_heap() walks every
// arena's lists and large cache.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "heap/engine.hpp"
#include "numaware/error.hpp"
#include "numaware/heap.hpp"

namespace numaware {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

// Fills a block with a pattern derived from its id; checks it back.
void stamp(void* p, std::size_t n, std::uint32_t id) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < n; i += 61) b[i] = static_cast<unsigned char>(id + i);
    b[n - 1] = static_cast<unsigned char>(id);
}
// The first `keep` bytes of a block of `n` stamped with `id` (keep <= n).
bool stamped_prefix(const void* p, std::size_t n, std::size_t keep, std::uint32_t id) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < keep; i += 61)
        if (i != n - 1 && b[i] != static_cast<unsigned char>(id + i)) return false;
    return keep < n || b[n - 1] == static_cast<unsigned char>(id);
}
bool stamped(const void* p, std::size_t n, std::uint32_t id) { return stamped_prefix(p, n, n, id); }

TEST(HeapStress, LarsonLikeServerFreesWhatOtherThreadsMade) {
    // 4 threads replace random slots of one shared table; whoever replaces
    // a block frees it, so most frees are of another thread's blocks.
    struct Slot {
        std::atomic<bool> busy{false};
        void* p = nullptr;
        std::uint32_t id = 0;
        std::size_t n = 0;
    };
    constexpr std::size_t slots = 512;
    std::vector<Slot> table(slots);
    std::atomic<std::uint32_t> next_id{1};
    std::atomic<int> bad{0};
    auto worker = [&](unsigned t) {
        std::mt19937 rng(100 + t);
        for (int k = 0; k < 20000; ++k) {
            const std::size_t n = 1 + rng() % (k % 97 == 0 ? 600000 : 2000);
            const std::uint32_t id = next_id.fetch_add(1);
            void* p = psm_alloc(n, HeapOwner::node(0));
            stamp(p, n, id);
            Slot& s = table[rng() % slots];
            while (s.busy.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
            void* old = s.p;
            const std::uint32_t old_id = s.id;
            const std::size_t old_n = s.n;
            s.p = p;
            s.id = id;
            s.n = n;
            s.busy.store(false, std::memory_order_release);
            if (old != nullptr) {
                if (!stamped(old, old_n, old_id)) ++bad;
                psm_free(old);
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 4; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    for (Slot& s : table)
        if (s.p != nullptr) psm_free(s.p);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(heap::check_heap());
}

TEST(HeapStress, TwoThreadsWritingNeighbouringBlocksNeverSeeEachOthersWrites) {
    // Blocks of one class sit side by side: if two ever overlapped, the
    // counts below would be off.
    constexpr int blocks = 64;
    std::vector<std::uint64_t*> mine[2];
    for (auto& v : mine)
        for (int i = 0; i < blocks; ++i)
            v.push_back(static_cast<std::uint64_t*>(psm_calloc(1, sizeof(std::uint64_t), HeapOwner::node(0))));
    auto bump = [&](int t) {
        for (int r = 0; r < 20000; ++r)
            for (auto* p : mine[t]) ++*p;
    };
    std::thread a(bump, 0), b(bump, 1);
    a.join();
    b.join();
    for (auto& v : mine)
        for (auto* p : v) {
            EXPECT_EQ(*p, 20000u);
            psm_free(p);
        }
    EXPECT_TRUE(heap::check_heap());
}

TEST(HeapStress, ReallocStormAcrossSizeClassesKeepsContents) {
    std::mt19937 rng(5);
    std::size_t n = 1;
    void* p = psm_alloc(n, HeapOwner::node(0));
    stamp(p, n, 1);
    for (std::uint32_t step = 2; step < 3000; ++step) {
        const std::size_t m = 1 + rng() % (step % 50 == 0 ? 1 * MiB : 70000);
        p = psm_realloc(p, m);
        ASSERT_TRUE(stamped_prefix(p, n, std::min(n, m), step - 1)) << step;
        stamp(p, m, step);
        n = m;
    }
    psm_free(p);
    EXPECT_TRUE(heap::check_heap());
}

TEST(HeapStress, EveryAlignmentUpToOneMiB) {
    std::vector<void*> keep;
    for (std::size_t al = 1; al <= 1 * MiB; al *= 2)
        for (std::size_t n : {std::size_t{1}, al, al + 1, 3 * al + 7, std::size_t{300000}}) {
            void* p = psm_aligned_alloc(al, n, HeapOwner::node(0));
            ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % al, 0u) << al << " " << n;
            ASSERT_GE(psm_usable_size(p), n);
            std::memset(p, 0x5a, n);
            keep.push_back(p);
        }
    for (void* p : keep) psm_free(p);
    EXPECT_TRUE(heap::check_heap());
}

TEST(HeapStress, CallocRefusesOverflowAndZeroesReusedMemory) {
    EXPECT_THROW(psm_calloc(std::numeric_limits<std::size_t>::max() / 2, 4, HeapOwner::node(0)), Error);
    for (std::size_t n : {std::size_t{40}, std::size_t{5000}, std::size_t{400000}, std::size_t{3} * MiB}) {
        void* d = psm_alloc(n, HeapOwner::node(0));
        std::memset(d, 0xee, n);
        psm_free(d);
        auto* z = static_cast<unsigned char*>(psm_calloc(n, 1, HeapOwner::node(0)));
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(z[i], 0) << n << " at " << i;
        psm_free(z);
    }
    EXPECT_TRUE(heap::check_heap());
}

TEST(HeapStress, BlocksOfExitedThreadsAreFreedAndReused) {
    std::vector<void*> left;
    std::vector<std::thread> threads;
    std::vector<std::vector<void*>> made(6);
    for (unsigned t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 1000; ++i) {
                void* p = psm_alloc(16 + (i * 37) % 3000, HeapOwner::node(0));
                stamp(p, 16, t * 1000 + static_cast<unsigned>(i));
                made[t].push_back(p);
            }
        });
    for (auto& th : threads) th.join();
    for (unsigned t = 0; t < 6; ++t)
        for (std::size_t i = 0; i < made[t].size(); ++i) {
            EXPECT_TRUE(stamped(made[t][i], 16, t * 1000 + static_cast<unsigned>(i)));
            psm_free(made[t][i]);
        }
    EXPECT_TRUE(heap::check_heap());
}

TEST(HeapStress, MemoryGoesBackAfterAPeak) {
    heap::release_free_memory();
    const HeapNodeStats before = psm_node_stats(0);
    std::vector<void*> v;
    for (int i = 0; i < 128; ++i) {
        v.push_back(psm_alloc(1 * MiB, HeapOwner::node(0)));
        std::memset(v.back(), 1, 1 * MiB);
    }
    const HeapNodeStats peak = psm_node_stats(0);
    EXPECT_GE(peak.pages_mapped - before.pages_mapped, 120 * MiB / 4096);
    for (void* p : v) psm_free(p);
    EXPECT_GT(heap::release_free_memory(), 100 * MiB);
    const HeapNodeStats after = psm_node_stats(0);
    EXPECT_LE(after.pages_mapped, before.pages_mapped + 2 * MiB / 4096);
    EXPECT_TRUE(heap::check_heap());
}

}  // namespace
}  // namespace numaware
