// Guest test: the heap engine keeps every block on the node of the thread
// that allocated it (allocate_local = malloc's path), in an emulated
// multi-node machine. Threads are pinned to each node with CPUs, allocate
// small, medium and large blocks, write them, free their neighbour's blocks
// (frees from another node) and allocate again; the kernel is asked with
// move_pages where every page of every live block is. Zero remote pages is
// the only passing result.
#include <gtest/gtest.h>

#include <sched.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "heap/engine.hpp"
#include "numaware/machine.hpp"
#include "os/os.hpp"

namespace numaware {
namespace {

struct Block {
    void* p;
    std::size_t n;
};

struct Worker {
    unsigned cpu = 0;
    unsigned node = 0;
    std::vector<Block> blocks;
    std::size_t remote_pages = 0;
    std::size_t pages = 0;
    std::size_t wrong_info = 0;
    int error = 0;
};

std::vector<Block> allocate_mix(unsigned seed, std::size_t& wrong_info, unsigned node) {
    std::vector<Block> out;
    std::uint64_t x = 0x243f6a8885a308d3ull + seed;
    for (int i = 0; i < 3000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::size_t n = 64 + x % 4033;                       // small: 64 B - 4 KiB
        if (i % 100 == 0) n = 100000 + x % 100000;           // medium size classes
        if (i % 500 == 0) n = std::size_t{1} << 20;          // large: dedicated mappings
        void* p = heap::allocate_local(n);
        if (p == nullptr) continue;
        std::memset(p, static_cast<int>(i), n);
        heap::BlockInfo info;
        if (!heap::block_info(p, info) || info.node != node) ++wrong_info;
        out.push_back({p, n});
    }
    return out;
}

void count_remote(Worker& w) {
    os::Os& os = os::linux_os();
    const std::size_t page = os.page_size();
    std::vector<void*> pages;
    for (const Block& b : w.blocks) {
        const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(b.p) / page;
        const std::uintptr_t last = (reinterpret_cast<std::uintptr_t>(b.p) + b.n - 1) / page;
        for (std::uintptr_t q = first; q <= last; ++q) pages.push_back(reinterpret_cast<void*>(q * page));
    }
    std::vector<int> status(pages.size(), -1);
    if (int err = os.move_pages(0, pages.size(), pages.data(), nullptr, status.data(), 0)) {
        w.error = err;
        return;
    }
    w.pages += pages.size();
    for (int s : status)
        if (s != static_cast<int>(w.node)) ++w.remote_pages;   // absent pages count too: all were written
}

TEST(HeapEngineGuest, ThreadsOnEveryNodeGetOnlyTheirNodesPages) {
    const Machine live = Machine::from_live();
    std::vector<Worker> workers;
    for (const Node& n : live.nodes) {
        if (!n.has_cpus() || n.memory_bytes == 0) continue;   // no thread can be local there
        for (std::size_t k = 0; k < n.cpus.size() && k < 2; ++k) {
            Worker w;
            w.cpu = n.cpus[k];
            w.node = n.os_index;
            workers.push_back(w);
        }
    }
    ASSERT_GE(workers.size(), 2u);
    ASSERT_EQ(heap::node_count(), live.nodes.size());

    auto run = [&](auto&& body) {
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < workers.size(); ++i) threads.emplace_back([&, i] { body(i); });
        for (auto& t : threads) t.join();
    };
    // Round 1: every thread allocates once BEFORE pinning (its cache starts
    // on whatever CPU it was born on), then pins and allocates the mix.
    run([&](std::size_t i) {
        Worker& w = workers[i];
        heap::deallocate(heap::allocate_local(32));
        if (int err = os::linux_os().set_affinity(0, {w.cpu})) {
            w.error = err;
            return;
        }
        w.blocks = allocate_mix(static_cast<unsigned>(i), w.wrong_info, w.node);
        count_remote(w);
    });
    // Round 2: each thread frees its left neighbour's blocks (frees from
    // another node, once all round-1 writes are done) and allocates again:
    // the freed blocks must go home, not into this thread's cache.
    std::vector<std::vector<Block>> previous(workers.size());
    for (std::size_t i = 0; i < workers.size(); ++i) previous[i].swap(workers[i].blocks);
    run([&](std::size_t i) {
        Worker& w = workers[i];
        if (int err = os::linux_os().set_affinity(0, {w.cpu})) {
            w.error = err;
            return;
        }
        for (const Block& b : previous[(i + workers.size() - 1) % workers.size()]) heap::deallocate(b.p);
        w.blocks = allocate_mix(static_cast<unsigned>(i + 100), w.wrong_info, w.node);
        count_remote(w);
    });
    std::size_t total_pages = 0;
    for (const Worker& w : workers) {
        EXPECT_EQ(w.error, 0) << "cpu " << w.cpu;
        EXPECT_EQ(w.wrong_info, 0u) << "cpu " << w.cpu << " node " << w.node;
        EXPECT_EQ(w.remote_pages, 0u) << "cpu " << w.cpu << " node " << w.node << " of " << w.pages << " pages";
        total_pages += w.pages;
        for (const Block& b : w.blocks) heap::deallocate(b.p);
    }
    EXPECT_GT(total_pages, workers.size() * 1000);
    for (const Node& n : live.nodes) {
        heap::NodeStats s;
        ASSERT_TRUE(heap::node_stats(n.os_index, s));
        EXPECT_GE(s.fragmentation, 0.0);
    }
}

}  // namespace
}  // namespace numaware
