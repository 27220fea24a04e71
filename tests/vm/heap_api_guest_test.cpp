// The heap API on a real multi-node kernel: a block's pages are on its
// owner's node no matter which thread writes them first, checked page by
// page with move_pages(nodes=NULL). The topology is the guest's own
// (Machine::from_live()).
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/heap.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"

namespace numaware {
namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr unsigned blocks_per_owner = 64;

// How many of the pages under [p, p + bytes) are on `node`, and how many
// are anywhere (present at all).
struct PageCount {
    std::size_t on_node = 0;
    std::size_t total = 0;
    std::string first_stray;
};

PageCount count_pages(const void* p, std::size_t bytes, unsigned node) {
    os::Os& os = os::linux_os();
    const std::size_t page = os.page_size();
    const auto first = reinterpret_cast<std::uintptr_t>(p) / page * page;
    const auto end = reinterpret_cast<std::uintptr_t>(p) + bytes;
    std::vector<void*> pages;
    for (std::uintptr_t a = first; a < end; a += page) pages.push_back(reinterpret_cast<void*>(a));
    std::vector<int> status(pages.size(), -1);
    PageCount count;
    const int rc = os.move_pages(0, pages.size(), pages.data(), nullptr, status.data(), 0);
    if (rc != 0) {
        count.first_stray = "move_pages failed: " + std::string(std::strerror(rc));
        return count;
    }
    count.total = pages.size();
    for (std::size_t i = 0; i < pages.size(); ++i) {
        if (status[i] == static_cast<int>(node))
            ++count.on_node;
        else if (count.first_stray.empty())
            count.first_stray = "page " + std::to_string(i) + " status " + std::to_string(status[i]);
    }
    return count;
}

// Runs fn on a thread pinned to `cpu`.
template <class Fn>
void on_cpu(unsigned cpu, Fn fn) {
    std::thread t([&] {
        ASSERT_EQ(os::linux_os().set_affinity(0, {cpu}), 0) << "cpu " << cpu;
        fn();
    });
    t.join();
}

TEST(GuestHeapApi, NodeOwnedBlocksWrittenFromAnotherNodeStayOnTheirNode) {
    const Machine machine = Machine::from_live();
    ASSERT_GE(machine.nodes_with_cpus().size(), 2u) << "this test needs a guest with at least two nodes with CPUs";
    unsigned checked = 0;
    for (const Node& node : machine.nodes) {
        if (node.memory_bytes == 0) continue;
        // A writer on another node, so first touch would put the pages there.
        unsigned writer_cpu = 0;
        bool found = false;
        for (const Node& other : machine.nodes)
            if (other.os_index != node.os_index && other.has_cpus()) {
                writer_cpu = other.cpus.front();
                found = true;
                break;
            }
        ASSERT_TRUE(found);
        std::vector<void*> blocks;
        for (unsigned i = 0; i < blocks_per_owner; ++i) blocks.push_back(psm_alloc(mib, HeapOwner::node(node.os_index)));
        on_cpu(writer_cpu, [&] {
            for (void* b : blocks) std::memset(b, 0x3c, mib);
        });
        std::size_t on_node = 0;
        std::size_t total = 0;
        for (void* b : blocks) {
            const HeapBlockInfo info = psm_owner_of(b);
            EXPECT_EQ(info.owner, HeapOwner::node(node.os_index));
            EXPECT_EQ(info.node, node.os_index);
            const PageCount count = count_pages(b, mib, node.os_index);
            EXPECT_EQ(count.on_node, count.total) << "node " << node.os_index << ": " << count.first_stray;
            on_node += count.on_node;
            total += count.total;
        }
        EXPECT_GE(total, blocks_per_owner * mib / os::linux_os().page_size());
        EXPECT_EQ(on_node, total) << "node " << node.os_index << ": " << total - on_node << " remote pages";
        for (void* b : blocks) psm_free(b);
        ++checked;
    }
    EXPECT_GE(checked, 2u);
}

// Every node with memory has a heap, whatever its number: one block per
// node, written from the first CPU, lives on its node. Node numbers past 63
// (vm.guest.66node, NUMAWARE_EXPECT_HEAP_NODES=66: two nodes with CPUs and
// 64 with memory alone, as CXL expanders add them) had no heap before the
// engine read its node lists as 1,024-bit sets: psm_alloc refused them,
// and a thread there was served by node 0's.
TEST(GuestHeapApi, EveryNodeHasAHeapWhateverItsNumber) {
    const Machine machine = Machine::from_live();
    std::vector<unsigned> cpus;
    for (const Node& n : machine.nodes)
        for (unsigned c : n.cpus) cpus.push_back(c);
    ASSERT_FALSE(cpus.empty());
    unsigned checked = 0, highest = 0;
    for (const Node& node : machine.nodes) {
        if (node.memory_bytes == 0) continue;
        void* b = psm_alloc(mib, HeapOwner::node(node.os_index));
        on_cpu(cpus.front(), [&] { std::memset(b, 0x5a, mib); });
        EXPECT_EQ(psm_owner_of(b).node, node.os_index);
        const PageCount count = count_pages(b, mib, node.os_index);
        EXPECT_EQ(count.on_node, count.total) << "node " << node.os_index << ": " << count.first_stray;
        EXPECT_GE(count.total, mib / os::linux_os().page_size());
        psm_free(b);
        ++checked;
        highest = std::max(highest, node.os_index);
    }
    EXPECT_GE(checked, 2u);
    if (const char* want = std::getenv("NUMAWARE_EXPECT_HEAP_NODES")) {
        EXPECT_EQ(checked, static_cast<unsigned>(std::atoi(want)));
        EXPECT_EQ(highest + 1, static_cast<unsigned>(std::atoi(want)));
    }
}

TEST(GuestHeapApi, ScatterRanksBlocksLiveOnTheRanksNode) {
    const Machine machine = Machine::from_live();
    const unsigned k = static_cast<unsigned>(machine.nodes_with_cpus().size());
    ASSERT_GE(k, 2u);
    Team team{machine, {.threads = k, .kind = MappingKind::scatter}};
    psm_register_team(team.layout());
    const unsigned n = static_cast<unsigned>(team.size());
    constexpr unsigned per_rank = 16;
    std::vector<std::vector<void*>> blocks(n);

    team.run([&](TeamContext& ctx) {
        // Rank r allocates and writes its right neighbour's blocks: in a
        // scatter layout the neighbour is on another node, so only the heap's
        // binding (not first touch) can put them on the neighbour's node.
        const unsigned owner = (ctx.rank() + 1) % n;
        for (unsigned i = 0; i < per_rank; ++i) {
            void* b = psm_alloc(mib, HeapOwner::rank(owner));
            std::memset(b, 0x5e, mib);
            blocks[owner].push_back(b);
        }
    });
    for (unsigned r = 0; r < n; ++r) {
        // A rank on a node without memory is served by the nearest node
        // with memory (the machine model's view of it, against the heap's).
        const unsigned cpu_node = team.layout().ranks[r].node;
        const unsigned node = machine.memory_node_near(cpu_node);
        EXPECT_NE(cpu_node, team.layout().ranks[(r + n - 1) % n].node) << "writer and owner share a node";
        for (void* b : blocks[r]) {
            const HeapBlockInfo info = psm_owner_of(b);
            EXPECT_EQ(info.owner, HeapOwner::rank(r));
            EXPECT_EQ(info.node, node);
            const PageCount count = count_pages(b, mib, node);
            EXPECT_GT(count.total, 0u);
            EXPECT_EQ(count.on_node, count.total) << "rank " << r << " on node " << cpu_node << ", served by node "
                                                  << node << ": " << count.first_stray;
        }
    }
    // Free from the main thread: every block goes back to its rank's arena.
    for (auto& list : blocks)
        for (void* b : list) psm_free(b);
}

}  // namespace
}  // namespace numaware
