// Unit tests of the allocator engine (src/heap): size classes, alignment,
// realloc, usable size, block info, statistics, cross-thread frees, large
// blocks, thread exit, fork, and the chunk binding it relies on.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "heap/engine.hpp"
#include "heap/size_classes.hpp"
#include "numaware/placement.hpp"
#include "os/os.hpp"
#include "os/recording_os.hpp"
#include "placement/bind_chunk.hpp"

namespace numaware {
namespace {

using heap::ArenaId;

std::uint64_t in_use(unsigned node = 0) {
    heap::NodeStats s;
    EXPECT_TRUE(heap::node_stats(node, s));
    return s.bytes_in_use;
}

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(HeapSizeClasses, EverySizeMapsToTheSmallestClassThatHoldsIt) {
    for (std::size_t n = 0; n <= heap::kMaxSmall; ++n) {
        const unsigned c = heap::size_class_of(n);
        ASSERT_GE(c, 1u) << n;
        ASSERT_LT(c, heap::kClassCount) << n;
        ASSERT_GE(heap::kClasses.size[c], n) << n;
        if (c > 1) {
            ASSERT_LT(heap::kClasses.size[c - 1], n) << n;
        }
        ASSERT_EQ(heap::kClasses.size[c] % 16, 0u) << n;
        // Geometric classes above 256 B waste at most 12.5% of the block.
        if (n > 256) {
            ASSERT_LE(heap::kClasses.size[c] - n, heap::kClasses.size[c] / 8) << n;
        }
    }
}

TEST(HeapSizeClasses, SpansHoldAtLeastEightBlocksOfEveryClass) {
    for (unsigned c = 1; c < heap::kClassCount; ++c) {
        const std::size_t span = heap::kClasses.span_pages[c] * heap::kPageBytes;
        EXPECT_GE(span / heap::kClasses.size[c], 8u) << c;
        EXPECT_GE(heap::kClasses.batch[c], 1u);
    }
}

TEST(HeapEngine, NodeArenasMatchTheKernelsNodes) {
    const unsigned nodes = heap::node_count();
    ASSERT_GE(nodes, 1u);
    EXPECT_NE(heap::node_arena(0), heap::no_arena);
    errno = 0;
    EXPECT_EQ(heap::node_arena(heap::max_nodes + 1), heap::no_arena);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(heap::create_arena(nodes + 100, 1), heap::no_arena);
    EXPECT_EQ(errno, EINVAL);
}

TEST(HeapEngine, SmallBlocksRoundTripWithTheirClassSize) {
    const ArenaId a = heap::node_arena(0);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{16}, std::size_t{17}, std::size_t{255},
                          std::size_t{1000}, std::size_t{4097}, std::size_t{100000}, heap::kMaxSmall}) {
        void* p = heap::allocate(n, a);
        ASSERT_NE(p, nullptr) << n;
        EXPECT_TRUE(aligned(p, 16)) << n;
        EXPECT_EQ(heap::usable_size(p), heap::kClasses.size[heap::size_class_of(n)]) << n;
        std::memset(p, 0xab, heap::usable_size(p));
        heap::BlockInfo info;
        ASSERT_TRUE(heap::block_info(p, info));
        EXPECT_EQ(info.arena, a);
        EXPECT_EQ(info.node, 0u);
        EXPECT_FALSE(info.large);
        // An interior pointer is not a block.
        EXPECT_FALSE(heap::block_info(static_cast<char*>(p) + 8, info));
        heap::deallocate(p);
    }
}

TEST(HeapEngine, ForeignPointersAreNotBlocks) {
    int on_stack = 0;
    auto on_heap = std::make_unique<int>(1);
    heap::BlockInfo info;
    EXPECT_FALSE(heap::block_info(&on_stack, info));
    EXPECT_FALSE(heap::block_info(on_heap.get(), info));
    EXPECT_EQ(heap::usable_size(&on_stack), 0u);
    EXPECT_EQ(heap::usable_size(nullptr), 0u);
    heap::deallocate(nullptr);   // no effect
}

TEST(HeapEngine, AlignedBlocksHonourTheirAlignment) {
    const ArenaId a = heap::node_arena(0);
    for (std::size_t al = 16; al <= (std::size_t{4} << 20); al *= 2) {
        for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{5000}, std::size_t{300000}}) {
            void* p = heap::allocate_aligned(n, al, a);
            ASSERT_NE(p, nullptr) << al << " " << n;
            EXPECT_TRUE(aligned(p, al)) << al << " " << n;
            EXPECT_GE(heap::usable_size(p), n);
            std::memset(p, 1, n);
            heap::deallocate(p);
            void* q = heap::allocate_local_aligned(n, al);
            ASSERT_NE(q, nullptr);
            EXPECT_TRUE(aligned(q, al)) << al << " " << n;
            heap::deallocate(q);
        }
    }
    errno = 0;
    EXPECT_EQ(heap::allocate_aligned(64, 48, a), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(heap::allocate_aligned(64, 0, a), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(HeapEngine, ReallocateKeepsTheArenaAndTheContents) {
    const ArenaId a = heap::create_arena(0, 4242);
    ASSERT_NE(a, heap::no_arena);
    auto* p = static_cast<unsigned char*>(heap::allocate(24, a));
    ASSERT_NE(p, nullptr);
    for (unsigned i = 0; i < 24; ++i) p[i] = static_cast<unsigned char>(i);
    std::size_t prev = 24;
    for (std::size_t n : {std::size_t{100}, std::size_t{5000}, std::size_t{70000}, std::size_t{1} << 20,
                          std::size_t{3} << 20, std::size_t{40}}) {
        p = static_cast<unsigned char*>(heap::reallocate(p, n));
        ASSERT_NE(p, nullptr) << n;
        heap::BlockInfo info;
        ASSERT_TRUE(heap::block_info(p, info)) << n;
        EXPECT_EQ(info.arena, a) << n;
        EXPECT_EQ(info.owner_tag, 4242u);
        EXPECT_EQ(info.large, n > heap::kMaxSmall) << n;
        for (unsigned i = 0; i < 24; ++i) ASSERT_EQ(p[i], i) << n;
        for (std::size_t i = 24; i < n; ++i) p[i] = static_cast<unsigned char>(i);
        prev = n;
    }
    (void)prev;
    // Shrinking a little keeps the block.
    void* q = heap::reallocate(p, 33);
    EXPECT_EQ(q, p);
    heap::deallocate(q);
}

TEST(HeapEngine, StatisticsFollowAllocationsAndFrees) {
    const ArenaId a = heap::create_arena(0, 9);
    ASSERT_NE(a, heap::no_arena);
    const std::uint64_t before = in_use();
    std::vector<void*> blocks;
    for (int i = 0; i < 1000; ++i) blocks.push_back(heap::allocate(100, a));
    const std::uint64_t cls = heap::kClasses.size[heap::size_class_of(100)];
    EXPECT_EQ(in_use(), before + 1000 * cls);
    void* big = heap::allocate(std::size_t{1} << 20, a);
    ASSERT_NE(big, nullptr);
    heap::NodeStats s;
    ASSERT_TRUE(heap::node_stats(0, s));
    EXPECT_EQ(s.bytes_in_use, before + 1000 * cls + (std::size_t{1} << 20));
    EXPECT_GE(s.pages_mapped * 4096, s.bytes_in_use);
    EXPECT_GE(s.fragmentation, 1.0);
    for (void* p : blocks) heap::deallocate(p);
    heap::deallocate(big);
    EXPECT_EQ(in_use(), before);
    heap::NodeStats after;
    ASSERT_TRUE(heap::node_stats(0, after));
    EXPECT_GT(after.bytes_cached, 0u);
    // Local blocks parked in this thread's cache are cached, not in use.
    std::vector<void*> local;
    for (int i = 0; i < 50; ++i) local.push_back(heap::allocate_local(48));
    EXPECT_EQ(in_use(), before + 50 * 48);
    for (void* p : local) heap::deallocate(p);
    EXPECT_EQ(in_use(), before);
    heap::flush_thread_cache();
    EXPECT_EQ(in_use(), before);
    EXPECT_FALSE(heap::node_stats(heap::node_count() + 3, after));
}

TEST(HeapEngine, FreeFromAnotherArenasThreadGoesToTheOwnersCentralList) {
    // The thread caches serve node arenas only; an owner arena's block freed
    // by any thread must go back to that arena, so the next allocation from
    // the arena returns the very same block (its span's free list) instead
    // of a fresh one.
    const ArenaId a = heap::create_arena(0, 55);
    ASSERT_NE(a, heap::no_arena);
    void* p = heap::allocate(64, a);
    ASSERT_NE(p, nullptr);
    const std::uint64_t before = in_use();
    std::thread t([p] { heap::deallocate(p); });
    t.join();
    EXPECT_EQ(in_use(), before - 64);
    void* again = heap::allocate(64, a);
    EXPECT_EQ(again, p);
    heap::deallocate(again);
}

TEST(HeapEngine, ThreadExitFlushesItsCache) {
    const std::uint64_t before = in_use();
    std::thread t([] {
        std::vector<void*> v;
        for (int i = 0; i < 300; ++i) v.push_back(heap::allocate_local(48));
        for (void* p : v) heap::deallocate(p);
    });
    t.join();
    // Had the exiting thread left its cache un-flushed, its blocks would
    // still count as out of the central lists.
    EXPECT_EQ(in_use(), before);
}

TEST(HeapEngine, LargeBlocksSitInRegionsBoundToTheirNode) {
    const ArenaId a = heap::node_arena(0);
    const std::size_t n = (std::size_t{10} << 20) + 123;
    auto* p = static_cast<char*>(heap::allocate(n, a));
    ASSERT_NE(p, nullptr);
    heap::BlockInfo info;
    ASSERT_TRUE(heap::block_info(p, info));
    EXPECT_TRUE(info.large);
    EXPECT_GE(info.usable, n);
    EXPECT_EQ(heap::usable_size(p), info.usable);
    std::memset(p, 7, n);
    os::PolicyQuery q;
    ASSERT_EQ(os::linux_os().get_mempolicy(p + n / 2, q), 0);
    EXPECT_EQ(q.mode, os::PolicyMode::bind);
    EXPECT_EQ(q.nodes, NodeSet{0});
    heap::deallocate(p);
    EXPECT_FALSE(heap::block_info(p, info));
}

TEST(HeapEngine, SmallBlocksSitInChunksBoundToTheirNode) {
    void* p = heap::allocate_local(200);
    ASSERT_NE(p, nullptr);
    os::PolicyQuery q;
    ASSERT_EQ(os::linux_os().get_mempolicy(p, q), 0);
    EXPECT_EQ(q.mode, os::PolicyMode::bind);
    heap::BlockInfo info;
    ASSERT_TRUE(heap::block_info(p, info));
    EXPECT_EQ(q.nodes, NodeSet{info.node});
    heap::deallocate(p);
}

TEST(HeapEngine, FreeSpansBeyondTheRetainLimitGoBackToTheOs) {
    // 48 MiB of 8 KiB blocks in a fresh arena, all freed: the arena keeps at
    // most 16 MiB of touched free spans (plus one empty span per class);
    // the rest is returned with MADV_DONTNEED and leaves pages_mapped.
    const ArenaId a = heap::create_arena(0, 31);
    ASSERT_NE(a, heap::no_arena);
    heap::NodeStats s0;
    ASSERT_TRUE(heap::node_stats(0, s0));
    std::vector<void*> v;
    for (int i = 0; i < 6144; ++i) {
        void* p = heap::allocate(8192, a);
        ASSERT_NE(p, nullptr);
        std::memset(p, 1, 8192);
        v.push_back(p);
    }
    heap::NodeStats s1;
    ASSERT_TRUE(heap::node_stats(0, s1));
    EXPECT_GE(s1.pages_mapped - s0.pages_mapped, std::uint64_t{48} << 20 >> 12);
    for (void* p : v) heap::deallocate(p);
    heap::NodeStats s2;
    ASSERT_TRUE(heap::node_stats(0, s2));
    const std::uint64_t kept = (s2.pages_mapped - s0.pages_mapped) * 4096;
    EXPECT_LE(kept, (std::uint64_t{16} << 20) + heap::kPageBytes);
    EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use);
    // Released spans are reused (and counted again) by the next allocations.
    void* again = heap::allocate(8192, a);
    ASSERT_NE(again, nullptr);
    heap::deallocate(again);
}

TEST(HeapEngine, ManyThreadsAllocateExchangeAndFree) {
    // Threads allocate from their node and from two owner arenas, hand
    // blocks to their neighbour through a mailbox, and check every block's
    // pattern before freeing it: a block given out twice would show.
    constexpr int kThreads = 6;
    constexpr int kRounds = 3000;
    const ArenaId owners[2] = {heap::create_arena(0, 1), heap::create_arena(0, 2)};
    ASSERT_NE(owners[0], heap::no_arena);
    ASSERT_NE(owners[1], heap::no_arena);
    struct Mailbox {
        std::atomic<void*> slot[64];
    };
    std::vector<Mailbox> boxes(kThreads);
    for (auto& b : boxes)
        for (auto& s : b.slot) s.store(nullptr);
    std::atomic<int> bad{0};
    const std::uint64_t before = in_use();
    auto check_and_free = [&](void* p) {
        const auto* c = static_cast<const unsigned char*>(p);
        const std::size_t n = c[0] | (std::size_t{c[1]} << 8) | (std::size_t{c[2]} << 16);
        for (std::size_t i = 3; i < n; ++i)
            if (c[i] != static_cast<unsigned char>(n + i)) {
                bad.fetch_add(1);
                break;
            }
        heap::deallocate(p);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(t + 1);
            for (int r = 0; r < kRounds; ++r) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                std::size_t n = 3 + x % 600;
                if (x % 97 == 0) n = 3 + x % 400000;   // a few medium and large blocks
                void* p = (x >> 20) % 3 == 0 ? heap::allocate(n, owners[(x >> 24) & 1]) : heap::allocate_local(n);
                if (p == nullptr) {
                    bad.fetch_add(1);
                    continue;
                }
                auto* c = static_cast<unsigned char*>(p);
                c[0] = static_cast<unsigned char>(n);
                c[1] = static_cast<unsigned char>(n >> 8);
                c[2] = static_cast<unsigned char>(n >> 16);
                for (std::size_t i = 3; i < n; ++i) c[i] = static_cast<unsigned char>(n + i);
                Mailbox& next = boxes[static_cast<std::size_t>((t + 1) % kThreads)];
                void* old = next.slot[(x >> 32) % 64].exchange(p);
                if (old != nullptr) check_and_free(old);
            }
        });
    }
    for (auto& th : threads) th.join();
    for (auto& b : boxes)
        for (auto& s : b.slot)
            if (void* p = s.exchange(nullptr)) check_and_free(p);
    heap::flush_thread_cache();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(in_use(), before);
}

TEST(HeapEngine, ForkWhileAnotherThreadAllocatesLeavesAUsableHeapInTheChild) {
    std::atomic<bool> stop{false};
    std::thread worker([&] {
        while (!stop.load()) {
            void* p = heap::allocate_local(128);
            heap::deallocate(p);
            void* q = heap::allocate(5000, heap::node_arena(0));
            heap::deallocate(q);
        }
    });
    for (int i = 0; i < 5; ++i) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            // Child: every lock must be free and the lists consistent.
            std::vector<void*> v;
            for (int k = 0; k < 2000; ++k) v.push_back(heap::allocate_local(static_cast<std::size_t>(16 + k % 3000)));
            for (void* p : v) heap::deallocate(p);
            void* big = heap::allocate(std::size_t{2} << 20, heap::node_arena(0));
            heap::deallocate(big);
            ::_exit(big != nullptr ? 0 : 3);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    stop.store(true);
    worker.join();
}

TEST(HeapChunkBinding, BindsAndVerifiesOnTheKernel) {
    const std::size_t bytes = 64 * 4096;
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    std::memset(m, 1, bytes / 2);   // half the pages present before the bind
    ChunkBindReport r;
    EXPECT_EQ(bind_range_to_node(m, bytes, 0, os::linux_os(), &r), 0);
    EXPECT_EQ(r.error, 0);
    EXPECT_EQ(r.mode, MemoryPolicyMode::bind);
    EXPECT_TRUE(r.policy_is_node);
    EXPECT_EQ(r.pages_checked, 64u);
    EXPECT_EQ(r.pages_present, 32u);
    EXPECT_EQ(r.pages_misplaced, 0u);
    EXPECT_EQ(bind_range_to_node(static_cast<char*>(m) + 1, 4096, 0, os::linux_os(), &r), EINVAL);
    ::munmap(m, bytes);
}

TEST(HeapChunkBinding, MovesPresentPagesAndReportsFailuresOnAFakeKernel) {
    os::RecordingOs fake(4, 2);
    void* p = reinterpret_cast<void*>(0x10000000);
    fake.touch(p, 8 * 4096, /*cpu=*/2);   // node 1
    ChunkBindReport r;
    EXPECT_EQ(bind_range_to_node(p, 8 * 4096, 3, fake, &r), 0);
    EXPECT_TRUE(r.policy_is_node);
    EXPECT_EQ(r.pages_present, 8u);
    EXPECT_EQ(r.pages_misplaced, 0u);
    EXPECT_EQ(fake.node_of_page(p), 3);

    void* q = reinterpret_cast<void*>(0x20000000);
    fake.touch(q, 4 * 4096, 0);
    fake.fail_page(static_cast<char*>(q) + 4096, EACCES);   // silently left behind
    EXPECT_EQ(bind_range_to_node(q, 4 * 4096, 2, fake, &r), EIO);
    EXPECT_EQ(r.pages_misplaced, 1u);

    fake.fail_call(os::CallKind::mbind, EPERM, 1);
    EXPECT_EQ(bind_range_to_node(q, 4096, 2, fake, &r), EPERM);
}

}  // namespace
}  // namespace numaware
