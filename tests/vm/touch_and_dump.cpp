// Guest test: freshly touched anonymous memory follows the process memory
// policy this process inherited, as /proc/self/numa_maps reports it.
//
// Run plainly, the process policy is "default" and the test checks the
// mapping says so and is fully present. Run under
//   numaware run --pages interleave:all -- numaware_guest_tests --gtest_filter='RunPages.*'
// (tests/vm/run_check.sh does exactly that) the policy is interleave, and the
// test checks the mapping's policy text and that its pages are spread
// evenly over the interleave nodes. It prints the mapping's numa_maps line
// so the script can check it independently.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "numaware/nodeset.hpp"
#include "os/os.hpp"

namespace numaware {
namespace {

constexpr std::size_t kBytes = 64u << 20;

TEST(RunPages, TouchedMemoryFollowsTheInheritedProcessPolicy) {
    os::PolicyQuery process;
    ASSERT_EQ(os::linux_os().get_mempolicy(nullptr, process), 0);

    // Guard pages with no access on both sides keep the kernel from merging
    // this mapping with a neighbouring anonymous one, so its numa_maps line
    // counts exactly our pages.
    constexpr std::size_t guard = 4096;
    void* region = ::mmap(nullptr, kBytes + 2 * guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(region, MAP_FAILED);
    void* p = static_cast<char*>(region) + guard;
    ASSERT_EQ(::mprotect(p, kBytes, PROT_READ | PROT_WRITE), 0);
    auto* bytes = static_cast<volatile unsigned char*>(p);
    for (std::size_t off = 0; off < kBytes; off += 4096) bytes[off] = 1;

    std::ifstream maps("/proc/self/numa_maps");
    std::string line, mine;
    char start[32];
    std::snprintf(start, sizeof start, "%lx ", static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(p)));
    while (std::getline(maps, line))
        if (line.rfind(start, 0) == 0) mine = line;
    ::munmap(region, kBytes + 2 * guard);
    ASSERT_FALSE(mine.empty()) << "no numa_maps line for the mapping at " << start;
    std::printf("numa_maps: %s\n", mine.c_str());

    std::istringstream fields(mine);
    std::string addr, policy, word;
    fields >> addr >> policy;
    std::map<unsigned, std::size_t> per_node;
    std::size_t total = 0;
    while (fields >> word) {
        unsigned node = 0;
        std::size_t pages = 0;
        if (std::sscanf(word.c_str(), "N%u=%zu", &node, &pages) == 2) {
            per_node[node] = pages;
            total += pages;
        }
    }
    EXPECT_EQ(total, kBytes / 4096) << "every touched page is present: " << mine;

    if (process.mode == os::PolicyMode::default_) {
        EXPECT_EQ(policy, "default");
        return;
    }
    ASSERT_EQ(process.mode, os::PolicyMode::interleave)
        << "this test knows default and interleave process policies";
    EXPECT_EQ(policy, "interleave:" + process.nodes.to_string());
    // Even spread, allowing one 2 MiB huge page (512 small pages) of
    // imbalance per node: THP interleaves whole huge pages.
    const std::size_t share = total / process.nodes.size();
    for (unsigned n : process.nodes.to_vector()) {
        const std::size_t got = per_node.count(n) ? per_node[n] : 0;
        EXPECT_LE(got, share + 512) << "node " << n << ": " << mine;
        EXPECT_GE(got + 512, share) << "node " << n << ": " << mine;
    }
    for (const auto& [n, pages] : per_node)
        EXPECT_TRUE(process.nodes.contains(n)) << "pages on node " << n << " outside the interleave set";
}

}  // namespace
}  // namespace numaware
