// Threads allocating for one owner while freeing another owner's blocks:
// the cross-thread free path under the sanitizers (TSan sees the handoff,
// ASan the writes over every block's usable size). Each thread checks that
// the blocks it receives still carry their owner and their writer's pattern.
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/heap.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"

namespace numaware {
namespace {

// Blocks handed from one thread to another.
class Mailbox {
public:
    void put(void* p) {
        {
            const std::lock_guard lock(mutex_);
            blocks_.push_back(p);
        }
        ready_.notify_one();
    }
    void* take() {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !blocks_.empty(); });
        void* p = blocks_.front();
        blocks_.pop_front();
        return p;
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<void*> blocks_;
};

std::size_t size_for(unsigned i) {
    // Mostly small blocks across many size classes, now and then a large one.
    if (i % 97 == 0) return 300000 + i;
    return 16 + (i * 37) % 8000;
}

TEST(HeapApiThreads, EachThreadFreesTheOtherOwnersBlocks) {
    psm_register_team(plan_team(Machine::from_synthetic("nodes=1 cpus-per-node=2"), {.threads = 2}));
    const HeapOwner owners[2] = {HeapOwner::node(0), HeapOwner::rank(1)};
    const std::uint64_t before = psm_node_stats(0).bytes_in_use;
    constexpr unsigned blocks = 3000;
    Mailbox to[2];
    std::vector<std::string> failures[2];

    auto work = [&](unsigned me) {
        const unsigned other = 1 - me;
        const auto my_byte = static_cast<unsigned char>(0x10 + me);
        const auto their_byte = static_cast<unsigned char>(0x10 + other);
        for (unsigned i = 0; i < blocks; ++i) {
            auto* p = static_cast<unsigned char*>(psm_alloc(size_for(i), owners[me]));
            std::memset(p, my_byte, psm_usable_size(p));
            to[other].put(p);
            auto* q = static_cast<unsigned char*>(to[me].take());
            const HeapBlockInfo info = psm_owner_of(q);
            if (!(info.owner == owners[other]) || q[0] != their_byte || q[info.usable_bytes - 1] != their_byte)
                failures[me].push_back("block " + std::to_string(i) + " owner " + info.owner.to_string());
            psm_free(q);
        }
    };
    std::thread a(work, 0u);
    std::thread b(work, 1u);
    a.join();
    b.join();
    for (const auto& f : failures) EXPECT_TRUE(f.empty()) << f.front();
    EXPECT_EQ(psm_node_stats(0).bytes_in_use, before);
}

}  // namespace
}  // namespace numaware
