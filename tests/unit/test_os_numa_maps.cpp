// The numa_maps parser on real-shaped text, including the policy names
// with spaces and the malformed cases.
#include <gtest/gtest.h>

#include "numaware/error.hpp"
#include "os/numa_maps.hpp"

namespace numaware::os {
namespace {

const char* kSample =
    "55d0c2a00000 default file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4\n"
    "55d0c3e6e000 default heap anon=4 dirty=4 active=0 N0=4 kernelpagesize_kB=4\n"
    "7f0000000000 bind:0-1 anon=768 dirty=768 N0=512 N1=256 kernelpagesize_kB=4\n"
    "7f0000400000 interleave=static:0-3 anon=4 dirty=4 N0=1 N1=1 N2=1 N3=1 kernelpagesize_kB=4\n"
    "7f0000800000 prefer (many):1-2 anon=2 dirty=2 N1=2 kernelpagesize_kB=4\n"
    "7f0000c00000 weighted interleave:0-3 anon=6 N0=3 N1=1 N2=1 N3=1 kernelpagesize_kB=4\n"
    "7f0001000000 prefer:2 anon=1 N2=1 kernelpagesize_kB=4\n"
    "7f0001400000 bind=balancing:1 anon=1 N1=1 kernelpagesize_kB=4\n"
    "7f0001800000 local\n"
    "7f0002000000 default file=/dev/hugepages/x\\040y huge dirty=2 N1=2 kernelpagesize_kB=2048\n"
    "7ffc2e9b0000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n";

TEST(NumaMaps, ParsesEveryFieldOfEveryLine) {
    const auto r = parse_numa_maps(kSample);
    ASSERT_EQ(r.size(), 11u);
    EXPECT_EQ(r[0].address, 0x55d0c2a00000u);
    EXPECT_EQ(r[0].policy, "default");
    EXPECT_EQ(r[0].kind, "file");
    EXPECT_EQ(r[0].file, "/usr/bin/cat");
    EXPECT_EQ(r[0].counters.at("mapped"), 2u);
    EXPECT_EQ(r[1].kind, "heap");
    EXPECT_EQ(r[1].counters.at("active"), 0u);
    EXPECT_EQ(r[2].policy, "bind:0-1");
    EXPECT_EQ(r[2].policy_mode, "bind");
    EXPECT_EQ(r[2].policy_nodes, (NodeSet{0, 1}));
    EXPECT_EQ(r[2].kind, "anon");
    EXPECT_EQ(r[2].pages_per_node, (std::map<unsigned, std::uint64_t>{{0, 512}, {1, 256}}));
    EXPECT_EQ(r[2].total_pages(), 768u);
    EXPECT_EQ(r[2].total_bytes(), 768u * 4096);
    EXPECT_EQ(r[3].policy_mode, "interleave");
    EXPECT_EQ(r[3].policy_flags, "static");
    EXPECT_EQ(r[3].policy_nodes, (NodeSet{0, 1, 2, 3}));
    EXPECT_EQ(r[4].policy_mode, "prefer (many)");
    EXPECT_EQ(r[4].policy, "prefer (many):1-2");
    EXPECT_EQ(r[4].policy_nodes, (NodeSet{1, 2}));
    EXPECT_EQ(r[5].policy_mode, "weighted interleave");
    EXPECT_EQ(r[5].pages_per_node.at(0), 3u);
    EXPECT_EQ(r[6].policy_mode, "prefer");
    EXPECT_EQ(r[6].policy_nodes, NodeSet{2});
    EXPECT_EQ(r[7].policy_flags, "balancing");
    EXPECT_EQ(r[8].policy_mode, "local");
    EXPECT_TRUE(r[8].pages_per_node.empty());
    EXPECT_EQ(r[8].page_size_kb, 0u);
    EXPECT_TRUE(r[9].hugetlb);
    EXPECT_EQ(r[9].file, "/dev/hugepages/x\\040y");
    EXPECT_EQ(r[9].page_size_kb, 2048u);
    EXPECT_EQ(r[9].total_bytes(), 2u * 2048 * 1024);
    EXPECT_EQ(r[10].kind, "stack");
}

TEST(NumaMaps, TotalsAddPagesAndBytesPerNode) {
    const auto t = numa_maps_totals(parse_numa_maps(kSample));
    EXPECT_EQ(t.pages_per_node.at(0), 2u + 4 + 512 + 1 + 3 + 3);
    EXPECT_EQ(t.pages_per_node.at(1), 256u + 1 + 2 + 1 + 1 + 2);
    EXPECT_EQ(t.bytes_per_node.at(1), (256u + 1 + 2 + 1 + 1) * 4096 + 2u * 2048 * 1024);
    std::uint64_t sum = 0;
    for (const auto& [n, p] : t.pages_per_node) sum += p;
    EXPECT_EQ(t.pages, sum);
}

TEST(NumaMaps, EmptyTextAndBlankLinesGiveNoRecords) {
    EXPECT_TRUE(parse_numa_maps("").empty());
    EXPECT_EQ(parse_numa_maps("\n1000 default\n\n").size(), 1u);
}

void expect_error(const std::string& text, const std::string& field, const std::string& fragment) {
    try {
        parse_numa_maps(text);
        FAIL() << "no error for: " << text;
    } catch (const Error& e) {
        EXPECT_EQ(e.field().substr(0, field.size()), field) << e.what();
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

TEST(NumaMaps, MalformedLinesNameTheLineAndToken) {
    expect_error("1000 default\nzz default\n", "numa_maps line 2", "'zz'");
    expect_error("1000 default N0=x kernelpagesize_kB=4\n", "numa_maps line 1", "'N0=x'");
    expect_error("1000 default banana\n", "numa_maps line 1", "'banana'");
    expect_error("1000 bind:\n", "numa_maps line 1", "malformed policy");
    expect_error("1000 bind:3-1\n", "numa_maps line 1 policy nodes", "backwards");
    expect_error("1000 default N0=1\n", "numa_maps line 1", "kernelpagesize_kB");
    expect_error("1000\n", "numa_maps line 1", "expected '<address> <policy>");
    expect_error("1000 default N5000=1 kernelpagesize_kB=4\n", "numa_maps line 1", "out of range");
}

}  // namespace
}  // namespace numaware::os
