// The public heap API (numaware/heap.hpp) on this host: owners, errors that
// name their input, realloc/calloc/aligned/usable size, statistics, and the
// pmr resource and STL allocator. Node 0 is the host's only node; ranks come
// from plan_team() on a synthetic one-node machine, so every rank is a
// distinct owner living on node 0.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory_resource>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/heap.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"
#include "support.hpp"

namespace numaware {
namespace {

using test::contains;
using test::expect_error;

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

// Ranks 0..3 on node 0, as a team on a one-node machine would have them.
TeamLayout four_ranks_on_node0() {
    return plan_team(Machine::from_synthetic("nodes=1 cpus-per-node=4"), {.threads = 4});
}

class HeapApi : public ::testing::Test {
protected:
    void SetUp() override { psm_register_team(four_ranks_on_node0()); }
};

std::uint64_t in_use_on_node0() { return psm_node_stats(0).bytes_in_use; }

TEST(HeapOwnerTest, NamesAndEquality) {
    EXPECT_EQ(HeapOwner::node(2).to_string(), "node 2");
    EXPECT_EQ(HeapOwner::rank(7).to_string(), "rank 7");
    EXPECT_EQ(HeapOwner::node(3), HeapOwner::node(3));
    EXPECT_NE(HeapOwner::node(3), HeapOwner::rank(3));
    EXPECT_EQ(HeapOwner::rank(3).kind(), HeapOwner::Kind::rank);
    EXPECT_EQ(HeapOwner::rank(3).id(), 3u);
}

TEST_F(HeapApi, AllocReportsNodeOwnerAndRankOwner) {
    void* on_node = psm_alloc(100, HeapOwner::node(0));
    void* on_rank = psm_alloc(100, HeapOwner::rank(2));
    const HeapBlockInfo a = psm_owner_of(on_node);
    const HeapBlockInfo b = psm_owner_of(on_rank);
    EXPECT_EQ(a.owner, HeapOwner::node(0));
    EXPECT_EQ(a.node, 0u);
    EXPECT_EQ(b.owner, HeapOwner::rank(2));
    EXPECT_EQ(b.node, 0u);
    EXPECT_FALSE(a.large);
    EXPECT_GE(a.usable_bytes, 100u);
    EXPECT_EQ(a.usable_bytes, psm_usable_size(on_node));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(on_node) % alignof(std::max_align_t), 0u);
    psm_free(on_node);
    psm_free(on_rank);
}

TEST_F(HeapApi, LargeBlocksAreMarkedLarge) {
    void* big = psm_alloc(std::size_t{64} << 20, HeapOwner::rank(1));
    const HeapBlockInfo info = psm_owner_of(big);
    EXPECT_TRUE(info.large);
    EXPECT_EQ(info.owner, HeapOwner::rank(1));
    EXPECT_GE(info.usable_bytes, std::size_t{64} << 20);
    psm_free(big);
}

TEST_F(HeapApi, ZeroBytesGivesAUniqueLiveBlock) {
    void* a = psm_alloc(0, HeapOwner::node(0));
    void* b = psm_alloc(0, HeapOwner::node(0));
    ASSERT_NE(a, nullptr);
    EXPECT_NE(a, b);
    EXPECT_GE(psm_usable_size(a), 1u);
    psm_free(a);
    psm_free(b);
}

TEST_F(HeapApi, UsableSizeCoversTheRequestAndCanBeWritten) {
    for (std::size_t bytes : {1u, 7u, 16u, 100u, 1000u, 4096u, 5000u, 65536u, 300000u, 3000000u}) {
        auto* p = static_cast<unsigned char*>(psm_alloc(bytes, HeapOwner::rank(0)));
        const std::size_t usable = psm_usable_size(p);
        EXPECT_GE(usable, bytes) << bytes;
        std::memset(p, 0x5a, usable);   // the whole usable size is ours (ASan checks)
        psm_free(p);
    }
}

TEST_F(HeapApi, UnknownNodeIsRefusedByName) {
    const Error e = expect_error([] { psm_alloc(64, HeapOwner::node(1)); });
    EXPECT_EQ(e.field(), "owner");
    EXPECT_EQ(e.code(), EINVAL);
    EXPECT_TRUE(contains(e.what(), "node 1 has no heap")) << e.what();
    EXPECT_TRUE(contains(e.what(), "0..0")) << e.what();
}

TEST_F(HeapApi, UnregisteredRankIsRefusedByName) {
    for (unsigned rank : {4u, 999u, 100000u}) {
        const Error e = expect_error([&] { psm_alloc(64, HeapOwner::rank(rank)); });
        EXPECT_EQ(e.field(), "owner");
        EXPECT_TRUE(contains(e.what(), "rank " + std::to_string(rank) + " is not registered")) << e.what();
    }
}

TEST_F(HeapApi, OutOfMemoryNamesBytesAndOwnerAndChangesNothing) {
    const std::uint64_t before = in_use_on_node0();
    const std::size_t huge = size_max / 2;
    const Error e = expect_error([&] { psm_alloc(huge, HeapOwner::rank(3)); });
    EXPECT_EQ(e.code(), ENOMEM);
    EXPECT_EQ(e.field(), "bytes");
    EXPECT_TRUE(contains(e.what(), std::to_string(huge) + " bytes for rank 3")) << e.what();
    EXPECT_EQ(in_use_on_node0(), before);
}

TEST_F(HeapApi, CallocZeroesAndRefusesOverflow) {
    // Dirty a block first so a reused block would show up.
    auto* dirty = static_cast<unsigned char*>(psm_alloc(4000, HeapOwner::node(0)));
    std::memset(dirty, 0xab, 4000);
    psm_free(dirty);
    auto* p = static_cast<unsigned char*>(psm_calloc(1000, 4, HeapOwner::node(0)));
    for (std::size_t i = 0; i < 4000; ++i) ASSERT_EQ(p[i], 0) << i;
    EXPECT_EQ(psm_owner_of(p).owner, HeapOwner::node(0));
    psm_free(p);

    const std::size_t n = size_max / 2 + 1;
    const Error e = expect_error([&] { psm_calloc(n, 2, HeapOwner::node(0)); });
    EXPECT_EQ(e.field(), "n * size");
    EXPECT_TRUE(contains(e.what(), std::to_string(n) + " * 2")) << e.what();
    EXPECT_TRUE(contains(e.what(), std::to_string(size_max))) << e.what();
}

TEST_F(HeapApi, ReallocKeepsOwnerAndContents) {
    auto* p = static_cast<unsigned char*>(psm_alloc(100, HeapOwner::rank(2)));
    for (unsigned i = 0; i < 100; ++i) p[i] = static_cast<unsigned char>(i);
    for (std::size_t bytes : {std::size_t{5000}, std::size_t{4} << 20, std::size_t{40}}) {
        p = static_cast<unsigned char*>(psm_realloc(p, bytes));
        const HeapBlockInfo info = psm_owner_of(p);
        EXPECT_EQ(info.owner, HeapOwner::rank(2)) << bytes;
        EXPECT_GE(info.usable_bytes, bytes);
        for (unsigned i = 0; i < 40; ++i) ASSERT_EQ(p[i], i) << bytes;
    }
    psm_free(p);
}

TEST_F(HeapApi, FailedReallocLeavesTheBlock) {
    auto* p = static_cast<unsigned char*>(psm_alloc(64, HeapOwner::node(0)));
    std::memset(p, 0x42, 64);
    const Error e = expect_error([&] { psm_realloc(p, size_max / 2); });
    EXPECT_EQ(e.code(), ENOMEM);
    EXPECT_TRUE(contains(e.what(), "node 0")) << e.what();
    EXPECT_EQ(psm_owner_of(p).owner, HeapOwner::node(0));
    for (int i = 0; i < 64; ++i) ASSERT_EQ(p[i], 0x42);
    psm_free(p);
}

TEST_F(HeapApi, ReallocOfNullOrForeignIsRefused) {
    Error e = expect_error([] { psm_realloc(nullptr, 10); });
    EXPECT_EQ(e.field(), "p");
    EXPECT_TRUE(contains(e.what(), "no owner")) << e.what();
    int local = 0;
    e = expect_error([&] { psm_realloc(&local, 10); });
    EXPECT_TRUE(contains(e.what(), "is not a live block of the numaware heap")) << e.what();
}

TEST_F(HeapApi, AlignedAllocHonoursEveryPowerOfTwo) {
    for (std::size_t alignment = 1; alignment <= (std::size_t{1} << 21); alignment <<= 1) {
        void* p = psm_aligned_alloc(alignment, 24, HeapOwner::rank(1));
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignment, 0u) << alignment;
        EXPECT_GE(psm_usable_size(p), 24u);
        EXPECT_EQ(psm_owner_of(p).owner, HeapOwner::rank(1));
        psm_free(p);
    }
}

TEST_F(HeapApi, AlignmentMustBeAPowerOfTwo) {
    for (std::size_t alignment : {0u, 3u, 48u, 4097u}) {
        const Error e = expect_error([&] { psm_aligned_alloc(alignment, 64, HeapOwner::node(0)); });
        EXPECT_EQ(e.field(), "alignment");
        EXPECT_TRUE(contains(e.what(), "is " + std::to_string(alignment) + "; it must be a power of two"))
            << e.what();
    }
}

TEST_F(HeapApi, HugeAlignmentFailsNamingIt) {
    const std::uint64_t before = in_use_on_node0();
    const std::size_t alignment = std::size_t{1} << 62;
    const Error e = expect_error([&] { psm_aligned_alloc(alignment, 10, HeapOwner::node(0)); });
    // The engine may call it out of memory or refuse the alignment; either
    // way the message names the alignment, the size and the owner.
    EXPECT_TRUE(e.code() == ENOMEM || e.code() == EINVAL) << e.code();
    EXPECT_TRUE(contains(e.what(), "10 bytes")) << e.what();
    EXPECT_TRUE(contains(e.what(), "alignment " + std::to_string(alignment)) ||
                contains(e.what(), "aligned to " + std::to_string(alignment)))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "node 0")) << e.what();
    EXPECT_EQ(in_use_on_node0(), before);
}

TEST_F(HeapApi, ForeignAndFreedPointersAreRefused) {
    int on_stack = 0;
    auto* from_new = new int(1);
    for (const void* p : {static_cast<const void*>(&on_stack), static_cast<const void*>(from_new)}) {
        EXPECT_TRUE(contains(expect_error([&] { psm_owner_of(p); }).what(), "not a live block"));
        EXPECT_TRUE(contains(expect_error([&] { psm_usable_size(p); }).what(), "not a live block"));
        EXPECT_TRUE(contains(expect_error([&] { psm_free(const_cast<void*>(p)); }).what(), "not a live block"));
    }
    delete from_new;
    EXPECT_EQ(expect_error([] { psm_owner_of(nullptr); }).field(), "p");
    EXPECT_NO_THROW(psm_free(nullptr));

    void* p = psm_alloc(std::size_t{8} << 20, HeapOwner::node(0));
    psm_free(p);
    EXPECT_TRUE(contains(expect_error([&] { psm_free(p); }).what(), "not a live block"));
}

TEST_F(HeapApi, RegisterRefusesBadLayoutsAndChangesNothing) {
    Error e = expect_error([] { psm_register_team(TeamLayout{}); });
    EXPECT_EQ(e.field(), "layout");

    TeamLayout twice{{{.rank = 500, .cpu = 0, .node = 0}, {.rank = 500, .cpu = 1, .node = 0}}};
    e = expect_error([&] { psm_register_team(twice); });
    EXPECT_EQ(e.field(), "layout.ranks[1].rank");
    EXPECT_TRUE(contains(e.what(), "rank 500 is listed twice")) << e.what();

    TeamLayout over{{{.rank = 2046, .cpu = 0, .node = 0}}};
    e = expect_error([&] { psm_register_team(over); });
    EXPECT_TRUE(contains(e.what(), "is 2046; limit 2045")) << e.what();

    // A good rank next to a rank on a node that is not online (this host
    // has node 0 alone): neither is registered. (A rank on an online node
    // without memory is served by the nearest node with memory: the guest
    // test GuestHeapApi.ScatterRanksBlocksLiveOnTheRanksNode.)
    TeamLayout bad_node{{{.rank = 600, .cpu = 0, .node = 0}, {.rank = 601, .cpu = 1, .node = 1}}};
    e = expect_error([&] { psm_register_team(bad_node); });
    EXPECT_EQ(e.field(), "layout.ranks[1].node");
    EXPECT_TRUE(contains(e.what(), "node 1 is not an online node of this machine (nodes are among 0..0)")) << e.what();
    EXPECT_TRUE(contains(expect_error([] { psm_alloc(8, HeapOwner::rank(600)); }).what(), "not registered"));
}

TEST_F(HeapApi, RegisteringAgainKeepsTheRanksArena) {
    void* before = psm_alloc(64, HeapOwner::rank(0));
    psm_register_team(four_ranks_on_node0());
    void* after = psm_alloc(64, HeapOwner::rank(0));
    EXPECT_EQ(psm_owner_of(before).owner, HeapOwner::rank(0));
    EXPECT_EQ(psm_owner_of(after).owner, HeapOwner::rank(0));
    psm_free(before);
    psm_free(after);
}

TEST_F(HeapApi, StatsFollowAllocationAndFree) {
    const HeapNodeStats before = psm_node_stats(0);
    const std::size_t bytes = std::size_t{16} << 20;
    void* p = psm_alloc(bytes, HeapOwner::node(0));
    std::memset(p, 1, bytes);
    const HeapNodeStats during = psm_node_stats(0);
    EXPECT_EQ(during.bytes_in_use, before.bytes_in_use + psm_usable_size(p));
    EXPECT_GE(during.pages_mapped, before.pages_mapped + bytes / 4096 / 2);   // at least half in 4K or larger pages
    EXPECT_GE(during.fragmentation, 1.0);
    psm_free(p);
    EXPECT_EQ(psm_node_stats(0).bytes_in_use, before.bytes_in_use);

    const Error e = expect_error([] { psm_node_stats(1); });
    EXPECT_EQ(e.field(), "node");
    EXPECT_TRUE(contains(e.what(), "node 1 has no heap")) << e.what();
}

// A pmr resource that records the blocks it passes on, so a test can ask the
// heap who owns every block a container took.
class RecordingResource : public std::pmr::memory_resource {
public:
    explicit RecordingResource(std::pmr::memory_resource* upstream) : upstream_(upstream) {}
    std::vector<void*> live;

private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override {
        void* p = upstream_->allocate(bytes, alignment);
        live.push_back(p);
        return p;
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
        std::erase(live, p);
        upstream_->deallocate(p, bytes, alignment);
    }
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
    std::pmr::memory_resource* upstream_;
};

TEST_F(HeapApi, PmrContainersGetTheirOwnersMemory) {
    PsmResource rank3{HeapOwner::rank(3)};
    RecordingResource recorder{&rank3};
    {
        std::pmr::vector<std::uint64_t> v{&recorder};
        for (std::uint64_t i = 0; i < 100000; ++i) v.push_back(i);
        std::pmr::map<int, std::pmr::string> m{&recorder};
        for (int i = 0; i < 200; ++i) m.emplace(i, std::pmr::string(100, 'x'));
        ASSERT_GT(recorder.live.size(), 200u);
        for (void* p : recorder.live) ASSERT_EQ(psm_owner_of(p).owner, HeapOwner::rank(3));
        EXPECT_EQ(v[99999], 99999u);
        EXPECT_EQ(m.at(150).size(), 100u);
    }
    EXPECT_TRUE(recorder.live.empty());

    void* page = rank3.allocate(100, 4096);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(page) % 4096, 0u);
    EXPECT_EQ(psm_owner_of(page).owner, HeapOwner::rank(3));
    rank3.deallocate(page, 100, 4096);
}

TEST_F(HeapApi, PmrResourcesAreEqualByOwner) {
    PsmResource a{HeapOwner::node(0)};
    PsmResource b{HeapOwner::node(0)};
    PsmResource c{HeapOwner::rank(0)};
    EXPECT_TRUE(a.is_equal(b));
    EXPECT_FALSE(a.is_equal(c));
    EXPECT_FALSE(a.is_equal(*std::pmr::new_delete_resource()));
    EXPECT_EQ(c.owner(), HeapOwner::rank(0));
}

TEST_F(HeapApi, PmrResourceChecksItsOwner) {
    EXPECT_TRUE(contains(expect_error([] { PsmResource r{HeapOwner::node(5)}; }).what(), "node 5 has no heap"));
    EXPECT_TRUE(contains(expect_error([] { PsmResource r{HeapOwner::rank(77)}; }).what(), "rank 77 is not registered"));
}

// The STL allocator, recording what it hands out through a thin subclass.
template <class T>
struct RecordingAllocator : PsmAllocator<T> {
    using value_type = T;
    template <class U>
    struct rebind {
        using other = RecordingAllocator<U>;
    };
    RecordingAllocator(HeapOwner owner, std::vector<void*>* log) : PsmAllocator<T>(owner), log_(log) {}
    template <class U>
    RecordingAllocator(const RecordingAllocator<U>& other) : PsmAllocator<T>(other.owner()), log_(other.log_) {}
    T* allocate(std::size_t n) {
        T* p = PsmAllocator<T>::allocate(n);
        log_->push_back(p);
        return p;
    }
    void deallocate(T* p, std::size_t n) {
        std::erase(*log_, static_cast<void*>(p));
        PsmAllocator<T>::deallocate(p, n);
    }
    std::vector<void*>* log_;
};

TEST_F(HeapApi, StlContainersGetTheirOwnersMemory) {
    std::vector<void*> log;
    {
        RecordingAllocator<int> alloc{HeapOwner::rank(1), &log};
        std::vector<int, RecordingAllocator<int>> v{alloc};
        for (int i = 0; i < 50000; ++i) v.push_back(i);
        std::map<int, double, std::less<>, RecordingAllocator<std::pair<const int, double>>> m{
            RecordingAllocator<std::pair<const int, double>>{HeapOwner::rank(1), &log}};
        for (int i = 0; i < 500; ++i) m[i] = i * 0.5;
        ASSERT_GT(log.size(), 500u);
        for (void* p : log) ASSERT_EQ(psm_owner_of(p).owner, HeapOwner::rank(1));
        EXPECT_EQ(m.at(400), 200.0);
    }
    EXPECT_TRUE(log.empty());

    // The plain allocator, without recording.
    std::vector<double, PsmAllocator<double>> plain{PsmAllocator<double>{HeapOwner::node(0)}};
    plain.resize(1000, 2.5);
    EXPECT_EQ(psm_owner_of(plain.data()).owner, HeapOwner::node(0));
}

TEST_F(HeapApi, StlAllocatorsAreEqualByOwnerAcrossRebind) {
    PsmAllocator<int> a{HeapOwner::rank(2)};
    PsmAllocator<double> b{a};
    EXPECT_TRUE(a == b);
    EXPECT_EQ(b.owner(), HeapOwner::rank(2));
    EXPECT_FALSE(a == PsmAllocator<int>{HeapOwner::node(0)});
    struct alignas(256) Wide {
        char bytes[256];
    };
    PsmAllocator<Wide> wide{a};
    Wide* w = wide.allocate(3);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w) % 256, 0u);
    EXPECT_EQ(psm_owner_of(w).owner, HeapOwner::rank(2));
    wide.deallocate(w, 3);
    EXPECT_EQ(expect_error([&] { a.allocate(size_max / 2); }).field(), "n");
}

}  // namespace
}  // namespace numaware
